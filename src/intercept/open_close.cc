// Interposers of the open family and close.
#undef _FORTIFY_SOURCE

#include <fcntl.h>
#include <unistd.h>

#include <cstdarg>

#include "intercept/interpose.h"
#include "walk/walk_ahead.h"

namespace foreactor {
namespace {

// True when open() reads its third argument (glibc's __OPEN_NEEDS_MODE).
bool OpenNeedsMode(int flags) { return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE; }

// The intercepted path of open and open64; `real` is the matching libc function.
FOREACTOR_INTERCEPTED_PATH int InterceptOpen(const RealFunction<OpenFunction>& real,
                                             const char* path, int flags, mode_t mode) {
  InterceptedCall intercepted;
  intercepted.call.type = FOREACTOR_CALL_OPEN;
  intercepted.call.path = path;
  intercepted.call.flags = flags;
  intercepted.call.mode = mode;
  return static_cast<int>(
      OfferOrRun(&intercepted, [&]() -> int64_t { return real(path, flags, mode); }));
}

// The intercepted path of openat and openat64.
FOREACTOR_INTERCEPTED_PATH int InterceptOpenAt(const RealFunction<OpenAtFunction>& real,
                                               int directory_fd, const char* path, int flags,
                                               mode_t mode) {
  InterceptedCall intercepted;
  intercepted.call.type = FOREACTOR_CALL_OPENAT;
  intercepted.call.fd = directory_fd;
  intercepted.call.path = path;
  intercepted.call.flags = flags;
  intercepted.call.mode = mode;
  return static_cast<int>(
      OfferOrRun(&intercepted, [&]() -> int64_t { return real(directory_fd, path, flags, mode); }));
}

FOREACTOR_INTERCEPTED_PATH int InterceptClose(int fd) {
  InterceptedCall intercepted;
  intercepted.call.type = FOREACTOR_CALL_CLOSE;
  intercepted.call.fd = fd;
  return static_cast<int>(
      OfferOrRun(&intercepted, [&]() -> int64_t { return real_calls.close(fd); }));
}

// True when an open with `flags` opens a directory to read (not O_PATH):
// walk-ahead may want to hear of it.  The idle path of every other open
// stays a test and a tail call.
inline bool OpensDirectory(int flags) {
  return __builtin_expect((flags & (O_DIRECTORY | O_PATH)) == O_DIRECTORY, 0);
}

// True when walk-ahead follows this thread's directory opens.
inline bool WalkAheadFollows() { return WalkAheadObserving() && tls_context.inside_foreactor == 0; }

// open and open64 of a directory, reported to walk-ahead when it is on and
// the open succeeds.
FOREACTOR_INTERCEPTED_PATH int OpenDirectory(const RealFunction<OpenFunction>& real,
                                             const char* path, int flags, mode_t mode) {
  if (!WalkAheadFollows()) {
    if (!InterceptionWanted()) return real(path, flags, mode);
    return InterceptOpen(real, path, flags, mode);
  }
  const int fd =
      InterceptionWanted() ? InterceptOpen(real, path, flags, mode) : real(path, flags, mode);
  if (fd >= 0) ObserveDirectoryOpenedByPath(path, fd);
  return fd;
}

// openat and openat64 of a directory: by path when `path` is absolute or
// taken from the working directory, else a step down from `directory_fd`.
FOREACTOR_INTERCEPTED_PATH int OpenDirectoryAt(const RealFunction<OpenAtFunction>& real,
                                               int directory_fd, const char* path, int flags,
                                               mode_t mode) {
  if (!WalkAheadFollows()) {
    if (!InterceptionWanted()) return real(directory_fd, path, flags, mode);
    return InterceptOpenAt(real, directory_fd, path, flags, mode);
  }
  const int fd = InterceptionWanted() ? InterceptOpenAt(real, directory_fd, path, flags, mode)
                                      : real(directory_fd, path, flags, mode);
  if (fd < 0 || path == nullptr) return fd;
  if (directory_fd == AT_FDCWD || path[0] == '/') {
    ObserveDirectoryOpenedByPath(path, fd);
  } else if (!(path[0] == '.' && path[1] == '.' && path[2] == '\0')) {
    ObserveDirectoryOpenedAt(fd);  // a step down (fts climbs back up with "..": not a step)
  }
  return fd;
}

__attribute__((always_inline)) inline int Open(const RealFunction<OpenFunction>& real,
                                               const char* path, int flags, mode_t mode) {
  if (OpensDirectory(flags)) return OpenDirectory(real, path, flags, mode);
  if (!InterceptionWanted()) return real(path, flags, mode);
  return InterceptOpen(real, path, flags, mode);
}

__attribute__((always_inline)) inline int OpenAt(const RealFunction<OpenAtFunction>& real,
                                                 int directory_fd, const char* path, int flags,
                                                 mode_t mode) {
  if (OpensDirectory(flags)) return OpenDirectoryAt(real, directory_fd, path, flags, mode);
  if (!InterceptionWanted()) return real(directory_fd, path, flags, mode);
  return InterceptOpenAt(real, directory_fd, path, flags, mode);
}

}  // namespace
}  // namespace foreactor

using foreactor::real_calls;

// The variadic mode argument is read only when the flags say it was passed.
#define FOREACTOR_READ_MODE(mode, flags) \
  mode_t mode = 0;                       \
  if (foreactor::OpenNeedsMode(flags)) { \
    va_list arguments;                   \
    va_start(arguments, flags);          \
    mode = va_arg(arguments, mode_t);    \
    va_end(arguments);                   \
  }

FOREACTOR_INTERPOSER int open(const char* path, int flags, ...) {
  FOREACTOR_READ_MODE(mode, flags)
  return foreactor::Open(real_calls.open, path, flags, mode);
}

FOREACTOR_INTERPOSER int open64(const char* path, int flags, ...) {
  FOREACTOR_READ_MODE(mode, flags)
  return foreactor::Open(real_calls.open64, path, flags, mode);
}

FOREACTOR_INTERPOSER int openat(int directory_fd, const char* path, int flags, ...) {
  FOREACTOR_READ_MODE(mode, flags)
  return foreactor::OpenAt(real_calls.openat, directory_fd, path, flags, mode);
}

FOREACTOR_INTERPOSER int openat64(int directory_fd, const char* path, int flags, ...) {
  FOREACTOR_READ_MODE(mode, flags)
  return foreactor::OpenAt(real_calls.openat64, directory_fd, path, flags, mode);
}

#undef FOREACTOR_READ_MODE

// Fortified opens (-D_FORTIFY_SOURCE): flags that need a mode are a
// programming error, and libc's own function reports it and aborts; any
// other call is a plain open.
FOREACTOR_INTERPOSER int __open_2(const char* path, int flags) {
  if (foreactor::OpenNeedsMode(flags)) return real_calls.open_2(path, flags);
  return foreactor::Open(real_calls.open, path, flags, 0);
}

FOREACTOR_INTERPOSER int __open64_2(const char* path, int flags) {
  if (foreactor::OpenNeedsMode(flags)) return real_calls.open64_2(path, flags);
  return foreactor::Open(real_calls.open64, path, flags, 0);
}

FOREACTOR_INTERPOSER int __openat_2(int directory_fd, const char* path, int flags) {
  if (foreactor::OpenNeedsMode(flags)) return real_calls.openat_2(directory_fd, path, flags);
  return foreactor::OpenAt(real_calls.openat, directory_fd, path, flags, 0);
}

FOREACTOR_INTERPOSER int __openat64_2(int directory_fd, const char* path, int flags) {
  if (foreactor::OpenNeedsMode(flags)) return real_calls.openat64_2(directory_fd, path, flags);
  return foreactor::OpenAt(real_calls.openat64, directory_fd, path, flags, 0);
}

FOREACTOR_INTERPOSER int close(int fd) {
  if (!foreactor::CloseWatched()) return real_calls.close(fd);
  return foreactor::InterceptClose(fd);
}
