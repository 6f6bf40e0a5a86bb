// polled_read.h: reading a range whose device reads were started, by asking
// the page cache for it again and again instead of sleeping in pread(2).
//
// A thread that sleeps for the device pays twice for the sleep on a virtual
// machine: its CPU halts (an exit to the hypervisor when nothing else is
// ready to run there), and the completion's interrupt and then the wake-up
// must reach it.  A thread that polls (preadv2 with RWF_NOWAIT, which never
// waits) copies the pages as soon as the completion marks them read, at the
// cost of its CPU for the read's time.
//
// That pays only while the machine has a CPU to spare.  When other threads
// want the CPUs, the scheduler takes the poller's for a time slice
// (milliseconds), where a sleeper would have been woken as its read came
// in, and the poll takes CPU time those threads could have used: with 8 of
// LevelDB's Get threads on 2 CPUs, polling that backed off per thread made
// the average Get 1.13x and its p99 3.1x that of sleeping.  So a poll that
// finds it lost its CPU stops, no thread of the process polls for a while,
// and no more threads poll at once than the process has CPUs
// (PollAdmission).
#ifndef FOREACTOR_RUNTIME_POLLED_READ_H_
#define FOREACTOR_RUNTIME_POLLED_READ_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace foreactor {

// When the threads of a process may poll:
//  - not for a window after a poll lost its CPU, a window that doubles,
//    from kFirstWindowNanoseconds up to kLastWindowNanoseconds, at each
//    such poll within twice the window after the last one, and starts over
//    otherwise;
//  - and at most as many threads at once as the CPUs the process may run
//    on: a poller holds its CPU for the read's time, so one more would
//    hold a CPU that a thread with work to do is waiting for, and the
//    window above starts only once a poll has lost its CPU.  (One poller
//    fewer than the CPUs cost 2 of LevelDB's Get threads on 2 CPUs 7-9%
//    of their average: both gain from polling.)
// Thread-safe (relaxed atomics: threads racing may each set the window;
// any of their answers will do).
class PollAdmission {
 public:
  static constexpr uint64_t kFirstWindowNanoseconds = 10000000;     // 10 ms
  static constexpr uint64_t kLastWindowNanoseconds = 10000000000u;  // 10 s

  // True when a poll may start at `now` (MonotonicNanoseconds()).
  bool MayPoll(uint64_t now) const { return now >= resume_at_.load(std::memory_order_relaxed); }
  // A poll lost its CPU at `now`: no poll before the end of the window.
  void PollDescheduled(uint64_t now) {
    const uint64_t last = resume_at_.load(std::memory_order_relaxed);
    uint64_t window = window_.load(std::memory_order_relaxed);
    window = last != 0 && now < last + window ? std::min(2 * window, kLastWindowNanoseconds)
                                              : kFirstWindowNanoseconds;
    window_.store(window, std::memory_order_relaxed);
    resume_at_.store(now + window, std::memory_order_relaxed);
  }

  // Takes one of the places of threads polling at once, if one is free
  // (true); give it back with ReleasePoller().  The number of places is
  // SetMaxPollers()'s, or else PollersForThisProcess() at the first call.
  bool TryClaimPoller();
  void ReleasePoller() { pollers_.fetch_sub(1, std::memory_order_relaxed); }
  // At most `count` (at least 1) threads poll at once from now on.
  void SetMaxPollers(int count) {
    max_pollers_.store(std::max(count, 1), std::memory_order_relaxed);
  }

 private:
  std::atomic<uint64_t> resume_at_{0};
  std::atomic<uint64_t> window_{kFirstWindowNanoseconds};
  std::atomic<int> pollers_{0};      // places taken
  std::atomic<int> max_pollers_{0};  // 0: not decided yet
};

// The CPUs this process may run on (sched_getaffinity(2)), at least 1.
int PollersForThisProcess();

// A gap this long between two tries of a poll means the poller lost its
// CPU to another thread (an interrupt and its soft interrupt take less).
// On LevelDB's threads sweep (2 CPUs), 50 us also stopped the polls of 2
// Get threads, which gain 15% from them; 150 us let 4 and 8 threads poll
// on and lose up to 5% of the average.
inline constexpr uint64_t kDescheduledGapNanoseconds = 100000;

// Reads bytes [offset, offset + length) of `fd` into `buffer` as pread(2)
// would, for a range whose device reads have been started (readahead(2)):
// asks the page cache for the whole range without waiting, again and again,
// until it holds the range or `budget_ns` nanoseconds have passed (0: no
// try), and then reads with pread(2), which waits.  pread(2) also reads at
// once when a try fails otherwise than with EAGAIN (it then fails as the
// program's pread would, or reads where RWF_NOWAIT is not supported), finds
// the range past the end of the file, or comes more than
// kDescheduledGapNanoseconds after the one before (`*admission` is told).  No
// try while `admission` says no poll may start or has no place for one more
// poller.
//
// Returns the bytes read, or -errno; never touches errno.  `*polled` is set
// when a try read the whole range (it came in while polling, or was cached).
int64_t ReadPolling(int fd, void* buffer, size_t length, int64_t offset, uint64_t budget_ns,
                    PollAdmission* admission, bool* polled);

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_POLLED_READ_H_
