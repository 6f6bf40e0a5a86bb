// quiet_thread.h: threads of foreactor's own, which no signal meant for the
// program ever reaches.
#ifndef FOREACTOR_BASE_QUIET_THREAD_H_
#define FOREACTOR_BASE_QUIET_THREAD_H_

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace foreactor {

// Starts `main(argument)` on a new thread with every signal blocked and a
// stack of `stack_bytes`.  A signal meant for the program must never run
// its handler on a thread of foreactor's, and a thread starts with the mask
// in force at its creation: the calling thread blocks every signal around
// pthread_create(3) and then restores its own mask.  `detached`: nobody
// joins the thread; otherwise `*thread` receives it, for pthread_join(3)
// (`thread` may be null when detached).  Returns 0, or ENOMEM (the start's
// few bytes could not be allocated) or the error number of
// pthread_create(3); then no thread runs.
//
// The thread makes its first heap allocation before it runs `main`, and
// StartQuietThread() returns only once it has (or, with `starts`, at once,
// and starts->Wait() waits): glibc may open and close a descriptor while
// it gives a new thread its malloc arena, and made while the caller waits,
// that descriptor cannot take the number of an open the program makes
// (the program's descriptor numbers stay those it gets without foreactor).
// A thread takes 0.1 ms or more to begin on some VMs: a caller that starts
// several passes one `starts` to each and waits once.
class QuietThreadStarts;
int StartQuietThread(void* (*main)(void*), void* argument, size_t stack_bytes, bool detached,
                     pthread_t* thread, QuietThreadStarts* starts = nullptr);

// Threads started with StartQuietThread(..., this) that have not made their
// first heap allocation yet.  Wait() before the program may open anything
// (the destructor waits too).  Not copyable: the threads hold its address.
class QuietThreadStarts {
 public:
  QuietThreadStarts() = default;
  QuietThreadStarts(const QuietThreadStarts&) = delete;
  QuietThreadStarts& operator=(const QuietThreadStarts&) = delete;
  ~QuietThreadStarts() { Wait(); }

  // Returns once every thread started with this has made its first
  // allocation.
  void Wait();

 private:
  friend int StartQuietThread(void* (*)(void*), void*, size_t, bool, pthread_t*,
                              QuietThreadStarts*);
  friend void* RunQuietThreadStart(void*);
  // Called by a started thread after its first allocation.
  void Arrive();

  std::atomic<uint32_t> pending_{0};
};

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
