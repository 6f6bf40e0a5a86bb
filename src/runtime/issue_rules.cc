#include "runtime/issue_rules.h"

#include <unistd.h>

#include <cstdint>

#include "runtime/call_matching.h"
#include "runtime/early_request.h"
#include "runtime/raw_syscalls.h"

namespace foreactor {

bool IssueRules::WriteAtPositionSettled(const foreactor_call& call, const PendingAccesses& ahead) {
  const CallTypeInfo& info = InfoOf(call.type);
  if (!(info.implicit_offset && info.writes_data)) return true;
  return !ahead.UsesDescriptor(call.fd) && raw::Lseek(call.fd, 0, SEEK_CUR) == call.offset;
}

bool IssueRules::Issuable(const foreactor_call& call) {
  if (!engine_->Supports(IssuedType(call.type))) return false;
  const CallTypeInfo& info = InfoOf(call.type);
  if (call.type == FOREACTOR_CALL_GETDENTS64) return file_kinds_->Lookup(call.fd).directory;
  if (info.reads_data || info.writes_data) {
    // Pipes, sockets and terminals are never touched early: reading one
    // consumes its data.  Regular files only, and never at an offset in
    // place of the position of a file opened for appending.
    FileKindCache::Kind kind = file_kinds_->Lookup(call.fd);
    if (!kind.regular) return false;
    if (info.implicit_offset && info.writes_data && kind.append) return false;
    // Direct I/O the kernel would refuse must be refused as it would be:
    // never turned into a success by running it on foreactor's own
    // aligned buffer.  A write is issued only from an aligned buffer of the
    // program's; a read's buffer is checked when the program makes it.
    if (kind.direct && !DirectIoAllowed(call, info.writes_data)) return false;
  }
  if (info.vectored && call.iov == nullptr && info.writes_data) return false;
  return true;
}

bool IssueRules::DirectIoAllowed(const foreactor_call& call, bool check_buffer) {
  FileKindCache::Kind kind = file_kinds_->Lookup(call.fd);
  if (!kind.direct) return true;
  const CallTypeInfo& info = InfoOf(call.type);
  const uint64_t offset_align = kind.direct_offset_align;
  const uint64_t memory_align = kind.direct_memory_align;
  auto aligned = [](uint64_t value, uint64_t alignment) { return value % alignment == 0; };
  if (!aligned(static_cast<uint64_t>(call.offset), offset_align)) return false;
  if (info.vectored) {
    if (call.iov == nullptr) return !check_buffer && aligned(DataLength(call), offset_align);
    for (int i = 0; i < call.iovcnt; ++i) {
      if (!aligned(call.iov[i].iov_len, offset_align)) return false;
      if (check_buffer &&
          !aligned(reinterpret_cast<uintptr_t>(call.iov[i].iov_base), memory_align)) {
        return false;
      }
    }
    return true;
  }
  if (!aligned(call.length, offset_align)) return false;
  return !check_buffer || aligned(reinterpret_cast<uintptr_t>(call.buffer), memory_align);
}

}  // namespace foreactor
