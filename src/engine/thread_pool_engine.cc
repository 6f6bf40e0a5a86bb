#include "engine/thread_pool_engine.h"

#include <cerrno>
#include <new>

#include "base/call_types.h"
#include "base/out_of_memory.h"
#include "engine/request_rules.h"

namespace foreactor {

std::unique_ptr<ThreadPoolEngine> ThreadPoolEngine::Create(const EngineOptions& options) {
  WorkerPool* pool = WorkerPool::Instance();
  if (pool == nullptr) return nullptr;
  const unsigned wanted = options.workers != 0 ? options.workers : kDefaultWorkers;
  if (pool->AllowWorkers(wanted) == 0) return nullptr;
  const unsigned capacity = options.queue_size != 0 ? options.queue_size : 1;
  std::unique_ptr<ThreadPoolEngine> engine;
  if (!AllocationSucceeds([&] {
        engine.reset(new ThreadPoolEngine(pool, capacity));
        engine->batch_.reserve(capacity);
      })) {
    return nullptr;
  }
  return engine;
}

ThreadPoolEngine::ThreadPoolEngine(WorkerPool* pool, unsigned batch_capacity)
    : pool_(pool), batch_capacity_(batch_capacity) {
  pool_->Register(&submitter_);
}

ThreadPoolEngine::~ThreadPoolEngine() {
  for (Request* head : batch_) CompleteChain(head, -ECANCELED);
  batch_.clear();
  pool_->Unregister(&submitter_);
}

bool ThreadPoolEngine::SupportsType(foreactor_call_type type) {
  // A worker's open would take a number in the program's table, and giving
  // it up there releases the process's record locks on the file.
  return IsValidCallType(type) && !IsOpen(type);
}

bool ThreadPoolEngine::Prepare(Request* request) {
  if (batch_.size() >= batch_capacity_) return false;
  if (request->ordered && request->linked_next != nullptr) return false;
  for (Request* link = request; link != nullptr; link = link->linked_next) {
    const bool runnable = link->operation == RequestOperation::kStartWriteBack ||
                          link->operation == RequestOperation::kStartReadAhead ||
                          IsValidCallType(link->call.type);
    if (!runnable) return false;
    if (link->state.load(std::memory_order_relaxed) != RequestState::kIdle) return false;
  }
  for (Request* link = request; link != nullptr; link = link->linked_next) {
    link->cancel_requested.store(false, std::memory_order_relaxed);
    link->state.store(RequestState::kPrepared, std::memory_order_relaxed);
  }
  batch_.push_back(request);  // within the reserved capacity: no allocation
  return true;
}

int ThreadPoolEngine::Submit() {
  if (batch_.empty()) return 0;
  int requests = 0;
  for (Request* head : batch_) {
    for (Request* link = head; link != nullptr; link = link->linked_next) {
      link->state.store(RequestState::kSubmitted, std::memory_order_relaxed);
      ++requests;
    }
  }
  // The pool's lock publishes the requests (and the states) to the workers.
  const int error = pool_->Push(batch_.data(), batch_.size(), &submitter_);
  if (error != 0) {
    for (Request* head : batch_) CompleteChain(head, -ECANCELED);  // not executed
    batch_.clear();
    return error;
  }
  batch_.clear();
  return requests;
}

void ThreadPoolEngine::Wait(Request* request) {
  RequestState state = request->state.load(std::memory_order_acquire);
  if (state == RequestState::kPrepared) {
    Submit();
    state = request->state.load(std::memory_order_acquire);
  }
  if (state == RequestState::kCompleted) return;
  // A job no worker has taken yet runs here at once, rather than after the
  // jobs ahead of it and a wake-up.
  if (!pool_->RunIfQueued(request)) WaitForCompletion(request);
}

void ThreadPoolEngine::Cancel(Request* request) {
  const RequestState state = request->state.load(std::memory_order_acquire);
  if (state == RequestState::kPrepared) {
    for (size_t i = 0; i < batch_.size(); ++i) {
      if (batch_[i] == request) {
        batch_.erase(batch_.begin() + static_cast<std::ptrdiff_t>(i));
        CompleteChain(request, -ECANCELED);
        return;
      }
    }
    return;  // a linked request: it runs (or not) with its head
  }
  // Not queued as a job of its own: a link, or a head a worker has taken.
  // A worker that has not reached it yet skips it (ExecuteNow).
  if (state == RequestState::kSubmitted && !pool_->CancelQueued(request))
    request->cancel_requested.store(true, std::memory_order_release);
}

}  // namespace foreactor
