// polled_read.cc: reading a started range by polling the page cache
// (polled_read.h).
#include "runtime/polled_read.h"

#include <sys/stat.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstdint>

#include "runtime/monotonic_clock.h"
#include "runtime/raw_syscalls.h"

namespace foreactor {

namespace {

int64_t PollThenRead(int fd, void* buffer, size_t length, int64_t offset, uint64_t budget_ns,
                     PollBackoff* backoff, bool* polled) {
  if (offset < 0) return -EINVAL;  // (pread's answer; ReadAt would read at the file position)
  uint64_t now = budget_ns > 0 && length > 0 ? MonotonicNanoseconds() : 0;
  if (now != 0 && backoff->MayPoll(now)) {
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
        backoff->PollDescheduled(now);
        break;
      }
      if (now >= deadline) break;
    }
  }
  return raw::ReadAt(fd, buffer, length, offset);
}

}  // namespace

int64_t ReadPolling(int fd, void* buffer, size_t length, int64_t offset, uint64_t budget_ns,
                    PollBackoff* backoff, bool* polled) {
  *polled = false;
  const int saved_errno = errno;  // (the raw calls set it when they fail)
  const int64_t result = PollThenRead(fd, buffer, length, offset, budget_ns, backoff, polled);
  errno = saved_errno;
  return result;
}

}  // namespace foreactor
