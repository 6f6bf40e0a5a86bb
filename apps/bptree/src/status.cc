#include "status.h"

#include <cstring>

namespace bptree {

Status Status::NotFound(std::string_view message) { return Status(Code::kNotFound, message); }

Status Status::Corruption(std::string_view message) { return Status(Code::kCorruption, message); }

Status Status::InvalidArgument(std::string_view message) {
  return Status(Code::kInvalidArgument, message);
}

Status Status::IOError(std::string_view context, int errno_value) {
  std::string message(context);
  message += ": ";
  message += std::strerror(errno_value);
  return Status(Code::kIOError, message);
}

std::string Status::ToString() const {
  const char* kind = "OK";
  switch (code_) {
    case Code::kOk:
      return kind;
    case Code::kNotFound:
      kind = "not found: ";
      break;
    case Code::kCorruption:
      kind = "corruption: ";
      break;
    case Code::kInvalidArgument:
      kind = "invalid argument: ";
      break;
    case Code::kIOError:
      kind = "I/O error: ";
      break;
  }
  return kind + message_;
}

}  // namespace bptree
