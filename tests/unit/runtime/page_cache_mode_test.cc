// Tests of PageCacheMode: which reads are probed, when reads are served
// from the page cache, when that stops, and when a scope leaves its graph.
#include "runtime/page_cache_mode.h"

#include <gtest/gtest.h>

namespace foreactor {
namespace {

using Mode = PageCacheMode;
constexpr uint64_t kSmallRead = 4096;  // counts as one hit unit

// Probes hits of `bytes` until the mode switches to serving from the
// cache; returns how many probes that took.
unsigned SwitchToServing(Mode& mode, uint64_t bytes) {
  unsigned probes = 1;
  while (!mode.NoteProbe(true, bytes)) ++probes;
  return probes;
}

TEST(PageCacheModeTest, HitsWorthTheInitialStreakSwitchToServing) {
  Mode mode;
  EXPECT_FALSE(mode.serving_from_cache());
  EXPECT_EQ(SwitchToServing(mode, kSmallRead), Mode::kInitialCachedStreak);
  EXPECT_TRUE(mode.serving_from_cache());
}

// The streak is an amount of data: a read of 16 units counts 16.
TEST(PageCacheModeTest, LargeReadsSwitchAfterTheSameAmountOfData) {
  Mode mode;
  EXPECT_EQ(SwitchToServing(mode, 16 * Mode::kCacheHitUnitBytes), Mode::kInitialCachedStreak / 16);
}

TEST(PageCacheModeTest, AMissStartsTheStreakOver) {
  Mode mode;
  for (unsigned i = 1; i < Mode::kInitialCachedStreak; ++i) {
    ASSERT_FALSE(mode.NoteProbe(true, kSmallRead));
  }
  EXPECT_FALSE(mode.NoteProbe(false, kSmallRead));
  EXPECT_EQ(SwitchToServing(mode, kSmallRead), Mode::kInitialCachedStreak);
}

TEST(PageCacheModeTest, AfterAStreakOfMissesOnlySomeReadsAreProbedUntilAHit) {
  Mode mode;
  for (unsigned i = 0; i < Mode::kColdMissStreak; ++i) {
    ASSERT_TRUE(mode.ProbeWanted());
    mode.NoteProbe(false, kSmallRead);
  }
  unsigned probed = 0;
  for (unsigned i = 0; i < 10 * Mode::kColdProbeInterval; ++i) probed += mode.ProbeWanted();
  EXPECT_EQ(probed, 10u);
  mode.NoteProbe(true, kSmallRead);
  for (unsigned i = 0; i < 3; ++i) EXPECT_TRUE(mode.ProbeWanted());
}

TEST(PageCacheModeTest, OneServedReadInTheIntervalIsChecked) {
  Mode mode;
  SwitchToServing(mode, kSmallRead);
  unsigned checked = 0;
  for (unsigned i = 0; i < 5 * Mode::kCacheCheckInterval; ++i) checked += mode.CheckThisRead();
  EXPECT_EQ(checked, 5u);
}

// A file cached only in part: each quick return to speculating doubles the
// streak needed, up to the maximum; a long stay resets it.
TEST(PageCacheModeTest, QuickReturnsDoubleTheStreakNeededAndALongStayResetsIt) {
  Mode mode;
  unsigned expected = Mode::kInitialCachedStreak;
  for (int round = 0; round < 10; ++round) {
    SwitchToServing(mode, kSmallRead);
    mode.LeaveServing();  // no read served since the switch: quick
    EXPECT_FALSE(mode.serving_from_cache());
    expected = std::min(2 * expected, Mode::kMaxCachedStreak);
    EXPECT_EQ(mode.cached_streak_needed(), expected) << "round " << round;
  }
  SwitchToServing(mode, kSmallRead);
  // Long: twice the streak needed of checked reads.
  for (unsigned i = 0; i < 2 * mode.cached_streak_needed() * Mode::kCacheCheckInterval; ++i)
    mode.NoteServed();
  mode.LeaveServing();
  EXPECT_EQ(mode.cached_streak_needed(), Mode::kInitialCachedStreak);
}

// Reads of which one in eleven misses (LevelDB's level-0 Gets: a dozen
// cached blocks, then one from the device; now and then a run of Gets finds
// every block cached and switches the mode), served with one read in the
// interval checked: each stay ends at the first checked miss, some
// eighty reads later, which is quick, so the streak needed grows to the
// maximum and the mode stops flipping.  (Counted in reads served rather
// than checked, such a stay was long and reset the streak each time.)
TEST(PageCacheModeTest, AFewPercentOfMissesStopTheFlipping) {
  Mode mode;
  uint64_t read = 0;
  for (int round = 0; round < 12; ++round) {
    SwitchToServing(mode, kSmallRead);  // a run of Gets that found every block cached
    for (;;) {
      const bool miss = ++read % 11 == 0;
      if (mode.CheckThisRead() && miss) break;
      mode.NoteServed();
    }
    mode.LeaveServing();
  }
  EXPECT_EQ(mode.cached_streak_needed(), Mode::kMaxCachedStreak);
}

TEST(PageCacheModeTest, ALongServedRunInOneScopeLeavesTheGraphAndANewScopeStartsOver) {
  Mode mode;
  SwitchToServing(mode, kSmallRead);
  const unsigned run = Mode::kServedPerNeededHitBeforeLeavingToCache * Mode::kInitialCachedStreak;
  for (unsigned i = 1; i < run; ++i) ASSERT_FALSE(mode.ServedRunLeavesScope());
  EXPECT_TRUE(mode.ServedRunLeavesScope());
  mode.StartScope();
  EXPECT_FALSE(mode.ServedRunLeavesScope());
}

// A read that returned its bytes with RWF_NOWAIT but took longer than a
// copy from memory can waited for the device; one slow read alone may be
// the thread preempted.
TEST(PageCacheModeTest, ASlowReadRightAfterAnotherWaitedForTheDevice) {
  Mode mode;
  const uint64_t bound = Mode::kMemoryReadNanoseconds + 8192 / Mode::kMemoryReadBytesPerNanosecond;
  EXPECT_TRUE(mode.FromMemory(8192, 3000));
  EXPECT_TRUE(mode.FromMemory(8192, bound));
  EXPECT_TRUE(mode.FromMemory(8192, bound + 1)) << "a slow read alone";
  EXPECT_TRUE(mode.FromMemory(8192, 3000));
  EXPECT_TRUE(mode.FromMemory(8192, 150000));
  EXPECT_FALSE(mode.FromMemory(8192, 140000)) << "a second slow read in a row";
  EXPECT_FALSE(mode.FromMemory(8192, 310000));
  EXPECT_TRUE(mode.FromMemory(8192, 3000));
}

// The bound grows with the bytes copied: a 1 MiB read from memory takes
// far longer than an 8 KiB one.
TEST(PageCacheModeTest, LargeReadsMayTakeLongerFromMemory) {
  Mode mode;
  EXPECT_TRUE(mode.FromMemory(1 << 20, 300000));
  EXPECT_TRUE(mode.FromMemory(1 << 20, 300000)) << "300 us for 1 MiB is a copy";
  EXPECT_TRUE(mode.FromMemory(8192, 300000));
  EXPECT_FALSE(mode.FromMemory(8192, 300000)) << "not for 8 KiB";
}

TEST(PageCacheModeTest, NowaitUnsupportedIsRemembered) {
  Mode mode;
  EXPECT_FALSE(mode.nowait_unsupported());
  mode.NoteNowaitUnsupported();
  EXPECT_TRUE(mode.nowait_unsupported());
}

}  // namespace
}  // namespace foreactor
