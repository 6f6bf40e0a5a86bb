#include "base/process_threads.h"

#include <sys/single_threaded.h>

#include <atomic>

namespace foreactor {
namespace {

std::atomic<bool> kernel_worker_threads{false};

}  // namespace

void NoteKernelWorkerThreads() { kernel_worker_threads.store(true, std::memory_order_relaxed); }

bool ProcessHasOnlyOneThread() {
  return __libc_single_threaded && !kernel_worker_threads.load(std::memory_order_relaxed);
}

}  // namespace foreactor
