// FaultInjectionEngine: faults for tests (see the header).  Reachable only
// in -DFOREACTOR_FAULT_INJECTION=ON builds.
#include "engine/fault_injection_engine.h"

#include <dlfcn.h>
#include <limits.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "base/out_of_memory.h"
#include "engine/request_rules.h"

namespace foreactor {
namespace {

// Parses the decimal number that starts at `text`; 0 when there is none.
unsigned ParseCount(const char* text) {
  unsigned value = 0;
  while (*text >= '0' && *text <= '9' && value < 1000000) value = value * 10 + (*text++ - '0');
  return value;
}

// True for a request that stands for a call of the program: the fault
// schedule is about those only (a write-back hint is none).
bool IsProgramCall(const Request& request) { return request.operation == RequestOperation::kCall; }

bool WordIs(const char* word, size_t length, const char* expected) {
  return std::strlen(expected) == length && std::strncmp(word, expected, length) == 0;
}

}  // namespace

MachineFaults ParseMachineFaults(const char* text) {
  MachineFaults faults;
  if (text == nullptr) return faults;
  while (*text != '\0') {
    const char* end = std::strchr(text, ',');
    const size_t length = end != nullptr ? static_cast<size_t>(end - text) : std::strlen(text);
    const char* colon = static_cast<const char*>(std::memchr(text, ':', length));
    const size_t name_length = colon != nullptr ? static_cast<size_t>(colon - text) : length;
    const unsigned count = colon != nullptr ? ParseCount(colon + 1) : 0;
    if (WordIs(text, name_length, "io_uring_setup")) faults.io_uring_setup = true;
    if (WordIs(text, name_length, "engine_create")) faults.engine_create = true;
    if (WordIs(text, name_length, "submit")) faults.submit_every = count;
    if (WordIs(text, name_length, "prepare")) faults.prepare_every = count;
    text += length;
    if (*text == ',') ++text;
  }
  return faults;
}

std::unique_ptr<Engine> FaultInjectionEngine::Wrap(std::unique_ptr<Engine> inner,
                                                   foreactor_fault_decide_function* decide,
                                                   const MachineFaults& faults) {
  std::unique_ptr<Engine> engine;
  static_cast<void>(AllocationSucceeds(
      [&] { engine.reset(new FaultInjectionEngine(std::move(inner), decide, faults)); }));
  return engine;
}

FaultInjectionEngine::FaultInjectionEngine(std::unique_ptr<Engine> inner,
                                           foreactor_fault_decide_function* decide,
                                           const MachineFaults& faults)
    : inner_(std::move(inner)), decide_(decide), faults_(faults) {}

bool FaultInjectionEngine::Prepare(Request* request) {
  ++prepares_;
  if (faults_.prepare_every != 0 && prepares_ % faults_.prepare_every == 0) return false;
  if (held_count_ == kMaxHeld) return false;
  // A faulted call runs here, on the calling thread, at Submit(): an
  // ordered one would overtake the inner engine's earlier ordered
  // requests.  Refused, the program makes it (its fault applied there).
  if (request->ordered && ChainHasFault(request)) return false;
  held_[held_count_++] = request;
  for (Request* link = request; link != nullptr; link = link->linked_next) {
    link->cancel_requested.store(false, std::memory_order_relaxed);  // (runs with ExecuteNow)
    link->state.store(RequestState::kPrepared, std::memory_order_relaxed);
  }
  return true;
}

bool FaultInjectionEngine::ChainHasFault(const Request* head) const {
  if (decide_ == nullptr) return false;
  for (const Request* link = head; link != nullptr; link = link->linked_next) {
    if (!IsProgramCall(*link)) continue;
    foreactor_fault_decision decision{};
    if (decide_(&link->call, 0, &decision) != 0) return true;
  }
  return false;
}

void FaultInjectionEngine::CommitChain(const Request* head) {
  if (decide_ == nullptr) return;
  for (const Request* link = head; link != nullptr; link = link->linked_next) {
    if (!IsProgramCall(*link)) continue;
    foreactor_fault_decision decision{};
    decide_(&link->call, 1, &decision);
  }
}

void FaultInjectionEngine::ExecuteOne(Request* request, const foreactor_fault_decision& decision) {
  switch (decision.action) {
    case FOREACTOR_FAULT_FAIL:
      CompleteRequest(request, -static_cast<int64_t>(decision.error));
      return;
    case FOREACTOR_FAULT_RUN_THEN_FAIL: {
      Request copy;
      copy.call = request->call;
      ExecuteNow(&copy);
      CompleteRequest(request, -static_cast<int64_t>(decision.error));
      return;
    }
    case FOREACTOR_FAULT_SHORTEN:
      if (IsDataTransfer(request->call.type) && decision.length < RequestedBytes(request->call)) {
        Request copy;
        copy.call = request->call;
        copy.call.length = decision.length;
        struct iovec shortened[IOV_MAX];
        if (copy.call.iov != nullptr && copy.call.iovcnt > 0 && copy.call.iovcnt <= IOV_MAX) {
          uint64_t left = decision.length;
          int count = 0;
          for (int i = 0; i < copy.call.iovcnt && left > 0; ++i) {
            shortened[count] = copy.call.iov[i];
            if (shortened[count].iov_len > left) shortened[count].iov_len = left;
            left -= shortened[count].iov_len;
            ++count;
          }
          copy.call.iov = shortened;
          copy.call.iovcnt = count;
        }
        ExecuteNow(&copy);
        CompleteRequest(request, copy.result);
        return;
      }
      break;
    default:
      break;
  }
  // No fault (or one that does not apply): run the call as it is.
  Request* next = request->linked_next;
  request->linked_next = nullptr;
  ExecuteNow(request);
  // The owner is this thread, blocked in Submit(): restoring the link after
  // completion cannot race with a reuse of the request.
  request->linked_next = next;
}

void FaultInjectionEngine::ExecuteChainWithFaults(Request* head) {
  bool run = true;
  for (Request* link = head; link != nullptr;) {
    Request* next = link->linked_next;
    if (!run) {
      CompleteRequest(link, -ECANCELED);
    } else {
      foreactor_fault_decision decision{};  // FOREACTOR_FAULT_NONE
      if (decide_ != nullptr && IsProgramCall(*link)) decide_(&link->call, 1, &decision);
      ExecuteOne(link, decision);
      run = LinkContinues(*link);
    }
    link = next;
  }
}

int FaultInjectionEngine::Submit() {
  if (held_count_ == 0) return inner_->Submit();
  ++submits_;
  if (faults_.submit_every != 0 && submits_ % faults_.submit_every == 0) {
    // As the real engines do when the kernel refuses a batch: nothing of
    // it runs, every request completes with -ECANCELED.
    for (unsigned i = 0; i < held_count_; ++i) CompleteChain(held_[i], -ECANCELED);
    held_count_ = 0;
    return -EAGAIN;
  }
  int submitted = 0;
  for (unsigned i = 0; i < held_count_; ++i) {
    Request* head = held_[i];
    // A chain runs here as well: whether its tail runs depends on the head's
    // result, and only then may the tail count as made.
    if (head->linked_next != nullptr || ChainHasFault(head)) {
      ExecuteChainWithFaults(head);
      submitted += static_cast<int>(ChainLength(head));
      continue;
    }
    for (Request* link = head; link != nullptr; link = link->linked_next) {
      link->state.store(RequestState::kIdle, std::memory_order_relaxed);
    }
    if (inner_->Prepare(head)) {
      CommitChain(head);
    } else {
      CompleteChain(head, -ECANCELED);
    }
  }
  held_count_ = 0;
  const int inner_submitted = inner_->Submit();
  return inner_submitted < 0 ? inner_submitted : submitted + inner_submitted;
}

void FaultInjectionEngine::Wait(Request* request) {
  if (request->state.load(std::memory_order_relaxed) == RequestState::kPrepared) Submit();
  if (request->state.load(std::memory_order_acquire) == RequestState::kCompleted) return;
  inner_->Wait(request);
}

void FaultInjectionEngine::Cancel(Request* request) {
  if (request->state.load(std::memory_order_acquire) == RequestState::kCompleted) return;
  inner_->Cancel(request);
}

std::unique_ptr<Engine> CreateFaultInjectingEngine(
    const EngineOptions& options, std::string* fallback_reason,
    std::unique_ptr<Engine> (*create_real)(const EngineOptions&, std::string*)) {
  const MachineFaults faults = ParseMachineFaults(std::getenv("FOREACTOR_TEST_ENGINE_FAULTS"));
  if (fallback_reason != nullptr) fallback_reason->clear();
  if (faults.engine_create) return nullptr;
  std::unique_ptr<Engine> inner;
  if (faults.io_uring_setup && options.kind == EngineKind::kIoUring) {
    EngineOptions fallback = options;
    fallback.kind = EngineKind::kThreads;
    inner = create_real(fallback, fallback_reason);
    if (fallback_reason != nullptr) {
      fallback_reason->assign("io_uring unavailable (injected fault): using the thread pool");
    }
  } else {
    inner = create_real(options, fallback_reason);
  }
  if (!inner) return nullptr;
  auto* decide =
      reinterpret_cast<foreactor_fault_decide_function*>(dlsym(RTLD_DEFAULT, kFaultDecideSymbol));
  return FaultInjectionEngine::Wrap(std::move(inner), decide, faults);
}

}  // namespace foreactor
