#include "driver/level0_tables.h"

#include <cstdlib>
#include <memory>

#include "driver/held_compactions_env.h"
#include "driver/values.h"
#include "leveldb/cache.h"
#include "leveldb/db.h"
#include "leveldb/env.h"

namespace leveldb_driver {

namespace {

// Bytes of the memtable of `db`: LevelDB's approximate memory usage less
// its block cache's (the property counts both).
uint64_t MemtableBytes(leveldb::DB* db, const leveldb::Options& options) {
  std::string text;
  if (!db->GetProperty("leveldb.approximate-memory-usage", &text)) return 0;
  const uint64_t total = std::strtoull(text.c_str(), nullptr, 10);
  const uint64_t cache = options.block_cache != nullptr ? options.block_cache->TotalCharge() : 0;
  return total > cache ? total - cache : 0;
}

leveldb::Status WriteUpdates(const std::string& db_path, leveldb::Options options,
                             const std::vector<TraceOp>& ops, uint32_t value_size, int tables,
                             uint64_t* updates) {
  const uint64_t table_bytes = options.write_buffer_size;
  const uint64_t target = table_bytes * static_cast<uint64_t>(tables) - table_bytes / 2;
  HeldCompactionsEnv env(options.env);
  options.env = &env;
  options.write_buffer_size = static_cast<size_t>(2 * target);  // never flushed
  leveldb::DB* raw = nullptr;
  leveldb::Status status = leveldb::DB::Open(options, db_path, &raw);
  if (!status.ok()) return status;
  HeldDatabase db(raw, DatabaseCloser{&env});
  std::string value;
  *updates = 0;
  const leveldb::WriteOptions write_options;
  for (const TraceOp& op : ops) {
    if (MemtableBytes(db.get(), options) >= target) break;
    if (op.kind == OpKind::kRead) continue;
    MakeValue(op.key, 2, value_size != 0 ? value_size : op.value_length, &value);
    status = db->Put(write_options, op.key, value);
    if (!status.ok()) break;
    ++*updates;
  }
  if (status.ok() && MemtableBytes(db.get(), options) < target) {
    status =
        leveldb::Status::InvalidArgument("the trace has too few inserts for the level-0 tables");
  }
  return status;
}

}  // namespace

leveldb::Status StackLevel0Tables(const std::string& db_path, const leveldb::Options& options,
                                  const std::vector<TraceOp>& ops, uint32_t value_size, int tables,
                                  uint64_t* updates, DbShape* shape) {
  leveldb::Status status = WriteUpdates(db_path, options, ops, value_size, tables, updates);
  if (!status.ok()) return status;
  HeldCompactionsEnv env(options.env);
  leveldb::Options recovery = options;
  recovery.env = &env;
  leveldb::DB* raw = nullptr;
  status = leveldb::DB::Open(recovery, db_path, &raw);
  if (!status.ok()) return status;
  HeldDatabase db(raw, DatabaseCloser{&env});
  *shape = ReadShape(db.get());
  return status;
}

}  // namespace leveldb_driver
