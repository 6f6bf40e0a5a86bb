// The shape of an open LevelDB (files and bytes per level), read through
// its public "leveldb.sstables" property.
#ifndef FOREACTOR_APPS_LEVELDB_DRIVER_DB_SHAPE_H_
#define FOREACTOR_APPS_LEVELDB_DRIVER_DB_SHAPE_H_

#include <cstdint>
#include <vector>

#include "leveldb/db.h"

namespace leveldb_driver {

struct DbShape {
  std::vector<uint64_t> files;  // per level, 0..6
  std::vector<uint64_t> bytes;  // per level
};

// Reads the shape of `db`.  Returns levels of zero files when the property
// is missing (never for LevelDB 1.23).
DbShape ReadShape(leveldb::DB* db);

// True when LevelDB 1.23 would schedule no size compaction for `shape`
// (the rule of its VersionSet::Finalize with default options: fewer than 4
// level-0 files, level L >= 1 holding less than 10^L MiB).
bool NoCompactionDue(const DbShape& shape);

}  // namespace leveldb_driver

#endif  // FOREACTOR_APPS_LEVELDB_DRIVER_DB_SHAPE_H_
