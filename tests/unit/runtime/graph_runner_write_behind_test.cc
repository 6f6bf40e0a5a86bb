// Tests of GraphRunner with nodes that declare write-behind: the program's
// finished writes become write-back hints (write_behind.h), whether its
// calls ran early or not, and only where the graph and the settings ask.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>
#include <vector>

#include "runtime/graph_runner_fixture.h"
#include "runtime/statistics_json.h"

namespace foreactor {
namespace {

constexpr int64_t kChunk = static_cast<int64_t>(WriteBehind::kChunkBytes);
// Pages written by the loop: one chunk and three pages more.
constexpr int64_t kPages = kChunk / static_cast<int64_t>(kBlock) + 3;

struct OutputState {
  int fd = -1;
  int64_t pages = kPages;
  std::vector<char> page = std::vector<char>(kBlock, 'w');
};

foreactor_readiness OutputArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<OutputState*>(visit->scope_state);
  call->fd = state->fd;
  call->buffer = state->page.data();
  call->length = kBlock;
  call->offset = static_cast<int64_t>(visit->iteration[0] * kBlock);
  return FOREACTOR_READY;
}

int MorePages(const foreactor_visit* visit) {
  auto* state = static_cast<OutputState*>(visit->scope_state);
  return static_cast<int64_t>(visit->iteration[0]) + 1 < state->pages ? 0 : 1;
}

// start -> write (type `type`) -> more -> {write, end}; the write node
// declares write-behind when `declared`.
std::unique_ptr<Graph> OutputGraph(foreactor_call_type type, bool declared) {
  auto graph = std::make_unique<Graph>("output");
  const int write = graph->AddSyscall("write", type, OutputArguments, nullptr, nullptr);
  const int more = graph->AddBranch("more", MorePages, nullptr);
  graph->SetNext(FOREACTOR_START_NODE, write, false);
  graph->SetNext(write, more, false);
  graph->AddChild(more, write, false);
  graph->AddChild(more, FOREACTOR_END_NODE, false);
  if (declared) {
    EXPECT_EQ(graph->SetWriteBehind(write), 0);
  }
  std::string error;
  EXPECT_TRUE(graph->Finish(&error)) << error;
  return graph;
}

class GraphRunnerWriteBehindTest : public GraphRunnerTest {
 protected:
  void SetUp() override {
    GraphRunnerTest::SetUp();
    state_.fd = ::open(temp_.Path("out").c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    ASSERT_GE(state_.fd, 0);
  }
  void TearDown() override {
    ::close(state_.fd);
    GraphRunnerTest::TearDown();
  }

  // The program's write of page `page` (`type`: pwrite, or write at the
  // file position, for which the offset is ignored).
  foreactor_call PageWrite(foreactor_call_type type, int64_t page) {
    foreactor_call call{};
    call.type = type;
    call.fd = state_.fd;
    call.buffer = state_.page.data();
    call.length = kBlock;
    call.offset = page * static_cast<int64_t>(kBlock);
    return call;
  }

  // Makes the program's calls of the loop; returns each call's result.
  std::vector<int64_t> RunProgram(GraphRunner& scope, foreactor_call_type type) {
    std::vector<int64_t> results;
    for (int64_t page = 0; page < state_.pages; ++page) {
      results.push_back(ProgramCall(scope, PageWrite(type, page)));
      if (page + 1 == kChunk / static_cast<int64_t>(kBlock)) {
        hints_after_first_chunk_ = Hints().size();
      }
    }
    return results;
  }

  // A whole scope of the program's pwrite loop under `settings`.
  void RunScope(const Graph& graph, const GraphSettings& settings) {
    GraphRunner scope(graph, settings, &engine_);
    scope.Enter(&state_);
    RunProgram(scope, FOREACTOR_CALL_PWRITE);
    scope.Exit();
  }

  // (offset, length) of every write-back hint the engine was handed.
  std::vector<std::pair<int64_t, int64_t>> Hints() const {
    std::vector<std::pair<int64_t, int64_t>> hints;
    for (const auto& prepared : engine_.prepared()) {
      if (prepared.operation != RequestOperation::kStartWriteBack) continue;
      EXPECT_EQ(prepared.call.fd, state_.fd);
      hints.emplace_back(prepared.call.offset, static_cast<int64_t>(prepared.call.length));
    }
    return hints;
  }

  OutputState state_;
  size_t hints_after_first_chunk_ = 0;
};

const std::vector<std::pair<int64_t, int64_t>> kExpectedHints = {
    {0, kChunk}, {kChunk, 3 * static_cast<int64_t>(kBlock)}};

TEST_F(GraphRunnerWriteBehindTest, FinishedWritesAreHintedAsTheyCompleteAndTheRestAtScopeExit) {
  auto graph = OutputGraph(FOREACTOR_CALL_PWRITE, /*declared=*/true);
  GraphRunner scope(*graph, Depth(4), &engine_);
  scope.Enter(&state_);
  const std::vector<int64_t> results = RunProgram(scope, FOREACTOR_CALL_PWRITE);
  EXPECT_EQ(hints_after_first_chunk_, 1u) << "the first chunk went once its last write returned";
  EXPECT_EQ(Hints().size(), 1u) << "the rest waits for the scope's end";
  EXPECT_GT(scope.statistics().consumed, 0u) << "the writes themselves ran early";
  EXPECT_EQ(scope.statistics().write_behind_requests, 1u);
  scope.Exit();
  EXPECT_EQ(Hints(), kExpectedHints);
  for (int64_t result : results) EXPECT_EQ(result, static_cast<int64_t>(kBlock));
  EXPECT_EQ(temp_.ReadAll("out"), std::string(static_cast<size_t>(kPages) * kBlock, 'w'));
  engine_.CompleteAll();
}

TEST_F(GraphRunnerWriteBehindTest, WritesRunAtTheFrontierAreHintedToo) {
  auto graph = OutputGraph(FOREACTOR_CALL_PWRITE, /*declared=*/true);
  engine_.SetSupports(FOREACTOR_CALL_PWRITE, false);  // nothing issued early
  GraphRunner scope(*graph, Depth(4), &engine_);
  scope.Enter(&state_);
  RunProgram(scope, FOREACTOR_CALL_PWRITE);
  EXPECT_EQ(scope.statistics().issued_early, 0u);
  scope.Exit();
  EXPECT_EQ(Hints(), kExpectedHints);
  engine_.CompleteAll();
}

TEST_F(GraphRunnerWriteBehindTest, WritesAtTheFilePositionAreHintedWhereTheyWent) {
  auto graph = OutputGraph(FOREACTOR_CALL_WRITE, /*declared=*/true);
  GraphRunner scope(*graph, Depth(4), &engine_);
  scope.Enter(&state_);
  RunProgram(scope, FOREACTOR_CALL_WRITE);
  scope.Exit();
  EXPECT_EQ(Hints(), kExpectedHints);
  EXPECT_EQ(::lseek(state_.fd, 0, SEEK_CUR), kPages * static_cast<int64_t>(kBlock));
  engine_.CompleteAll();
}

TEST_F(GraphRunnerWriteBehindTest, ANodeThatDoesNotDeclareItIsNeverHinted) {
  RunScope(*OutputGraph(FOREACTOR_CALL_PWRITE, /*declared=*/false), Depth(4));
  EXPECT_TRUE(Hints().empty());
}

TEST_F(GraphRunnerWriteBehindTest, TheSettingTurnsItOff) {
  GraphSettings settings = Depth(4);
  settings.write_behind = false;
  RunScope(*OutputGraph(FOREACTOR_CALL_PWRITE, /*declared=*/true), settings);
  EXPECT_TRUE(Hints().empty());
}

TEST_F(GraphRunnerWriteBehindTest, CheckModeHintsNothing) {
  GraphSettings settings = Depth(4);
  settings.check = true;
  RunScope(*OutputGraph(FOREACTOR_CALL_PWRITE, /*declared=*/true), settings);
  EXPECT_TRUE(engine_.prepared().empty());
}

TEST_F(GraphRunnerWriteBehindTest, HintsOutliveTheScopeAndCloseWaitsForThem) {
  auto graph = OutputGraph(FOREACTOR_CALL_PWRITE, /*declared=*/true);
  GraphRunner scope(*graph, Depth(4), &engine_);
  scope.Enter(&state_);
  RunProgram(scope, FOREACTOR_CALL_PWRITE);
  scope.Exit();
  EXPECT_TRUE(scope.has_write_behind_in_flight()) << "the fake completes nothing by itself";
  const size_t waits = engine_.wait_count();
  scope.BeforeClose(state_.fd);
  EXPECT_FALSE(scope.has_write_behind_in_flight());
  EXPECT_GT(engine_.wait_count(), waits);
  for (const auto& prepared : engine_.prepared()) EXPECT_TRUE(prepared.completed);
}

// The wait of a close between scopes is in the graph's totals at once
// (it was counted, but nothing folded it until the next scope's end).
TEST_F(GraphRunnerWriteBehindTest, ACloseWaitBetweenScopesReachesTheTotals) {
  auto graph = OutputGraph(FOREACTOR_CALL_PWRITE, /*declared=*/true);
  GraphRunner scope(*graph, Depth(4), &engine_);
  scope.Enter(&state_);
  RunProgram(scope, FOREACTOR_CALL_PWRITE);
  scope.Exit();
  ASSERT_TRUE(scope.has_write_behind_in_flight());
  scope.BeforeClose(state_.fd);
  EXPECT_EQ(scope.statistics().write_behind_wait_nanoseconds, 0u) << "folded";
  const std::string json = StatisticsJsonText();
  const size_t graph_at = json.find("\"output\"");
  ASSERT_NE(graph_at, std::string::npos) << json;
  const size_t key = json.find("\"write_behind_wait_nanoseconds\": ", graph_at);
  ASSERT_NE(key, std::string::npos) << json;
  EXPECT_NE(json.compare(key, 34, "\"write_behind_wait_nanoseconds\": 0"), 0) << json;
}

TEST_F(GraphRunnerWriteBehindTest, AFailedWriteIsNotHinted) {
  // The write after a chunk and ten pages fails: the program gets the
  // error as it would, and write-behind hints only the bytes written.
  auto graph = OutputGraph(FOREACTOR_CALL_PWRITE, /*declared=*/true);
  const int64_t chunk_pages = kChunk / static_cast<int64_t>(kBlock);
  state_.pages = chunk_pages + 20;
  engine_.SetSupports(FOREACTOR_CALL_PWRITE, false);
  GraphRunner scope(*graph, Depth(4), &engine_);
  scope.Enter(&state_);
  for (int64_t page = 0; page < chunk_pages + 10; ++page) {
    ASSERT_EQ(ProgramCall(scope, PageWrite(FOREACTOR_CALL_PWRITE, page)),
              static_cast<int64_t>(kBlock));
  }
  // The program's next call fails (a bad buffer) and it returns early.
  foreactor_call failing = PageWrite(FOREACTOR_CALL_PWRITE, chunk_pages + 10);
  failing.buffer = nullptr;
  EXPECT_EQ(ProgramCall(scope, failing), -EFAULT);
  scope.Exit();
  EXPECT_EQ(Hints(), (std::vector<std::pair<int64_t, int64_t>>{
                         {0, kChunk}, {kChunk, 10 * static_cast<int64_t>(kBlock)}}));
  engine_.CompleteAll();
}

}  // namespace
}  // namespace foreactor
