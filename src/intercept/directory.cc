// Interposer of getdents64, the call under readdir() that a program (or a
// plugin's graph) may also make directly.
#undef _FORTIFY_SOURCE

#include <dirent.h>

#include "intercept/interpose.h"

FOREACTOR_INTERPOSER ssize_t getdents64(int fd, void* buffer, size_t length) noexcept {
  using foreactor::real_calls;
  if (!foreactor::InterceptionWanted()) return real_calls.getdents64(fd, buffer, length);
  foreactor::InterceptedCall intercepted;
  intercepted.call.type = FOREACTOR_CALL_GETDENTS64;
  intercepted.call.fd = fd;
  intercepted.call.buffer = buffer;
  intercepted.call.length = length;
  return foreactor::OfferOrRun(
      &intercepted, [&]() -> int64_t { return real_calls.getdents64(fd, buffer, length); });
}
