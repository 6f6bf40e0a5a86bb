// raw_syscalls.h: the few system calls the runtime makes for itself.
//
// They go straight to the kernel with syscall(2), never through the libc
// names foreactor intercepts, and return -errno on failure instead of
// touching errno.
#ifndef FOREACTOR_RUNTIME_RAW_SYSCALLS_H_
#define FOREACTOR_RUNTIME_RAW_SYSCALLS_H_

#include <fcntl.h>
#include <linux/openat2.h>  // struct open_how, RESOLVE_*
#include <linux/stat.h>     // struct statx, STATX_DIOALIGN
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace foreactor::raw {

inline int64_t Result(long value) { return value < 0 ? -errno : value; }

inline int64_t Lseek(int fd, int64_t offset, int whence) {
  return Result(syscall(SYS_lseek, fd, offset, whence));
}
inline int64_t Close(int fd) { return Result(syscall(SYS_close, fd)); }
inline int64_t Fcntl(int fd, int command, long argument) {
  return Result(syscall(SYS_fcntl, fd, command, argument));
}
inline int64_t Fstat(int fd, struct stat* out) { return Result(syscall(SYS_fstat, fd, out)); }
inline int64_t Ftruncate(int fd, int64_t length) {
  return Result(syscall(SYS_ftruncate, fd, length));
}
// openat(2) of `path` relative to the working directory.
inline int64_t Open(const char* path, int flags, mode_t mode) {
  return Result(syscall(SYS_openat, AT_FDCWD, path, flags, mode));
}

// statx(2) of the open file `fd` itself, asking for `mask`.
inline int64_t FstatxOf(int fd, unsigned mask, struct statx* out) {
  return Result(syscall(SYS_statx, fd, "", AT_EMPTY_PATH, mask, out));
}

// preadv2(2) of one buffer.  `offset` -1 reads at the file position and
// advances it, as read(2) does.  With RWF_NOWAIT the kernel never waits for
// the device: it copies what the page cache holds and fails with EAGAIN when
// that is nothing, after starting the read of the missing pages, so a miss
// costs about a read's start and the range is in the cache soon after
// (bench/cache_probe measures it).
inline int64_t Preadv2(int fd, void* buffer, size_t length, int64_t offset, int flags) {
  struct iovec vector = {buffer, length};
  return Result(syscall(SYS_preadv2, fd, &vector, 1, offset, 0L, flags));
}

// readahead(2): starts reading bytes [offset, offset + length) of the
// regular file `fd` into the page cache and returns without waiting for
// the device (it allocates the missing pages and submits their reads;
// pages already cached are left alone; the kernel reads at most its
// read-ahead limit of the device).  Changes neither the file position nor
// anything the program reads.  -EINVAL for a file that cannot be read so.
inline int64_t Readahead(int fd, int64_t offset, size_t length) {
  return Result(syscall(SYS_readahead, fd, offset, length));
}

// read(2) at the file position when `offset` is -1, pread(2) at `offset`
// otherwise: the program's own plain read, made by the runtime.
inline int64_t ReadAt(int fd, void* buffer, size_t length, int64_t offset) {
  if (offset < 0) return Result(syscall(SYS_read, fd, buffer, length));
  return Result(syscall(SYS_pread64, fd, buffer, length, offset));
}

// openat2(2): `path` under `directory_fd` with `flags` (O_*) and `resolve`
// (RESOLVE_*) restrictions on how the path may be followed.
inline int64_t Openat2(int directory_fd, const char* path, uint64_t flags, uint64_t resolve) {
  struct open_how how = {};
  how.flags = flags;
  how.resolve = resolve;
  return Result(syscall(SYS_openat2, directory_fd, path, &how, sizeof(how)));
}
// cachestat(2) (Linux 6.5): counts, among the pages of `length` bytes at
// `offset` of `fd`, those the page cache holds (a page whose read has
// started counts).  Reads no data and never waits for the device.  Debian
// 12's kernel headers predate it: its number and structures are spelled
// out here (the number is the same on every architecture).
struct CachestatRange {
  uint64_t offset;
  uint64_t length;
};
struct CachestatCounts {
  uint64_t cached;
  uint64_t dirty;
  uint64_t writeback;
  uint64_t evicted;
  uint64_t recently_evicted;
};
inline constexpr long kCachestatSyscall = 451;
inline int64_t Cachestat(int fd, uint64_t offset, uint64_t length, CachestatCounts* out) {
  CachestatRange range = {offset, length};
  return Result(syscall(kCachestatSyscall, fd, &range, out, 0U));
}
inline int64_t GetDents64(int fd, void* buffer, size_t length) {
  return Result(syscall(SYS_getdents64, fd, buffer, length));
}
inline int64_t Fstatat(int directory_fd, const char* path, struct stat* out, int flags) {
  return Result(syscall(SYS_newfstatat, directory_fd, path, out, flags));
}
inline int64_t Fstatfs(int fd, struct statfs* out) { return Result(syscall(SYS_fstatfs, fd, out)); }
inline int64_t Statfs(const char* path, struct statfs* out) {
  return Result(syscall(SYS_statfs, path, out));
}
inline int64_t Readlink(const char* path, char* buffer, size_t length) {
  return Result(syscall(SYS_readlink, path, buffer, length));
}
// sendfile(2) of up to `length` bytes at `offset` of `in` to `out`, leaving
// the file position of `in` alone.
inline int64_t Sendfile(int out, int in, int64_t offset, size_t length) {
  off_t at = static_cast<off_t>(offset);
  return Result(syscall(SYS_sendfile, out, in, &at, length));
}

}  // namespace foreactor::raw

#endif  // FOREACTOR_RUNTIME_RAW_SYSCALLS_H_
