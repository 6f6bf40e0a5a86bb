// worker_pool.h: the process-wide pool of threads that run requests for
// every ThreadPoolEngine (DESIGN §6).
//
// There is one pool per process.  It is created on first use and never
// destroyed (its workers are detached and block in a wait when idle), so
// process exit can never hang on it.  A worker that has waited
// kIdleWorkerLifetime without a job exits: while any thread besides the
// program's shares the descriptor table, the kernel takes a reference on
// the file in every descriptor call the program makes (an atomic operation
// on a shared cache line each), so
// workers only live while there is work for them.  Workers block every
// signal, so the host program's signal delivery is unchanged.  After
// fork() the child starts with an empty pool: no workers, no queued jobs,
// a worker limit of 0 (engines inherited from the parent cannot start
// threads in the child), and engines inherited from the parent see nothing
// outstanding.
//
// Jobs are chains of requests (a request and its linked_next successors);
// one worker runs a whole chain in order with ExecuteNow().  Every job is
// finished exactly once: by a worker, or by cancellation while it is still
// queued (the chain then completes with -ECANCELED).
//
// Ordered jobs (Request::ordered) of one submitter form a lane: a worker
// takes the submitter's next ordered job only when none of its ordered
// jobs runs, in the order they were pushed, so they run one at a time, in
// order, while its other jobs and other submitters' run beside them.  After
// an ordered job that did not transfer everything (or was cancelled while
// queued), the submitter's later ordered jobs complete with -ECANCELED
// until RestartOrder().  The worker that finishes an ordered job takes the
// next one at once: a lane streams without waking its submitter.
//
// Streamed jobs (Request::streamed) of one submitter run at most
// kStreamedRequestsAtOnce at a time, taken in the order they were pushed; the
// others wait in the queue (the owner may still run one itself,
// RunIfQueued()).
#ifndef FOREACTOR_ENGINE_WORKER_POOL_H_
#define FOREACTOR_ENGINE_WORKER_POOL_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>

#include "base/quiet_thread.h"
#include "engine/request.h"

namespace foreactor {

class WorkerPool {
 public:
  // The record of one engine's jobs: how many it handed over that are not
  // finished yet.  Owned by the engine; must be registered with the pool
  // for its whole life.
  class Submitter {
   public:
    Submitter() = default;
    Submitter(const Submitter&) = delete;
    Submitter& operator=(const Submitter&) = delete;

   private:
    friend class WorkerPool;
    size_t outstanding_ = 0;        // guarded by the pool's mutex
    bool ordered_running_ = false;  // one of its ordered jobs runs (mutex)
    bool ordered_failed_ = false;   // its lane stopped (mutex)
    size_t streamed_running_ = 0;   // its streamed jobs on workers (mutex)
    size_t streamed_queued_ = 0;    // its streamed jobs in the queue (mutex)
    size_t ordered_queued_ = 0;     // its ordered jobs in the queue (mutex)
    Submitter* previous_ = nullptr;
    Submitter* next_ = nullptr;
  };

  // The process-wide pool; null only when it cannot be allocated.
  static WorkerPool* Instance();

  // Lets the pool grow to `count` workers (at most kMaxWorkers; the limit
  // only rises) and makes sure one runs.  Further workers start on demand:
  // Push() starts one for each queued job no idle worker can take, up to
  // the limit, so a process that never queues much never pays for threads
  // it does not use.  Returns how many workers run afterwards: 0 when not
  // even the first could be created.
  unsigned AllowWorkers(unsigned count);

  // How many workers run now, and how many the pool may grow to.
  unsigned worker_count();
  unsigned worker_limit();

  void Register(Submitter* submitter);
  // Cancels the submitter's queued jobs, waits for its running ones to
  // finish, then forgets it.
  void Unregister(Submitter* submitter);

  // Queues the chains starting at heads[0..count) in order, under one
  // lock, wakes idle workers and starts new ones (within the limit) for
  // the jobs left over; a worker that cannot be started is not an error,
  // the running ones take the jobs.  Every request of the chains must
  // already be kSubmitted.  Returns 0, or -EAGAIN when no worker runs and
  // none can be started (the limit is 0, as in a forked child), or
  // -ENOMEM; on failure nothing was queued and the caller still owns the
  // chains.
  int Push(Request* const* heads, size_t count, Submitter* submitter);

  // If the chain starting at `head` is still queued, removes it and
  // completes it with -ECANCELED; returns true then.  A running or
  // finished chain, or a request that is not a chain head, is left alone.
  bool CancelQueued(Request* head);

  // If the chain starting at `head` is still queued and not ordered, takes
  // it out of the queue and runs it on the calling thread, as a worker
  // would; returns true then, with the chain completed.  The owner that
  // is about to wait for a job no worker has taken yet runs it itself
  // instead of sleeping behind the queue.  Ordered jobs keep their lane
  // and are left alone, as are running or finished chains and requests
  // that are not a chain head.
  bool RunIfQueued(Request* head);

  // Lets `submitter`'s next ordered job run again after one failed.  Call
  // it only when every ordered job pushed has completed; it waits the few
  // instructions until the worker that ran the last one has let go of it.
  void RestartOrder(Submitter* submitter);

  static constexpr unsigned kMaxWorkers = 1024;
  // How long a worker waits for a job before it exits.
  static constexpr std::chrono::milliseconds kIdleWorkerLifetime{20};
  // The name every worker thread carries (/proc/self/task/*/comm).
  static constexpr const char* kWorkerThreadName = "foreactor-pool";

 private:
  struct Job {
    Request* head;  // null: cancelled or taken out of order (a tombstone)
    Submitter* submitter;
  };

  // Takes the first queued job a worker may run now (an ordered one only
  // while its submitter has none running, a streamed one only while fewer
  // than kStreamedRequestsAtOnce of its submitter's run) and leaves a tombstone
  // in its place; returns a job with a null head when there is none.
  Job TakeJobLocked();
  // Whether a worker may take the queued job `job` now (TakeJobLocked).
  static bool MayRunLocked(const Job& job);
  // Drops the tombstones at the front of the queue.
  void DropFrontTombstonesLocked();
  // Leaves a tombstone in place of the queued job at `index` (counted from
  // the front), dropping tombstones that reach the front.
  void RemoveQueuedLocked(size_t index);
  // If the chain starting at `head` is queued, takes it out of the queue
  // and returns its submitter (the job is then the caller's to finish);
  // null otherwise.
  Submitter* TakeQueuedLocked(Request* head);

  WorkerPool() = default;
  static void* WorkerMain(void* pool);
  void RunWorker();
  // Starts a worker; `starts` waits for its first allocation
  // (quiet_thread.h), which its caller does once the mutex is free.
  bool StartWorkerLocked(QuietThreadStarts* starts);
  bool GrowQueueLocked(size_t needed);
  void FinishJobLocked(Submitter* submitter);

  // Runs when the library loads (see worker_pool.cc).
  __attribute__((constructor)) static void AddForkHandlersAtLoad();
  static void BeforeFork();
  static void AfterForkInParent();
  static void AfterForkInChild();

  std::mutex mutex_;
  std::condition_variable work_available_;
  std::condition_variable job_finished_;
  std::condition_variable lane_idle_;  // an ordered job finished running
  unsigned workers_ = 0;
  unsigned idle_workers_ = 0;
  unsigned starting_workers_ = 0;  // started, not yet at their first look at the queue
  unsigned worker_limit_ = 0;      // the most workers Push() may start
  // Queue of jobs: a ring of `capacity_` (a power of two) entries, the
  // first at `first_`, `queued_` of them in use (tombstones included).
  std::unique_ptr<Job[]> jobs_;
  size_t capacity_ = 0;
  size_t first_ = 0;
  size_t queued_ = 0;
  Submitter* submitters_ = nullptr;  // list of registered submitters
};

}  // namespace foreactor

#endif  // FOREACTOR_ENGINE_WORKER_POOL_H_
