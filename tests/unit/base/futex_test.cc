// Tests of FutexWait() and FutexWakeAll(): a wait on a word that holds
// another value returns at once, a deadline that passes ends a wait with
// false, and a wake from another thread ends a wait with no deadline.
#include "base/futex.h"

#include <time.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include <gtest/gtest.h>

namespace foreactor {
namespace {

// CLOCK_MONOTONIC now plus `milliseconds`.
timespec DeadlineIn(long milliseconds) {
  timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_nsec += milliseconds * 1'000'000;
  deadline.tv_sec += deadline.tv_nsec / 1'000'000'000;
  deadline.tv_nsec %= 1'000'000'000;
  return deadline;
}

TEST(FutexTest, AWordHoldingAnotherValueDoesNotWait) {
  std::atomic<uint32_t> word{1};
  const timespec deadline = DeadlineIn(60'000);
  EXPECT_TRUE(FutexWait(&word, 0, &deadline));
}

TEST(FutexTest, APassedDeadlineEndsTheWaitWithFalse) {
  std::atomic<uint32_t> word{0};
  const timespec deadline = DeadlineIn(20);
  EXPECT_FALSE(FutexWait(&word, 0, &deadline));
}

TEST(FutexTest, AWakeEndsAWaitWithNoDeadline) {
  std::atomic<uint32_t> word{0};
  std::thread waker([&] {
    word.store(1, std::memory_order_release);
    FutexWakeAll(&word);
  });
  // A wake before the wait leaves the word changed: the wait returns at
  // once; a spurious return finds the word unchanged and waits again.
  while (word.load(std::memory_order_acquire) == 0) FutexWait(&word, 0);
  waker.join();
  EXPECT_EQ(word.load(), 1u);
}

}  // namespace
}  // namespace foreactor
