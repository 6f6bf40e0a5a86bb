// Tests of foreactor_scope_look_ahead() (Graph::LookAhead()): the open
// scope of the graph walks ahead at once, so that calls whose arguments the
// plugin learned between the program's calls are issued before the
// program's next call, the very next one included; the graph's scope is
// found below scopes of other graphs; with no scope of the graph open, or
// no graph, nothing happens.  Results never change.
#include "foreactor/foreactor.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/settings.h"
#include "runtime/lettered_file.h"
#include "runtime/program_calls.h"

namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kBlocks = 4;

struct WaitingState {
  int fd;
  bool known;  // the branch before the loop waits until the plugin knows
};

// start -> known? -> read_block (block i at visit i) -> more? -> read_block | end
foreactor::plugin::Graph<WaitingState> BuildWaitingLoop(const char* name) {
  foreactor::GraphBuilder<WaitingState> builder(name);
  auto known = builder.Branch("known", [](WaitingState& state, const foreactor::Visit&) {
    return state.known ? 0 : FOREACTOR_CHOICE_NOT_YET;
  });
  auto read =
      builder.Syscall("read_block", FOREACTOR_CALL_PREAD,
                      [](WaitingState& state, const foreactor::Visit& visit, foreactor_call& call) {
                        call = foreactor::Pread(state.fd, kBlock,
                                                static_cast<int64_t>(visit.iteration(0) * kBlock));
                        return FOREACTOR_READY;
                      });
  auto more = builder.Branch("more", [](WaitingState&, const foreactor::Visit& visit) {
    return visit.iteration(0) + 1 < kBlocks ? 0 : 1;
  });
  builder.start().Then(known);
  known.Children({read});
  read.Then(more);
  more.Children({read, builder.end()});
  return builder.Build();
}

class ScopeLookAheadTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("FOREACTOR", "1", 1);
    setenv("FOREACTOR_ENGINE", "threads", 1);
    setenv("FOREACTOR_DEPTH", "8", 1);
    setenv("FOREACTOR_EXACT_DEPTH", "1", 1);
    // Every read goes to the engine: what was issued early is counted.
    for (const char* name :
         {"look_ahead_first", "look_ahead_none", "look_ahead_nested", "look_ahead_deep"}) {
      setenv((std::string("FOREACTOR_PAGE_CACHE_") + name).c_str(), "0", 1);
    }
    foreactor::ReloadSettingsForTesting();
  }
  static void TearDownTestSuite() {
    unsetenv("FOREACTOR");
    unsetenv("FOREACTOR_ENGINE");
    unsetenv("FOREACTOR_DEPTH");
    unsetenv("FOREACTOR_EXACT_DEPTH");
    foreactor::ReloadSettingsForTesting();
  }
  void SetUp() override {
    fd_ = foreactor::MakeLetteredFile(kBlocks, kBlock);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override { close(fd_); }

  // The program reads every block through the open scopes; each read must
  // return the block's bytes.
  void ProgramReadsEveryBlock() {
    for (uint64_t block = 0; block < kBlocks; ++block) {
      std::vector<char> buffer(kBlock);
      foreactor_call call = foreactor::Pread(fd_, kBlock, static_cast<int64_t>(block * kBlock));
      call.buffer = buffer.data();
      ASSERT_EQ(foreactor::ProgramCallThroughScopes(call), static_cast<int64_t>(kBlock));
      EXPECT_EQ(buffer, std::vector<char>(kBlock, foreactor::BlockLetter(block)));
    }
  }

  // What the last scope of `graph` issued early.
  static uint64_t IssuedEarly(const foreactor::plugin::Graph<WaitingState>& graph) {
    foreactor_scope_outcome outcome{};
    EXPECT_EQ(foreactor_last_scope_outcome(graph.handle(), &outcome), 1);
    EXPECT_EQ(outcome.calls, kBlocks);
    return outcome.issued_early;
  }

  int fd_ = -1;
};

TEST_F(ScopeLookAheadTest, IssuesWhatBecameKnownBeforeTheProgramsNextCall) {
  auto graph = BuildWaitingLoop("look_ahead_first");
  ASSERT_TRUE(graph.valid());
  {
    WaitingState state{fd_, false};
    foreactor::Scope scope(graph, state);
    graph.LookAhead();  // nothing known yet: nothing to do
    state.known = true;
    graph.LookAhead();
    ProgramReadsEveryBlock();
  }
  EXPECT_EQ(IssuedEarly(graph), kBlocks) << "the first read too went before the program's call";
}

TEST_F(ScopeLookAheadTest, WithoutItTheFirstCallRunsAtTheFrontier) {
  auto graph = BuildWaitingLoop("look_ahead_none");
  ASSERT_TRUE(graph.valid());
  {
    WaitingState state{fd_, false};
    foreactor::Scope scope(graph, state);
    state.known = true;
    ProgramReadsEveryBlock();
  }
  EXPECT_EQ(IssuedEarly(graph), kBlocks - 1);
}

TEST_F(ScopeLookAheadTest, ReachesTheGraphsScopeBelowAnotherGraphs) {
  auto graph = BuildWaitingLoop("look_ahead_nested");
  auto inner_graph = BuildWaitingLoop("look_ahead_inner");
  ASSERT_TRUE(graph.valid());
  ASSERT_TRUE(inner_graph.valid());
  {
    WaitingState state{fd_, false};
    foreactor::Scope scope(graph, state);
    WaitingState inner_state{fd_, false};  // waits for good: its scope matches nothing
    foreactor::Scope inner_scope(inner_graph, inner_state);
    state.known = true;
    graph.LookAhead();
    ProgramReadsEveryBlock();
  }
  EXPECT_EQ(IssuedEarly(graph), kBlocks);
}

// A thread keeps the frames of its first open scopes in its own record and
// deeper ones in a table made when a scope first nests that deep: the
// graph's scope is found below a dozen scopes of other graphs, and each
// scope's exit pops its own frame.
TEST_F(ScopeLookAheadTest, ReachesTheGraphsScopeBelowADozenScopesOfOtherGraphs) {
  auto graph = BuildWaitingLoop("look_ahead_deep");
  ASSERT_TRUE(graph.valid());
  constexpr int kInnerScopes = 12;
  std::vector<foreactor::plugin::Graph<WaitingState>> inner_graphs;
  for (int i = 0; i < kInnerScopes; ++i) {
    inner_graphs.push_back(BuildWaitingLoop(("look_ahead_deep_" + std::to_string(i)).c_str()));
    ASSERT_TRUE(inner_graphs.back().valid());
  }
  {
    WaitingState state{fd_, false};
    foreactor::Scope scope(graph, state);
    // Wait for good: their scopes match nothing.
    std::vector<WaitingState> inner_states(kInnerScopes, WaitingState{fd_, false});
    std::vector<std::unique_ptr<foreactor::Scope>> inner_scopes;
    for (int i = 0; i < kInnerScopes; ++i) {
      inner_scopes.push_back(std::make_unique<foreactor::Scope>(inner_graphs[i], inner_states[i]));
    }
    state.known = true;
    graph.LookAhead();
    ProgramReadsEveryBlock();
    // Innermost first, as the program's own nesting would.
    while (!inner_scopes.empty()) inner_scopes.pop_back();
  }
  EXPECT_EQ(IssuedEarly(graph), kBlocks);
  for (const auto& inner_graph : inner_graphs) {
    foreactor_scope_outcome outcome{};
    ASSERT_EQ(foreactor_last_scope_outcome(inner_graph.handle(), &outcome), 1);
    EXPECT_EQ(outcome.calls, 0u) << "an inner scope took a read of the graph below it";
  }
}

TEST_F(ScopeLookAheadTest, DoesNothingWithoutAnOpenScopeOrAGraph) {
  auto graph = BuildWaitingLoop("look_ahead_closed");
  ASSERT_TRUE(graph.valid());
  graph.LookAhead();
  foreactor_scope_look_ahead(nullptr);
  foreactor_scope_outcome outcome{};
  EXPECT_EQ(foreactor_last_scope_outcome(graph.handle(), &outcome), 0);
}

}  // namespace
