// Tests of foreactor_scope_speculation(): what it answers before and after
// scopes of a graph, for depth 0, a fixed positive depth, the automatic
// depth, check mode, speculation suspended after mispredictions, the sync
// engine, and foreactor off.  Asking changes nothing.  Also the scope gate's answers
// that follow from it (foreactor_scope_gate(); its timing is tested in
// scope_gate_test.cc).
#include "foreactor/foreactor.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>

#include <gtest/gtest.h>

#include "config/settings.h"
#include "runtime/program_calls.h"
#include "runtime/scope_gate.h"

namespace {

struct StatState {
  const char* predicted_name;
};

// A loop of fstatat(AT_FDCWD, predicted_name) calls, one per visit.
foreactor::plugin::Graph<StatState> BuildStatLoop(const char* name) {
  foreactor::GraphBuilder<StatState> builder(name);
  auto stat = builder.Syscall("stat_entry", FOREACTOR_CALL_FSTATAT,
                              [](StatState& state, const foreactor::Visit&, foreactor_call& call) {
                                call = foreactor::Fstatat(AT_FDCWD, state.predicted_name, 0);
                                return FOREACTOR_READY;
                              });
  auto more = builder.Branch("more", [](StatState&, const foreactor::Visit&) { return 0; });
  builder.start().Then(stat).Then(more);
  more.Children({stat, builder.end()});
  return builder.Build();
}

// The program's fstatat(AT_FDCWD, name), made through the runtime as an
// interposer makes it.
void ProgramStat(const char* name) {
  struct stat buffer;
  foreactor_call call = foreactor::Fstatat(AT_FDCWD, name, 0);
  call.buffer = &buffer;
  foreactor::ProgramCallThroughScopes(call);
}

class ScopeSpeculationTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("FOREACTOR", "1", 1);
    setenv("FOREACTOR_ENGINE", "threads", 1);
    setenv("FOREACTOR_DEPTH_spec_depth0", "0", 1);
    setenv("FOREACTOR_DEPTH_spec_depth4", "4", 1);
    setenv("FOREACTOR_EXACT_DEPTH_spec_depth4", "1", 1);
    setenv("FOREACTOR_DEPTH_spec_gate_units_depth4", "4", 1);
    setenv("FOREACTOR_EXACT_DEPTH_spec_gate_units_depth4", "1", 1);
    setenv("FOREACTOR_DEPTH_spec_bound4", "4", 1);
    setenv("FOREACTOR_DEPTH_spec_check", "0", 1);
    setenv("FOREACTOR_CHECK_spec_check", "1", 1);
    setenv("FOREACTOR_DEPTH_spec_suspend", "4", 1);
    // Its stats of "." are cached: with cache awareness the runtime would
    // stop issuing them and answer NONE for that reason instead.
    setenv("FOREACTOR_PAGE_CACHE_spec_suspend", "0", 1);
    // Likewise: its mispredicted stats must be issued to suspend it, and
    // with cache awareness its first ones would be probes, not issued.
    setenv("FOREACTOR_PAGE_CACHE_spec_gate_retry", "0", 1);
    setenv("FOREACTOR_PAGE_CACHE_spec_gate_no_waits", "0", 1);
    setenv("FOREACTOR_DEPTH_spec_cached_exact", "4", 1);
    setenv("FOREACTOR_EXACT_DEPTH_spec_cached_exact", "1", 1);
    setenv("FOREACTOR_ENGINE_spec_sync_automatic", "sync", 1);
    setenv("FOREACTOR_ENGINE_spec_sync_fixed", "sync", 1);
    setenv("FOREACTOR_DEPTH_spec_sync_fixed", "4", 1);
    setenv("FOREACTOR_DEPTH_spec_invalid", "banana", 1);
    foreactor::ReloadSettingsForTesting();
  }
  static void TearDownTestSuite() {
    unsetenv("FOREACTOR");
    unsetenv("FOREACTOR_ENGINE");
    foreactor::ReloadSettingsForTesting();
  }

  // One scope in which the program stats `name` `count` times.
  static void RunScope(const foreactor::plugin::Graph<StatState>& graph, StatState& state,
                       const char* name, int count) {
    foreactor::Scope scope(graph, state);
    for (int i = 0; i < count; ++i) ProgramStat(name);
  }

  // What the graph named `graph_name` answers after one scope of three
  // stats it predicts right.
  static foreactor_speculation AnswerAfterAScope(const char* graph_name) {
    auto graph = BuildStatLoop(graph_name);
    StatState state{"."};
    RunScope(graph, state, ".", 3);
    return graph.ScopeSpeculation();
  }
};

TEST_F(ScopeSpeculationTest, NullAndInvalidGraphsNever) {
  EXPECT_EQ(foreactor_scope_speculation(nullptr), FOREACTOR_SPECULATION_NONE);
  foreactor::GraphBuilder<StatState> builder("spec_broken");
  builder.Syscall(
      "orphan", FOREACTOR_CALL_FSTATAT,
      [](StatState&, const foreactor::Visit&, foreactor_call&) { return FOREACTOR_NOT_YET; });
  testing::internal::CaptureStderr();
  auto broken = builder.Build();
  (void)testing::internal::GetCapturedStderr();
  ASSERT_FALSE(broken.valid());
  EXPECT_EQ(foreactor_scope_speculation(broken.handle()), FOREACTOR_SPECULATION_NONE);
}

TEST_F(ScopeSpeculationTest, AutomaticDepthBeforeTheFirstScopeIsWorthTrying) {
  auto graph = BuildStatLoop("spec_fresh");
  ASSERT_TRUE(graph.valid());
  EXPECT_EQ(graph.ScopeSpeculation(), FOREACTOR_SPECULATION_AUTOMATIC);
  EXPECT_EQ(graph.ScopeSpeculation(), FOREACTOR_SPECULATION_AUTOMATIC);  // asking changes nothing
  StatState state{"."};
  RunScope(graph, state, ".", 3);  // the automatic depth starts above 0
  EXPECT_EQ(graph.ScopeSpeculation(), FOREACTOR_SPECULATION_AUTOMATIC);
}

TEST_F(ScopeSpeculationTest, DepthZeroIsNotWorthAScope) {
  EXPECT_EQ(AnswerAfterAScope("spec_depth0"), FOREACTOR_SPECULATION_NONE);
}

TEST_F(ScopeSpeculationTest, AnExactPositiveDepthAsksForScopes) {
  auto graph = BuildStatLoop("spec_depth4");
  StatState state{"."};
  RunScope(graph, state, ".", 3);
  EXPECT_EQ(graph.ScopeSpeculation(), FOREACTOR_SPECULATION_REQUESTED);
  {
    foreactor::Scope scope(graph, state);
    EXPECT_EQ(graph.ScopeSpeculation(),
              FOREACTOR_SPECULATION_REQUESTED);  // also from inside a scope
  }
}

TEST_F(ScopeSpeculationTest, AFixedDepthThatIsABoundLetsTheGateDecide) {
  // The runtime may lower it where it does not pay, as with auto.
  EXPECT_EQ(AnswerAfterAScope("spec_bound4"), FOREACTOR_SPECULATION_AUTOMATIC);
}

TEST_F(ScopeSpeculationTest, CheckModeWantsScopesAtAnyDepth) {
  EXPECT_EQ(AnswerAfterAScope("spec_check"), FOREACTOR_SPECULATION_REQUESTED);
}

TEST_F(ScopeSpeculationTest, SyncEngineWithTheAutomaticDepthIsNotWorthAScope) {
  // It issues nothing early at any depth: before and after a scope, the
  // automatic depth has nothing to look for.
  EXPECT_EQ(BuildStatLoop("spec_sync_automatic").ScopeSpeculation(), FOREACTOR_SPECULATION_NONE);
  EXPECT_EQ(AnswerAfterAScope("spec_sync_automatic"), FOREACTOR_SPECULATION_NONE);
}

TEST_F(ScopeSpeculationTest, SyncEngineAtAFixedDepthIsRequested) {
  // The graph's code path without early calls: a baseline the user asked for.
  EXPECT_EQ(AnswerAfterAScope("spec_sync_fixed"), FOREACTOR_SPECULATION_REQUESTED);
}

TEST_F(ScopeSpeculationTest, GraphSwitchedOffBySettingsNever) {
  auto graph = BuildStatLoop("spec_invalid");
  StatState state{"."};
  testing::internal::CaptureStderr();
  RunScope(graph, state, ".", 1);
  (void)testing::internal::GetCapturedStderr();
  EXPECT_EQ(graph.ScopeSpeculation(), FOREACTOR_SPECULATION_NONE);
}

TEST_F(ScopeSpeculationTest, SuspendedAfterMispredictionsUntilTheGraphIsRightAgain) {
  auto graph = BuildStatLoop("spec_suspend");
  StatState state{"."};
  // The graph predicts "." every time; the program stats "/" instead.
  RunScope(graph, state, "/", 8);
  EXPECT_EQ(graph.ScopeSpeculation(), FOREACTOR_SPECULATION_NONE);
  // Following the program right for a long run resumes speculation.
  RunScope(graph, state, ".", 64);
  EXPECT_EQ(graph.ScopeSpeculation(), FOREACTOR_SPECULATION_AUTOMATIC);
}

TEST_F(ScopeSpeculationTest, NoneWhileAGraphOfStatsFindsThemCached) {
  auto graph = BuildStatLoop("spec_cached_stats");
  StatState state{"."};
  // Each stat takes about a microsecond; a preempted one may look slow,
  // so a few scopes are allowed.
  for (int scope = 0; scope < 20 && graph.ScopeSpeculation() != FOREACTOR_SPECULATION_NONE;
       ++scope) {
    RunScope(graph, state, ".", 400);
  }
  EXPECT_EQ(graph.ScopeSpeculation(), FOREACTOR_SPECULATION_NONE);
  // An exact depth still asks for every scope (whose stats are then left
  // to the program and timed).
  auto exact = BuildStatLoop("spec_cached_exact");
  RunScope(exact, state, ".", 400);
  EXPECT_EQ(exact.ScopeSpeculation(), FOREACTOR_SPECULATION_REQUESTED);
}

TEST_F(ScopeSpeculationTest, ForeactorOffNever) {
  auto graph = BuildStatLoop("spec_off");
  unsetenv("FOREACTOR");
  foreactor::ReloadSettingsForTesting();
  EXPECT_EQ(graph.ScopeSpeculation(), FOREACTOR_SPECULATION_NONE);
  setenv("FOREACTOR", "1", 1);
  foreactor::ReloadSettingsForTesting();
  EXPECT_EQ(graph.ScopeSpeculation(), FOREACTOR_SPECULATION_AUTOMATIC);
}

// The fraction of `units` gate answers that were "with a scope".
// Asks the gate of `graph` before each of `units` units that take no time;
// with `waits_every` above 0, every that many units the thread sleeps (a
// voluntary context switch, as a unit that reads from a device makes: the
// gate runs no trial after a plain stretch without one).  Returns how many
// units had a scope.
int GateOpenCount(const foreactor_graph* graph, int units, int waits_every = 0) {
  int open = 0;
  for (int i = 0; i < units; ++i) {
    open += foreactor_scope_gate(graph);
    if (waits_every > 0 && i % waits_every == 0) usleep(1);
  }
  return open;
}

TEST_F(ScopeSpeculationTest, GateOpensEveryUnitWhenScopesAreRequested) {
  auto fixed = BuildStatLoop("spec_depth4");
  EXPECT_EQ(GateOpenCount(fixed.handle(), 10000), 10000);
  auto check = BuildStatLoop("spec_check");
  EXPECT_EQ(GateOpenCount(check.handle(), 10000), 10000);
  auto sync = BuildStatLoop("spec_sync_fixed");
  EXPECT_EQ(GateOpenCount(sync.handle(), 10000), 10000);
}

TEST_F(ScopeSpeculationTest, GateNeverOpensWithoutSpeculation) {
  EXPECT_EQ(GateOpenCount(nullptr, 1000), 0);
  auto depth0 = BuildStatLoop("spec_depth0");
  EXPECT_EQ(GateOpenCount(depth0.handle(), 100000), 0);
  auto sync = BuildStatLoop("spec_sync_automatic");
  EXPECT_EQ(GateOpenCount(sync.handle(), 100000), 0);
  auto off = BuildStatLoop("spec_gate_off");
  unsetenv("FOREACTOR");
  foreactor::ReloadSettingsForTesting();
  EXPECT_EQ(GateOpenCount(off.handle(), 100000), 0);
  setenv("FOREACTOR", "1", 1);
  foreactor::ReloadSettingsForTesting();
}

TEST_F(ScopeSpeculationTest, GateAskedPerStretch) {
  uint32_t units = 0;
  EXPECT_EQ(foreactor_scope_gate_units(nullptr, &units), 0);
  EXPECT_EQ(units, UINT32_MAX);  // no graph: the answer never changes
  EXPECT_EQ(foreactor_scope_gate_units(nullptr, nullptr), 0);
  // A fixed depth asks for every scope: one answer for every unit.
  auto fixed = BuildStatLoop("spec_gate_units_depth4");
  EXPECT_EQ(foreactor_scope_gate_units(fixed.handle(), &units), 1);
  EXPECT_EQ(units, 1u);  // the first question makes the gate
  EXPECT_EQ(foreactor_scope_gate_units(fixed.handle(), &units), 1);
  EXPECT_GT(units, 1u << 30);  // the rest of a segment of UINT32_MAX units
  // The automatic depth opens with a scope: the opening's first stretch
  // in one answer, measured (the depth controller times scopes).
  auto automatic = BuildStatLoop("spec_gate_units_automatic");
  EXPECT_EQ(foreactor_scope_gate_units(automatic.handle(), &units), 1);
  EXPECT_EQ(units, 1u);  // the first question makes the gate
  EXPECT_EQ(foreactor_scope_gate_measuring(automatic.handle()), 1);
  EXPECT_EQ(foreactor_scope_gate_units(automatic.handle(), &units), 1);
  EXPECT_EQ(units, foreactor::ScopeGate::kInitialStretchUnits - 1);
  EXPECT_EQ(foreactor_scope_gate_measuring(automatic.handle()), 1);
  EXPECT_EQ(foreactor_scope_gate_measuring(nullptr), 0);
  // Foreactor off: never, for good.
  auto off = BuildStatLoop("spec_gate_units_off");
  unsetenv("FOREACTOR");
  foreactor::ReloadSettingsForTesting();
  EXPECT_EQ(foreactor_scope_gate_units(off.handle(), &units), 0);
  EXPECT_EQ(units, UINT32_MAX);
  setenv("FOREACTOR", "1", 1);
  foreactor::ReloadSettingsForTesting();
}

TEST_F(ScopeSpeculationTest, GateRetriesASuspendedGraphAfterAnIdleRest) {
  // Suspended, the graph answers "nothing to issue", and a gate that opens
  // no scope would never see a correct prediction to resume it.
  auto graph = BuildStatLoop("spec_gate_retry");
  StatState state{"."};
  RunScope(graph, state, "/", 8);
  ASSERT_EQ(graph.ScopeSpeculation(), FOREACTOR_SPECULATION_NONE);
  // An idle rest of 64 stretches, the retry, then a pair whose plain
  // stretches lengthen (these units take little time) before its trial
  // opens.
  EXPECT_GT(GateOpenCount(graph.handle(), 400000, 4096), 0);
  EXPECT_EQ(graph.ScopeSpeculation(), FOREACTOR_SPECULATION_AUTOMATIC);
}

TEST_F(ScopeSpeculationTest, GateRunsNoTrialForAThreadThatNeverWaits) {
  // The same suspended graph, units served from memory: the retry still
  // comes, but no trial, since no plain stretch waited for anything.
  auto graph = BuildStatLoop("spec_gate_no_waits");
  StatState state{"."};
  RunScope(graph, state, "/", 8);
  ASSERT_EQ(graph.ScopeSpeculation(), FOREACTOR_SPECULATION_NONE);
  EXPECT_EQ(GateOpenCount(graph.handle(), 400000), 0);
  EXPECT_EQ(graph.ScopeSpeculation(), FOREACTOR_SPECULATION_AUTOMATIC);
}

TEST_F(ScopeSpeculationTest, GateOpensWithAScopeWithTheAutomaticDepth) {
  // The opening's first stretch of units runs with a scope.
  auto graph = BuildStatLoop("spec_gate_automatic");
  EXPECT_EQ(GateOpenCount(graph.handle(), foreactor::ScopeGate::kInitialStretchUnits),
            static_cast<int>(foreactor::ScopeGate::kInitialStretchUnits));
  foreactor_scope_gate_exclude(graph.handle(), 1000);  // accepted at any time
}

}  // namespace
