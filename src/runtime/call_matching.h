// call_matching.h: deciding whether a real call is the call issued early,
// and handing an early result to the program exactly as the real call would.
#ifndef FOREACTOR_RUNTIME_CALL_MATCHING_H_
#define FOREACTOR_RUNTIME_CALL_MATCHING_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/call_types.h"
#include "foreactor/foreactor.h"
#include "runtime/visit_slot.h"

namespace foreactor {

// Sum of the lengths of `count` iovecs.
size_t IovecTotal(const struct iovec* iov, int count);

// Bytes a read or write call moves: the total of its iovecs for a vector
// form given with iovecs, its length otherwise.  A prediction of a vector
// read may give only `length` (foreactor.h); a real call always has its
// iovecs.
inline size_t DataLength(const foreactor_call& call) {
  return InfoOf(call.type).vectored && call.iov != nullptr ? IovecTotal(call.iov, call.iovcnt)
                                                           : call.length;
}

// True when the program's call `real` has the same type and arguments as
// the plugin's prediction `predicted`: fd, path, flags, mode (when it
// matters), length (total for vector forms), offset, whence.  For calls with
// an implicit offset, `real.offset` must already hold the file position.
// Does not look at data bytes; see WrittenBytesMatch.
bool ArgumentsMatch(const foreactor_call& predicted, const foreactor_call& real);

// For write-like calls: true when the program's bytes equal the `written`
// bytes the early request sent.
bool WrittenBytesMatch(const foreactor_call& real, const char* written);

// Copies the result of a completed early request in `slot` into the
// program's buffers (`real.buffer` / `real.iov`): data bytes, the stat
// structure (converted exactly from statx), dirents.  Returns the value the
// call returns (>= 0) or -errno.  Open results are returned as they are; the
// caller renumbers the descriptor.
int64_t DeliverResult(const VisitSlot& slot, const foreactor_call& real);

// A readable form of a call for messages: "pread(fd=3, length=8192,
// offset=40960)", with only the arguments its type uses.
std::string DescribeCall(const foreactor_call& call);

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_CALL_MATCHING_H_
