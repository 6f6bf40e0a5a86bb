// quiet_thread.h: threads of foreactor's own, which no signal meant for the
// program ever reaches.
#ifndef FOREACTOR_BASE_QUIET_THREAD_H_
#define FOREACTOR_BASE_QUIET_THREAD_H_

#include <pthread.h>

#include <cstddef>

namespace foreactor {

// Starts `main(argument)` on a new thread with every signal blocked and a
// stack of `stack_bytes`.  A signal meant for the program must never run
// its handler on a thread of foreactor's, and a thread starts with the mask
// in force at its creation: the calling thread blocks every signal around
// pthread_create(3) and then restores its own mask.  `detached`: nobody
// joins the thread; otherwise `*thread` receives it, for pthread_join(3)
// (`thread` may be null when detached).  Returns 0, or the error number of
// pthread_create(3) (then no thread runs).
//
// The new thread starts on a CPU other than the caller's when the caller's
// CPU affinity allows another: the caller goes on with the program's work,
// and Linux otherwise often queues a new thread on its parent's CPU, where
// it waits for the parent's time slice to end (a thread started beside a
// program that page-faults in a buffer waited 2-4 ms on the development VM
// before its first instruction, with the other CPU idle).  From its first
// instruction of `main` on, the thread's affinity is the caller's again,
// so the scheduler moves it freely; where placing it fails, and under a
// seccomp filter (which may kill the process for the affinity calls), it
// starts as pthread_create(3) places it.
int StartQuietThread(void* (*main)(void*), void* argument, size_t stack_bytes, bool detached,
                     pthread_t* thread);

// Gives the calling thread a descriptor table of its own that holds none of
// the program's descriptors: close_range(2) of every number with
// CLOSE_RANGE_UNSHARE, which copies the table only below the range closed,
// so nothing is copied and nothing of the program's is closed.  What the
// thread opens afterwards never takes a number of the program's, and
// closing it releases none of the program's POSIX record locks (closing
// any descriptor of a file in the program's table would).  Returns false
// where the kernel refuses (before Linux 5.9): the thread then still
// shares the program's table.
bool TakeEmptyDescriptorTable();

}  // namespace foreactor

#endif  // FOREACTOR_BASE_QUIET_THREAD_H_
