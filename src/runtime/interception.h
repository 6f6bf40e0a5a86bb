// interception.h: what the libc interposers ask of the runtime.
//
// Every interposer follows one pattern (split in two functions, so that
// the idle path is a tail call: see src/intercept/interpose.h):
//
//   if (!InterceptionWanted()) return real_call(...);          // idle: one TLS load
//   InterceptedCall intercepted{...the program's arguments...};
//   int64_t result;
//   if (OfferCall(&intercepted, &result)) return as_libc_return(result);
//   ret = real_call(...);                                       // runtime said: run it
//   CompleteCall(&intercepted, ret < 0 ? -errno : ret);         // errno preserved
//   return ret;
//
// `result` values are the call's return value when >= 0 and -errno when
// negative; the interposer turns -E into errno = E and a -1 return.
#ifndef FOREACTOR_RUNTIME_INTERCEPTION_H_
#define FOREACTOR_RUNTIME_INTERCEPTION_H_

#include <cstdint>

#include "foreactor/foreactor.h"

namespace foreactor {

class GraphRunner;

// Per-thread facts every interposer reads.  Plain thread_local data with
// initial-exec TLS so that reading it never allocates or takes a lock, and
// constinit so that the compiler knows it has no initialiser to run: a read
// is one load, with no call to a TLS wrapper function first.
struct ThreadContext {
  GraphRunner* innermost = nullptr;  // innermost speculating scope, or null
  int inside_foreactor = 0;          // >0 while foreactor's own code runs on this thread
  // Write-back hints of this thread's runners that may still run
  // (write_behind.h): while not zero, close() is watched outside scopes too.
  unsigned write_behind_hints_in_flight = 0;
};

extern constinit thread_local ThreadContext tls_context __attribute__((tls_model("initial-exec")));

// True when the calling thread is inside a speculating scope and not inside
// foreactor's own code (plugin callbacks included).
inline bool InterceptionWanted() {
  return __builtin_expect(tls_context.innermost != nullptr && tls_context.inside_foreactor == 0, 0);
}

// What close() asks instead of InterceptionWanted(): also true outside
// scopes while write-back hints of the thread may still run, so that the
// close waits for those that name its descriptor (OfferCall).  Two loads of
// the same thread-local line on close's idle path.
inline bool CloseWatched() {
  return __builtin_expect(
      (tls_context.innermost != nullptr || tls_context.write_behind_hints_in_flight != 0) &&
          tls_context.inside_foreactor == 0,
      0);
}

// InterceptionWanted() without the inside-foreactor part, out of line (for
// tests, which read no thread_local of the library themselves).
bool ThreadHasSpeculatingScope();

// One call the program made, in the runtime's vocabulary.  `call.buffer` is
// the program's buffer: the destination of read-like calls (struct stat* for
// FSTAT/FSTATAT/STAT/LSTAT, struct statx* for STATX, dirent bytes for
// GETDENTS64), the source of write-like ones.  For READ/WRITE/READV/WRITEV
// `call.offset` is ignored on input: the runtime finds the file position
// itself.  `claimed_by` and `claimed_node` are the runtime's own.
struct InterceptedCall {
  foreactor_call call{};
  GraphRunner* claimed_by = nullptr;
  int claimed_node = -1;
};

// Offers the call to the thread's active scopes, innermost first (a
// close() first waits for the thread's write-back hints on its
// descriptor; it may come with no scope open, see CloseWatched).  Returns
// true when the call was served from an early result (or otherwise fully
// handled): `*result` then holds what the program must get.  Returns false
// when the interposer must run the real call and report it with
// CompleteCall().  Never fails in a way the program can see.
bool OfferCall(InterceptedCall* intercepted, int64_t* result);

// Reports the outcome of a call OfferCall() declined.  Preserves errno.
void CompleteCall(InterceptedCall* intercepted, int64_t result);

// Called in the child after fork(): every scope of the forking thread stops
// speculating and never touches the parent's engines again.
void DisableAfterFork();

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_INTERCEPTION_H_
