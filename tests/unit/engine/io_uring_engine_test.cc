// io_uring engine: cancellation of blocked requests, queue limits, options,
// submission failures, fork safety, and the fallback when io_uring is
// forbidden.
#include "engine/io_uring_engine.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "seccomp_filter.h"
#include "test_files.h"

namespace foreactor {
namespace {

using testing::PatternByte;
using testing::SetUpRead;
using testing::TempDir;

std::unique_ptr<IoUringEngine> MakeEngine(const EngineOptions& options = EngineOptions{}) {
  std::string error;
  std::unique_ptr<IoUringEngine> engine = IoUringEngine::Create(options, &error);
  EXPECT_NE(engine, nullptr) << error;
  return engine;
}

class Pipe {
 public:
  Pipe() { ok_ = pipe(fds_) == 0; }
  ~Pipe() {
    if (ok_) {
      close(fds_[0]);
      close(fds_[1]);
    }
  }
  bool ok() const { return ok_; }
  int read_end() const { return fds_[0]; }
  int write_end() const { return fds_[1]; }

 private:
  int fds_[2] = {-1, -1};
  bool ok_ = false;
};

// An engine with one read of an empty pipe submitted: it blocks until the
// test writes to the pipe.
class BlockedPipeReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_ = MakeEngine();
    ASSERT_NE(engine_, nullptr);
    ASSERT_TRUE(pipe_.ok());
    SetUpRead(&request_, pipe_.read_end(), buffer_, sizeof(buffer_), 0);
    ASSERT_TRUE(engine_->Prepare(&request_));
    ASSERT_EQ(engine_->Submit(), 1);
  }

  Pipe pipe_;
  char buffer_[16] = {};
  Request request_;
  std::unique_ptr<IoUringEngine> engine_;  // destroyed first: it may still hold request_
};

TEST_F(BlockedPipeReadTest, CancelsABlockedPipeRead) {
  engine_->Poll();
  EXPECT_EQ(request_.state.load(), RequestState::kSubmitted);  // nothing to read yet
  engine_->Cancel(&request_);
  engine_->Wait(&request_);
  EXPECT_EQ(request_.state.load(), RequestState::kCompleted);
  EXPECT_EQ(request_.result, -ECANCELED);
  // The cancelled read consumed nothing.
  ASSERT_EQ(write(pipe_.write_end(), "abc", 3), 3);
  char direct[8];
  EXPECT_EQ(read(pipe_.read_end(), direct, sizeof(direct)), 3);
}

TEST_F(BlockedPipeReadTest, BlockedReadCompletesWhenDataArrives) {
  std::thread writer([this] {
    usleep(20000);
    EXPECT_EQ(write(pipe_.write_end(), "hello", 5), 5);
  });
  engine_->Wait(&request_);
  writer.join();
  EXPECT_EQ(request_.result, 5);
  EXPECT_EQ(std::string(buffer_, 5), "hello");
}

TEST(IoUringEngineTest, DestructorCancelsBlockedRequests) {
  std::unique_ptr<IoUringEngine> engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  Pipe pipe;
  ASSERT_TRUE(pipe.ok());
  char buffer[3][16];
  Request requests[3];
  for (int i = 0; i < 3; ++i) {
    SetUpRead(&requests[i], pipe.read_end(), buffer[i], sizeof(buffer[i]), 0);
    ASSERT_TRUE(engine->Prepare(&requests[i]));
  }
  ASSERT_EQ(engine->Submit(), 3);
  engine.reset();
  for (const Request& request : requests) {
    EXPECT_EQ(request.state.load(), RequestState::kCompleted);
    EXPECT_EQ(request.result, -ECANCELED);
  }
}

// Streamed requests (a copy's coalesced direct reads) are in the ring at
// most kStreamedRequestsAtOnce at a time; the others wait in the engine, in
// order, and go in as those before them complete.  Each streamed request
// here reads its own pipe, which blocks until the test writes to it.
TEST(IoUringEngineTest, StreamedRequestsAreInTheRingAFewAtATimeInOrder) {
  constexpr size_t kAtOnce = kStreamedRequestsAtOnce;
  constexpr size_t kRequests = kAtOnce + 3;
  std::unique_ptr<IoUringEngine> engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  Pipe pipes[kRequests];
  char buffers[kRequests][4] = {};
  Request requests[kRequests];
  for (size_t i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(pipes[i].ok());
    SetUpRead(&requests[i], pipes[i].read_end(), buffers[i], sizeof(buffers[i]), 0);
    requests[i].streamed = true;
    ASSERT_TRUE(engine->Prepare(&requests[i]));
  }
  ASSERT_EQ(engine->Submit(), static_cast<int>(kAtOnce));
  for (size_t i = 0; i < kRequests; ++i) {
    EXPECT_EQ(requests[i].state.load(),
              i < kAtOnce ? RequestState::kSubmitted : RequestState::kPrepared)
        << "request " << i;
  }
  // A request that is not streamed goes into the ring at once.
  char byte = 'x';
  Request other;
  const int zero = open("/dev/zero", O_RDONLY);
  ASSERT_GE(zero, 0);
  SetUpRead(&other, zero, &byte, 1, 0);
  ASSERT_TRUE(engine->Prepare(&other));
  ASSERT_EQ(engine->Submit(), 1);
  engine->Wait(&other);
  EXPECT_EQ(other.result, 1);
  close(zero);
  // The first completes: the next in order takes its place, and only it.
  ASSERT_EQ(write(pipes[0].write_end(), "r0", 2), 2);
  engine->Wait(&requests[0]);
  EXPECT_EQ(requests[0].result, 2);
  EXPECT_EQ(requests[kAtOnce].state.load(), RequestState::kSubmitted);
  for (size_t i = kAtOnce + 1; i < kRequests; ++i) {
    EXPECT_EQ(requests[i].state.load(), RequestState::kPrepared) << "request " << i;
  }
  // A held request never ran: cancelled, it completes at once.
  engine->Cancel(&requests[kAtOnce + 1]);
  EXPECT_EQ(requests[kAtOnce + 1].state.load(), RequestState::kCompleted);
  EXPECT_EQ(requests[kAtOnce + 1].result, -ECANCELED);
  // Waiting for a held request lets those before it complete first.
  for (size_t i = 1; i < kRequests; ++i) {
    if (i == kAtOnce + 1) continue;
    ASSERT_EQ(write(pipes[i].write_end(), "rr", 2), 2);
  }
  engine->Wait(&requests[kRequests - 1]);
  for (size_t i = 1; i < kRequests; ++i) {
    if (i == kAtOnce + 1) continue;
    engine->Wait(&requests[i]);
    EXPECT_EQ(requests[i].result, 2) << "request " << i;
  }
  // The destructor completes held requests as never run.
  Request late[kAtOnce + 1];
  for (size_t i = 0; i <= kAtOnce; ++i) {
    SetUpRead(&late[i], pipes[0].read_end(), buffers[i], sizeof(buffers[i]), 0);
    late[i].streamed = true;
    ASSERT_TRUE(engine->Prepare(&late[i]));
  }
  ASSERT_EQ(engine->Submit(), static_cast<int>(kAtOnce));
  engine.reset();
  for (const Request& request : late) {
    EXPECT_EQ(request.state.load(), RequestState::kCompleted);
    EXPECT_EQ(request.result, -ECANCELED);
  }
}

// Reads of an empty pipe never complete by themselves: the destructor must
// cancel every one, also one the kernel was still issuing when its first
// cancellation ran (it escaped that one about once in 500 engines, and the
// destructor then waited forever).  Many engines, so that the race comes up.
TEST(IoUringEngineTest, DestructorCancelsEveryReadThatWouldNeverComplete) {
  constexpr int kEngines = 3000;
  constexpr size_t kReads = kStreamedRequestsAtOnce + 1;  // one held back
  Pipe pipe;
  ASSERT_TRUE(pipe.ok());
  for (int round = 0; round < kEngines; ++round) {
    std::unique_ptr<IoUringEngine> engine = MakeEngine();
    ASSERT_NE(engine, nullptr);
    char buffers[kReads][4] = {};
    Request reads[kReads];
    for (size_t i = 0; i < kReads; ++i) {
      SetUpRead(&reads[i], pipe.read_end(), buffers[i], sizeof(buffers[i]), 0);
      reads[i].streamed = true;
      ASSERT_TRUE(engine->Prepare(&reads[i]));
    }
    ASSERT_EQ(engine->Submit(), static_cast<int>(kStreamedRequestsAtOnce));
    engine.reset();
    for (const Request& read : reads) {
      ASSERT_EQ(read.state.load(), RequestState::kCompleted) << "engine " << round;
      ASSERT_EQ(read.result, -ECANCELED) << "engine " << round;
    }
  }
}

// The SQ holds queue_size entries and the CQ twice as many: Prepare must
// refuse before either could overflow (keeping one CQ slot for a
// cancellation), and accept again once room is back.
TEST(IoUringEngineTest, PrepareRefusesWhenTheQueueIsFull) {
  EngineOptions options;
  options.queue_size = 8;
  std::unique_ptr<IoUringEngine> engine = MakeEngine(options);
  ASSERT_NE(engine, nullptr);
  Pipe pipe;
  ASSERT_TRUE(pipe.ok());
  char buffer[40][4];
  Request requests[40];
  int prepared = 0;
  while (prepared < 40) {
    SetUpRead(&requests[prepared], pipe.read_end(), buffer[prepared], 1, 0);
    if (!engine->Prepare(&requests[prepared])) break;
    ++prepared;
  }
  EXPECT_EQ(prepared, 8);  // the SQ is full
  EXPECT_EQ(requests[8].state.load(), RequestState::kIdle);
  ASSERT_EQ(engine->Submit(), 8);
  while (prepared < 40) {
    SetUpRead(&requests[prepared], pipe.read_end(), buffer[prepared], 1, 0);
    if (!engine->Prepare(&requests[prepared])) break;
    ++prepared;
  }
  EXPECT_EQ(prepared, 15);  // the CQ (16) could hold no more, one slot kept for cancels
  ASSERT_EQ(engine->Submit(), 7);
  // A linked pair never fits half: still refused as a whole.
  Request head, tail;
  SetUpRead(&head, pipe.read_end(), buffer[30], 1, 0);
  SetUpRead(&tail, pipe.read_end(), buffer[31], 1, 0);
  head.linked_next = &tail;
  EXPECT_FALSE(engine->Prepare(&head));
  EXPECT_EQ(head.state.load(), RequestState::kIdle);
  EXPECT_EQ(tail.state.load(), RequestState::kIdle);
  // Feed two bytes: two reads complete, and there is room for the pair.
  ASSERT_EQ(write(pipe.write_end(), "xy", 2), 2);
  // Whichever reads got the bytes complete: poll until two did.
  int completed = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (completed < 2 && std::chrono::steady_clock::now() < deadline) {
    engine->Poll();
    completed = 0;
    for (int r = 0; r < 15; ++r) completed += requests[r].state.load() == RequestState::kCompleted;
  }
  EXPECT_EQ(completed, 2);
  EXPECT_TRUE(engine->Prepare(&head));
  EXPECT_EQ(engine->Submit(), 2);
  engine.reset();  // cancels the rest
  EXPECT_EQ(head.state.load(), RequestState::kCompleted);
  EXPECT_EQ(tail.state.load(), RequestState::kCompleted);
}

TEST(IoUringEngineTest, RefusesWhatIoUringCannotExpressExactly) {
  std::unique_ptr<IoUringEngine> engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  char buffer[8];
  Request request;
  SetUpRead(&request, 0, buffer, sizeof(buffer), -1);
  EXPECT_FALSE(engine->Prepare(&request));  // would mean "current position"
  SetUpRead(&request, 0, buffer, size_t{1} << 32, 0);
  EXPECT_FALSE(engine->Prepare(&request));  // does not fit an SQE
  SetUpRead(&request, 0, buffer, sizeof(buffer), 0);
  request.call.type = FOREACTOR_CALL_PREADV;
  request.call.iov = nullptr;
  request.call.iovcnt = 0;
  EXPECT_FALSE(engine->Prepare(&request));
  SetUpRead(&request, 0, buffer, sizeof(buffer), 0);
  request.call.type = FOREACTOR_CALL_LSEEK;
  EXPECT_FALSE(engine->Prepare(&request));
  EXPECT_EQ(request.state.load(), RequestState::kIdle);
  EXPECT_EQ(engine->Submit(), 0);
}

// IOSQE_ASYNC and an io-wq worker cap change how, never what.
TEST(IoUringEngineTest, AsyncOptionAndWorkerCapGiveTheSameResults) {
  TempDir dir;
  ASSERT_TRUE(dir.WritePatternFile("data", 64 * 4096 + 10));
  const int fd = open(dir.Path("data").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EngineOptions options;
  options.io_uring_async = true;
  options.workers = 2;
  std::unique_ptr<IoUringEngine> engine = MakeEngine(options);
  ASSERT_NE(engine, nullptr);
  std::vector<std::vector<char>> buffers(65, std::vector<char>(4096));
  std::vector<Request> requests(65);
  for (int i = 0; i < 65; ++i) {
    SetUpRead(&requests[i], fd, buffers[i].data(), 4096, int64_t{i} * 4096);
    ASSERT_TRUE(engine->Prepare(&requests[i]));
  }
  ASSERT_EQ(engine->Submit(), 65);
  for (int i = 64; i >= 0; --i) {
    engine->Wait(&requests[i]);
    ASSERT_EQ(requests[i].result, i == 64 ? 10 : 4096);
    EXPECT_EQ(buffers[i][9], PatternByte(static_cast<uint64_t>(i) * 4096 + 9));
  }
  // A short asynchronous read still cancels its linked successor.
  const int target = open(dir.Path("copy").c_str(), O_CREAT | O_WRONLY, 0644);
  Request read, write;
  SetUpRead(&read, fd, buffers[0].data(), 4096, 64 * 4096);
  read.linked_next = &write;
  SetUpRead(&write, target, buffers[0].data(), 4096, 0);
  write.call.type = FOREACTOR_CALL_PWRITE;
  ASSERT_TRUE(engine->Prepare(&read));
  ASSERT_EQ(engine->Submit(), 2);
  engine->Wait(&read);
  engine->Wait(&write);
  EXPECT_EQ(read.result, 10);
  EXPECT_EQ(write.result, -ECANCELED);
  EXPECT_EQ(dir.ReadAll("copy").size(), 0u);
  close(target);
  close(fd);
}

// A submission the kernel refuses fails with the error and completes its
// requests as not executed (-ECANCELED: the error is no result of the
// calls, and the runtime runs them itself), and the engine keeps working.  The ring is
// single-issuer when the kernel allows: a submission from another thread is then refused with
// EEXIST.
TEST(IoUringEngineTest, FailedSubmissionCompletesItsRequests) {
  TempDir dir;
  ASSERT_TRUE(dir.WritePatternFile("data", 3 * 4096));
  const int fd = open(dir.Path("data").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::unique_ptr<IoUringEngine> engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  std::vector<char> buffers[3] = {std::vector<char>(4096), std::vector<char>(4096),
                                  std::vector<char>(4096)};
  Request requests[3];
  for (int i = 0; i < 3; ++i) {
    SetUpRead(&requests[i], fd, buffers[i].data(), 4096, int64_t{i} * 4096);
    ASSERT_TRUE(engine->Prepare(&requests[i]));
  }
  int submitted = 0;
  std::thread other([&] { submitted = engine->Submit(); });
  other.join();
  if (submitted == 3) {
    for (Request& request : requests) engine->Wait(&request);
    close(fd);
    GTEST_SKIP() << "the ring is not single-issuer on this kernel";
  }
  EXPECT_EQ(submitted, -EEXIST);
  for (const Request& request : requests) {
    EXPECT_EQ(request.state.load(), RequestState::kCompleted);
    EXPECT_EQ(request.result, -ECANCELED);
  }
  // The owner thread goes on; the SQEs left behind are harmless.
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 3; ++i) {
      SetUpRead(&requests[i], fd, buffers[i].data(), 4096, int64_t{i} * 4096);
      ASSERT_TRUE(engine->Prepare(&requests[i]));
    }
    ASSERT_EQ(engine->Submit(), 3);
    for (int i = 0; i < 3; ++i) {
      engine->Wait(&requests[i]);
      EXPECT_EQ(requests[i].result, 4096);
      EXPECT_EQ(buffers[i][100], PatternByte(static_cast<uint64_t>(i) * 4096 + 100));
    }
  }
  close(fd);
}

// After fork() the child must never use the parent's ring (its requests
// cannot be waited for there), and the parent's requests are unaffected.
// Threads of this process that are io_uring's kernel workers.
int KernelWorkerThreads() {
  int count = 0;
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return -1;
  while (struct dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] == '.') continue;
    const std::string path = std::string("/proc/self/task/") + entry->d_name + "/comm";
    FILE* comm = std::fopen(path.c_str(), "r");
    if (comm == nullptr) continue;
    char name[32] = {};
    if (std::fgets(name, sizeof(name), comm) != nullptr && std::strncmp(name, "iou-wrk", 7) == 0) {
      ++count;
    }
    std::fclose(comm);
  }
  closedir(tasks);
  return count;
}

TEST(IoUringEngineTest, RestClosesTheRingAndItsWorkersAndTheNextRequestOpensANewRing) {
  EngineOptions options;
  options.io_uring_async = true;  // every request goes to a kernel worker
  std::unique_ptr<IoUringEngine> engine = MakeEngine(options);
  ASSERT_NE(engine, nullptr);
  const int with_ring = testing::OpenDescriptorCount();
  const int fd = open("/dev/zero", O_RDONLY);
  ASSERT_GE(fd, 0);
  char buffer[8] = {'x'};
  for (int round = 0; round < 2; ++round) {
    Request request;
    SetUpRead(&request, fd, buffer, sizeof(buffer), 0);
    ASSERT_TRUE(engine->Prepare(&request)) << "round " << round;
    ASSERT_EQ(engine->Submit(), 1) << "round " << round;
    engine->Wait(&request);
    EXPECT_EQ(request.result, 8) << "round " << round;
    EXPECT_EQ(testing::OpenDescriptorCount(), with_ring + 1) << "round " << round;
    EXPECT_GE(KernelWorkerThreads(), 1) << "round " << round;
    engine->Rest();
    EXPECT_EQ(testing::OpenDescriptorCount(), with_ring) << "the ring is closed, round " << round;
    bool workers_gone = false;
    for (int waited = 0; waited < 100 && !workers_gone; ++waited) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      workers_gone = KernelWorkerThreads() == 0;
    }
    EXPECT_TRUE(workers_gone) << "round " << round;
  }
  close(fd);
}

// A streamed read (a copy's coalesced direct reads) runs on an io-wq worker,
// which submits it to the device alone; inline, the reads of one
// submission would merge into fewer, larger device requests, which streamed
// slower.  A read served from the page cache that is not streamed completes
// inline, with no worker.  Run on a thread of its own: io-wq workers belong
// to the thread that submits (named iou-wrk-<its id>), and a fresh thread
// has none left over from other rings.
TEST(IoUringEngineTest, StreamedReadsRunOnKernelWorkers) {
  TempDir directory;
  ASSERT_TRUE(directory.ok());
  ASSERT_TRUE(directory.WritePatternFile("cached", 8192));  // written: in the page cache
  std::thread([&directory] {
    const std::string workers = "iou-wrk-" + std::to_string(gettid());
    std::unique_ptr<IoUringEngine> engine = MakeEngine();
    ASSERT_NE(engine, nullptr);
    const int fd = open(directory.Path("cached").c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    char buffer[4096] = {};
    for (const bool streamed : {false, true}) {
      Request request;
      SetUpRead(&request, fd, buffer, sizeof(buffer), 4096);
      request.streamed = streamed;
      ASSERT_TRUE(engine->Prepare(&request));
      ASSERT_EQ(engine->Submit(), 1);
      engine->Wait(&request);
      EXPECT_EQ(request.result, 4096);
      EXPECT_EQ(buffer[0], PatternByte(4096));
      if (streamed) {
        EXPECT_GE(testing::ThreadsNamed(workers), 1) << "a streamed read ran inline";
      } else {
        EXPECT_EQ(testing::ThreadsNamed(workers), 0) << "a cached read went to a worker";
      }
    }
    engine.reset();
    close(fd);
  }).join();
}

// One thread's ring is unmapped, then another thread maps its own, most
// often at the same address.  The kernel orders the two, but liburing maps
// rings with raw system calls that ThreadSanitizer does not see: under it
// (tests/sanitizers/run_sanitizers.sh) the second thread's accesses were
// reported as racing with the first's.  The threads share no lock, join or
// other ordering that ThreadSanitizer would see (the flag is relaxed).
TEST(IoUringEngineTest, ARingMappedAfterAnotherThreadsRingIsNotSharedWithIt) {
  const int fd = open("/dev/zero", O_RDONLY);
  ASSERT_GE(fd, 0);
  const auto read_through_a_ring = [fd] {
    std::unique_ptr<IoUringEngine> engine = MakeEngine();
    if (engine == nullptr) return;
    char buffer[8] = {'x'};
    Request request;
    SetUpRead(&request, fd, buffer, sizeof(buffer), 0);
    ASSERT_TRUE(engine->Prepare(&request));
    ASSERT_EQ(engine->Submit(), 1);
    engine->Wait(&request);
    EXPECT_EQ(request.result, 8);
    EXPECT_EQ(buffer[0], 0);
  };
  std::atomic<bool> first_ring_gone{false};
  std::thread first([&] {
    read_through_a_ring();
    first_ring_gone.store(true, std::memory_order_relaxed);
  });
  std::thread second([&] {
    while (!first_ring_gone.load(std::memory_order_relaxed)) std::this_thread::yield();
    read_through_a_ring();
  });
  first.join();
  second.join();
  close(fd);
}

TEST_F(BlockedPipeReadTest, RestWithARequestInFlightKeepsTheRing) {
  const int before = testing::OpenDescriptorCount();
  engine_->Rest();
  EXPECT_EQ(testing::OpenDescriptorCount(), before);
  ASSERT_EQ(write(pipe_.write_end(), "late", 4), 4);
  engine_->Wait(&request_);
  EXPECT_EQ(request_.result, 4);
  EXPECT_EQ(std::string(buffer_, 4), "late");
}

TEST(IoUringEngineTest, ForkedChildNeverTouchesTheParentsRing) {
  std::unique_ptr<IoUringEngine> engine = MakeEngine();
  ASSERT_NE(engine, nullptr);
  Pipe pipe;
  ASSERT_TRUE(pipe.ok());
  char buffer[16] = {};
  Request blocked;
  SetUpRead(&blocked, pipe.read_end(), buffer, sizeof(buffer), 0);
  ASSERT_TRUE(engine->Prepare(&blocked));
  ASSERT_EQ(engine->Submit(), 1);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int failures = 0;
    char other_buffer[8];
    Request other;
    SetUpRead(&other, pipe.read_end(), other_buffer, sizeof(other_buffer), 0);
    if (engine->Prepare(&other)) failures |= 1;
    engine->Cancel(&blocked);
    engine->Wait(&blocked);
    if (blocked.state.load() != RequestState::kCompleted || blocked.result != -ECANCELED) {
      failures |= 2;
    }
    engine.reset();
    _exit(failures);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(blocked.state.load(), RequestState::kSubmitted);
  ASSERT_EQ(write(pipe.write_end(), "parent", 6), 6);
  engine->Wait(&blocked);
  EXPECT_EQ(blocked.result, 6);
  EXPECT_EQ(std::string(buffer, 6), "parent");
}

// Installs a seccomp filter that fails io_uring_setup with EPERM.
bool ForbidIoUring() {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  return InstallSeccompFilter(filter, sizeof(filter) / sizeof(filter[0]));
}

TEST(IoUringEngineTest, ForbiddenIoUringFallsBackToTheThreadPoolWithAReason) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (!ForbidIoUring()) _exit(10);
    std::string error;
    if (IoUringEngine::Create(EngineOptions{}, &error) != nullptr) _exit(1);
    if (error != "Operation not permitted") _exit(2);
    std::string reason;
    std::unique_ptr<Engine> engine = CreateEngine(EngineOptions{}, &reason);
    if (engine == nullptr) _exit(3);
    if (std::strcmp(engine->name(), "threads") != 0) _exit(4);
    if (reason != "io_uring unavailable (Operation not permitted): using the thread pool") _exit(5);
    // The fallback engine works.
    char buffer[4] = {};
    Request request;
    const int fd = open("/dev/zero", O_RDONLY);
    SetUpRead(&request, fd, buffer, sizeof(buffer), 0);
    buffer[0] = 'x';
    if (!engine->Prepare(&request) || engine->Submit() != 1) _exit(6);
    engine->Wait(&request);
    if (request.result != 4 || buffer[0] != 0) _exit(7);
    engine.reset();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 10) GTEST_SKIP() << "cannot install a seccomp filter here";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace foreactor
