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
// That pays only while the CPU has nothing else to run.  When another
// thread wants it, the scheduler takes it from the poller for a time slice
// (milliseconds), where a sleeper would have been woken as its read came
// in; and the poll takes CPU time that thread could have used.  So a poll
// that finds itself descheduled stops, and its thread polls again only
// after a number of reads that doubles at each such poll (PollBackoff).
#ifndef FOREACTOR_RUNTIME_POLLED_READ_H_
#define FOREACTOR_RUNTIME_POLLED_READ_H_

#include <cstddef>
#include <cstdint>

namespace foreactor {

// When one thread polls: after a poll that was descheduled, the thread's
// next reads sleep, 1 of them, then 2, 4, ... up to kMaxReadsAsleep after
// each such poll in a row; a poll that was not descheduled starts over.
// Not thread-safe: one per thread.
class PollBackoff {
 public:
  static constexpr uint32_t kMaxReadsAsleep = 4096;

  // True when the thread's next read may poll; false counts one read
  // asleep.
  bool MayPoll() {
    if (reads_asleep_left_ == 0) return true;
    reads_asleep_left_--;
    return false;
  }
  // The last poll ran without losing its CPU.
  void PolledUndisturbed() { next_reads_asleep_ = 1; }
  // The last poll lost its CPU to another thread.
  void PollDescheduled() {
    reads_asleep_left_ = next_reads_asleep_;
    if (next_reads_asleep_ < kMaxReadsAsleep) next_reads_asleep_ *= 2;
  }

 private:
  uint32_t reads_asleep_left_ = 0;
  uint32_t next_reads_asleep_ = 1;
};

// A gap this long between two tries of a poll means the poller lost its
// CPU (an interrupt and its soft interrupt take tens of microseconds at
// most; a time slice, most of a millisecond or more).
inline constexpr uint64_t kDescheduledGapNanoseconds = 150000;

// Reads bytes [offset, offset + length) of `fd` into `buffer` as pread(2)
// would, for a range whose device reads have been started (readahead(2)):
// asks the page cache for the whole range without waiting, again and again,
// until it holds the range or `budget_ns` nanoseconds have passed (0: no
// try), and then reads with pread(2), which waits.  pread(2) also reads at
// once when a try fails otherwise than with EAGAIN (it then fails as the
// program's pread would, or reads where RWF_NOWAIT is not supported), finds
// the range past the end of the file, or comes more than
// kDescheduledGapNanoseconds after the one before (`*backoff` is told; a
// poll the range ends is told too).  No try when `backoff` says so.
//
// Returns the bytes read, or -errno; never touches errno.  `*polled` is set
// when a try read the whole range (it came in while polling, or was cached).
int64_t ReadPolling(int fd, void* buffer, size_t length, int64_t offset, uint64_t budget_ns,
                    PollBackoff* backoff, bool* polled);

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_POLLED_READ_H_
