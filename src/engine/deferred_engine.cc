#include "engine/deferred_engine.h"

#include <cerrno>
#include <new>

#include "engine/io_uring_engine.h"
#include "engine/thread_pool_engine.h"

namespace foreactor {

DeferredEngine::DeferredEngine(const EngineOptions& options, MadeCallback on_made, void* context)
    : options_(options), on_made_(on_made), context_(context) {}

const char* DeferredEngine::name() const {
  if (real_ != nullptr) return real_->name();
  return EngineKindName(options_.kind);
}

bool DeferredEngine::Supports(foreactor_call_type type) const {
  if (real_ != nullptr) return real_->Supports(type);
  // What an engine of the kind may support.  The real engine may refuse
  // some in Prepare(): io_uring's opens on a kernel that cannot install a
  // fixed file, and a fallback to the thread pool, which runs no open.
  return options_.kind == EngineKind::kIoUring ? IoUringEngine::SupportsType(type)
                                               : ThreadPoolEngine::SupportsType(type);
}

bool DeferredEngine::Prepare(Request* request) {
  if (!attempted_) {
    attempted_ = true;
    std::string fallback_reason;
    real_ = CreateEngine(options_, &fallback_reason);
    if (on_made_ != nullptr) on_made_(context_, options_.kind, fallback_reason, real_ != nullptr);
  }
  if (real_ == nullptr) return false;
  // Supports() answered for the kind before the engine existed: the engine
  // made may run less (opens).
  for (const Request* link = request; link != nullptr; link = link->linked_next) {
    if (link->operation == RequestOperation::kCall && !real_->Supports(link->call.type)) {
      return false;
    }
  }
  return real_->Prepare(request);
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

int64_t DeferredEngine::InstallEarlyDescriptor(int64_t early, const foreactor_call& open) {
  return real_ != nullptr ? real_->InstallEarlyDescriptor(early, open) : -ECANCELED;
}

void DeferredEngine::ReleaseEarlyDescriptor(int64_t early) {
  if (real_ != nullptr) real_->ReleaseEarlyDescriptor(early);
}

void DeferredEngine::Rest() {
  if (real_ != nullptr) real_->Rest();
}

}  // namespace foreactor
