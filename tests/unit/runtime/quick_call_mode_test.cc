// Unit tests of QuickCallMode: which lookups (calls of the mode's kind)
// are probes, when they are served at the frontier, and when speculation
// comes back.
#include "runtime/quick_call_mode.h"

#include <gtest/gtest.h>

namespace foreactor {
namespace {

constexpr uint64_t kFast = QuickCallMode::kFastNanoseconds / 5;
constexpr uint64_t kSlow = QuickCallMode::kFastNanoseconds * 20;

// Feeds `count` probes taking `nanoseconds`; returns the mode changes.
int Feed(QuickCallMode& mode, int count, uint64_t nanoseconds) {
  int changes = 0;
  for (int i = 0; i < count; ++i) changes += mode.NoteTimedCall(nanoseconds) ? 1 : 0;
  return changes;
}

// Lookups the peek head offers until ProbeThis() says yes (that one included).
int LookupsPerProbe(QuickCallMode& mode) {
  for (int offered = 1; offered <= 1000; ++offered) {
    if (mode.ProbeThis()) return offered;
  }
  return -1;
}

TEST(QuickCallModeTest, UntilALookupIsSlowEveryOneIsAProbe) {
  QuickCallMode mode;
  const int needed = static_cast<int>(mode.streak_needed());
  for (int lookup = 0; lookup < needed - 1; ++lookup) {
    ASSERT_EQ(LookupsPerProbe(mode), 1) << "lookup " << lookup;
    mode.NoteTimedCall(kFast);
  }
  ASSERT_EQ(LookupsPerProbe(mode), 1);
  mode.NoteTimedCall(kSlow);
  EXPECT_FALSE(mode.serving());
  EXPECT_EQ(LookupsPerProbe(mode), static_cast<int>(QuickCallMode::kProbeInterval));
}

TEST(QuickCallModeTest, LookupsQuickFromTheStartAreServedAfterOneStreak) {
  QuickCallMode mode;
  const int needed = static_cast<int>(mode.streak_needed());
  for (int lookup = 0; lookup < needed; ++lookup) {
    ASSERT_EQ(LookupsPerProbe(mode), 1) << "lookup " << lookup;
    EXPECT_FALSE(mode.serving());
    mode.NoteTimedCall(kFast);
  }
  EXPECT_TRUE(mode.serving());
  // Back to speculating later, probes are one in eight again.
  Feed(mode, static_cast<int>(QuickCallMode::kSlowToLeave), kSlow);
  ASSERT_FALSE(mode.serving());
  EXPECT_EQ(LookupsPerProbe(mode), static_cast<int>(QuickCallMode::kProbeInterval));
}

TEST(QuickCallModeTest, OneLookupInEightIsAProbe) {
  QuickCallMode mode;
  mode.NoteTimedCall(kSlow);  // the start's probing ends
  for (int probe = 0; probe < 5; ++probe) {
    EXPECT_EQ(LookupsPerProbe(mode), static_cast<int>(QuickCallMode::kProbeInterval));
  }
}

TEST(QuickCallModeTest, OneServedLookupInFourIsTimed) {
  QuickCallMode mode;
  int timed = 0;
  for (int i = 0; i < 400; ++i) timed += mode.CheckThisServed() ? 1 : 0;
  EXPECT_EQ(timed, 400 / static_cast<int>(QuickCallMode::kServedCheckInterval));
}

TEST(QuickCallModeTest, AStreakOfFastProbesSwitchesToServing) {
  QuickCallMode mode;
  const int needed = static_cast<int>(mode.streak_needed());
  EXPECT_EQ(Feed(mode, needed - 1, kFast), 0);
  EXPECT_FALSE(mode.serving());
  EXPECT_EQ(Feed(mode, 1, kFast), 1);
  EXPECT_TRUE(mode.serving());
  EXPECT_EQ(Feed(mode, 10000, kFast), 0) << "fast lookups keep it serving";
  EXPECT_TRUE(mode.serving());
}

TEST(QuickCallModeTest, WhatCountsAsQuickIsTheThresholdItWasGiven) {
  // A buffered write of 20 us: quick for the write mode, slow for lookups.
  const uint64_t twenty_microseconds = 20000;
  QuickCallMode writes(QuickCallMode::kFastWriteNanoseconds);
  QuickCallMode lookups;
  const int needed = static_cast<int>(writes.streak_needed());
  EXPECT_EQ(Feed(writes, needed, twenty_microseconds), 1);
  EXPECT_TRUE(writes.serving());
  EXPECT_EQ(Feed(lookups, needed, twenty_microseconds), 0);
  EXPECT_FALSE(lookups.serving());
}

TEST(QuickCallModeTest, ASlowProbeStartsTheStreakOver) {
  QuickCallMode mode;
  const int needed = static_cast<int>(mode.streak_needed());
  Feed(mode, needed - 1, kFast);
  Feed(mode, 1, kSlow);
  EXPECT_EQ(Feed(mode, needed - 1, kFast), 0);
  EXPECT_FALSE(mode.serving());
  EXPECT_EQ(Feed(mode, 1, kFast), 1);
}

TEST(QuickCallModeTest, SlowLookupsCloseTogetherSwitchSpeculationBackOn) {
  QuickCallMode mode;
  Feed(mode, static_cast<int>(mode.streak_needed()), kFast);
  ASSERT_TRUE(mode.serving());
  const int slow_to_leave = static_cast<int>(QuickCallMode::kSlowToLeave);
  for (int slow = 1; slow < slow_to_leave; ++slow) {
    EXPECT_EQ(Feed(mode, 1, kSlow), 0) << "a few alone may be the thread preempted";
    EXPECT_EQ(Feed(mode, static_cast<int>(QuickCallMode::kSlowWindow) / 8, kFast), 0);
  }
  EXPECT_EQ(Feed(mode, 1, kSlow), 1);
  EXPECT_FALSE(mode.serving());
}

TEST(QuickCallModeTest, RareSlowLookupsKeepItServing) {
  QuickCallMode mode;
  Feed(mode, static_cast<int>(mode.streak_needed()), kFast);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(Feed(mode, 1, kSlow), 0);
    Feed(mode, static_cast<int>(QuickCallMode::kSlowWindow), kFast);
  }
  EXPECT_TRUE(mode.serving());
}

TEST(QuickCallModeTest, AQuickReturnDoublesTheStreakNeededAndALongStayResetsIt) {
  QuickCallMode mode;
  const unsigned first = mode.streak_needed();
  Feed(mode, static_cast<int>(first), kFast);
  Feed(mode, 3, kFast);
  Feed(mode, static_cast<int>(QuickCallMode::kSlowToLeave), kSlow);  // back at once
  EXPECT_EQ(mode.streak_needed(), 2 * first);
  Feed(mode, static_cast<int>(2 * first), kFast);
  ASSERT_TRUE(mode.serving());
  Feed(mode, static_cast<int>(QuickCallMode::kLongStayPerNeeded * 2 * first), kFast);
  Feed(mode, static_cast<int>(QuickCallMode::kSlowToLeave), kSlow);
  EXPECT_EQ(mode.streak_needed(), first);
}

TEST(QuickCallModeTest, TheStreakNeededStopsGrowingAtItsMaximum) {
  QuickCallMode mode;
  for (int round = 0; round < 20; ++round) {
    Feed(mode, static_cast<int>(mode.streak_needed()), kFast);
    ASSERT_TRUE(mode.serving());
    Feed(mode, static_cast<int>(QuickCallMode::kSlowToLeave), kSlow);
  }
  EXPECT_EQ(mode.streak_needed(), QuickCallMode::kMaxFastStreak);
}

TEST(QuickCallModeTest, SlowProbesInARowMakeProbesRarer) {
  QuickCallMode mode;
  Feed(mode, static_cast<int>(QuickCallMode::kSlowStreak), kSlow);
  EXPECT_EQ(LookupsPerProbe(mode), static_cast<int>(QuickCallMode::kColdProbeInterval));
  Feed(mode, 1, kFast);  // a fast one: probes as often as before
  EXPECT_EQ(LookupsPerProbe(mode), static_cast<int>(QuickCallMode::kProbeInterval));
}

}  // namespace
}  // namespace foreactor
