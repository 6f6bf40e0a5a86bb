// real_calls.h: the libc functions the interposers stand in front of.
//
// Every interposer ends, one way or another, in the function it replaces.
// `real_calls` holds a pointer to each of them, found with
// dlsym(RTLD_NEXT, name) by a constructor that runs when the library is
// loaded.  Until that constructor has run, and for every name dlsym cannot
// find, the pointer leads to a stand-in that makes the system call directly
// with syscall(2) and has the same semantics as the glibc 2.36 wrapper
// (return value, errno).  So a call that arrives during loading (another
// library's constructor, an allocator that reads a file while dlsym runs)
// never recurses into the resolver and never finds a null pointer.
//
// Loading a pointer is one relaxed atomic load: no lock, no allocation.
// Used only by the interposers in this folder.
//
// Test hook: with FOREACTOR_TEST_RAW_SYSCALLS=1 in the environment, the
// constructor resolves nothing and every call goes to its stand-in (the
// integration tests run the passthrough programs this way too).
#ifndef FOREACTOR_INTERCEPT_REAL_CALLS_H_
#define FOREACTOR_INTERCEPT_REAL_CALLS_H_

#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <utility>

namespace foreactor {

// One libc function of type `Function`: a stand-in until resolved.
template <typename Function>
class RealFunction {
 public:
  constexpr explicit RealFunction(Function* stand_in) : pointer_(stand_in) {}

  RealFunction(const RealFunction&) = delete;
  RealFunction& operator=(const RealFunction&) = delete;

  // Calls the function (the real one once resolved, else the stand-in).
  template <typename... Arguments>
  auto operator()(Arguments&&... arguments) const {
    return pointer_.load(std::memory_order_relaxed)(std::forward<Arguments>(arguments)...);
  }

  // Points at `function` from now on.  Ignores null.
  void Set(Function* function) {
    if (function != nullptr) pointer_.store(function, std::memory_order_relaxed);
  }

 private:
  std::atomic<Function*> pointer_;
};

// The types of the replaced functions, as glibc declares them on x86_64:
// noexcept where glibc declares the function __THROW (not a cancellation
// point), so that an interposer, itself noexcept then, can end in a tail
// call to it (see interpose.h).
using OpenFunction = int(const char* path, int flags, ...);
using OpenAtFunction = int(int directory_fd, const char* path, int flags, ...);
using FortifiedOpenFunction = int(const char* path, int flags);
using FortifiedOpenAtFunction = int(int directory_fd, const char* path, int flags);
using CloseFunction = int(int fd);
using ReadFunction = ssize_t(int fd, void* buffer, size_t length);
using PositionalReadFunction = ssize_t(int fd, void* buffer, size_t length, off_t offset);
using WriteFunction = ssize_t(int fd, const void* buffer, size_t length);
using PositionalWriteFunction = ssize_t(int fd, const void* buffer, size_t length, off_t offset);
using SeekFunction = off_t(int fd, off_t offset, int whence) noexcept;
using FstatFunction = int(int fd, struct stat* buffer) noexcept;
using Fstat64Function = int(int fd, struct stat64* buffer) noexcept;
using StatFunction = int(const char* path, struct stat* buffer) noexcept;
using Stat64Function = int(const char* path, struct stat64* buffer) noexcept;
using FstatatFunction = int(int directory_fd, const char* path, struct stat* buffer,
                            int flags) noexcept;
using Fstatat64Function = int(int directory_fd, const char* path, struct stat64* buffer,
                              int flags) noexcept;
using StatxFunction = int(int directory_fd, const char* path, int flags, unsigned int mask,
                          struct statx* buffer) noexcept;
using GetDents64Function = ssize_t(int fd, void* buffer, size_t length) noexcept;
using OpenDirectoryFunction = DIR*(const char* path);
using OpenDirectoryOfFunction = DIR*(int fd);
using VectorFunction = ssize_t(int fd, const struct iovec* iov, int iovcnt);
using PositionalVectorFunction = ssize_t(int fd, const struct iovec* iov, int iovcnt, off_t offset);

// One member per replaced libc name (fortified names only for the failure
// path: a valid fortified call goes through the plain function).
struct RealCalls {
  RealFunction<OpenFunction> open;
  RealFunction<OpenFunction> open64;
  RealFunction<OpenAtFunction> openat;
  RealFunction<OpenAtFunction> openat64;
  RealFunction<FortifiedOpenFunction> open_2;
  RealFunction<FortifiedOpenFunction> open64_2;
  RealFunction<FortifiedOpenAtFunction> openat_2;
  RealFunction<FortifiedOpenAtFunction> openat64_2;
  RealFunction<CloseFunction> close;
  RealFunction<ReadFunction> read;
  RealFunction<PositionalReadFunction> pread;
  RealFunction<PositionalReadFunction> pread64;
  RealFunction<WriteFunction> write;
  RealFunction<PositionalWriteFunction> pwrite;
  RealFunction<PositionalWriteFunction> pwrite64;
  RealFunction<SeekFunction> lseek;
  RealFunction<SeekFunction> lseek64;
  RealFunction<FstatFunction> fstat;
  RealFunction<Fstat64Function> fstat64;
  RealFunction<StatFunction> stat;
  RealFunction<Stat64Function> stat64;
  RealFunction<StatFunction> lstat;
  RealFunction<Stat64Function> lstat64;
  RealFunction<FstatatFunction> fstatat;
  RealFunction<Fstatat64Function> fstatat64;
  RealFunction<StatxFunction> statx;
  RealFunction<GetDents64Function> getdents64;
  RealFunction<OpenDirectoryFunction> opendir;
  RealFunction<OpenDirectoryOfFunction> fdopendir;
  RealFunction<VectorFunction> readv;
  RealFunction<PositionalVectorFunction> preadv;
  RealFunction<PositionalVectorFunction> preadv64;
  RealFunction<VectorFunction> writev;
  RealFunction<PositionalVectorFunction> pwritev;
  RealFunction<PositionalVectorFunction> pwritev64;
};

// The table.  Constant-initialized with the stand-ins, so it is usable
// before any constructor of this library has run.
extern RealCalls real_calls;

// Resolves every entry of `real_calls` with dlsym(RTLD_NEXT, name).  Runs
// automatically as a constructor; calling it again is harmless.  An entry
// whose name is not found, or which would resolve to this library itself,
// keeps its stand-in.
void ResolveRealCalls();

}  // namespace foreactor

#endif  // FOREACTOR_INTERCEPT_REAL_CALLS_H_
