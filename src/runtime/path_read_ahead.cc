// path_read_ahead.cc: PathReadAhead (path_read_ahead.h).
#include "runtime/path_read_ahead.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "base/fork.h"
#include "base/futex.h"
#include "base/quiet_thread.h"
#include "runtime/pages_cached.h"
#include "runtime/raw_syscalls.h"
#include "runtime/reopened_file.h"

namespace foreactor {
namespace {

struct Hint {
  uint64_t offset = 0;
  uint64_t length = 0;
  dev_t device = 0;
  ino_t inode = 0;
  char path[PATH_MAX] = {};
};

// The hints of the process, in a ring of kQueueEntries.  Hint number n
// (counted from the thread's start) sits at hints[n % kQueueEntries]; the
// queueing thread writes it under the mutex while queued - taken <
// kQueueEntries, and the hint thread reads it outside the mutex until it
// counts it taken, so no entry is written and read at once.
struct HintQueue {
  std::mutex mutex;
  Hint* hints = nullptr;  // mapped at the first hint, never unmapped
  uint64_t queued = 0;    // hints queued since the thread started
  uint64_t taken = 0;     // hints the thread has carried out (or dropped)
  bool thread_started = false;
  // ForkGeneration() of the thread's start: written under the mutex, read
  // without it by Needless() (a forked child judges its own thread's hints).
  std::atomic<unsigned> generation{0};
  // `taken` when a caller last gave up waiting for room: while the thread
  // has taken nothing since, a full ring drops hints at once.
  uint64_t taken_when_given_up = UINT64_MAX;
  // Bumped after each hint queued: the thread waits on it when idle.
  std::atomic<uint32_t> queued_signal{0};
  // Bumped after each hint taken: a caller finding the ring full waits on it
  // (WaitForTaken, a futex wait with a time limit).
  std::atomic<uint32_t> taken_signal{0};
  // Hints carried out in a row whose whole range the page cache held
  // (written by the thread; up to PathReadAhead::kNeedlessInARow), and the
  // calls Needless() answered since (the probe's count).
  std::atomic<uint32_t> cached_in_a_row{0};
  std::atomic<uint32_t> needless_calls{0};
};
constinit HintQueue queue;

// A fork while another thread queues would leave the child's mutex locked
// for ever: it is held across fork() (added at load, as private_memory.cc's).
__attribute__((constructor)) void AddForkHandlersAtLoad() {
  (void)AddForkHandlers(HoldAcrossFork<queue.mutex>());
}

// How long a caller finding the ring full waits for the thread to take a
// hint before it drops its own.  Far beyond any open and readahead(2) of a
// working machine: the limit is there so that a thread that stopped
// progressing (an open stuck on a dead network mount, a thread that never
// ran) costs the program at most this once, never a hang.
constexpr time_t kRoomWaitSeconds = 2;

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "taken_signal is the futex word callers wait on");

// Waits until queue.taken_signal differs from `seen`, at most
// kRoomWaitSeconds; false when the time ran out.
bool WaitForTaken(uint32_t seen) {
  timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += kRoomWaitSeconds;
  for (;;) {
    if (queue.taken_signal.load(std::memory_order_acquire) != seen) return true;
    if (!FutexWait(&queue.taken_signal, seen, &deadline)) {
      return queue.taken_signal.load(std::memory_order_acquire) != seen;
    }
  }
}

// Wakes every caller in WaitForTaken().
void WakeTakenWaiters() {
  queue.taken_signal.fetch_add(1, std::memory_order_release);
  FutexWakeAll(&queue.taken_signal);
}

// Opens the file of `hint` and starts reading its range, in the hint
// thread's own descriptor table.
void CarryOut(const Hint& hint) {
  // The path may name another file by now than the one the caller checked.
  const int descriptor = OpenSameRegularFile(
      hint.path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, hint.device, hint.inode);
  if (descriptor < 0) return;
  if (RangeCached(descriptor, hint.offset, hint.length)) {
    if (queue.cached_in_a_row.load(std::memory_order_relaxed) < PathReadAhead::kNeedlessInARow)
      queue.cached_in_a_row.fetch_add(1, std::memory_order_relaxed);
  } else {
    queue.cached_in_a_row.store(0, std::memory_order_relaxed);
    raw::Readahead(descriptor, static_cast<int64_t>(hint.offset), hint.length);
  }
  raw::Close(descriptor);
}

void* RunHints(void*) {
  prctl(PR_SET_NAME, "foreactor-ahead", 0, 0, 0);
  // Where the kernel refuses a table of its own, hints are taken and
  // dropped: opening in the program's table is what this thread avoids.
  const bool own_table = TakeEmptyDescriptorTable();
  for (;;) {
    const uint32_t signal = queue.queued_signal.load(std::memory_order_acquire);
    const Hint* hint = nullptr;
    {
      std::lock_guard lock(queue.mutex);
      if (queue.taken < queue.queued)
        hint = &queue.hints[queue.taken % PathReadAhead::kQueueEntries];
    }
    if (hint == nullptr) {
      queue.queued_signal.wait(signal, std::memory_order_acquire);
      continue;
    }
    if (own_table) CarryOut(*hint);
    {
      std::lock_guard lock(queue.mutex);
      queue.taken++;
    }
    WakeTakenWaiters();
  }
  return nullptr;
}

// Under queue.mutex: makes sure this process has a hint thread (a forked
// child has none of its parent's: hints queued there are dropped).  False
// when none can be started.
bool EnsureThreadLocked() {
  const unsigned generation = ForkGeneration();
  if (queue.thread_started && queue.generation.load(std::memory_order_relaxed) == generation)
    return true;
  if (queue.hints == nullptr) {
    void* mapping = mmap(nullptr, sizeof(Hint) * PathReadAhead::kQueueEntries,
                         PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapping == MAP_FAILED) return false;
    queue.hints = static_cast<Hint*>(mapping);
  }
  queue.queued = 0;
  queue.taken = 0;
  queue.taken_when_given_up = UINT64_MAX;
  queue.generation.store(StartCountingForks(), std::memory_order_relaxed);
  queue.cached_in_a_row.store(0, std::memory_order_relaxed);
  queue.needless_calls.store(0, std::memory_order_relaxed);
  queue.thread_started = StartQuietThread(&RunHints, nullptr, PathReadAhead::kStackBytes,
                                          /*detached=*/true, nullptr) == 0;
  return queue.thread_started;
}

}  // namespace

bool PathReadAhead::Needless() {
  if (queue.cached_in_a_row.load(std::memory_order_relaxed) < kNeedlessInARow ||
      queue.generation.load(std::memory_order_relaxed) != ForkGeneration()) {
    return false;
  }
  return queue.needless_calls.fetch_add(1, std::memory_order_relaxed) % kProbeEvery != 0;
}

void PathReadAhead::ForgetHintsFoundCachedForTest() {
  queue.cached_in_a_row.store(0, std::memory_order_relaxed);
  queue.needless_calls.store(0, std::memory_order_relaxed);
}

bool PathReadAhead::Queue(const char* path, dev_t device, ino_t inode, uint64_t offset,
                          uint64_t length) {
  const size_t path_bytes = std::strlen(path) + 1;
  if (path_bytes > PATH_MAX) return false;
  for (;;) {
    const uint32_t signal = queue.taken_signal.load(std::memory_order_acquire);
    {
      std::lock_guard lock(queue.mutex);
      if (!EnsureThreadLocked()) return false;
      if (queue.queued - queue.taken < kQueueEntries) {
        Hint& hint = queue.hints[queue.queued % kQueueEntries];
        hint.offset = offset;
        hint.length = length;
        hint.device = device;
        hint.inode = inode;
        std::memcpy(hint.path, path, path_bytes);
        queue.queued++;
        break;
      }
      // Full, and the thread has taken nothing since a caller last waited
      // in vain: it is not progressing, drop the hint.
      if (queue.taken == queue.taken_when_given_up) return false;
    }
    if (!WaitForTaken(signal)) {
      std::lock_guard lock(queue.mutex);
      queue.taken_when_given_up = queue.taken;
    }
  }
  queue.queued_signal.fetch_add(1, std::memory_order_release);
  queue.queued_signal.notify_one();
  return true;
}

}  // namespace foreactor
