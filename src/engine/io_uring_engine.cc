#include "engine/io_uring_engine.h"

#include "base/out_of_memory.h"
#include "engine/high_descriptors.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>

#include "base/call_types.h"
#include "base/fork.h"
#include "base/process_threads.h"
#include "engine/request_rules.h"

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define FOREACTOR_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#include <sanitizer/tsan_interface.h>
#define FOREACTOR_THREAD_SANITIZER 1
#endif
#endif

namespace foreactor {
namespace {

// The most SQ entries a ring may have (the kernel's limit).
constexpr unsigned kMaxQueueSize = 32768;
// The most bytes one read or write moves (the kernel's MAX_RW_COUNT); a
// larger request could not be expressed in an SQE's 32-bit length.
constexpr size_t kMaxTransferBytes = 0x7ffff000;
// user_data of internal SQEs, whose completions are ignored.
constexpr __u64 kInternalUserData = 0;
// CQ slots requests leave free, so a cancellation always finds one.
constexpr unsigned kReservedForCancel = 1;
// How long the destructor waits for owed completions before it sends its
// cancellation again (~IoUringEngine).
constexpr long long kCancelRetryNanoseconds = 10'000'000;

// IORING_OP_FIXED_FD_INSTALL (Linux 6.8) and its flag, newer than the
// liburing headers Debian 12 ships: installs the fixed file the SQE names
// (IOSQE_FIXED_FILE) in the submitting task's descriptor table at the
// lowest free number, close-on-exec unless kFixedDescriptorNoCloseOnExec
// is set in the SQE's install flags (the word open_flags shares).
constexpr __u8 kOpFixedDescriptorInstall = 54;
constexpr __u32 kFixedDescriptorNoCloseOnExec = 1U << 0;
// The most early descriptors one ring holds (its sparse fixed-file table):
// more early opens than this wait at once only past a queue of 1,024, and
// the one that finds the table full completes with -ENFILE, which the
// runtime never delivers.
constexpr unsigned kMaxEarlyDescriptors = 1024;

// True when io_uring can run `call` with the same result as the system call.
bool Expressible(const foreactor_call& call) {
  switch (call.type) {
    case FOREACTOR_CALL_READ:
    case FOREACTOR_CALL_PREAD:
    case FOREACTOR_CALL_WRITE:
    case FOREACTOR_CALL_PWRITE:
      // Offset -1 would mean "the current file position" to io_uring.
      return call.offset >= 0 && call.length <= kMaxTransferBytes;
    case FOREACTOR_CALL_READV:
    case FOREACTOR_CALL_PREADV:
    case FOREACTOR_CALL_WRITEV:
    case FOREACTOR_CALL_PWRITEV:
      return call.offset >= 0 && call.iov != nullptr && call.iovcnt > 0 && call.iovcnt <= IOV_MAX;
    default:
      return true;
  }
}

// Turns an SQE that was taken but will not be used into a no-op whose
// completion is ignored.
void MakeInternalNop(io_uring_sqe* sqe) {
  io_uring_prep_nop(sqe);
  sqe->user_data = kInternalUserData;
}

// liburing maps and unmaps a ring's memory with raw system calls, which
// ThreadSanitizer does not intercept: a ring mapped at the address of one
// that another thread (since finished) unmapped would look shared with it,
// and the new thread's accesses would be reported as races.  In a
// ThreadSanitizer build, unmapping a ring releases one token and mapping a
// ring acquires it, so that every access to an unmapped ring happens before
// every access to a ring mapped after it, as the kernel guarantees.  Other
// builds compile both to nothing.
#if defined(FOREACTOR_THREAD_SANITIZER)
char ring_address_reuse_token;
void NoteRingMapped() { __tsan_acquire(&ring_address_reuse_token); }
void NoteRingUnmapping() { __tsan_release(&ring_address_reuse_token); }
#else
void NoteRingMapped() {}
void NoteRingUnmapping() {}
#endif

// Unmaps `ring` after the last access of this thread to it.
void ExitRing(io_uring* ring) {
  NoteRingUnmapping();
  io_uring_queue_exit(ring);
}

std::string ErrorText(int negative_errno) {
  const char* text = strerrordesc_np(-negative_errno);
  return text != nullptr ? text : "error " + std::to_string(-negative_errno);
}

}  // namespace

std::unique_ptr<IoUringEngine> IoUringEngine::Create(const EngineOptions& options,
                                                     std::string* error) {
  std::unique_ptr<IoUringEngine> engine;
  if (!AllocationSucceeds([&] { engine.reset(new IoUringEngine(options)); })) {
    *error = ErrorText(-ENOMEM);
    return nullptr;
  }
  if (!engine->Setup(options, error)) return nullptr;
  return engine;
}

IoUringEngine::IoUringEngine(const EngineOptions& options)
    : options_(options), async_(options.io_uring_async) {}

namespace {

// The ring's descriptor must not take the lowest free number: the program's
// own opens would then get other numbers than without foreactor (and hit
// EMFILE one open early under a tight limit), and a number the program
// closed and reuses could name the ring.  Moves it into the top 64 of
// foreactor's high range (high_descriptors.h).  Returns false when that
// is impossible (a limit under 256, or no free number up there): the caller
// then gives up io_uring, and the thread pool, which holds no descriptor,
// takes over.
bool MoveRingDescriptorHigh(io_uring* ring) {
  const long ceiling = HighDescriptorCeiling();
  if (ceiling < 256) return false;
  const long floor = ceiling - 64;
  const long moved = syscall(SYS_fcntl, ring->ring_fd, F_DUPFD_CLOEXEC, floor);
  if (moved < 0) return false;
  syscall(SYS_close, ring->ring_fd);
  if (ring->enter_ring_fd == ring->ring_fd) ring->enter_ring_fd = static_cast<int>(moved);
  ring->ring_fd = static_cast<int>(moved);
  return true;
}

}  // namespace

bool IoUringEngine::Setup(const EngineOptions& options, std::string* error) {
  unsigned entries = options.queue_size;
  if (entries < 1) entries = 1;
  if (entries > kMaxQueueSize) entries = kMaxQueueSize;

  // The best setup the kernel accepts, newest features first.
  const unsigned flag_sets[] = {
      IORING_SETUP_CLAMP | IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER |
          IORING_SETUP_DEFER_TASKRUN,
      IORING_SETUP_CLAMP | IORING_SETUP_SUBMIT_ALL,
      IORING_SETUP_CLAMP,
  };
  int result = -EINVAL;
  for (unsigned flags : flag_sets) {
    io_uring_params params;
    std::memset(&params, 0, sizeof(params));
    params.flags = flags;
    result = io_uring_queue_init_params(entries, &ring_, &params);
    if (result == 0) {
      NoteRingMapped();
      NoteKernelWorkerThreads();  // the kernel may run the ring's requests on workers of its own
      deferred_task_work_ = (flags & IORING_SETUP_DEFER_TASKRUN) != 0;
      break;
    }
    if (result != -EINVAL) break;
  }
  if (result < 0) {
    *error = ErrorText(result);
    return false;
  }
  ring_ready_ = true;
  fork_generation_ = StartCountingForks();
  if (!MoveRingDescriptorHigh(&ring_)) {
    *error =
        "the descriptor limit (RLIMIT_NOFILE) leaves no room for the ring above the "
        "program's descriptors";
    return false;
  }

  io_uring_probe* probe = io_uring_get_probe_ring(&ring_);
  if (probe == nullptr) {
    *error = "cannot probe the supported operations";
    return false;
  }
  struct Needed {
    int opcode;
    const char* name;
  };
  const Needed needed[] = {
      {IORING_OP_NOP, "nop"},
      {IORING_OP_OPENAT, "openat"},
      {IORING_OP_CLOSE, "close"},
      {IORING_OP_READ, "read"},
      {IORING_OP_WRITE, "write"},
      {IORING_OP_READV, "readv"},
      {IORING_OP_WRITEV, "writev"},
      {IORING_OP_STATX, "statx"},
      {IORING_OP_ASYNC_CANCEL, "async_cancel"},
  };
  // Optional: without it, write-back hints are refused (Runnable).
  starts_write_back_ = io_uring_opcode_supported(probe, IORING_OP_SYNC_FILE_RANGE) != 0;
  starts_read_ahead_ = io_uring_opcode_supported(probe, IORING_OP_FADVISE) != 0;
  // Optional: opens run early only into the ring's own table (Supports).
  const bool installs = io_uring_opcode_supported(probe, kOpFixedDescriptorInstall) != 0;
  for (const Needed& operation : needed) {
    if (!io_uring_opcode_supported(probe, operation.opcode)) {
      io_uring_free_probe(probe);
      *error = std::string("the kernel lacks the ") + operation.name + " operation";
      return false;
    }
  }
  io_uring_free_probe(probe);

  if (options.workers > 0) {
    // Bounded (file) and unbounded workers alike; an old kernel without
    // the limit simply runs with its default.
    unsigned limits[2] = {options.workers, options.workers};
    io_uring_register_iowq_max_workers(&ring_, limits);
  }

  const unsigned early_descriptor_slots =
      ring_.sq.ring_entries < kMaxEarlyDescriptors ? ring_.sq.ring_entries : kMaxEarlyDescriptors;
  // The table counts against RLIMIT_NOFILE; a kernel or limit that refuses
  // it leaves opens to the program.
  opens_early_ = installs && io_uring_register_files_sparse(&ring_, early_descriptor_slots) == 0;

  completion_capacity_ = ring_.cq.ring_entries;
  if (!AllocationSucceeds([&] { pending_.reserve(ring_.sq.ring_entries); })) {
    *error = ErrorText(-ENOMEM);
    return false;
  }
  return true;
}

IoUringEngine::~IoUringEngine() {
  for (Request* request : held_streamed_) CompleteRequest(request, -ECANCELED);
  held_streamed_.clear();
  if (!ring_ready_) return;
  if (!Unusable()) {
    for (PendingSqe& pending : pending_) {
      if (pending.request == nullptr) continue;
      MakeInternalNop(pending.sqe);
      CompleteRequest(pending.request, -ECANCELED);
      pending.request = nullptr;
    }
    SubmitPending();
    // Requests never take the last CQ slot, so when there is no room for
    // the cancellation, an internal SQE's CQE is on its way: reap and retry.
    // A request the kernel was still issuing when the cancellation ran can
    // escape it (a read of an empty pipe that had not armed its poll yet):
    // it would then never complete, so while completions are owed the
    // cancellation is sent again every kCancelRetryNanoseconds (where the
    // kernel can bound a wait: FEAT_EXT_ARG).
    const bool bounded_wait = (ring_.features & IORING_FEAT_EXT_ARG) != 0;
    bool cancel_submitted = false;
    while (owed_completions_ > 0 && !broken_) {
      if (!cancel_submitted && HasRoomFor(1, 0)) {
        io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
        io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL);
        sqe->user_data = kInternalUserData;
        pending_.push_back(PendingSqe{nullptr, sqe});
        if (SubmitPending() < 0) break;  // the ring refuses work: nothing more to do
        cancel_submitted = true;
        continue;
      }
      io_uring_cqe* cqe = nullptr;
      __kernel_timespec retry_after = {0, kCancelRetryNanoseconds};
      const int result = bounded_wait ? io_uring_wait_cqe_timeout(&ring_, &cqe, &retry_after)
                                      : io_uring_wait_cqe(&ring_, &cqe);
      if (result == -EINTR) continue;
      if (result == -ETIME) {
        cancel_submitted = false;
        continue;
      }
      if (result < 0) {
        broken_ = true;
        break;
      }
      ReapAvailable();
    }
  }
  ExitRing(&ring_);
}

bool IoUringEngine::Supports(foreactor_call_type type) const {
  if (IsOpen(type) && !opens_early_) return false;
  return SupportsType(type);
}

bool IoUringEngine::SupportsType(foreactor_call_type type) {
  switch (type) {
    case FOREACTOR_CALL_OPEN:
    case FOREACTOR_CALL_OPENAT:
    case FOREACTOR_CALL_CLOSE:
    case FOREACTOR_CALL_READ:
    case FOREACTOR_CALL_PREAD:
    case FOREACTOR_CALL_WRITE:
    case FOREACTOR_CALL_PWRITE:
    case FOREACTOR_CALL_FSTAT:
    case FOREACTOR_CALL_FSTATAT:
    case FOREACTOR_CALL_STAT:
    case FOREACTOR_CALL_LSTAT:
    case FOREACTOR_CALL_STATX:
    case FOREACTOR_CALL_READV:
    case FOREACTOR_CALL_PREADV:
    case FOREACTOR_CALL_WRITEV:
    case FOREACTOR_CALL_PWRITEV:
      return true;
    default:  // LSEEK, GETDENTS64: no io_uring operation
      return false;
  }
}

bool IoUringEngine::Unusable() const { return broken_ || fork_generation_ != ForkGeneration(); }

bool IoUringEngine::HasRoomFor(unsigned count, unsigned reserved) const {
  return io_uring_sq_space_left(&ring_) >= count &&
         owed_completions_ + pending_.size() + count + reserved <= completion_capacity_;
}

void IoUringEngine::Rest() {
  if (!ring_ready_ || Unusable() || owed_completions_ > 0 || !pending_.empty() ||
      !held_streamed_.empty() || early_descriptors_held_ > 0) {
    return;
  }
  ExitRing(&ring_);
  ring_ready_ = false;
  resting_ = true;
}

bool IoUringEngine::Runnable(const Request& request) const {
  if (request.operation == RequestOperation::kStartWriteBack) {
    // The SQE's length is 32 bits.
    return starts_write_back_ && request.call.offset >= 0 && request.call.length <= UINT32_MAX;
  }
  if (request.operation == RequestOperation::kStartReadAhead) {
    return starts_read_ahead_ && request.call.offset >= 0 && request.call.length <= UINT32_MAX;
  }
  return Supports(request.call.type) && Expressible(request.call);
}

bool IoUringEngine::Prepare(Request* request) {
  // Linked requests are the only order io_uring keeps: no lanes.
  if (request->ordered) return false;
  if (resting_) {
    resting_ = false;
    std::string error;
    if (!Setup(options_, &error)) broken_ = true;
  }
  if (Unusable()) return false;
  unsigned count = 0;
  for (Request* link = request; link != nullptr; link = link->linked_next) {
    if (!Runnable(*link)) return false;
    if (link->state.load(std::memory_order_relaxed) != RequestState::kIdle) return false;
    ++count;
  }
  if (request->streamed &&
      (streamed_in_ring_ >= kStreamedRequestsAtOnce || !held_streamed_.empty())) {
    // Waits here, in order, for one of those in the ring to complete.
    if (request->linked_next != nullptr ||
        !AllocationSucceeds([&] { held_streamed_.push_back(request); })) {
      return false;
    }
    request->state.store(RequestState::kPrepared, std::memory_order_relaxed);
    return true;
  }
  if (!HasRoomFor(count, kReservedForCancel)) {
    Poll();
    if (!HasRoomFor(count, kReservedForCancel)) return false;
  }
  for (Request* link = request; link != nullptr; link = link->linked_next) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);  // never null: room was checked
    PrepareSqe(link, sqe, link->linked_next != nullptr);
    link->state.store(RequestState::kPrepared, std::memory_order_relaxed);
    pending_.push_back(PendingSqe{link, sqe});  // within the reserved capacity
  }
  if (request->streamed) ++streamed_in_ring_;
  return true;
}

void IoUringEngine::StartHeldStreamed() {
  bool started = false;
  while (!held_streamed_.empty() && streamed_in_ring_ < kStreamedRequestsAtOnce &&
         HasRoomFor(1, kReservedForCancel)) {
    Request* request = held_streamed_.front();
    held_streamed_.erase(held_streamed_.begin());
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);  // never null: room was checked
    PrepareSqe(request, sqe, false);
    pending_.push_back(PendingSqe{request, sqe});
    ++streamed_in_ring_;
    started = true;
  }
  if (started) SubmitPending();
}

bool IoUringEngine::DropHeld(Request* request) {
  for (auto held = held_streamed_.begin(); held != held_streamed_.end(); ++held) {
    if (*held != request) continue;
    held_streamed_.erase(held);
    CompleteRequest(request, -ECANCELED);
    return true;
  }
  return false;
}

void IoUringEngine::CompleteUnsubmitted(Request* request) {
  if (request->streamed) --streamed_in_ring_;
  CompleteRequest(request, -ECANCELED);
}

void IoUringEngine::PrepareSqe(Request* request, io_uring_sqe* sqe, bool link_to_next) {
  const foreactor_call& call = request->call;
  const __u64 offset = static_cast<__u64>(call.offset);
  if (request->operation == RequestOperation::kStartWriteBack) {
    // Never IOSQE_ASYNC: issued inline first, the request takes its
    // reference on the file inside io_uring_enter (io_assign_file), then
    // the kernel hands it to io-wq (sync_file_range always needs a blocking
    // context).  Forced async, io-wq would look the descriptor up later,
    // when the program may have closed it.  Never linked either.
    io_uring_prep_sync_file_range(sqe, call.fd, static_cast<unsigned>(call.length), offset,
                                  SYNC_FILE_RANGE_WRITE);
    io_uring_sqe_set_flags(sqe, 0);
    io_uring_sqe_set_data(sqe, request);
    return;
  }
  if (request->operation == RequestOperation::kStartReadAhead) {
    // No IOSQE_ASYNC needed: the kernel punts POSIX_FADV_WILLNEED to io-wq
    // itself.  Never linked.
    io_uring_prep_fadvise(sqe, call.fd, offset, static_cast<off_t>(call.length),
                          POSIX_FADV_WILLNEED);
    io_uring_sqe_set_flags(sqe, 0);
    io_uring_sqe_set_data(sqe, request);
    return;
  }
  switch (call.type) {
    case FOREACTOR_CALL_OPEN:
    case FOREACTOR_CALL_OPENAT: {
      // Into a free slot of the ring's table, never the program's (the
      // completion's result is the slot).  The kernel refuses O_CLOEXEC
      // there; InstallEarlyDescriptor() applies it.
      const int directory = call.type == FOREACTOR_CALL_OPEN ? AT_FDCWD : call.fd;
      io_uring_prep_openat(sqe, directory, call.path, static_cast<int>(call.flags & ~O_CLOEXEC),
                           call.mode);
      sqe->file_index = IORING_FILE_INDEX_ALLOC;
      break;
    }
    case FOREACTOR_CALL_CLOSE:
      io_uring_prep_close(sqe, call.fd);
      break;
    case FOREACTOR_CALL_READ:
    case FOREACTOR_CALL_PREAD:
      io_uring_prep_read(sqe, call.fd, call.buffer, static_cast<unsigned>(call.length), offset);
      break;
    case FOREACTOR_CALL_WRITE:
    case FOREACTOR_CALL_PWRITE:
      io_uring_prep_write(sqe, call.fd, call.buffer, static_cast<unsigned>(call.length), offset);
      break;
    case FOREACTOR_CALL_READV:
    case FOREACTOR_CALL_PREADV:
      io_uring_prep_readv(sqe, call.fd, call.iov, static_cast<unsigned>(call.iovcnt), offset);
      break;
    case FOREACTOR_CALL_WRITEV:
    case FOREACTOR_CALL_PWRITEV:
      io_uring_prep_writev(sqe, call.fd, call.iov, static_cast<unsigned>(call.iovcnt), offset);
      break;
    default: {  // the stat family (Prepare checked Supports)
      const StatxArguments statx = StatxArgumentsFor(call);
      io_uring_prep_statx(sqe, statx.directory_fd, statx.path, statx.flags, statx.mask,
                          &request->statx_buffer);
      break;
    }
  }
  unsigned flags = 0;
  if (link_to_next) flags |= IOSQE_IO_LINK;
  // A read-ahead read is always IOSQE_ASYNC: issued inline, a buffered read
  // of pages not in the cache would allocate them and start the device reads
  // on the submitting thread, the program's.  So is a streamed read (a
  // copy's coalesced direct reads): issued inline, the reads of one
  // submission share the submitter's block plug, which merges adjacent ones
  // into device requests up to max_sectors_kb large.  Fewer, larger requests
  // streamed slower on the development VM's virtio disk: a cold 1 GiB cp
  // with every chunk in a scope made 539 device requests inline in 491 ms,
  // 1,053 from io-wq in 422 ms (stock 670 ms), the thread pool's pace.  Each
  // io-wq worker submits its read alone, as a pool worker does.
  if (async_ || request->operation == RequestOperation::kReadAhead || request->streamed) {
    flags |= IOSQE_ASYNC;
  }
  io_uring_sqe_set_flags(sqe, flags);
  io_uring_sqe_set_data(sqe, request);
}

int IoUringEngine::Submit() {
  if (pending_.empty()) return 0;
  if (Unusable()) {
    for (const PendingSqe& pending : pending_) {
      if (pending.request != nullptr) CompleteUnsubmitted(pending.request);
    }
    pending_.clear();
    return -ECANCELED;
  }
  return SubmitPending();
}

int IoUringEngine::SubmitPending() {
  if (pending_.empty()) return 0;
  int result;
  do {
    result = io_uring_submit(&ring_);
  } while (result == -EINTR);
  // The kernel consumes SQEs in order: the first `consumed` are in flight.
  size_t consumed = result < 0 ? 0 : static_cast<size_t>(result);
  if (consumed > pending_.size()) consumed = pending_.size();
  int requests = 0;
  for (size_t i = 0; i < consumed; ++i) {
    ++owed_completions_;
    if (pending_[i].request != nullptr) {
      pending_[i].request->state.store(RequestState::kSubmitted, std::memory_order_relaxed);
      ++requests;
    }
  }
  if (consumed == pending_.size()) {
    pending_.clear();
    return requests;
  }
  // The rest stays in the SQ ring and would be submitted with the next
  // batch: make it harmless, and complete its requests now as not executed
  // (io_uring_enter's EAGAIN/EBUSY/ENOMEM is no result of the calls).
  const int error = result < 0 ? result : -EAGAIN;
  for (size_t i = consumed; i < pending_.size(); ++i) {
    MakeInternalNop(pending_[i].sqe);
    if (pending_[i].request != nullptr) CompleteUnsubmitted(pending_[i].request);
    pending_[i].request = nullptr;
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(consumed));
  return error;
}

void IoUringEngine::ReapAvailable() {
  unsigned head;
  unsigned seen = 0;
  io_uring_cqe* cqe;
  io_uring_for_each_cqe(&ring_, head, cqe) {
    ++seen;
    if (cqe->user_data != kInternalUserData) {
      Request* request = reinterpret_cast<Request*>(static_cast<uintptr_t>(cqe->user_data));
      if (request->streamed) --streamed_in_ring_;
      // An open's slot is held until installed or released (the install's
      // own request is a kCall of type 0, OPEN, too: not one).
      if (request != &install_request_ && request->operation == RequestOperation::kCall &&
          IsOpen(request->call.type) && cqe->res >= 0) {
        ++early_descriptors_held_;
      }
      CompleteRequest(request, cqe->res);
    }
  }
  io_uring_cq_advance(&ring_, seen);
  owed_completions_ -= seen < owed_completions_ ? seen : owed_completions_;
  StartHeldStreamed();
}

void IoUringEngine::Wait(Request* request) {
  if (request->state.load(std::memory_order_relaxed) == RequestState::kPrepared) Submit();
  for (;;) {
    const RequestState state = request->state.load(std::memory_order_acquire);
    if (state == RequestState::kCompleted || state == RequestState::kIdle) return;
    if (!Unusable() && owed_completions_ == 0) StartHeldStreamed();
    if (Unusable() || owed_completions_ == 0) {
      // The ring failed, or belongs to the parent of this forked process,
      // or (a broken invariant) the request is not in flight here: its
      // result can never arrive, so do not hang the program.
      if (!DropHeld(request)) CompleteRequest(request, -ECANCELED);
      return;
    }
    io_uring_cqe* cqe = nullptr;
    const int result = io_uring_wait_cqe(&ring_, &cqe);
    if (result == -EINTR) continue;
    if (result < 0) {
      broken_ = true;
      continue;
    }
    ReapAvailable();
  }
}

void IoUringEngine::Poll() {
  if (Unusable() || owed_completions_ == 0) return;
  // With deferred task work, finished requests post their CQEs only when
  // asked to.
  if (deferred_task_work_) io_uring_get_events(&ring_);
  ReapAvailable();
}

void IoUringEngine::Cancel(Request* request) {
  if (DropHeld(request) || Unusable()) return;
  if (request->state.load(std::memory_order_relaxed) == RequestState::kPrepared) Submit();
  if (request->state.load(std::memory_order_relaxed) != RequestState::kSubmitted) return;
  if (!HasRoomFor(1, 0)) {
    Poll();
    if (!HasRoomFor(1, 0)) return;  // the request simply completes on its own
  }
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  io_uring_prep_cancel64(sqe, reinterpret_cast<uintptr_t>(request), 0);
  sqe->user_data = kInternalUserData;
  pending_.push_back(PendingSqe{nullptr, sqe});
  SubmitPending();
}

int64_t IoUringEngine::InstallEarlyDescriptor(int64_t early, const foreactor_call& open) {
  if (early < 0 || Unusable()) return -ECANCELED;
  if (!HasRoomFor(1, kReservedForCancel)) Poll();
  if (!HasRoomFor(1, kReservedForCancel)) {
    ReleaseEarlyDescriptor(early);
    return -EAGAIN;
  }
  // Runs inline in io_uring_enter, on this thread: the number is taken in
  // the program's table, the lowest free one, as the program's open takes
  // it.  Never IOSQE_ASYNC.
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);  // never null: room was checked
  io_uring_prep_rw(kOpFixedDescriptorInstall, sqe, static_cast<int>(early), nullptr, 0, 0);
  sqe->open_flags = (open.flags & O_CLOEXEC) != 0 ? 0 : kFixedDescriptorNoCloseOnExec;
  io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
  io_uring_sqe_set_data(sqe, &install_request_);
  install_request_.state.store(RequestState::kPrepared, std::memory_order_relaxed);
  pending_.push_back(PendingSqe{&install_request_, sqe});
  SubmitPending();
  Wait(&install_request_);
  const int64_t installed = install_request_.result;
  install_request_.state.store(RequestState::kIdle, std::memory_order_relaxed);
  ReleaseEarlyDescriptor(early);  // the program's descriptor holds the file now
  return installed;
}

void IoUringEngine::ReleaseEarlyDescriptor(int64_t early) {
  if (early < 0 || Unusable()) return;
  // An fput in the ring's table: no record lock of the process goes with it.
  int none = -1;
  if (io_uring_register_files_update(&ring_, static_cast<unsigned>(early), &none, 1) == 1 &&
      early_descriptors_held_ > 0) {
    --early_descriptors_held_;
  }
}

}  // namespace foreactor
