// Interposers of the stat family: fstat, stat, lstat, fstatat, their 64
// names, and statx.  The program's struct stat (struct statx for statx) is
// the InterceptedCall's buffer.
#undef _FORTIFY_SOURCE

#include <fcntl.h>
#include <sys/stat.h>

#include "intercept/interpose.h"

namespace foreactor {
namespace {

InterceptedCall StatCall(foreactor_call_type type, int fd, const char* path, void* buffer,
                         int flags) {
  InterceptedCall intercepted;
  intercepted.call.type = type;
  intercepted.call.fd = fd;
  intercepted.call.path = path;
  intercepted.call.buffer = buffer;
  intercepted.call.flags = flags;
  return intercepted;
}

template <typename StatBuffer>
FOREACTOR_INTERCEPTED_PATH int InterceptFstat(
    const RealFunction<int(int, StatBuffer*) noexcept>& real, int fd, StatBuffer* buffer) {
  InterceptedCall intercepted = StatCall(FOREACTOR_CALL_FSTAT, fd, nullptr, buffer, 0);
  return static_cast<int>(OfferOrRun(&intercepted, [&]() -> int64_t { return real(fd, buffer); }));
}

template <typename StatBuffer>
int Fstat(const RealFunction<int(int, StatBuffer*) noexcept>& real, int fd, StatBuffer* buffer) {
  if (!InterceptionWanted()) return real(fd, buffer);
  return InterceptFstat(real, fd, buffer);
}

// stat and lstat (and their 64 names): `type` tells which.
template <typename StatBuffer>
FOREACTOR_INTERCEPTED_PATH int InterceptStatPath(
    const RealFunction<int(const char*, StatBuffer*) noexcept>& real, foreactor_call_type type,
    const char* path, StatBuffer* buffer) {
  InterceptedCall intercepted = StatCall(type, -1, path, buffer, 0);
  return static_cast<int>(
      OfferOrRun(&intercepted, [&]() -> int64_t { return real(path, buffer); }));
}

template <typename StatBuffer>
int StatPath(const RealFunction<int(const char*, StatBuffer*) noexcept>& real,
             foreactor_call_type type, const char* path, StatBuffer* buffer) {
  if (!InterceptionWanted()) return real(path, buffer);
  return InterceptStatPath(real, type, path, buffer);
}

template <typename StatBuffer>
FOREACTOR_INTERCEPTED_PATH int InterceptFstatat(
    const RealFunction<int(int, const char*, StatBuffer*, int) noexcept>& real, int directory_fd,
    const char* path, StatBuffer* buffer, int flags) {
  InterceptedCall intercepted = StatCall(FOREACTOR_CALL_FSTATAT, directory_fd, path, buffer, flags);
  return static_cast<int>(OfferOrRun(
      &intercepted, [&]() -> int64_t { return real(directory_fd, path, buffer, flags); }));
}

template <typename StatBuffer>
int Fstatat(const RealFunction<int(int, const char*, StatBuffer*, int) noexcept>& real,
            int directory_fd, const char* path, StatBuffer* buffer, int flags) {
  if (!InterceptionWanted()) return real(directory_fd, path, buffer, flags);
  return InterceptFstatat(real, directory_fd, path, buffer, flags);
}

// statx: `mask` travels in call.mode (see foreactor_call_type).
FOREACTOR_INTERCEPTED_PATH int InterceptStatx(int directory_fd, const char* path, int flags,
                                              unsigned int mask, struct statx* buffer) {
  InterceptedCall intercepted = StatCall(FOREACTOR_CALL_STATX, directory_fd, path, buffer, flags);
  intercepted.call.mode = mask;
  return static_cast<int>(OfferOrRun(&intercepted, [&]() -> int64_t {
    return real_calls.statx(directory_fd, path, flags, mask, buffer);
  }));
}

}  // namespace
}  // namespace foreactor

using foreactor::real_calls;

FOREACTOR_INTERPOSER int fstat(int fd, struct stat* buffer) noexcept {
  return foreactor::Fstat(real_calls.fstat, fd, buffer);
}

FOREACTOR_INTERPOSER int fstat64(int fd, struct stat64* buffer) noexcept {
  return foreactor::Fstat(real_calls.fstat64, fd, buffer);
}

FOREACTOR_INTERPOSER int stat(const char* path, struct stat* buffer) noexcept {
  return foreactor::StatPath(real_calls.stat, FOREACTOR_CALL_STAT, path, buffer);
}

FOREACTOR_INTERPOSER int stat64(const char* path, struct stat64* buffer) noexcept {
  return foreactor::StatPath(real_calls.stat64, FOREACTOR_CALL_STAT, path, buffer);
}

FOREACTOR_INTERPOSER int lstat(const char* path, struct stat* buffer) noexcept {
  return foreactor::StatPath(real_calls.lstat, FOREACTOR_CALL_LSTAT, path, buffer);
}

FOREACTOR_INTERPOSER int lstat64(const char* path, struct stat64* buffer) noexcept {
  return foreactor::StatPath(real_calls.lstat64, FOREACTOR_CALL_LSTAT, path, buffer);
}

FOREACTOR_INTERPOSER int fstatat(int directory_fd, const char* path, struct stat* buffer,
                                 int flags) noexcept {
  return foreactor::Fstatat(real_calls.fstatat, directory_fd, path, buffer, flags);
}

FOREACTOR_INTERPOSER int fstatat64(int directory_fd, const char* path, struct stat64* buffer,
                                   int flags) noexcept {
  return foreactor::Fstatat(real_calls.fstatat64, directory_fd, path, buffer, flags);
}

FOREACTOR_INTERPOSER int statx(int directory_fd, const char* path, int flags, unsigned int mask,
                               struct statx* buffer) noexcept {
  if (!foreactor::InterceptionWanted()) {
    return real_calls.statx(directory_fd, path, flags, mask, buffer);
  }
  return foreactor::InterceptStatx(directory_fd, path, flags, mask, buffer);
}
