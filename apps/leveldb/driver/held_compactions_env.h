// An Env that holds LevelDB's background work (compactions, memtable
// flushes) while a benchmark runs, for a database opened with it as
// Options::env.  LevelDB 1.23 schedules at most one background item per
// database at a time (DBImpl::MaybeScheduleCompaction), so holding it keeps
// every table file and the Version as they were at open.
//
// Close: DBImpl's destructor waits until its scheduled item has run, so a
// held item must run before the database is deleted, or close would hang.
// RunHeldWorkForClose() runs it, on the calling thread, with new files
// refused from then on.  The item then finds it cannot write a table: a
// compaction or a memtable flush fails at its first output file, LevelDB
// records a background error (which stops its background work and its
// removal of obsolete files) and installs nothing, so no table file is
// created, changed or deleted.  The one change that needs no new file, a
// "trivial move" of a single file one level down (a record in the MANIFEST,
// which is open already), cannot come from the level-0 tables of an image:
// a level-0 compaction takes every overlapping level-0 file, and the
// images' level-0 files overlap.  So close never waits and the image's
// tables stay as they are.  A HeldDatabase does this when it is deleted.  An Env serves
// one opening of one database: it refuses new files for good once closing.
//
// While work is held, LevelDB stops writes (12 or more level-0 files, or a
// full memtable) until it ran: with held work, only read.
#ifndef FOREACTOR_APPS_LEVELDB_DRIVER_HELD_COMPACTIONS_ENV_H_
#define FOREACTOR_APPS_LEVELDB_DRIVER_HELD_COMPACTIONS_ENV_H_

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "leveldb/db.h"
#include "leveldb/env.h"

namespace leveldb_driver {

class HeldCompactionsEnv : public leveldb::EnvWrapper {
 public:
  // Wraps `target` (not owned; it must outlive this Env).
  explicit HeldCompactionsEnv(leveldb::Env* target);
  ~HeldCompactionsEnv() override;

  // Keeps `function(arg)` until RunHeldWorkForClose() (thread-safe).
  void Schedule(void (*function)(void* arg), void* arg) override;

  // Refused with an IOError once RunHeldWorkForClose() started.
  leveldb::Status NewWritableFile(const std::string& name, leveldb::WritableFile** file) override;
  leveldb::Status NewAppendableFile(const std::string& name, leveldb::WritableFile** file) override;

  // Background items held now.
  size_t held() const;

  // Refuses new files from now on, then runs the held items, and any item
  // scheduled while they run, in order on the calling thread, until none is
  // left.  Call it before deleting the database that uses this Env.
  void RunHeldWorkForClose();

 private:
  mutable std::mutex mutex_;
  bool closing_ = false;                                 // guarded by mutex_
  std::vector<std::pair<void (*)(void*), void*>> held_;  // guarded by mutex_
};

// Deletes a database after running the work `env` holds for it (null: the
// database does not use a HeldCompactionsEnv).
struct DatabaseCloser {
  HeldCompactionsEnv* env = nullptr;
  void operator()(leveldb::DB* db) const;
};
using HeldDatabase = std::unique_ptr<leveldb::DB, DatabaseCloser>;

}  // namespace leveldb_driver

#endif  // FOREACTOR_APPS_LEVELDB_DRIVER_HELD_COMPACTIONS_ENV_H_
