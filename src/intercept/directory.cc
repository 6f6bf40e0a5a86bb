// Interposer of getdents64, the call under readdir() that a program (or a
// plugin's graph) may also make directly.
#undef _FORTIFY_SOURCE

#include <dirent.h>

#include "intercept/interpose.h"

namespace foreactor {
namespace {

FOREACTOR_INTERCEPTED_PATH ssize_t InterceptGetDents64(int fd, void* buffer, size_t length) {
  InterceptedCall intercepted;
  intercepted.call.type = FOREACTOR_CALL_GETDENTS64;
  intercepted.call.fd = fd;
  intercepted.call.buffer = buffer;
  intercepted.call.length = length;
  return OfferOrRun(&intercepted,
                    [&]() -> int64_t { return real_calls.getdents64(fd, buffer, length); });
}

}  // namespace
}  // namespace foreactor

FOREACTOR_INTERPOSER ssize_t getdents64(int fd, void* buffer, size_t length) noexcept {
  if (!foreactor::InterceptionWanted()) return foreactor::real_calls.getdents64(fd, buffer, length);
  return foreactor::InterceptGetDents64(fd, buffer, length);
}
