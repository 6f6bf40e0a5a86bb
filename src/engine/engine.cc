// CreateEngine: picks the backend, falling back from io_uring to the
// thread pool when the kernel does not let us use io_uring (DESIGN §6).
#include <cerrno>
#include <new>

#include "base/out_of_memory.h"
#include "engine/engine.h"
#include "engine/fault_injection_engine.h"
#include "engine/io_uring_engine.h"
#include "engine/sync_engine.h"
#include "engine/thread_pool_engine.h"

namespace foreactor {
namespace {

std::unique_ptr<Engine> CreateRealEngine(const EngineOptions& options,
                                         std::string* fallback_reason) {
  std::unique_ptr<Engine> engine;
  // Out of memory while composing the message: run without speculation.
  static_cast<void>(AllocationSucceeds([&] {
    if (fallback_reason != nullptr) fallback_reason->clear();
    switch (options.kind) {
      case EngineKind::kIoUring: {
        std::string error;
        engine = IoUringEngine::Create(options, &error);
        if (engine) return;
        if (fallback_reason != nullptr && !AllocationSucceeds([&] {
              *fallback_reason = "io_uring unavailable (" + error + "): using the thread pool";
            })) {
          fallback_reason->assign("no io_uring");  // short enough never to allocate
        }
        engine = ThreadPoolEngine::Create(options);
        return;
      }
      case EngineKind::kThreads:
        engine = ThreadPoolEngine::Create(options);
        return;
      case EngineKind::kSync:
        engine.reset(NewOrNull<SyncEngine>());
        return;
    }
  }));
  return engine;
}

}  // namespace

// Engines that support no open never hold an early descriptor.
int64_t Engine::InstallEarlyDescriptor(int64_t, const foreactor_call&) { return -ECANCELED; }

void Engine::ReleaseEarlyDescriptor(int64_t) {}

const char* EngineKindName(EngineKind kind) {
  switch (kind) {
    case EngineKind::kIoUring:
      return IoUringEngine::kName;
    case EngineKind::kThreads:
      return ThreadPoolEngine::kName;
    case EngineKind::kSync:
      break;
  }
  return SyncEngine::kName;
}

std::unique_ptr<Engine> CreateEngine(const EngineOptions& options, std::string* fallback_reason) {
#ifdef FOREACTOR_FAULT_INJECTION
  // Test-only build (-DFOREACTOR_FAULT_INJECTION=ON): every engine is
  // wrapped in the fault-injecting decorator (fault_injection_engine.h).
  return CreateFaultInjectingEngine(options, fallback_reason, &CreateRealEngine);
#else
  return CreateRealEngine(options, fallback_reason);
#endif
}

}  // namespace foreactor
