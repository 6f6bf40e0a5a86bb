// Tests of foreactor_last_scope_outcome(): nothing before a graph's first
// speculating scope on the thread; afterwards the calls of the last such
// scope, how many were issued early and how many reads came from the page
// cache; per thread; unchanged by scopes that do not speculate.
#include "foreactor/foreactor.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "config/settings.h"
#include "runtime/program_calls.h"
#include "runtime/read_loop_graph.h"

namespace {

using foreactor::BuildReadLoop;

constexpr uint64_t kBlock = 4096;

// The program's pread of block `block`, made through the runtime as an
// interposer makes it.
void ProgramRead(int fd, uint64_t block) {
  std::vector<char> buffer(kBlock);
  foreactor_call call = foreactor::Pread(fd, kBlock, static_cast<int64_t>(block * kBlock));
  call.buffer = buffer.data();
  foreactor::ProgramCallThroughScopes(call);
}

class ScopeOutcomeTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("FOREACTOR", "1", 1);
    setenv("FOREACTOR_ENGINE", "threads", 1);
    setenv("FOREACTOR_DEPTH", "4", 1);
    setenv("FOREACTOR_PAGE_CACHE_outcome_engine", "0", 1);
    setenv("FOREACTOR_DEPTH_outcome_off", "banana", 1);
    foreactor::ReloadSettingsForTesting();
  }
  static void TearDownTestSuite() {
    unsetenv("FOREACTOR");
    unsetenv("FOREACTOR_ENGINE");
    unsetenv("FOREACTOR_DEPTH");
    foreactor::ReloadSettingsForTesting();
  }
  void SetUp() override {
    char path[] = "/tmp/foreactor_outcome_XXXXXX";
    fd_ = mkstemp(path);
    ASSERT_GE(fd_, 0);
    unlink(path);
    const std::string bytes(16 * kBlock, 'x');  // written just now: in the page cache
    ASSERT_EQ(write(fd_, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  void TearDown() override { close(fd_); }

  // One scope in which the program reads blocks 0 .. count-1.
  void RunScope(const foreactor::plugin::Graph<foreactor::ReadLoopState>& graph, int count) {
    foreactor::ReadLoopState state{fd_, static_cast<uint64_t>(count), kBlock};
    foreactor::Scope scope(graph, state);
    for (int i = 0; i < count; ++i) ProgramRead(fd_, static_cast<uint64_t>(i));
  }

  int fd_ = -1;
};

TEST_F(ScopeOutcomeTest, NothingBeforeTheFirstScopeOrForNoGraph) {
  auto graph = BuildReadLoop("outcome_fresh");
  ASSERT_TRUE(graph.valid());
  foreactor_scope_outcome outcome{7, 7, 7};
  EXPECT_EQ(foreactor_last_scope_outcome(graph.handle(), &outcome), 0);
  EXPECT_EQ(outcome.calls, 7u);  // left alone
  EXPECT_EQ(foreactor_last_scope_outcome(nullptr, &outcome), 0);
  EXPECT_EQ(foreactor_last_scope_outcome(graph.handle(), nullptr), 0);
}

TEST_F(ScopeOutcomeTest, ReadsFoundInThePageCacheAreCounted) {
  auto graph = BuildReadLoop("outcome_cached");
  RunScope(graph, 3);
  foreactor_scope_outcome outcome{};
  ASSERT_EQ(foreactor_last_scope_outcome(graph.handle(), &outcome), 1);
  EXPECT_EQ(outcome.calls, 3u);
  EXPECT_EQ(outcome.from_page_cache, 3u);
  EXPECT_EQ(outcome.issued_early, 0u);
}

TEST_F(ScopeOutcomeTest, ReadsIssuedEarlyAreCountedAndOnlyTheLastScopeIsKept) {
  auto graph = BuildReadLoop("outcome_engine");  // FOREACTOR_PAGE_CACHE=0: every read to the engine
  RunScope(graph, 5);
  RunScope(graph, 2);
  foreactor_scope_outcome outcome{};
  ASSERT_EQ(foreactor_last_scope_outcome(graph.handle(), &outcome), 1);
  EXPECT_EQ(outcome.calls, 2u);
  EXPECT_EQ(outcome.from_page_cache, 0u);
  EXPECT_EQ(outcome.issued_early, 2u);
}

TEST_F(ScopeOutcomeTest, AScopeLeftToThePageCacheLeavesTheInterposersIdle) {
  auto graph = BuildReadLoop("outcome_left");
  constexpr uint64_t kBlocks = 4096;
  const std::string bytes(kBlocks * kBlock, 'y');  // written just now: in the page cache
  ASSERT_EQ(pwrite(fd_, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  foreactor::ReadLoopState state{fd_, kBlocks, kBlock};
  foreactor::Scope scope(graph, state);
  ASSERT_TRUE(foreactor::ThreadHasSpeculatingScope());
  uint64_t block = 0;
  while (block < kBlocks && foreactor::ThreadHasSpeculatingScope()) ProgramRead(fd_, block++);
  EXPECT_FALSE(foreactor::ThreadHasSpeculatingScope())
      << "the scope stops following the graph after a long run of cached reads, and the "
         "interposers no longer offer it the program's calls";
  EXPECT_LT(block, kBlocks);
  while (block < kBlocks) ProgramRead(fd_, block++);
}

TEST_F(ScopeOutcomeTest, PerThread) {
  auto graph = BuildReadLoop("outcome_threads");
  RunScope(graph, 3);
  foreactor_scope_outcome outcome{};
  int other_thread_sees = -1;
  std::thread([&] {
    other_thread_sees = foreactor_last_scope_outcome(graph.handle(), &outcome);
  }).join();
  EXPECT_EQ(other_thread_sees, 0);
}

TEST_F(ScopeOutcomeTest, ScopesThatDoNotSpeculateLeaveNoOutcome) {
  testing::internal::CaptureStderr();
  auto graph = BuildReadLoop("outcome_off");  // invalid depth: the graph is switched off
  RunScope(graph, 3);
  (void)testing::internal::GetCapturedStderr();
  foreactor_scope_outcome outcome{};
  EXPECT_EQ(foreactor_last_scope_outcome(graph.handle(), &outcome), 0);
}

}  // namespace
