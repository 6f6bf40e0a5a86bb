// table_catalog.h: what the plugin knows of every open LevelDB database,
// shared by all threads: each table file's layout, the descriptor LevelDB
// reads it through, and the block cache id of its blocks.
//
// Plan() turns one Version::Get into the list of tables it will read, with
// the calls it will make on each.
#ifndef FOREACTOR_APPS_LEVELDB_PLUGIN_TABLE_CATALOG_H_
#define FOREACTOR_APPS_LEVELDB_PLUGIN_TABLE_CATALOG_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "table_layout.h"

namespace leveldb {
class Cache;
class FilterPolicy;
class LookupKey;
class Version;
}  // namespace leveldb

namespace leveldb_plugin {

// A database as DB::Open saw it.
struct Database {
  int id = 0;
  std::string name;  // as given to DB::Open: table paths are name + "/NNNNNN.ldb"
  const leveldb::FilterPolicy* policy = nullptr;
  bool bytewise = false;  // the plugin only orders keys as BytewiseComparator does
};

// One table a Get reads, with the calls it makes there.
struct PlannedTable {
  bool open = false;       // the table cache opens the file first (open_reads follow)
  bool read_data = false;  // a data block is read: the block cache does not hold it
  BlockRead data;
  int fd = -1;             // known, or learned from the open; -1 until then
  std::string path;        // for `open`
  std::shared_ptr<const TableLayout> layout;
};

// The plan of one Version::Get: the graph's callbacks read it.
struct GetPlan {
  std::vector<PlannedTable> tables;
};

class TableCatalog {
 public:
  // DB::Open is about to open `name` (the tables it opens are the new
  // database's already); returns its id for DatabaseOpened(), which DB::Open
  // returning calls: when it succeeded, the database replaces the older ones
  // of its name (a reopened database starts afresh), otherwise it is dropped
  // (a database it could not lock stays as it was).
  int DatabaseOpening(const std::string& name, const leveldb::FilterPolicy* policy, bool bytewise);
  void DatabaseOpened(const std::string& name, int id, bool ok);

  // The program opened `path` read-only as `fd` / closed `fd`: the
  // descriptors of table files under an opened database's name are kept.
  void FileOpened(const char* path, int fd);
  void FileClosed(int fd);

  // Table::Open succeeded on this thread: the table file this thread opened
  // last is open (unless its descriptor was closed since: mmap reads, the
  // descriptor limit) and keeps its blocks in `block_cache` under `cache_id`.
  void TableOpened(leveldb::Cache* block_cache, uint64_t cache_id);

  // A version is being or was installed somewhere: file lists are taken afresh.
  void VersionsChanged() { epoch_.fetch_add(1, std::memory_order_relaxed); }

  // Plans the Get of `key` in `version`.  Reads table files as needed
  // (from the page cache only): call it outside any scope.  False when
  // nothing can be predicted.
  bool Plan(leveldb::Version* version, const leveldb::LookupKey& key, GetPlan* plan);

 private:
  struct TableState {
    std::shared_ptr<const TableLayout> layout;
    bool loaded = false;  // layout read (null: not a table the plugin can read)
    int fd = -1;          // LevelDB's descriptor of the file, -1 when not open
    leveldb::Cache* block_cache = nullptr;
    uint64_t cache_id = 0;
  };
  using TableKey = std::pair<int, uint64_t>;  // database id, file number
  struct VersionFiles;

  const VersionFiles& FilesOf(leveldb::Version* version);
  std::shared_ptr<const Database> DatabaseOf(const VersionFiles& files);

  std::shared_mutex mutex_;
  std::vector<std::shared_ptr<const Database>> databases_;  // oldest first
  int next_database_id_ = 1;
  std::atomic<uint64_t> epoch_{0};
  std::map<TableKey, TableState> tables_;
  std::unordered_map<int, TableKey> open_tables_;  // by descriptor
};

}  // namespace leveldb_plugin

#endif  // FOREACTOR_APPS_LEVELDB_PLUGIN_TABLE_CATALOG_H_
