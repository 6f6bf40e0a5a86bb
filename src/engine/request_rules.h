// request_rules.h: how a Request maps onto system calls, shared by every
// engine so that they all give the same answers (private to src/engine and
// the test fakes).
#ifndef FOREACTOR_ENGINE_REQUEST_RULES_H_
#define FOREACTOR_ENGINE_REQUEST_RULES_H_

#include <cstddef>
#include <cstdint>

#include "engine/request.h"

namespace foreactor {

// The arguments of the statx(2) call that answers a stat-family call the
// way the original call would.  stat, lstat, fstat and fstatat behave as if
// AT_NO_AUTOMOUNT were set (the kernel adds it for them), so it is added
// here too; statx(2) itself is passed through unchanged.
struct StatxArguments {
  int directory_fd;
  const char* path;
  int flags;
  unsigned int mask;
};

// True for FSTAT, FSTATAT, STAT, LSTAT and STATX.
bool IsStatFamily(foreactor_call_type type);

// The statx(2) arguments for `call`, which must be of the stat family.
StatxArguments StatxArgumentsFor(const foreactor_call& call);

// True for the calls that move bytes (read/write families, positional or
// not, vectored or not).  getdents64 is not one of them.
bool IsDataTransfer(foreactor_call_type type);

// The number of bytes a data-transfer call asks for: `length`, or for the
// vector forms the sum of the iovec lengths (what the kernel compares).
size_t RequestedBytes(const foreactor_call& call);

// True when the request linked after `completed` may run: a data transfer
// must have moved exactly RequestedBytes(); any other call must have
// succeeded (result >= 0).  This is the rule io_uring's IOSQE_IO_LINK
// applies, so both engines break a chain at the same point.
bool LinkContinues(const Request& completed);

// Stores `result`, publishes the request as kCompleted (release ordering)
// and wakes its owner if it sleeps in WaitForCompletion().  The caller must
// not touch the request afterwards: its owner may reuse it at once (the
// wake-up is a futex call on the state's address, which reads nothing).
void CompleteRequest(Request* request, int64_t result);

// Completes `head` and every request linked after it with `result`, in
// chain order.  Reads each link before completing its holder.
void CompleteChain(Request* head, int64_t result);

// Blocks the owner of `request` until the request is kCompleted.  The
// request must have been submitted (kSubmitted or later).  The owner marks
// it kAwaited and sleeps in a futex wait on its state; the completion's
// exchange to kCompleted sees the mark and wakes it.  Both sides change
// the one state word, so a completion can never slip between the owner's
// check and its sleep.
void WaitForCompletion(Request* request);

// The number of requests in the chain that starts at `head` (at least 1).
unsigned ChainLength(const Request* head);

}  // namespace foreactor

#endif  // FOREACTOR_ENGINE_REQUEST_RULES_H_
