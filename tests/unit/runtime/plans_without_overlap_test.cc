// Tests of foreactor::PlansWithoutOverlap, which lets a plugin skip planning
// the units whose last plan was not worth a scope: a remembered key is
// skipped a bounded number of times, then planned again; keys are kept per
// generation; PlanUnit() asks the scope gate first, and keeps the
// planner's exceptions, worthwhile plans and plans that lacked something
// out of the memory.  And of
// foreactor::NoThrow.
#include "foreactor/foreactor.hpp"

#include <stdlib.h>

#include <new>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "config/settings.h"

namespace {

using foreactor::PlansWithoutOverlap;

struct NoState {};

// A graph of one weak read, enough for a scope gate to be asked.
foreactor::plugin::Graph<NoState> BuildGraph(const char* name) {
  foreactor::GraphBuilder<NoState> builder(name);
  auto read = builder.Syscall("read", FOREACTOR_CALL_PREAD,
                              [](NoState&, const foreactor::Visit&, foreactor_call& call) {
                                call = foreactor::Pread(0, 1, 0);
                                return FOREACTOR_READY;
                              });
  builder.start().Then(read, foreactor::kWeak).Then(builder.end());
  return builder.Build();
}

class PlansWithoutOverlapTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("FOREACTOR", "1", 1);
    setenv("FOREACTOR_ENGINE", "threads", 1);
    // An exact depth: the gate asks for a scope before every unit.
    setenv("FOREACTOR_DEPTH_plans_exact", "4", 1);
    setenv("FOREACTOR_EXACT_DEPTH_plans_exact", "1", 1);
    // Depth 0: the gate never asks for one.
    setenv("FOREACTOR_DEPTH_plans_depth0", "0", 1);
    foreactor::ReloadSettingsForTesting();
  }
  static void TearDownTestSuite() {
    for (const char* name : {"FOREACTOR", "FOREACTOR_ENGINE", "FOREACTOR_DEPTH_plans_exact",
                             "FOREACTOR_EXACT_DEPTH_plans_exact", "FOREACTOR_DEPTH_plans_depth0"})
      unsetenv(name);
    foreactor::ReloadSettingsForTesting();
  }
};

TEST_F(PlansWithoutOverlapTest, ARememberedKeyIsSkippedABoundedNumberOfTimes) {
  PlansWithoutOverlap plans;
  EXPECT_FALSE(plans.Skip("user42", 0));
  plans.Remember("user42", 0);
  for (int skip = 0; skip < PlansWithoutOverlap::kSkipsPerPlan; ++skip)
    EXPECT_TRUE(plans.Skip("user42", 0)) << skip;
  // Then it is planned again, and stays so until remembered again.
  EXPECT_FALSE(plans.Skip("user42", 0));
  EXPECT_FALSE(plans.Skip("user42", 0));
  plans.Remember("user42", 0);
  EXPECT_TRUE(plans.Skip("user42", 0));
}

TEST_F(PlansWithoutOverlapTest, KeysAreRememberedPerGenerationAndApart) {
  PlansWithoutOverlap plans;
  plans.Remember("user42", 7);
  EXPECT_FALSE(plans.Skip("user42", 8));  // a new generation: plans are stale
  EXPECT_FALSE(plans.Skip("user43", 7));
  EXPECT_FALSE(plans.Skip(std::string("user42\0", 7), 7));
  EXPECT_TRUE(plans.Skip("user42", 7));
}

TEST_F(PlansWithoutOverlapTest, PlanUnitPlansAgainOnlyAfterTheSkips) {
  auto graph = BuildGraph("plans_exact");
  PlansWithoutOverlap plans;
  int planned = 0;
  const auto not_worth = [&] {
    ++planned;
    return PlansWithoutOverlap::Outcome::kPlain;
  };
  EXPECT_FALSE(plans.PlanUnit(graph, "user1", 0, not_worth));
  EXPECT_EQ(planned, 1);
  for (int skip = 0; skip < PlansWithoutOverlap::kSkipsPerPlan; ++skip)
    EXPECT_FALSE(plans.PlanUnit(graph, "user1", 0, not_worth));
  EXPECT_EQ(planned, 1);
  EXPECT_FALSE(plans.PlanUnit(graph, "user1", 0, not_worth));
  EXPECT_EQ(planned, 2);
}

TEST_F(PlansWithoutOverlapTest, PlanUnitNeverSkipsAUnitWorthAScope) {
  auto graph = BuildGraph("plans_exact");
  PlansWithoutOverlap plans;
  int planned = 0;
  for (int unit = 0; unit < 3 * PlansWithoutOverlap::kSkipsPerPlan; ++unit) {
    EXPECT_TRUE(plans.PlanUnit(graph, "user2", 0, [&] {
      ++planned;
      return PlansWithoutOverlap::Outcome::kScope;
    }));
  }
  EXPECT_EQ(planned, 3 * PlansWithoutOverlap::kSkipsPerPlan);
}

TEST_F(PlansWithoutOverlapTest, PlanUnitKeepsAThrowingPlannerOutOfTheMemory) {
  auto graph = BuildGraph("plans_exact");
  PlansWithoutOverlap plans;
  int planned = 0;
  const auto throwing = [&]() -> PlansWithoutOverlap::Outcome {
    ++planned;
    throw std::bad_alloc();
  };
  EXPECT_FALSE(plans.PlanUnit(graph, "user3", 0, throwing));
  EXPECT_FALSE(plans.PlanUnit(graph, "user3", 0, throwing));
  EXPECT_EQ(planned, 2);  // not remembered: planned each time
}

TEST_F(PlansWithoutOverlapTest, PlanUnitForgetsAPlanThatLackedSomething) {
  auto graph = BuildGraph("plans_exact");
  PlansWithoutOverlap plans;
  int planned = 0;
  for (int unit = 0; unit < 3; ++unit) {
    EXPECT_FALSE(plans.PlanUnit(graph, "user5", 0, [&] {
      ++planned;
      return PlansWithoutOverlap::Outcome::kPlainOnce;
    }));
  }
  EXPECT_EQ(planned, 3);
}

TEST_F(PlansWithoutOverlapTest, PlanUnitDoesNotPlanWhenTheGateSaysPlain) {
  auto graph = BuildGraph("plans_depth0");
  PlansWithoutOverlap plans;
  int planned = 0;
  for (int unit = 0; unit < 1000; ++unit) {
    EXPECT_FALSE(plans.PlanUnit(graph, "user4", 0, [&] {
      ++planned;
      return PlansWithoutOverlap::Outcome::kScope;
    }));
  }
  EXPECT_EQ(planned, 0);
}

TEST(NoThrowTest, RunsTheActionAndDropsWhatItThrows) {
  int runs = 0;
  foreactor::NoThrow([&] { ++runs; });
  foreactor::NoThrow([&] {
    ++runs;
    throw std::runtime_error("lost prediction");
  });
  EXPECT_EQ(runs, 2);
}

}  // namespace
