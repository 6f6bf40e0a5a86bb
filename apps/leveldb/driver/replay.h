// Replaying a run trace against an open LevelDB with client threads, every
// Get checked.
#ifndef FOREACTOR_APPS_LEVELDB_DRIVER_REPLAY_H_
#define FOREACTOR_APPS_LEVELDB_DRIVER_REPLAY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "driver/trace.h"
#include "leveldb/db.h"

namespace leveldb_driver {

struct ReplayResult {
  uint64_t gets = 0;
  uint64_t found = 0;
  uint64_t not_found = 0;
  uint64_t puts = 0;
  uint64_t put_errors = 0;
  uint64_t mismatches = 0;                     // Gets whose status or value is wrong
  std::vector<std::string> mismatch_examples;  // the first few, described
  std::vector<uint64_t> get_latencies_ns;      // one per Get, in no order
  double seconds = 0;                          // wall time of the replay
  // With by_level0: the Gets by the number of level-0 tables the database
  // had as each started (key), and their summed latency.
  struct Level0Gets {
    uint64_t gets = 0;
    uint64_t total_ns = 0;
  };
  std::map<uint64_t, Level0Gets> by_level0;
};

// Replays `ops` against `db` with `threads` client threads (>= 1), which
// take the operations in trace order from a shared cursor.  Updates and
// inserts Put values of the trace's length (values.h); keys that are not
// inserted by the trace are expected to exist, with any version (the image's
// load wrote version 1).
//
// Every Get is checked: status OK with a value that passes CheckValue for
// its key and whose version is at least the last version this replay wrote
// for that key before the Get started; or NotFound, only for a key the trace
// inserts that was not yet inserted.  Anything else counts as a mismatch.
// Puts of one key are serialized, so their versions grow in the DB.  Gets
// use `read_options`.
//
// With `by_level0`, each Get first reads the number of level-0 tables
// (the public "leveldb.num-files-at-level0" property), before its latency
// is timed, and the result groups the Gets by it (by_level0): while
// LevelDB's own compactions merge level 0 away, a faster run makes more of
// its Gets before that, so two runs are compared Get for Get only within a
// group.
ReplayResult Replay(leveldb::DB* db, const std::vector<TraceOp>& ops, int threads,
                    const leveldb::ReadOptions& read_options, bool by_level0 = false);

// Loads `ops` (inserts; reads are ignored) into `db` in write batches of
// about `batch_bytes`, writing version 1 of each key with `value_size`
// bytes (0: the trace's length).  Returns the first error, or OK.
leveldb::Status Load(leveldb::DB* db, const std::vector<TraceOp>& ops, uint32_t value_size,
                     size_t batch_bytes);

}  // namespace leveldb_driver

#endif  // FOREACTOR_APPS_LEVELDB_DRIVER_REPLAY_H_
