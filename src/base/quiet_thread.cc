// quiet_thread.cc: StartQuietThread() (quiet_thread.h).
#include "base/quiet_thread.h"

#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "base/futex.h"

namespace foreactor {

namespace {

// What a new thread needs before it runs `main`; made by
// StartQuietThread(), freed by the thread.
struct Start {
  void* (*main)(void*);
  void* argument;
  QuietThreadStarts* starts;  // told once the thread has its malloc arena
  bool placed;                // started on another CPU: take `affinity` first
  cpu_set_t affinity;         // the caller's, when `placed`
};

}  // namespace

// The start of every quiet thread (a friend of QuietThreadStarts).
void* RunQuietThreadStart(void* start_pointer) {
  Start* start = static_cast<Start*>(start_pointer);
  void* (*main)(void*) = start->main;
  void* argument = start->argument;
  QuietThreadStarts* starts = start->starts;
  const bool placed = start->placed;
  const cpu_set_t affinity = start->affinity;
  delete start;
  // A thread's first allocation gives it a malloc arena, and glibc, the
  // first time a process has more arenas than its test count (8 on 64-bit
  // machines), opens and closes /sys/devices/system/cpu/online to size the
  // limit.  Made here, before the caller goes on, that descriptor cannot
  // take the number of an open the program makes.  (The delete above frees
  // on this thread already; `volatile` keeps this pair from being
  // optimized away.)
  void* volatile first_allocation = malloc(64);
  free(first_allocation);
  starts->Arrive();  // `starts` may be gone once this returns
  // A failure leaves the thread on the other CPUs only: it still runs.
  if (placed) sched_setaffinity(0, sizeof(affinity), &affinity);
  return main(argument);
}

namespace {

// Fills `*others` with the caller's affinity without the CPU the caller
// runs on and `start->affinity` with the whole of it; false where there is
// no other CPU to start on, the affinity is not known, or the process runs
// under a seccomp filter.
bool PlanStartElsewhere(Start* start, cpu_set_t* others) {
  // A seccomp filter may forbid the affinity calls, or kill the process for
  // them, where it lets threads start.
  if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 0) return false;
  cpu_set_t affinity;
  if (sched_getaffinity(0, sizeof(affinity), &affinity) != 0) return false;
  const int here = sched_getcpu();
  if (here < 0 || here >= CPU_SETSIZE || !CPU_ISSET(here, &affinity) || CPU_COUNT(&affinity) < 2) {
    return false;
  }
  *others = affinity;
  CPU_CLR(here, others);
  start->affinity = affinity;
  return true;
}

}  // namespace

void QuietThreadStarts::Arrive() {
  if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    FutexWakeAll(&pending_);  // only the address is used: `this` may be gone
  }
}

void QuietThreadStarts::Wait() {
  for (uint32_t pending; (pending = pending_.load(std::memory_order_acquire)) != 0;) {
    FutexWait(&pending_, pending);
  }
}

int StartQuietThread(void* (*main)(void*), void* argument, size_t stack_bytes, bool detached,
                     pthread_t* thread, QuietThreadStarts* starts) {
  QuietThreadStarts own_start;
  if (starts == nullptr) starts = &own_start;  // waited for by its destructor
  Start* start = new (std::nothrow) Start{main, argument, starts, false, {}};
  if (start == nullptr) return ENOMEM;
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
  if (error != 0) {
    delete start;
    return error;
  }
  cpu_set_t others;
  start->placed = PlanStartElsewhere(start, &others) &&
                  pthread_attr_setaffinity_np(&attributes, sizeof(others), &others) == 0;
  sigset_t all_signals;
  sigset_t previous_mask;
  sigfillset(&all_signals);
  pthread_sigmask(SIG_SETMASK, &all_signals, &previous_mask);
  starts->pending_.fetch_add(1, std::memory_order_relaxed);
  pthread_t started;
  error = pthread_create(&started, &attributes, &RunQuietThreadStart, start);
  if (error != 0 && start->placed) {
    // The other CPUs may have been taken from the process meanwhile:
    // start it where pthread_create(3) places it.
    start->placed = false;
    pthread_attr_destroy(&attributes);
    error = set_up();
    if (error == 0) {
      error = pthread_create(&started, &attributes, &RunQuietThreadStart, start);
      pthread_attr_destroy(&attributes);
    }
  } else {
    pthread_attr_destroy(&attributes);
  }
  pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  if (error != 0) {
    starts->pending_.fetch_sub(1, std::memory_order_relaxed);
    delete start;
    return error;
  }
  if (thread != nullptr) *thread = started;
  return 0;
}

bool TakeEmptyDescriptorTable() {
  return syscall(SYS_close_range, 0U, ~0U, CLOSE_RANGE_UNSHARE) == 0;
}

}  // namespace foreactor
