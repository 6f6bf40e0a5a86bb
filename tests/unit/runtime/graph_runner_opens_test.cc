// Tests of GraphRunner with opens issued early: the program gets the
// descriptor numbers a plain open gives (Engine::InstallEarlyDescriptor),
// early opens never reached are released, and the program's record locks
// stay.
#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "engine/io_uring_engine.h"
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

TEST_F(GraphRunnerOpensTest, EarlyOpensNeverReachedAreReleasedNotInstalled) {
  OpenState state;
  for (int i = 0; i < 6; ++i) state.paths.push_back(data_path_);
  auto graph = OpenLoopGraph();
  GraphRunner scope(*graph, Depth(4), &engine_);
  scope.Enter(&state);
  engine_.CompleteAll();
  const int64_t fd = ProgramCall(scope, OpenCall(state.paths[0]));
  ASSERT_GE(fd, 0);
  scope.Exit();
  ::close(static_cast<int>(fd));
  EXPECT_EQ(engine_.install_count(), 1u);
  EXPECT_GE(engine_.release_count(), 1u);
}

// The program holds a record lock on the file it opens again: a plain run
// keeps it until the program closes a descriptor of the file, and so must a
// run whose opens are issued early, on the real engine that runs them.
TEST_F(GraphRunnerOpensTest, EarlyOpensLeaveTheProgramsRecordLocksAlone) {
  std::string error;
  std::unique_ptr<IoUringEngine> engine = IoUringEngine::Create(EngineOptions{}, &error);
  ASSERT_NE(engine, nullptr) << error;
  if (!engine->Supports(FOREACTOR_CALL_OPEN)) GTEST_SKIP() << "no early opens on this kernel";
  const int locker = ::open(data_path_.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(locker, 0);
  ASSERT_TRUE(testing::LockWholeFile(locker));
  OpenState state;
  for (int i = 0; i < 6; ++i) state.paths.push_back(data_path_);
  auto graph = OpenLoopGraph();
  std::vector<int> got;
  {
    GraphRunner scope(*graph, Depth(4), engine.get());
    scope.Enter(&state);
    for (int i = 0; i < 2; ++i) {
      bool served = false;
      got.push_back(static_cast<int>(ProgramCall(scope, OpenCall(data_path_), &served)));
      EXPECT_TRUE(i == 0 || served) << "the second open was issued early";
    }
    scope.Exit();  // the program returned early: the early opens left are given up
  }
  EXPECT_TRUE(testing::WriteLockHeld(data_path_)) << "the program's record lock was released";
  for (int fd : got) ::close(fd);
  ::close(locker);
}

}  // namespace
}  // namespace foreactor
