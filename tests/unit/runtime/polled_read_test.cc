// Tests of foreactor::ReadPolling() (runtime/polled_read.h): whatever the
// range's state (cached, started, cold and not started, past the end of the
// file, not readable), it returns what pread(2) returns and leaves errno
// alone; a try that reads the whole range is reported as polled, and a
// budget of 0, a backoff after a descheduled poll, or every poller's place
// taken makes no try.  And of foreactor::PollAdmission: the window after polls
// lost their CPU during which no poll starts, and the places of threads
// polling at once (as many as the CPUs).
#include "runtime/polled_read.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/lettered_file.h"
#include "runtime/monotonic_clock.h"
#include "runtime/pages_cached.h"

namespace {

using foreactor::BlockLetter;
using foreactor::ReadPolling;

constexpr uint64_t kPage = 4096;
constexpr uint64_t kFilePages = 32;
constexpr uint64_t kSecond = 1000000000;

class PolledReadTest : public testing::Test {
 protected:
  void SetUp() override {
    fd_ = foreactor::MakeLetteredFile(kFilePages, kPage);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override {
    if (fd_ >= 0) close(fd_);
  }

  bool DropFile() { return foreactor::DropFromPageCache(fd_, 0, kFilePages * kPage); }

  // True when `bytes` are those of pages [first_page, ...) of the file.
  static bool HoldsPages(const std::vector<char>& bytes, uint64_t first_page) {
    for (size_t i = 0; i < bytes.size(); ++i) {
      if (bytes[i] != BlockLetter(first_page + i / kPage)) return false;
    }
    return true;
  }

  int fd_ = -1;
  foreactor::PollAdmission admission_;
};

TEST_F(PolledReadTest, ACachedRangeIsReadByTheFirstTry) {
  std::vector<char> buffer(2 * kPage);
  bool polled = false;
  errno = 1234;
  EXPECT_EQ(
      ReadPolling(fd_, buffer.data(), buffer.size(), 3 * kPage, kSecond, &admission_, &polled),
      static_cast<int64_t>(buffer.size()));
  EXPECT_TRUE(polled);
  EXPECT_TRUE(HoldsPages(buffer, 3));
  EXPECT_EQ(errno, 1234);
}

TEST_F(PolledReadTest, AStartedRangeIsPolledForUntilItIsIn) {
  if (!DropFile()) GTEST_SKIP() << "the page cache keeps this file's pages, or no cachestat(2)";
  ASSERT_EQ(readahead(fd_, 8 * kPage, 4 * kPage), 0);
  std::vector<char> buffer(4 * kPage);
  bool polled = false;
  errno = 1234;
  // (A budget of seconds: the device is done long before.)
  EXPECT_EQ(
      ReadPolling(fd_, buffer.data(), buffer.size(), 8 * kPage, 10 * kSecond, &admission_, &polled),
      static_cast<int64_t>(buffer.size()));
  EXPECT_TRUE(polled);
  EXPECT_TRUE(HoldsPages(buffer, 8));
  EXPECT_EQ(errno, 1234);
}

TEST_F(PolledReadTest, AColdRangeNothingStartedIsStartedByTheFirstTry) {
  if (!DropFile()) GTEST_SKIP() << "the page cache keeps this file's pages, or no cachestat(2)";
  std::vector<char> buffer(kPage + 100);  // across a page boundary, as LevelDB's blocks
  bool polled = false;
  EXPECT_EQ(ReadPolling(fd_, buffer.data(), buffer.size(), 20 * kPage, 10 * kSecond, &admission_,
                        &polled),
            static_cast<int64_t>(buffer.size()));
  EXPECT_TRUE(polled);
  EXPECT_TRUE(HoldsPages(buffer, 20));
}

TEST_F(PolledReadTest, ABudgetOfZeroReadsWithPread) {
  const bool dropped = DropFile();
  std::vector<char> buffer(kPage);
  bool polled = true;
  EXPECT_EQ(ReadPolling(fd_, buffer.data(), buffer.size(), 5 * kPage, 0, &admission_, &polled),
            static_cast<int64_t>(kPage));
  EXPECT_FALSE(polled);
  EXPECT_TRUE(HoldsPages(buffer, 5));
  if (dropped) {
    uint64_t cached = 0, pages = 0;
    ASSERT_EQ(foreactor::CountCachedPages(fd_, 5 * kPage, kPage, &cached, &pages), 0);
    EXPECT_EQ(cached, 1u) << "pread read the page through the page cache";
  }
}

TEST_F(PolledReadTest, TheEndOfTheFileEndsTheReadAsPreadEndsIt) {
  std::vector<char> buffer(3 * kPage);
  bool polled = true;
  // Two pages before the end, three asked for: two read, at once (not after
  // the budget: a minute here would time the test out).
  const uint64_t offset = (kFilePages - 2) * kPage;
  EXPECT_EQ(
      ReadPolling(fd_, buffer.data(), buffer.size(), offset, 60 * kSecond, &admission_, &polled),
      static_cast<int64_t>(2 * kPage));
  EXPECT_FALSE(polled);
  buffer.resize(2 * kPage);
  EXPECT_TRUE(HoldsPages(buffer, kFilePages - 2));
  EXPECT_EQ(ReadPolling(fd_, buffer.data(), kPage, kFilePages * kPage, 60 * kSecond, &admission_,
                        &polled),
            0);
  EXPECT_FALSE(polled);
}

TEST_F(PolledReadTest, WhatPreadRefusesIsRefusedWithItsError) {
  char buffer[64];
  bool polled = true;
  errno = 1234;
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  EXPECT_EQ(ReadPolling(pipe_ends[0], buffer, sizeof buffer, 0, 60 * kSecond, &admission_, &polled),
            -ESPIPE);
  EXPECT_FALSE(polled);
  close(pipe_ends[0]);
  close(pipe_ends[1]);
  EXPECT_EQ(ReadPolling(pipe_ends[0], buffer, sizeof buffer, 0, 60 * kSecond, &admission_, &polled),
            -EBADF);
  const int directory = open("/tmp", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(directory, 0);
  EXPECT_EQ(ReadPolling(directory, buffer, sizeof buffer, 0, 60 * kSecond, &admission_, &polled),
            -EISDIR);
  close(directory);
  EXPECT_EQ(ReadPolling(fd_, buffer, sizeof buffer, -1, 60 * kSecond, &admission_, &polled),
            -static_cast<int64_t>(EINVAL));
  EXPECT_EQ(errno, 1234);
}

TEST_F(PolledReadTest, AfterADescheduledPollReadsSleepForAWindow) {
  admission_.PollDescheduled(foreactor::MonotonicNanoseconds());
  std::vector<char> buffer(kPage);
  bool polled = true;
  EXPECT_EQ(
      ReadPolling(fd_, buffer.data(), buffer.size(), 2 * kPage, kSecond, &admission_, &polled),
      static_cast<int64_t>(kPage));
  EXPECT_FALSE(polled) << "read asleep, without a try";
  EXPECT_TRUE(HoldsPages(buffer, 2));
}

TEST_F(PolledReadTest, WhileEveryPollerPlaceIsTakenReadsSleep) {
  admission_.SetMaxPollers(1);
  ASSERT_TRUE(admission_.TryClaimPoller());  // another thread polling
  std::vector<char> buffer(kPage);
  bool polled = true;
  EXPECT_EQ(
      ReadPolling(fd_, buffer.data(), buffer.size(), 6 * kPage, kSecond, &admission_, &polled),
      static_cast<int64_t>(kPage));
  EXPECT_FALSE(polled) << "read asleep, without a try";
  EXPECT_TRUE(HoldsPages(buffer, 6));
  admission_.ReleasePoller();
  EXPECT_EQ(
      ReadPolling(fd_, buffer.data(), buffer.size(), 7 * kPage, kSecond, &admission_, &polled),
      static_cast<int64_t>(kPage));
  EXPECT_TRUE(polled);
  EXPECT_TRUE(HoldsPages(buffer, 7));
  // The poll gave its place back.
  EXPECT_TRUE(admission_.TryClaimPoller());
  admission_.ReleasePoller();
}

TEST(PollAdmissionTest, AtMostTheMaximumOfPollersPollAtOnce) {
  foreactor::PollAdmission admission;
  admission.SetMaxPollers(2);
  EXPECT_TRUE(admission.TryClaimPoller());
  EXPECT_TRUE(admission.TryClaimPoller());
  EXPECT_FALSE(admission.TryClaimPoller());
  admission.ReleasePoller();
  EXPECT_TRUE(admission.TryClaimPoller());
  admission.ReleasePoller();
  admission.ReleasePoller();
  admission.SetMaxPollers(0);  // at least one
  EXPECT_TRUE(admission.TryClaimPoller());
  EXPECT_FALSE(admission.TryClaimPoller());
  admission.ReleasePoller();
}

TEST(PollAdmissionTest, AsManyPollersAsTheCpusTheProcessMayRunOn) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const int cpus = CPU_COUNT(&allowed);
  EXPECT_EQ(foreactor::PollersForThisProcess(), cpus);
  // By default an admission takes that number at its first claim.
  foreactor::PollAdmission admission;
  for (int i = 0; i < cpus; ++i) EXPECT_TRUE(admission.TryClaimPoller()) << i;
  EXPECT_FALSE(admission.TryClaimPoller());
  // On one CPU, one poller.
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) {
      CPU_SET(cpu, &one);
      break;
    }
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_EQ(foreactor::PollersForThisProcess(), 1);
  ASSERT_EQ(sched_setaffinity(0, sizeof allowed, &allowed), 0);
}

TEST(PollAdmissionTest, TheWindowDoublesAtEachDescheduledPollSoonAfterTheLast) {
  using foreactor::PollAdmission;
  constexpr uint64_t kFirst = PollAdmission::kFirstWindowNanoseconds;
  PollAdmission admission;
  const uint64_t start = 1000 * kSecond;
  EXPECT_TRUE(admission.MayPoll(start));
  admission.PollDescheduled(start);
  EXPECT_FALSE(admission.MayPoll(start + kFirst - 1));
  EXPECT_TRUE(admission.MayPoll(start + kFirst));
  // Another one within twice the window after the first: twice the window.
  uint64_t now = start + kFirst + 1;
  admission.PollDescheduled(now);
  EXPECT_FALSE(admission.MayPoll(now + 2 * kFirst - 1));
  EXPECT_TRUE(admission.MayPoll(now + 2 * kFirst));
  // Doubling stops at the last window.
  for (int i = 0; i < 20; ++i) {
    now += kSecond / 1000;
    admission.PollDescheduled(now);
  }
  EXPECT_FALSE(admission.MayPoll(now + PollAdmission::kLastWindowNanoseconds - 1));
  EXPECT_TRUE(admission.MayPoll(now + PollAdmission::kLastWindowNanoseconds));
  // Long after the window: the first window again.
  now += 3 * PollAdmission::kLastWindowNanoseconds;
  admission.PollDescheduled(now);
  EXPECT_TRUE(admission.MayPoll(now + kFirst));
}

}  // namespace
