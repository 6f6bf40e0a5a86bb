#include "driver/db_shape.h"

#include <cstdlib>
#include <sstream>
#include <string>

namespace leveldb_driver {

namespace {
constexpr int kLevels = 7;
}

DbShape ReadShape(leveldb::DB* db) {
  DbShape shape{std::vector<uint64_t>(kLevels, 0), std::vector<uint64_t>(kLevels, 0)};
  std::string text;
  if (!db->GetProperty("leveldb.sstables", &text)) return shape;
  // Lines: "--- level N ---" then " number:size[smallest .. largest]".
  std::istringstream lines(text);
  std::string line;
  int level = -1;
  while (std::getline(lines, line)) {
    if (line.rfind("--- level ", 0) == 0) {
      level = std::atoi(line.c_str() + 10);
      continue;
    }
    const size_t colon = line.find(':');
    if (level < 0 || level >= kLevels || colon == std::string::npos) continue;
    shape.files[level] += 1;
    shape.bytes[level] += std::strtoull(line.c_str() + colon + 1, nullptr, 10);
  }
  return shape;
}

bool NoCompactionDue(const DbShape& shape) {
  if (shape.files[0] >= 4) return false;
  double limit = 10.0 * 1048576.0;
  for (int level = 1; level < kLevels - 1; ++level, limit *= 10) {
    if (static_cast<double>(shape.bytes[level]) >= limit) return false;
  }
  return true;
}

}  // namespace leveldb_driver
