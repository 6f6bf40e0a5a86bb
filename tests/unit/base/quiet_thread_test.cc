// Tests of StartQuietThread(): the thread runs its main with its argument,
// with every signal blocked, and may run on exactly the CPUs its creator
// may run on (it starts on another CPU than its creator's, then drops that
// restriction before its main).
#include "base/quiet_thread.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <vector>

#include <gtest/gtest.h>

namespace foreactor {
namespace {

// What the started thread saw, once in its main.
struct Seen {
  int argument = 0;
  sigset_t mask{};
  cpu_set_t cpus{};
};

struct Start {
  int argument;
  Seen* seen;
};

void* RecordWhatTheThreadSees(void* raw) {
  const Start* start = static_cast<const Start*>(raw);
  start->seen->argument = start->argument;
  pthread_sigmask(SIG_SETMASK, nullptr, &start->seen->mask);
  sched_getaffinity(0, sizeof(start->seen->cpus), &start->seen->cpus);
  return nullptr;
}

Seen RunQuietThread() {
  Seen seen;
  Start start{42, &seen};
  pthread_t thread;
  EXPECT_EQ(
      StartQuietThread(&RecordWhatTheThreadSees, &start, 64 * 1024, /*detached=*/false, &thread),
      0);
  pthread_join(thread, nullptr);
  return seen;
}

// The CPUs the calling thread may run on.
cpu_set_t OwnCpus() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  EXPECT_EQ(sched_getaffinity(0, sizeof(cpus), &cpus), 0);
  return cpus;
}

std::vector<int> CpuList(const cpu_set_t& cpus) {
  std::vector<int> list;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &cpus)) list.push_back(cpu);
  }
  return list;
}

// Restricts the calling thread to `cpus` for the life of the object.
class CpusRestricted {
 public:
  explicit CpusRestricted(const std::vector<int>& cpus) : saved_(OwnCpus()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : cpus) CPU_SET(cpu, &set);
    EXPECT_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
  }
  ~CpusRestricted() { sched_setaffinity(0, sizeof(saved_), &saved_); }

 private:
  cpu_set_t saved_;
};

TEST(QuietThreadTest, RunsMainWithItsArgumentAndEverySignalBlocked) {
  const Seen seen = RunQuietThread();
  EXPECT_EQ(seen.argument, 42);
  EXPECT_EQ(sigismember(&seen.mask, SIGINT), 1);
  EXPECT_EQ(sigismember(&seen.mask, SIGTERM), 1);
  EXPECT_EQ(sigismember(&seen.mask, SIGUSR1), 1);
  // The creator's own mask is as it was.
  sigset_t own;
  pthread_sigmask(SIG_SETMASK, nullptr, &own);
  EXPECT_EQ(sigismember(&own, SIGUSR1), 0);
}

TEST(QuietThreadTest, MayRunOnEveryCpuItsCreatorMayRunOn) {
  const Seen seen = RunQuietThread();
  EXPECT_EQ(CpuList(seen.cpus), CpuList(OwnCpus()));
}

TEST(QuietThreadTest, MayRunOnTheTwoCpusItsCreatorIsRestrictedTo) {
  const std::vector<int> all = CpuList(OwnCpus());
  if (all.size() < 2) GTEST_SKIP() << "one CPU: the thread cannot start elsewhere";
  const std::vector<int> two = {all[0], all[1]};
  CpusRestricted restricted(two);
  const Seen seen = RunQuietThread();
  EXPECT_EQ(CpuList(seen.cpus), two);
}

TEST(QuietThreadTest, MayRunOnTheOneCpuItsCreatorIsRestrictedTo) {
  const std::vector<int> one = {CpuList(OwnCpus()).front()};
  CpusRestricted restricted(one);
  const Seen seen = RunQuietThread();
  EXPECT_EQ(CpuList(seen.cpus), one);
}

}  // namespace
}  // namespace foreactor
