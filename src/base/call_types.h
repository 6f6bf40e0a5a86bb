// call_types.h: the fixed table of facts about each syscall node type.
//
// Purity decides what may be issued early (DESIGN §2 rule 3): a pure call
// has no effect other than warming the page cache, so it may be issued on a
// guess; a non-pure one only when the program is certain to make it.
#ifndef FOREACTOR_BASE_CALL_TYPES_H_
#define FOREACTOR_BASE_CALL_TYPES_H_

#include "foreactor/foreactor.h"

namespace foreactor {

// How the runtime may treat a call of a given type.
enum class EarlyIssue : unsigned char {
  kNever,        // always runs synchronously when the program reaches it (close, lseek)
  kWhenCertain,  // side effects: only with no weak edge between the frontier and it
  kOnGuess,      // pure: may be issued speculatively
};

struct CallTypeInfo {
  const char* name;        // "pread", "fstatat", ...
  EarlyIssue early_issue;  // for open/openat: with read-only flags; see EarlyIssueFor()
  bool uses_fd;            // the call names a file descriptor (or dirfd) in `fd`
  bool uses_path;          // the call names a path in `path`
  bool reads_data;         // fills a data buffer of `length` bytes (read family, getdents64)
  bool writes_data;        // sends `length` bytes from a buffer (write family)
  bool fills_stat;         // fills a struct stat (or struct statx for STATX)
  bool implicit_offset;    // uses and advances the file position (read, write, readv, writev)
  bool vectored;           // takes iov/iovcnt
};

// The table entry for `type`.  `type` must be below FOREACTOR_CALL_TYPE_COUNT.
const CallTypeInfo& InfoOf(foreactor_call_type type);

// The early-issue class of one concrete call: the type's class, made
// stricter for opens that create or truncate (O_CREAT, O_TRUNC, O_TMPFILE).
EarlyIssue EarlyIssueFor(const foreactor_call& call);

// True for the calls that take a new descriptor number (open, openat).
inline bool IsOpen(foreactor_call_type type) {
  return type == FOREACTOR_CALL_OPEN || type == FOREACTOR_CALL_OPENAT;
}

// True when `type` is a valid call type.
inline bool IsValidCallType(int type) { return type >= 0 && type < FOREACTOR_CALL_TYPE_COUNT; }

}  // namespace foreactor

#endif  // FOREACTOR_BASE_CALL_TYPES_H_
