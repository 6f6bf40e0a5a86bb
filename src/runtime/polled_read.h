// polled_read.h: reading a range whose device reads were started, by asking
// the page cache for it again and again instead of sleeping in pread(2).
//
// A thread that sleeps for the device pays twice for the sleep on a virtual
// machine: its CPU halts (an exit to the hypervisor when nothing else is
// ready to run there), and the completion's interrupt and then the wake-up
// must reach it.  A thread that polls (preadv2 with RWF_NOWAIT, which never
// waits) copies the pages as soon as the completion marks them read, at the
// cost of its CPU for the read's time, which it yields between tries to any
// other thread ready to run on it.
#ifndef FOREACTOR_RUNTIME_POLLED_READ_H_
#define FOREACTOR_RUNTIME_POLLED_READ_H_

#include <cstddef>
#include <cstdint>

namespace foreactor {

// Reads bytes [offset, offset + length) of `fd` into `buffer` as pread(2)
// would, for a range whose device reads have been started (readahead(2)):
// asks the page cache for the whole range without waiting, yielding the CPU
// (sched_yield) between tries, until it holds the range or `budget_ns`
// nanoseconds have passed (0: no try), and then reads with pread(2), which
// waits.  pread(2) also reads at once when a try fails otherwise than with
// EAGAIN (it then fails as the program's pread would, or reads where
// RWF_NOWAIT is not supported) or finds the range past the end of the file.
//
// Returns the bytes read, or -errno; never touches errno.  `*polled` is set
// when a try read the whole range (it came in while polling, or was cached).
int64_t ReadPolling(int fd, void* buffer, size_t length, int64_t offset, uint64_t budget_ns,
                    bool* polled);

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_POLLED_READ_H_
