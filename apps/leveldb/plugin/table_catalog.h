// table_catalog.h: what the plugin knows of every open LevelDB database,
// shared by all threads: each Version's table files, each table file's
// layout, and the descriptor LevelDB reads the file through.
//
// Plan() turns one Version::Get into the list of tables it will read, with
// the calls it will make on each; Learn() takes in what the program did.
#ifndef FOREACTOR_APPS_LEVELDB_PLUGIN_TABLE_CATALOG_H_
#define FOREACTOR_APPS_LEVELDB_PLUGIN_TABLE_CATALOG_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "table_layout.h"
#include "version_listing.h"

namespace leveldb {
class Cache;
class FilterPolicy;
}

namespace leveldb_plugin {

// A database as DB::Open saw it.
struct Database {
  int id = 0;
  std::string name;       // as given to DB::Open: table paths are name + "/NNNNNN.ldb"
  std::string real_name;  // realpath(name), to recognise its files in /proc/self/fd
  const leveldb::FilterPolicy* policy = nullptr;
  bool bytewise = false;  // the plugin only orders keys as BytewiseComparator does
  // The block cache (from its table cache's options, or the first
  // Table::Open inside one of its Gets); it lives as long as the database.
  mutable std::atomic<leveldb::Cache*> block_cache{nullptr};
};

// One table a Get reads, with the calls it makes there.
struct PlannedTable {
  uint64_t number = 0;
  bool open = false;       // the table cache opens the file first (open_reads follow)
  bool read_data = false;  // a data block is read: the block cache does not hold it
  BlockRead data;
  int fd = -1;             // known, or learned from the open; -1 until then
  bool reached = false;    // the program made this table's first predicted call
  std::string path;        // for `open`
  std::shared_ptr<const TableLayout> layout;
};

// The plan of one Version::Get: the graph's callbacks read it.
struct GetPlan {
  std::vector<PlannedTable> tables;
  std::shared_ptr<const Database> database;
  std::vector<const TableFile*> candidates;  // files of `listing` the Get may visit
  std::shared_ptr<const void> listing;
};

class TableCatalog {
 public:
  // Records a database opened (or reopened) under `name`; `block_cache`:
  // the one its tables use (null: learned from its Gets' table opens).
  void DatabaseOpened(const std::string& name, const leveldb::FilterPolicy* policy, bool bytewise,
                      leveldb::Cache* block_cache);

  // Table::Open opened a table file of `file_size` bytes whose blocks go
  // to `block_cache` under `cache_id`, inside the Get `plan` (or null: not
  // in a Get).  Plan() then predicts the data blocks the cache holds
  // (LevelDB reads none of them).  A table opened inside a Get is the plan's
  // candidate of that size; one opened elsewhere is known by its size only
  // (two tables of one size share an entry, the later open's).  Only the
  // cache of the database being searched is ever used.
  void TableOpened(const GetPlan* plan, leveldb::Cache* block_cache, uint64_t file_size,
                   uint64_t cache_id);

  // A version was installed somewhere: listings are read afresh.
  void VersionsChanged() { epoch_.fetch_add(1, std::memory_order_relaxed); }

  // Plans the Get of `user_key` at snapshot `sequence` in `version`, whose
  // listing (Version::DebugString()) `describe` returns when the catalog
  // has none that is current.  Reads table files and /proc/self/fd as
  // needed: call it outside any scope.  False when nothing can be predicted;
  // even then, when plan->database is set, call Learn() after the Get.
  using DescribeVersion = std::string (*)(const void* version);
  bool Plan(const void* version, std::string_view user_key, uint64_t sequence,
            DescribeVersion describe, GetPlan* plan);

  // Takes in what the program did in the Get `plan` described, and loads
  // the layouts of tables the Get brought into the page cache; `not_found`:
  // it returned NotFound (so it went through every table of the plan,
  // unless it met a deletion).
  void Learn(const GetPlan& plan, bool not_found);

 private:
  struct Listing {
    VersionListing files;
    std::shared_ptr<const Database> database;
  };
  enum class FdState { kUnknown, kOpen, kClosed };
  struct TableState {
    std::shared_ptr<const TableLayout> layout;
    FdState state = FdState::kUnknown;
    int fd = -1;
    bool has_cache_id = false;
    uint64_t cache_id = 0;
  };
  using TableKey = std::pair<int, uint64_t>;  // database id, file number

  std::shared_ptr<const Listing> ListingFor(const void* version, std::string text);
  std::shared_ptr<const Database> DatabaseOf(const VersionListing& files);
  void LoadMissing(const Database& db, const std::vector<const TableFile*>& files);
  // Looks up the descriptors of `db`'s tables whose descriptor is unknown
  // (rate-limited unless `new_table`: tables the catalog just met).
  void FindDescriptors(const Database& db, bool new_table);
  void SetOpen(const TableKey& key, int fd);

  std::shared_mutex mutex_;
  std::vector<std::shared_ptr<const Database>> databases_;  // oldest first
  int next_database_id_ = 1;
  std::atomic<uint64_t> epoch_{0};
  uint64_t listings_epoch_ = 0;
  std::unordered_map<const void*, std::shared_ptr<const Listing>> listings_;
  std::map<TableKey, TableState> tables_;
  std::unordered_map<uint64_t, std::pair<leveldb::Cache*, uint64_t>> cache_ids_;  // by file size
  std::chrono::steady_clock::time_point last_scan_{};
};

std::string TablePath(const Database& db, uint64_t number);

}  // namespace leveldb_plugin

#endif  // FOREACTOR_APPS_LEVELDB_PLUGIN_TABLE_CATALOG_H_
