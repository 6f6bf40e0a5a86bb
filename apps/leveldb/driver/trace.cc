#include "driver/trace.h"

#include <charconv>
#include <cstdio>
#include <memory>
#include <string_view>

namespace leveldb_driver {

namespace {

struct FileCloser {
  void operator()(FILE* file) const { std::fclose(file); }
};

// Parses one operation line (without its newline) into `op`.
bool ParseLine(std::string_view line, TraceOp* op) {
  if (line.size() < 3 || line[1] != ' ') return false;
  switch (line[0]) {
    case 'R':
      op->kind = OpKind::kRead;
      break;
    case 'U':
      op->kind = OpKind::kUpdate;
      break;
    case 'I':
      op->kind = OpKind::kInsert;
      break;
    default:
      return false;
  }
  std::string_view rest = line.substr(2);
  const size_t space = rest.find(' ');
  if (op->kind == OpKind::kRead) {
    if (space != std::string_view::npos) return false;
    op->key.assign(rest);
    op->value_length = 0;
    return true;
  }
  if (space == std::string_view::npos || space == 0) return false;
  op->key.assign(rest.substr(0, space));
  std::string_view number = rest.substr(space + 1);
  auto [end, status] =
      std::from_chars(number.data(), number.data() + number.size(), op->value_length);
  return status == std::errc() && end == number.data() + number.size();
}

}  // namespace

bool ReadTrace(const std::string& path, uint64_t limit, std::vector<TraceOp>* ops,
               std::string* error) {
  std::unique_ptr<FILE, FileCloser> file(std::fopen(path.c_str(), "re"));
  if (!file) {
    *error = path + ": cannot open";
    return false;
  }
  ops->clear();
  char* buffer = nullptr;
  size_t capacity = 0;
  uint64_t line_number = 0;
  bool ok = true;
  ssize_t length;
  while ((limit == 0 || ops->size() < limit) &&
         (length = getline(&buffer, &capacity, file.get())) >= 0) {
    ++line_number;
    std::string_view line(buffer, static_cast<size_t>(length));
    if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    TraceOp op;
    if (!ParseLine(line, &op)) {
      *error = path + ":" + std::to_string(line_number) + ": not a trace operation";
      ok = false;
      break;
    }
    ops->push_back(std::move(op));
  }
  std::free(buffer);
  if (ok && std::ferror(file.get())) {
    *error = path + ": read error";
    ok = false;
  }
  return ok;
}

}  // namespace leveldb_driver
