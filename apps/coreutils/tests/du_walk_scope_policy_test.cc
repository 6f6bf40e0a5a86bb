// Tests of du_walk::ScopePolicy (apps/coreutils/plugins/du_walk_scope_policy.h)
// with a fake clock and fake runtime answers: when the walk's scope opens,
// stays open and closes.  Built and run by test_du_walk_scope_policy.py.
#include "du_walk_scope_policy.h"

#include <cstdint>

#include <gtest/gtest.h>

namespace {

using du_walk::ScopePolicy;
using Action = ScopePolicy::Action;

// Drives the policy as du_walk_before_read() does, one fts_read() at a time,
// with a clock that advances by the cost of each read: `plain_cost` without
// a scope, `scope_cost` with one.
class Walk {
 public:
  Walk(uint64_t plain_cost, uint64_t scope_cost, foreactor_speculation answer)
      : plain_cost_(plain_cost), scope_cost_(scope_cost), answer_(answer) {}

  // Makes `reads` fts_read calls; returns how many ran inside a scope.
  uint64_t Read(uint64_t reads) {
    uint64_t in_scope = 0;
    for (uint64_t i = 0; i < reads; ++i) {
      if (!policy_.QuietRead()) {
        const Action action = policy_.Step(
            open_, [this] { return answer_; }, [this] { return clock_; });
        if (action == Action::kOpen) open_ = true;
        if (action == Action::kClose) open_ = false;
      }
      clock_ += open_ ? scope_cost_ : plain_cost_;
      if (open_) in_scope++;
    }
    return in_scope;
  }
  bool open() const { return open_; }
  void set_scope_cost(uint64_t cost) { scope_cost_ = cost; }
  void set_plain_cost(uint64_t cost) { plain_cost_ = cost; }
  // Time passes in work outside the graph (a directory read), told to the
  // policy as du_walk_attach.c does.
  void ReadDirectory(uint64_t nanoseconds) {
    clock_ += nanoseconds;
    policy_.ExcludeTime(nanoseconds);
  }
  void set_answer(foreactor_speculation answer) { answer_ = answer; }

 private:
  ScopePolicy policy_;
  uint64_t clock_ = 1000;
  uint64_t plain_cost_;
  uint64_t scope_cost_;
  foreactor_speculation answer_;
  bool open_ = false;
};

constexpr uint64_t kStretch = ScopePolicy::kStretchReads;

TEST(DuWalkScopePolicyTest, FirstStretchRunsWithoutScope) {
  Walk walk(100, 50, FOREACTOR_SPECULATION_AUTOMATIC);
  EXPECT_EQ(walk.Read(kStretch), 0u);
  EXPECT_FALSE(walk.open());
}

TEST(DuWalkScopePolicyTest, ScopeThatOnlyCostsIsLeftSoonAndTriedRarely) {
  // Hot cache: a read costs twice as much inside a scope.
  Walk walk(100, 200, FOREACTOR_SPECULATION_AUTOMATIC);
  const uint64_t reads = 200 * kStretch;
  const uint64_t in_scope = walk.Read(reads);
  EXPECT_GT(in_scope, 0u);  // trials happen: the runtime keeps learning
  // Each losing trial stops at the first checkpoint past the plain time.
  EXPECT_LT(in_scope, reads / 50);
}

TEST(DuWalkScopePolicyTest, TrialFarBehindThePaceStopsAtItsFirstCheckpoint) {
  Walk walk(100, 200, FOREACTOR_SPECULATION_AUTOMATIC);
  walk.Read(kStretch);
  EXPECT_EQ(walk.Read(kStretch), ScopePolicy::kTrialCheckReads);
  EXPECT_FALSE(walk.open());
}

TEST(DuWalkScopePolicyTest, TrialSlightlyBehindThePaceRunsUntilItCannotWin) {
  // 10% slower than plain: within the pace margin, lost at the checkpoint
  // where it has used up the winning time.
  Walk walk(100, 110, FOREACTOR_SPECULATION_AUTOMATIC);
  walk.Read(kStretch);
  const uint64_t in_scope = walk.Read(kStretch);
  EXPECT_GT(in_scope, ScopePolicy::kTrialCheckReads);
  EXPECT_LT(in_scope, kStretch);
  EXPECT_FALSE(walk.open());
}

TEST(DuWalkScopePolicyTest, ScopeThatPaysIsKeptAfterTwoWins) {
  // Cold cache: a read costs half as much inside a scope.
  Walk walk(100, 50, FOREACTOR_SPECULATION_AUTOMATIC);
  const uint64_t reads = 100 * kStretch;
  const uint64_t in_scope = walk.Read(reads);
  // Plain, trial, plain, trial, then kept but for a plain stretch in every
  // kRecheckStretches + 2.
  EXPECT_GT(in_scope, reads * 8 / 10);
}

TEST(DuWalkScopePolicyTest, OneWinAfterANoisyPlainStretchDoesNotKeepTheScope) {
  // The first plain stretch is slow (the walk was preempted), so the first
  // trial wins; the next pair shows the scope only costs.
  Walk walk(300, 200, FOREACTOR_SPECULATION_AUTOMATIC);
  EXPECT_EQ(walk.Read(kStretch), 0u);
  walk.set_plain_cost(100);
  const uint64_t in_scope = walk.Read(20 * kStretch);
  EXPECT_LT(in_scope, 3 * kStretch);
  EXPECT_FALSE(walk.open());
}

TEST(DuWalkScopePolicyTest, DirectoryReadsDoNotCountInTheComparison) {
  // A long directory read in the plain stretch would make a costly trial win.
  Walk walk(100, 200, FOREACTOR_SPECULATION_AUTOMATIC);
  walk.Read(kStretch / 2);
  walk.ReadDirectory(10 * 100 * kStretch);
  walk.Read(kStretch / 2);
  const uint64_t in_scope = walk.Read(kStretch);
  EXPECT_LT(in_scope, kStretch);  // aborted before its end
  EXPECT_FALSE(walk.open());
}

TEST(DuWalkScopePolicyTest, KeptScopeIsLeftWhenTheRuntimeWouldIssueNothing) {
  Walk walk(100, 50, FOREACTOR_SPECULATION_AUTOMATIC);
  walk.Read(5 * kStretch);
  ASSERT_TRUE(walk.open());
  walk.set_answer(FOREACTOR_SPECULATION_NONE);
  walk.Read(kStretch + 1);
  EXPECT_FALSE(walk.open());
  // It rests at least kInitialRestStretches stretches.
  EXPECT_EQ(walk.Read(ScopePolicy::kInitialRestStretches * kStretch), 0u);
}

TEST(DuWalkScopePolicyTest, ScopeThatStopsPayingIsLeftAtTheRecheck) {
  Walk walk(100, 50, FOREACTOR_SPECULATION_AUTOMATIC);
  walk.Read(5 * kStretch);
  ASSERT_TRUE(walk.open());
  walk.set_scope_cost(200);
  walk.Read((ScopePolicy::kRecheckStretches + 3) * kStretch);
  EXPECT_FALSE(walk.open());
}

TEST(DuWalkScopePolicyTest, RequestedScopeIsAlwaysOpen) {
  // A fixed depth: the configuration asked for scopes, costly or not.
  Walk walk(100, 200, FOREACTOR_SPECULATION_REQUESTED);
  EXPECT_EQ(walk.Read(10 * kStretch), 10 * kStretch);
}

TEST(DuWalkScopePolicyTest, NothingToIssueAtStartRestsFirst) {
  Walk walk(100, 50, FOREACTOR_SPECULATION_NONE);
  EXPECT_EQ(walk.Read(ScopePolicy::kInitialRestStretches * kStretch), 0u);
}

}  // namespace
