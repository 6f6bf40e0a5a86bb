// Tests of CacheFill: it reads its ranges of the program's file into the
// page cache, in order, from a thread whose descriptors the program never
// sees, leaves the program's record locks alone, reads nothing of a file
// that is not the one named, refuses invalid ranges, and stops when told;
// a child after fork() forgets it.
#include "runtime/cache_fill.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "engine/test_files.h"
#include "gtest/gtest.h"
#include "runtime/pages_cached.h"

namespace foreactor {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

class CacheFillTest : public ::testing::Test {
 protected:
  // Opens a file of `mebibytes` MiB, written, on disk and out of the page
  // cache; fills `status_`.
  int ColdFile(uint64_t mebibytes) {
    const int fd = ::open(temp_.Path("data").c_str(), O_CREAT | O_TRUNC | O_RDWR, 0644);
    EXPECT_GE(fd, 0);
    const std::vector<char> bytes(kMiB, 'f');
    for (uint64_t i = 0; i < mebibytes; ++i)
      EXPECT_EQ(::pwrite(fd, bytes.data(), kMiB, static_cast<off_t>(i * kMiB)),
                static_cast<ssize_t>(kMiB));
    EXPECT_EQ(::fsync(fd), 0);
    EXPECT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    EXPECT_EQ(::fstat(fd, &status_), 0);
    return fd;
  }

  // Pages of [offset, offset + length) of `fd` in the page cache; skips the
  // test where the kernel cannot tell (no cachestat(2)).
  uint64_t CachedPages(int fd, uint64_t offset, uint64_t length) {
    uint64_t cached = 0, pages = 0;
    if (CountCachedPages(fd, offset, length, &cached, &pages) != 0) {
      ADD_FAILURE() << "cachestat(2) unavailable";
    }
    return cached;
  }

  bool CachestatWorks(int fd) {
    uint64_t cached = 0, pages = 0;
    return CountCachedPages(fd, 0, 4096, &cached, &pages) == 0;
  }

  testing::TempDir temp_;
  struct stat status_ {};
};

TEST_F(CacheFillTest, ReadsItsRangesIntoThePageCacheInOrder) {
  const int fd = ColdFile(4);
  if (!CachestatWorks(fd)) GTEST_SKIP() << "no cachestat(2)";
  ASSERT_EQ(CachedPages(fd, 0, 4 * kMiB), 0u) << "the file starts cold";
  const CacheFill::Range ranges[] = {{static_cast<int64_t>(kMiB), kMiB},
                                     {static_cast<int64_t>(3 * kMiB), kMiB}};
  CacheFill fill;
  ASSERT_TRUE(fill.Start(fd, status_.st_dev, status_.st_ino, false, ranges, 2));
  EXPECT_TRUE(fill.started());
  fill.WaitFor(1);
  EXPECT_TRUE(RangeCached(fd, kMiB, kMiB));
  EXPECT_TRUE(RangeCached(fd, 3 * kMiB, kMiB));
  // Nothing before the first range: reading ahead never goes backwards.
  EXPECT_EQ(CachedPages(fd, 0, kMiB), 0u);
  fill.Stop();
  EXPECT_FALSE(fill.started());
  EXPECT_EQ(fill.ranges_read(), 2);
  ::close(fd);
}

// The fill's descriptors are in a table of its own: the program's table
// does not change while it runs, and its end closes nothing of the
// program's, whose record lock on the file holds (closing a descriptor of
// the file in the program's table would have released it).  No thread of
// it is left after Stop().
TEST_F(CacheFillTest, LeavesTheProgramsDescriptorsAndRecordLocksAlone) {
  const int fd = ColdFile(2);
  ASSERT_TRUE(testing::LockWholeFile(fd));
  const std::vector<std::string> descriptors = testing::DirectoryEntries("/proc/self/fd");
  const CacheFill::Range ranges[] = {{0, kMiB}, {static_cast<int64_t>(kMiB), kMiB}};
  CacheFill fill;
  ASSERT_TRUE(fill.Start(fd, status_.st_dev, status_.st_ino, false, ranges, 2));
  fill.WaitFor(0);
  EXPECT_EQ(testing::DirectoryEntries("/proc/self/fd"), descriptors);
  fill.WaitFor(1);
  fill.Stop();
  EXPECT_EQ(fill.ranges_read(), 2);
  EXPECT_EQ(testing::DirectoryEntries("/proc/self/fd"), descriptors);
  EXPECT_TRUE(testing::NoThreadNamedWithin("foreactor-fill"));
  EXPECT_TRUE(testing::WriteLockHeld(temp_.Path("data"))) << "the program's record lock went";
  ::close(fd);
}

TEST_F(CacheFillTest, AFileThatIsNotTheOneNamedIsNotRead) {
  const int fd = ColdFile(1);
  if (!CachestatWorks(fd)) GTEST_SKIP() << "no cachestat(2)";
  const CacheFill::Range ranges[] = {{0, kMiB}};
  CacheFill fill;
  ASSERT_TRUE(fill.Start(fd, status_.st_dev, status_.st_ino + 1, false, ranges, 1));
  fill.WaitFor(0);  // returns: the fill ended without it
  fill.Stop();
  EXPECT_EQ(fill.ranges_read(), 0);
  EXPECT_EQ(CachedPages(fd, 0, kMiB), 0u);
  ::close(fd);
}

TEST_F(CacheFillTest, InvalidRangesStartNothing) {
  const int fd = ColdFile(1);
  const CacheFill::Range good[] = {{0, kMiB}};
  const CacheFill::Range negative[] = {{-4096, kMiB}};
  const CacheFill::Range empty[] = {{0, 0}};
  std::vector<CacheFill::Range> too_many(CacheFill::kMaxRanges + 1, CacheFill::Range{0, 4096});
  CacheFill fill;
  EXPECT_FALSE(fill.Start(-1, status_.st_dev, status_.st_ino, false, good, 1));
  EXPECT_FALSE(fill.Start(fd, status_.st_dev, status_.st_ino, false, good, 0));
  EXPECT_FALSE(fill.Start(fd, status_.st_dev, status_.st_ino, false, negative, 1));
  EXPECT_FALSE(fill.Start(fd, status_.st_dev, status_.st_ino, false, empty, 1));
  EXPECT_FALSE(fill.Start(fd, status_.st_dev, status_.st_ino, false, too_many.data(),
                          static_cast<int>(too_many.size())));
  EXPECT_FALSE(fill.started());
  fill.WaitFor(0);  // returns at once
  ::close(fd);
}

// Stop() ends a fill before its last range and joins its thread; a new
// fill may start after it, and Start() stops the one in progress first.
TEST_F(CacheFillTest, StopEndsAFillAndAnotherMayStart) {
  const int fd = ColdFile(CacheFill::kMaxRanges);
  std::vector<CacheFill::Range> ranges;
  for (int i = 0; i < CacheFill::kMaxRanges; ++i)
    ranges.push_back({static_cast<int64_t>(i) * static_cast<int64_t>(kMiB), kMiB});
  CacheFill fill;
  ASSERT_TRUE(
      fill.Start(fd, status_.st_dev, status_.st_ino, false, ranges.data(), CacheFill::kMaxRanges));
  fill.Stop();
  EXPECT_LE(fill.ranges_read(), CacheFill::kMaxRanges);
  fill.WaitFor(CacheFill::kMaxRanges - 1);  // returns: the fill is over
  EXPECT_TRUE(testing::NoThreadNamedWithin("foreactor-fill"));
  ASSERT_TRUE(fill.Start(fd, status_.st_dev, status_.st_ino, false, ranges.data(), 2));
  ASSERT_TRUE(fill.Start(fd, status_.st_dev, status_.st_ino, false, ranges.data(), 1));
  fill.WaitFor(0);
  fill.Stop();
  EXPECT_EQ(fill.ranges_read(), 1);
  EXPECT_TRUE(testing::NoThreadNamedWithin("foreactor-fill"));
  ::close(fd);
}

// A child forked while a fill runs has no such thread: Abandon() makes
// its waits return at once, and it never joins.
TEST_F(CacheFillTest, AChildAbandonsTheFill) {
  const int fd = ColdFile(8);
  std::vector<CacheFill::Range> ranges;
  for (int i = 0; i < 8; ++i)
    ranges.push_back({static_cast<int64_t>(i) * static_cast<int64_t>(kMiB), kMiB});
  CacheFill fill;
  ASSERT_TRUE(fill.Start(fd, status_.st_dev, status_.st_ino, false, ranges.data(), 8));
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    fill.Abandon();
    fill.WaitFor(7);
    fill.Stop();  // nothing to join
    ::_exit(fill.started() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  fill.Stop();
  ::close(fd);
}

}  // namespace
}  // namespace foreactor
