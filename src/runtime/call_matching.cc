#include "runtime/call_matching.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "base/call_types.h"
#include "engine/stat_conversion.h"

namespace foreactor {

size_t IovecTotal(const struct iovec* iov, int count) {
  size_t total = 0;
  for (int i = 0; i < count; ++i) total += iov[i].iov_len;
  return total;
}

namespace {

bool SamePath(const char* a, const char* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return std::strcmp(a, b) == 0;
}

bool OpenCreates(int flags) { return (flags & (O_CREAT | O_TMPFILE)) != 0; }

// Copies `length` bytes of linux_dirent64 records the way the kernel writes
// them: each record's fixed header, name and terminating NUL, leaving the
// padding up to the next record as the destination had it.
void CopyDirectoryEntries(const char* source, size_t length, char* destination) {
  constexpr size_t kHeader = offsetof(struct dirent64, d_name);
  size_t position = 0;
  while (position + kHeader <= length) {
    const auto* entry = reinterpret_cast<const struct dirent64*>(source + position);
    const size_t record = entry->d_reclen;
    if (record < kHeader || position + record > length) {
      std::memcpy(destination + position, source + position, length - position);
      return;
    }
    const size_t name = strnlen(entry->d_name, record - kHeader);
    const size_t used = std::min(record, kHeader + name + 1);
    std::memcpy(destination + position, source + position, used);
    position += record;
  }
}

}  // namespace

bool ArgumentsMatch(const foreactor_call& predicted, const foreactor_call& real) {
  if (predicted.type != real.type) return false;
  const CallTypeInfo& info = InfoOf(real.type);
  if (info.uses_fd && predicted.fd != real.fd) return false;
  if (info.uses_path && !SamePath(predicted.path, real.path)) return false;
  switch (real.type) {
    case FOREACTOR_CALL_OPEN:
    case FOREACTOR_CALL_OPENAT:
      if (predicted.flags != real.flags) return false;
      return !OpenCreates(real.flags) || predicted.mode == real.mode;
    case FOREACTOR_CALL_CLOSE:
    case FOREACTOR_CALL_FSTAT:
    case FOREACTOR_CALL_STAT:
    case FOREACTOR_CALL_LSTAT:
      return true;
    case FOREACTOR_CALL_FSTATAT:
      return predicted.flags == real.flags;
    case FOREACTOR_CALL_STATX:
      return predicted.flags == real.flags && predicted.mode == real.mode;
    case FOREACTOR_CALL_LSEEK:
      return predicted.offset == real.offset && predicted.whence == real.whence;
    case FOREACTOR_CALL_GETDENTS64:
      return predicted.length == real.length;
    default:  // read and write families
      return DataLength(predicted) == DataLength(real) && predicted.offset == real.offset;
  }
}

bool WrittenBytesMatch(const foreactor_call& real, const char* written) {
  if (!InfoOf(real.type).vectored) {
    return real.length == 0 || std::memcmp(real.buffer, written, real.length) == 0;
  }
  size_t done = 0;
  for (int i = 0; i < real.iovcnt; ++i) {
    if (std::memcmp(real.iov[i].iov_base, written + done, real.iov[i].iov_len) != 0) return false;
    done += real.iov[i].iov_len;
  }
  return true;
}

int64_t DeliverResult(const VisitSlot& slot, const foreactor_call& real) {
  const int64_t result = slot.request.result;
  if (result < 0) return result;
  const CallTypeInfo& info = InfoOf(real.type);
  if (info.fills_stat) {
    if (real.type == FOREACTOR_CALL_STATX) {
      std::memcpy(real.buffer, &slot.request.statx_buffer, sizeof(struct statx));
    } else {
      StatFromStatx(slot.request.statx_buffer, static_cast<struct stat*>(real.buffer));
    }
  } else if (real.type == FOREACTOR_CALL_GETDENTS64 && result > 0) {
    CopyDirectoryEntries(slot.data.data(), static_cast<size_t>(result),
                         static_cast<char*>(real.buffer));
  } else if (info.reads_data && result > 0) {
    const char* source = slot.data.data();
    if (info.vectored) {
      size_t remaining = static_cast<size_t>(result);
      for (int i = 0; i < real.iovcnt && remaining > 0; ++i) {
        size_t piece = std::min(remaining, real.iov[i].iov_len);
        std::memcpy(real.iov[i].iov_base, source, piece);
        source += piece;
        remaining -= piece;
      }
    } else {
      std::memcpy(real.buffer, source, static_cast<size_t>(result));
    }
  }
  return result;
}

std::string DescribeCall(const foreactor_call& call) {
  const CallTypeInfo& info = InfoOf(call.type);
  std::string text = std::string(info.name) + "(";
  auto add = [&text](const std::string& part) {
    if (text.back() != '(') text += ", ";
    text += part;
  };
  if (info.uses_fd) add("fd=" + std::to_string(call.fd));
  if (info.uses_path)
    add(std::string("path=\"") + (call.path != nullptr ? call.path : "(null)") + "\"");
  if (IsOpen(call.type) || call.type == FOREACTOR_CALL_FSTATAT ||
      call.type == FOREACTOR_CALL_STATX) {
    add("flags=" + std::to_string(call.flags));
  }
  if (info.reads_data || info.writes_data) add("length=" + std::to_string(DataLength(call)));
  if (info.reads_data || info.writes_data || call.type == FOREACTOR_CALL_LSEEK) {
    if (call.type != FOREACTOR_CALL_GETDENTS64) add("offset=" + std::to_string(call.offset));
  }
  if (call.type == FOREACTOR_CALL_LSEEK) add("whence=" + std::to_string(call.whence));
  return text + ")";
}

}  // namespace foreactor
