// Tests of the GraphRunner's slot rings: each syscall node uses the slots
// the depth in use needs, not the most its depth may reach, and a deeper
// depth chosen while visits are ahead waits for them before the rings grow.
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/graph_runner_fixture.h"

namespace foreactor {
namespace {

// A pread loop whose runner may go 64 visits ahead.
class GraphRunnerSlotRingsTest : public GraphRunnerTest {
 protected:
  std::unique_ptr<Graph> graph_ = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope_{*graph_, Depth(64), &engine_};

  // The program's pread of the loop's visit `visit`, checked against a
  // plain pread; returns whether the runtime served it.
  bool CheckedRead(const LoopState& state, size_t visit) {
    char got[kBlock];
    char expected[kBlock];
    bool served = false;
    const int64_t offset = state.offsets[visit];
    const int64_t result = ProgramCall(scope_, Pread(data_fd_, got, kBlock, offset), &served);
    EXPECT_EQ(::pread(data_fd_, expected, kBlock, offset), static_cast<ssize_t>(kBlock));
    EXPECT_EQ(result, static_cast<int64_t>(kBlock)) << "visit " << visit;
    EXPECT_EQ(std::memcmp(got, expected, kBlock), 0) << "visit " << visit;
    return served;
  }

  // CheckedRead() of visits [from, to), each expected to be served.
  void ReadServed(const LoopState& state, size_t from, size_t to) {
    for (size_t visit = from; visit < to; ++visit) {
      EXPECT_TRUE(CheckedRead(state, visit)) << "visit " << visit;
    }
  }
};

TEST_F(GraphRunnerSlotRingsTest, ALowDepthUsesOnlyTheSlotsItNeeds) {
  ASSERT_TRUE(scope_.ok());
  EXPECT_EQ(scope_.slots_in_use(), 1u) << "nothing used before the first scope";
  scope_.SetDepthForTests(8);
  LoopState state = ReadLoopState(FirstBlocks(kBlocks));
  scope_.Enter(&state);
  EXPECT_EQ(engine_.prepared().size(), 8u);
  EXPECT_EQ(scope_.slots_in_use(), 9u);
  ReadServed(state, 0, state.offsets.size());
  EXPECT_EQ(scope_.slots_in_use(), 9u);
  EXPECT_EQ(scope_.statistics().issued_early, static_cast<uint64_t>(kBlocks));
  scope_.Exit();
}

TEST_F(GraphRunnerSlotRingsTest, ADeeperDepthWaitsForTheVisitsAheadThenUsesEverySlot) {
  ASSERT_TRUE(scope_.ok());
  scope_.SetDepthForTests(8);
  LoopState state = ReadLoopState(FirstBlocks(kBlocks));
  scope_.Enter(&state);
  // Visits 0-3 read; the peek head passed 0-11, eight ahead.
  ReadServed(state, 0, 4);
  ASSERT_EQ(engine_.prepared().size(), 12u);

  // Visits 4-11 live in the nine slots: the peek head passes nothing more
  // until the program has taken them all.
  scope_.SetDepthForTests(64);
  for (size_t visit = 4; visit < 11; ++visit) {
    EXPECT_TRUE(CheckedRead(state, visit)) << "visit " << visit;
    EXPECT_EQ(engine_.prepared().size(), 12u) << "visit " << visit;
    EXPECT_EQ(scope_.slots_in_use(), 9u) << "visit " << visit;
  }
  // The last of them taken, every slot is used, and the rest of the loop
  // (52 visits, fewer than the depth) is issued at once.
  EXPECT_TRUE(CheckedRead(state, 11));
  EXPECT_EQ(scope_.slots_in_use(), 65u);
  EXPECT_EQ(engine_.prepared().size(), static_cast<size_t>(kBlocks));
  ReadServed(state, 12, state.offsets.size());
  EXPECT_EQ(scope_.statistics().issued_early, static_cast<uint64_t>(kBlocks));
  EXPECT_EQ(scope_.statistics().synchronous, 0u);
  ASSERT_EQ(state.results.size(), static_cast<size_t>(kBlocks));
  for (size_t visit = 0; visit < state.results.size(); ++visit) {
    EXPECT_EQ(state.result_visits[visit], std::vector<uint64_t>{visit})
        << "result callbacks in program order";
  }
  scope_.Exit();
}

TEST_F(GraphRunnerSlotRingsTest, ADeeperDepthAtAScopesStartGrowsTheRingsAtOnce) {
  ASSERT_TRUE(scope_.ok());
  scope_.SetDepthForTests(4);
  LoopState first = ReadLoopState(FirstBlocks(8));
  scope_.Enter(&first);
  ReadServed(first, 0, first.offsets.size());
  scope_.Exit();
  EXPECT_EQ(scope_.slots_in_use(), 5u);
  // Nothing is ahead when a scope begins: the rings grow to the new depth
  // plus one, no further.
  scope_.SetDepthForTests(16);
  LoopState second = ReadLoopState(FirstBlocks(32));
  scope_.Enter(&second);
  EXPECT_EQ(scope_.slots_in_use(), 17u);
  ReadServed(second, 0, second.offsets.size());
  scope_.Exit();
  EXPECT_EQ(scope_.statistics().synchronous, 0u);
}

}  // namespace
}  // namespace foreactor
