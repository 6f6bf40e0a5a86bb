// Tests of foreactor_pages_cached(): the count of a range's pages the page
// cache holds, before and after the range is dropped from it and read back;
// the page count of ranges that straddle pages; the refusals.  And of
// foreactor::RangesInCache, which tells a plugin which planned reads the
// page cache holds, remembering ranges found there.
#include "foreactor/foreactor.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/settings.h"
#include "runtime/lettered_file.h"

namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kFilePages = 64;

class PagesCachedTest : public testing::Test {
 protected:
  void SetUp() override {
    fd_ = foreactor::MakeLetteredFile(kFilePages, kPage);
    ASSERT_GE(fd_, 0);
    uint64_t cached = 0, pages = 0;
    if (foreactor_pages_cached(fd_, 0, kPage, &cached, &pages) != 0) {
      GTEST_SKIP() << "the kernel has no cachestat(2)";
    }
  }
  void TearDown() override {
    if (fd_ >= 0) close(fd_);
  }

  bool DropFile() { return foreactor::DropFromPageCache(fd_, 0, kFilePages * kPage); }

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

TEST_F(PagesCachedTest, ARangeFoundCachedIsAnsweredFromMemoryThenAskedAgain) {
  using foreactor::RangesInCache;
  RangesInCache ranges;
  EXPECT_TRUE(ranges.InCache(fd_, kPage, kPage + 5));
  if (!DropFile()) GTEST_SKIP() << "the page cache kept the file (mapped elsewhere?)";
  // Remembered: the kernel is not asked (it would say no).
  for (int answer = 0; answer < RangesInCache::kAnswersPerCheck; ++answer) {
    EXPECT_TRUE(ranges.InCache(fd_, kPage, kPage + 5)) << answer;
  }
  // Then it is asked again, and the range is forgotten.
  EXPECT_FALSE(ranges.InCache(fd_, kPage, kPage + 5));
  EXPECT_FALSE(ranges.InCache(fd_, kPage, kPage + 5));
  // Another range was never remembered.
  EXPECT_FALSE(ranges.InCache(fd_, 2 * kPage, kPage));
}

// A range not cached is planned however many of the file's other ranges
// were found cached before it.  (The rule per file it replaces left a
// file's next 32 reads out after 4 cached ones, cold or not: in LevelDB,
// those cold blocks were read one after another.)
TEST_F(PagesCachedTest, EachRangeIsAnsweredForItself) {
  foreactor::RangesInCache ranges;
  if (!DropFile()) GTEST_SKIP() << "the page cache kept the file (mapped elsewhere?)";
  posix_fadvise(fd_, 0, 0, POSIX_FADV_RANDOM);  // the pages read alone, no read-ahead
  std::vector<char> buffer(kPage);
  for (uint64_t page = 0; page < 8; ++page) {
    ASSERT_EQ(pread(fd_, buffer.data(), kPage, static_cast<off_t>(page * kPage)),
              static_cast<ssize_t>(kPage));
  }
  for (int round = 0; round < 4; ++round) {
    for (uint64_t page = 0; page < 8; ++page) EXPECT_TRUE(ranges.InCache(fd_, page * kPage, kPage));
  }
  EXPECT_FALSE(ranges.InCache(fd_, 8 * kPage, kPage));
  EXPECT_FALSE(ranges.InCache(fd_, 7 * kPage, 2 * kPage));  // one page of two
  EXPECT_FALSE(ranges.InCache(fd_, 40 * kPage, kPage));
  EXPECT_TRUE(ranges.InCache(fd_, 3 * kPage, kPage));
}

TEST_F(PagesCachedTest, NothingIsRememberedWhenTheKernelCannotTell) {
  foreactor::RangesInCache ranges;
  for (int read = 0; read < 2 * foreactor::RangesInCache::kAnswersPerCheck; ++read) {
    EXPECT_FALSE(ranges.InCache(-1, 0, kPage));
  }
  {
    ScopedSetting on("FOREACTOR", "1");
    ScopedSetting off("FOREACTOR_PAGE_CACHE", "0");
    for (int read = 0; read < 2 * foreactor::RangesInCache::kAnswersPerCheck; ++read) {
      EXPECT_FALSE(ranges.InCache(fd_, 0, kPage));
    }
  }
  // With awareness back, the kernel answers: nothing was remembered above.
  if (!DropFile()) GTEST_SKIP() << "the page cache kept the file (mapped elsewhere?)";
  EXPECT_FALSE(ranges.InCache(fd_, 0, kPage));
}

}  // namespace
