// sync_engine.h: the engine that issues nothing early (EngineKind::kSync).
//
// It supports no call type, so the runtime runs every call synchronously at
// the frontier through the same code path as with a real engine: the
// baseline for measurements, and the behaviour at depth 0.
#ifndef FOREACTOR_ENGINE_SYNC_ENGINE_H_
#define FOREACTOR_ENGINE_SYNC_ENGINE_H_

#include "engine/engine.h"

namespace foreactor {

class SyncEngine final : public Engine {
 public:
  static constexpr const char* kName = "sync";
  const char* name() const override { return kName; }
  // Always false.
  bool Supports(foreactor_call_type type) const override;
  // Always false: the request stays kIdle.
  bool Prepare(Request* request) override;
  // Nothing is ever prepared: returns 0.
  int Submit() override { return 0; }
  // No request is ever in flight; completes nothing and returns at once.
  void Wait(Request* request) override;
  void Poll() override {}
  void Cancel(Request* request) override;
};

}  // namespace foreactor

#endif  // FOREACTOR_ENGINE_SYNC_ENGINE_H_
