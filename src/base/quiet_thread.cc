// quiet_thread.cc: StartQuietThread() (quiet_thread.h).
#include "base/quiet_thread.h"

#include <linux/close_range.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace foreactor {

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
  error = pthread_create(&started, &attributes, main, argument);
  pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  pthread_attr_destroy(&attributes);
  if (error == 0 && thread != nullptr) *thread = started;
  return error;
}

bool TakeEmptyDescriptorTable() {
  return syscall(SYS_close_range, 0U, ~0U, CLOSE_RANGE_UNSHARE) == 0;
}

}  // namespace foreactor
