// thread_pool_engine.h: EngineKind::kThreads, requests run by the
// process-wide WorkerPool.
//
// One ThreadPoolEngine per thread (per runtime); all of them share the one
// pool.  Prepare() appends to a batch local to the engine; Submit() hands
// the whole batch to the pool under one lock.  Every call type but opens
// is supported, and write-back hints (RequestOperation::kStartWriteBack);
// a linked chain runs in order on one worker.  A worker names a request's
// descriptor by its number: the runtime keeps the program from closing it
// while the request may run (runtime/write_behind.h).
#ifndef FOREACTOR_ENGINE_THREAD_POOL_ENGINE_H_
#define FOREACTOR_ENGINE_THREAD_POOL_ENGINE_H_

#include <memory>
#include <vector>

#include "engine/engine.h"
#include "engine/worker_pool.h"

namespace foreactor {

class ThreadPoolEngine final : public Engine {
 public:
  // Workers the pool gets when the options leave the count at 0.
  static constexpr unsigned kDefaultWorkers = 16;

  // Lets the shared pool grow to options.workers workers (kDefaultWorkers
  // when 0; they start as jobs wait, see WorkerPool::AllowWorkers); a batch
  // holds at most options.queue_size chains (at least 1).  Returns null when
  // out of memory or when not a single worker runs.
  static std::unique_ptr<ThreadPoolEngine> Create(const EngineOptions& options);

  // Cancels this engine's queued requests and waits until none of its
  // requests is running, so no worker touches a request after this.
  // Requests still prepared but never submitted complete with -ECANCELED.
  ~ThreadPoolEngine() override;

  ThreadPoolEngine(const ThreadPoolEngine&) = delete;
  ThreadPoolEngine& operator=(const ThreadPoolEngine&) = delete;

  static constexpr const char* kName = "threads";
  const char* name() const override { return kName; }
  // Every valid type but opens: a worker shares the program's descriptor
  // table, and an early descriptor must stay out of it until delivery
  // (Engine::InstallEarlyDescriptor).  Prepare() still runs an open it is
  // given, into the program's table (the engine's tests block workers so).
  bool Supports(foreactor_call_type type) const override { return SupportsType(type); }
  // What every thread-pool engine supports (as above).
  static bool SupportsType(foreactor_call_type type);
  // Returns false when the batch is full or a request of the chain is not
  // kIdle or of an invalid type, or an ordered request is linked.
  // Write-back hints are accepted.
  bool Prepare(Request* request) override;
  // Returns the number of requests handed over (linked ones included), or
  // -EAGAIN (the pool lost its workers, e.g. in a forked child) / -ENOMEM,
  // after completing the batch with that value.
  int Submit() override;
  // A request still only prepared is submitted first, so this never hangs
  // on a request nobody will run.
  void Wait(Request* request) override;
  // Workers record completions themselves; nothing to do.
  void Poll() override {}
  // A chain head still queued (or only prepared) completes at once with
  // -ECANCELED, its linked requests too.  A request a worker has started
  // runs to its real result; a linked request it has not reached yet (or a
  // head taken but not started) completes with -ECANCELED when the worker
  // gets to it, and so do the links after it (Request::cancel_requested).
  void Cancel(Request* request) override;
  // Ordered requests (Request::ordered) are the pool's lane of this
  // engine's submitter (WorkerPool).
  void RestartOrder() override { pool_->RestartOrder(&submitter_); }

 private:
  ThreadPoolEngine(WorkerPool* pool, unsigned batch_capacity);

  WorkerPool* const pool_;
  const unsigned batch_capacity_;
  std::vector<Request*> batch_;  // chain heads, prepared and not submitted
  WorkerPool::Submitter submitter_;
};

}  // namespace foreactor

#endif  // FOREACTOR_ENGINE_THREAD_POOL_ENGINE_H_
