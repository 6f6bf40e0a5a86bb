#include "engine/deferred_engine.h"

#include <new>

#include "base/call_types.h"
#include "engine/io_uring_engine.h"
#include "engine/thread_pool_engine.h"

namespace foreactor {

DeferredEngine::DeferredEngine(const EngineOptions& options, MadeCallback on_made, void* context)
    : options_(options), on_made_(on_made), context_(context) {}

const char* DeferredEngine::name() const {
  if (real_ != nullptr) return real_->name();
  return options_.kind == EngineKind::kIoUring ? IoUringEngine::kName : ThreadPoolEngine::kName;
}

bool DeferredEngine::Supports(foreactor_call_type type) const {
  if (real_ != nullptr) return real_->Supports(type);
  // What an engine of the kind supports; a fallback from io_uring to the
  // thread pool supports more, never less.
  return options_.kind == EngineKind::kIoUring ? IoUringEngine::SupportsType(type)
                                               : IsValidCallType(type);
}

bool DeferredEngine::Prepare(Request* request) {
  if (!attempted_) {
    attempted_ = true;
    std::string fallback_reason;
    real_ = CreateEngine(options_, &fallback_reason);
    if (on_made_ != nullptr) on_made_(context_, options_.kind, fallback_reason, real_ != nullptr);
  }
  return real_ != nullptr && real_->Prepare(request);
}

void DeferredEngine::Wait(Request* request) {
  if (real_ != nullptr) real_->Wait(request);
}

void DeferredEngine::Poll() {
  if (real_ != nullptr) real_->Poll();
}

void DeferredEngine::Cancel(Request* request) {
  if (real_ != nullptr) real_->Cancel(request);
}

void DeferredEngine::Rest() {
  if (real_ != nullptr) real_->Rest();
}

}  // namespace foreactor
