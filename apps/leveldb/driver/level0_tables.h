// The published system's setup, made through LevelDB's public API: level-0
// tables stacked above an image's levels, the way log recovery writes them.
#ifndef FOREACTOR_APPS_LEVELDB_DRIVER_LEVEL0_TABLES_H_
#define FOREACTOR_APPS_LEVELDB_DRIVER_LEVEL0_TABLES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "driver/db_shape.h"
#include "driver/trace.h"
#include "leveldb/options.h"
#include "leveldb/status.h"

namespace leveldb_driver {

// Adds about `tables` level-0 tables to the closed database `db`, whose
// options are `options` (its write buffer is the size of a level-0 table):
//  1. opens it with a write buffer large enough for all of them and its
//     background work held (HeldCompactionsEnv), and updates the keys of
//     `ops`' inserts in trace order (version 2, `value_size` bytes, 0: the
//     trace's) until its memtable holds `tables` - 1/2 write buffers;
//     closes it: the updates stay in the log, no table is written;
//  2. opens it again with `options`' write buffer, work held: log recovery
//     writes a level-0 table each time its memtable passes the write buffer
//     (DBImpl::RecoverLogFile), so `tables` of them; closes it.
// Sets *updates and *shape (the database after step 2).  Fails when the
// trace has too few inserts.
leveldb::Status StackLevel0Tables(const std::string& db, const leveldb::Options& options,
                                  const std::vector<TraceOp>& ops, uint32_t value_size, int tables,
                                  uint64_t* updates, DbShape* shape);

}  // namespace leveldb_driver

#endif  // FOREACTOR_APPS_LEVELDB_DRIVER_LEVEL0_TABLES_H_
