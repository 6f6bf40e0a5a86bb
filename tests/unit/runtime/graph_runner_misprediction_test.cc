// Tests of GraphRunner on mispredictions: a wrong prediction still returns
// the right bytes, repeated ones suspend speculation (MispredictionGuard
// decides when), and suspension carries across scopes until correct
// predictions or a retry lift it.
#include <cstring>
#include <vector>

#include "runtime/graph_runner_fixture.h"

namespace foreactor {
namespace {

class GraphRunnerMispredictionTest : public GraphRunnerTest {
 protected:
  // One scope of `scope` (a pread loop graph) in which the program reads 4
  // blocks, each one byte off the predicted offset: 4 mispredictions in a
  // row suspend speculation.
  void SuspendWithFourWrongReads(GraphRunner& scope) {
    LoopState state = ReadLoopState({0, 1, 2, 3, 4, 5, 6, 7});
    scope.Enter(&state);
    char buffer[kBlock];
    for (size_t i = 0; i < 4; ++i)
      ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[i] + 1));
    scope.Exit();
  }
};

TEST_F(GraphRunnerMispredictionTest, WrongOffsetIsAMispredictionThatStillReturnsTheRightBytes) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  LoopState state = ReadLoopState({1, 2, 3, 4, 5, 6});
  scope.Enter(&state);
  for (size_t i = 0; i < state.offsets.size(); ++i) {
    int64_t offset = (i == 2) ? 50 * static_cast<int64_t>(kBlock) : state.offsets[i];
    char got[kBlock], expected[kBlock];
    bool served = true;
    ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, got, kBlock, offset), &served),
              static_cast<int64_t>(kBlock));
    ASSERT_EQ(::pread(data_fd_, expected, kBlock, offset), static_cast<ssize_t>(kBlock));
    EXPECT_EQ(std::memcmp(got, expected, kBlock), 0);
    EXPECT_EQ(served, i != 2);
  }
  EXPECT_EQ(scope.statistics().mispredicted, 1u);
  EXPECT_EQ(scope.statistics().consumed, 5u);
  EXPECT_TRUE(scope.speculating());
  scope.Exit();
}

TEST_F(GraphRunnerMispredictionTest,
       RepeatedMispredictionsSuspendSpeculationUntilPredictionsAreRightAgain) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  LoopState state = ReadLoopState(FirstBlocks(40));
  scope.Enter(&state);
  char buffer[kBlock];
  size_t next = 0;
  for (; next < 4; ++next) {
    ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[next] + 1));
  }
  EXPECT_TRUE(scope.suspended());
  EXPECT_EQ(scope.statistics().speculation_stopped, 1u);
  const size_t prepared = engine_.prepared().size();
  // The frontier still follows the program: 15 correct calls leave it
  // suspended, the 16th resumes speculation, which issues at once.
  for (; next < 4 + 15; ++next) {
    bool served = true;
    int64_t result =
        ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[next]), &served);
    EXPECT_FALSE(served) << "a suspended scope issues nothing early";
    EXPECT_EQ(result, static_cast<int64_t>(kBlock));
  }
  EXPECT_TRUE(scope.suspended());
  EXPECT_EQ(engine_.prepared().size(), prepared);
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[next++]));
  EXPECT_FALSE(scope.suspended());
  EXPECT_EQ(scope.statistics().speculation_resumed, 1u);
  EXPECT_GT(engine_.prepared().size(), prepared);
  bool served = false;
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[next++]), &served);
  EXPECT_TRUE(served) << "after resuming, the next call is served early";
  scope.Exit();
}

TEST_F(GraphRunnerMispredictionTest, SuspensionCarriesIntoTheNextScope) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  SuspendWithFourWrongReads(scope);
  const size_t prepared = engine_.prepared().size();
  LoopState again = ReadLoopState(FirstBlocks(8));
  scope.Enter(&again);
  EXPECT_TRUE(scope.suspended());
  EXPECT_EQ(engine_.prepared().size(), prepared)
      << "a suspended graph issues nothing at scope entry";
  scope.Exit();
}

TEST_F(GraphRunnerMispredictionTest, ARetryBetweenScopesLiftsTheSuspension) {
  // The scope gate opens no scope while a graph is suspended, so no run of
  // correct predictions can lift it; the gate's retry does.
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  SuspendWithFourWrongReads(scope);
  ASSERT_TRUE(scope.suspended());
  scope.RetrySpeculation();
  EXPECT_FALSE(scope.suspended());
  EXPECT_EQ(scope.statistics().speculation_resumed, 1u);
  const size_t prepared = engine_.prepared().size();
  LoopState again = ReadLoopState(FirstBlocks(8));
  scope.Enter(&again);
  EXPECT_GT(engine_.prepared().size(), prepared) << "the retried graph issues at scope entry";
  char buffer[kBlock];
  bool served = false;
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, again.offsets[0]), &served);
  EXPECT_TRUE(served);
  scope.Exit();
}

TEST_F(GraphRunnerMispredictionTest, SuspensionSoonAfterResumingAsksForALongerRun) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  LoopState state = ReadLoopState(FirstBlocks(200));
  scope.Enter(&state);
  char buffer[kBlock];
  size_t next = 0;
  auto wrong = [&] {
    ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[next++] + 1));
  };
  auto right = [&] { ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[next++])); };
  for (int i = 0; i < 4; ++i) wrong();
  ASSERT_TRUE(scope.suspended());
  for (int i = 0; i < 16; ++i) right();
  ASSERT_FALSE(scope.suspended());
  // Wrong again at once: the early reads ahead are mispredictions.
  for (int i = 0; i < 4; ++i) wrong();
  ASSERT_TRUE(scope.suspended());
  EXPECT_EQ(scope.statistics().speculation_stopped, 2u);
  for (int i = 0; i < 16; ++i) right();
  EXPECT_TRUE(scope.suspended()) << "the second suspension needs 32 correct calls";
  for (int i = 0; i < 16; ++i) right();
  EXPECT_FALSE(scope.suspended());
  EXPECT_EQ(scope.statistics().speculation_resumed, 2u);
  scope.Exit();
}

}  // namespace
}  // namespace foreactor
