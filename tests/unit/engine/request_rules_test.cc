// Request rules: completing a request wakes its sleeping owner, whatever
// the interleaving of the completion with the owner's check and sleep.
#include "engine/request_rules.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <future>
#include <thread>

#include "engine/request.h"

namespace foreactor {
namespace {

// Runs WaitForCompletion(request) on its own thread; the future is ready
// when it returned.
std::future<void> WaitOnAnotherThread(Request* request) {
  return std::async(std::launch::async, [request] { WaitForCompletion(request); });
}

TEST(RequestRulesTest, ASleepingOwnerMarksTheRequestAwaitedAndIsWokenByItsCompletion) {
  Request request;
  request.state.store(RequestState::kSubmitted);
  std::future<void> waited = WaitOnAnotherThread(&request);
  // The owner marks the request before it sleeps.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (request.state.load() != RequestState::kAwaited &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(request.state.load(), RequestState::kAwaited);
  EXPECT_EQ(waited.wait_for(std::chrono::milliseconds(20)), std::future_status::timeout);
  CompleteRequest(&request, 42);
  ASSERT_EQ(waited.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_EQ(request.state.load(), RequestState::kCompleted);
  EXPECT_EQ(request.result, 42);
}

TEST(RequestRulesTest, ACompletedRequestIsNotWaitedFor) {
  Request request;
  request.state.store(RequestState::kSubmitted);
  CompleteRequest(&request, -EIO);
  WaitForCompletion(&request);  // returns at once
  EXPECT_EQ(request.state.load(), RequestState::kCompleted);
  EXPECT_EQ(request.result, -EIO);
}

// Completions racing with the owner's check and sleep, many times over:
// every wait ends.  A lost wake-up would leave the owner asleep: the test
// then reports it and wakes the owner itself.
TEST(RequestRulesTest, EveryCompletionRacingTheOwnersSleepWakesIt) {
  constexpr int kRounds = 20000;
  Request request;
  std::atomic<int> round{-1};
  std::atomic<bool> stop{false};
  std::thread completer([&] {
    for (int next = 0; next < kRounds; ++next) {
      while (round.load(std::memory_order_acquire) != next) {
        if (stop.load()) return;
      }
      // Vary where the completion lands against the owner's sleep.
      for (int spin = 0; spin < (next % 64) * 16; ++spin) {
        std::atomic_signal_fence(std::memory_order_seq_cst);
      }
      CompleteRequest(&request, next);
    }
  });
  std::atomic<int> finished{0};
  std::future<void> owner = std::async(std::launch::async, [&] {
    for (int next = 0; next < kRounds && !stop.load(); ++next) {
      request.state.store(RequestState::kSubmitted, std::memory_order_relaxed);
      round.store(next, std::memory_order_release);
      WaitForCompletion(&request);
      if (request.result != next) return;
      finished.store(next + 1);
    }
  });
  const bool ended = owner.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  stop.store(true);
  if (!ended) CompleteRequest(&request, -1);  // wake the stranded owner
  owner.wait();
  completer.join();
  EXPECT_TRUE(ended) << "the owner slept through a completion in round " << finished.load();
  EXPECT_EQ(finished.load(), kRounds);
}

}  // namespace
}  // namespace foreactor
