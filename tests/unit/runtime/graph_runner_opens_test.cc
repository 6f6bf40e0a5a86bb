// Tests of GraphRunner with opens issued early: the program gets the
// descriptor numbers a plain open gives (DescriptorParking), and early opens
// never reached are closed.
#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "engine/test_files.h"
#include "runtime/graph_runner_fixture.h"

namespace foreactor {
namespace {

class GraphRunnerOpensTest : public GraphRunnerTest {};

// open loop: early opens that the program never reaches are closed, and
// the descriptors the program gets are the ones a plain open gives.
struct OpenState {
  std::vector<std::string> paths;
};

foreactor_readiness OpenArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<OpenState*>(visit->scope_state);
  call->path = state->paths[visit->iteration[0]].c_str();
  call->flags = O_RDONLY | O_CLOEXEC;
  return FOREACTOR_READY;
}

int OpenMore(const foreactor_visit* visit) {
  auto* state = static_cast<OpenState*>(visit->scope_state);
  return visit->iteration[0] + 1 < state->paths.size() ? 0 : 1;
}

// Both edges weak: an open loop that may stop anywhere.
std::unique_ptr<Graph> OpenLoopGraph() {
  return OneCallLoop("opens", FOREACTOR_CALL_OPEN, OpenArguments, nullptr, OpenMore, true);
}

foreactor_call OpenCall(const std::string& path) {
  foreactor_call call{};
  call.type = FOREACTOR_CALL_OPEN;
  call.path = path.c_str();
  call.flags = O_RDONLY | O_CLOEXEC;
  return call;
}

TEST_F(GraphRunnerOpensTest, EarlyOpensNeverReachedAreClosedAtScopeExit) {
  OpenState state;
  for (int i = 0; i < 6; ++i) state.paths.push_back(data_path_);
  auto graph = OpenLoopGraph();
  GraphRunner scope(*graph, Depth(4), &engine_);
  const int before = testing::OpenDescriptorCount();
  scope.Enter(&state);
  bool served = false;
  int64_t fd = ProgramCall(scope, OpenCall(state.paths[0]), &served);
  EXPECT_TRUE(served);
  ASSERT_GE(fd, 0);
  engine_.CompleteAll();
  scope.Exit();  // the program returned early
  ::close(static_cast<int>(fd));
  EXPECT_EQ(testing::OpenDescriptorCount(), before);
  EXPECT_GE(scope.statistics().wasted, 0u);
}

TEST_F(GraphRunnerOpensTest, EarlyOpenGivesTheDescriptorAPlainOpenWould) {
  OpenState state;
  for (int i = 0; i < 4; ++i) state.paths.push_back(data_path_);
  // Plain run: the numbers a program would get.
  std::vector<int> plain;
  for (const std::string& path : state.paths)
    plain.push_back(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  for (int fd : plain) ::close(fd);

  auto graph = OpenLoopGraph();
  GraphRunner scope(*graph, Depth(4), &engine_);
  scope.Enter(&state);
  engine_.CompleteAll();  // early opens done before the program asks
  std::vector<int> got;
  for (const std::string& path : state.paths)
    got.push_back(static_cast<int>(ProgramCall(scope, OpenCall(path))));
  scope.Exit();
  for (int fd : got) ::close(fd);
  EXPECT_EQ(got, plain);
}

}  // namespace
}  // namespace foreactor
