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

// Descriptor `fd` names file (1, fd) unless a test says otherwise.
std::vector<Range> Note(WrittenRuns& runs, int fd, int64_t offset, uint64_t length,
                        WrittenRuns::FileIdentity file = {}) {
  if (file == WrittenRuns::FileIdentity{}) file = {1, static_cast<ino_t>(fd)};
  Range ready[WrittenRuns::kMaxReadyPerNote];
  const int count = runs.Note(fd, file, offset, length, ready);
  return std::vector<Range>(ready, ready + count);
}

// What the end of a scope hands out.
std::vector<Range> Rest(WrittenRuns& runs) {
  std::vector<Range> rest;
  Range range;
  while (runs.TakeTail(&range)) rest.push_back(range);
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

TEST(WrittenRunsTest, TheTailOfARunThatReachedAChunkGoesWhenTheScopeEnds) {
  WrittenRuns runs(kChunk);
  ASSERT_EQ(Note(runs, 3, 0, kChunk).size(), 1u);
  EXPECT_TRUE(Note(runs, 3, kChunk, 3 * kPage).empty());
  Note(runs, 5, 100, 50);
  const std::vector<Range> rest = Rest(runs);
  ASSERT_EQ(rest.size(), 1u) << "the short run of descriptor 5 is left to the kernel";
  EXPECT_TRUE(
      Same(rest[0], 3, static_cast<int64_t>(kChunk), static_cast<int64_t>(kChunk) + 3 * kPage));
  EXPECT_TRUE(Rest(runs).empty()) << "handed out once";
  // The run goes on: the next scope's writes continue it.
  ASSERT_TRUE(Note(runs, 3, static_cast<int64_t>(kChunk) + 3 * kPage, kPage).empty());
  const std::vector<Range> next = Rest(runs);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_TRUE(Same(next[0], 3, static_cast<int64_t>(kChunk) + 3 * kPage,
                   static_cast<int64_t>(kChunk) + 4 * kPage));
}

TEST(WrittenRunsTest, AStreamWrittenABatchPerScopeIsOneRun) {
  WrittenRuns runs(kChunk);
  const uint64_t batch = kChunk / 2;
  EXPECT_TRUE(Note(runs, 3, 0, batch).empty());
  EXPECT_TRUE(Rest(runs).empty()) << "half a chunk waits for the next scope";
  const std::vector<Range> ready = Note(runs, 3, static_cast<int64_t>(batch), batch);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_TRUE(Same(ready[0], 3, 0, static_cast<int64_t>(kChunk)));
  EXPECT_TRUE(Note(runs, 3, static_cast<int64_t>(kChunk), batch).empty());
  const std::vector<Range> tail = Rest(runs);
  ASSERT_EQ(tail.size(), 1u);
  EXPECT_TRUE(Same(tail[0], 3, static_cast<int64_t>(kChunk), static_cast<int64_t>(kChunk + batch)));
}

TEST(WrittenRunsTest, ADescriptorNumberThatNamesAnotherFileStartsAFreshRun) {
  WrittenRuns runs(kChunk);
  const uint64_t half = kChunk / 2;
  EXPECT_TRUE(Note(runs, 3, 0, half, {1, 100}).empty());
  // Closed unseen and reused for file 200: its bytes continue no run.
  EXPECT_TRUE(Note(runs, 3, static_cast<int64_t>(half), half, {1, 200}).empty());
  EXPECT_TRUE(Rest(runs).empty());
  const std::vector<Range> ready = Note(runs, 3, static_cast<int64_t>(kChunk), half, {1, 200});
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_TRUE(Same(ready[0], 3, static_cast<int64_t>(half), static_cast<int64_t>(kChunk + half)));
}

TEST(WrittenRunsTest, ScatteredSmallWritesAreNeverHandedOut) {
  WrittenRuns runs(kChunk);
  // Writes of a few pages here and there, as a program updating a file in
  // place makes them: no run comes near a chunk.
  const int64_t offsets[] = {537, 14655, 13283, 2711, 19356, 2601, 3329, 17933, 452, 5634};
  for (int round = 0; round < 4; ++round) {
    for (const int64_t offset : offsets) {
      EXPECT_TRUE(Note(runs, 3 + round % 2, offset + round * kPage, 4096).empty()) << offset;
    }
  }
  EXPECT_TRUE(Rest(runs).empty());
  // Runs that together hold more than a chunk, none of them one, neither.
  for (int64_t page = 0; page < 3 * static_cast<int64_t>(kChunk) / kPage; page += 2) {
    EXPECT_TRUE(Note(runs, 3, page * kPage, kPage).empty()) << "page " << page;
  }
  EXPECT_TRUE(Rest(runs).empty());
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
  EXPECT_TRUE(Note(runs, 3, 0, 1000).empty());                          // asked for 4096, got 1000
  const std::vector<Range> ready = Note(runs, 3, 1000, kChunk - 1000);  // the program writes on
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_TRUE(Same(ready[0], 3, 0, static_cast<int64_t>(kChunk)));
}

TEST(WrittenRunsTest, AWriteElsewhereHandsOutTheTailOfTheRunItEnds) {
  WrittenRuns runs(kChunk);
  ASSERT_EQ(Note(runs, 3, 0, kChunk).size(), 1u);
  EXPECT_TRUE(Note(runs, 3, kChunk, 2 * kPage).empty());
  const std::vector<Range> ready = Note(runs, 3, 100 * kPage, kPage);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_TRUE(
      Same(ready[0], 3, static_cast<int64_t>(kChunk), static_cast<int64_t>(kChunk) + 2 * kPage));
  EXPECT_TRUE(Rest(runs).empty()) << "the new run is one page";
}

TEST(WrittenRunsTest, ARewriteOfBytesAlreadyStartedStartsANewRun) {
  WrittenRuns runs(kChunk);
  ASSERT_EQ(Note(runs, 3, 0, kChunk).size(), 1u);
  EXPECT_TRUE(Note(runs, 3, 0, kPage).empty()) << "nothing unstarted is left behind it";
  EXPECT_TRUE(Rest(runs).empty()) << "the new run is one page";
  // The new run is a run like any other once it reaches a chunk.
  ASSERT_EQ(Note(runs, 3, 0, kPage).size(), 0u);
  const std::vector<Range> ready = Note(runs, 3, kPage, kChunk);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_TRUE(Same(ready[0], 3, 0, static_cast<int64_t>(kChunk) + kPage));
}

TEST(WrittenRunsTest, AWriteElsewhereThatIsAChunkItselfHandsOutBoth) {
  WrittenRuns runs(kChunk);
  ASSERT_EQ(Note(runs, 3, 0, kChunk).size(), 1u);
  EXPECT_TRUE(Note(runs, 3, kChunk, kPage).empty());
  const std::vector<Range> ready = Note(runs, 3, 100 * kPage, kChunk);
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_TRUE(
      Same(ready[0], 3, static_cast<int64_t>(kChunk), static_cast<int64_t>(kChunk) + kPage));
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

TEST(WrittenRunsTest, AFurtherDescriptorReplacesTheOldestRunAndHandsOutItsTail) {
  WrittenRuns runs(kChunk);
  for (int fd = 10; fd < 10 + WrittenRuns::kMaxRuns; ++fd) {
    EXPECT_EQ(Note(runs, fd, 0, kChunk).size(), 1u);
    EXPECT_TRUE(Note(runs, fd, kChunk, kPage).empty());
  }
  const std::vector<Range> ready = Note(runs, 99, 0, kPage);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_TRUE(
      Same(ready[0], 10, static_cast<int64_t>(kChunk), static_cast<int64_t>(kChunk) + kPage));
  // The other long runs' tails; descriptor 99's run is one page.
  EXPECT_EQ(Rest(runs).size(), static_cast<size_t>(WrittenRuns::kMaxRuns - 1));
}

TEST(WrittenRunsTest, AClosedDescriptorsRunIsForgottenUnstarted) {
  WrittenRuns runs(kChunk);
  for (const int fd : {3, 4}) {
    Note(runs, fd, 0, kChunk);
    Note(runs, fd, kChunk, kPage);
  }
  runs.Forget(3);
  const std::vector<Range> rest = Rest(runs);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].fd, 4);
  // The number, reused for another file, starts afresh.
  EXPECT_TRUE(Note(runs, 3, 50 * kPage, kPage).empty());
  const std::vector<Range> ready = Note(runs, 3, 51 * kPage, kChunk);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_TRUE(Same(ready[0], 3, 50 * kPage, 51 * kPage + static_cast<int64_t>(kChunk)));
}

}  // namespace
}  // namespace foreactor
