// interpose.h: what every interposer in this folder shares.
//
// An interposer is an exported extern "C" function with the name and type of
// a libc function.  Its body follows src/runtime/interception.h, in two
// parts:
//
//   if (!InterceptionWanted()) return real_calls.NAME(...);   // idle fast path
//   return InterceptNAME(...);                                // out of line
//
//   FOREACTOR_INTERCEPTED_PATH ... InterceptNAME(...) {
//     InterceptedCall intercepted = ...;                      // the program's arguments
//     return OfferOrRun(&intercepted, [&] { return real_calls.NAME(...); });
//   }
//
// The split keeps the idle fast path, which every call of a program outside
// scopes takes, down to a thread-local load, a test and a tail call (jmp) to
// the libc function: no stack frame and, above all, no return of its own.
// Right after a system call the CPU's return predictions are often gone
// (the kernel refills the return stack buffer on the way back), so each
// extra return between the system call and the program costs a
// misprediction, measurable on a hot du (bench/overhead).  For
// the same reason the functions glibc declares __THROW have noexcept types
// in real_calls.h: a noexcept interposer calling a function that may throw
// needs a frame for std::terminate and cannot end in a tail call.
//
// Interposer files are compiled without _FORTIFY_SOURCE (see the #undef at
// their top): the fortified inline wrappers of the glibc headers would
// clash with the definitions.
#ifndef FOREACTOR_INTERCEPT_INTERPOSE_H_
#define FOREACTOR_INTERCEPT_INTERPOSE_H_

#include <cerrno>
#include <cstdint>

#include "intercept/real_calls.h"
#include "runtime/interception.h"

// Marks a definition that replaces the libc function of the same name.
#define FOREACTOR_INTERPOSER extern "C" __attribute__((visibility("default")))

// Marks the out-of-line part of an interposer: what runs when the calling
// thread has a speculating scope.
#define FOREACTOR_INTERCEPTED_PATH __attribute__((noinline))

namespace foreactor {

// Offers `intercepted` to the runtime; when the runtime declines, runs
// `run_real_call` (which returns the libc return value, -1 with errno on
// failure) and reports its outcome with CompleteCall().
//
// Returns what the program's call returns: the result (>= 0), or -1 with
// errno set.  errno is otherwise left as the program had it, whatever the
// runtime does with it meanwhile.
template <typename RealCall>
inline int64_t OfferOrRun(InterceptedCall* intercepted, RealCall run_real_call) {
  const int errno_before = errno;
  int64_t result = 0;
  if (OfferCall(intercepted, &result)) {
    if (result < 0) {
      errno = static_cast<int>(-result);
      return -1;
    }
    errno = errno_before;
    return result;
  }
  errno = errno_before;
  const int64_t returned = run_real_call();
  const int errno_after = errno;
  CompleteCall(intercepted, returned < 0 ? -static_cast<int64_t>(errno_after) : returned);
  errno = errno_after;
  return returned;
}

}  // namespace foreactor

#endif  // FOREACTOR_INTERCEPT_INTERPOSE_H_
