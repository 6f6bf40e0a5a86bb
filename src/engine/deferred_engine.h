// deferred_engine.h: an engine that is made at its first request.
//
// Making an engine costs a process even when nothing is ever issued early:
// an io_uring ring's setup, probe and teardown take system calls, a thread
// pool's first worker is a thread that shares the descriptor table.  A
// thread whose reads are all found in the page cache issues nothing early
// and should not pay for it.  A DeferredEngine stands in for the engine of
// its kind: until the first Prepare() it answers Supports() as an engine of
// that kind does and has nothing in flight; the first Prepare() makes the
// real engine with CreateEngine() (io_uring falling back to the thread pool
// as usual) and from then on every call goes to it.  When no engine can be
// made, every request is refused (Prepare() returns false), so the program's
// calls run as plain calls.
//
// Used by the thread that owns it only.
#ifndef FOREACTOR_ENGINE_DEFERRED_ENGINE_H_
#define FOREACTOR_ENGINE_DEFERRED_ENGINE_H_

#include <memory>
#include <string>

#include "engine/engine.h"

namespace foreactor {

class DeferredEngine final : public Engine {
 public:
  // Called once, when the real engine was made or could not be: with
  // CreateEngine()'s fallback reason (empty when none) and whether an
  // engine exists now.  `context` is the one given to the constructor.
  using MadeCallback = void (*)(void* context, EngineKind kind, const std::string& fallback_reason,
                                bool made);

  // `options.kind` must be kIoUring or kThreads.
  DeferredEngine(const EngineOptions& options, MadeCallback on_made, void* context);

  // The real engine's name once it is made, before that the kind's.
  const char* name() const override;
  bool Supports(foreactor_call_type type) const override;
  bool Prepare(Request* request) override;
  int Submit() override { return real_ != nullptr ? real_->Submit() : 0; }
  void Wait(Request* request) override;
  void Poll() override;
  void Cancel(Request* request) override;
  int64_t InstallEarlyDescriptor(int64_t early, const foreactor_call& open) override;
  void ReleaseEarlyDescriptor(int64_t early) override;
  void Rest() override;
  void RestartOrder() override {
    if (real_ != nullptr) real_->RestartOrder();
  }

  // The real engine (null until the first Prepare(), or when none could be
  // made).  Releasing it (after fork) leaves it to whoever owns it then.
  Engine* real() const { return real_.get(); }
  Engine* ReleaseReal() { return real_.release(); }

 private:
  const EngineOptions options_;
  const MadeCallback on_made_;
  void* const context_;
  bool attempted_ = false;  // CreateEngine() was called (made or not)
  std::unique_ptr<Engine> real_;
};

}  // namespace foreactor

#endif  // FOREACTOR_ENGINE_DEFERRED_ENGINE_H_
