// process_threads.h: whether the process may have had a thread other than
// the calling one, for questions the kernel answers more cheaply about one
// thread than about the whole process.
//
// getrusage(2) of the whole process (RUSAGE_SELF) brings the caller's CPU
// time up to date first, a point where the scheduler may switch to another
// runnable task; of the calling thread (RUSAGE_THREAD) it does not.  While
// the process has only ever had one thread, the two count the same block
// reads.
#ifndef FOREACTOR_BASE_PROCESS_THREADS_H_
#define FOREACTOR_BASE_PROCESS_THREADS_H_

namespace foreactor {

// Notes that the kernel may run work of the process on threads of its own
// that no pthread_create(3) announces: io_uring's workers.  Called when
// foreactor makes an io_uring ring.  Never undone (not after fork either).
void NoteKernelWorkerThreads();

// True while the process has only ever had the calling thread: no thread
// was made with pthread_create(3) (glibc's __libc_single_threaded, which
// stays false once a thread was made, also in a child after fork) and no
// io_uring ring of foreactor's was made (NoteKernelWorkerThreads()).  The
// io_uring workers of rings the program makes itself are not seen.
bool ProcessHasOnlyOneThread();

}  // namespace foreactor

#endif  // FOREACTOR_BASE_PROCESS_THREADS_H_
