// interpose.h: what every interposer in this folder shares.
//
// An interposer is an exported extern "C" function with the name and type of
// a libc function.  Its body follows src/runtime/interception.h:
//
//   if (!InterceptionWanted()) return real_calls.NAME(...);   // idle fast path
//   InterceptedCall intercepted = ...;                        // the program's arguments
//   return OfferOrRun(&intercepted, [&] { return real_calls.NAME(...); });
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
