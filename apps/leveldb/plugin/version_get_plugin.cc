// version_get_plugin.cc: the foreaction graph of LevelDB 1.23's
// leveldb::Version::Get, attached at link time (apps/leveldb/plugin/README.md).
//
// Version::Get looks a key up in the Version's table files, newest first,
// and returns at the first file that holds the key.  Per table, the table
// cache opens the file if it is not open yet (open, then preads of the
// footer, the index block and, with a filter policy, the metaindex and
// filter blocks), then one pread of the data block the index names, unless
// the Bloom filter rules the key out or the block cache has the block:
//
//   start -> next_table --0--> open_table -w-> read_table_meta -w-> more_table_meta
//              |  ^  \-1w-> read_data_block <--------1w----------/  |  |  (0: loop)
//              |  |                 |-w-> table_done <-------2-------/  |
//              2  \------------------------/                             |
//              v                                    read_table_meta <----/
//             end
//
// (-w-: weak edge, the Get may return there.)  The plan of each Get (which
// tables, which blocks, which descriptors) is computed before the scope by
// TableCatalog from the Version's public members, the table files
// themselves, and the opens and closes of table files it sees.
#include <fcntl.h>

#include <cstdarg>
#include <cstdint>
#include <string>

#include "db/version_set.h"
#include "foreactor/foreactor.hpp"
#include "leveldb/cache.h"
#include "leveldb/comparator.h"
#include "leveldb/db.h"
#include "leveldb/table.h"
#include "table_catalog.h"

// The functions wrapped with -Wl,--wrap (plugin.cmake names them) and the
// one called, by their mangled names.  Member functions take `this` first.
#define VERSION_GET \
  "_ZN7leveldb7Version3GetERKNS_11ReadOptionsERKNS_9LookupKeyEPNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPNS0_8GetStatsE"
#define DB_OPEN \
  "_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPPS0_"
#define LOG_AND_APPLY "_ZN7leveldb10VersionSet11LogAndApplyEPNS_11VersionEditEPNS_4port5MutexE"
#define TABLE_OPEN "_ZN7leveldb5Table4OpenERKNS_7OptionsEPNS_16RandomAccessFileEmPPS0_"

leveldb::Status RealVersionGet(leveldb::Version* version, const leveldb::ReadOptions& options,
                               const leveldb::LookupKey& key, std::string* value, void* stats)
    asm("__real_" VERSION_GET);
leveldb::Status RealDbOpen(const leveldb::Options& options, const std::string& name,
                           leveldb::DB** db) asm("__real_" DB_OPEN);
leveldb::Status RealLogAndApply(leveldb::VersionSet* versions, leveldb::VersionEdit* edit,
                                leveldb::port::Mutex* mutex) asm("__real_" LOG_AND_APPLY);
leveldb::Status RealTableOpen(const leveldb::Options& options, leveldb::RandomAccessFile* file,
                              uint64_t file_size, leveldb::Table** table) asm("__real_" TABLE_OPEN);
extern "C" int __real_open(const char* path, int flags, ...);
extern "C" int __real_close(int fd);

namespace leveldb_plugin {
namespace {

TableCatalog catalog;

const foreactor::Graph<GetPlan> graph = [] {
  using foreactor::Visit;
  foreactor::GraphBuilder<GetPlan> builder("leveldb_get");
  auto table = [](GetPlan& plan, const Visit& visit) -> PlannedTable& {
    return plan.tables[visit.iteration(0)];
  };
  auto next_table = builder.Branch("next_table", [](GetPlan& plan, const Visit& visit) {
    if (visit.iteration(0) >= plan.tables.size()) return 2;
    return plan.tables[visit.iteration(0)].open ? 0 : 1;
  });
  auto open_table = builder.Syscall(
      "open_table", FOREACTOR_CALL_OPEN,
      [table](GetPlan& plan, const Visit& visit, foreactor_call& call) {
        call = foreactor::Open(table(plan, visit).path.c_str(), O_RDONLY | O_CLOEXEC);
        return FOREACTOR_READY;
      },
      [table](GetPlan& plan, const Visit& visit, int64_t result) {
        if (result >= 0) table(plan, visit).fd = static_cast<int>(result);
      });
  auto read_table_meta = builder.Syscall(
      "read_table_meta", FOREACTOR_CALL_PREAD,
      [table](GetPlan& plan, const Visit& visit, foreactor_call& call) {
        const PlannedTable& t = table(plan, visit);
        if (t.fd < 0) return FOREACTOR_NOT_YET;  // until the open returned
        const BlockRead& read = t.layout->open_reads()[visit.iteration(1)];
        call = foreactor::Pread(t.fd, read.length, static_cast<int64_t>(read.offset));
        return FOREACTOR_READY;
      });
  auto more_table_meta = builder.Branch("more_table_meta", [table](GetPlan& plan, const Visit& visit) {
    const PlannedTable& t = table(plan, visit);
    if (visit.iteration(1) + 1 < t.layout->open_reads().size()) return 0;
    return t.read_data ? 1 : 2;
  });
  auto read_data_block = builder.Syscall(
      "read_data_block", FOREACTOR_CALL_PREAD,
      [table](GetPlan& plan, const Visit& visit, foreactor_call& call) {
        const PlannedTable& t = table(plan, visit);
        if (t.fd < 0) return FOREACTOR_NOT_YET;
        call = foreactor::Pread(t.fd, t.data.length, static_cast<int64_t>(t.data.offset));
        return FOREACTOR_READY;
      });
  auto table_done = builder.Branch("table_done", [](GetPlan&, const Visit&) { return 0; });
  builder.start().Then(next_table);
  // The edges into read_data_block are weak too: when the block cache has
  // the block, the Get may return without reading it.
  next_table.Children({open_table, {read_data_block, foreactor::kWeak}, builder.end()});
  open_table.Then(read_table_meta, foreactor::kWeak).Then(more_table_meta, foreactor::kWeak);
  more_table_meta.Children({read_table_meta, {read_data_block, foreactor::kWeak}, table_done});
  read_data_block.Then(table_done, foreactor::kWeak);
  table_done.Children({next_table});
  return builder.Build();
}();

thread_local GetPlan plan;

}  // namespace
}  // namespace leveldb_plugin

using leveldb_plugin::catalog;

leveldb::Status WrapVersionGet(leveldb::Version* version, const leveldb::ReadOptions& options,
                               const leveldb::LookupKey& key, std::string* value, void* stats)
    asm("__wrap_" VERSION_GET);
leveldb::Status WrapVersionGet(leveldb::Version* version, const leveldb::ReadOptions& options,
                               const leveldb::LookupKey& key, std::string* value, void* stats) {
  // The runtime's scope gate times Gets with and without a plan and scope
  // (a fixed depth or check mode plans every Get; foreactor off, none).
  if (!leveldb_plugin::graph.ScopeGate()) return RealVersionGet(version, options, key, value, stats);
  // No exception may reach LevelDB (built without them): out of memory in
  // the plugin means no prediction.
  leveldb_plugin::GetPlan& plan = leveldb_plugin::plan;
  bool planned = false;
  try {
    planned = catalog.Plan(version, key, &plan);
  } catch (...) {
  }
  if (!planned) return RealVersionGet(version, options, key, value, stats);
  foreactor::Scope scope(leveldb_plugin::graph, plan);
  return RealVersionGet(version, options, key, value, stats);
}

leveldb::Status WrapDbOpen(const leveldb::Options& options, const std::string& name, leveldb::DB** db)
    asm("__wrap_" DB_OPEN);
leveldb::Status WrapDbOpen(const leveldb::Options& options, const std::string& name, leveldb::DB** db) {
  int id = 0;
  try {  // before: the tables DB::Open opens are the database's
    id = catalog.DatabaseOpening(name, options.filter_policy, options.comparator == leveldb::BytewiseComparator());
  } catch (...) {  // out of memory: the database goes unpredicted
  }
  leveldb::Status status = RealDbOpen(options, name, db);
  if (id != 0) catalog.DatabaseOpened(name, id, status.ok());
  return status;
}

leveldb::Status WrapLogAndApply(leveldb::VersionSet* versions, leveldb::VersionEdit* edit,
                                leveldb::port::Mutex* mutex) asm("__wrap_" LOG_AND_APPLY);
leveldb::Status WrapLogAndApply(leveldb::VersionSet* versions, leveldb::VersionEdit* edit,
                                leveldb::port::Mutex* mutex) {
  catalog.VersionsChanged();
  leveldb::Status status = RealLogAndApply(versions, edit, mutex);
  catalog.VersionsChanged();
  return status;
}

leveldb::Status WrapTableOpen(const leveldb::Options& options, leveldb::RandomAccessFile* file,
                              uint64_t file_size, leveldb::Table** table) asm("__wrap_" TABLE_OPEN);
leveldb::Status WrapTableOpen(const leveldb::Options& options, leveldb::RandomAccessFile* file,
                              uint64_t file_size, leveldb::Table** table) {
  leveldb::Status status = RealTableOpen(options, file, file_size, table);
  if (status.ok() && foreactor_enabled()) {
    // Table::Open took the cache's newest id for the table's blocks; the
    // id after it says which (ids only need to be unique: taking one more
    // changes nothing LevelDB does).
    leveldb::Cache* cache = options.block_cache;
    try {
      catalog.TableOpened(cache, cache != nullptr ? cache->NewId() - 1 : 0);
    } catch (...) {  // out of memory: the table is predicted to be opened
    }
  }
  return status;
}

// LevelDB's own open(2) and close(2) calls (util/env_posix.cc): the
// descriptors of its table files.
extern "C" int __wrap_open(const char* path, int flags, ...) {
  mode_t mode = 0;
  if ((flags & (O_CREAT | O_TMPFILE)) != 0) {
    va_list arguments;
    va_start(arguments, flags);
    mode = va_arg(arguments, mode_t);
    va_end(arguments);
  }
  const int fd = __real_open(path, flags, mode);
  if (fd >= 0 && (flags & O_ACCMODE) == O_RDONLY && foreactor_enabled()) {
    try {
      catalog.FileOpened(path, fd);
    } catch (...) {  // out of memory: the table is predicted to be opened
    }
  }
  return fd;
}

extern "C" int __wrap_close(int fd) {
  if (foreactor_enabled()) catalog.FileClosed(fd);  // first: the number may be reused at once
  return __real_close(fd);
}
