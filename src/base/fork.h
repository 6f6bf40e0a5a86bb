// fork.h: the one place where foreactor reacts to fork().
//
// foreactor registers with pthread_atfork once; every layer that must act
// around a fork adds its handlers here instead of registering its own.
// What each layer does in the child: engines that own kernel resources
// compare ForkGeneration() with the one they were made in and stop using
// them (io_uring); the thread pool empties itself (its workers do not exist
// in the child); the runtime switches every scope of the forking thread to
// plain system calls (DESIGN §7).
#ifndef FOREACTOR_BASE_FORK_H_
#define FOREACTOR_BASE_FORK_H_

#include <atomic>
#include <mutex>

namespace foreactor {

struct ForkHandlers {
  void (*before)() = nullptr;           // in the forking thread, before fork()
  void (*after_in_parent)() = nullptr;  // in the parent, after fork()
  void (*after_in_child)() = nullptr;   // in the child's only thread, after fork()
};

// Adds `handlers` (any of them may be null).  `before` handlers run in the
// reverse order of adding, the others in the order of adding, as
// pthread_atfork(3) does.  At most kMaxForkHandlers sets can be added; returns
// false, adding nothing, beyond that or when pthread_atfork fails (out of
// memory): the caller then says so, since a child would not be told it was
// forked.  Thread-safe; not from a fork handler.
constexpr int kMaxForkHandlers = 8;
bool AddForkHandlers(const ForkHandlers& handlers);

// Handlers that hold `kMutex` (a mutex with static storage) across fork(),
// so that a child never inherits it locked by a thread it does not have.
// For AddForkHandlers() when the library loads, before any thread can take
// the mutex: added later, a fork racing the adding could copy them half
// added.
template <std::mutex& kMutex>
ForkHandlers HoldAcrossFork() {
  ForkHandlers handlers;
  handlers.before = [] { kMutex.lock(); };
  handlers.after_in_parent = [] { kMutex.unlock(); };
  handlers.after_in_child = [] { kMutex.unlock(); };
  return handlers;
}

// How many forks this process came out of as the child, counted from the
// first call of StartCountingForks() or AddForkHandlers() on.  One relaxed
// atomic load: cheap enough for every use of a guarded resource.
namespace internal {
extern std::atomic<unsigned> fork_generation;
}  // namespace internal
inline unsigned ForkGeneration() {
  return internal::fork_generation.load(std::memory_order_relaxed);
}

// Makes sure forks are counted from now on and returns ForkGeneration().
// Call it when making a resource that a forked child must not use (an
// io_uring ring), and keep the answer: the resource belongs to a parent
// once ForkGeneration() differs from it.
unsigned StartCountingForks();

}  // namespace foreactor

#endif  // FOREACTOR_BASE_FORK_H_
