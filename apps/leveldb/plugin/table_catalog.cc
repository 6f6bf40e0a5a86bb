#include "table_catalog.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <set>

#include "leveldb/cache.h"
#include "leveldb/slice.h"

namespace leveldb_plugin {
namespace {

// Tables new to the catalog are looked up in /proc/self/fd at once; tables
// whose descriptor turned out wrong at most once per this interval, and are
// predicted to be opened in between.
constexpr std::chrono::milliseconds kScanInterval{50};

bool SameFile(int fd, const std::string& path) {
  struct stat by_fd, by_path;
  return fstat(fd, &by_fd) == 0 && stat(path.c_str(), &by_path) == 0 &&
         by_fd.st_dev == by_path.st_dev && by_fd.st_ino == by_path.st_ino;
}

// The table files of directory `real_dir` open in this process: file
// number -> descriptor, from the links /proc/self/fd/N.  Descriptors in
// `known` (matched to a table already) are skipped; the walk goes up from 0
// and ends when every file of `wanted` is found or after 64 descriptors in
// a row that are not open (new descriptors take the lowest free numbers).
std::map<uint64_t, int> OpenTableFiles(const std::string& real_dir, const std::set<int>& known,
                                       const std::set<uint64_t>& wanted) {
  std::map<uint64_t, int> files;
  const std::string prefix = real_dir + "/";
  size_t found_wanted = 0;
  for (int fd = 0, misses = 0; misses < 64 && found_wanted < wanted.size(); ++fd) {
    if (known.count(fd) != 0) continue;
    char link[32], target[PATH_MAX];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t length = readlink(link, target, sizeof target);
    misses = length <= 0 ? misses + 1 : 0;
    if (length <= 0) continue;
    const std::string_view path(target, static_cast<size_t>(length));
    unsigned long long number;
    char suffix[8];
    if (path.substr(0, prefix.size()) == prefix && path.size() < prefix.size() + 30 &&
        std::sscanf(std::string(path.substr(prefix.size())).c_str(), "%llu.%7s", &number, suffix) == 2 &&
        std::string_view(suffix) == "ldb") {
      files[number] = fd;
      found_wanted += wanted.count(number);
    }
  }
  return files;
}

// True when `cache` holds the block at `offset` of the table whose blocks
// it keeps under `cache_id` (Table::BlockReader's key: id, offset; fixed64).
bool BlockCached(leveldb::Cache* cache, uint64_t cache_id, uint64_t offset) {
  char key[16];
  for (int i = 0; i < 8; ++i) {
    key[i] = static_cast<char>(cache_id >> (8 * i));
    key[8 + i] = static_cast<char>(offset >> (8 * i));
  }
  leveldb::Cache::Handle* handle = cache->Lookup(leveldb::Slice(key, sizeof key));
  if (handle != nullptr) cache->Release(handle);
  return handle != nullptr;
}

}  // namespace

std::string TablePath(const Database& db, uint64_t number) {
  char file[32];
  std::snprintf(file, sizeof file, "/%06llu.ldb", static_cast<unsigned long long>(number));
  return db.name + file;
}

void TableCatalog::DatabaseOpened(const std::string& name, const leveldb::FilterPolicy* policy,
                                  bool bytewise, leveldb::Cache* block_cache) {
  auto db = std::make_shared<Database>();
  db->name = name;
  char real[PATH_MAX];
  db->real_name = realpath(name.c_str(), real) != nullptr ? real : name;
  db->policy = policy;
  db->bytewise = bytewise;
  db->block_cache = block_cache;
  std::unique_lock lock(mutex_);
  db->id = next_database_id_++;
  // A reopened database starts afresh: its options (filter policy) may differ.
  for (auto it = databases_.begin(); it != databases_.end();) {
    if ((*it)->name != name) {
      ++it;
      continue;
    }
    const int old_id = (*it)->id;
    tables_.erase(tables_.lower_bound({old_id, 0}), tables_.lower_bound({old_id + 1, 0}));
    it = databases_.erase(it);
  }
  databases_.push_back(std::move(db));
  epoch_.fetch_add(1, std::memory_order_relaxed);
}

std::shared_ptr<const Database> TableCatalog::DatabaseOf(const VersionListing& files) {
  const TableFile* file = files.AnyFile();
  std::shared_lock lock(mutex_);
  for (auto db = databases_.rbegin(); db != databases_.rend(); ++db) {
    struct stat info;
    if (file == nullptr) return *db;
    if (stat(TablePath(**db, file->number).c_str(), &info) == 0 &&
        static_cast<uint64_t>(info.st_size) == file->size) {
      return *db;
    }
  }
  return nullptr;
}

std::shared_ptr<const TableCatalog::Listing> TableCatalog::ListingFor(const void* version,
                                                                      std::string text) {
  const uint64_t epoch = epoch_.load(std::memory_order_relaxed);
  auto listing = std::make_shared<Listing>();
  if (!listing->files.Parse(text)) return nullptr;
  listing->database = DatabaseOf(listing->files);
  std::unique_lock lock(mutex_);
  if (listings_epoch_ != epoch) {
    listings_.clear();
    listings_epoch_ = epoch;
  }
  listings_[version] = listing;
  // Forget the tables compactions removed (their descriptors get reused).
  if (listing->database != nullptr) {
    const int id = listing->database->id;
    for (auto it = tables_.lower_bound({id, 0}); it != tables_.end() && it->first.first == id;) {
      it = listing->files.Contains(it->first.second) ? std::next(it) : tables_.erase(it);
    }
  }
  return listing;
}

void TableCatalog::LoadMissing(const Database& db, const std::vector<const TableFile*>& files) {
  bool unknown_fd = false, new_table = false;
  for (const TableFile* file : files) {
    {
      std::shared_lock lock(mutex_);
      auto state = tables_.find({db.id, file->number});
      if (state != tables_.end()) {
        unknown_fd = unknown_fd || state->second.state == FdState::kUnknown;
        continue;
      }
    }
    bool not_in_memory = false;
    std::shared_ptr<const TableLayout> layout =
        TableLayout::Load(TablePath(db, file->number), file->size, db.policy, &not_in_memory);
    if (not_in_memory) continue;  // once LevelDB has read the blocks
    std::unique_lock lock(mutex_);
    tables_[{db.id, file->number}].layout = std::move(layout);
    new_table = true;
  }
  if (unknown_fd || new_table) FindDescriptors(db, new_table);
}

void TableCatalog::FindDescriptors(const Database& db, bool new_table) {
  const auto now = std::chrono::steady_clock::now();
  std::set<int> known;
  std::set<uint64_t> wanted;
  {
    std::unique_lock lock(mutex_);
    if (!new_table && now - last_scan_ < kScanInterval) return;
    last_scan_ = now;
    for (const auto& [key, state] : tables_) {
      if (state.state == FdState::kOpen) known.insert(state.fd);
      if (state.state == FdState::kUnknown && key.first == db.id) wanted.insert(key.second);
    }
  }
  const std::map<uint64_t, int> open_files = OpenTableFiles(db.real_name, known, wanted);
  std::unique_lock lock(mutex_);
  for (auto it = tables_.lower_bound({db.id, 0}); it != tables_.end() && it->first.first == db.id; ++it) {
    if (it->second.state == FdState::kOpen) continue;
    auto open = open_files.find(it->first.second);
    it->second.state = open == open_files.end() ? FdState::kClosed : FdState::kOpen;
    it->second.fd = open == open_files.end() ? -1 : open->second;
  }
}

void TableCatalog::TableOpened(const GetPlan* plan, leveldb::Cache* block_cache,
                               uint64_t file_size, uint64_t cache_id) {
  std::unique_lock lock(mutex_);
  cache_ids_[file_size] = {block_cache, cache_id};
  if (plan == nullptr || plan->database == nullptr) return;
  leveldb::Cache* none = nullptr;
  plan->database->block_cache.compare_exchange_strong(none, block_cache);
  for (const TableFile* file : plan->candidates) {
    if (file->size != file_size) continue;
    auto state = tables_.find({plan->database->id, file->number});
    if (state == tables_.end()) continue;
    state->second.has_cache_id = true;
    state->second.cache_id = cache_id;
  }
}

void TableCatalog::SetOpen(const TableKey& key, int fd) {
  for (auto& [other, state] : tables_) {
    if (state.fd == fd) {  // that descriptor now names this file
      state.state = FdState::kUnknown;
      state.fd = -1;
    }
  }
  TableState& state = tables_[key];
  state.state = FdState::kOpen;
  state.fd = fd;
}

bool TableCatalog::Plan(const void* version, std::string_view user_key, uint64_t sequence,
                        DescribeVersion describe, GetPlan* plan) {
  plan->tables.clear();
  plan->candidates.clear();
  plan->database = nullptr;
  plan->listing = nullptr;
  std::shared_ptr<const Listing> listing;
  {
    std::shared_lock lock(mutex_);
    auto found = listings_.find(version);
    if (found != listings_.end() && listings_epoch_ == epoch_.load(std::memory_order_relaxed)) {
      listing = found->second;
    }
  }
  if (listing == nullptr) listing = ListingFor(version, describe(version));
  if (listing == nullptr || listing->database == nullptr || !listing->database->bytewise) {
    return false;
  }
  const Database& db = *listing->database;
  const InternalKey key{user_key, (sequence << 8) | 1};  // kValueTypeForSeek
  listing->files.Candidates(key, &plan->candidates);
  plan->database = listing->database;
  plan->listing = listing;
  LoadMissing(db, plan->candidates);
  std::shared_lock lock(mutex_);
  for (const TableFile* file : plan->candidates) {
    auto state = tables_.find({db.id, file->number});
    if (state == tables_.end() || state->second.layout == nullptr) continue;  // unpredictable
    PlannedTable table;
    table.number = file->number;
    table.open = state->second.state != FdState::kOpen;
    table.fd = table.open ? -1 : state->second.fd;
    table.read_data = state->second.layout->DataBlockFor(key, &table.data);
    // The block cache: never one of a database that may be gone.
    leveldb::Cache* cache = table.open ? nullptr : db.block_cache.load();
    auto by_size = cache_ids_.find(file->size);
    if (table.read_data && cache != nullptr &&
        (state->second.has_cache_id || (by_size != cache_ids_.end() && by_size->second.first == cache))) {
      const uint64_t id = state->second.has_cache_id ? state->second.cache_id : by_size->second.second;
      table.read_data = !BlockCached(cache, id, table.data.offset);
    }
    if (!table.open && !table.read_data) continue;  // no read at all
    if (table.open) table.path = TablePath(db, file->number);
    table.layout = state->second.layout;
    plan->tables.push_back(std::move(table));
  }
  return !plan->tables.empty();
}

void TableCatalog::Learn(const GetPlan& plan, bool not_found) {
  const Database& db = *plan.database;
  LoadMissing(db, plan.candidates);  // the tables the Get opened are cached now
  for (const PlannedTable& table : plan.tables) {
    // A descriptor learned from an open the program made is trusted once
    // it is seen to name the file (the open may have been another file's).
    if (table.open && table.reached && table.fd >= 0 && SameFile(table.fd, table.path)) {
      std::unique_lock lock(mutex_);
      SetOpen({db.id, table.number}, table.fd);
    }
  }
  if (!not_found) return;
  // The program went through every table; the first one where it did not
  // make the predicted call was either served by the block cache, or is
  // not open as the catalog thought.
  for (const PlannedTable& table : plan.tables) {
    if (table.reached) continue;
    if (table.open || !SameFile(table.fd, TablePath(db, table.number))) {
      std::unique_lock lock(mutex_);
      auto state = tables_.find({db.id, table.number});
      if (state != tables_.end()) state->second = TableState{state->second.layout};
    }
    break;
  }
}

}  // namespace leveldb_plugin
