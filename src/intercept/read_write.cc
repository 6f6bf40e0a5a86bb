// Interposers of the read and write families, their vector forms and lseek.
#undef _FORTIFY_SOURCE

#include <sys/uio.h>
#include <unistd.h>

#include "intercept/interpose.h"

// glibc's fortification failure for buffer overflows; prints
// "*** buffer overflow detected ***: terminated" and aborts.
extern "C" [[noreturn]] void __chk_fail(void);

namespace foreactor {
namespace {

// Builds the InterceptedCall of a call with a data buffer.  `offset` is
// meaningful only for the positional forms.
InterceptedCall DataCall(foreactor_call_type type, int fd, const void* buffer, size_t length,
                         off_t offset) {
  InterceptedCall intercepted;
  intercepted.call.type = type;
  intercepted.call.fd = fd;
  intercepted.call.buffer = const_cast<void*>(buffer);
  intercepted.call.length = length;
  intercepted.call.offset = offset;
  return intercepted;
}

// Builds the InterceptedCall of a vector call.
InterceptedCall VectorCall(foreactor_call_type type, int fd, const struct iovec* iov, int iovcnt,
                           off_t offset) {
  InterceptedCall intercepted;
  intercepted.call.type = type;
  intercepted.call.fd = fd;
  intercepted.call.iov = iov;
  intercepted.call.iovcnt = iovcnt;
  intercepted.call.offset = offset;
  return intercepted;
}

FOREACTOR_INTERCEPTED_PATH ssize_t InterceptRead(int fd, void* buffer, size_t length) {
  InterceptedCall intercepted = DataCall(FOREACTOR_CALL_READ, fd, buffer, length, 0);
  return OfferOrRun(&intercepted, [&]() -> int64_t { return real_calls.read(fd, buffer, length); });
}

ssize_t Read(int fd, void* buffer, size_t length) {
  if (!InterceptionWanted()) return real_calls.read(fd, buffer, length);
  return InterceptRead(fd, buffer, length);
}

FOREACTOR_INTERCEPTED_PATH ssize_t InterceptPread(const RealFunction<PositionalReadFunction>& real,
                                                  int fd, void* buffer, size_t length,
                                                  off_t offset) {
  InterceptedCall intercepted = DataCall(FOREACTOR_CALL_PREAD, fd, buffer, length, offset);
  return OfferOrRun(&intercepted, [&]() -> int64_t { return real(fd, buffer, length, offset); });
}

ssize_t Pread(const RealFunction<PositionalReadFunction>& real, int fd, void* buffer, size_t length,
              off_t offset) {
  if (!InterceptionWanted()) return real(fd, buffer, length, offset);
  return InterceptPread(real, fd, buffer, length, offset);
}

FOREACTOR_INTERCEPTED_PATH ssize_t InterceptWrite(int fd, const void* buffer, size_t length) {
  InterceptedCall intercepted = DataCall(FOREACTOR_CALL_WRITE, fd, buffer, length, 0);
  return OfferOrRun(&intercepted,
                    [&]() -> int64_t { return real_calls.write(fd, buffer, length); });
}

FOREACTOR_INTERCEPTED_PATH ssize_t
InterceptPwrite(const RealFunction<PositionalWriteFunction>& real, int fd, const void* buffer,
                size_t length, off_t offset) {
  InterceptedCall intercepted = DataCall(FOREACTOR_CALL_PWRITE, fd, buffer, length, offset);
  return OfferOrRun(&intercepted, [&]() -> int64_t { return real(fd, buffer, length, offset); });
}

ssize_t Pwrite(const RealFunction<PositionalWriteFunction>& real, int fd, const void* buffer,
               size_t length, off_t offset) {
  if (!InterceptionWanted()) return real(fd, buffer, length, offset);
  return InterceptPwrite(real, fd, buffer, length, offset);
}

FOREACTOR_INTERCEPTED_PATH off_t InterceptLseek(const RealFunction<SeekFunction>& real, int fd,
                                                off_t offset, int whence) {
  InterceptedCall intercepted;
  intercepted.call.type = FOREACTOR_CALL_LSEEK;
  intercepted.call.fd = fd;
  intercepted.call.offset = offset;
  intercepted.call.whence = whence;
  return OfferOrRun(&intercepted, [&]() -> int64_t { return real(fd, offset, whence); });
}

off_t Lseek(const RealFunction<SeekFunction>& real, int fd, off_t offset, int whence) {
  if (!InterceptionWanted()) return real(fd, offset, whence);
  return InterceptLseek(real, fd, offset, whence);
}

// readv and writev: `type` tells which.
FOREACTOR_INTERCEPTED_PATH ssize_t InterceptVector(const RealFunction<VectorFunction>& real,
                                                   foreactor_call_type type, int fd,
                                                   const struct iovec* iov, int iovcnt) {
  InterceptedCall intercepted = VectorCall(type, fd, iov, iovcnt, 0);
  return OfferOrRun(&intercepted, [&]() -> int64_t { return real(fd, iov, iovcnt); });
}

// preadv and pwritev (and their 64 names): `type` tells which.
FOREACTOR_INTERCEPTED_PATH ssize_t InterceptPositionalVector(
    const RealFunction<PositionalVectorFunction>& real, foreactor_call_type type, int fd,
    const struct iovec* iov, int iovcnt, off_t offset) {
  InterceptedCall intercepted = VectorCall(type, fd, iov, iovcnt, offset);
  return OfferOrRun(&intercepted, [&]() -> int64_t { return real(fd, iov, iovcnt, offset); });
}

ssize_t PositionalVector(const RealFunction<PositionalVectorFunction>& real,
                         foreactor_call_type type, int fd, const struct iovec* iov, int iovcnt,
                         off_t offset) {
  if (!InterceptionWanted()) return real(fd, iov, iovcnt, offset);
  return InterceptPositionalVector(real, type, fd, iov, iovcnt, offset);
}

}  // namespace
}  // namespace foreactor

using foreactor::real_calls;

FOREACTOR_INTERPOSER ssize_t read(int fd, void* buffer, size_t length) {
  return foreactor::Read(fd, buffer, length);
}

// Fortified read: `buffer_size` is the size of the destination as the
// compiler knew it.
FOREACTOR_INTERPOSER ssize_t __read_chk(int fd, void* buffer, size_t length, size_t buffer_size) {
  if (length > buffer_size) __chk_fail();
  return foreactor::Read(fd, buffer, length);
}

FOREACTOR_INTERPOSER ssize_t pread(int fd, void* buffer, size_t length, off_t offset) {
  return foreactor::Pread(real_calls.pread, fd, buffer, length, offset);
}

FOREACTOR_INTERPOSER ssize_t pread64(int fd, void* buffer, size_t length, off64_t offset) {
  return foreactor::Pread(real_calls.pread64, fd, buffer, length, offset);
}

FOREACTOR_INTERPOSER ssize_t __pread_chk(int fd, void* buffer, size_t length, off_t offset,
                                         size_t buffer_size) {
  if (length > buffer_size) __chk_fail();
  return foreactor::Pread(real_calls.pread, fd, buffer, length, offset);
}

FOREACTOR_INTERPOSER ssize_t __pread64_chk(int fd, void* buffer, size_t length, off64_t offset,
                                           size_t buffer_size) {
  if (length > buffer_size) __chk_fail();
  return foreactor::Pread(real_calls.pread64, fd, buffer, length, offset);
}

FOREACTOR_INTERPOSER ssize_t write(int fd, const void* buffer, size_t length) {
  if (!foreactor::InterceptionWanted()) return real_calls.write(fd, buffer, length);
  return foreactor::InterceptWrite(fd, buffer, length);
}

FOREACTOR_INTERPOSER ssize_t pwrite(int fd, const void* buffer, size_t length, off_t offset) {
  return foreactor::Pwrite(real_calls.pwrite, fd, buffer, length, offset);
}

FOREACTOR_INTERPOSER ssize_t pwrite64(int fd, const void* buffer, size_t length, off64_t offset) {
  return foreactor::Pwrite(real_calls.pwrite64, fd, buffer, length, offset);
}

FOREACTOR_INTERPOSER off_t lseek(int fd, off_t offset, int whence) noexcept {
  return foreactor::Lseek(real_calls.lseek, fd, offset, whence);
}

FOREACTOR_INTERPOSER off64_t lseek64(int fd, off64_t offset, int whence) noexcept {
  return foreactor::Lseek(real_calls.lseek64, fd, offset, whence);
}

FOREACTOR_INTERPOSER ssize_t readv(int fd, const struct iovec* iov, int iovcnt) {
  if (!foreactor::InterceptionWanted()) return real_calls.readv(fd, iov, iovcnt);
  return foreactor::InterceptVector(real_calls.readv, FOREACTOR_CALL_READV, fd, iov, iovcnt);
}

FOREACTOR_INTERPOSER ssize_t preadv(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  return foreactor::PositionalVector(real_calls.preadv, FOREACTOR_CALL_PREADV, fd, iov, iovcnt,
                                     offset);
}

FOREACTOR_INTERPOSER ssize_t preadv64(int fd, const struct iovec* iov, int iovcnt, off64_t offset) {
  return foreactor::PositionalVector(real_calls.preadv64, FOREACTOR_CALL_PREADV, fd, iov, iovcnt,
                                     offset);
}

FOREACTOR_INTERPOSER ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  if (!foreactor::InterceptionWanted()) return real_calls.writev(fd, iov, iovcnt);
  return foreactor::InterceptVector(real_calls.writev, FOREACTOR_CALL_WRITEV, fd, iov, iovcnt);
}

FOREACTOR_INTERPOSER ssize_t pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  return foreactor::PositionalVector(real_calls.pwritev, FOREACTOR_CALL_PWRITEV, fd, iov, iovcnt,
                                     offset);
}

FOREACTOR_INTERPOSER ssize_t pwritev64(int fd, const struct iovec* iov, int iovcnt,
                                       off64_t offset) {
  return foreactor::PositionalVector(real_calls.pwritev64, FOREACTOR_CALL_PWRITEV, fd, iov, iovcnt,
                                     offset);
}
