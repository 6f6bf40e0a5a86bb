// polled_read.cc: reading a started range by polling the page cache
// (polled_read.h).
#include "runtime/polled_read.h"

#include <sched.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "runtime/monotonic_clock.h"
#include "runtime/raw_syscalls.h"

namespace foreactor {

int PollersForThisProcess() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return 1;
  return std::max(CPU_COUNT(&allowed), 1);
}

bool PollAdmission::TryClaimPoller() {
  int limit = max_pollers_.load(std::memory_order_relaxed);
  if (limit == 0) {
    limit = PollersForThisProcess();
    int unset = 0;  // (a racing thread's answer is the same)
    max_pollers_.compare_exchange_strong(unset, limit, std::memory_order_relaxed);
  }
  int taken = pollers_.load(std::memory_order_relaxed);
  do {
    if (taken >= limit) return false;
  } while (!pollers_.compare_exchange_weak(taken, taken + 1, std::memory_order_relaxed));
  return true;
}

namespace {

// Gives a claimed poller's place back, however the poll ends.
class PollerPlace {
 public:
  explicit PollerPlace(PollAdmission* admission) : admission_(admission) {}
  PollerPlace(const PollerPlace&) = delete;
  PollerPlace& operator=(const PollerPlace&) = delete;
  ~PollerPlace() { admission_->ReleasePoller(); }

 private:
  PollAdmission* admission_;
};

int64_t PollThenRead(int fd, void* buffer, size_t length, int64_t offset, uint64_t budget_ns,
                     PollAdmission* admission, bool* polled) {
  if (offset < 0) return -EINVAL;  // (pread's answer; ReadAt would read at the file position)
  uint64_t now = budget_ns > 0 && length > 0 ? MonotonicNanoseconds() : 0;
  if (now != 0 && admission->MayPoll(now) && admission->TryClaimPoller()) {
    const PollerPlace place(admission);
    const uint64_t deadline = now + budget_ns;
    bool within_file = false;  // the range ends before the end of the file
    for (;;) {
      const int64_t bytes = raw::Preadv2(fd, buffer, length, offset, RWF_NOWAIT);
      if (bytes == static_cast<int64_t>(length)) {
        *polled = true;
        return bytes;
      }
      if (bytes < 0 && bytes != -EAGAIN) break;
      if (bytes >= 0 && !within_file) {
        // Part of the range, or none: the end of the file, or pages still
        // coming in.  Asked once.
        struct stat status;
        if (raw::Fstat(fd, &status) < 0 ||
            static_cast<uint64_t>(status.st_size) < static_cast<uint64_t>(offset) + length) {
          break;
        }
        within_file = true;
      }
      const uint64_t before = now;
      now = MonotonicNanoseconds();
      if (now - before > kDescheduledGapNanoseconds) {
        admission->PollDescheduled(now);
        break;
      }
      if (now >= deadline) break;
    }
  }
  return raw::ReadAt(fd, buffer, length, offset);
}

}  // namespace

int64_t ReadPolling(int fd, void* buffer, size_t length, int64_t offset, uint64_t budget_ns,
                    PollAdmission* admission, bool* polled) {
  *polled = false;
  const int saved_errno = errno;  // (the raw calls set it when they fail)
  const int64_t result = PollThenRead(fd, buffer, length, offset, budget_ns, admission, polled);
  errno = saved_errno;
  return result;
}

}  // namespace foreactor
