// request.h: one system call handed to an engine for early execution.
#ifndef FOREACTOR_ENGINE_REQUEST_H_
#define FOREACTOR_ENGINE_REQUEST_H_

#include <linux/stat.h>  // struct statx
#include <sys/uio.h>

#include <atomic>
#include <cstdint>

#include "foreactor/foreactor.h"

namespace foreactor {

// The most streamed requests (Request::streamed) one engine has in flight
// at once: four of a copy's 1 MiB direct reads keep a device streaming
// (docs/DESIGN.md §5 gives the measurements).
inline constexpr unsigned kStreamedRequestsAtOnce = 4;

// Life of a request: kIdle -> (Engine::Prepare) kPrepared -> (Engine::Submit)
// kSubmitted [-> kAwaited] -> kCompleted.  Only the engine moves a request
// from kPrepared onwards; only the owner (the runtime) moves it back to
// kIdle, and only after it saw kCompleted.  A request is owned by one thread
// at a time except between Submit and completion, when the engine's kernel
// ring or worker may write `result` and the output buffers.
enum class RequestState : int {
  kIdle = 0,
  kPrepared,
  kSubmitted,
  // Submitted, and its owner sleeps in WaitForCompletion() until it
  // completes: CompleteRequest() then wakes it (request_rules.h).  Set only
  // by WaitForCompletion(), which returns only once the request is
  // kCompleted, so the owner never sees this state anywhere else.
  kAwaited,
  kCompleted,
};

// What an engine runs for a request.
enum class RequestOperation : unsigned char {
  // `call`, as described at Request::call.
  kCall = 0,
  // sync_file_range(call.fd, call.offset, call.length, SYNC_FILE_RANGE_WRITE):
  // starts write-back of the dirty pages of that range that are not under
  // write-back yet, and waits for nothing but the block layer's request
  // slots.  No program call stands behind it (the runtime's write-behind,
  // write_behind.h); `call.type` is ignored.  Result: 0 or -errno.  An
  // engine that cannot run it off the calling thread refuses it in
  // Prepare().  io_uring must take its own reference on the file when the
  // request is submitted: such a request is never submitted with
  // IOSQE_ASYNC, under which the kernel would look the descriptor up later.
  kStartWriteBack,
  // `call`, a PREAD whose bytes nobody reads: it brings that range into the
  // page cache ahead of the program's own reads (the runtime's read-ahead
  // streams, read_ahead_stream.h).  No program call stands behind it (fault
  // injection leaves it alone).  Engines run it as the PREAD it is, and it
  // may not be linked.  Running off the calling thread is its point: io_uring always
  // submits it with IOSQE_ASYNC, so that an io-wq worker, not the program's
  // thread, allocates the pages, starts the device reads and waits for them.
  // The descriptor is then looked up when the worker runs it (as a thread
  // pool worker does): the runtime keeps it open until the request
  // completed.  The sync engine refuses it, as every request.
  kReadAhead,
  // readahead(2) of bytes [call.offset, call.offset + call.length) of
  // call.fd: starts the device reads that bring the range into the page
  // cache and completes once they are started, before they finish, with
  // the call's result (0).  No program call stands behind it, nothing is
  // copied, and it may not be linked.  A read-ahead stream started ahead of
  // the program (ReadAheadStream::LookAhead) hints its regions so: a
  // worker starts megabytes of reads in a few calls, where kReadAhead's
  // buffered reads would each hold a worker until their pages arrive.
  // io_uring runs it as IORING_OP_FADVISE (POSIX_FADV_WILLNEED), which the
  // kernel always hands to an io-wq worker; the descriptor is then looked
  // up when that worker runs it, as for kReadAhead.  The sync engine
  // refuses it, as every request.
  kStartReadAhead,
};

struct Request {
  // What to run: `call` itself (also for kReadAhead), or the hint
  // kStartWriteBack or kStartReadAhead describes (which reads only call.fd,
  // call.offset and call.length).
  RequestOperation operation = RequestOperation::kCall;

  // The call to execute, as the engine must run it:
  //  - read family: `call.buffer` is the request's own destination buffer of
  //    `call.length` bytes (vector forms: iov/iovcnt point at owned iovecs).
  //    READ/READV are executed as PREAD/PREADV at `call.offset`; the engine
  //    never touches the file position.
  //  - write family: likewise, WRITE/WRITEV as PWRITE/PWRITEV at `call.offset`.
  //  - stat family (FSTAT, FSTATAT, STAT, LSTAT, STATX): executed as statx(2)
  //    into `statx_buffer` with the flags that give the same answer as the
  //    original call (FSTAT: AT_EMPTY_PATH on `fd`; STAT: AT_FDCWD;
  //    LSTAT: AT_SYMLINK_NOFOLLOW; FSTATAT: `flags`; STATX: `flags` and mask
  //    `mode`).  For types other than STATX the mask is STATX_BASIC_STATS.
  //  - OPEN/OPENAT/CLOSE/LSEEK/GETDENTS64 as named.
  foreactor_call call{};

  // Destination of stat-family calls.
  struct statx statx_buffer {};

  // Return value of the call: >= 0 on success, -errno on failure.  Valid once
  // `state` is kCompleted.  -ECANCELED when cancelled or when the linked
  // predecessor did not transfer its full length.
  int64_t result = 0;

  // When non-null, a request that must run after this one finishes and only
  // if this one returned exactly `call.length` (the "link" of DESIGN §4).
  // The engine prepares and submits it together with this one.
  Request* linked_next = nullptr;

  // Set by ThreadPoolEngine::Cancel() of a submitted request that is not
  // queued as a job of its own (a link of a chain, or a head a worker has
  // taken): ExecuteNow() completes it, and every link after it, with
  // -ECANCELED instead of running them, unless it has started it already.
  // Cleared by the Prepare() of the engines that run requests with
  // ExecuteNow() (thread pool, fault injection).  io_uring cancels a
  // chain's links itself and ignores it.
  std::atomic<bool> cancel_requested{false};

  // Ordered: runs only after every ordered request its engine was handed
  // before it has finished, and only if the last of them transferred its
  // full length (LinkContinues); otherwise, and after an ordered request
  // was cancelled, it completes with -ECANCELED, until the owner calls
  // Engine::RestartOrder().  Never linked.  Engines that cannot keep the
  // order (io_uring, sync) refuse it in Prepare().  The write pipeline's
  // writes (write_pipeline.h).
  bool ordered = false;

  // Streamed: one of a run of large reads the owner will consume in the
  // order it hands them over (the coalesced direct reads of a copy,
  // coalesced_reads.h).  A few in flight keep a device streaming; more,
  // run side by side, only share its bandwidth among reads the owner
  // waits for one after another, so the first finishes later.  Every
  // engine has at most kStreamedRequestsAtOnce of its streamed requests
  // in flight at once, and starts them in the order they were prepared;
  // the others wait in the engine (the thread pool's owner may still run a
  // waiting one itself when it waits for it, WorkerPool::RunIfQueued).
  // io_uring runs each on a kernel worker (IOSQE_ASYNC), which looks the
  // descriptor up when it runs: the owner keeps it open until the request
  // completed.  A hint: it never changes a result.
  // Never ordered (the pool counts a held job as ordered or as streamed,
  // not both), never linked.
  bool streamed = false;

  std::atomic<RequestState> state{RequestState::kIdle};
};

}  // namespace foreactor

#endif  // FOREACTOR_ENGINE_REQUEST_H_
