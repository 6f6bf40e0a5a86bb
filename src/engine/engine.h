// engine.h: the one interface over every asynchronous backend.
//
// An engine executes requests; it never looks at graphs.  Each runtime
// instance (one graph on one thread) talks to one Engine object, which is
// used from that thread only.  Shared resources (the process-wide thread
// pool) live behind the Engine object.
#ifndef FOREACTOR_ENGINE_ENGINE_H_
#define FOREACTOR_ENGINE_ENGINE_H_

#include <memory>
#include <string>

#include "base/engine_options.h"
#include "engine/request.h"

namespace foreactor {

class Engine {
 public:
  virtual ~Engine() = default;

  // Short name for messages and statistics: "io_uring", "threads", "sync".
  virtual const char* name() const = 0;

  // True when this engine can execute calls of `type` asynchronously.  The
  // runtime runs the others synchronously when the program reaches them.
  virtual bool Supports(foreactor_call_type type) const = 0;

  // Queues `request` (and its linked_next chain) for the next Submit().
  // The request must be kIdle; on success it becomes kPrepared.  Returns
  // false, leaving the request kIdle, when the queue is full.
  virtual bool Prepare(Request* request) = 0;

  // Hands every prepared request to the kernel or the workers in one batch
  // (one io_uring_enter for io_uring).  Returns how many were submitted, or
  // -errno; on failure the requests that could not be submitted are
  // completed with -ECANCELED ("not executed": the runtime runs the call
  // itself), so every prepared request still completes.  Never with the
  // submission's errno: that would reach the program as the call's result.
  virtual int Submit() = 0;

  // Blocks until `request` (submitted) is kCompleted.  Other completions seen
  // on the way are recorded in their requests.  Never fails: if the backend
  // breaks, outstanding requests are completed with an error.
  virtual void Wait(Request* request) = 0;

  // Records completions that are already available, without blocking.
  virtual void Poll() = 0;

  // Asks that a submitted request be cancelled.  Returns at once; the
  // request still completes (with its real result or -ECANCELED) and must
  // be waited for before reuse.
  virtual void Cancel(Request* request) = 0;

  // The engine will likely not be used for a while, and nothing it was
  // given is in flight: it may release what it can make again at the next
  // Prepare() (io_uring: the ring, and with it the kernel's worker threads,
  // which slow every descriptor call of the program while they exist).
  // Does nothing when requests are prepared or in flight.
  virtual void Rest() {}

  // Opens issued early (DESIGN §2 rule 1).  An engine that supports OPEN or
  // OPENAT completes such a request with an early descriptor (>= 0): a
  // handle the engine holds outside the program's descriptor table, or with
  // the open's failure (-errno).  Until the program reaches the open, its
  // table is untouched: its own opens take the numbers they would take
  // without foreactor, and nothing foreactor closes can release the
  // record locks (fcntl F_SETLK) the process holds on the file, which the
  // close of any descriptor of a file in the process's table does.  The
  // owner passes every early descriptor to exactly one of the two calls
  // below.

  // Moves the early descriptor `early` of the completed open `open` into
  // the program's table at the lowest free number (where the program's own
  // open would have put it), close-on-exec when `open.flags` has O_CLOEXEC,
  // and returns that number; the engine holds it no longer.  Returns -errno
  // when it cannot (no number free, the engine broken, a forked child):
  // `early` is then released and the program makes the open itself.
  virtual int64_t InstallEarlyDescriptor(int64_t early, const foreactor_call& open);

  // Drops the early descriptor `early` of an open the program never
  // reached.  The program's table is not touched.
  virtual void ReleaseEarlyDescriptor(int64_t early);

  // Forgets that an ordered request (Request::ordered) failed, fell short
  // or was cancelled: the next ordered request runs again.  Call it only
  // when no ordered request of this engine is in flight.
  virtual void RestartOrder() {}
};

// The name of the engines of `kind` ("io_uring", "threads", "sync"), as
// their name() says and the statistics show it.
const char* EngineKindName(EngineKind kind);

// Creates the engine for `options` on the calling thread.  When io_uring is
// asked for but cannot be set up, falls back to the thread pool and writes
// the reason to `*fallback_reason` (empty when no fallback happened).
// Returns null only when no engine at all can be made (out of memory, no
// thread can be created); the caller then runs without speculation.
std::unique_ptr<Engine> CreateEngine(const EngineOptions& options, std::string* fallback_reason);

// Executes `request` synchronously on the calling thread, as the engines
// do (same statx conversion rules), and marks it kCompleted.  Used by the
// sync engine, the thread pool's workers and tests.
// Returns true when every request of the chain ran and transferred its
// full length (LinkContinues).
bool ExecuteNow(Request* request);

}  // namespace foreactor

#endif  // FOREACTOR_ENGINE_ENGINE_H_
