// Unit tests of the automatic depth controller, driven by a fake clock and
// a model of how long one graph call takes at each depth.
#include "runtime/depth_controller.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>

#include "gtest/gtest.h"

namespace foreactor {
namespace {

uint64_t fake_now = 0;
uint64_t FakeClock() { return fake_now; }

// Nanoseconds one graph call takes at `depth`.
using CallCost = std::function<uint64_t(unsigned depth)>;

// Runs `calls` graph calls through `controller` in scopes of
// `calls_per_scope` calls, with `outside` nanoseconds between scopes.
// Returns how many calls ran at each home depth (index = depth).
void RunCalls(DepthController& controller, const CallCost& cost, unsigned calls,
              unsigned calls_per_scope = 1000, uint64_t outside = 0,
              std::vector<unsigned>* calls_at_depth = nullptr) {
  unsigned in_scope = 0;
  controller.ScopeEntered();
  for (unsigned i = 0; i < calls; ++i) {
    fake_now += cost(controller.depth());
    if (calls_at_depth != nullptr) {
      if (calls_at_depth->size() <= controller.depth())
        calls_at_depth->resize(controller.depth() + 1);
      (*calls_at_depth)[controller.depth()]++;
    }
    controller.CallFinished(0);
    if (++in_scope == calls_per_scope) {
      controller.ScopeLeft();
      fake_now += outside;
      controller.ScopeEntered();
      in_scope = 0;
    }
  }
  controller.ScopeLeft();
}

// A device that gives more throughput up to 64 requests in flight and a
// little less beyond (as this machine's disk does).
uint64_t SaturatesAt64(unsigned depth) {
  const unsigned useful = depth < 64 ? depth : 64;
  uint64_t cost = 50000 / (useful + 1);
  if (depth > 64) cost += cost / 10;
  return cost + 300;  // the program's own work per call
}

TEST(DepthControllerTest, AnExactDepthNeverMoves) {
  DepthController controller(DepthPolicy::kExact, 32, &FakeClock);
  RunCalls(controller, SaturatesAt64, 100000);
  EXPECT_EQ(controller.depth(), 32u);
  EXPECT_EQ(controller.home_depth(), 32u);
  EXPECT_EQ(controller.windows(), 0u);
  EXPECT_EQ(controller.depth_changes(), 0u);
}

TEST(DepthControllerTest, StartsAtThirtyTwoOrTheMaximumWhenLower) {
  EXPECT_EQ(DepthController(DepthPolicy::kAutomatic, 128, &FakeClock).depth(),
            DepthController::kStartDepth);
  EXPECT_EQ(DepthController(DepthPolicy::kAutomatic, 4, &FakeClock).depth(), 4u);
  EXPECT_EQ(DepthController(DepthPolicy::kAutomatic, 5, &FakeClock).depth(),
            5u);  // the top level is the maximum
  EXPECT_EQ(DepthController(DepthPolicy::kAutomatic, 0, &FakeClock).depth(), 0u);
}

TEST(DepthControllerTest, ClimbsToTheDepthWhereTheDeviceSaturates) {
  DepthController controller(DepthPolicy::kAutomatic, 128, &FakeClock);
  std::vector<unsigned> calls_at_depth;
  RunCalls(controller, SaturatesAt64, 200000, 1000, 0, &calls_at_depth);
  EXPECT_EQ(controller.home_depth(), 64u);
  // Most calls ran at the best depth: climbing and probing cost little.
  EXPECT_GT(calls_at_depth[64], 200000u * 8 / 10);
  EXPECT_GE(controller.depth_changes(), 1u);  // 32 -> 64
}

TEST(DepthControllerTest, WalksDownToZeroWhenEarlyIssueOnlyCosts) {
  // Data in memory: every call in flight adds work and saves nothing.
  DepthController controller(DepthPolicy::kAutomatic, 128, &FakeClock);
  std::vector<unsigned> calls_at_depth;
  RunCalls(
      controller, [](unsigned depth) { return 1000 + 100 * uint64_t{depth}; }, 100000, 1000, 0,
      &calls_at_depth);
  EXPECT_EQ(controller.home_depth(), 0u);
  EXPECT_GT(calls_at_depth[0], 100000u * 7 / 10);
}

TEST(DepthControllerTest, ARestartLeavesDepthZeroAndMeasuresAgain) {
  DepthController controller(DepthPolicy::kAutomatic, 128, &FakeClock);
  RunCalls(
      controller, [](unsigned depth) { return 1000 + 100 * uint64_t{depth}; }, 100000);
  ASSERT_EQ(controller.home_depth(), 0u);
  controller.Restart();
  EXPECT_EQ(controller.home_depth(), DepthController::kStartDepth);
  EXPECT_EQ(controller.depth(), DepthController::kStartDepth);
  // What it measures now decides: the device turned slow.
  RunCalls(controller, SaturatesAt64, 200000);
  EXPECT_EQ(controller.home_depth(), 64u);
  DepthController fixed(DepthPolicy::kExact, 16, &FakeClock);
  fixed.Restart();
  EXPECT_EQ(fixed.depth(), 16u);
}

TEST(DepthControllerTest, AFixedDepthIsABoundThatStartsAtItself) {
  DepthController controller(DepthPolicy::kAtMost, 16, &FakeClock);
  EXPECT_EQ(controller.depth(), 16u);
  EXPECT_EQ(controller.home_depth(), 16u);
  EXPECT_TRUE(controller.automatic());
  // A number that is no power of two is a level itself: 0, 1, 2, 4, 8, 16, 24.
  EXPECT_EQ(DepthController(DepthPolicy::kAtMost, 24, &FakeClock).depth(), 24u);
  EXPECT_EQ(DepthController(DepthPolicy::kAtMost, 1, &FakeClock).depth(), 1u);
}

TEST(DepthControllerTest, AFixedDepthWalksDownToZeroWhenEarlyIssueOnlyCosts) {
  DepthController controller(DepthPolicy::kAtMost, 16, &FakeClock);
  RunCalls(
      controller, [](unsigned depth) { return 1000 + 100 * uint64_t{depth}; }, 100000);
  EXPECT_EQ(controller.home_depth(), 0u);
  // A restart goes back to the bound, not to kStartDepth.
  controller.Restart();
  EXPECT_EQ(controller.depth(), 16u);
}

TEST(DepthControllerTest, AFixedDepthThatPaysIsKeptAndNeverExceeded) {
  DepthController controller(DepthPolicy::kAtMost, 24, &FakeClock);
  std::vector<unsigned> calls_at_depth;
  RunCalls(controller, SaturatesAt64, 200000, 1000, 0, &calls_at_depth);
  EXPECT_EQ(controller.home_depth(), 24u);
  EXPECT_EQ(calls_at_depth.size(), 25u);  // no call ran at a depth above 24
  EXPECT_GT(calls_at_depth[24], 200000u * 7 / 10);
}

TEST(DepthControllerTest, FindsDepthZeroWhenTheEngineCostsTheSameAtEveryDepth) {
  // Calls served from memory: through the engine every call costs a
  // hand-off (a little less with more of them overlapped); at depth 0 none.
  DepthController controller(DepthPolicy::kAutomatic, 128, &FakeClock);
  RunCalls(
      controller,
      [](unsigned depth) {
        return depth == 0 ? uint64_t{1000} : uint64_t{3000} - 10 * std::min(depth, 64u);
      },
      100000);
  EXPECT_EQ(controller.home_depth(), 0u);
}

TEST(DepthControllerTest, AFloorKeepsProbesAndHomeAtOrAboveIt) {
  // Every call in flight only costs: without a floor the controller walks
  // to depth 0 (above).  With one, it never goes below it, not even for a
  // probe, and settles on the floor.
  DepthController controller(DepthPolicy::kAutomatic, 128, &FakeClock);
  controller.KeepAtLeast(24);  // rounds up to the level of depth 32
  std::vector<unsigned> calls_at_depth;
  RunCalls(
      controller, [](unsigned depth) { return 1000 + 100 * uint64_t{depth}; }, 100000, 1000, 0,
      &calls_at_depth);
  EXPECT_EQ(controller.home_depth(), 32u);
  for (unsigned depth = 0; depth < 32 && depth < calls_at_depth.size(); ++depth) {
    EXPECT_EQ(calls_at_depth[depth], 0u) << "calls at depth " << depth;
  }
  // Lifted, the floor lets the controller find depth 0 again.
  controller.KeepAtLeast(0);
  RunCalls(
      controller, [](unsigned depth) { return 1000 + 100 * uint64_t{depth}; }, 100000);
  EXPECT_EQ(controller.home_depth(), 0u);
}

TEST(DepthControllerTest, AFloorAboveHomeMovesHomeAndEndsAProbeBelowIt) {
  DepthController controller(DepthPolicy::kAutomatic, 128, &FakeClock);
  RunCalls(
      controller, [](unsigned depth) { return 1000 + 100 * uint64_t{depth}; }, 100000);
  ASSERT_EQ(controller.home_depth(), 0u);
  controller.KeepAtLeast(64);
  EXPECT_EQ(controller.home_depth(), 64u);
  EXPECT_EQ(controller.depth(), 64u);
  // The floor is reached by the largest depth when it lies above it.
  controller.KeepAtLeast(1000);
  EXPECT_EQ(controller.depth(), 128u);
  // An exact depth has no floor to keep.
  DepthController exact(DepthPolicy::kExact, 8, &FakeClock);
  exact.KeepAtLeast(64);
  EXPECT_EQ(exact.depth(), 8u);
}

TEST(DepthControllerTest, NoisyWindowsDoNotPullTheDepthDown) {
  // A device shared with other work: the time per call drifts by up to 35%
  // either way every 150 calls.
  DepthController controller(DepthPolicy::kAutomatic, 128, &FakeClock);
  uint64_t seed = 12345;
  unsigned calls = 0;
  double factor = 1.0;
  std::vector<unsigned> calls_at_depth;
  RunCalls(
      controller,
      [&](unsigned depth) {
        if (calls++ % 150 == 0) {
          seed = seed * 6364136223846793005u + 1442695040888963407u;
          factor = 0.65 + 0.7 * static_cast<double>(seed >> 11) / static_cast<double>(1ull << 53);
        }
        return static_cast<uint64_t>(static_cast<double>(SaturatesAt64(depth)) * factor);
      },
      300000, 1000, 0, &calls_at_depth);
  unsigned deep = 0;
  for (unsigned depth = 32; depth < calls_at_depth.size(); ++depth) deep += calls_at_depth[depth];
  EXPECT_GT(deep, 300000u * 7 / 10)
      << "home depth " << controller.home_depth() << ", calls at depth >= 32: " << deep;
}

TEST(DepthControllerTest, NoisyWindowsDoNotMoveADepthThatMakesNoDifference) {
  // Every depth is as good as any other; the time per call drifts by up to
  // 35% either way every 150 calls.  A probe is compared with the mean of
  // the home windows, not with the last one alone, so that noise moves the
  // home rarely.  Over 20 seeds (a single one says little: one seed's
  // count of moves ranges from 0 to about 15 per 1,400 windows).
  uint64_t moves = 0;
  uint64_t windows = 0;
  for (uint64_t run = 1; run <= 20; ++run) {
    DepthController controller(DepthPolicy::kAutomatic, 128, &FakeClock);
    uint64_t seed = run * 7919;
    unsigned calls = 0;
    double factor = 1.0;
    RunCalls(
        controller,
        [&](unsigned) {
          if (calls++ % 150 == 0) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            factor = 0.65 + 0.7 * static_cast<double>(seed >> 11) / static_cast<double>(1ull << 53);
          }
          return static_cast<uint64_t>(2000.0 * factor);
        },
        1000000);
    moves += controller.depth_changes();
    windows += controller.windows();
  }
  EXPECT_LE(moves * 100, windows) << moves << " moves in " << windows << " windows";
}

TEST(DepthControllerTest, StaysWhenNoDepthIsBetterAndProbesRarely) {
  DepthController controller(DepthPolicy::kAutomatic, 128, &FakeClock);
  RunCalls(
      controller, [](unsigned) { return uint64_t{2000}; }, 200000);
  EXPECT_EQ(controller.home_depth(), DepthController::kStartDepth);
  EXPECT_EQ(controller.depth_changes(), 0u);
  // Probes happen at most once per kMaximumHoldWindows windows once settled.
  const uint64_t windows = controller.windows();
  const uint64_t at_home_sum = windows * DepthController::kStartDepth;
  const uint64_t sum = controller.window_depth_sum();
  const uint64_t deviation = sum > at_home_sum ? sum - at_home_sum : at_home_sum - sum;
  EXPECT_LT(deviation, windows * DepthController::kStartDepth / 10);
}

TEST(DepthControllerTest, CountsOnlyTimeInsideScopes) {
  // Long, varying pauses between scopes must not hide the best depth.
  DepthController controller(DepthPolicy::kAutomatic, 128, &FakeClock);
  uint64_t pause = 0;
  for (int round = 0; round < 200; ++round) {
    pause = (pause * 7919 + 104729) % 5000000;
    RunCalls(controller, SaturatesAt64, 1000, 10, pause);
  }
  EXPECT_EQ(controller.home_depth(), 64u);
}

TEST(DepthControllerTest, FollowsAChangeOfWorkload) {
  DepthController controller(DepthPolicy::kAutomatic, 128, &FakeClock);
  RunCalls(controller, SaturatesAt64, 100000);
  ASSERT_EQ(controller.home_depth(), 64u);
  // The data became hot: early issue now only costs.
  RunCalls(
      controller, [](unsigned depth) { return 1000 + 100 * uint64_t{depth}; }, 400000);
  EXPECT_EQ(controller.home_depth(), 0u);
}

TEST(DepthControllerTest, WindowsLastAtLeastTheMinimumTime) {
  // Calls of 1 us: 128 calls would make windows of 0.13 ms, too short to
  // tell depths apart.
  DepthController controller(DepthPolicy::kAutomatic, 128, &FakeClock);
  const uint64_t start = fake_now;
  RunCalls(
      controller, [](unsigned) { return uint64_t{1000}; }, 200000);
  const uint64_t elapsed = fake_now - start;
  EXPECT_GT(controller.windows(), 0u);
  EXPECT_LE(controller.windows(), elapsed / DepthController::kMinimumWindowNanoseconds);
}

TEST(DepthControllerTest, ExcludedTimeDoesNotCount) {
  // Deeper is better up to 64, but inside the scopes the program also does
  // work no depth changes, in bursts of up to 5 ms (du reading a
  // directory), which it excludes.
  DepthController controller(DepthPolicy::kAutomatic, 128, &FakeClock);
  uint64_t seed = 99;
  unsigned calls_at_64 = 0;
  controller.ScopeEntered();
  for (unsigned call = 0; call < 300000; ++call) {
    fake_now += SaturatesAt64(controller.depth());
    if (controller.depth() == 64) calls_at_64++;
    controller.CallFinished(0);
    if (call % 200 == 0) {
      seed = seed * 6364136223846793005u + 1442695040888963407u;
      const uint64_t burst = (seed >> 33) % 5'000'000;
      fake_now += burst;
      controller.ExcludeTime(burst);
    }
  }
  controller.ScopeLeft();
  EXPECT_EQ(controller.home_depth(), 64u);
  EXPECT_GT(calls_at_64, 300000u * 8 / 10);
}

TEST(DepthControllerTest, AProbeFarBehindHomeEndsEarly) {
  // Cold: a call at depth 0 waits 50 us for the device, 50 times longer
  // than at depth 64.  Each probe to 0 ends after kProbeCheckCalls calls,
  // not after a window of 128.
  DepthController controller(DepthPolicy::kAutomatic, 128, &FakeClock);
  unsigned zero_probes = 0;
  unsigned calls_at_zero = 0;
  unsigned previous_depth = controller.depth();
  controller.ScopeEntered();
  for (unsigned call = 0; call < 400000; ++call) {
    const unsigned depth = controller.depth();
    if (depth == 0 && previous_depth != 0) zero_probes++;
    if (depth == 0) calls_at_zero++;
    previous_depth = depth;
    fake_now += SaturatesAt64(depth);
    controller.CallFinished(0);
  }
  controller.ScopeLeft();
  ASSERT_EQ(controller.home_depth(), 64u);
  ASSERT_GT(zero_probes, 0u);
  EXPECT_LE(calls_at_zero, zero_probes * DepthController::kProbeCheckCalls);
}

// A device with a fixed latency and no limit on the requests in flight,
// with the peek head in front of it as the runner runs it: after each call
// at the frontier the peek head issues calls until depth() are ahead; a
// lower depth issues nothing until the calls ahead have drained below it.
class PipelinedDevice {
 public:
  static constexpr uint64_t kLatency = 150'000;  // a cold read
  static constexpr uint64_t kWork = 10'000;      // the program's own work per call
  static constexpr uint64_t kIssue = 3'000;      // the program thread's work to issue a call

  // The call at the frontier: waits for its read (issued now when nothing
  // was ahead), then the program works.
  void FinishCall() {
    uint64_t ready = fake_now + kLatency;
    if (ahead_.empty()) {
      synchronous_calls_++;
    } else {
      ready = ahead_.front();
      ahead_.pop_front();
    }
    fake_now = std::max(fake_now, ready) + kWork;
  }
  void Fill(unsigned depth) {
    while (ahead_.size() < depth) {
      fake_now += kIssue;
      ahead_.push_back(fake_now + kLatency);
    }
  }
  unsigned ahead() const { return static_cast<unsigned>(ahead_.size()); }
  unsigned synchronous_calls() const { return synchronous_calls_; }

 private:
  std::deque<uint64_t> ahead_;  // when each call issued ahead completes
  unsigned synchronous_calls_ = 0;
};

TEST(DepthControllerTest, AProbeDownIsJudgedOnlyOnceTheCallsAheadHaveDrained) {
  // From a home of 128 (any depth from 12 on keeps the program busy), the
  // first 128 calls of a probe to depth 0 still find their reads issued at
  // home, and cost less than at home (nothing is issued meanwhile).  Judged
  // on those, the probe won its first window, and the window that had to
  // confirm it read 128 calls one at a time (1,291 calls in 10 probes).
  // Judged after them, it ends lost after kProbeCheckCalls.
  DepthController controller(DepthPolicy::kAtMost, 128, &FakeClock);
  PipelinedDevice device;
  unsigned zero_probes = 0;
  unsigned previous_depth = controller.depth();
  controller.ScopeEntered();
  for (unsigned call = 0; call < 300000; ++call) {
    device.FinishCall();
    controller.CallFinished(device.ahead());
    const unsigned depth = controller.depth();
    if (depth == 0 && previous_depth != 0) zero_probes++;
    previous_depth = depth;
    device.Fill(depth);
  }
  controller.ScopeLeft();
  EXPECT_EQ(controller.home_depth(), 128u);  // no other depth is better
  ASSERT_GT(zero_probes, 0u);
  // The very first call, and per probe to 0 its checked calls and the first
  // call back home.
  EXPECT_LE(device.synchronous_calls(), 1 + zero_probes * (DepthController::kProbeCheckCalls + 1));
}

TEST(DepthControllerTest, DiscardedCallsDoNotEndAWindow) {
  DepthController controller(DepthPolicy::kAutomatic, 128, &FakeClock);
  controller.ScopeEntered();
  for (unsigned i = 0; i + 1 < DepthController::kMinimumWindowCalls * 2; ++i) {
    fake_now += 1000;
    controller.CallFinished(0);
    if (i % 100 == 99) controller.DiscardWindow();
  }
  controller.ScopeLeft();
  EXPECT_EQ(controller.windows(), 0u);
}

}  // namespace
}  // namespace foreactor
