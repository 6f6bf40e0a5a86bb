#include "engine/request_rules.h"

#include <fcntl.h>

#include <atomic>
#include <cstdint>

#include "base/futex.h"

namespace foreactor {

bool IsStatFamily(foreactor_call_type type) {
  switch (type) {
    case FOREACTOR_CALL_FSTAT:
    case FOREACTOR_CALL_FSTATAT:
    case FOREACTOR_CALL_STAT:
    case FOREACTOR_CALL_LSTAT:
    case FOREACTOR_CALL_STATX:
      return true;
    default:
      return false;
  }
}

StatxArguments StatxArgumentsFor(const foreactor_call& call) {
  switch (call.type) {
    case FOREACTOR_CALL_FSTAT:
      return {call.fd, "", AT_EMPTY_PATH | AT_NO_AUTOMOUNT, STATX_BASIC_STATS};
    case FOREACTOR_CALL_STAT:
      return {AT_FDCWD, call.path, AT_NO_AUTOMOUNT, STATX_BASIC_STATS};
    case FOREACTOR_CALL_LSTAT:
      return {AT_FDCWD, call.path, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_BASIC_STATS};
    case FOREACTOR_CALL_FSTATAT:
      return {call.fd, call.path, call.flags | AT_NO_AUTOMOUNT, STATX_BASIC_STATS};
    default:  // FOREACTOR_CALL_STATX
      return {call.fd, call.path, call.flags, call.mode};
  }
}

bool IsDataTransfer(foreactor_call_type type) {
  switch (type) {
    case FOREACTOR_CALL_READ:
    case FOREACTOR_CALL_PREAD:
    case FOREACTOR_CALL_WRITE:
    case FOREACTOR_CALL_PWRITE:
    case FOREACTOR_CALL_READV:
    case FOREACTOR_CALL_PREADV:
    case FOREACTOR_CALL_WRITEV:
    case FOREACTOR_CALL_PWRITEV:
      return true;
    default:
      return false;
  }
}

size_t RequestedBytes(const foreactor_call& call) {
  switch (call.type) {
    case FOREACTOR_CALL_READV:
    case FOREACTOR_CALL_PREADV:
    case FOREACTOR_CALL_WRITEV:
    case FOREACTOR_CALL_PWRITEV: {
      size_t total = 0;
      for (int i = 0; i < call.iovcnt && call.iov != nullptr; ++i) total += call.iov[i].iov_len;
      return total;
    }
    default:
      return call.length;
  }
}

bool LinkContinues(const Request& completed) {
  if (completed.result < 0) return false;
  if (!IsDataTransfer(completed.call.type)) return true;
  return static_cast<uint64_t>(completed.result) == RequestedBytes(completed.call);
}

static_assert(sizeof(std::atomic<RequestState>) == sizeof(uint32_t) &&
                  std::atomic<RequestState>::is_always_lock_free,
              "a request's state is the futex word its owner sleeps on");

void CompleteRequest(Request* request, int64_t result) {
  request->result = result;
  std::atomic<RequestState>* state = &request->state;
  // The exchange is the last access to the request.
  if (state->exchange(RequestState::kCompleted, std::memory_order_acq_rel) ==
      RequestState::kAwaited) {
    FutexWakeAll(state);
  }
}

void CompleteChain(Request* head, int64_t result) {
  while (head != nullptr) {
    Request* next = head->linked_next;
    CompleteRequest(head, result);
    head = next;
  }
}

void WaitForCompletion(Request* request) {
  std::atomic<RequestState>* state = &request->state;
  RequestState seen = state->load(std::memory_order_acquire);
  while (seen != RequestState::kCompleted) {
    // A failed exchange reloads `seen`: the request completed meanwhile.
    if (seen == RequestState::kSubmitted &&
        !state->compare_exchange_weak(seen, RequestState::kAwaited, std::memory_order_acquire)) {
      continue;
    }
    // Returns at once unless the state is still what was seen (kAwaited).
    FutexWait(state, static_cast<uint32_t>(RequestState::kAwaited));
    seen = state->load(std::memory_order_acquire);
  }
}

unsigned ChainLength(const Request* head) {
  unsigned length = 0;
  for (; head != nullptr; head = head->linked_next) ++length;
  return length;
}

}  // namespace foreactor
