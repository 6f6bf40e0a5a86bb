// Tests of foreactor_scope_start_read() (foreactor::Graph::StartRead),
// foreactor_scope_read_started() (Graph::ReadStarted: the range as pread(2)
// reads it, counted as polled or asleep) and foreactor_scope_starts_reads()
// (Graph::StartsReads), which says whether it would start anything: a
// cold range it starts comes into the page cache without the caller reading
// it, and is counted in the graph's statistics; it refuses, doing nothing,
// where the graph's scopes issue nothing early (check mode, depth 0, the
// sync engine, page-cache awareness off, foreactor off) and for ranges
// readahead(2) cannot start (a pipe, a closed descriptor, an empty or
// overflowing range), leaving errno as it was.
#include "foreactor/foreactor.hpp"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "config/settings.h"
#include "runtime/lettered_file.h"
#include "runtime/statistics_json.h"

namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kFilePages = 64;

struct ReadState {
  int fd;
};

// A graph of one pread of the file's first page (its scopes are never
// entered: the start is asked for before a scope, as a plugin plans).
foreactor::Graph<ReadState> BuildOneRead(const char* name) {
  foreactor::GraphBuilder<ReadState> builder(name);
  auto read = builder.Syscall("read", FOREACTOR_CALL_PREAD,
                              [](ReadState& state, const foreactor::Visit&, foreactor_call& call) {
                                call = foreactor::Pread(state.fd, kPage, 0);
                                return FOREACTOR_READY;
                              });
  builder.start().Then(read).Then(builder.end());
  return builder.Build();
}

class ScopeStartReadTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("FOREACTOR", "1", 1);
    setenv("FOREACTOR_ENGINE", "io_uring", 1);
    setenv("FOREACTOR_DEPTH", "auto", 1);
    setenv("FOREACTOR_CHECK_start_check", "1", 1);
    setenv("FOREACTOR_DEPTH_start_depth0", "0", 1);
    setenv("FOREACTOR_ENGINE_start_sync", "sync", 1);
    setenv("FOREACTOR_DEPTH_start_sync", "4", 1);
    setenv("FOREACTOR_PAGE_CACHE_start_unaware", "0", 1);
    setenv("FOREACTOR_POLL_US_start_asleep", "0", 1);
    foreactor::ReloadSettingsForTesting();
  }
  static void TearDownTestSuite() {
    for (const char* name :
         {"FOREACTOR", "FOREACTOR_ENGINE", "FOREACTOR_DEPTH", "FOREACTOR_CHECK_start_check",
          "FOREACTOR_DEPTH_start_depth0", "FOREACTOR_ENGINE_start_sync",
          "FOREACTOR_DEPTH_start_sync", "FOREACTOR_PAGE_CACHE_start_unaware",
          "FOREACTOR_POLL_US_start_asleep"}) {
      unsetenv(name);
    }
    foreactor::ReloadSettingsForTesting();
  }

  void SetUp() override {
    fd_ = foreactor::MakeLetteredFile(kFilePages, kPage);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override {
    if (fd_ >= 0) close(fd_);
  }

  // Pages of [offset, offset + length) the page cache holds; UINT64_MAX
  // when the kernel cannot tell.
  uint64_t CachedPages(uint64_t offset, uint64_t length) {
    uint64_t cached = 0, pages = 0;
    if (foreactor_pages_cached(fd_, offset, length, &cached, &pages) != 0) return UINT64_MAX;
    return cached;
  }

  bool DropFile() { return foreactor::DropFromPageCache(fd_, 0, kFilePages * kPage); }

  // foreactor_scope_start_read of graph `graph_name`'s first page range,
  // checking that a refusal leaves errno as it was and the file uncached.
  void ExpectRefused(const char* graph_name) {
    auto graph = BuildOneRead(graph_name);
    ASSERT_TRUE(graph.valid());
    const bool dropped = DropFile();
    errno = 1234;
    EXPECT_FALSE(graph.StartsReads()) << graph_name;
    EXPECT_EQ(foreactor_scope_start_read(graph.handle(), fd_, 0, 8 * kPage), -1) << graph_name;
    EXPECT_EQ(errno, 1234);
    if (dropped) {
      EXPECT_EQ(CachedPages(0, 8 * kPage), 0u) << graph_name << " started a read";
    }
    EXPECT_EQ(foreactor::StatisticsCounter(graph_name, "reads_started_in_plans"), 0u);
  }

  int fd_ = -1;
};

TEST_F(ScopeStartReadTest, AColdRangeComesIntoThePageCacheAndIsCounted) {
  auto graph = BuildOneRead("start_auto");
  ASSERT_TRUE(graph.valid());
  if (!DropFile()) GTEST_SKIP() << "the page cache keeps this file's pages, or no cachestat(2)";
  errno = 1234;
  EXPECT_TRUE(graph.StartsReads());
  ASSERT_TRUE(graph.StartRead(fd_, 8 * kPage, 8 * kPage));
  EXPECT_EQ(errno, 1234);
  // The device reads the range in while the caller goes on; nothing reads
  // it here.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (CachedPages(8 * kPage, 8 * kPage) < 8 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(CachedPages(8 * kPage, 8 * kPage), 8u);
  EXPECT_EQ(CachedPages(0, 8 * kPage), 0u) << "only the range asked for is read";
  EXPECT_EQ(foreactor::StatisticsCounter("start_auto", "reads_started_in_plans"), 1u);
  // A range the page cache holds already: started (the kernel leaves it).
  EXPECT_TRUE(graph.StartRead(fd_, 8 * kPage, 8 * kPage));
  EXPECT_EQ(foreactor::StatisticsCounter("start_auto", "reads_started_in_plans"), 2u);
}

TEST_F(ScopeStartReadTest, AStartedRangeIsReadAsPreadReadsItAndCounted) {
  auto graph = BuildOneRead("start_polled");
  ASSERT_TRUE(graph.valid());
  if (!DropFile()) GTEST_SKIP() << "the page cache keeps this file's pages, or no cachestat(2)";
  ASSERT_TRUE(graph.StartRead(fd_, 4 * kPage, 2 * kPage));
  std::string buffer(2 * kPage, '\0');
  errno = 1234;
  ASSERT_EQ(graph.ReadStarted(fd_, buffer.data(), buffer.size(), 4 * kPage), 2 * kPage);
  EXPECT_EQ(buffer, std::string(kPage, foreactor::BlockLetter(4)) +
                        std::string(kPage, foreactor::BlockLetter(5)));
  EXPECT_EQ(errno, 1234);
  // Polled for, or waited for in pread(2) when the device took longer than
  // the budget: one of the two.
  EXPECT_EQ(foreactor::StatisticsCounter("start_polled", "started_reads_polled") +
                foreactor::StatisticsCounter("start_polled", "started_reads_asleep"),
            1u);
  // What pread(2) refuses, it refuses with pread's errno.
  EXPECT_EQ(graph.ReadStarted(-1, buffer.data(), kPage, 0), -1);
  EXPECT_EQ(errno, EBADF);
  errno = 1234;
  EXPECT_EQ(graph.ReadStarted(fd_, buffer.data(), kPage, -4096), -1);
  EXPECT_EQ(errno, EINVAL);
}

TEST_F(ScopeStartReadTest, APollBudgetOfZeroWaitsInPread) {
  auto graph = BuildOneRead("start_asleep");
  ASSERT_TRUE(graph.valid());
  std::string buffer(kPage, '\0');
  ASSERT_EQ(graph.ReadStarted(fd_, buffer.data(), buffer.size(), 7 * kPage), kPage);
  EXPECT_EQ(buffer, std::string(kPage, foreactor::BlockLetter(7)));
  EXPECT_EQ(foreactor::StatisticsCounter("start_asleep", "started_reads_polled"), 0u);
  EXPECT_EQ(foreactor::StatisticsCounter("start_asleep", "started_reads_asleep"), 1u);
}

TEST_F(ScopeStartReadTest, CheckModeStartsNothing) { ExpectRefused("start_check"); }

TEST_F(ScopeStartReadTest, DepthZeroStartsNothing) { ExpectRefused("start_depth0"); }

TEST_F(ScopeStartReadTest, TheSyncEngineStartsNothing) { ExpectRefused("start_sync"); }

TEST_F(ScopeStartReadTest, WithoutPageCacheAwarenessTheScopeIssuesTheReadsItself) {
  ExpectRefused("start_unaware");
}

TEST_F(ScopeStartReadTest, RangesReadaheadCannotStartAreRefused) {
  auto graph = BuildOneRead("start_refused");
  ASSERT_TRUE(graph.valid());
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  errno = 1234;
  EXPECT_EQ(foreactor_scope_start_read(graph.handle(), pipe_ends[0], 0, kPage), -1);
  EXPECT_EQ(errno, 1234);
  close(pipe_ends[0]);
  close(pipe_ends[1]);
  EXPECT_EQ(foreactor_scope_start_read(graph.handle(), pipe_ends[0], 0, kPage), -1);  // closed
  EXPECT_EQ(foreactor_scope_start_read(graph.handle(), fd_, 0, 0), -1);
  EXPECT_EQ(foreactor_scope_start_read(graph.handle(), fd_, UINT64_MAX - 1, 2 * kPage), -1);
  EXPECT_EQ(foreactor_scope_start_read(graph.handle(), fd_, uint64_t{1} << 63, kPage), -1);
  EXPECT_EQ(foreactor_scope_start_read(nullptr, fd_, 0, kPage), -1);
  EXPECT_EQ(foreactor_scope_starts_reads(nullptr), 0);
  EXPECT_EQ(errno, 1234);
  EXPECT_EQ(foreactor::StatisticsCounter("start_refused", "reads_started_in_plans"), 0u);
}

TEST(ScopeStartReadOffTest, ForeactorOffStartsNothing) {
  unsetenv("FOREACTOR");
  foreactor::ReloadSettingsForTesting();
  auto graph = BuildOneRead("start_off");
  const int fd = foreactor::MakeLetteredFile(1, kPage);
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(graph.StartsReads());
  EXPECT_FALSE(graph.StartRead(fd, 0, kPage));
  // The program's read is a plain pread(2), counted nowhere.
  std::string buffer(kPage, '\0');
  EXPECT_EQ(graph.ReadStarted(fd, buffer.data(), buffer.size(), 0), kPage);
  EXPECT_EQ(buffer, std::string(kPage, foreactor::BlockLetter(0)));
  close(fd);
}

}  // namespace
