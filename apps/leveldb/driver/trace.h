// A YCSB trace as apps/leveldb/ycsb/make_trace.py writes it.
#ifndef FOREACTOR_APPS_LEVELDB_DRIVER_TRACE_H_
#define FOREACTOR_APPS_LEVELDB_DRIVER_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace leveldb_driver {

enum class OpKind : uint8_t { kRead, kUpdate, kInsert };

struct TraceOp {
  OpKind kind;
  uint32_t value_length;  // 0 for reads
  std::string key;
};

// Reads the trace at `path`: a '#' header line, then one operation a line
// ("R key", "U key length", "I key length").  On success fills `ops` and
// returns true; otherwise sets `error` (file, line number, reason) and
// returns false.  `limit` > 0 keeps only the first `limit` operations.
bool ReadTrace(const std::string& path, uint64_t limit, std::vector<TraceOp>* ops,
               std::string* error);

}  // namespace leveldb_driver

#endif  // FOREACTOR_APPS_LEVELDB_DRIVER_TRACE_H_
