// Interposers of the directory calls: getdents64, the call under readdir()
// that a program (or a plugin's graph) may also make directly, and
// opendir/fdopendir, which walk-ahead follows (src/walk/walk_ahead.h).
#undef _FORTIFY_SOURCE

#include <dirent.h>

#include "intercept/interpose.h"
#include "walk/walk_ahead.h"

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

FOREACTOR_INTERCEPTED_PATH DIR* OpenDirectoryStream(const char* path) {
  DIR* stream = real_calls.opendir(path);
  if (stream != nullptr && tls_context.inside_foreactor == 0)
    ObserveDirectoryOpenedByPath(path, -1);
  return stream;
}

FOREACTOR_INTERCEPTED_PATH DIR* OpenDirectoryStreamOf(int fd) {
  DIR* stream = real_calls.fdopendir(fd);
  if (stream != nullptr && tls_context.inside_foreactor == 0) ObserveDirectoryStream(fd);
  return stream;
}

// Walk-ahead learns whether it is on when the library is loaded (after the
// real functions are resolved), not inside the program's first directory
// open.
__attribute__((constructor(102))) void LoadWalkAheadSwitchAtStart() { (void)WalkAheadObserving(); }

}  // namespace
}  // namespace foreactor

FOREACTOR_INTERPOSER ssize_t getdents64(int fd, void* buffer, size_t length) noexcept {
  if (!foreactor::InterceptionWanted()) return foreactor::real_calls.getdents64(fd, buffer, length);
  return foreactor::InterceptGetDents64(fd, buffer, length);
}

FOREACTOR_INTERPOSER DIR* opendir(const char* path) {
  if (!foreactor::WalkAheadObserving()) return foreactor::real_calls.opendir(path);
  return foreactor::OpenDirectoryStream(path);
}

FOREACTOR_INTERPOSER DIR* fdopendir(int fd) {
  if (!foreactor::WalkAheadObserving()) return foreactor::real_calls.fdopendir(fd);
  return foreactor::OpenDirectoryStreamOf(fd);
}
