// After fork(), the child must not use the parent's engines (an io_uring
// instance, the thread pool's workers, which do not exist in the child):
// a child handler (src/base/fork.h: the one pthread_atfork registration)
// switches every scope of the forking thread to plain system calls.
#include <unistd.h>

#include "base/fork.h"
#include "runtime/interception.h"
#include "walk/walk_ahead.h"

namespace foreactor {
namespace {

void ChildAfterFork() {
  DisableAfterFork();
  StopWalkAheadAfterFork();  // walk-ahead's threads do not exist in the child
}

// Added once, when the library is loaded; glibc drops the registration
// itself if the library is ever unloaded.  If adding fails (out of
// memory), say so: a child would then not know it must stop speculating.
__attribute__((constructor)) void RegisterForkHandler() {
  if (!AddForkHandlers({nullptr, nullptr, &ChildAfterFork})) {
    static const char kMessage[] =
        "foreactor: cannot register the fork handler; do not fork inside a scope\n";
    [[maybe_unused]] ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  }
}

}  // namespace
}  // namespace foreactor
