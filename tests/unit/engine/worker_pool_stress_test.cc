// The thread pool engine under the runner's pattern of use, for a few
// seconds: a ring of requests issued ahead in batches and waited for in
// order, all of them cancelled now and then (a scope's end), and pauses
// longer than WorkerPool::kIdleWorkerLifetime so that every worker exits and
// the pool starts again while the run goes on.  A request left submitted
// with no worker to run it, or a lost wake-up, would hang a wait: a
// watchdog then fails the test and says the request's state and how many
// workers were left (a hang seen once, 2026-11-27, looked like that).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "engine/request_rules.h"
#include "engine/thread_pool_engine.h"
#include "engine/worker_pool.h"
#include "test_files.h"

namespace foreactor {
namespace {

constexpr unsigned kRing = 257;  // the runner's slots: depth 256 and the frontier
constexpr auto kRunTime = std::chrono::seconds(5);
constexpr auto kLongestWait = std::chrono::seconds(10);

TEST(WorkerPoolStressTest, EveryRequestIssuedAheadCompletes) {
  EngineOptions options;
  options.workers = 32;
  std::unique_ptr<ThreadPoolEngine> engine = ThreadPoolEngine::Create(options);
  ASSERT_NE(engine, nullptr);
  const int fd = open("/dev/zero", O_RDONLY);
  ASSERT_GE(fd, 0);
  std::vector<Request> ring(kRing);
  std::vector<char> buffers(kRing * 64);

  std::atomic<Request*> waiting{nullptr};
  std::atomic<bool> done{false};
  std::thread watchdog([&] {
    auto since = std::chrono::steady_clock::now();
    Request* last = nullptr;
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      Request* now = waiting.load();
      if (now != last) {
        last = now;
        since = std::chrono::steady_clock::now();
      } else if (now != nullptr && std::chrono::steady_clock::now() - since > kLongestWait) {
        std::fprintf(stderr, "hung: request state %d, workers %u\n",
                     static_cast<int>(now->state.load()), WorkerPool::Instance()->worker_count());
        std::abort();
      }
    }
  });

  // Waits for `request` under the watchdog's eye.
  auto wait = [&](Request& request) {
    waiting.store(&request);
    engine->Wait(&request);
    waiting.store(nullptr);
  };

  std::mt19937 random(12345);
  uint64_t frontier = 0, peek = 0;
  const auto end = std::chrono::steady_clock::now() + kRunTime;
  unsigned depth = 32;
  while (std::chrono::steady_clock::now() < end) {
    // The peek head: fill up to `depth` ahead, one batch.
    bool prepared = false;
    while (peek - frontier < depth) {
      Request& request = ring[peek % kRing];
      testing::SetUpRead(&request, fd, &buffers[(peek % kRing) * 64], 64, 0);
      if (!engine->Prepare(&request)) break;
      prepared = true;
      ++peek;
    }
    if (prepared) engine->Submit();
    const unsigned choice = random() % 1000;
    if (choice < 5) {
      // Drain: cancel everything ahead, then wait for it.
      for (uint64_t visit = frontier; visit < peek; ++visit) engine->Cancel(&ring[visit % kRing]);
      for (uint64_t visit = frontier; visit < peek; ++visit) wait(ring[visit % kRing]);
      frontier = peek;
    } else if (frontier < peek) {
      Request& request = ring[frontier % kRing];
      wait(request);
      ASSERT_TRUE(request.result == 64 || request.result == -ECANCELED);
      ++frontier;
    }
    if (choice >= 990) {
      // A depth-0 probe: nothing ahead for longer than a worker lives idle.
      depth = 0;
    } else if (depth == 0 && frontier == peek) {
      std::this_thread::sleep_for(WorkerPool::kIdleWorkerLifetime +
                                  std::chrono::milliseconds(random() % 5));
      depth = 1u << (random() % 9);
    }
  }
  for (; frontier < peek; ++frontier) wait(ring[frontier % kRing]);
  done.store(true);
  watchdog.join();
  close(fd);
}

}  // namespace
}  // namespace foreactor
