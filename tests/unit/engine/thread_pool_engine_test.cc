// Thread pool engine: one shared pool, workers that block every signal,
// growth, cancellation of queued requests, ordered requests, engines on
// many threads, and fork safety.
#include "engine/thread_pool_engine.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/worker_pool.h"
#include "test_files.h"

namespace foreactor {
namespace {

using testing::PatternByte;
using testing::ResetRequest;
using testing::SetUpCall;
using testing::SetUpRead;
using testing::TempDir;

std::string ReadProcFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(ThreadPoolEngineTest, WorkersBlockEverySignal) {
  std::unique_ptr<ThreadPoolEngine> engine = ThreadPoolEngine::Create(EngineOptions{});
  ASSERT_NE(engine, nullptr);
  int workers = 0;
  DIR* tasks = opendir("/proc/self/task");
  ASSERT_NE(tasks, nullptr);
  while (struct dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] == '.') continue;
    const std::string task = std::string("/proc/self/task/") + entry->d_name;
    if (ReadProcFile(task + "/comm") != std::string(WorkerPool::kWorkerThreadName) + "\n") continue;
    ++workers;
    const std::string status = ReadProcFile(task + "/status");
    const size_t at = status.find("SigBlk:");
    ASSERT_NE(at, std::string::npos);
    const unsigned long long blocked = std::stoull(status.substr(at + 7), nullptr, 16);
    for (int signal = 1; signal < 32; ++signal) {
      if (signal == SIGKILL || signal == SIGSTOP) continue;  // cannot be blocked
      EXPECT_TRUE(blocked & (1ULL << (signal - 1))) << "signal " << signal << " in " << task;
    }
  }
  closedir(tasks);
  EXPECT_GE(workers, 1);
}

TEST(ThreadPoolEngineTest, OnePoolWhoseLimitGrowsWhenAnEngineAsksForMore) {
  std::unique_ptr<ThreadPoolEngine> first = ThreadPoolEngine::Create(EngineOptions{});
  ASSERT_NE(first, nullptr);
  const unsigned before = WorkerPool::Instance()->worker_limit();
  EXPECT_GE(before, ThreadPoolEngine::kDefaultWorkers);
  EngineOptions options;
  options.workers = before + 3;
  std::unique_ptr<ThreadPoolEngine> second = ThreadPoolEngine::Create(options);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(WorkerPool::Instance()->worker_limit(), before + 3);
  // Asking for fewer never lowers the shared pool's limit.
  options.workers = 1;
  std::unique_ptr<ThreadPoolEngine> third = ThreadPoolEngine::Create(options);
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(WorkerPool::Instance()->worker_limit(), before + 3);
}

TEST(ThreadPoolEngineTest, WorkersStartOnlyWhenJobsWait) {
  EngineOptions options;
  options.workers = 8;
  std::unique_ptr<ThreadPoolEngine> engine = ThreadPoolEngine::Create(options);
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(WorkerPool::Instance()->worker_count(), 1u) << "one worker at first";
  // Sequential requests, each waited for: one worker serves them all.
  const int fd = open("/dev/zero", O_RDONLY);
  char buffer[8];
  for (int i = 0; i < 20; ++i) {
    Request request;
    SetUpRead(&request, fd, buffer, sizeof(buffer), 0);
    ASSERT_TRUE(engine->Prepare(&request));
    ASSERT_EQ(engine->Submit(), 1);
    engine->Wait(&request);
    EXPECT_EQ(request.result, 8);
  }
  // Not exactly one: a worker publishes a completion before it counts
  // itself idle again, so a request submitted in between finds no idle
  // worker and starts one (seen about once in 30 runs; it exits after
  // kIdleWorkerLifetime).  Eager start would have started all 8.
  EXPECT_LE(WorkerPool::Instance()->worker_count(), 3u);
  close(fd);
}

TEST(ThreadPoolEngineTest, IdleWorkersExitAndStartAgainForTheNextJob) {
  std::unique_ptr<ThreadPoolEngine> engine = ThreadPoolEngine::Create(EngineOptions{});
  ASSERT_NE(engine, nullptr);
  const int fd = open("/dev/zero", O_RDONLY);
  char buffer[8];
  for (int round = 0; round < 2; ++round) {
    Request request;
    SetUpRead(&request, fd, buffer, sizeof(buffer), 0);
    ASSERT_TRUE(engine->Prepare(&request));
    ASSERT_EQ(engine->Submit(), 1) << "round " << round;
    engine->Wait(&request);
    EXPECT_EQ(request.result, 8) << "round " << round;
    // Idle workers exit after kIdleWorkerLifetime; allow a busy machine 50x.
    bool all_exited = false;
    for (int waited = 0; waited < 50 && !all_exited; ++waited) {
      std::this_thread::sleep_for(WorkerPool::kIdleWorkerLifetime);
      all_exited = WorkerPool::Instance()->worker_count() == 0;
    }
    EXPECT_TRUE(all_exited) << "round " << round;
  }
  close(fd);
}

TEST(ThreadPoolEngineTest, BatchHoldsAtMostQueueSizeChains) {
  EngineOptions options;
  options.queue_size = 4;
  std::unique_ptr<ThreadPoolEngine> engine = ThreadPoolEngine::Create(options);
  ASSERT_NE(engine, nullptr);
  const int fd = open("/dev/zero", O_RDONLY);
  char buffers[5][8];
  Request requests[5];
  for (int i = 0; i < 4; ++i) {
    SetUpRead(&requests[i], fd, buffers[i], 8, 0);
    ASSERT_TRUE(engine->Prepare(&requests[i]));
  }
  SetUpRead(&requests[4], fd, buffers[4], 8, 0);
  EXPECT_FALSE(engine->Prepare(&requests[4]));
  EXPECT_EQ(requests[4].state.load(), RequestState::kIdle);
  EXPECT_EQ(engine->Submit(), 4);
  EXPECT_TRUE(engine->Prepare(&requests[4]));
  EXPECT_EQ(engine->Submit(), 1);
  for (Request& request : requests) {
    engine->Wait(&request);
    EXPECT_EQ(request.result, 8);
  }
  close(fd);
}

// Keeps every worker of the pool busy in open() of a FIFO until Release().
class BusyWorkers {
 public:
  explicit BusyWorkers(const std::string& fifo) : fifo_(fifo) {
    engine_ = ThreadPoolEngine::Create(EngineOptions{});
    // As many blocking jobs as the pool may have workers: each started
    // worker takes one and blocks.
    const unsigned workers = WorkerPool::Instance()->worker_limit();
    requests_ = std::vector<Request>(workers);
    for (Request& request : requests_) {
      SetUpCall(&request, FOREACTOR_CALL_OPEN);
      request.call.path = fifo_.c_str();
      request.call.flags = O_RDONLY;
      EXPECT_TRUE(engine_->Prepare(&request));
    }
    EXPECT_EQ(engine_->Submit(), static_cast<int>(workers));
  }
  // Opens the FIFO for writing, which lets every blocked open return.
  void Release() {
    const int writer = open(fifo_.c_str(), O_WRONLY);
    EXPECT_GE(writer, 0);
    for (Request& request : requests_) {
      engine_->Wait(&request);
      EXPECT_GE(request.result, 0);
      if (request.result >= 0) close(static_cast<int>(request.result));
    }
    close(writer);
  }

 private:
  std::string fifo_;
  std::unique_ptr<ThreadPoolEngine> engine_;
  std::vector<Request> requests_;
};

// An engine whose requests stay queued: every worker of the pool is kept
// busy until the test calls busy_->Release().  `zero_` reads /dev/zero.
class QueuedRequestsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(mkfifo(dir_.Path("fifo").c_str(), 0600), 0);
    engine_ = ThreadPoolEngine::Create(EngineOptions{});
    ASSERT_NE(engine_, nullptr);
    busy_ = std::make_unique<BusyWorkers>(dir_.Path("fifo"));
    zero_ = open("/dev/zero", O_RDONLY);
    ASSERT_GE(zero_, 0);
  }
  void TearDown() override {
    if (zero_ >= 0) close(zero_);
  }

  TempDir dir_;
  std::unique_ptr<ThreadPoolEngine> engine_;
  std::unique_ptr<BusyWorkers> busy_;
  int zero_ = -1;
};

TEST_F(QueuedRequestsTest, CancelCompletesAQueuedRequestAtOnce) {
  // Every worker is stuck ahead of these: they stay queued.
  char buffers[2][8];
  Request head, linked, other;
  SetUpRead(&head, zero_, buffers[0], 8, 0);
  SetUpRead(&linked, zero_, buffers[1], 8, 0);
  head.linked_next = &linked;
  SetUpRead(&other, zero_, buffers[1], 8, 0);
  ASSERT_TRUE(engine_->Prepare(&head));
  ASSERT_TRUE(engine_->Prepare(&other));
  ASSERT_EQ(engine_->Submit(), 3);
  engine_->Cancel(&head);
  EXPECT_EQ(head.state.load(), RequestState::kCompleted);
  EXPECT_EQ(head.result, -ECANCELED);
  EXPECT_EQ(linked.state.load(), RequestState::kCompleted);
  EXPECT_EQ(linked.result, -ECANCELED);
  EXPECT_EQ(other.state.load(), RequestState::kSubmitted);
  busy_->Release();
  engine_->Wait(&other);
  EXPECT_EQ(other.result, 8);
}

// The owner waiting for a chain that no worker has taken yet runs it
// itself: it does not sleep behind the queue, nor depend on a worker.
TEST_F(QueuedRequestsTest, TheOwnerRunsAChainStillQueuedWhenItWaitsForIt) {
  char buffers[2][8];
  Request head, linked;
  SetUpRead(&head, zero_, buffers[0], 8, 0);
  SetUpRead(&linked, zero_, buffers[1], 8, 0);
  head.linked_next = &linked;
  ASSERT_TRUE(engine_->Prepare(&head));
  ASSERT_EQ(engine_->Submit(), 2);
  // Every worker is stuck: only the owner can run the chain.
  std::future<void> waited =
      std::async(std::launch::async, [this, &head] { engine_->Wait(&head); });
  const bool ran_here = waited.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  busy_->Release();
  waited.wait();
  EXPECT_TRUE(ran_here);
  EXPECT_EQ(head.result, 8);
  engine_->Wait(&linked);
  EXPECT_EQ(linked.state.load(), RequestState::kCompleted);
  EXPECT_EQ(linked.result, 8);
}

// Cancelling the links of a chain a worker runs: the link it has started
// finishes, the ones it has not reached complete with -ECANCELED without
// running (the read-ahead stream's chain, cancelled at its scope's end).
TEST(ThreadPoolEngineTest, CancelledLinksOfARunningChainDoNotRun) {
  TempDir dir;
  ASSERT_EQ(mkfifo(dir.Path("fifo").c_str(), 0600), 0);
  auto engine = ThreadPoolEngine::Create(EngineOptions{});
  ASSERT_NE(engine, nullptr);
  const int zero = open("/dev/zero", O_RDONLY);
  ASSERT_GE(zero, 0);
  // The head blocks in open(2) of the FIFO until a writer opens it.
  Request head, linked, last;
  SetUpCall(&head, FOREACTOR_CALL_OPEN);
  const std::string fifo = dir.Path("fifo");
  head.call.path = fifo.c_str();
  head.call.flags = O_RDONLY;
  char buffers[2][8] = {{1}, {1}};
  SetUpRead(&linked, zero, buffers[0], 8, 0);
  SetUpRead(&last, zero, buffers[1], 8, 0);
  head.linked_next = &linked;
  linked.linked_next = &last;
  ASSERT_TRUE(engine->Prepare(&head));
  ASSERT_EQ(engine->Submit(), 3);
  engine->Cancel(&linked);
  engine->Cancel(&last);
  const int writer = open(fifo.c_str(), O_WRONLY);  // the head's open returns
  ASSERT_GE(writer, 0);
  engine->Wait(&head);
  EXPECT_GE(head.result, 0) << "the head ran to its real result";
  if (head.result >= 0) close(static_cast<int>(head.result));
  engine->Wait(&linked);
  engine->Wait(&last);
  EXPECT_EQ(linked.result, -ECANCELED);
  EXPECT_EQ(last.result, -ECANCELED);
  EXPECT_EQ(buffers[0][0], 1) << "the cancelled read did not run";
  EXPECT_EQ(buffers[1][0], 1);
  // Prepared again, the same requests run.
  head.linked_next = nullptr;
  linked.linked_next = nullptr;
  linked.state.store(RequestState::kIdle);
  ASSERT_TRUE(engine->Prepare(&linked));
  ASSERT_EQ(engine->Submit(), 1);
  engine->Wait(&linked);
  EXPECT_EQ(linked.result, 8);
  EXPECT_EQ(buffers[0][0], 0);
  close(writer);
  close(zero);
}

// An ordered request keeps its place in its lane: its owner waits for it.
TEST_F(QueuedRequestsTest, TheOwnerLeavesAQueuedOrderedRequestToTheLane) {
  char buffer[8];
  Request ordered;
  SetUpRead(&ordered, zero_, buffer, 8, 0);
  ordered.ordered = true;
  ASSERT_TRUE(engine_->Prepare(&ordered));
  ASSERT_EQ(engine_->Submit(), 1);
  std::future<void> waited =
      std::async(std::launch::async, [this, &ordered] { engine_->Wait(&ordered); });
  EXPECT_EQ(waited.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  busy_->Release();
  waited.wait();
  EXPECT_EQ(ordered.result, 8);
}

TEST(ThreadPoolEngineTest, DestroyingAnEngineCancelsItsQueuedRequestsOnly) {
  TempDir dir;
  ASSERT_EQ(mkfifo(dir.Path("fifo").c_str(), 0600), 0);
  std::unique_ptr<ThreadPoolEngine> doomed = ThreadPoolEngine::Create(EngineOptions{});
  std::unique_ptr<ThreadPoolEngine> survivor = ThreadPoolEngine::Create(EngineOptions{});
  ASSERT_NE(doomed, nullptr);
  ASSERT_NE(survivor, nullptr);
  BusyWorkers busy(dir.Path("fifo"));
  const int fd = open("/dev/zero", O_RDONLY);
  char buffer[8];
  Request queued[3], kept;
  for (Request& request : queued) {
    SetUpRead(&request, fd, buffer, 8, 0);
    ASSERT_TRUE(doomed->Prepare(&request));
  }
  ASSERT_EQ(doomed->Submit(), 3);
  SetUpRead(&kept, fd, buffer, 8, 0);
  ASSERT_TRUE(survivor->Prepare(&kept));
  ASSERT_EQ(survivor->Submit(), 1);
  doomed.reset();  // must not wait for the busy workers
  for (const Request& request : queued) {
    EXPECT_EQ(request.state.load(), RequestState::kCompleted);
    EXPECT_EQ(request.result, -ECANCELED);
  }
  EXPECT_EQ(kept.state.load(), RequestState::kSubmitted);
  busy.Release();
  survivor->Wait(&kept);
  EXPECT_EQ(kept.result, 8);
  close(fd);
}

// Ordered requests (the write pipeline's lane) run one at a time, in the
// order they were handed over, however many workers are free: while the
// first blocks (an open of a FIFO), none after it runs; then they run in
// order (pwrite on a file opened with O_APPEND appends, so the file shows
// the order they ran).
// An engine whose lane of ordered requests is held by a first one, an open
// of a FIFO that blocks until Release() opens its writer; the later ordered
// requests are one-byte writes appended to the file `lane`.
class HeldLaneTest : public ::testing::Test {
 protected:
  void HoldLane(unsigned workers) {
    ASSERT_EQ(mkfifo(fifo_.c_str(), 0600), 0);
    lane_fd_ = open(dir_.Path("lane").c_str(), O_CREAT | O_WRONLY | O_APPEND, 0644);
    ASSERT_GE(lane_fd_, 0);
    EngineOptions options;
    options.workers = workers;
    engine_ = ThreadPoolEngine::Create(options);
    ASSERT_NE(engine_, nullptr);
    SetUpCall(&blocker_, FOREACTOR_CALL_OPEN);
    blocker_.call.path = fifo_.c_str();
    blocker_.call.flags = O_RDONLY;
    blocker_.ordered = true;
    ASSERT_TRUE(engine_->Prepare(&blocker_));
    ASSERT_EQ(engine_->Submit(), 1);
  }
  // Prepares an ordered write of `*byte` to the lane file.
  void PrepareWrite(Request* request, const char* byte) {
    SetUpCall(request, FOREACTOR_CALL_PWRITE);
    request->call.fd = lane_fd_;
    request->call.buffer = const_cast<char*>(byte);
    request->call.length = 1;
    request->ordered = true;
    ASSERT_TRUE(engine_->Prepare(request));
  }
  // Lets the blocker return and waits for it and `requests`, each of which
  // must have written its byte.
  void ReleaseAndWait(Request* requests, int count) {
    const int writer = open(fifo_.c_str(), O_WRONLY);
    ASSERT_GE(writer, 0);
    engine_->Wait(&blocker_);
    ASSERT_GE(blocker_.result, 0);
    for (int i = 0; i < count; ++i) {
      engine_->Wait(&requests[i]);
      EXPECT_EQ(requests[i].result, 1);
    }
    close(static_cast<int>(blocker_.result));
    close(writer);
  }
  void TearDown() override {
    if (lane_fd_ >= 0) close(lane_fd_);
  }

  TempDir dir_;
  const std::string fifo_ = dir_.Path("fifo");
  int lane_fd_ = -1;
  std::unique_ptr<ThreadPoolEngine> engine_;
  Request blocker_;
};

TEST_F(HeldLaneTest, OrderedRequestsRunOneAtATimeInOrder) {
  HoldLane(0);
  constexpr int kRequests = 32;
  char bytes[kRequests];
  Request requests[kRequests];
  for (int i = 0; i < kRequests; ++i) {
    bytes[i] = static_cast<char>('0' + i);
    PrepareWrite(&requests[i], &bytes[i]);
    if (i % 8 == 7) {
      ASSERT_EQ(engine_->Submit(), 8);
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (const Request& request : requests) {
    EXPECT_EQ(request.state.load(), RequestState::kSubmitted) << "ran before the one before it";
  }
  ReleaseAndWait(requests, kRequests);
  std::ifstream in(dir_.Path("lane"));
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(written, std::string(bytes, kRequests));
}

// Ordered requests waiting behind their lane's running one cannot run: they
// start no workers, however many are handed over one at a time (a copy's
// write pipeline sends each write on its own; the pool had grown to its
// limit of 16 workers for one lane).
TEST_F(HeldLaneTest, OrderedRequestsWaitingInTheirLaneStartNoWorkers) {
  HoldLane(16);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a worker runs the blocker
  const unsigned workers_before = WorkerPool::Instance()->worker_count();
  constexpr int kRequests = 32;
  const char byte = 'x';
  Request requests[kRequests];
  for (Request& request : requests) {
    PrepareWrite(&request, &byte);
    ASSERT_EQ(engine_->Submit(), 1);
  }
  // At most one more: the blocker may have been still queued when counted.
  EXPECT_LE(WorkerPool::Instance()->worker_count(), workers_before + 1);
  ReleaseAndWait(requests, kRequests);
}

// Streamed requests (a copy's coalesced direct reads) run at most
// kStreamedRequestsAtOnce at a time, taken in the order they were handed over,
// however many workers are free; other requests run beside them.  Each
// streamed request here is an open of its own FIFO, which blocks until a
// writer opens it; a non-blocking writer's open fails with ENXIO while no
// reader is in the FIFO's open, so it tells which requests a worker runs.
TEST(ThreadPoolEngineTest, StreamedRequestsRunAFewAtATimeInOrder) {
  constexpr size_t kAtOnce = kStreamedRequestsAtOnce;
  constexpr size_t kRequests = 2 * kAtOnce;
  TempDir dir;
  std::vector<std::string> fifos;
  for (size_t i = 0; i < kRequests; ++i) {
    fifos.push_back(dir.Path("fifo" + std::to_string(i)));
    ASSERT_EQ(mkfifo(fifos.back().c_str(), 0600), 0);
  }
  EngineOptions options;
  options.queue_size = kRequests + 1;
  std::unique_ptr<ThreadPoolEngine> engine = ThreadPoolEngine::Create(options);
  ASSERT_NE(engine, nullptr);
  ASSERT_GT(WorkerPool::Instance()->worker_limit(), kRequests) << "workers to spare";
  Request requests[kRequests];
  for (size_t i = 0; i < kRequests; ++i) {
    SetUpCall(&requests[i], FOREACTOR_CALL_OPEN);
    requests[i].call.path = fifos[i].c_str();
    requests[i].call.flags = O_RDONLY;
    requests[i].streamed = true;
    ASSERT_TRUE(engine->Prepare(&requests[i]));
  }
  ASSERT_EQ(engine->Submit(), static_cast<int>(kRequests));
  // A request that is not streamed runs on a free worker meanwhile.
  char byte = 0;
  Request other;
  const int zero = open("/dev/zero", O_RDONLY);
  ASSERT_GE(zero, 0);
  SetUpRead(&other, zero, &byte, 1, 0);
  ASSERT_TRUE(engine->Prepare(&other));
  ASSERT_EQ(engine->Submit(), 1);
  for (int tries = 0; tries < 5000 && other.state.load() != RequestState::kCompleted; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(other.state.load(), RequestState::kCompleted) << "behind the held streamed requests";
  close(zero);
  // Returns whether a worker is in the open of FIFO `index` (and, if so,
  // lets that open return).
  std::vector<int> writers;
  std::vector<bool> released(kRequests, false);
  auto reader_in = [&](size_t index) {
    const int writer = open(fifos[index].c_str(), O_WRONLY | O_NONBLOCK);
    if (writer < 0) return false;
    writers.push_back(writer);
    released[index] = true;
    return true;
  };
  // Lets the open of FIFO `index` return once a worker (or the owner) is in it.
  auto release = [&](size_t index) {
    if (released[index]) return;
    const int writer = open(fifos[index].c_str(), O_WRONLY);
    ASSERT_GE(writer, 0);
    writers.push_back(writer);
    released[index] = true;
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (size_t i = kAtOnce; i < kRequests; ++i) {
    EXPECT_FALSE(reader_in(i)) << "streamed request " << i << " ran beside the first ones";
  }
  // The first finishes: the next in order takes its place, and only it.
  release(0);
  engine->Wait(&requests[0]);
  EXPECT_GE(requests[0].result, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (size_t i = kAtOnce + 1; i < kRequests; ++i) {
    EXPECT_FALSE(reader_in(i)) << "streamed request " << i << " ran out of turn";
  }
  release(kAtOnce);  // waits for a worker to take the next one
  // Let every open return.
  for (size_t i = 1; i < kRequests; ++i) release(i);
  for (Request& request : requests) {
    engine->Wait(&request);
    EXPECT_GE(request.result, 0);
    close(static_cast<int>(request.result));
  }
  for (int writer : writers) close(writer);
}

// After an ordered request that falls short, the later ordered requests
// complete with -ECANCELED without running, until RestartOrder().
TEST(ThreadPoolEngineTest, AShortOrderedRequestStopsTheLaneUntilRestart) {
  TempDir dir;
  const int fd = open(dir.Path("four").c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_EQ(write(fd, "four", 4), 4);
  std::unique_ptr<ThreadPoolEngine> engine = ThreadPoolEngine::Create(EngineOptions{});
  ASSERT_NE(engine, nullptr);
  char buffers[4][8];
  Request requests[4];
  for (int i = 0; i < 4; ++i) {
    SetUpRead(&requests[i], fd, buffers[i], i == 0 ? 8 : 4, 0);  // the first falls short
    requests[i].ordered = true;
  }
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(engine->Prepare(&requests[i]));
  ASSERT_EQ(engine->Submit(), 3);
  for (int i = 0; i < 3; ++i) engine->Wait(&requests[i]);
  EXPECT_EQ(requests[0].result, 4);
  EXPECT_EQ(requests[1].result, -ECANCELED);
  EXPECT_EQ(requests[2].result, -ECANCELED);
  engine->RestartOrder();
  ASSERT_TRUE(engine->Prepare(&requests[3]));
  ASSERT_EQ(engine->Submit(), 1);
  engine->Wait(&requests[3]);
  EXPECT_EQ(requests[3].result, 4);
  close(fd);
}

// The owner may restart the lane as soon as it has seen an ordered request
// fall short: the worker's own note that the lane stopped must never land
// after the restart and cancel the next ordered request.  The race is
// narrow, so the test repeats it while other threads compete for the cores.
TEST(ThreadPoolEngineTest, ARestartRightAfterAShortOrderedRequestHolds) {
  TempDir dir;
  const int fd = open(dir.Path("four").c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_EQ(write(fd, "four", 4), 4);
  std::unique_ptr<ThreadPoolEngine> engine = ThreadPoolEngine::Create(EngineOptions{});
  ASSERT_NE(engine, nullptr);
  std::atomic<bool> stop{false};
  std::vector<std::thread> competitors;
  for (int i = 0; i < 2; ++i) {
    competitors.emplace_back([&stop] {
      while (!stop.load(std::memory_order_relaxed)) sched_yield();
    });
  }
  int cancelled_after_restart = 0;
  for (int round = 0; round < 2000; ++round) {
    char buffers[2][8];
    Request short_read, next_read;
    SetUpRead(&short_read, fd, buffers[0], 8, 0);  // 8 asked, 4 in the file
    SetUpRead(&next_read, fd, buffers[1], 4, 0);
    short_read.ordered = next_read.ordered = true;
    ASSERT_TRUE(engine->Prepare(&short_read));
    ASSERT_EQ(engine->Submit(), 1);
    engine->Wait(&short_read);
    ASSERT_EQ(short_read.result, 4);
    engine->RestartOrder();
    ASSERT_TRUE(engine->Prepare(&next_read));
    ASSERT_EQ(engine->Submit(), 1);
    engine->Wait(&next_read);
    if (next_read.result != 4) ++cancelled_after_restart;
    engine->RestartOrder();
  }
  stop.store(true);
  for (std::thread& thread : competitors) thread.join();
  EXPECT_EQ(cancelled_after_restart, 0);
  close(fd);
}

// A queued ordered request that is cancelled stops the lane too: the one
// after it never runs.
TEST_F(QueuedRequestsTest, CancellingAQueuedOrderedRequestStopsTheLane) {
  char buffers[2][8];
  Request first, second;
  SetUpRead(&first, zero_, buffers[0], 8, 0);
  SetUpRead(&second, zero_, buffers[1], 8, 0);
  first.ordered = second.ordered = true;
  ASSERT_TRUE(engine_->Prepare(&first));
  ASSERT_TRUE(engine_->Prepare(&second));
  ASSERT_EQ(engine_->Submit(), 2);
  engine_->Cancel(&first);
  EXPECT_EQ(first.result, -ECANCELED);
  busy_->Release();
  engine_->Wait(&second);
  EXPECT_EQ(second.result, -ECANCELED);
  engine_->RestartOrder();
}

TEST(ThreadPoolEngineTest, EnginesOnManyThreadsShareThePool) {
  TempDir dir;
  constexpr int kThreads = 4;
  constexpr int kBlocks = 64;
  ASSERT_TRUE(dir.WritePatternFile("data", uint64_t{kThreads} * kBlocks * 512));
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::unique_ptr<ThreadPoolEngine> engine = ThreadPoolEngine::Create(EngineOptions{});
      const int fd = open(dir.Path("data").c_str(), O_RDONLY);
      if (engine == nullptr || fd < 0) {
        failures[t] = -1;
        return;
      }
      std::vector<std::vector<char>> buffers(kBlocks, std::vector<char>(512));
      std::vector<Request> requests(kBlocks);
      for (int round = 0; round < 20; ++round) {
        for (int b = 0; b < kBlocks; ++b) {
          const int64_t offset = (int64_t{t} * kBlocks + b) * 512;
          SetUpRead(&requests[b], fd, buffers[b].data(), 512, offset);
          if (!engine->Prepare(&requests[b])) ++failures[t];
          if (b % 8 == 7 && engine->Submit() != 8) ++failures[t];
        }
        for (int b = 0; b < kBlocks; ++b) {
          engine->Wait(&requests[b]);
          const uint64_t offset = (uint64_t(t) * kBlocks + b) * 512;
          if (requests[b].result != 512) ++failures[t];
          if (buffers[b][300] != PatternByte(offset + 300)) ++failures[t];
        }
      }
      close(fd);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

// In a forked child the pool has no workers: an engine inherited from the
// parent fails Submit with -EAGAIN and completes its requests as not
// executed (-ECANCELED) instead of hanging, and a new
// engine starts fresh workers.
TEST(ThreadPoolEngineTest, ForkedChildNeverHangs) {
  std::unique_ptr<ThreadPoolEngine> inherited = ThreadPoolEngine::Create(EngineOptions{});
  ASSERT_NE(inherited, nullptr);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int failures = 0;
    const int fd = open("/dev/zero", O_RDONLY);
    char buffer[8] = {'x'};
    Request request;
    SetUpRead(&request, fd, buffer, sizeof(buffer), 0);
    if (!inherited->Prepare(&request)) failures |= 1;
    if (inherited->Submit() != -EAGAIN) failures |= 2;
    inherited->Wait(&request);
    if (request.result != -ECANCELED) failures |= 4;
    EngineOptions options;
    options.workers = 2;
    std::unique_ptr<ThreadPoolEngine> fresh = ThreadPoolEngine::Create(options);
    if (fresh == nullptr) {
      _exit(failures | 8);
    }
    SetUpRead(&request, fd, buffer, sizeof(buffer), 0);
    if (!fresh->Prepare(&request) || fresh->Submit() != 1) failures |= 16;
    fresh->Wait(&request);
    if (request.result != 8 || buffer[0] != 0) failures |= 32;
    fresh.reset();
    inherited.reset();
    _exit(failures);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  // The parent's pool is untouched.
  const int fd = open("/dev/zero", O_RDONLY);
  char buffer[8];
  Request request;
  SetUpRead(&request, fd, buffer, sizeof(buffer), 0);
  ASSERT_TRUE(inherited->Prepare(&request));
  ASSERT_EQ(inherited->Submit(), 1);
  inherited->Wait(&request);
  EXPECT_EQ(request.result, 8);
  close(fd);
}

}  // namespace
}  // namespace foreactor
