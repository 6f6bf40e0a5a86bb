// Tests of DirectReads: a cold, aligned range of a regular file gets a
// descriptor of our own, high, close-on-exec, opened O_DIRECT on the same
// file, which reads the file's bytes, and so does a range with a few clean
// cached pages in a mostly cold file; ranges of a mostly cached file,
// dirty ranges, short or misaligned reads, files opened O_DIRECT and files
// of other file systems stay on the program's descriptor; a number reused for another file never
// reaches the first one's descriptor; CloseAll() closes every descriptor.
#include "runtime/direct_reads.h"

#include <fcntl.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/high_descriptors.h"
#include "engine/test_files.h"
#include "gtest/gtest.h"
#include "runtime/file_kind_cache.h"
#include "runtime/pages_cached.h"

namespace foreactor {
namespace {

constexpr uint64_t kChunk = 128 << 10;
constexpr uint64_t kFileBytes = 8 * kChunk;

// A page-aligned buffer of `size` bytes, freed with the test.
struct AlignedBuffer {
  explicit AlignedBuffer(size_t size) { EXPECT_EQ(posix_memalign(&data, 4096, size), 0); }
  ~AlignedBuffer() { free(data); }
  char* bytes() const { return static_cast<char*>(data); }
  void* data = nullptr;
};

class DirectReadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    fd_ = OpenCold("data");
    ASSERT_GE(fd_, 0);
    // Where the file system takes no direct reads (a tmpfs TMPDIR), there
    // is nothing to test.
    struct statfs filesystem {};
    ASSERT_EQ(fstatfs(fd_, &filesystem), 0);
    if (!TakesDirectReads(filesystem.f_type)) {
      GTEST_SKIP() << "TMPDIR's file system is not one direct reads are used on";
    }
    uint64_t cached = 1, pages = 0;
    if (CountCachedPages(fd_, 0, kFileBytes, &cached, &pages) != 0) {
      GTEST_SKIP() << "the kernel has no cachestat(2)";
    }
    ASSERT_EQ(cached, 0u) << "the file's pages could not be dropped from the page cache";
  }
  void TearDown() override {
    if (fd_ >= 0) close(fd_);
  }

  // Writes `name` with pattern bytes, drops its pages from the page cache,
  // and opens it read-only.
  int OpenCold(const std::string& name) {
    if (!temp_.WritePatternFile(name, kFileBytes)) return -1;
    const int fd = open(temp_.Path(name).c_str(), O_RDONLY);
    if (fd < 0) return -1;
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    return fd;
  }

  FileKindCache::Kind KindOf(int fd) {
    FileKindCache kinds;
    return kinds.Lookup(fd);
  }

  testing::TempDir temp_;
  int fd_ = -1;
  DirectReads direct_;
  AlignedBuffer buffer_{kChunk + 4096};
};

TEST_F(DirectReadsTest, AColdAlignedRangeGetsADirectDescriptorThatReadsTheFile) {
  const int descriptor = direct_.DescriptorFor(fd_, KindOf(fd_), kChunk, kChunk, buffer_.data);
  ASSERT_GE(descriptor, 0);
  EXPECT_NE(descriptor, fd_);
  EXPECT_GE(descriptor, HighDescriptorFloor(HighDescriptorCeiling()))
      << "out of the program's way, above the numbers it gets";
  const int flags = fcntl(descriptor, F_GETFL);
  EXPECT_EQ(flags & O_ACCMODE, O_RDONLY);
  EXPECT_NE(flags & O_DIRECT, 0);
  EXPECT_NE(fcntl(descriptor, F_GETFD) & FD_CLOEXEC, 0);

  ASSERT_EQ(pread(descriptor, buffer_.data, kChunk, static_cast<off_t>(kChunk)),
            static_cast<ssize_t>(kChunk));
  for (uint64_t i = 0; i < kChunk; ++i) {
    ASSERT_EQ(buffer_.bytes()[i], testing::PatternByte(kChunk + i)) << "byte " << i;
  }
  uint64_t cached = 1, pages = 0;
  ASSERT_EQ(CountCachedPages(fd_, kChunk, kChunk, &cached, &pages), 0);
  EXPECT_EQ(cached, 0u) << "the read went past the page cache";

  // The next range of the same file uses the same descriptor.
  EXPECT_EQ(direct_.DescriptorFor(fd_, KindOf(fd_), 2 * kChunk, kChunk, buffer_.data), descriptor);
  EXPECT_EQ(direct_.open_descriptors(), 1);
}

// The program's reads on a descriptor opened O_NOATIME leave the access
// time alone: so must ours.
TEST_F(DirectReadsTest, ADescriptorOpenedWithoutAccessTimesGetsOneOpenedSo) {
  const int quiet = open(temp_.Path("data").c_str(), O_RDONLY | O_NOATIME);
  ASSERT_GE(quiet, 0) << "the test owns the file";
  const int descriptor = direct_.DescriptorFor(quiet, KindOf(quiet), 0, kChunk, buffer_.data);
  ASSERT_GE(descriptor, 0);
  EXPECT_NE(fcntl(descriptor, F_GETFL) & O_NOATIME, 0);
  direct_.CloseAll();
  const int plain = direct_.DescriptorFor(fd_, KindOf(fd_), 0, kChunk, buffer_.data);
  ASSERT_GE(plain, 0);
  EXPECT_EQ(fcntl(plain, F_GETFL) & O_NOATIME, 0);
  close(quiet);
}

TEST_F(DirectReadsTest, ACachedRangeOfAMostlyCachedFileStaysOnTheProgramsDescriptor) {
  // Every page from kChunk to the end of the file in the page cache.
  for (uint64_t offset = kChunk; offset < kFileBytes; offset += kChunk) {
    ASSERT_EQ(pread(fd_, buffer_.data, kChunk, static_cast<off_t>(offset)),
              static_cast<ssize_t>(kChunk));
  }
  EXPECT_EQ(direct_.DescriptorFor(fd_, KindOf(fd_), kChunk, kChunk, buffer_.data), -1);
  EXPECT_EQ(direct_.DescriptorFor(fd_, KindOf(fd_), 6 * kChunk, kChunk, buffer_.data), -1);
}

// A stream past the cache: the few clean pages the kernel read ahead of a
// buffered read are read direct too while the file ahead is mostly cold
// (and the bytes are the file's).
TEST_F(DirectReadsTest, CleanCachedPagesOfAMostlyColdFileAreReadDirectToo) {
  const int reader = open(temp_.Path("data").c_str(), O_RDONLY);
  ASSERT_GE(reader, 0);
  ASSERT_EQ(posix_fadvise(reader, 0, 0, POSIX_FADV_RANDOM), 0);  // only the page read
  char byte = 0;
  ASSERT_EQ(pread(reader, &byte, 1, static_cast<off_t>(kChunk + 8192)), 1);
  close(reader);
  uint64_t cached = 0, pages = 0;
  ASSERT_EQ(CountCachedPages(fd_, kChunk, kChunk, &cached, &pages), 0);
  ASSERT_GT(cached, 0u);
  ASSERT_EQ(CountCachedPages(fd_, kChunk, kFileBytes - kChunk, &cached, &pages), 0);
  ASSERT_LT(2 * cached, pages) << "the file ahead is mostly cold";

  const int descriptor = direct_.DescriptorFor(fd_, KindOf(fd_), kChunk, kChunk, buffer_.data);
  ASSERT_GE(descriptor, 0);
  ASSERT_EQ(pread(descriptor, buffer_.data, kChunk, static_cast<off_t>(kChunk)),
            static_cast<ssize_t>(kChunk));
  for (uint64_t i = 0; i < kChunk; ++i) {
    ASSERT_EQ(buffer_.bytes()[i], testing::PatternByte(kChunk + i)) << "byte " << i;
  }
}

// The stream rule's estimate of the file ahead holds for the file's next
// kStreamRecheckBytes: made once for them, not once a read (a cachestat(2)
// of the whole span cost more than a hot 128 KiB chunk's copy).  The file
// here is larger than the samples, so the estimate is sampled.
TEST_F(DirectReadsTest, TheStreamEstimateHoldsForTheFilesNextRecheckBytes) {
  constexpr uint64_t kLargeBytes = 2 * DirectReads::kStreamRecheckBytes + 8 * kChunk;
  static_assert(kLargeBytes > DirectReads::kStreamSamples * DirectReads::kStreamSampleBytes);
  ASSERT_TRUE(temp_.WritePatternFile("large", kLargeBytes));
  const int fd = open(temp_.Path("large").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  fdatasync(fd);
  ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0);  // only the pages read
  char byte = 0;
  ASSERT_EQ(pread(fd, &byte, 1, static_cast<off_t>(kChunk)), 1);
  // Mostly cold ahead: the cached page's chunk goes direct.
  EXPECT_GE(direct_.DescriptorFor(fd, KindOf(fd), kChunk, kChunk, buffer_.data), 0);

  // Now every page is cached, clean.
  AlignedBuffer whole(kLargeBytes);
  ASSERT_EQ(pread(fd, whole.data, kLargeBytes, 0), static_cast<ssize_t>(kLargeBytes));
  uint64_t cached = 0, pages = 0;
  ASSERT_EQ(CountCachedPages(fd, 0, kLargeBytes, &cached, &pages), 0);
  if (cached < pages) {
    close(fd);
    GTEST_SKIP() << "the file could not be cached whole";
  }
  // Within the estimate's bytes it still holds: a clean cached chunk goes
  // direct as in the stream it saw.
  EXPECT_GE(direct_.DescriptorFor(fd, KindOf(fd), 2 * kChunk, kChunk, buffer_.data), 0);
  // Past them a new estimate finds the file cached.
  EXPECT_EQ(direct_.DescriptorFor(fd, KindOf(fd), kChunk + DirectReads::kStreamRecheckBytes, kChunk,
                                  buffer_.data),
            -1);
  close(fd);
}

// A dirty page keeps its range on the program's descriptor: the kernel
// would write it back before reading past the cache.
TEST_F(DirectReadsTest, ARangeWithADirtyPageStaysOnTheProgramsDescriptor) {
  const int writable = open(temp_.Path("data").c_str(), O_WRONLY);
  ASSERT_GE(writable, 0);
  ASSERT_EQ(pwrite(writable, "x", 1, static_cast<off_t>(6 * kChunk)), 1);
  close(writable);
  EXPECT_EQ(direct_.DescriptorFor(fd_, KindOf(fd_), 6 * kChunk, kChunk, buffer_.data), -1);
  uint64_t cached = 1, pages = 0;
  ASSERT_EQ(CountCachedPages(fd_, 4 * kChunk, kChunk, &cached, &pages), 0);
  if (cached == 0) {
    EXPECT_GE(direct_.DescriptorFor(fd_, KindOf(fd_), 4 * kChunk, kChunk, buffer_.data), 0)
        << "a cold range of the same file still goes direct";
  }
}

TEST_F(DirectReadsTest, ShortOrMisalignedReadsStayOnTheProgramsDescriptor) {
  const FileKindCache::Kind kind = KindOf(fd_);
  EXPECT_EQ(direct_.DescriptorFor(fd_, kind, 0, DirectReads::kMinLength / 2, buffer_.data), -1);
  EXPECT_EQ(direct_.DescriptorFor(fd_, kind, 100, kChunk, buffer_.data), -1);
  EXPECT_EQ(direct_.DescriptorFor(fd_, kind, 0, kChunk + 100, buffer_.data), -1);
  EXPECT_EQ(direct_.DescriptorFor(fd_, kind, 0, kChunk, buffer_.bytes() + 1), -1);
  EXPECT_GE(direct_.DescriptorFor(fd_, kind, 0, kChunk, buffer_.data), 0);
}

TEST_F(DirectReadsTest, FilesOpenedDirectAndOtherKindsOfFileAreLeftAlone) {
  FileKindCache::Kind kind = KindOf(fd_);
  kind.direct = true;
  EXPECT_EQ(direct_.DescriptorFor(fd_, kind, 0, kChunk, buffer_.data), -1);
  const int directory = open(temp_.path().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(directory, 0);
  EXPECT_EQ(direct_.DescriptorFor(directory, KindOf(directory), 0, kChunk, buffer_.data), -1);
  close(directory);
  const int pipe_ends[2] = {-1, -1};
  ASSERT_EQ(pipe(const_cast<int*>(pipe_ends)), 0);
  EXPECT_EQ(direct_.DescriptorFor(pipe_ends[0], KindOf(pipe_ends[0]), 0, kChunk, buffer_.data), -1);
  close(pipe_ends[0]);
  close(pipe_ends[1]);
  EXPECT_EQ(direct_.open_descriptors(), 0);
}

TEST_F(DirectReadsTest, FilesOfFileSystemsWithoutDirectReadsAreLeftAlone) {
  struct statfs filesystem {};
  if (statfs("/dev/shm", &filesystem) != 0 || filesystem.f_type != 0x01021994) {
    GTEST_SKIP() << "no tmpfs at /dev/shm";
  }
  char path[] = "/dev/shm/foreactor_direct_reads_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(kFileBytes)), 0);
  EXPECT_EQ(direct_.DescriptorFor(fd, KindOf(fd), 0, kChunk, buffer_.data), -1);
  close(fd);
  EXPECT_EQ(direct_.open_descriptors(), 0);
}

TEST_F(DirectReadsTest, ANumberTheProgramReusesForAnotherFileGetsThatFilesDescriptor) {
  const int first = direct_.DescriptorFor(fd_, KindOf(fd_), 0, kChunk, buffer_.data);
  ASSERT_GE(first, 0);
  // The program closes its descriptor and opens another file, which gets
  // the same number.
  const int number = fd_;
  close(fd_);
  fd_ = -1;
  ASSERT_TRUE(temp_.WritePatternFile("other", kFileBytes));
  const int writable = open(temp_.Path("other").c_str(), O_WRONLY);
  ASSERT_GE(writable, 0);
  const std::vector<char> other(kFileBytes, 'o');
  ASSERT_EQ(pwrite(writable, other.data(), other.size(), 0), static_cast<ssize_t>(other.size()));
  ASSERT_EQ(fdatasync(writable), 0);
  close(writable);
  const int reopened = open(temp_.Path("other").c_str(), O_RDONLY);
  ASSERT_EQ(reopened, number);
  fd_ = reopened;
  posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);

  const int second = direct_.DescriptorFor(fd_, KindOf(fd_), 0, kChunk, buffer_.data);
  ASSERT_GE(second, 0);
  EXPECT_NE(second, first);
  ASSERT_EQ(pread(second, buffer_.data, kChunk, 0), static_cast<ssize_t>(kChunk));
  EXPECT_EQ(buffer_.bytes()[0], 'o');
  EXPECT_EQ(buffer_.bytes()[kChunk - 1], 'o');
}

TEST_F(DirectReadsTest, CloseAllClosesEveryDescriptor) {
  const int descriptor = direct_.DescriptorFor(fd_, KindOf(fd_), 0, kChunk, buffer_.data);
  ASSERT_GE(descriptor, 0);
  direct_.CloseAll();
  EXPECT_EQ(direct_.open_descriptors(), 0);
  errno = 0;
  EXPECT_EQ(fcntl(descriptor, F_GETFD), -1);
  EXPECT_EQ(errno, EBADF);
  // Asked again, the file is opened again.
  EXPECT_GE(direct_.DescriptorFor(fd_, KindOf(fd_), 0, kChunk, buffer_.data), 0);
}

}  // namespace
}  // namespace foreactor
