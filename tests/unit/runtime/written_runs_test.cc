// Unit tests of WrittenRuns: which finished bytes write-behind starts, and
// when.
#include "runtime/written_runs.h"

#include <gtest/gtest.h>

#include <vector>

namespace foreactor {
namespace {

constexpr uint64_t kChunk = 64 * 1024;
constexpr int64_t kPage = WrittenRuns::kPageBytes;

using Range = WrittenRuns::Range;

std::vector<Range> Note(WrittenRuns& runs, int fd, int64_t offset, uint64_t length) {
  Range ready[WrittenRuns::kMaxReadyPerNote];
  const int count = runs.Note(fd, offset, length, ready);
  return std::vector<Range>(ready, ready + count);
}

std::vector<Range> Rest(WrittenRuns& runs) {
  std::vector<Range> rest;
  Range range;
  while (runs.TakeRest(&range)) rest.push_back(range);
  return rest;
}

bool Same(const Range& range, int fd, int64_t begin, int64_t end) {
  return range.fd == fd && range.begin == begin && range.end == end;
}

TEST(WrittenRunsTest, SequentialWritesStartOneChunkOnceItIsComplete) {
  WrittenRuns runs(kChunk);
  for (int64_t page = 0; page < 15; ++page) {
    EXPECT_TRUE(Note(runs, 3, page * kPage, kPage).empty()) << "page " << page;
  }
  const std::vector<Range> ready = Note(runs, 3, 15 * kPage, kPage);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_TRUE(Same(ready[0], 3, 0, 16 * kPage));
  // The next chunk starts where the last one ended.
  for (int64_t page = 16; page < 31; ++page)
    EXPECT_TRUE(Note(runs, 3, page * kPage, kPage).empty());
  const std::vector<Range> next = Note(runs, 3, 31 * kPage, kPage);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_TRUE(Same(next[0], 3, 16 * kPage, 32 * kPage));
}

TEST(WrittenRunsTest, TheRestOfEveryRunGoesWhenTheScopeEnds) {
  WrittenRuns runs(kChunk);
  Note(runs, 3, 0, 3 * kPage);
  Note(runs, 5, 100, 50);
  const std::vector<Range> rest = Rest(runs);
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_TRUE(Same(rest[0], 3, 0, 3 * kPage));
  EXPECT_TRUE(Same(rest[1], 5, 100, 150));
  EXPECT_TRUE(Rest(runs).empty()) << "the runs are forgotten";
}

TEST(WrittenRunsTest, AChunkIsCutAtAPageBoundaryAndTheTornPageWaits) {
  WrittenRuns runs(kChunk);
  const std::vector<Range> ready = Note(runs, 3, 0, kChunk + 100);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_TRUE(Same(ready[0], 3, 0, static_cast<int64_t>(kChunk)));
  const std::vector<Range> rest = Rest(runs);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_TRUE(Same(rest[0], 3, static_cast<int64_t>(kChunk), static_cast<int64_t>(kChunk) + 100));
}

TEST(WrittenRunsTest, AShortWriteContinuesTheRunWhereItsBytesEnded) {
  WrittenRuns runs(kChunk);
  Note(runs, 3, 0, 1000);     // asked for 4096, got 1000
  Note(runs, 3, 1000, 3096);  // the program writes the rest
  const std::vector<Range> rest = Rest(runs);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_TRUE(Same(rest[0], 3, 0, 4096));
}

TEST(WrittenRunsTest, AWriteElsewhereHandsOutTheRunItEnds) {
  WrittenRuns runs(kChunk);
  Note(runs, 3, 0, 2 * kPage);
  const std::vector<Range> ready = Note(runs, 3, 10 * kPage, kPage);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_TRUE(Same(ready[0], 3, 0, 2 * kPage));
  const std::vector<Range> rest = Rest(runs);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_TRUE(Same(rest[0], 3, 10 * kPage, 11 * kPage));
}

TEST(WrittenRunsTest, ARewriteOfBytesAlreadyStartedStartsANewRun) {
  WrittenRuns runs(kChunk);
  ASSERT_EQ(Note(runs, 3, 0, kChunk).size(), 1u);
  EXPECT_TRUE(Note(runs, 3, 0, kPage).empty()) << "nothing unstarted is left behind it";
  const std::vector<Range> rest = Rest(runs);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_TRUE(Same(rest[0], 3, 0, kPage));
}

TEST(WrittenRunsTest, AWriteElsewhereThatIsAChunkItselfHandsOutBoth) {
  WrittenRuns runs(kChunk);
  Note(runs, 3, 0, kPage);
  const std::vector<Range> ready = Note(runs, 3, 100 * kPage, kChunk);
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_TRUE(Same(ready[0], 3, 0, kPage));
  EXPECT_TRUE(Same(ready[1], 3, 100 * kPage, 100 * kPage + static_cast<int64_t>(kChunk)));
}

TEST(WrittenRunsTest, DescriptorsHaveRunsOfTheirOwn) {
  WrittenRuns runs(kChunk);
  for (int64_t page = 0; page < 16; ++page) {
    // Interleaved: each descriptor's run stays contiguous.
    const std::vector<Range> three = Note(runs, 3, page * kPage, kPage);
    const std::vector<Range> four = Note(runs, 4, page * kPage, kPage);
    if (page < 15) {
      EXPECT_TRUE(three.empty() && four.empty()) << "page " << page;
    } else {
      ASSERT_EQ(three.size(), 1u);
      ASSERT_EQ(four.size(), 1u);
      EXPECT_TRUE(Same(three[0], 3, 0, 16 * kPage));
      EXPECT_TRUE(Same(four[0], 4, 0, 16 * kPage));
    }
  }
}

TEST(WrittenRunsTest, AFurtherDescriptorReplacesTheOldestRunAndHandsItOut) {
  WrittenRuns runs(kChunk);
  for (int fd = 10; fd < 10 + WrittenRuns::kMaxRuns; ++fd) {
    EXPECT_TRUE(Note(runs, fd, 0, kPage).empty());
  }
  const std::vector<Range> ready = Note(runs, 99, 0, kPage);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_TRUE(Same(ready[0], 10, 0, kPage));
  EXPECT_EQ(Rest(runs).size(), static_cast<size_t>(WrittenRuns::kMaxRuns));
}

TEST(WrittenRunsTest, AClosedDescriptorsRunIsForgottenUnstarted) {
  WrittenRuns runs(kChunk);
  Note(runs, 3, 0, kPage);
  Note(runs, 4, 0, kPage);
  runs.Forget(3);
  const std::vector<Range> rest = Rest(runs);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].fd, 4);
  // The number, reused for another file, starts afresh.
  Note(runs, 3, 50 * kPage, kPage);
  const std::vector<Range> after = Rest(runs);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_TRUE(Same(after[0], 3, 50 * kPage, 51 * kPage));
}

TEST(WrittenRunsTest, NothingIsNotedForEmptyOrImpossibleWrites) {
  WrittenRuns runs(kChunk);
  EXPECT_TRUE(Note(runs, 3, 0, 0).empty());
  EXPECT_TRUE(Note(runs, 3, -1, kPage).empty());
  EXPECT_TRUE(Note(runs, -1, 0, kPage).empty());
  EXPECT_TRUE(Note(runs, 3, INT64_MAX - 10, 100).empty());
  EXPECT_TRUE(Rest(runs).empty());
}

TEST(WrittenRunsTest, AChunkBelowOnePageIsRaisedToAPage) {
  WrittenRuns runs(1);
  EXPECT_TRUE(Note(runs, 3, 0, 100).empty()) << "less than a page waits";
  const std::vector<Range> ready = Note(runs, 3, 100, kPage);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_TRUE(Same(ready[0], 3, 0, kPage));
}

}  // namespace
}  // namespace foreactor
