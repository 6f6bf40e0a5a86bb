#include "table_catalog.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "db/dbformat.h"
#include "db/version_set.h"
#include "leveldb/cache.h"
#include "leveldb/comparator.h"

namespace leveldb_plugin {
namespace {

std::string TablePath(const Database& db, uint64_t number) {
  char file[32];
  std::snprintf(file, sizeof file, "/%06llu.ldb", static_cast<unsigned long long>(number));
  return db.name + file;
}

// True when `cache` holds the block at `offset` of the table whose blocks
// it keeps under `cache_id` (Table::BlockReader's key: id, offset; fixed64).
bool BlockCached(leveldb::Cache* cache, uint64_t cache_id, uint64_t offset) {
  char key[16];
  leveldb::EncodeFixed64(key, cache_id);
  leveldb::EncodeFixed64(key + 8, offset);
  leveldb::Cache::Handle* handle = cache->Lookup(leveldb::Slice(key, sizeof key));
  if (handle != nullptr) cache->Release(handle);
  return handle != nullptr;
}

// The table file this thread opened last, and its descriptor (-1 once
// closed), until the Table::Open that follows the open in
// TableCache::FindTable: only then does another thread's Get find the
// table open (before, it opens the file itself).
struct Opening {
  std::pair<int, uint64_t> key{0, 0};
  int fd = -1;
};
thread_local Opening opening;

}  // namespace

// The files of one Version per level, taken with the public
// Version::GetOverlappingInputs(level, nullptr, nullptr): every file, in the
// Version's order (level 0 oldest first, deeper levels by key).  Valid while
// no version was installed since (the Version cannot have been replaced).
struct TableCatalog::VersionFiles {
  const leveldb::Version* version = nullptr;
  uint64_t epoch = 0;
  std::shared_ptr<const Database> database;
  std::vector<leveldb::FileMetaData*> levels[leveldb::config::kNumLevels];
};

int TableCatalog::DatabaseOpening(const std::string& name, const leveldb::FilterPolicy* policy,
                                  bool bytewise) {
  auto db = std::make_shared<Database>();
  db->name = name;
  db->policy = policy;
  db->bytewise = bytewise;
  std::unique_lock lock(mutex_);
  db->id = next_database_id_++;
  databases_.push_back(db);
  epoch_.fetch_add(1, std::memory_order_relaxed);
  return db->id;
}

void TableCatalog::DatabaseOpened(const std::string& name, int id, bool ok) {
  std::unique_lock lock(mutex_);
  for (auto it = databases_.begin(); it != databases_.end();) {
    if ((*it)->name != name || ((*it)->id == id) == ok) {
      ++it;
      continue;
    }
    const int old_id = (*it)->id;
    tables_.erase(tables_.lower_bound({old_id, 0}), tables_.lower_bound({old_id + 1, 0}));
    it = databases_.erase(it);
  }
  epoch_.fetch_add(1, std::memory_order_relaxed);
}

void TableCatalog::FileOpened(const char* path, int fd) {
  const char* slash = std::strrchr(path, '/');
  if (slash == nullptr || slash[1] < '0' || slash[1] > '9') return;
  char* suffix = nullptr;
  const uint64_t number = std::strtoull(slash + 1, &suffix, 10);
  if (std::strcmp(suffix, ".ldb") != 0 && std::strcmp(suffix, ".sst") != 0) return;
  const std::string_view directory(path, static_cast<size_t>(slash - path));
  std::shared_lock lock(mutex_);
  for (const auto& db : databases_) {  // the newest of that name
    if (db->name == directory) opening = Opening{{db->id, number}, fd};
  }
}

void TableCatalog::FileClosed(int fd) {
  if (opening.fd == fd) opening.fd = -1;
  std::unique_lock lock(mutex_);
  auto entry = open_tables_.find(fd);
  if (entry == open_tables_.end()) return;
  auto table = tables_.find(entry->second);
  if (table != tables_.end() && table->second.fd == fd) table->second.fd = -1;
  open_tables_.erase(entry);
}

void TableCatalog::TableOpened(leveldb::Cache* block_cache, uint64_t cache_id) {
  if (opening.key.first == 0) return;
  const Opening opened = opening;
  opening = Opening{};
  std::unique_lock lock(mutex_);
  TableState& table = tables_[opened.key];
  table.block_cache = block_cache;
  table.cache_id = cache_id;
  if (opened.fd < 0) return;
  table.fd = opened.fd;
  auto [entry, added] = open_tables_.try_emplace(opened.fd, opened.key);
  if (!added) {  // a descriptor whose close was not seen
    auto stale = tables_.find(entry->second);
    if (stale != tables_.end() && stale->second.fd == opened.fd) stale->second.fd = -1;
    entry->second = opened.key;
  }
}

std::shared_ptr<const Database> TableCatalog::DatabaseOf(const VersionFiles& files) {
  std::shared_lock lock(mutex_);
  if (databases_.size() == 1) return databases_.front();
  for (const auto& level : files.levels) {
    if (level.empty()) continue;
    // The database that holds the file under its name, with that size.
    for (auto db = databases_.rbegin(); db != databases_.rend(); ++db) {
      struct stat info;
      if (stat(TablePath(**db, level.front()->number).c_str(), &info) == 0 &&
          static_cast<uint64_t>(info.st_size) == level.front()->file_size) {
        return *db;
      }
    }
    return nullptr;
  }
  return nullptr;
}

const TableCatalog::VersionFiles& TableCatalog::FilesOf(leveldb::Version* version) {
  thread_local VersionFiles files;
  const uint64_t epoch = epoch_.load(std::memory_order_relaxed);
  if (files.version == version && files.epoch == epoch) return files;
  std::vector<uint64_t> numbers;
  for (int level = 0; level < leveldb::config::kNumLevels; ++level) {
    version->GetOverlappingInputs(level, nullptr, nullptr, &files.levels[level]);
    for (const leveldb::FileMetaData* file : files.levels[level]) numbers.push_back(file->number);
  }
  files.version = version;
  files.epoch = epoch;
  files.database = DatabaseOf(files);
  if (files.database == nullptr) return files;
  // Forget the closed tables compactions removed.
  std::sort(numbers.begin(), numbers.end());
  const int id = files.database->id;
  std::unique_lock lock(mutex_);
  for (auto it = tables_.lower_bound({id, 0}); it != tables_.end() && it->first.first == id;) {
    const bool gone = it->second.fd < 0 && !std::binary_search(numbers.begin(), numbers.end(), it->first.second);
    it = gone ? tables_.erase(it) : std::next(it);
  }
  return files;
}

bool TableCatalog::Plan(leveldb::Version* version, const leveldb::LookupKey& key, GetPlan* plan) {
  plan->tables.clear();
  const VersionFiles& files = FilesOf(version);
  if (files.database == nullptr || !files.database->bytewise) return false;
  const Database& db = *files.database;
  // The files Version::ForEachOverlapping visits: level-0 files whose
  // user-key range holds the key, newest first; then per deeper level the
  // first file whose largest key is >= the lookup key, unless it starts
  // after the user key.
  static const leveldb::InternalKeyComparator comparator(leveldb::BytewiseComparator());
  const leveldb::Slice user_key = key.user_key();
  thread_local std::vector<leveldb::FileMetaData*> candidates;
  candidates.clear();
  for (leveldb::FileMetaData* file : files.levels[0]) {
    if (user_key.compare(file->smallest.user_key()) >= 0 && user_key.compare(file->largest.user_key()) <= 0) {
      candidates.push_back(file);
    }
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const leveldb::FileMetaData* a, const leveldb::FileMetaData* b) { return a->number > b->number; });
  for (int level = 1; level < leveldb::config::kNumLevels; ++level) {
    const auto& level_files = files.levels[level];
    const size_t index = static_cast<size_t>(leveldb::FindFile(comparator, level_files, key.internal_key()));
    if (index < level_files.size() && user_key.compare(level_files[index]->smallest.user_key()) >= 0) {
      candidates.push_back(level_files[index]);
    }
  }
  // Tables new to the catalog, or whose blocks were not in the page cache
  // so far: read their layout now.
  for (const leveldb::FileMetaData* file : candidates) {
    {
      std::shared_lock lock(mutex_);
      auto table = tables_.find({db.id, file->number});
      if (table != tables_.end() && table->second.loaded) continue;
    }
    bool not_in_memory = false;
    std::shared_ptr<const TableLayout> layout =
        TableLayout::Load(TablePath(db, file->number), file->file_size, db.policy, &not_in_memory);
    if (not_in_memory) continue;  // once LevelDB has read the blocks
    std::unique_lock lock(mutex_);
    TableState& table = tables_[{db.id, file->number}];
    table.layout = std::move(layout);
    table.loaded = true;
  }
  std::shared_lock lock(mutex_);
  for (const leveldb::FileMetaData* file : candidates) {
    auto state = tables_.find({db.id, file->number});
    if (state == tables_.end() || state->second.layout == nullptr) continue;  // unpredictable
    PlannedTable table;
    table.fd = state->second.fd;
    table.open = table.fd < 0;
    table.read_data = state->second.layout->DataBlockFor(key, &table.data);
    if (table.read_data && !table.open && state->second.block_cache != nullptr) {
      table.read_data = !BlockCached(state->second.block_cache, state->second.cache_id, table.data.offset);
    }
    if (!table.open && !table.read_data) continue;  // no read at all
    if (table.open) table.path = TablePath(db, file->number);
    table.layout = state->second.layout;
    plan->tables.push_back(std::move(table));
  }
  return !plan->tables.empty();
}

}  // namespace leveldb_plugin
