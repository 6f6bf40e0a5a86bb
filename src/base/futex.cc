// futex.cc: FutexWait() and FutexWakeAll() (futex.h).
#include "base/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

namespace foreactor {
namespace {

uint32_t* WordOf(const void* word) { return static_cast<uint32_t*>(const_cast<void*>(word)); }

}  // namespace

bool FutexWait(const void* word, uint32_t expected, const timespec* deadline) {
  // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline (none:
  // null).
  const long result = syscall(SYS_futex, WordOf(word), FUTEX_WAIT_BITSET_PRIVATE, expected,
                              deadline, nullptr, FUTEX_BITSET_MATCH_ANY);
  return result == 0 || errno != ETIMEDOUT;
}

void FutexWakeAll(const void* word) {
  syscall(SYS_futex, WordOf(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace foreactor
