// program_calls.h: the program's side of the interposer protocol, for the
// runtime's unit tests: a call is offered to the runtime and, when it
// declines, run for real and completed, exactly as src/intercept does.
#ifndef FOREACTOR_TESTS_UNIT_RUNTIME_PROGRAM_CALLS_H_
#define FOREACTOR_TESTS_UNIT_RUNTIME_PROGRAM_CALLS_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "gtest/gtest.h"
#include "runtime/interception.h"

namespace foreactor {

// Runs `call` for real through libc; returns the value or -errno.
inline int64_t RunDirectly(const foreactor_call& call) {
  long value = -1;
  switch (call.type) {
    case FOREACTOR_CALL_OPEN:
      value = ::open(call.path, call.flags, call.mode);
      break;
    case FOREACTOR_CALL_OPENAT:
      value = ::openat(call.fd, call.path, call.flags, call.mode);
      break;
    case FOREACTOR_CALL_CLOSE:
      value = ::close(call.fd);
      break;
    case FOREACTOR_CALL_READ:
      value = ::read(call.fd, call.buffer, call.length);
      break;
    case FOREACTOR_CALL_PREAD:
      value = ::pread(call.fd, call.buffer, call.length, call.offset);
      break;
    case FOREACTOR_CALL_WRITE:
      value = ::write(call.fd, call.buffer, call.length);
      break;
    case FOREACTOR_CALL_PWRITE:
      value = ::pwrite(call.fd, call.buffer, call.length, call.offset);
      break;
    case FOREACTOR_CALL_FSTATAT:
      value = ::fstatat(call.fd, call.path, static_cast<struct stat*>(call.buffer), call.flags);
      break;
    case FOREACTOR_CALL_FSTAT:
      value = ::fstat(call.fd, static_cast<struct stat*>(call.buffer));
      break;
    default:
      ADD_FAILURE() << "RunDirectly: type not handled";
      return -ENOSYS;
  }
  return value < 0 ? -errno : value;
}

// The program's `call`, made through the runtime's entry points for the
// interposers (OfferCall, CompleteCall) on the calling thread's scopes.
// Returns the value or -errno.
inline int64_t ProgramCallThroughScopes(const foreactor_call& call) {
  InterceptedCall intercepted;
  intercepted.call = call;
  int64_t result = 0;
  if (OfferCall(&intercepted, &result)) return result;
  result = RunDirectly(intercepted.call);
  CompleteCall(&intercepted, result);
  return result;
}

}  // namespace foreactor

#endif  // FOREACTOR_TESTS_UNIT_RUNTIME_PROGRAM_CALLS_H_
