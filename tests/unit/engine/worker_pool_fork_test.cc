// A fork racing the thread pool's first use.  The pool is made once per
// process, on first use; a child forked while another thread makes it must
// still be able to use the pool (its fork handlers were once
// added inside the pool's one-time initialiser, so a child could copy that
// initialiser half done and wait for ever on its first use).
//
// Every round needs a process that has not used the pool yet, so this test
// program must not use it outside the rounds: each round forks a fresh
// process, which starts a thread that makes the pool and forks a child in
// the meantime, after a delay that moves across the window round by round.
// The child then runs one read on the pool; an alarm kills a hung child.
//
// Only the pool's creation may race the fork.  The thread that makes it
// waits, before it exits, until the fork is done: a thread's exit frees
// memory, and under AddressSanitizer (whose allocator takes no lock around
// fork) a child forked while another thread is inside the allocator may
// find the allocator's lock held for ever.  glibc's allocator is safe
// there, so that wait hides nothing the library does.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "engine/thread_pool_engine.h"
#include "engine/worker_pool.h"
#include "test_files.h"

namespace foreactor {
namespace {

constexpr int kRounds = 300;
// A round's exit status when its child was killed by a signal (a hung
// child's alarm); 16 + the child's own status when it failed otherwise.
constexpr int kChildKilled = 26;

// Runs one read of /dev/zero on a fresh thread pool engine; returns 0 when
// it read what it should, a failure bit otherwise.
int ReadOnThePool() {
  EngineOptions options;
  options.workers = 1;
  std::unique_ptr<ThreadPoolEngine> engine = ThreadPoolEngine::Create(options);
  if (engine == nullptr) return 1;
  const int fd = open("/dev/zero", O_RDONLY);
  char buffer[8] = {'x'};
  Request request;
  testing::SetUpRead(&request, fd, buffer, sizeof(buffer), 0);
  if (!engine->Prepare(&request) || engine->Submit() != 1) return 2;
  engine->Wait(&request);
  close(fd);
  return request.result == 8 && buffer[0] == 0 ? 0 : 4;
}

// Exit status: 0, kChildKilled, or 16 + the child's failure bits.
[[noreturn]] void RunOneRound(int round) {
  std::atomic<bool> starting{false};
  std::atomic<bool> forked{false};
  std::thread first_use([&] {
    starting.store(true);
    static_cast<void>(WorkerPool::Instance());
    while (!forked.load()) std::this_thread::yield();
  });
  while (!starting.load()) {
  }
  // Spin 0-30 microseconds, a different delay each round.
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(round % 31 * 1000);
  while (std::chrono::steady_clock::now() < until) {
  }
  const pid_t child = fork();
  if (child == 0) {
    alarm(5);
    _exit(ReadOnThePool());
  }
  forked.store(true);
  first_use.join();
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) _exit(99);
  if (WIFSIGNALED(status)) _exit(kChildKilled);
  _exit(WEXITSTATUS(status) == 0 ? 0 : 16 + WEXITSTATUS(status));
}

TEST(WorkerPoolForkTest, AChildForkedWhileThePoolIsMadeCanUseIt) {
  for (int round = 0; round < kRounds; ++round) {
    const pid_t process = fork();
    ASSERT_GE(process, 0);
    if (process == 0) RunOneRound(round);
    int status = 0;
    ASSERT_EQ(waitpid(process, &status, 0), process);
    ASSERT_TRUE(WIFEXITED(status)) << "round " << round << ": ended by signal " << WTERMSIG(status);
    ASSERT_EQ(WEXITSTATUS(status), 0)
        << "round " << round
        << (WEXITSTATUS(status) == kChildKilled ? ": the child hung" : ": the child failed");
  }
}

}  // namespace
}  // namespace foreactor
