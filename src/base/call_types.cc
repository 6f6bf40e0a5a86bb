#include "base/call_types.h"

#include <fcntl.h>

namespace foreactor {
namespace {

constexpr EarlyIssue kNever = EarlyIssue::kNever;
constexpr EarlyIssue kCertain = EarlyIssue::kWhenCertain;
constexpr EarlyIssue kGuess = EarlyIssue::kOnGuess;

// Indexed by foreactor_call_type; the order must follow the enum.
//                     name          early    fd     path   rdata  wdata  stat   implicit vector
const CallTypeInfo kTable[FOREACTOR_CALL_TYPE_COUNT] = {
    /* OPEN       */ {"open", kGuess, false, true, false, false, false, false, false},
    /* OPENAT     */ {"openat", kGuess, true, true, false, false, false, false, false},
    /* CLOSE      */ {"close", kNever, true, false, false, false, false, false, false},
    /* READ       */ {"read", kGuess, true, false, true, false, false, true, false},
    /* PREAD      */ {"pread", kGuess, true, false, true, false, false, false, false},
    /* WRITE      */ {"write", kCertain, true, false, false, true, false, true, false},
    /* PWRITE     */ {"pwrite", kCertain, true, false, false, true, false, false, false},
    /* LSEEK      */ {"lseek", kNever, true, false, false, false, false, false, false},
    /* FSTAT      */ {"fstat", kGuess, true, false, false, false, true, false, false},
    /* FSTATAT    */ {"fstatat", kGuess, true, true, false, false, true, false, false},
    /* STAT       */ {"stat", kGuess, false, true, false, false, true, false, false},
    /* LSTAT      */ {"lstat", kGuess, false, true, false, false, true, false, false},
    /* STATX      */ {"statx", kGuess, true, true, false, false, true, false, false},
    /* GETDENTS64 */ {"getdents64", kGuess, true, false, true, false, false, false, false},
    /* READV      */ {"readv", kGuess, true, false, true, false, false, true, true},
    /* PREADV     */ {"preadv", kGuess, true, false, true, false, false, false, true},
    /* WRITEV     */ {"writev", kCertain, true, false, false, true, false, true, true},
    /* PWRITEV    */ {"pwritev", kCertain, true, false, false, true, false, false, true},
};

}  // namespace

const CallTypeInfo& InfoOf(foreactor_call_type type) { return kTable[type]; }

EarlyIssue EarlyIssueFor(const foreactor_call& call) {
  EarlyIssue early = kTable[call.type].early_issue;
  if (IsOpen(call.type)) {
    if (call.flags & (O_CREAT | O_TRUNC | O_TMPFILE)) early = EarlyIssue::kWhenCertain;
  }
  return early;
}

}  // namespace foreactor

extern "C" const char* foreactor_call_type_name(foreactor_call_type type) {
  if (!foreactor::IsValidCallType(type)) return "invalid";
  return foreactor::InfoOf(type).name;
}
