// quiet_thread.cc: StartQuietThread() (quiet_thread.h).
#include "base/quiet_thread.h"

#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <new>

namespace foreactor {

namespace {

// What a thread started on another CPU needs before it runs `main`.
struct PlacedStart {
  void* (*main)(void*);
  void* argument;
  cpu_set_t affinity;  // the caller's
};

void* RunPlaced(void* placed_start) {
  const PlacedStart* start = static_cast<PlacedStart*>(placed_start);
  // A failure leaves the thread on the other CPUs only: it still runs.
  sched_setaffinity(0, sizeof(start->affinity), &start->affinity);
  void* (*main)(void*) = start->main;
  void* argument = start->argument;
  delete start;
  return main(argument);
}

// A PlacedStart for `main(argument)` with the caller's affinity, and in
// `*others` that affinity without the CPU the caller runs on; null where
// there is no other CPU to start on, the affinity is not known, or the
// process runs under a seccomp filter.
PlacedStart* PlanStartElsewhere(void* (*main)(void*), void* argument, cpu_set_t* others) {
  // A seccomp filter may forbid the affinity calls, or kill the process for
  // them, where it lets threads start.
  if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 0) return nullptr;
  cpu_set_t affinity;
  if (sched_getaffinity(0, sizeof(affinity), &affinity) != 0) return nullptr;
  const int here = sched_getcpu();
  if (here < 0 || here >= CPU_SETSIZE || !CPU_ISSET(here, &affinity) || CPU_COUNT(&affinity) < 2) {
    return nullptr;
  }
  *others = affinity;
  CPU_CLR(here, others);
  return new (std::nothrow) PlacedStart{main, argument, affinity};
}

}  // namespace

int StartQuietThread(void* (*main)(void*), void* argument, size_t stack_bytes, bool detached,
                     pthread_t* thread) {
  pthread_attr_t attributes;
  const auto set_up = [&]() {
    const int error = pthread_attr_init(&attributes);
    if (error != 0) return error;
    pthread_attr_setdetachstate(&attributes,
                                detached ? PTHREAD_CREATE_DETACHED : PTHREAD_CREATE_JOINABLE);
    pthread_attr_setstacksize(&attributes, stack_bytes);
    return 0;
  };
  int error = set_up();
  if (error != 0) return error;
  cpu_set_t others;
  PlacedStart* placed = PlanStartElsewhere(main, argument, &others);
  if (placed != nullptr && pthread_attr_setaffinity_np(&attributes, sizeof(others), &others) != 0) {
    delete placed;
    placed = nullptr;
  }
  sigset_t all_signals;
  sigset_t previous_mask;
  sigfillset(&all_signals);
  pthread_sigmask(SIG_SETMASK, &all_signals, &previous_mask);
  pthread_t started;
  if (placed != nullptr) {
    error = pthread_create(&started, &attributes, &RunPlaced, placed);
    if (error != 0) {
      // The other CPUs may have been taken from the process meanwhile:
      // start it where pthread_create(3) places it.
      delete placed;
      placed = nullptr;
      pthread_attr_destroy(&attributes);
      error = set_up();
      if (error != 0) {
        pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
        return error;
      }
    }
  }
  if (placed == nullptr) error = pthread_create(&started, &attributes, main, argument);
  pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  pthread_attr_destroy(&attributes);
  if (error == 0 && thread != nullptr) *thread = started;
  return error;
}

bool TakeEmptyDescriptorTable() {
  return syscall(SYS_close_range, 0U, ~0U, CLOSE_RANGE_UNSHARE) == 0;
}

}  // namespace foreactor
