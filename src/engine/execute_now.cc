// ExecuteNow: runs a request on the calling thread with raw system calls.
//
// Raw syscall(2) is used on purpose: the libc names (pread, statx, ...) are
// the ones foreactor intercepts, and an engine must never re-enter them.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "engine/engine.h"
#include "engine/request_rules.h"

namespace foreactor {
namespace {

// The two halves of a file offset as preadv(2)/pwritev(2) take them.
unsigned long OffsetLow(int64_t offset) { return static_cast<unsigned long>(offset); }
unsigned long OffsetHigh(int64_t offset) {
  // Shifted in two steps so the expression is defined when long is 64 bits.
  constexpr int kHalf = sizeof(unsigned long) * 4;
  return static_cast<unsigned long>((static_cast<uint64_t>(offset) >> kHalf) >> kHalf);
}

// Runs the one call of `request` (ignoring its link) and returns the result
// or -errno.  Leaves the caller's errno as it was.
int64_t RunCall(Request* request) {
  const foreactor_call& call = request->call;
  const int saved_errno = errno;
  long result;
  if (request->operation == RequestOperation::kStartWriteBack) {
    // Not a name foreactor intercepts: libc's wrapper picks the kernel's
    // variant of the call (sync_file_range2 on some architectures).
    result = sync_file_range(call.fd, call.offset, static_cast<off64_t>(call.length),
                             SYNC_FILE_RANGE_WRITE);
    const int64_t answer = result == -1 ? -static_cast<int64_t>(errno) : result;
    errno = saved_errno;
    return answer;
  }
  if (request->operation == RequestOperation::kStartReadAhead) {
    result = syscall(SYS_readahead, call.fd, call.offset, call.length);
    const int64_t answer = result == -1 ? -static_cast<int64_t>(errno) : result;
    errno = saved_errno;
    return answer;
  }
  switch (call.type) {
    case FOREACTOR_CALL_OPEN:
      result = syscall(SYS_openat, AT_FDCWD, call.path, call.flags, call.mode);
      break;
    case FOREACTOR_CALL_OPENAT:
      result = syscall(SYS_openat, call.fd, call.path, call.flags, call.mode);
      break;
    case FOREACTOR_CALL_CLOSE:
      result = syscall(SYS_close, call.fd);
      break;
    case FOREACTOR_CALL_READ:
    case FOREACTOR_CALL_PREAD:
      result = syscall(SYS_pread64, call.fd, call.buffer, call.length, call.offset);
      break;
    case FOREACTOR_CALL_WRITE:
    case FOREACTOR_CALL_PWRITE:
      result = syscall(SYS_pwrite64, call.fd, call.buffer, call.length, call.offset);
      break;
    case FOREACTOR_CALL_READV:
    case FOREACTOR_CALL_PREADV:
      result = syscall(SYS_preadv, call.fd, call.iov, call.iovcnt, OffsetLow(call.offset),
                       OffsetHigh(call.offset));
      break;
    case FOREACTOR_CALL_WRITEV:
    case FOREACTOR_CALL_PWRITEV:
      result = syscall(SYS_pwritev, call.fd, call.iov, call.iovcnt, OffsetLow(call.offset),
                       OffsetHigh(call.offset));
      break;
    case FOREACTOR_CALL_LSEEK:
      result = syscall(SYS_lseek, call.fd, call.offset, call.whence);
      break;
    case FOREACTOR_CALL_FSTAT:
    case FOREACTOR_CALL_FSTATAT:
    case FOREACTOR_CALL_STAT:
    case FOREACTOR_CALL_LSTAT:
    case FOREACTOR_CALL_STATX: {
      const StatxArguments statx = StatxArgumentsFor(call);
      result = syscall(SYS_statx, statx.directory_fd, statx.path, statx.flags, statx.mask,
                       &request->statx_buffer);
      break;
    }
    case FOREACTOR_CALL_GETDENTS64:
      result = syscall(SYS_getdents64, call.fd, call.buffer, call.length);
      break;
    default:
      errno = saved_errno;
      return -EINVAL;
  }
  const int64_t answer = result == -1 ? -static_cast<int64_t>(errno) : result;
  errno = saved_errno;
  return answer;
}

}  // namespace

bool ExecuteNow(Request* request) {
  bool run = true;
  while (request != nullptr) {
    // Everything needed from the request is read before it is completed:
    // afterwards its owner may reuse it.
    Request* next = request->linked_next;
    run = run && !request->cancel_requested.load(std::memory_order_acquire);
    const int64_t result = run ? RunCall(request) : -ECANCELED;
    request->result = result;
    run = run && LinkContinues(*request);
    CompleteRequest(request, result);
    request = next;
  }
  return run;
}

}  // namespace foreactor
