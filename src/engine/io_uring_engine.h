// io_uring_engine.h: EngineKind::kIoUring, one io_uring instance per engine.
//
// Every request is one SQE whose user_data is the Request's address; a
// linked chain is a run of SQEs joined with IOSQE_IO_LINK, so the kernel
// runs them in order and completes the rest of the chain with -ECANCELED
// when one fails or transfers fewer bytes than asked (a short read).
// Internal SQEs (cancellations, and no-ops that replace SQEs a failed
// submission left behind) carry user_data 0 and their CQEs are ignored.
//
// Invariant: the CQEs the kernel still owes (submitted SQEs) plus the SQEs
// prepared but not submitted never exceed the CQ ring's size, so no
// completion can ever overflow; requests leave one CQ slot free, so a
// cancellation can always be submitted.
//
// Not supported (the runtime runs them synchronously or elsewhere):
// getdents64 and lseek, which io_uring has no operation for.  Write-back
// hints (RequestOperation::kStartWriteBack) run as IORING_OP_SYNC_FILE_RANGE
// when the kernel has it, never with IOSQE_ASYNC, so the kernel takes its
// own reference on the file when they are submitted and a later close() by
// the program cannot redirect them.  Read-ahead hints
// (RequestOperation::kStartReadAhead) run as IORING_OP_FADVISE.
//
// The engine is used by the thread that created it only.  When the kernel
// allows, the ring is single-issuer with deferred task work: completions are
// then processed only when this engine asks for them, so the host thread is
// never interrupted (no spurious EINTR in the program's own system calls).
// After fork() the child never touches the ring: every call degrades to
// "nothing in flight".
//
// Streamed requests (Request::streamed) beyond kStreamedRequestsAtOnce in
// the ring wait in the engine, in order, and go into the ring as those
// before them complete (whenever the engine reaps: Poll, Wait, Prepare).
// They are submitted with IOSQE_ASYNC: each runs on an io-wq worker, which
// submits it to the device alone instead of merged with its neighbours, and
// looks its descriptor up when it runs (the runtime keeps it open until the
// request completed).  Read-ahead reads (RequestOperation::kReadAhead) too.
#ifndef FOREACTOR_ENGINE_IO_URING_ENGINE_H_
#define FOREACTOR_ENGINE_IO_URING_ENGINE_H_

#include <liburing.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace foreactor {

class IoUringEngine final : public Engine {
 public:
  // Creates a ring of options.queue_size SQ entries (clamped to 1..32768)
  // and checks that the kernel offers every operation needed.  On failure
  // returns null and writes the reason to `*error` (the strerror text of
  // the failing call, or which operation is missing).
  static std::unique_ptr<IoUringEngine> Create(const EngineOptions& options, std::string* error);

  // Completes prepared requests with -ECANCELED, cancels everything in
  // flight and waits for every CQE, then tears the ring down, so the kernel
  // never writes into a request after this returns.
  ~IoUringEngine() override;

  IoUringEngine(const IoUringEngine&) = delete;
  IoUringEngine& operator=(const IoUringEngine&) = delete;

  static constexpr const char* kName = "io_uring";
  const char* name() const override { return kName; }
  // SupportsType(), and opens only when the ring can hold them out of the
  // program's table (the kernel installs fixed files, Linux 6.8, and the
  // sparse fixed-file table was registered).
  bool Supports(foreactor_call_type type) const override;
  // What an io_uring engine may support (the operations Create() checks,
  // and opens).
  static bool SupportsType(foreactor_call_type type);
  // Returns false, leaving the chain kIdle, when the SQ or the CQ has no
  // room for the whole chain, when a request is not kIdle or not supported,
  // or when io_uring cannot express it exactly (a negative offset, a
  // transfer above the kernel's per-call limit, a bad iovec count, a
  // write-back hint the kernel has no operation for or of 4 GiB or more).
  bool Prepare(Request* request) override;
  int Submit() override;
  void Wait(Request* request) override;
  void Poll() override;
  // Submits an asynchronous cancel for the request.  A request the kernel
  // already started (or finished) keeps its real result.
  void Cancel(Request* request) override;
  // An early open's descriptor is a slot of the ring's fixed-file table
  // (IORING_FILE_INDEX_ALLOC); installing it submits
  // IORING_OP_FIXED_FD_INSTALL and waits for it (a few microseconds, run
  // inline on this thread), then empties the slot.
  int64_t InstallEarlyDescriptor(int64_t early, const foreactor_call& open) override;
  // Empties the slot (IORING_REGISTER_FILES_UPDATE with -1).
  void ReleaseEarlyDescriptor(int64_t early) override;
  // Closes the ring when nothing is prepared or in flight; the next
  // Prepare() sets up a new one with the same options (and, if that fails,
  // the engine refuses every request from then on).
  void Rest() override;

 private:
  // One SQE taken from the ring and not yet consumed by the kernel.
  struct PendingSqe {
    Request* request;  // null for internal SQEs
    io_uring_sqe* sqe;
  };

  explicit IoUringEngine(const EngineOptions& options);
  bool Setup(const EngineOptions& options, std::string* error);

  // True when `request` can run on this ring exactly as asked.
  bool Runnable(const Request& request) const;
  void PrepareSqe(Request* request, io_uring_sqe* sqe, bool link_to_next);
  // Submits every pending SQE.  Returns the number of requests submitted,
  // or -errno after completing the requests left unsubmitted with it.
  int SubmitPending();
  // Records every CQE already in the CQ ring, then starts held streamed
  // requests where there is room.
  void ReapAvailable();
  // Moves held streamed requests, oldest first, into the ring while fewer
  // than kStreamedRequestsAtOnce streamed requests are there and the rings
  // have room, and submits them.
  void StartHeldStreamed();
  // When `request` is held, removes it and completes it with -ECANCELED (it
  // never ran) and returns true; otherwise returns false.
  bool DropHeld(Request* request);
  // Completes a request whose SQE the kernel never consumed with -ECANCELED.
  void CompleteUnsubmitted(Request* request);
  // True once this engine must not use its ring any more (after fork, or
  // after the ring failed).
  bool Unusable() const;
  // Room for `count` more SQEs, counting their future CQEs, with
  // `reserved` CQ slots left over.
  bool HasRoomFor(unsigned count, unsigned reserved) const;

  const EngineOptions options_;
  io_uring ring_{};
  bool ring_ready_ = false;
  bool resting_ = false;  // the ring was closed by Rest(); Prepare() makes a new one
  bool deferred_task_work_ = false;
  bool starts_write_back_ = false;  // the kernel has IORING_OP_SYNC_FILE_RANGE
  bool starts_read_ahead_ = false;  // the kernel has IORING_OP_FADVISE
  bool opens_early_ = false;        // early descriptors live in the fixed-file table
  // Slots holding an early open's file, not yet installed or released: the
  // ring may not rest while one does.
  unsigned early_descriptors_held_ = 0;
  // The internal request of InstallEarlyDescriptor().
  Request install_request_;
  bool broken_ = false;
  const bool async_;
  unsigned fork_generation_ = 0;
  unsigned completion_capacity_ = 0;
  unsigned owed_completions_ = 0;    // CQEs of submitted SQEs not yet reaped
  std::vector<PendingSqe> pending_;  // capacity reserved to the SQ size
  // Streamed requests with an SQE (pending or submitted) not yet completed.
  unsigned streamed_in_ring_ = 0;
  // Streamed requests prepared while kStreamedRequestsAtOnce were in the
  // ring: kPrepared, no SQE yet, in the order they were prepared.
  std::vector<Request*> held_streamed_;
};

}  // namespace foreactor

#endif  // FOREACTOR_ENGINE_IO_URING_ENGINE_H_
