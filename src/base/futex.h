// futex.h: waiting on and waking a 32-bit word of shared memory (futex(2),
// private to the process), for the few places that sleep on a word they
// also use as state: an engine request's state, the read-ahead hint
// queue's taken count.
#ifndef FOREACTOR_BASE_FUTEX_H_
#define FOREACTOR_BASE_FUTEX_H_

#include <time.h>

#include <cstdint>

namespace foreactor {

// `word` is the address of a 4-byte, lock-free std::atomic (of an integer
// or of an enumeration with an int or uint32_t underlying type) that the
// callers load and store with the atomic's own operations; its bits are
// compared with `expected`.
//
// Sleeps while `*word` holds `expected`, until FutexWakeAll(word), a signal
// or, when `deadline` is not null, the CLOCK_MONOTONIC time `*deadline`.
// Returns at once when `*word` differs from `expected`.  May return
// spuriously: the caller reloads the word and decides.  Returns false only
// when the deadline passed.
bool FutexWait(const void* word, uint32_t expected, const timespec* deadline = nullptr);

// Wakes every thread in FutexWait() on `word`.
void FutexWakeAll(const void* word);

}  // namespace foreactor

#endif  // FOREACTOR_BASE_FUTEX_H_
