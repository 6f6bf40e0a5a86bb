// Unit tests of ServingStreak: quick returns from serving double the streak
// needed up to the maximum, a long stay resets it.
#include "runtime/serving_streak.h"

#include <gtest/gtest.h>

namespace foreactor {
namespace {

TEST(ServingStreakTest, StartsAtTheInitialStreak) {
  ServingStreak streak(16, 1024);
  EXPECT_EQ(streak.needed(), 16u);
}

TEST(ServingStreakTest, QuickReturnsDoubleUpToTheMaximum) {
  ServingStreak streak(16, 100);
  streak.NoteStayEnded(0, 4);
  EXPECT_EQ(streak.needed(), 32u);
  streak.NoteStayEnded(4 * 32 - 1, 4);  // one short of a long stay
  EXPECT_EQ(streak.needed(), 64u);
  streak.NoteStayEnded(1, 4);
  EXPECT_EQ(streak.needed(), 100u);  // capped, not 128
  streak.NoteStayEnded(1, 4);
  EXPECT_EQ(streak.needed(), 100u);
}

TEST(ServingStreakTest, ALongStayResets) {
  ServingStreak streak(16, 1024);
  streak.NoteStayEnded(0, 4);
  streak.NoteStayEnded(0, 4);
  ASSERT_EQ(streak.needed(), 64u);
  streak.NoteStayEnded(4 * 64, 4);  // exactly long enough
  EXPECT_EQ(streak.needed(), 16u);
}

}  // namespace
}  // namespace foreactor
