// Tests of GraphRunner in check mode: nothing is issued early, and the first
// place where the program leaves the graph is reported (CheckReport).
#include <string>
#include <vector>

#include "runtime/graph_runner_fixture.h"

namespace foreactor {
namespace {

class GraphRunnerCheckModeTest : public GraphRunnerTest {};

GraphSettings CheckMode(unsigned depth) {
  GraphSettings settings = Depth(depth);
  settings.check = true;
  return settings;
}

TEST_F(GraphRunnerCheckModeTest, CheckModeNamesTheNodeTheVisitAndBothCalls) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, CheckMode(4), &engine_);
  LoopState state = ReadLoopState({1, 2, 3, 4});
  ::testing::internal::CaptureStderr();
  scope.Enter(&state);
  char buffer[kBlock];
  for (size_t i = 0; i < 4; ++i) {
    int64_t offset = i == 2 ? 9 * static_cast<int64_t>(kBlock) : state.offsets[i];
    ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, buffer, kBlock, offset)),
              static_cast<int64_t>(kBlock));
  }
  scope.Exit();
  std::string report = ::testing::internal::GetCapturedStderr();
  const std::string fd = std::to_string(data_fd_);
  EXPECT_NE(report.find("foreactor: check: graph 'loop', node 'call' (pread) at iteration [2]: "
                        "the program called pread(fd=" +
                        fd +
                        ", length=4096, offset=36864), "
                        "the graph predicted pread(fd=" +
                        fd + ", length=4096, offset=12288); hint: "),
            std::string::npos)
      << report;
  EXPECT_EQ(engine_.prepared().size(), 0u) << "check mode issues nothing early";
  EXPECT_EQ(state.results.size(), 4u);
}

TEST_F(GraphRunnerCheckModeTest, CheckModeReportsAReturnWithoutAWeakEdge) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments, /*weak=*/false);
  GraphRunner scope(*graph, CheckMode(4), &engine_);
  LoopState state = ReadLoopState({1, 2, 3});
  ::testing::internal::CaptureStderr();
  scope.Enter(&state);
  char buffer[kBlock];
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[0]));
  scope.Exit();
  std::string report = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(report.find("node 'call' (pread) at iteration [1]: the function returned, but no weak "
                        "edge leads here"),
            std::string::npos)
      << report;
}

TEST_F(GraphRunnerCheckModeTest, CheckModeIsSilentWhenTheGraphIsRight) {
  auto weak_graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments, /*weak=*/true);
  GraphRunner scope(*weak_graph, CheckMode(4), &engine_);
  LoopState state = ReadLoopState({5, 6, 7});
  ::testing::internal::CaptureStderr();
  scope.Enter(&state);
  char buffer[kBlock];
  for (int64_t offset : state.offsets) ProgramCall(scope, Pread(data_fd_, buffer, kBlock, offset));
  scope.Exit();
  scope.Enter(&state);
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[0]));
  scope.Exit();  // an early return over a weak edge is allowed
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace foreactor
