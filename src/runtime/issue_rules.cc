#include "runtime/issue_rules.h"

#include <unistd.h>

#include "runtime/raw_syscalls.h"

namespace foreactor {

bool IssueRules::WriteAtPositionSettled(const foreactor_call& call, const PendingAccesses& ahead) {
  const CallTypeInfo& info = InfoOf(call.type);
  if (!(info.implicit_offset && info.writes_data)) return true;
  return !ahead.UsesDescriptor(call.fd) && raw::Lseek(call.fd, 0, SEEK_CUR) == call.offset;
}

}  // namespace foreactor
