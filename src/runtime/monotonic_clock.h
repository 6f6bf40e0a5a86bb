// monotonic_clock.h: the runtime's one clock.
#ifndef FOREACTOR_RUNTIME_MONOTONIC_CLOCK_H_
#define FOREACTOR_RUNTIME_MONOTONIC_CLOCK_H_

#include <time.h>

#include <cstdint>

namespace foreactor {

// CLOCK_MONOTONIC in nanoseconds (a vDSO read, no system call).
inline uint64_t MonotonicNanoseconds() {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_MONOTONIC_CLOCK_H_
