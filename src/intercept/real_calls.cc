#include "intercept/real_calls.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace foreactor {
namespace {

// ---------------------------------------------------------------- stand-ins
//
// Each stand-in does what the glibc 2.36 wrapper of the same name does on
// x86_64, with syscall(2), which sets errno and returns -1 on failure.

bool OpenNeedsMode(int flags) { return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE; }

int RawOpenAt(int directory_fd, const char* path, int flags, mode_t mode) {
  return static_cast<int>(syscall(SYS_openat, directory_fd, path, flags, mode));
}

int StandInOpen(const char* path, int flags, ...) {
  mode_t mode = 0;
  if (OpenNeedsMode(flags)) {
    va_list arguments;
    va_start(arguments, flags);
    mode = va_arg(arguments, mode_t);
    va_end(arguments);
  }
  return RawOpenAt(AT_FDCWD, path, flags, mode);
}

int StandInOpenAt(int directory_fd, const char* path, int flags, ...) {
  mode_t mode = 0;
  if (OpenNeedsMode(flags)) {
    va_list arguments;
    va_start(arguments, flags);
    mode = va_arg(arguments, mode_t);
    va_end(arguments);
  }
  return RawOpenAt(directory_fd, path, flags, mode);
}

// Ends the program the way glibc's fortification failure does: the message
// on standard error, then abort().
[[noreturn]] void FortifyFail(const char* message) {
  static const char kPrefix[] = "*** ";
  static const char kSuffix[] = " ***: terminated\n";
  syscall(SYS_write, STDERR_FILENO, kPrefix, sizeof(kPrefix) - 1);
  syscall(SYS_write, STDERR_FILENO, message, std::strlen(message));
  syscall(SYS_write, STDERR_FILENO, kSuffix, sizeof(kSuffix) - 1);
  std::abort();
}

int StandInOpen2(const char* path, int flags) {
  if (OpenNeedsMode(flags)) FortifyFail("invalid open call: O_CREAT or O_TMPFILE without mode");
  return RawOpenAt(AT_FDCWD, path, flags, 0);
}

int StandInOpen64_2(const char* path, int flags) {
  if (OpenNeedsMode(flags)) FortifyFail("invalid open64 call: O_CREAT or O_TMPFILE without mode");
  return RawOpenAt(AT_FDCWD, path, flags, 0);
}

int StandInOpenAt2(int directory_fd, const char* path, int flags) {
  if (OpenNeedsMode(flags)) FortifyFail("invalid openat call: O_CREAT or O_TMPFILE without mode");
  return RawOpenAt(directory_fd, path, flags, 0);
}

int StandInOpenAt64_2(int directory_fd, const char* path, int flags) {
  if (OpenNeedsMode(flags)) {
    FortifyFail("invalid openat64 call: O_CREAT or O_TMPFILE without mode");
  }
  return RawOpenAt(directory_fd, path, flags, 0);
}

int StandInClose(int fd) { return static_cast<int>(syscall(SYS_close, fd)); }

ssize_t StandInRead(int fd, void* buffer, size_t length) {
  return syscall(SYS_read, fd, buffer, length);
}

ssize_t StandInPread(int fd, void* buffer, size_t length, off_t offset) {
  return syscall(SYS_pread64, fd, buffer, length, offset);
}

ssize_t StandInWrite(int fd, const void* buffer, size_t length) {
  return syscall(SYS_write, fd, buffer, length);
}

ssize_t StandInPwrite(int fd, const void* buffer, size_t length, off_t offset) {
  return syscall(SYS_pwrite64, fd, buffer, length, offset);
}

off_t StandInLseek(int fd, off_t offset, int whence) noexcept {
  return syscall(SYS_lseek, fd, offset, whence);
}

// glibc 2.33+ builds the whole stat family on newfstatat; struct stat and
// struct stat64 are the kernel's struct stat on x86_64.
int RawFstatAt(int directory_fd, const char* path, void* buffer, int flags) {
  return static_cast<int>(syscall(SYS_newfstatat, directory_fd, path, buffer, flags));
}

int RawFstat(int fd, void* buffer) {
  if (fd < 0) {
    errno = EBADF;
    return -1;
  }
  return RawFstatAt(fd, "", buffer, AT_EMPTY_PATH);
}

int StandInFstat(int fd, struct stat* buffer) noexcept { return RawFstat(fd, buffer); }
int StandInFstat64(int fd, struct stat64* buffer) noexcept { return RawFstat(fd, buffer); }

int StandInStat(const char* path, struct stat* buffer) noexcept {
  return RawFstatAt(AT_FDCWD, path, buffer, 0);
}
int StandInStat64(const char* path, struct stat64* buffer) noexcept {
  return RawFstatAt(AT_FDCWD, path, buffer, 0);
}
int StandInLstat(const char* path, struct stat* buffer) noexcept {
  return RawFstatAt(AT_FDCWD, path, buffer, AT_SYMLINK_NOFOLLOW);
}
int StandInLstat64(const char* path, struct stat64* buffer) noexcept {
  return RawFstatAt(AT_FDCWD, path, buffer, AT_SYMLINK_NOFOLLOW);
}
int StandInFstatat(int directory_fd, const char* path, struct stat* buffer, int flags) noexcept {
  return RawFstatAt(directory_fd, path, buffer, flags);
}
int StandInFstatat64(int directory_fd, const char* path, struct stat64* buffer,
                     int flags) noexcept {
  return RawFstatAt(directory_fd, path, buffer, flags);
}

int StandInStatx(int directory_fd, const char* path, int flags, unsigned int mask,
                 struct statx* buffer) noexcept {
  return static_cast<int>(syscall(SYS_statx, directory_fd, path, flags, mask, buffer));
}

ssize_t StandInGetDents64(int fd, void* buffer, size_t length) noexcept {
  // The kernel takes an unsigned int and checks lengths as int.
  if (length > INT_MAX) length = INT_MAX;
  return syscall(SYS_getdents64, fd, buffer, length);
}

// Directory streams have no system call of their own: the stand-ins look
// the libc function up on each call (only until the table is resolved, or
// always under FOREACTOR_TEST_RAW_SYSCALLS=1).
DIR* StandInOpenDirectory(const char* path) {
  auto* real = reinterpret_cast<OpenDirectoryFunction*>(dlsym(RTLD_NEXT, "opendir"));
  if (real == nullptr) {
    errno = ENOSYS;
    return nullptr;
  }
  return real(path);
}

DIR* StandInOpenDirectoryOf(int fd) {
  auto* real = reinterpret_cast<OpenDirectoryOfFunction*>(dlsym(RTLD_NEXT, "fdopendir"));
  if (real == nullptr) {
    errno = ENOSYS;
    return nullptr;
  }
  return real(fd);
}

ssize_t StandInReadv(int fd, const struct iovec* iov, int iovcnt) {
  return syscall(SYS_readv, fd, iov, iovcnt);
}

ssize_t StandInWritev(int fd, const struct iovec* iov, int iovcnt) {
  return syscall(SYS_writev, fd, iov, iovcnt);
}

// preadv(2)/pwritev(2) take the offset as a low and a high half.
long OffsetHigh(off_t offset) {
  return static_cast<long>(static_cast<unsigned long long>(offset) >> 32);
}

ssize_t StandInPreadv(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  return syscall(SYS_preadv, fd, iov, iovcnt, static_cast<long>(offset), OffsetHigh(offset));
}

ssize_t StandInPwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  return syscall(SYS_pwritev, fd, iov, iovcnt, static_cast<long>(offset), OffsetHigh(offset));
}

// --------------------------------------------------------------- resolution

// The addresses [begin, end) that the loadable segments of one object span.
struct AddressSpan {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  bool Contains(uintptr_t address) const { return address >= begin && address < end; }
};

// dl_iterate_phdr callback: when the object holds `*data` (an address given
// as an AddressSpan with begin == end == that address), replaces it with
// the span of the object's loadable segments and stops.
int FindSpanOfObject(struct dl_phdr_info* object, size_t, void* data) {
  AddressSpan* span = static_cast<AddressSpan*>(data);
  const uintptr_t wanted = span->begin;
  AddressSpan found{UINTPTR_MAX, 0};
  bool holds = false;
  for (int i = 0; i < object->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = object->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD) continue;
    const AddressSpan one{object->dlpi_addr + segment.p_vaddr,
                          object->dlpi_addr + segment.p_vaddr + segment.p_memsz};
    holds = holds || one.Contains(wanted);
    if (one.begin < found.begin) found.begin = one.begin;
    if (one.end > found.end) found.end = one.end;
  }
  if (!holds) return 0;
  *span = found;
  return 1;
}

// True when `address` lies in the object that holds this library's code.
// The object's span is found once, by walking the loaded objects' segment
// headers: dladdr() per address searched every symbol table, about 50,000
// instructions a call and a millisecond at every process start.
bool InThisLibrary(void* address) {
  static const AddressSpan own = [] {
    const uintptr_t code = reinterpret_cast<uintptr_t>(&ResolveRealCalls);
    AddressSpan span{code, code};
    if (dl_iterate_phdr(&FindSpanOfObject, &span) == 0) span = AddressSpan{};
    return span;
  }();
  return own.Contains(reinterpret_cast<uintptr_t>(address));
}

// Returns true when `name` was found.
template <typename Function>
bool Resolve(RealFunction<Function>& entry, const char* name) {
  void* found = dlsym(RTLD_NEXT, name);
  if (found == nullptr || InThisLibrary(found)) return false;
  entry.Set(reinterpret_cast<Function*>(found));
  return true;
}

// FOREACTOR_TEST_RAW_SYSCALLS=1 keeps every stand-in, so that tests can
// compare the stand-ins with libc by running the same program both ways.
bool KeepStandIns() {
  const char* value = getenv("FOREACTOR_TEST_RAW_SYSCALLS");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

__attribute__((constructor(101))) void ResolveWhenLoaded() {
  if (KeepStandIns()) return;
  const int saved_errno = errno;
  ResolveRealCalls();
  errno = saved_errno;
}

}  // namespace

constinit RealCalls real_calls = {
    RealFunction<OpenFunction>(&StandInOpen),
    RealFunction<OpenFunction>(&StandInOpen),
    RealFunction<OpenAtFunction>(&StandInOpenAt),
    RealFunction<OpenAtFunction>(&StandInOpenAt),
    RealFunction<FortifiedOpenFunction>(&StandInOpen2),
    RealFunction<FortifiedOpenFunction>(&StandInOpen64_2),
    RealFunction<FortifiedOpenAtFunction>(&StandInOpenAt2),
    RealFunction<FortifiedOpenAtFunction>(&StandInOpenAt64_2),
    RealFunction<CloseFunction>(&StandInClose),
    RealFunction<ReadFunction>(&StandInRead),
    RealFunction<PositionalReadFunction>(&StandInPread),
    RealFunction<PositionalReadFunction>(&StandInPread),
    RealFunction<WriteFunction>(&StandInWrite),
    RealFunction<PositionalWriteFunction>(&StandInPwrite),
    RealFunction<PositionalWriteFunction>(&StandInPwrite),
    RealFunction<SeekFunction>(&StandInLseek),
    RealFunction<SeekFunction>(&StandInLseek),
    RealFunction<FstatFunction>(&StandInFstat),
    RealFunction<Fstat64Function>(&StandInFstat64),
    RealFunction<StatFunction>(&StandInStat),
    RealFunction<Stat64Function>(&StandInStat64),
    RealFunction<StatFunction>(&StandInLstat),
    RealFunction<Stat64Function>(&StandInLstat64),
    RealFunction<FstatatFunction>(&StandInFstatat),
    RealFunction<Fstatat64Function>(&StandInFstatat64),
    RealFunction<StatxFunction>(&StandInStatx),
    RealFunction<GetDents64Function>(&StandInGetDents64),
    RealFunction<OpenDirectoryFunction>(&StandInOpenDirectory),
    RealFunction<OpenDirectoryOfFunction>(&StandInOpenDirectoryOf),
    RealFunction<VectorFunction>(&StandInReadv),
    RealFunction<PositionalVectorFunction>(&StandInPreadv),
    RealFunction<PositionalVectorFunction>(&StandInPreadv),
    RealFunction<VectorFunction>(&StandInWritev),
    RealFunction<PositionalVectorFunction>(&StandInPwritev),
    RealFunction<PositionalVectorFunction>(&StandInPwritev),
};

void ResolveRealCalls() {
  // Failures leave a message for dlerror(); the program must not see it.
  bool all_found = true;
  all_found &= Resolve(real_calls.open, "open");
  all_found &= Resolve(real_calls.open64, "open64");
  all_found &= Resolve(real_calls.openat, "openat");
  all_found &= Resolve(real_calls.openat64, "openat64");
  all_found &= Resolve(real_calls.open_2, "__open_2");
  all_found &= Resolve(real_calls.open64_2, "__open64_2");
  all_found &= Resolve(real_calls.openat_2, "__openat_2");
  all_found &= Resolve(real_calls.openat64_2, "__openat64_2");
  all_found &= Resolve(real_calls.close, "close");
  all_found &= Resolve(real_calls.read, "read");
  all_found &= Resolve(real_calls.pread, "pread");
  all_found &= Resolve(real_calls.pread64, "pread64");
  all_found &= Resolve(real_calls.write, "write");
  all_found &= Resolve(real_calls.pwrite, "pwrite");
  all_found &= Resolve(real_calls.pwrite64, "pwrite64");
  all_found &= Resolve(real_calls.lseek, "lseek");
  all_found &= Resolve(real_calls.lseek64, "lseek64");
  all_found &= Resolve(real_calls.fstat, "fstat");
  all_found &= Resolve(real_calls.fstat64, "fstat64");
  all_found &= Resolve(real_calls.stat, "stat");
  all_found &= Resolve(real_calls.stat64, "stat64");
  all_found &= Resolve(real_calls.lstat, "lstat");
  all_found &= Resolve(real_calls.lstat64, "lstat64");
  all_found &= Resolve(real_calls.fstatat, "fstatat");
  all_found &= Resolve(real_calls.fstatat64, "fstatat64");
  all_found &= Resolve(real_calls.statx, "statx");
  all_found &= Resolve(real_calls.getdents64, "getdents64");
  all_found &= Resolve(real_calls.opendir, "opendir");
  all_found &= Resolve(real_calls.fdopendir, "fdopendir");
  all_found &= Resolve(real_calls.readv, "readv");
  all_found &= Resolve(real_calls.preadv, "preadv");
  all_found &= Resolve(real_calls.preadv64, "preadv64");
  all_found &= Resolve(real_calls.writev, "writev");
  all_found &= Resolve(real_calls.pwritev, "pwritev");
  all_found &= Resolve(real_calls.pwritev64, "pwritev64");
  if (!all_found) dlerror();
}

}  // namespace foreactor
