// Tests of the pread walks (pread_walk.h): WalkPreadRun over a loop with a
// loop count skips the iterations between its first ones and its last
// (CountedLoops::kSkipBetween) and finds what a walk of every iteration
// finds, asking the callbacks far less; it visits each iteration when the
// count is not known, when the loop holds other calls, and when told to.
#include "runtime/pread_walk.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "foreactor/foreactor.h"
#include "graph/graph.h"

namespace foreactor {
namespace {

constexpr int64_t kBlock = 4096;
constexpr unsigned kEarlyReads = 16;
constexpr unsigned kMaxReads = 256;

// The scope's state: a loop of `blocks` reads of block i of descriptor 3,
// and the count its loop-count callback gives.
struct LoopState {
  uint64_t blocks = 0;
  int64_t count = FOREACTOR_COUNT_NOT_YET;
  unsigned arguments_asked = 0;
  unsigned counts_asked = 0;
};

LoopState& StateOf(const foreactor_visit* visit) {
  return *static_cast<LoopState*>(visit->scope_state);
}

foreactor_readiness ReadBlock(const foreactor_visit* visit, foreactor_call* call) {
  LoopState& state = StateOf(visit);
  state.arguments_asked++;
  // A visit past the loop's end is a bug of the walk: the program never
  // makes it.
  EXPECT_LT(visit->iteration[0], state.blocks);
  call->fd = 3;
  call->length = kBlock;
  call->offset = static_cast<int64_t>(visit->iteration[0]) * kBlock;
  return FOREACTOR_READY;
}

foreactor_readiness StatAnything(const foreactor_visit*, foreactor_call* call) {
  call->fd = 3;
  return FOREACTOR_READY;
}

int MoreBlocks(const foreactor_visit* visit) {
  return visit->iteration[0] + 1 < StateOf(visit).blocks ? 0 : 1;
}

int64_t BlockCount(const foreactor_visit* visit) {
  LoopState& state = StateOf(visit);
  state.counts_asked++;
  return state.count;
}

// start -> read -> [fstat ->] more -> read | end, `more` counted.
class CountedLoopGraph {
 public:
  explicit CountedLoopGraph(bool with_fstat = false) : graph_("counted") {
    const int read = graph_.AddSyscall("read", FOREACTOR_CALL_PREAD, ReadBlock, nullptr, nullptr);
    int last = read;
    if (with_fstat) {
      last = graph_.AddSyscall("stat", FOREACTOR_CALL_FSTAT, StatAnything, nullptr, nullptr);
      graph_.SetNext(read, last, false);
    }
    const int more = graph_.AddBranch("more", MoreBlocks, nullptr);
    graph_.SetNext(FOREACTOR_START_NODE, read, false);
    graph_.SetNext(last, more, false);
    graph_.AddChild(more, read, false);
    graph_.AddChild(more, FOREACTOR_END_NODE, false);
    graph_.SetLoopCount(more, BlockCount);
    std::string error;
    valid_ = graph_.Finish(&error);
    EXPECT_TRUE(valid_) << error;
  }

  // WalkPreadRun from the start, as the look-ahead's decision walks.
  bool Walk(LoopState* state, CountedLoops counted_loops, PreadRun* run) const {
    Cursor start;
    start.Take(graph_.node(FOREACTOR_START_NODE).next);
    return WalkPreadRun(graph_, state, -1, start, kMaxReads, kEarlyReads, counted_loops, run);
  }

 private:
  Graph graph_;
  bool valid_ = false;
};

TEST(PreadWalkTest, ACountedLoopIsWalkedAtItsStartAndItsEnd) {
  const CountedLoopGraph graph;
  LoopState state{64, 64};
  PreadRun run;
  ASSERT_TRUE(graph.Walk(&state, CountedLoops::kSkipBetween, &run));
  EXPECT_EQ(run.fd, 3);
  EXPECT_EQ(run.reads, 64u);
  EXPECT_TRUE(run.rest_of_scope);
  EXPECT_EQ(run.early_jumps, 0u);
  EXPECT_EQ(run.longest_read, static_cast<uint64_t>(kBlock));
  EXPECT_EQ(run.start, 0);
  EXPECT_EQ(run.end, 64 * kBlock);
  // The first 16 reads and the last; the count at the 16th and the last.
  EXPECT_EQ(state.arguments_asked, kEarlyReads + 1);
  EXPECT_EQ(state.counts_asked, 2u);
}

TEST(PreadWalkTest, EveryIterationIsVisitedWhenToldTo) {
  const CountedLoopGraph graph;
  LoopState state{64, 64};
  PreadRun run;
  ASSERT_TRUE(graph.Walk(&state, CountedLoops::kVisitEach, &run));
  EXPECT_EQ(run.reads, 64u);
  EXPECT_EQ(state.arguments_asked, 64u);
  EXPECT_EQ(state.counts_asked, 0u);
}

TEST(PreadWalkTest, ALoopLongerThanTheWalkEndsItWithoutVisitingTheRest) {
  const CountedLoopGraph graph;
  LoopState state{100000, 100000};
  PreadRun run;
  EXPECT_FALSE(graph.Walk(&state, CountedLoops::kSkipBetween, &run));
  EXPECT_EQ(state.arguments_asked, kEarlyReads);

  // As the walk of every iteration finds.
  LoopState each{100000, 100000};
  EXPECT_FALSE(graph.Walk(&each, CountedLoops::kVisitEach, &run));
  EXPECT_EQ(each.arguments_asked, kMaxReads);
}

TEST(PreadWalkTest, ARunOfExactlyTheWalksLimitEndsItAsAWalkOfEveryIteration) {
  const CountedLoopGraph graph;
  for (const uint64_t blocks : {kMaxReads - 1, kMaxReads, kMaxReads + 1}) {
    LoopState skipping{blocks, static_cast<int64_t>(blocks)};
    LoopState each{blocks, static_cast<int64_t>(blocks)};
    PreadRun skipped, visited;
    EXPECT_EQ(graph.Walk(&skipping, CountedLoops::kSkipBetween, &skipped),
              graph.Walk(&each, CountedLoops::kVisitEach, &visited))
        << blocks << " blocks";
    EXPECT_EQ(skipped.reads, visited.reads) << blocks << " blocks";
  }
}

TEST(PreadWalkTest, AnUnknownCountVisitsEachIteration) {
  const CountedLoopGraph graph;
  LoopState state{64, FOREACTOR_COUNT_NOT_YET};
  PreadRun run;
  ASSERT_TRUE(graph.Walk(&state, CountedLoops::kSkipBetween, &run));
  EXPECT_EQ(run.reads, 64u);
  EXPECT_EQ(state.arguments_asked, 64u);
}

TEST(PreadWalkTest, ACountShortOfTheLoopOnlyMovesTheWalkOn) {
  // The count says 40, the branch goes on to 64: the walk skips to the
  // 40th and then follows the branch's choices to the real end.
  const CountedLoopGraph graph;
  LoopState state{64, 40};
  PreadRun run;
  ASSERT_TRUE(graph.Walk(&state, CountedLoops::kSkipBetween, &run));
  EXPECT_EQ(run.reads, 64u);
  EXPECT_EQ(state.arguments_asked, kEarlyReads + 1 + 24);
}

TEST(PreadWalkTest, AShortLoopHasNothingToSkip) {
  const CountedLoopGraph graph;
  // Up to the early reads and the last one, every iteration is visited;
  // from 18 on, those between are skipped.
  for (const uint64_t blocks : {1u, 16u, 17u, 18u, 19u}) {
    LoopState state{blocks, static_cast<int64_t>(blocks)};
    PreadRun run;
    ASSERT_TRUE(graph.Walk(&state, CountedLoops::kSkipBetween, &run));
    EXPECT_EQ(run.reads, blocks);
    EXPECT_EQ(run.end, static_cast<int64_t>(blocks) * kBlock);
    EXPECT_EQ(state.arguments_asked, std::min<uint64_t>(blocks, kEarlyReads + 1));
  }
}

TEST(PreadWalkTest, ALoopWithOtherCallsIsVisitedEachTime) {
  const CountedLoopGraph graph(/*with_fstat=*/true);
  LoopState state{64, 64};
  PreadRun run;
  EXPECT_FALSE(graph.Walk(&state, CountedLoops::kSkipBetween, &run) && run.rest_of_scope);
  EXPECT_FALSE(run.rest_of_scope);
  EXPECT_EQ(state.counts_asked, 0u);
}

}  // namespace
}  // namespace foreactor
