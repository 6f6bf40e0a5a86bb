#include "base/fork.h"

#include <pthread.h>

#include <atomic>
#include <mutex>

namespace foreactor {

std::atomic<unsigned> internal::fork_generation{0};

namespace {

// The handler sets added so far.  An entry is written before `g_count`
// publishes it and never changed after, so the fork handlers read the
// table without the mutex (which a fork may have caught held by another
// thread).
ForkHandlers g_handlers[kMaxForkHandlers];
std::atomic<int> g_count{0};
std::mutex g_adding;

void BeforeFork() {
  for (int i = g_count.load(std::memory_order_acquire) - 1; i >= 0; --i) {
    if (g_handlers[i].before != nullptr) g_handlers[i].before();
  }
}

void AfterForkInParent() {
  const int count = g_count.load(std::memory_order_acquire);
  for (int i = 0; i < count; ++i) {
    if (g_handlers[i].after_in_parent != nullptr) g_handlers[i].after_in_parent();
  }
}

void AfterForkInChild() {
  internal::fork_generation.fetch_add(1, std::memory_order_relaxed);
  const int count = g_count.load(std::memory_order_acquire);
  for (int i = 0; i < count; ++i) {
    if (g_handlers[i].after_in_child != nullptr) g_handlers[i].after_in_child();
  }
}

// Registers with pthread_atfork on first use; true when that succeeded.
bool Registered() {
  static const bool registered =
      pthread_atfork(&BeforeFork, &AfterForkInParent, &AfterForkInChild) == 0;
  return registered;
}

}  // namespace

bool AddForkHandlers(const ForkHandlers& handlers) {
  if (!Registered()) return false;
  std::lock_guard<std::mutex> lock(g_adding);
  const int count = g_count.load(std::memory_order_relaxed);
  if (count >= kMaxForkHandlers) return false;
  g_handlers[count] = handlers;
  g_count.store(count + 1, std::memory_order_release);
  return true;
}

unsigned StartCountingForks() {
  static_cast<void>(Registered());
  return ForkGeneration();
}

}  // namespace foreactor
