// fault_injection_engine.h: an Engine decorator that injects faults, for
// tests only.
//
// Reachable only in a build configured with -DFOREACTOR_FAULT_INJECTION=ON
// (which defines FOREACTOR_FAULT_INJECTION): then CreateEngine() wraps every
// engine it makes in a FaultInjectionEngine.  The production library never
// defines that macro, so CreateEngine() never calls anything declared here.
//
// Two kinds of fault, both configured from outside the library:
//
//  1. Faults of the system calls themselves (the device or file system
//     fails).  A test library preloaded after libforeactor.so exports
//     `foreactor_test_fault_decide` (see FaultDecideFunction).  The decorator
//     asks it about every request it is handed, in the order the runtime
//     prepares them, and executes a request with a fault, and every linked
//     chain (a tail counts as made only if it runs), itself, on the calling
//     thread: it completes it with the scheduled error without
//     running it, or runs a shortened copy (short transfer), or runs it and
//     then reports the error (a close that fails still closes).  The same
//     function, called from the test library's libc interposers, decides
//     the faults of the calls that foreactor runs synchronously and of the
//     baseline run, so both runs see one schedule.  Write-back hints
//     (RequestOperation::kStartWriteBack) are no call of the program: the
//     schedule is never asked about them and they run unchanged.
//  2. Faults of foreactor's own machinery, from the environment variable
//     FOREACTOR_TEST_ENGINE_FAULTS (comma-separated, read at each
//     CreateEngine):
//       io_uring_setup   io_uring cannot be set up: fall back to the pool
//       engine_create    no engine can be made (CreateEngine returns null)
//       submit:N         every Nth Submit() fails with -EAGAIN; the batch's
//                        requests complete with -ECANCELED (not executed)
//       prepare:N        every Nth Prepare() refuses (queue full)
//     Unknown words are ignored (this is a test hook, not configuration).
#ifndef FOREACTOR_ENGINE_FAULT_INJECTION_ENGINE_H_
#define FOREACTOR_ENGINE_FAULT_INJECTION_ENGINE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "engine/engine.h"

extern "C" {

// What happens to one call.  Plain C so that a test library can fill it.
enum foreactor_fault_action {
  FOREACTOR_FAULT_NONE = 0,          // run the call normally
  FOREACTOR_FAULT_FAIL = 1,          // do not run it; it fails with `error`
  FOREACTOR_FAULT_SHORTEN = 2,       // run it with `length` bytes instead (data transfers)
  FOREACTOR_FAULT_RUN_THEN_FAIL = 3  // run it, then report `error` (close)
};

struct foreactor_fault_decision {
  int action;       // a foreactor_fault_action
  int error;        // errno value for FAIL and RUN_THEN_FAIL
  uint64_t length;  // byte count for SHORTEN (less than the call's)
};

// Decides the fault of `call` (READ/WRITE/READV/WRITEV carry their file
// position in `offset`).  With `commit` zero it only looks; with `commit`
// nonzero the call counts as made (schedules keyed by "the Nth call of ..."
// advance).  Returns nonzero when `decision` asks for a fault.
typedef int foreactor_fault_decide_function(const foreactor_call* call, int commit,
                                            foreactor_fault_decision* decision);
}

namespace foreactor {

// The symbol the decorator looks up with dlsym(RTLD_DEFAULT, ...).
inline constexpr char kFaultDecideSymbol[] = "foreactor_test_fault_decide";

// Faults of foreactor's own machinery (kind 2 above).
struct MachineFaults {
  bool io_uring_setup = false;
  bool engine_create = false;
  unsigned submit_every = 0;   // 0: never
  unsigned prepare_every = 0;  // 0: never
};

// Parses FOREACTOR_TEST_ENGINE_FAULTS syntax.  Null or empty: no faults.
MachineFaults ParseMachineFaults(const char* text);

class FaultInjectionEngine : public Engine {
 public:
  // Wraps `inner` (not null).  `decide` may be null (no call faults).
  // Returns null when out of memory.
  static std::unique_ptr<Engine> Wrap(std::unique_ptr<Engine> inner,
                                      foreactor_fault_decide_function* decide,
                                      const MachineFaults& faults);

  const char* name() const override { return inner_->name(); }
  bool Supports(foreactor_call_type type) const override { return inner_->Supports(type); }
  bool Prepare(Request* request) override;
  int Submit() override;
  void Wait(Request* request) override;
  void Poll() override { inner_->Poll(); }
  void Cancel(Request* request) override;
  void RestartOrder() override { inner_->RestartOrder(); }
  int64_t InstallEarlyDescriptor(int64_t early, const foreactor_call& open) override {
    return inner_->InstallEarlyDescriptor(early, open);
  }
  void ReleaseEarlyDescriptor(int64_t early) override { inner_->ReleaseEarlyDescriptor(early); }

 private:
  FaultInjectionEngine(std::unique_ptr<Engine> inner, foreactor_fault_decide_function* decide,
                       const MachineFaults& faults);

  // True when some request of the chain at `head` has a call fault.
  bool ChainHasFault(const Request* head) const;
  // Runs the chain at `head` here and now, applying the call faults.
  void ExecuteChainWithFaults(Request* head);
  // Runs one request (not its link) as `decision` says, and completes it.
  void ExecuteOne(Request* request, const foreactor_fault_decision& decision);
  // Counts every call of the chain as made (for requests the inner engine runs).
  void CommitChain(const Request* head);

  static constexpr unsigned kMaxHeld = 1024;

  std::unique_ptr<Engine> inner_;
  foreactor_fault_decide_function* decide_;
  MachineFaults faults_;
  unsigned submits_ = 0;
  unsigned prepares_ = 0;
  // Chains prepared here, handed on (or executed) at the next Submit().
  Request* held_[kMaxHeld];
  unsigned held_count_ = 0;
};

// CreateEngine() of a fault-injection build: reads the machine faults, makes
// the engine with `create_real` (or fails as told), and wraps it.
std::unique_ptr<Engine> CreateFaultInjectingEngine(
    const EngineOptions& options, std::string* fallback_reason,
    std::unique_ptr<Engine> (*create_real)(const EngineOptions&, std::string*));

}  // namespace foreactor

#endif  // FOREACTOR_ENGINE_FAULT_INJECTION_ENGINE_H_
