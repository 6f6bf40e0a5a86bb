// passthrough: calls every libc name foreactor interposes, outside any
// scope, and prints everything each call showed.  The test compares the
// output of this program linked with libforeactor.so against the same
// source built without it.  Built twice more with -D_FORTIFY_SOURCE=2 -O2
// (passthrough_fortify.cc), where the same calls reach __open_2,
// __read_chk, __pread_chk and the other fortified entry points.
//
// Usage:
//   passthrough FIXTURE SCRATCH      FIXTURE: the tree of conftest.py; SCRATCH: empty directory
//   passthrough --fortify-failure NAME DIRECTORY
//       (fortified builds) makes one fortified call that must abort the
//       program: NAME is read, pread, pread64 (on DIRECTORY/small.txt), open,
//       open64, openat or openat64 (of DIRECTORY/must_not_exist).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "observation.h"

using observation::DescribeDirents;
using observation::DescribeFileContents;
using observation::DescribeStat;
using observation::DescribeStatx;
using observation::Format;
using observation::Hash;
using observation::ReturnAndErrno;

namespace {

// Values the compiler cannot see through, so that fortified builds call
// the checking entry points (__open_2 for non-constant flags, __read_chk
// for non-constant lengths).
volatile int volatile_zero = 0;
int Flags(int flags) { return flags | volatile_zero; }
size_t Length(size_t length) { return length + static_cast<size_t>(volatile_zero); }
int Count(int count) { return count + volatile_zero; }

constexpr int kErrnoSentinel = 4242;

// Prints one call: its label, its return value and errno, and `detail`.
void Show(const std::string& label, int64_t returned, int error, const std::string& detail = "") {
  std::printf("%s %s%s%s\n", label.c_str(), ReturnAndErrno(returned, error).c_str(),
              detail.empty() ? "" : " ", detail.c_str());
}

// Runs `call` with errno set to a sentinel, then shows what it returned.
template <typename Call>
int64_t Observe(const std::string& label, Call call) {
  errno = kErrnoSentinel;
  int64_t returned = static_cast<int64_t>(call());
  Show(label, returned, errno);
  return returned;
}

std::string BufferHash(const void* buffer, size_t length) {
  return Format("buffer=%016llx", static_cast<unsigned long long>(Hash(buffer, length)));
}

void ExerciseOpens(const std::string& fixture, const std::string& scratch, int* descriptors) {
  const std::string small = fixture + "/small.txt";
  const std::string medium = fixture + "/medium.bin";
  descriptors[0] = static_cast<int>(
      Observe("open(small.txt)", [&] { return open(small.c_str(), Flags(O_RDONLY)); }));
  descriptors[1] = static_cast<int>(
      Observe("open64(medium.bin)", [&] { return open64(medium.c_str(), Flags(O_RDONLY)); }));
  descriptors[2] = static_cast<int>(Observe(
      "open(fixture, O_DIRECTORY)", [&] { return open(fixture.c_str(), O_RDONLY | O_DIRECTORY); }));
  const int fixture_fd = descriptors[2];
  descriptors[3] = static_cast<int>(Observe(
      "openat(large.bin)", [&] { return openat(fixture_fd, "large.bin", Flags(O_RDONLY)); }));
  descriptors[4] = static_cast<int>(Observe(
      "openat64(dir)", [&] { return openat64(fixture_fd, "dir", Flags(O_RDONLY | O_DIRECTORY)); }));
  descriptors[5] = static_cast<int>(Observe("open(created, O_CREAT, 0640)", [&] {
    return open((scratch + "/created").c_str(), O_CREAT | O_RDWR | O_TRUNC, 0640);
  }));
  descriptors[6] = static_cast<int>(Observe("open64(created64, O_CREAT, 0600)", [&] {
    return open64((scratch + "/created64").c_str(), O_CREAT | O_RDWR, 0600);
  }));
  descriptors[7] = static_cast<int>(Observe("openat(created_at, O_CREAT|O_EXCL, 0604)", [&] {
    return openat(AT_FDCWD, (scratch + "/created_at").c_str(), O_CREAT | O_EXCL | O_WRONLY, 0604);
  }));
  descriptors[8] = static_cast<int>(Observe("openat64(created_at64, O_CREAT, 0601)", [&] {
    return openat64(AT_FDCWD, (scratch + "/created_at64").c_str(), O_CREAT | O_RDWR, 0601);
  }));
  descriptors[9] = static_cast<int>(Observe("open(scratch, O_TMPFILE, 0600)", [&] {
    return open(scratch.c_str(), O_TMPFILE | O_RDWR, 0600);
  }));
  Observe("open(missing)", [&] { return open((fixture + "/missing").c_str(), Flags(O_RDONLY)); });
  Observe("open64(small.txt/x)", [&] { return open64((small + "/x").c_str(), Flags(O_RDONLY)); });
  Observe("openat(bad dirfd)", [&] { return openat(-5, "small.txt", Flags(O_RDONLY)); });
  Observe("openat64(missing)", [&] { return openat64(fixture_fd, "missing", Flags(O_RDONLY)); });
  Observe("openat(created_at again, O_CREAT|O_EXCL)", [&] {
    return openat(AT_FDCWD, (scratch + "/created_at").c_str(), O_CREAT | O_EXCL | O_WRONLY, 0604);
  });
}

void ExerciseReads(int small_fd, int medium_fd, int large_fd) {
  char buffer[128];
  for (int i = 0; i < 5; ++i) {
    std::memset(buffer, 0xA5, sizeof(buffer));
    errno = kErrnoSentinel;
    int64_t got = read(small_fd, buffer, Length(sizeof(buffer) - 90));
    Show(Format("read(small.txt, 38) #%d", i), got, errno, BufferHash(buffer, sizeof(buffer)));
  }
  const off_t offsets[] = {0, 1000, 69990, 70000, 80000, -1};
  for (off_t offset : offsets) {
    std::memset(buffer, 0xA5, sizeof(buffer));
    errno = kErrnoSentinel;
    int64_t got = pread(medium_fd, buffer, Length(100), offset);
    Show(Format("pread(medium.bin, 100, %jd)", static_cast<intmax_t>(offset)), got, errno,
         BufferHash(buffer, sizeof(buffer)));
    std::memset(buffer, 0xA5, sizeof(buffer));
    errno = kErrnoSentinel;
    got = pread64(large_fd, buffer, Length(sizeof(buffer)), offset * 15);
    Show(Format("pread64(large.bin, 128, %jd)", static_cast<intmax_t>(offset * 15)), got, errno,
         BufferHash(buffer, sizeof(buffer)));
  }
  errno = kErrnoSentinel;
  int64_t got = read(-1, buffer, Length(10));
  Show("read(-1)", got, errno);

  char first[7], second[300], third[33];
  struct iovec vectors[3] = {
      {first, sizeof(first)}, {second, sizeof(second)}, {third, sizeof(third)}};
  const off_t vector_offsets[] = {0, 5000, 1048580, 1048583};
  for (int i = 0; i < 2; ++i) {
    std::memset(first, 1, sizeof(first));
    std::memset(second, 2, sizeof(second));
    std::memset(third, 3, sizeof(third));
    errno = kErrnoSentinel;
    got = readv(large_fd, vectors, 3);
    Show(Format("readv(large.bin) #%d", i), got, errno,
         BufferHash(first, sizeof(first)) + " " + BufferHash(second, sizeof(second)) + " " +
             BufferHash(third, sizeof(third)));
  }
  for (off_t offset : vector_offsets) {
    std::memset(first, 1, sizeof(first));
    std::memset(second, 2, sizeof(second));
    std::memset(third, 3, sizeof(third));
    errno = kErrnoSentinel;
    got = preadv(large_fd, vectors, 3, offset);
    Show(Format("preadv(large.bin, %jd)", static_cast<intmax_t>(offset)), got, errno,
         BufferHash(first, sizeof(first)) + " " + BufferHash(second, sizeof(second)) + " " +
             BufferHash(third, sizeof(third)));
    errno = kErrnoSentinel;
    got = preadv64(medium_fd, vectors, 2, offset / 16);
    Show(Format("preadv64(medium.bin, %jd)", static_cast<intmax_t>(offset / 16)), got, errno,
         BufferHash(first, sizeof(first)) + " " + BufferHash(second, sizeof(second)));
  }
  errno = kErrnoSentinel;
  got = readv(large_fd, vectors, Count(-1));
  Show("readv(iovcnt -1)", got, errno);
}

void ExerciseWrites(int fd, int read_only_fd) {
  static const char kText[] = "written by passthrough\n";
  Observe("write(created)", [&] { return write(fd, kText, sizeof(kText) - 1); });
  Observe("write(created, 0 bytes)", [&] { return write(fd, kText, 0); });
  Observe("pwrite(created, at 100)", [&] { return pwrite(fd, kText, 5, 100); });
  Observe("pwrite64(created, at 7)", [&] { return pwrite64(fd, kText, 3, 7); });
  Observe("pwrite(created, at -1)", [&] { return pwrite(fd, kText, 3, -1); });
  Observe("write(read-only fd)", [&] { return write(read_only_fd, kText, 3); });
  char one[] = "one ", two[] = "two ", three[] = "three\n";
  struct iovec vectors[3] = {{one, 4}, {two, 4}, {three, 6}};
  Observe("writev(created)", [&] { return writev(fd, vectors, 3); });
  Observe("pwritev(created, at 200)", [&] { return pwritev(fd, vectors, 3, 200); });
  Observe("pwritev64(created, at 3)", [&] { return pwritev64(fd, vectors, 2, 3); });
  Observe("writev(read-only fd)", [&] { return writev(read_only_fd, vectors, 3); });
}

void ExerciseSeeks(int small_fd, int hole_fd) {
  Observe("lseek(small.txt, 0, SEEK_CUR)", [&] { return lseek(small_fd, 0, SEEK_CUR); });
  Observe("lseek(small.txt, 10, SEEK_SET)", [&] { return lseek(small_fd, 10, SEEK_SET); });
  Observe("lseek64(small.txt, -20, SEEK_END)", [&] { return lseek64(small_fd, -20, SEEK_END); });
  Observe("lseek64(small.txt, -200, SEEK_CUR)", [&] { return lseek64(small_fd, -200, SEEK_CUR); });
  Observe("lseek(hole.bin, 0, SEEK_DATA)", [&] { return lseek(hole_fd, 0, SEEK_DATA); });
  Observe("lseek(hole.bin, 0, SEEK_HOLE)", [&] { return lseek(hole_fd, 0, SEEK_HOLE); });
  Observe("lseek64(hole.bin, 2 MiB, SEEK_DATA)",
          [&] { return lseek64(hole_fd, 2 << 20, SEEK_DATA); });
  Observe("lseek(-1)", [&] { return lseek(-1, 0, SEEK_SET); });
}

void ShowStat(const std::string& label, int returned, int error, const struct stat& status) {
  Show(label, returned, error, returned == 0 ? DescribeStat(status) : "");
}

void ExerciseStats(const std::string& fixture, int small_fd, int medium_fd, int fixture_fd) {
  struct stat status;
  struct stat64 status64;
  static_assert(sizeof(status) == sizeof(status64));
  auto observe_stat = [&](const std::string& label, auto call) {
    std::memset(&status, 0xA5, sizeof(status));
    errno = kErrnoSentinel;
    int returned = call();
    ShowStat(label, returned, errno, status);
  };
  auto observe_stat64 = [&](const std::string& label, auto call) {
    std::memset(&status64, 0xA5, sizeof(status64));
    errno = kErrnoSentinel;
    int returned = call();
    struct stat copy;
    std::memcpy(&copy, &status64, sizeof(copy));
    ShowStat(label, returned, errno, copy);
  };
  const std::string link = fixture + "/link_to_small";
  observe_stat("fstat(small.txt)", [&] { return fstat(small_fd, &status); });
  observe_stat64("fstat64(medium.bin)", [&] { return fstat64(medium_fd, &status64); });
  observe_stat("fstat(-1)", [&] { return fstat(-1, &status); });
  observe_stat("stat(link_to_small)", [&] { return stat(link.c_str(), &status); });
  observe_stat64("stat64(dir)", [&] { return stat64((fixture + "/dir").c_str(), &status64); });
  observe_stat("stat(dangling)", [&] { return stat((fixture + "/dangling").c_str(), &status); });
  observe_stat("lstat(link_to_small)", [&] { return lstat(link.c_str(), &status); });
  observe_stat64("lstat64(dangling)",
                 [&] { return lstat64((fixture + "/dangling").c_str(), &status64); });
  observe_stat("lstat(missing)", [&] { return lstat((fixture + "/missing").c_str(), &status); });
  observe_stat("fstatat(link_to_dir, AT_SYMLINK_NOFOLLOW)",
               [&] { return fstatat(fixture_fd, "link_to_dir", &status, AT_SYMLINK_NOFOLLOW); });
  observe_stat("fstatat(link_to_dir)",
               [&] { return fstatat(fixture_fd, "link_to_dir", &status, 0); });
  observe_stat("fstatat(\"\", AT_EMPTY_PATH)",
               [&] { return fstatat(fixture_fd, "", &status, AT_EMPTY_PATH); });
  observe_stat64("fstatat64(empty)", [&] { return fstatat64(fixture_fd, "empty", &status64, 0); });
  observe_stat64("fstatat64(bad flags)",
                 [&] { return fstatat64(fixture_fd, "empty", &status64, 0x40000000); });

  struct statx extended;
  auto observe_statx = [&](const std::string& label, auto call) {
    std::memset(&extended, 0xA5, sizeof(extended));
    errno = kErrnoSentinel;
    int returned = call();
    Show(label, returned, errno, returned == 0 ? DescribeStatx(extended) : "");
  };
  observe_statx("statx(small.txt, STATX_ALL)",
                [&] { return statx(fixture_fd, "small.txt", 0, STATX_ALL, &extended); });
  observe_statx("statx(link_to_small, NOFOLLOW, STATX_SIZE)", [&] {
    return statx(fixture_fd, "link_to_small", AT_SYMLINK_NOFOLLOW, STATX_SIZE, &extended);
  });
  observe_statx("statx(fd, \"\", AT_EMPTY_PATH)",
                [&] { return statx(medium_fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &extended); });
  observe_statx("statx(missing)",
                [&] { return statx(fixture_fd, "missing", 0, STATX_BASIC_STATS, &extended); });
  observe_statx("statx(reserved mask bit)",
                [&] { return statx(fixture_fd, "small.txt", 0, STATX__RESERVED, &extended); });
}

void ExerciseDirectory(int directory_fd, int file_fd) {
  char buffer[2048];
  for (int i = 0;; ++i) {
    std::memset(buffer, 0xA5, sizeof(buffer));
    errno = kErrnoSentinel;
    int64_t got = getdents64(directory_fd, buffer, sizeof(buffer));
    Show(Format("getdents64(dir) #%d", i), got, errno, BufferHash(buffer, sizeof(buffer)));
    if (got <= 0) break;
    std::fputs(DescribeDirents(buffer, static_cast<size_t>(got)).c_str(), stdout);
  }
  errno = kErrnoSentinel;
  int64_t got = getdents64(directory_fd, buffer, 8);
  Show("getdents64(dir, 8 bytes)", got, errno);
  errno = kErrnoSentinel;
  got = getdents64(file_fd, buffer, sizeof(buffer));
  Show("getdents64(regular file)", got, errno);
}

int Exercise(const std::string& fixture, const std::string& scratch) {
  int descriptors[10];
  ExerciseOpens(fixture, scratch, descriptors);
  const int small_fd = descriptors[0], medium_fd = descriptors[1], fixture_fd = descriptors[2];
  const int large_fd = descriptors[3], directory_fd = descriptors[4], created_fd = descriptors[5];
  ExerciseReads(small_fd, medium_fd, large_fd);
  ExerciseWrites(created_fd, small_fd);
  Observe("write(tmpfile)", [&] { return write(descriptors[9], "tmp", 3); });
  const int hole_fd = openat(fixture_fd, "hole.bin", O_RDONLY);
  ExerciseSeeks(small_fd, hole_fd);
  ExerciseStats(fixture, small_fd, medium_fd, fixture_fd);
  ExerciseDirectory(directory_fd, small_fd);

  struct stat status;
  for (int i = 5; i < 10; ++i) {
    if (fstat(descriptors[i], &status) == 0) {
      std::printf("scratch fd %d: %s\n", i, DescribeStat(status, false).c_str());
    }
  }
  for (int i = 0; i < 10; ++i) {
    Observe(Format("close(descriptor %d)", i), [&] { return close(descriptors[i]); });
  }
  close(hole_fd);
  Observe("close(-1)", [&] { return close(-1); });
  Observe("close(descriptor 0 again)", [&] { return close(descriptors[0]); });
  for (const char* name : {"created", "created64", "created_at", "created_at64"}) {
    std::printf("%s: %s\n", name, DescribeFileContents(scratch + "/" + name).c_str());
  }
  return 0;
}

// One fortified call that glibc (and so foreactor) must turn into an abort.
int FortifyFailure(const std::string& name, const std::string& directory) {
#if defined(__USE_FORTIFY_LEVEL) && __USE_FORTIFY_LEVEL > 0
  std::fflush(stdout);
  const std::string small = directory + "/small.txt";
  const int fd = open(small.c_str(), O_RDONLY);
  char buffer[16];
  if (name == "read") return static_cast<int>(read(fd, buffer, Length(32)));
  if (name == "pread") return static_cast<int>(pread(fd, buffer, Length(32), 0));
  if (name == "pread64") return static_cast<int>(pread64(fd, buffer, Length(17), 0));
  const std::string created = directory + "/must_not_exist";
  if (name == "open") return open(created.c_str(), Flags(O_CREAT | O_WRONLY));
  if (name == "open64") return open64(created.c_str(), Flags(O_CREAT | O_WRONLY));
  if (name == "openat") return openat(AT_FDCWD, created.c_str(), Flags(O_TMPFILE | O_RDWR));
  if (name == "openat64") return openat64(AT_FDCWD, created.c_str(), Flags(O_CREAT | O_RDWR));
  std::fprintf(stderr, "passthrough: unknown fortified call '%s'\n", name.c_str());
  return 2;
#else
  (void)name;
  (void)directory;
  std::fprintf(stderr, "passthrough: built without _FORTIFY_SOURCE\n");
  return 2;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--fortify-failure") == 0) {
    return FortifyFailure(argv[2], argv[3]);
  }
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s FIXTURE SCRATCH | --fortify-failure NAME DIRECTORY\n", argv[0]);
    return 2;
  }
  return Exercise(argv[1], argv[2]);
}
