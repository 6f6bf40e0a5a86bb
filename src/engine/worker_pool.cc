#include "engine/worker_pool.h"

#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <new>

#include "base/fork.h"
#include "base/out_of_memory.h"
#include "base/quiet_thread.h"
#include "engine/engine.h"
#include "engine/request_rules.h"

namespace foreactor {
namespace {

// Workers only make one system call at a time; a small stack is plenty.
constexpr size_t kWorkerStackBytes = 256 * 1024;
constexpr size_t kInitialQueueCapacity = 1024;

// The pool, made by the first Instance() under g_creation_mutex.  The fork
// handlers hold that mutex around fork(), so a child never copies a pool
// half made; they are added when the library loads, not when the pool is
// made: added then, a fork racing the first use could copy the pool's
// initialisation, or its handlers, half done, and the child would wait for
// ever on its first use (private_memory.cc adds its handlers at load too).
std::mutex g_creation_mutex;
std::atomic<WorkerPool*> g_pool{nullptr};

}  // namespace

WorkerPool* WorkerPool::Instance() {
  WorkerPool* pool = g_pool.load(std::memory_order_acquire);
  if (pool != nullptr) return pool;
  std::lock_guard<std::mutex> lock(g_creation_mutex);
  pool = g_pool.load(std::memory_order_relaxed);
  if (pool == nullptr) {
    static_cast<void>(AllocationSucceeds([&] { pool = new WorkerPool(); }));
    g_pool.store(pool, std::memory_order_release);
  }
  return pool;
}

// Without these handlers (pthread_atfork out of memory) a fork racing the
// pool's first use or its mutex could leave the child's pool unusable.
void WorkerPool::AddForkHandlersAtLoad() {
  static_cast<void>(AddForkHandlers(
      {&WorkerPool::BeforeFork, &WorkerPool::AfterForkInParent, &WorkerPool::AfterForkInChild}));
}

unsigned WorkerPool::AllowWorkers(unsigned count) {
  if (count > kMaxWorkers) count = kMaxWorkers;
  QuietThreadStarts starts;  // waited for after the unlock (destroyed after `lock`)
  std::lock_guard<std::mutex> lock(mutex_);
  if (count > worker_limit_) worker_limit_ = count;
  if (workers_ == 0 && worker_limit_ > 0) StartWorkerLocked(&starts);
  return workers_;
}

unsigned WorkerPool::worker_count() {
  std::lock_guard<std::mutex> lock(mutex_);
  return workers_;
}

unsigned WorkerPool::worker_limit() {
  std::lock_guard<std::mutex> lock(mutex_);
  return worker_limit_;
}

bool WorkerPool::StartWorkerLocked(QuietThreadStarts* starts) {
  // No signal is ever delivered to a worker (quiet_thread.h).
  pthread_t thread;
  if (StartQuietThread(&WorkerPool::WorkerMain, this, kWorkerStackBytes, /*detached=*/true, &thread,
                       starts) != 0) {
    return false;
  }
  pthread_setname_np(thread, kWorkerThreadName);  // for people reading ps/top
  ++workers_;
  ++starting_workers_;
  return true;
}

void* WorkerPool::WorkerMain(void* pool) {
  static_cast<WorkerPool*>(pool)->RunWorker();
  return nullptr;
}

void WorkerPool::RunWorker() {
  std::unique_lock<std::mutex> lock(mutex_);
  --starting_workers_;
  for (;;) {
    const Job job = TakeJobLocked();
    if (job.head == nullptr) {
      ++idle_workers_;
      const std::cv_status waited = work_available_.wait_for(lock, kIdleWorkerLifetime);
      --idle_workers_;
      if (waited == std::cv_status::timeout && queued_ == 0) {
        --workers_;
        return;
      }
      continue;
    }
    const bool ordered = job.head->ordered;
    const bool streamed = job.head->streamed;
    const bool lane_stopped = ordered && job.submitter->ordered_failed_;
    if (ordered) job.submitter->ordered_running_ = true;
    if (streamed) ++job.submitter->streamed_running_;
    lock.unlock();
    bool complete = false;
    if (lane_stopped) {
      CompleteChain(job.head, -ECANCELED);
    } else {
      complete = ExecuteNow(job.head);
    }
    lock.lock();
    if (streamed) --job.submitter->streamed_running_;
    if (ordered) {
      if (!complete) job.submitter->ordered_failed_ = true;
      job.submitter->ordered_running_ = false;
      lane_idle_.notify_all();
    }
    FinishJobLocked(job.submitter);
  }
}

WorkerPool::Job WorkerPool::TakeJobLocked() {
  DropFrontTombstonesLocked();
  for (size_t i = 0; i < queued_; ++i) {
    Job& queued = jobs_[(first_ + i) & (capacity_ - 1)];
    if (queued.head == nullptr || !MayRunLocked(queued)) continue;
    const Job job = queued;
    RemoveQueuedLocked(i);
    return job;
  }
  return Job{nullptr, nullptr};
}

bool WorkerPool::MayRunLocked(const Job& job) {
  if (job.head->ordered && job.submitter->ordered_running_) return false;
  return !job.head->streamed || job.submitter->streamed_running_ < kStreamedRequestsAtOnce;
}

void WorkerPool::DropFrontTombstonesLocked() {
  while (queued_ > 0 && jobs_[first_].head == nullptr) {
    first_ = (first_ + 1) & (capacity_ - 1);
    --queued_;
  }
}

void WorkerPool::RemoveQueuedLocked(size_t index) {
  Job& job = jobs_[(first_ + index) & (capacity_ - 1)];
  if (job.head->streamed) --job.submitter->streamed_queued_;
  if (job.head->ordered) --job.submitter->ordered_queued_;
  job.head = nullptr;
  DropFrontTombstonesLocked();
}

WorkerPool::Submitter* WorkerPool::TakeQueuedLocked(Request* head) {
  for (size_t i = 0; i < queued_; ++i) {
    const Job job = jobs_[(first_ + i) & (capacity_ - 1)];
    if (job.head != head) continue;
    RemoveQueuedLocked(i);
    return job.submitter;
  }
  return nullptr;
}

bool WorkerPool::RunIfQueued(Request* head) {
  if (head->ordered) return false;
  std::unique_lock<std::mutex> lock(mutex_);
  Submitter* submitter = TakeQueuedLocked(head);
  if (submitter == nullptr) return false;
  lock.unlock();
  ExecuteNow(head);
  lock.lock();
  FinishJobLocked(submitter);
  return true;
}

void WorkerPool::RestartOrder(Submitter* submitter) {
  std::unique_lock<std::mutex> lock(mutex_);
  // The owner has seen its ordered jobs complete, but the worker that ran
  // the last one may not have noted yet whether it fell short: wait for
  // that note, so that it cannot land after the restart.
  lane_idle_.wait(lock, [submitter] { return !submitter->ordered_running_; });
  submitter->ordered_failed_ = false;
}

void WorkerPool::FinishJobLocked(Submitter* submitter) {
  if (--submitter->outstanding_ == 0) job_finished_.notify_all();
}

bool WorkerPool::GrowQueueLocked(size_t needed) {
  if (needed <= capacity_) return true;
  size_t capacity = capacity_ == 0 ? kInitialQueueCapacity : capacity_;
  while (capacity < needed) capacity *= 2;
  std::unique_ptr<Job[]> jobs(NewArrayOrNull<Job>(capacity));
  if (!jobs) return false;
  for (size_t i = 0; i < queued_; ++i) jobs[i] = jobs_[(first_ + i) & (capacity_ - 1)];
  jobs_ = std::move(jobs);
  capacity_ = capacity;
  first_ = 0;
  return true;
}

void WorkerPool::Register(Submitter* submitter) {
  std::lock_guard<std::mutex> lock(mutex_);
  submitter->previous_ = nullptr;
  submitter->next_ = submitters_;
  if (submitters_ != nullptr) submitters_->previous_ = submitter;
  submitters_ = submitter;
}

void WorkerPool::Unregister(Submitter* submitter) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (size_t i = 0; i < queued_; ++i) {
    Job& job = jobs_[(first_ + i) & (capacity_ - 1)];
    if (job.head != nullptr && job.submitter == submitter) {
      if (job.head->streamed) --submitter->streamed_queued_;
      if (job.head->ordered) --submitter->ordered_queued_;
      CompleteChain(job.head, -ECANCELED);
      job.head = nullptr;
      FinishJobLocked(submitter);
    }
  }
  job_finished_.wait(lock, [submitter] { return submitter->outstanding_ == 0; });
  if (submitter->previous_ != nullptr) {
    submitter->previous_->next_ = submitter->next_;
  } else {
    submitters_ = submitter->next_;
  }
  if (submitter->next_ != nullptr) submitter->next_->previous_ = submitter->previous_;
  submitter->previous_ = submitter->next_ = nullptr;
}

int WorkerPool::Push(Request* const* heads, size_t count, Submitter* submitter) {
  // The workers started here are waited for once, after the unlock
  // (`starts` is destroyed after `lock`): they take jobs meanwhile.
  QuietThreadStarts starts;
  std::lock_guard<std::mutex> lock(mutex_);
  if (workers_ == 0 && (worker_limit_ == 0 || !StartWorkerLocked(&starts))) return -EAGAIN;
  if (!GrowQueueLocked(queued_ + count)) return -ENOMEM;
  for (size_t i = 0; i < count; ++i) {
    jobs_[(first_ + queued_) & (capacity_ - 1)] = Job{heads[i], submitter};
    ++queued_;
  }
  submitter->outstanding_ += count;
  // Ordered jobs run one at a time: of the submitter's queued ones, only
  // the first may need a worker of its own (none while one of the lane's
  // runs, whose worker takes the next when it is done).
  size_t ordered = 0;
  size_t streamed = 0;
  for (size_t i = 0; i < count; ++i) {
    ordered += heads[i]->ordered;
    streamed += heads[i]->streamed;
  }
  submitter->ordered_queued_ += ordered;
  const size_t lane_waiting = submitter->ordered_queued_ > 0 && !submitter->ordered_running_
                                  ? submitter->ordered_queued_ - 1
                                  : submitter->ordered_queued_;
  const size_t batch_lane_waiting = ordered < lane_waiting ? ordered : lane_waiting;
  // Streamed jobs beyond the submitter's free places wait likewise.
  submitter->streamed_queued_ += streamed;
  const size_t streamed_places = kStreamedRequestsAtOnce - submitter->streamed_running_;
  const size_t streamed_waiting = submitter->streamed_queued_ > streamed_places
                                      ? submitter->streamed_queued_ - streamed_places
                                      : 0;
  const size_t batch_streamed_waiting = streamed < streamed_waiting ? streamed : streamed_waiting;
  const size_t batch_waiting = batch_lane_waiting + batch_streamed_waiting;
  const size_t runnable = count > batch_waiting ? count - batch_waiting : 0;
  // Wake no more workers than there are jobs.
  const size_t wake = runnable < idle_workers_ ? runnable : idle_workers_;
  if (wake == idle_workers_) {
    work_available_.notify_all();
  } else {
    for (size_t i = 0; i < wake; ++i) work_available_.notify_one();
  }
  // Start a worker for each queued job that no idle or starting worker
  // will take.  A new worker takes jobs from the queue before it ever
  // waits.  (Counting starting workers matters when the owner runs its
  // jobs itself, RunIfQueued(): it would otherwise start a worker for each
  // job it pushes faster than a thread starts.)
  const size_t waiting = lane_waiting + streamed_waiting;
  const size_t startable = queued_ > waiting ? queued_ - waiting : 0;
  const size_t coming = idle_workers_ + starting_workers_;
  size_t unserved = startable > coming ? startable - coming : 0;
  while (unserved > 0 && workers_ < worker_limit_ && StartWorkerLocked(&starts)) --unserved;
  return 0;
}

bool WorkerPool::CancelQueued(Request* head) {
  std::lock_guard<std::mutex> lock(mutex_);
  Submitter* submitter = TakeQueuedLocked(head);
  if (submitter == nullptr) return false;
  if (head->ordered) submitter->ordered_failed_ = true;
  CompleteChain(head, -ECANCELED);
  FinishJobLocked(submitter);
  return true;
}

void WorkerPool::BeforeFork() {
  g_creation_mutex.lock();
  WorkerPool* pool = g_pool.load(std::memory_order_relaxed);
  if (pool != nullptr) pool->mutex_.lock();
}

void WorkerPool::AfterForkInParent() {
  WorkerPool* pool = g_pool.load(std::memory_order_relaxed);
  if (pool != nullptr) pool->mutex_.unlock();
  g_creation_mutex.unlock();
}

void WorkerPool::AfterForkInChild() {
  WorkerPool* pool = g_pool.load(std::memory_order_relaxed);
  if (pool == nullptr) {
    g_creation_mutex.unlock();
    return;
  }
  // Only the forking thread exists in the child.  Condition variables may
  // still count the parent's waiting workers: start them afresh.
  new (&pool->work_available_) std::condition_variable();
  new (&pool->job_finished_) std::condition_variable();
  new (&pool->lane_idle_) std::condition_variable();
  pool->workers_ = 0;
  pool->idle_workers_ = 0;
  pool->starting_workers_ = 0;
  pool->worker_limit_ = 0;
  for (size_t i = 0; i < pool->queued_; ++i) {
    Job& job = pool->jobs_[(pool->first_ + i) & (pool->capacity_ - 1)];
    if (job.head != nullptr) CompleteChain(job.head, -ECANCELED);
  }
  pool->first_ = 0;
  pool->queued_ = 0;
  // Chains that were running in the parent's workers will never finish
  // here; nobody may wait for them.
  for (Submitter* submitter = pool->submitters_; submitter != nullptr;
       submitter = submitter->next_) {
    submitter->outstanding_ = 0;
    submitter->ordered_running_ = false;
    submitter->streamed_running_ = 0;
    submitter->streamed_queued_ = 0;
    submitter->ordered_queued_ = 0;
  }
  pool->mutex_.unlock();
  g_creation_mutex.unlock();
}

}  // namespace foreactor
