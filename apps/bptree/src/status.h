// Status: the outcome of a tree operation, success or an error with a
// message.  Every fallible function of the library returns one; the library
// throws no exceptions.
//
// A successful Status holds no message and allocates nothing.

#ifndef BPTREE_STATUS_H_
#define BPTREE_STATUS_H_

#include <string>
#include <string_view>

namespace bptree {

class [[nodiscard]] Status {
 public:
  // Success.
  Status() = default;
  static Status OK() { return Status(); }

  // The key (or file) that was asked for does not exist.
  static Status NotFound(std::string_view message);
  // The file's content breaks the format or an invariant of the tree.
  static Status Corruption(std::string_view message);
  // The caller passed an argument outside the documented range.
  static Status InvalidArgument(std::string_view message);
  // A system call failed; `context` names what was being done and
  // `errno_value` is the errno it left.
  static Status IOError(std::string_view context, int errno_value);

  bool ok() const { return code_ == Code::kOk; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsIOError() const { return code_ == Code::kIOError; }

  // "OK", or the kind of error followed by its message.
  std::string ToString() const;

 private:
  enum class Code { kOk, kNotFound, kCorruption, kInvalidArgument, kIOError };

  Status(Code code, std::string_view message) : code_(code), message_(message) {}

  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace bptree

#endif  // BPTREE_STATUS_H_
