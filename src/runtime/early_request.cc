#include "runtime/early_request.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/call_types.h"
#include "runtime/call_matching.h"
#include "runtime/raw_syscalls.h"

namespace foreactor {

foreactor_call_type IssuedType(foreactor_call_type type) {
  switch (type) {
    case FOREACTOR_CALL_READ:
    case FOREACTOR_CALL_READV:
    case FOREACTOR_CALL_PREADV:
      return FOREACTOR_CALL_PREAD;
    case FOREACTOR_CALL_WRITE:
    case FOREACTOR_CALL_WRITEV:
    case FOREACTOR_CALL_PWRITEV:
      return FOREACTOR_CALL_PWRITE;
    default:
      return type;
  }
}

bool Deliverable(const Request& request) {
  if (!Executed(request)) return false;
  return !IsOpen(request.call.type) || (request.result != -EMFILE && request.result != -ENFILE);
}

bool PrepareEarlyRequest(VisitSlot& slot) {
  const foreactor_call& predicted = slot.predicted;
  const CallTypeInfo& info = InfoOf(predicted.type);
  Request& request = slot.request;
  request.call = predicted;
  request.call.type = IssuedType(predicted.type);
  request.call.iov = nullptr;
  request.call.iovcnt = 0;
  request.call.link_next = 0;
  request.result = 0;
  request.linked_next = nullptr;
  request.ordered = false;
  request.streamed = false;
  if (info.reads_data) {
    size_t length = DataLength(predicted);
    if (!slot.data.Reserve(length > 0 ? length : 1)) return false;
    request.call.buffer = slot.data.data();
    request.call.length = length;
  } else if (info.writes_data &&
             (info.vectored ? predicted.iov != nullptr : predicted.buffer != nullptr)) {
    size_t length = DataLength(predicted);
    if (!slot.data.Reserve(length > 0 ? length : 1)) return false;
    if (info.vectored) {
      size_t done = 0;
      for (int i = 0; i < predicted.iovcnt; ++i) {
        std::memcpy(slot.data.data() + done, predicted.iov[i].iov_base, predicted.iov[i].iov_len);
        done += predicted.iov[i].iov_len;
      }
    } else if (length > 0) {
      std::memcpy(slot.data.data(), predicted.buffer, length);
    }
    request.call.buffer = slot.data.data();
    request.call.length = length;
  }
  if (predicted.type == FOREACTOR_CALL_GETDENTS64) {
    int64_t position = raw::Lseek(predicted.fd, 0, SEEK_CUR);
    if (position < 0) return false;
    slot.directory_position = position;
  }
  return true;
}

}  // namespace foreactor
