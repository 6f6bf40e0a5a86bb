// quiet_thread.cc: StartQuietThread() (quiet_thread.h).
#include "base/quiet_thread.h"

#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/private_memory.h"

namespace foreactor {
namespace {

// What a quiet thread started on another CPU runs first (RunOnEveryCpu).
struct ThreadStart {
  void* (*main)(void*);
  void* argument;
  cpu_set_t allowed;  // the CPUs of the thread that started it
};

void* RunOnEveryCpu(void* raw) {
  const ThreadStart start = *static_cast<const ThreadStart*>(raw);
  PrivateFree(raw, sizeof(ThreadStart));
  sched_setaffinity(0, sizeof(start.allowed), &start.allowed);
  return start.main(start.argument);
}

// A ThreadStart for `main(argument)` when the calling thread may run on
// some CPU besides the one it is on, with `*others` those CPUs; otherwise
// null.
ThreadStart* StartElsewhere(void* (*main)(void*), void* argument, cpu_set_t* others) {
  const int here = sched_getcpu();
  cpu_set_t allowed;
  if (here < 0 || here >= CPU_SETSIZE || sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    return nullptr;
  }
  *others = allowed;
  CPU_CLR(here, others);
  if (CPU_COUNT(others) == 0) return nullptr;
  auto* start = static_cast<ThreadStart*>(PrivateAllocate(sizeof(ThreadStart)));
  if (start != nullptr) *start = ThreadStart{main, argument, allowed};
  return start;
}

}  // namespace

int StartQuietThread(void* (*main)(void*), void* argument, size_t stack_bytes, bool detached,
                     pthread_t* thread) {
  pthread_attr_t attributes;
  int error = pthread_attr_init(&attributes);
  if (error != 0) return error;
  pthread_attr_setdetachstate(&attributes,
                              detached ? PTHREAD_CREATE_DETACHED : PTHREAD_CREATE_JOINABLE);
  pthread_attr_setstacksize(&attributes, stack_bytes);
  sigset_t all_signals;
  sigset_t previous_mask;
  sigfillset(&all_signals);
  pthread_sigmask(SIG_SETMASK, &all_signals, &previous_mask);
  pthread_t started;
  cpu_set_t others;
  ThreadStart* start = StartElsewhere(main, argument, &others);
  if (start != nullptr && pthread_attr_setaffinity_np(&attributes, sizeof(others), &others) != 0) {
    PrivateFree(start, sizeof(ThreadStart));
    start = nullptr;
  }
  error = start != nullptr ? pthread_create(&started, &attributes, &RunOnEveryCpu, start)
                           : pthread_create(&started, &attributes, main, argument);
  if (error != 0 && start != nullptr) PrivateFree(start, sizeof(ThreadStart));
  pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  pthread_attr_destroy(&attributes);
  if (error == 0 && thread != nullptr) *thread = started;
  return error;
}

bool TakeEmptyDescriptorTable() {
  return syscall(SYS_close_range, 0U, ~0U, CLOSE_RANGE_UNSHARE) == 0;
}

}  // namespace foreactor
