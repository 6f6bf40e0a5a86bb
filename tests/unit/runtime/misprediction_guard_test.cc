// Tests of MispredictionGuard: when mispredictions suspend speculation and
// when correct shadow predictions resume it.
#include "runtime/misprediction_guard.h"

#include <gtest/gtest.h>

namespace foreactor {
namespace {

using Guard = MispredictionGuard;

// Mispredicts until the guard says to suspend, then suspends; returns how
// many mispredictions that took.
unsigned SuspendByMispredictions(Guard& guard) {
  unsigned count = 0;
  while (!guard.MispredictionSuspends(true)) ++count;
  guard.Suspend();
  return count + 1;
}

// Feeds correct shadow predictions until the guard resumes; returns how many.
unsigned ResumeByCorrectPredictions(Guard& guard) {
  unsigned count = 1;
  while (!guard.ShadowPredictionResumes(true)) ++count;
  guard.Resume();
  return count;
}

TEST(MispredictionGuardTest, TheLimitOfMispredictionsInARowSuspends) {
  Guard guard;
  for (unsigned i = 1; i < Guard::kMispredictionLimit; ++i) {
    EXPECT_FALSE(guard.MispredictionSuspends(true)) << "misprediction " << i;
  }
  EXPECT_TRUE(guard.MispredictionSuspends(true));
  guard.Suspend();
  EXPECT_TRUE(guard.suspended());
}

TEST(MispredictionGuardTest, ACorrectPredictionStartsTheRunOfMispredictionsOver) {
  Guard guard;
  for (unsigned i = 1; i < Guard::kMispredictionLimit; ++i) guard.MispredictionSuspends(true);
  guard.ResetMispredictionRun();
  for (unsigned i = 1; i < Guard::kMispredictionLimit; ++i) {
    EXPECT_FALSE(guard.MispredictionSuspends(true));
  }
  EXPECT_FALSE(guard.suspended());
}

TEST(MispredictionGuardTest, NoSuspensionWhileNotSpeculatingOrAlreadySuspended) {
  Guard guard;
  for (unsigned i = 0; i < 2 * Guard::kMispredictionLimit; ++i) {
    EXPECT_FALSE(guard.MispredictionSuspends(false));
  }
  guard.Suspend();
  EXPECT_FALSE(guard.MispredictionSuspends(true));
}

TEST(MispredictionGuardTest, ARunOfCorrectShadowPredictionsResumesAndAWrongOneRestartsIt) {
  Guard guard;
  SuspendByMispredictions(guard);
  const unsigned run = guard.correct_run_to_resume();
  for (unsigned i = 1; i < run; ++i) EXPECT_FALSE(guard.ShadowPredictionResumes(true));
  EXPECT_FALSE(guard.ShadowPredictionResumes(false));
  for (unsigned i = 1; i < run; ++i) EXPECT_FALSE(guard.ShadowPredictionResumes(true));
  EXPECT_TRUE(guard.ShadowPredictionResumes(true));
  guard.Resume();
  EXPECT_FALSE(guard.suspended());
}

TEST(MispredictionGuardTest, TheFirstSuspensionAsksForTheInitialRun) {
  Guard guard;
  SuspendByMispredictions(guard);
  EXPECT_EQ(ResumeByCorrectPredictions(guard), Guard::kInitialCorrectRunToResume);
}

// A graph right only in short stretches: each suspension soon after a
// resumption doubles the run needed, up to the maximum.
TEST(MispredictionGuardTest, SuspensionSoonAfterResumingDoublesTheRunUpToTheMaximum) {
  Guard guard;
  SuspendByMispredictions(guard);
  unsigned expected = Guard::kInitialCorrectRunToResume;
  EXPECT_EQ(ResumeByCorrectPredictions(guard), expected);
  for (int round = 0; round < 12; ++round) {
    SuspendByMispredictions(guard);  // no frontier calls since resuming: soon
    expected = std::min(2 * expected, Guard::kMaxCorrectRunToResume);
    EXPECT_EQ(guard.correct_run_to_resume(), expected) << "round " << round;
    ResumeByCorrectPredictions(guard);
  }
  EXPECT_EQ(guard.correct_run_to_resume(), Guard::kMaxCorrectRunToResume);
}

TEST(MispredictionGuardTest, ALongGoodStretchResetsTheRun) {
  Guard guard;
  SuspendByMispredictions(guard);
  ResumeByCorrectPredictions(guard);
  SuspendByMispredictions(guard);
  ASSERT_EQ(guard.correct_run_to_resume(), 2 * Guard::kInitialCorrectRunToResume);
  ResumeByCorrectPredictions(guard);
  for (unsigned i = 0; i < 4 * Guard::kInitialCorrectRunToResume; ++i) guard.NoteFrontierCall();
  SuspendByMispredictions(guard);
  EXPECT_EQ(guard.correct_run_to_resume(), Guard::kInitialCorrectRunToResume);
}

}  // namespace
}  // namespace foreactor
