// Tests of foreactor_pages_cached(): the count of a range's pages the page
// cache holds, before and after the range is dropped from it and read back;
// the page count of ranges that straddle pages; the refusals.  And of
// foreactor::FileReadsInCache, which leaves a file's reads out of plans
// while they keep being found in the page cache.
#include "foreactor/foreactor.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/settings.h"

namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kFilePages = 64;

class PagesCachedTest : public testing::Test {
 protected:
  void SetUp() override {
    char path[] = "/tmp/foreactor_pages_cached_XXXXXX";
    fd_ = mkstemp(path);
    ASSERT_GE(fd_, 0);
    unlink(path);
    std::vector<char> data(kFilePages * kPage, 'x');
    ASSERT_EQ(write(fd_, data.data(), data.size()), static_cast<ssize_t>(data.size()));
    ASSERT_EQ(fdatasync(fd_), 0);  // clean pages: POSIX_FADV_DONTNEED drops them
    uint64_t cached = 0, pages = 0;
    if (foreactor_pages_cached(fd_, 0, kPage, &cached, &pages) != 0) {
      GTEST_SKIP() << "the kernel has no cachestat(2)";
    }
  }
  void TearDown() override {
    if (fd_ >= 0) close(fd_);
  }

  // Drops the whole file from the page cache; false when some page stays.
  bool DropFile() {
    posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
    uint64_t cached = 1, pages = 0;
    return foreactor_pages_cached(fd_, 0, kFilePages * kPage, &cached, &pages) == 0 && cached == 0;
  }

  int fd_ = -1;
};

TEST_F(PagesCachedTest, AFileJustWrittenIsHeldWhole) {
  uint64_t cached = 0, pages = 0;
  ASSERT_EQ(foreactor_pages_cached(fd_, 0, kFilePages * kPage, &cached, &pages), 0);
  EXPECT_EQ(pages, kFilePages);
  EXPECT_EQ(cached, kFilePages);
}

TEST_F(PagesCachedTest, DroppedPagesAreNotCountedAndReadPagesAre) {
  if (!DropFile()) GTEST_SKIP() << "the page cache kept the file (mapped elsewhere?)";
  // Read pages 8..15 back, without read-ahead bringing in the others.
  posix_fadvise(fd_, 0, 0, POSIX_FADV_RANDOM);
  std::vector<char> buffer(kPage);
  for (uint64_t page = 8; page < 16; ++page) {
    ASSERT_EQ(pread(fd_, buffer.data(), kPage, static_cast<off_t>(page * kPage)),
              static_cast<ssize_t>(kPage));
  }
  uint64_t cached = 0, pages = 0;
  ASSERT_EQ(foreactor_pages_cached(fd_, 8 * kPage, 8 * kPage, &cached, &pages), 0);
  EXPECT_EQ(pages, 8u);
  EXPECT_EQ(cached, 8u);
  ASSERT_EQ(foreactor_pages_cached(fd_, 32 * kPage, 8 * kPage, &cached, &pages), 0);
  EXPECT_EQ(pages, 8u);
  EXPECT_EQ(cached, 0u);
  ASSERT_EQ(foreactor_pages_cached(fd_, 0, kFilePages * kPage, &cached, &pages), 0);
  EXPECT_EQ(pages, kFilePages);
  EXPECT_GE(cached, 8u);
  EXPECT_LT(cached, kFilePages);
}

TEST_F(PagesCachedTest, ARangeCountsEveryPageItTouches) {
  uint64_t cached = 0, pages = 0;
  // 2 bytes across a page boundary: two pages.
  ASSERT_EQ(foreactor_pages_cached(fd_, kPage - 1, 2, &cached, &pages), 0);
  EXPECT_EQ(pages, 2u);
  EXPECT_EQ(cached, 2u);
  // One byte: one page.
  ASSERT_EQ(foreactor_pages_cached(fd_, 5 * kPage + 7, 1, &cached, &pages), 0);
  EXPECT_EQ(pages, 1u);
}

TEST_F(PagesCachedTest, PagesPastTheEndOfTheFileAreNotHeld) {
  uint64_t cached = 0, pages = 0;
  ASSERT_EQ(foreactor_pages_cached(fd_, (kFilePages - 2) * kPage, 4 * kPage, &cached, &pages), 0);
  EXPECT_EQ(pages, 4u);
  EXPECT_EQ(cached, 2u);
}

TEST_F(PagesCachedTest, RefusesWhatItCannotAnswerAndWritesNothing) {
  uint64_t cached = 77, pages = 77;
  EXPECT_EQ(foreactor_pages_cached(fd_, 0, 0, &cached, &pages), -1);
  EXPECT_EQ(foreactor_pages_cached(fd_, UINT64_MAX - 10, 100, &cached, &pages), -1);
  EXPECT_EQ(foreactor_pages_cached(-1, 0, kPage, &cached, &pages), -1);
  EXPECT_EQ(cached, 77u);
  EXPECT_EQ(pages, 77u);
}

// Sets a variable and reloads the settings; restores both when it ends.
class ScopedSetting {
 public:
  ScopedSetting(const char* name, const char* value) : name_(name) {
    const char* old = getenv(name);
    if (old != nullptr) old_ = old;
    had_ = old != nullptr;
    setenv(name, value, 1);
    foreactor::ReloadSettingsForTesting();
  }
  ~ScopedSetting() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
    foreactor::ReloadSettingsForTesting();
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST_F(PagesCachedTest, NoAnswerWithPageCacheAwarenessOffOrInCheckMode) {
  uint64_t cached = 77, pages = 77;
  ScopedSetting on("FOREACTOR", "1");  // (settings are read only when on)
  {
    ScopedSetting off("FOREACTOR_PAGE_CACHE", "0");
    EXPECT_EQ(foreactor_pages_cached(fd_, 0, kPage, &cached, &pages), -1);
  }
  {
    ScopedSetting check("FOREACTOR_CHECK", "1");
    EXPECT_EQ(foreactor_pages_cached(fd_, 0, kPage, &cached, &pages), -1);
  }
  EXPECT_EQ(cached, 77u);
  EXPECT_EQ(foreactor_pages_cached(fd_, 0, kPage, &cached, &pages), 0);
}

TEST_F(PagesCachedTest, ReadsFoundInCacheAreLeftOutUnaskedAfterARun) {
  using foreactor::FileReadsInCache;
  FileReadsInCache reads;
  // Asked until kHitsBeforeLeavingOut ranges in a row were cached.
  for (int hit = 0; hit < FileReadsInCache::kHitsBeforeLeavingOut; ++hit) {
    EXPECT_FALSE(reads.LeaveOut());
    EXPECT_TRUE(reads.InCache(fd_, static_cast<uint64_t>(hit) * kPage, kPage + 5));
  }
  for (int left_out = 0; left_out < FileReadsInCache::kLeftOutPerCheck; ++left_out) {
    EXPECT_TRUE(reads.LeaveOut());
  }
  // Then one is checked again.
  EXPECT_FALSE(reads.LeaveOut());
}

TEST_F(PagesCachedTest, ARangeNotCachedEndsTheRun) {
  using foreactor::FileReadsInCache;
  FileReadsInCache reads;
  if (!DropFile()) GTEST_SKIP() << "the page cache kept the file (mapped elsewhere?)";
  posix_fadvise(fd_, 0, 0, POSIX_FADV_RANDOM);  // page 0 alone, no read-ahead
  std::vector<char> buffer(kPage);
  ASSERT_EQ(pread(fd_, buffer.data(), kPage, 0), static_cast<ssize_t>(kPage));
  for (int hit = 0; hit + 1 < FileReadsInCache::kHitsBeforeLeavingOut; ++hit) {
    EXPECT_TRUE(reads.InCache(fd_, 0, kPage));
  }
  // A range with a page not cached: planned, and the count starts over.
  EXPECT_FALSE(reads.InCache(fd_, 0, 2 * kPage));
  EXPECT_TRUE(reads.InCache(fd_, 0, kPage));
  EXPECT_FALSE(reads.LeaveOut());
}

TEST_F(PagesCachedTest, EveryReadIsPlannedWhenTheKernelCannotTell) {
  foreactor::FileReadsInCache reads;
  for (int read = 0; read < 2 * foreactor::FileReadsInCache::kHitsBeforeLeavingOut; ++read) {
    EXPECT_FALSE(reads.LeaveOut());
    EXPECT_FALSE(reads.InCache(-1, 0, kPage));
  }
  ScopedSetting on("FOREACTOR", "1");
  ScopedSetting off("FOREACTOR_PAGE_CACHE", "0");
  for (int read = 0; read < 2 * foreactor::FileReadsInCache::kHitsBeforeLeavingOut; ++read) {
    EXPECT_FALSE(reads.LeaveOut());
    EXPECT_FALSE(reads.InCache(fd_, 0, kPage));
  }
}

}  // namespace
