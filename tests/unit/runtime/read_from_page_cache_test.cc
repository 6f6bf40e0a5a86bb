// Tests of foreactor::ReadFromPageCache(): a read of a cached range is
// pread(2)'s answer; a range wholly or partly dropped from the page cache
// would wait; the end of the file and a bad descriptor; errno is kept.
#include "foreactor/foreactor.hpp"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/lettered_file.h"

namespace {

using foreactor::BlockLetter;
using foreactor::MakeLetteredFile;

constexpr size_t kPage = 4096;
constexpr size_t kFilePages = 16;

class ReadFromPageCacheTest : public testing::Test {
 protected:
  void SetUp() override {
    fd_ = MakeLetteredFile(kFilePages, kPage);  // page i holds BlockLetter(i)
    ASSERT_GE(fd_, 0);
    char byte;
    bool would_wait = false;
    if (foreactor::ReadFromPageCache(fd_, &byte, 1, 0, &would_wait) != 1) {
      GTEST_SKIP() << "the file system refuses RWF_NOWAIT reads";
    }
  }
  void TearDown() override {
    if (fd_ >= 0) close(fd_);
  }

  bool DropFile() { return foreactor::DropFromPageCache(fd_, 0, kFilePages * kPage); }

  int fd_ = -1;
};

TEST_F(ReadFromPageCacheTest, ACachedRangeIsReadWhole) {
  std::vector<char> buffer(2 * kPage);
  bool would_wait = true;
  errno = 1234;
  EXPECT_EQ(foreactor::ReadFromPageCache(fd_, buffer.data(), buffer.size(), 3 * kPage, &would_wait),
            static_cast<ssize_t>(buffer.size()));
  EXPECT_FALSE(would_wait);
  EXPECT_EQ(errno, 1234);
  EXPECT_EQ(buffer.front(), BlockLetter(3));
  EXPECT_EQ(buffer.back(), BlockLetter(4));
}

TEST_F(ReadFromPageCacheTest, ADroppedRangeWouldWaitAndKeepsErrno) {
  if (!DropFile()) GTEST_SKIP() << "the page cache kept the file";
  std::vector<char> buffer(kPage);
  bool would_wait = false;
  errno = 1234;
  EXPECT_EQ(foreactor::ReadFromPageCache(fd_, buffer.data(), buffer.size(), 5 * kPage, &would_wait),
            -1);
  EXPECT_TRUE(would_wait);
  EXPECT_EQ(errno, 1234);
}

TEST_F(ReadFromPageCacheTest, ARangeCachedInPartReadsThatPartAndWouldWait) {
  // Pages 4 and 5 read back into an emptied cache, with no read-ahead.
  if (!DropFile()) GTEST_SKIP() << "the page cache kept the file";
  ASSERT_EQ(posix_fadvise(fd_, 0, 0, POSIX_FADV_RANDOM), 0);
  std::vector<char> buffer(4 * kPage);
  ASSERT_EQ(pread(fd_, buffer.data(), 2 * kPage, 4 * kPage), static_cast<ssize_t>(2 * kPage));
  uint64_t cached = 0, pages = 0;
  ASSERT_EQ(foreactor_pages_cached(fd_, 6 * kPage, kPage, &cached, &pages), 0);
  if (cached != 0) GTEST_SKIP() << "the kernel cached page 6 with pages 4 and 5";
  buffer.assign(buffer.size(), 0);
  bool would_wait = false;
  const ssize_t bytes =
      foreactor::ReadFromPageCache(fd_, buffer.data(), buffer.size(), 4 * kPage, &would_wait);
  EXPECT_EQ(bytes, static_cast<ssize_t>(2 * kPage));
  EXPECT_TRUE(would_wait);
  EXPECT_EQ(buffer[kPage], BlockLetter(5));
}

TEST_F(ReadFromPageCacheTest, TheEndOfTheFileIsAnAnswer) {
  char buffer[16];
  bool would_wait = true;
  EXPECT_EQ(
      foreactor::ReadFromPageCache(fd_, buffer, sizeof buffer, kFilePages * kPage, &would_wait), 0);
  EXPECT_FALSE(would_wait);
}

TEST_F(ReadFromPageCacheTest, ABadDescriptorCannotTellAndKeepsErrno) {
  char buffer[16];
  bool would_wait = true;
  errno = 1234;
  EXPECT_EQ(foreactor::ReadFromPageCache(-1, buffer, sizeof buffer, 0, &would_wait), -1);
  EXPECT_FALSE(would_wait);
  EXPECT_EQ(errno, 1234);
}

}  // namespace
