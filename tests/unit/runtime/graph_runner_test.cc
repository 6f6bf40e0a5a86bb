// Tests of GraphRunner's walk: the peek head issuing ahead within its depth
// and byte budget, the frontier serving early results with exact bytes and
// results in program order, loops, branches, calls outside the graph, and
// scopes entered again.  Driven by the deterministic fake engine on real
// temporary files (graph_runner_fixture.h).  The parts the runner asks have
// tests of their own; the runner's other concerns are in
// graph_runner_*_test.cc.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/graph_runner_fixture.h"

namespace foreactor {
namespace {

TEST_F(GraphRunnerTest, PreadLoopIsIssuedAheadAndServedWithExactBytes) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  ASSERT_TRUE(scope.ok());
  LoopState state = ReadLoopState({7, 3, 60, 12, 0, 33, 5, 41, 9, 2});
  scope.Enter(&state);
  EXPECT_EQ(engine_.prepared().size(), 4u) << "depth 4 issues four visits at scope entry";

  for (size_t i = 0; i < state.offsets.size(); ++i) {
    char got[kBlock];
    char expected[kBlock];
    bool served = false;
    int64_t result = ProgramCall(scope, Pread(data_fd_, got, kBlock, state.offsets[i]), &served);
    ASSERT_EQ(::pread(data_fd_, expected, kBlock, state.offsets[i]), static_cast<ssize_t>(kBlock));
    EXPECT_TRUE(served) << "visit " << i;
    ASSERT_EQ(result, static_cast<int64_t>(kBlock));
    EXPECT_EQ(std::memcmp(got, expected, kBlock), 0) << "visit " << i;
  }
  EXPECT_EQ(scope.statistics().issued_early, 10u);
  EXPECT_EQ(scope.statistics().consumed, 10u);
  EXPECT_EQ(scope.statistics().mispredicted, 0u);
  ASSERT_EQ(state.results.size(), 10u);
  for (size_t i = 0; i < state.results.size(); ++i) {
    EXPECT_EQ(state.result_visits[i], std::vector<uint64_t>{i})
        << "result callbacks in program order";
  }
  scope.Exit();
}

// Reads of a quarter of the byte budget and one byte more: four fill it.
foreactor_readiness LargePreadArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<LoopState*>(visit->scope_state);
  call->fd = state->fd;
  call->length = GraphRunner::kMaxBytesAhead / 4 + 1;
  call->offset = state->offsets[visit->iteration[0]];
  return FOREACTOR_READY;
}

TEST_F(GraphRunnerTest, VisitsAheadMoveAtMostTheByteBudget) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LargePreadArguments);
  GraphRunner scope(*graph, Depth(32), &engine_);
  ASSERT_TRUE(scope.ok());
  LoopState state = ReadLoopState({0, 1, 2, 3, 4, 5, 6, 7});
  scope.Enter(&state);
  EXPECT_EQ(engine_.prepared().size(), 4u) << "the fourth read crosses the budget, and still goes";

  const size_t length = GraphRunner::kMaxBytesAhead / 4 + 1;
  std::vector<char> got(length), expected(length);
  for (size_t i = 0; i < state.offsets.size(); ++i) {
    bool served = false;
    int64_t result =
        ProgramCall(scope, Pread(data_fd_, got.data(), length, state.offsets[i]), &served);
    EXPECT_TRUE(served) << "visit " << i;
    const ssize_t plain = ::pread(data_fd_, expected.data(), length, state.offsets[i]);
    ASSERT_EQ(result, plain) << "visit " << i;
    EXPECT_EQ(std::memcmp(got.data(), expected.data(), static_cast<size_t>(plain)), 0)
        << "visit " << i;
    if (i == 0) {
      EXPECT_EQ(engine_.prepared().size(), 5u) << "one read consumed, one more ahead";
    }
  }
  EXPECT_EQ(scope.statistics().issued_early, 8u);
  EXPECT_EQ(scope.statistics().consumed, 8u);
  scope.Exit();
}

TEST_F(GraphRunnerTest, NotYetArgumentsStopThePeekHeadUntilKnown) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(8), &engine_);
  LoopState state = ReadLoopState({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  state.known = 2;
  scope.Enter(&state);
  EXPECT_EQ(engine_.prepared().size(), 2u);
  state.known = SIZE_MAX;
  char buffer[kBlock];
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[0]));
  // Served visit 0; the walk resumed and filled up to depth 8 again.
  EXPECT_EQ(engine_.prepared().size(), 9u);
  for (size_t i = 1; i < state.offsets.size(); ++i) {
    ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[i])),
              static_cast<int64_t>(kBlock));
  }
  EXPECT_EQ(scope.statistics().consumed, 10u);
  scope.Exit();
}

TEST_F(GraphRunnerTest, CallsOnOtherDescriptorsPassThroughUntouched) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  LoopState state = ReadLoopState({1, 2, 3});
  scope.Enter(&state);
  int other = ::open(data_path_.c_str(), O_RDONLY);
  char buffer[kBlock];
  InterceptedCall intercepted;
  intercepted.call = Pread(other, buffer, kBlock, 0);
  int64_t result;
  EXPECT_FALSE(scope.Offer(&intercepted, &result));
  EXPECT_EQ(intercepted.claimed_by, nullptr);
  for (size_t i = 0; i < 3; ++i) {
    bool served = false;
    ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[i]), &served);
    EXPECT_TRUE(served);
  }
  EXPECT_EQ(scope.statistics().passed_through, 1u);
  ::close(other);
  scope.Exit();
}

// Nested loops: outer over rows, inner over columns; arguments use both.
struct GridState {
  int fd = -1;
  uint64_t rows = 3;
  uint64_t columns = 4;
  std::vector<std::vector<uint64_t>> visits;
};

foreactor_readiness GridArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<GridState*>(visit->scope_state);
  EXPECT_EQ(visit->loop_count, 2u);
  call->fd = state->fd;
  call->length = kBlock;
  call->offset =
      static_cast<int64_t>((visit->iteration[0] * state->columns + visit->iteration[1]) * kBlock);
  return FOREACTOR_READY;
}

void GridResult(const foreactor_visit* visit, int64_t) {
  auto* state = static_cast<GridState*>(visit->scope_state);
  state->visits.emplace_back(visit->iteration, visit->iteration + visit->loop_count);
}

int GridNextColumn(const foreactor_visit* visit) {
  auto* state = static_cast<GridState*>(visit->scope_state);
  return visit->iteration[1] + 1 < state->columns ? 0 : 1;
}

int GridNextRow(const foreactor_visit* visit) {
  auto* state = static_cast<GridState*>(visit->scope_state);
  return visit->iteration[0] + 1 < state->rows ? 0 : 1;
}

TEST_F(GraphRunnerTest, NestedLoopsGiveEachVisitItsIterationIndices) {
  Graph graph("grid");
  int read = graph.AddSyscall("read", FOREACTOR_CALL_PREAD, GridArguments, GridResult, nullptr);
  int column = graph.AddBranch("next_column", GridNextColumn, nullptr);
  int row = graph.AddBranch("next_row", GridNextRow, nullptr);
  graph.SetNext(FOREACTOR_START_NODE, read, false);
  graph.SetNext(read, column, false);
  graph.AddChild(column, read, false);
  graph.AddChild(column, row, false);
  graph.AddChild(row, read, false);
  graph.AddChild(row, FOREACTOR_END_NODE, false);
  std::string error;
  ASSERT_TRUE(graph.Finish(&error)) << error;
  ASSERT_EQ(graph.loop_count(), 2);

  GraphRunner scope(graph, Depth(5), &engine_);
  GridState state;
  state.fd = data_fd_;
  scope.Enter(&state);
  for (uint64_t r = 0; r < state.rows; ++r) {
    for (uint64_t c = 0; c < state.columns; ++c) {
      char buffer[kBlock];
      bool served = false;
      int64_t offset = static_cast<int64_t>((r * state.columns + c) * kBlock);
      ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, buffer, kBlock, offset), &served),
                static_cast<int64_t>(kBlock));
      EXPECT_TRUE(served) << r << "," << c;
    }
  }
  ASSERT_EQ(state.visits.size(), 12u);
  for (uint64_t i = 0; i < 12; ++i) {
    EXPECT_EQ(state.visits[i], (std::vector<uint64_t>{i / 4, i % 4}));
  }
  scope.Exit();
}

// A branch whose answer changes between the peek head's question and the
// frontier's: everything ahead is thrown away and the results stay right.
struct FlipState {
  LoopState loop;
  bool flip_after_peek = false;
  bool peeked = false;
};

int FlippingMore(const foreactor_visit* visit) {
  auto* state = static_cast<FlipState*>(visit->scope_state);
  if (visit->iteration[0] == 1) {
    if (!state->peeked) {
      state->peeked = true;
      return 0;  // the peek head is told: go around again
    }
    return 1;  // the program leaves the loop
  }
  return visit->iteration[0] + 1 < state->loop.offsets.size() ? 0 : 1;
}

foreactor_readiness FlipArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<FlipState*>(visit->scope_state);
  call->fd = state->loop.fd;
  call->length = kBlock;
  call->offset = state->loop.offsets[visit->iteration[0]];
  return FOREACTOR_READY;
}

TEST_F(GraphRunnerTest, BranchDivergenceDrainsEverythingAhead) {
  auto graph =
      OneCallLoop("flip", FOREACTOR_CALL_PREAD, FlipArguments, nullptr, FlippingMore, false);
  GraphRunner scope(*graph, Depth(4), &engine_);
  FlipState state;
  state.loop = ReadLoopState({1, 2, 3, 4, 5});
  scope.Enter(&state);
  char buffer[kBlock];
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.loop.offsets[0]));
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.loop.offsets[1]));
  // The program now leaves the loop; a later unrelated pread passes through.
  InterceptedCall intercepted;
  intercepted.call = Pread(data_fd_, buffer, kBlock, 0);
  int64_t result;
  EXPECT_FALSE(scope.Offer(&intercepted, &result));
  EXPECT_EQ(scope.statistics().mispredicted, 1u);
  EXPECT_GE(scope.statistics().wasted + scope.statistics().cancelled, 1u);
  scope.Exit();
}

TEST_F(GraphRunnerTest, ReadWithImplicitOffsetKeepsTheFilePositionExact) {
  auto graph = LoopGraph(FOREACTOR_CALL_READ, SequentialReadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  LoopState state = ReadLoopState({0, 1, 2, 3, 4, 5});
  scope.Enter(&state);
  for (int i = 0; i < 6; ++i) {
    char got[kBlock], expected[kBlock];
    const foreactor_call call = Read(data_fd_, got, kBlock);
    bool served = false;
    ASSERT_EQ(ProgramCall(scope, call, &served), static_cast<int64_t>(kBlock));
    EXPECT_TRUE(served);
    EXPECT_EQ(::lseek(data_fd_, 0, SEEK_CUR), static_cast<off_t>((i + 1) * kBlock));
    ASSERT_EQ(::pread(data_fd_, expected, kBlock, i * kBlock), static_cast<ssize_t>(kBlock));
    EXPECT_EQ(std::memcmp(got, expected, kBlock), 0);
  }
  scope.Exit();
}

TEST_F(GraphRunnerTest, EngineCancelledRequestRunsSynchronously) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  LoopState state = ReadLoopState({1, 2, 3});
  engine_.SetResultForCall(1, -ECANCELED);
  scope.Enter(&state);
  for (size_t i = 0; i < 3; ++i) {
    char got[kBlock], expected[kBlock];
    bool served = false;
    ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, got, kBlock, state.offsets[i]), &served),
              static_cast<int64_t>(kBlock));
    ASSERT_EQ(::pread(data_fd_, expected, kBlock, state.offsets[i]), static_cast<ssize_t>(kBlock));
    EXPECT_EQ(std::memcmp(got, expected, kBlock), 0);
    EXPECT_EQ(served, i != 1);
  }
  scope.Exit();
}

TEST_F(GraphRunnerTest, ScopesCanBeEnteredAgainAndStartFresh) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(2), &engine_);
  for (int round = 0; round < 3; ++round) {
    LoopState state = ReadLoopState({4, 8, 15, 16, 23, 42});
    scope.Enter(&state);
    char buffer[kBlock];
    for (size_t i = 0; i < state.offsets.size(); ++i) {
      bool served = false;
      ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[i]), &served);
      EXPECT_TRUE(served);
    }
    EXPECT_EQ(state.result_visits.size(), state.offsets.size());
    scope.Exit();
  }
}

// fstatat loop (StatState, graph_runner_fixture.h): the struct stat the
// program gets is byte-for-byte the one fstatat gives.
TEST_F(GraphRunnerTest, FstatatResultsAreExact) {
  ASSERT_EQ(::symlink("data", (directory_ + "/link").c_str()), 0);
  ASSERT_EQ(::mkdir((directory_ + "/sub").c_str(), 0755), 0);
  StatState state;
  state.directory_fd = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY);
  state.names = {"data", "link", "sub", "missing", "data"};
  auto graph =
      OneCallLoop("stats", FOREACTOR_CALL_FSTATAT, StatArguments, nullptr, StatMore, false);
  GraphRunner scope(*graph, Depth(8), &engine_);
  scope.Enter(&state);
  for (const std::string& name : state.names) CheckedProgramStat(scope, state.directory_fd, name);
  EXPECT_EQ(scope.statistics().consumed, 5u);
  scope.Exit();
  ::close(state.directory_fd);
}

}  // namespace
}  // namespace foreactor
