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
//   start -> next_table --0--> open_table -w-> read_block -w-> more_reads --0w--> read_block
//              |  ^  \--1w---------------------^                   |           (inner loop)
//              2  \------------------------------------1------------/           (outer loop)
//              v
//             end
//
// (-w-: weak edge, the Get may return there.)  read_block reads, per table,
// the footer, index [, metaindex, filter] when the table is opened, then
// the data block.  The plan of each Get (which
// tables, which blocks, which descriptors) is made before the scope from
// the Version's public members, the table files themselves (read with
// LevelDB's own format code: table/format.h, table/block.h,
// table/filter_block.h), and what the wrapped functions below see: the
// databases DB::Open opens, the descriptors of table files, each table's
// block cache id.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstring>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <snappy.h>

#include "db/dbformat.h"
#include "db/filename.h"
#include "db/version_set.h"
#include "foreactor/foreactor.hpp"
#include "leveldb/cache.h"
#include "leveldb/comparator.h"
#include "leveldb/db.h"
#include "leveldb/filter_policy.h"
#include "leveldb/iterator.h"
#include "leveldb/table.h"
#include "table/block.h"
#include "table/filter_block.h"
#include "table/format.h"

// The functions wrapped with -Wl,--wrap (plugin.cmake names them) and the
// one called, by their mangled names.  Member functions take `this` first.
#define VERSION_GET                                                                        \
  "_ZN7leveldb7Version3GetERKNS_11ReadOptionsERKNS_9LookupKeyEPNSt7__cxx1112basic_string" \
  "IcSt11char_traitsIcESaIcEEEPNS0_8GetStatsE"
#define DB_OPEN \
  "_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPPS0_"
#define LOG_AND_APPLY "_ZN7leveldb10VersionSet11LogAndApplyEPNS_11VersionEditEPNS_4port5MutexE"
#define TABLE_OPEN "_ZN7leveldb5Table4OpenERKNS_7OptionsEPNS_16RandomAccessFileEmPPS0_"

using VersionGet = leveldb::Status(leveldb::Version* version, const leveldb::ReadOptions& options,
                                    const leveldb::LookupKey& key, std::string* value, void* stats);
using DbOpen = leveldb::Status(const leveldb::Options& options, const std::string& name, leveldb::DB** db);
using LogAndApply = leveldb::Status(leveldb::VersionSet* versions, leveldb::VersionEdit* edit,
                                    leveldb::port::Mutex* mutex);
using TableOpen = leveldb::Status(const leveldb::Options& options, leveldb::RandomAccessFile* file,
                                  uint64_t file_size, leveldb::Table** table);
VersionGet RealVersionGet asm("__real_" VERSION_GET);
VersionGet WrapVersionGet asm("__wrap_" VERSION_GET);
DbOpen RealDbOpen asm("__real_" DB_OPEN);
DbOpen WrapDbOpen asm("__wrap_" DB_OPEN);
LogAndApply RealLogAndApply asm("__real_" LOG_AND_APPLY);
LogAndApply WrapLogAndApply asm("__wrap_" LOG_AND_APPLY);
TableOpen RealTableOpen asm("__real_" TABLE_OPEN);
TableOpen WrapTableOpen asm("__wrap_" TABLE_OPEN);
extern "C" int __real_open(const char* path, int flags, ...);
extern "C" int __real_close(int fd);

namespace leveldb_plugin {
namespace {

// The comparator of every lookup the plugin makes (it plans only databases
// that order keys as BytewiseComparator does).
const leveldb::InternalKeyComparator comparator(leveldb::BytewiseComparator());

// One pread LevelDB makes: `length` bytes at `offset`.
struct BlockRead {
  uint64_t offset = 0;
  uint64_t length = 0;
};

// The pread ReadBlock() in table/format.cc makes: contents plus trailer.
BlockRead ReadOf(const leveldb::BlockHandle& handle) {
  return BlockRead{handle.offset(), handle.size() + leveldb::kBlockTrailerSize};
}

// What the plugin knows of one table file, read from the file itself.
struct TableLayout {
  std::string path;  // the table file, as the table cache opens it
  // The reads Table::Open makes, in order: footer, index block, and, with a
  // filter policy, the metaindex block and the filter block (if present).
  std::vector<BlockRead> open_reads;
  std::string index_contents, filter_contents;  // uncompressed
  std::unique_ptr<leveldb::Block> index;
  std::unique_ptr<leveldb::FilterBlockReader> filter;  // null: no filter
};

// Reads `read` from the page cache only (RWF_NOWAIT): the plugin never
// makes the device work.  Sets *not_in_memory when the bytes are not (all)
// cached.
bool ReadCached(int fd, const BlockRead& read, std::string* out, bool* not_in_memory) {
  out->resize(read.length);
  struct iovec buffer = {out->data(), read.length};
  const ssize_t n = preadv2(fd, &buffer, 1, static_cast<off_t>(read.offset), RWF_NOWAIT);
  if (n == static_cast<ssize_t>(read.length)) return true;
  *not_in_memory = n > 0 || (n < 0 && errno == EAGAIN);  // n == 0: the file is shorter
  return false;
}

// ReadBlock() of table/format.cc (one pread of contents + trailer) into
// `contents`, uncompressed.
bool ReadBlock(int fd, const leveldb::BlockHandle& handle, std::string* contents, bool* not_in_memory) {
  std::string raw;
  if (!ReadCached(fd, ReadOf(handle), &raw, not_in_memory)) return false;
  const char type = raw[handle.size()];
  raw.resize(handle.size());
  if (type == leveldb::kNoCompression) {
    *contents = std::move(raw);
    return true;
  }
  return type == leveldb::kSnappyCompression && snappy::Uncompress(raw.data(), raw.size(), contents);
}

// Reads the footer, index block and (when `policy` is not null) the
// metaindex and filter blocks of `layout->path`, whose size is `file_size`,
// through `fd`, a descriptor of the plugin's own.  `policy` must outlive the
// layout.  False when a block is not in the page cache (*not_in_memory: try
// again once LevelDB read it), or the file is not a table LevelDB 1.23 wrote.
bool ReadLayout(int fd, uint64_t file_size, const leveldb::FilterPolicy* policy, TableLayout* layout,
                bool* not_in_memory) {
  const BlockRead footer_read{file_size - leveldb::Footer::kEncodedLength, leveldb::Footer::kEncodedLength};
  std::string bytes;
  leveldb::Footer footer;
  if (file_size < leveldb::Footer::kEncodedLength || !ReadCached(fd, footer_read, &bytes, not_in_memory)) {
    return false;
  }
  leveldb::Slice input(bytes);
  if (!footer.DecodeFrom(&input).ok() ||
      !ReadBlock(fd, footer.index_handle(), &layout->index_contents, not_in_memory)) {
    return false;
  }
  layout->open_reads = {footer_read, ReadOf(footer.index_handle())};
  // BlockContents: data, cachable, heap_allocated (the block does not own the data).
  layout->index =
      std::make_unique<leveldb::Block>(leveldb::BlockContents{layout->index_contents, false, false});
  if (policy == nullptr) return true;
  // Table::ReadMeta: the metaindex names the filter block of this policy.
  layout->open_reads.push_back(ReadOf(footer.metaindex_handle()));
  if (!ReadBlock(fd, footer.metaindex_handle(), &bytes, not_in_memory)) return false;
  leveldb::Block metaindex(leveldb::BlockContents{bytes, false, false});
  std::unique_ptr<leveldb::Iterator> entry(metaindex.NewIterator(leveldb::BytewiseComparator()));
  const std::string filter_key = std::string("filter.") + policy->Name();
  entry->Seek(filter_key);
  leveldb::BlockHandle filter;
  input = entry->Valid() && entry->key() == filter_key ? entry->value() : leveldb::Slice();
  if (!filter.DecodeFrom(&input).ok()) return true;  // no filter of this policy
  layout->open_reads.push_back(ReadOf(filter));
  if (!ReadBlock(fd, filter, &layout->filter_contents, not_in_memory)) return false;
  layout->filter = std::make_unique<leveldb::FilterBlockReader>(policy, layout->filter_contents);
  return true;
}

// One table file of a database as the plugin knows it, and, copied into a
// Get's plan, what that Get does there.
struct Table {
  std::shared_ptr<const TableLayout> layout;
  bool loaded = false;  // layout read (null: not a table the plugin can read)
  int fd = -1;          // LevelDB's descriptor of the file, -1 when not open
  leveldb::Cache* block_cache = nullptr;  // Table::Open keeps the blocks there under cache_id
  uint64_t cache_id = 0;
  // In a plan: the table cache opens the file first (fd: learned from the
  // open), and the data block read, if any (length 0: none).
  bool open = false;
  BlockRead data;
};

// A database as DB::Open saw it, and its tables by file number.
struct Database {
  std::string name;  // as given to DB::Open: table paths are name + "/NNNNNN.ldb"
  const leveldb::FilterPolicy* policy = nullptr;
  bool bytewise = false;  // the plugin only orders keys as BytewiseComparator does
  std::unordered_map<uint64_t, Table> tables;
};

// A table file LevelDB opened (read-only), and the descriptor.
struct OpeningFile {
  std::shared_ptr<Database> database;
  uint64_t number = 0;
  int fd = -1;
};

// Shared by all threads, under `mutex`.
std::shared_mutex mutex;
std::vector<std::shared_ptr<Database>> databases;  // oldest first
// Counts installed versions and opened databases: file lists are taken afresh.
std::atomic<uint64_t> epoch{0};

// The table file this thread opened last (fd -1 once closed), until the
// Table::Open that follows the open in TableCache::FindTable: only then
// does another thread's Get find the table open (before, it opens the file
// itself).
thread_local OpeningFile opening;

// True when the block cache holds the block at `offset` of `table`
// (Table::BlockReader's key: the table's cache id, offset; fixed64 each).
bool BlockCached(const Table& table, uint64_t offset) {
  if (table.block_cache == nullptr) return false;
  char key[16];
  leveldb::EncodeFixed64(key, table.cache_id);
  leveldb::EncodeFixed64(key + 8, offset);
  leveldb::Cache::Handle* handle = table.block_cache->Lookup(leveldb::Slice(key, sizeof key));
  if (handle != nullptr) table.block_cache->Release(handle);
  return handle != nullptr;
}

// The program opened `path` read-only as `fd`: remembered when it is a
// table file of an opened database (the newest of that name).
void FileOpened(const char* path, int fd) {
  const char* slash = std::strrchr(path, '/');
  uint64_t number = 0;
  leveldb::FileType type;
  if (slash == nullptr || !leveldb::ParseFileName(slash + 1, &number, &type) || type != leveldb::kTableFile) {
    return;
  }
  const std::string_view directory(path, static_cast<size_t>(slash - path));
  std::shared_lock lock(mutex);
  for (const auto& db : databases) {
    if (db->name == directory) opening = OpeningFile{db, number, fd};
  }
}

// The program is closing `fd`: forgotten first (its number may be reused at once).
void FileClosed(int fd) {
  if (opening.fd == fd) opening.fd = -1;
  std::unique_lock lock(mutex);
  // Closes are rare (the table cache closes a table when it evicts it or
  // the file is deleted): a look through the tables is cheap enough.
  for (const auto& db : databases) {
    for (auto& [number, table] : db->tables) {
      if (table.fd == fd) table.fd = -1;
    }
  }
}

// The files of one Version per level, taken with the public
// Version::GetOverlappingInputs(level, nullptr, nullptr): every file, level
// 0 sorted newest (highest number) first, deeper levels by key.  Valid while
// the epoch is unchanged (the Version cannot have been replaced).
struct VersionFiles {
  const leveldb::Version* version = nullptr;
  uint64_t epoch = 0;
  std::shared_ptr<Database> database;
  std::vector<leveldb::FileMetaData*> levels[leveldb::config::kNumLevels];
};

// The database of a Version: the newest whose directory holds the first
// file of one of the Version's levels, under its number and with its size
// (once per Version per thread).
std::shared_ptr<Database> DatabaseOf(const VersionFiles& files) {
  std::shared_lock lock(mutex);
  for (const auto& level : files.levels) {
    for (auto db = databases.rbegin(); !level.empty() && db != databases.rend(); ++db) {
      struct stat info;
      if (stat(leveldb::TableFileName((*db)->name, level.front()->number).c_str(), &info) == 0 &&
          static_cast<uint64_t>(info.st_size) == level.front()->file_size) {
        return *db;
      }
    }
  }
  return nullptr;
}

const VersionFiles& FilesOf(leveldb::Version* version) {
  thread_local VersionFiles files;
  const uint64_t now = epoch.load(std::memory_order_relaxed);
  if (files.version == version && files.epoch == now) return files;
  files.version = nullptr;  // until the lists are complete: an allocation below may throw
  std::vector<uint64_t> numbers;
  for (int level = 0; level < leveldb::config::kNumLevels; ++level) {
    version->GetOverlappingInputs(level, nullptr, nullptr, &files.levels[level]);
    for (const leveldb::FileMetaData* file : files.levels[level]) numbers.push_back(file->number);
  }
  std::sort(files.levels[0].begin(), files.levels[0].end(),
            [](const leveldb::FileMetaData* a, const leveldb::FileMetaData* b) {
              return a->number > b->number;
            });
  files.database = DatabaseOf(files);
  files.version = version;
  files.epoch = now;
  if (files.database == nullptr) return files;
  // Forget the closed tables compactions removed.
  std::sort(numbers.begin(), numbers.end());
  std::unique_lock lock(mutex);
  std::erase_if(files.database->tables, [&](const auto& table) {
    return table.second.fd < 0 && !std::binary_search(numbers.begin(), numbers.end(), table.first);
  });
  return files;
}

// The catalog's entry of `file`, its layout read first if that was not
// tried yet or its blocks were not in the page cache so far.
Table TableOf(Database& db, const leveldb::FileMetaData& file) {
  {
    std::shared_lock lock(mutex);
    auto table = db.tables.find(file.number);
    if (table != db.tables.end() && table->second.loaded) return table->second;
  }
  auto layout = std::make_shared<TableLayout>();
  layout->path = leveldb::TableFileName(db.name, file.number);
  // openat and the real close: the plugin's wrappers of open and close see LevelDB's descriptors.
  const int fd = openat(AT_FDCWD, layout->path.c_str(), O_RDONLY | O_CLOEXEC);
  bool not_in_memory = false;
  const bool ok = fd >= 0 && ReadLayout(fd, file.file_size, db.policy, layout.get(), &not_in_memory);
  if (fd >= 0) __real_close(fd);
  std::unique_lock lock(mutex);
  Table& table = db.tables[file.number];
  if (!not_in_memory) {  // otherwise: once LevelDB has read the blocks
    table.layout = ok ? std::move(layout) : nullptr;
    table.loaded = true;
  }
  return table;
}

// Adds what the Get of `key` does on table `file` to `plan`, if it makes a call there.
void PlanTable(Database& db, const leveldb::FileMetaData& file, const leveldb::LookupKey& key,
               std::vector<Table>* plan) {
  Table table = TableOf(db, file);
  if (table.layout == nullptr) return;  // unpredictable
  table.open = table.fd < 0;
  // Table::InternalGet: the index entry Seek() finds (none: the key is past
  // the last block), unless the block's Bloom filter rules the key out or
  // the block cache holds the block (when the table is open already).
  std::unique_ptr<leveldb::Iterator> entry(table.layout->index->NewIterator(&comparator));
  entry->Seek(key.internal_key());
  leveldb::Slice value = entry->Valid() ? entry->value() : leveldb::Slice();
  leveldb::BlockHandle handle;
  leveldb::FilterBlockReader* filter = table.layout->filter.get();
  if (handle.DecodeFrom(&value).ok() &&
      (filter == nullptr || filter->KeyMayMatch(handle.offset(), key.user_key())) &&
      (table.open || !BlockCached(table, handle.offset()))) {
    table.data = ReadOf(handle);
  }
  if (table.open || table.data.length != 0) plan->push_back(std::move(table));
}

// Plans the Get of `key` in `version`: the tables it reads, in order, with
// the calls it makes on each.  Reads table files as needed (from the page
// cache only): call it outside any scope.  False when nothing can be predicted.
bool PlanGet(leveldb::Version* version, const leveldb::LookupKey& key, std::vector<Table>* plan) {
  plan->clear();
  const VersionFiles& files = FilesOf(version);
  if (files.database == nullptr || !files.database->bytewise) return false;
  // The files Version::ForEachOverlapping visits: level-0 files whose
  // user-key range holds the key, newest first; then per deeper level the
  // first file whose largest key is >= the lookup key, unless it starts
  // after the user key.
  const leveldb::Slice user_key = key.user_key();
  for (const leveldb::FileMetaData* file : files.levels[0]) {
    if (user_key.compare(file->smallest.user_key()) >= 0 && user_key.compare(file->largest.user_key()) <= 0) {
      PlanTable(*files.database, *file, key, plan);
    }
  }
  for (int level = 1; level < leveldb::config::kNumLevels; ++level) {
    const auto& level_files = files.levels[level];
    const size_t index = static_cast<size_t>(leveldb::FindFile(comparator, level_files, key.internal_key()));
    if (index < level_files.size() && user_key.compare(level_files[index]->smallest.user_key()) >= 0) {
      PlanTable(*files.database, *level_files[index], key, plan);
    }
  }
  return !plan->empty();
}

// The i-th read of a planned table: Table::Open's reads when the table
// cache opens it, then the data block; null past the last.
const BlockRead* NthRead(const Table& table, uint64_t i) {
  const size_t open_reads = table.open ? table.layout->open_reads.size() : 0;
  if (i < open_reads) return &table.layout->open_reads[i];
  return i == open_reads && table.data.length != 0 ? &table.data : nullptr;
}

const foreactor::Graph<std::vector<Table>> graph = [] {
  using Plan = std::vector<Table>;
  using foreactor::Visit;
  foreactor::GraphBuilder<Plan> builder("leveldb_get");
  auto next_table = builder.Branch("next_table", [](Plan& plan, const Visit& visit) {
    if (visit.iteration(0) >= plan.size()) return 2;
    return plan[visit.iteration(0)].open ? 0 : 1;
  });
  auto open_table = builder.Syscall(
      "open_table", FOREACTOR_CALL_OPEN,
      [](Plan& plan, const Visit& visit, foreactor_call& call) {
        call = foreactor::Open(plan[visit.iteration(0)].layout->path.c_str(), O_RDONLY | O_CLOEXEC);
        return FOREACTOR_READY;
      },
      [](Plan& plan, const Visit& visit, int64_t result) {
        if (result >= 0) plan[visit.iteration(0)].fd = static_cast<int>(result);
      });
  auto read_block = builder.Syscall(
      "read_block", FOREACTOR_CALL_PREAD, [](Plan& plan, const Visit& visit, foreactor_call& call) {
        const Table& table = plan[visit.iteration(0)];
        if (table.fd < 0) return FOREACTOR_NOT_YET;  // until the open returned
        const BlockRead* read = NthRead(table, visit.iteration(1));
        call = foreactor::Pread(table.fd, read->length, static_cast<int64_t>(read->offset));
        return FOREACTOR_READY;
      });
  auto more_reads = builder.Branch("more_reads", [](Plan& plan, const Visit& visit) {
    return NthRead(plan[visit.iteration(0)], visit.iteration(1) + 1) != nullptr ? 0 : 1;
  });
  builder.start().Then(next_table);
  // The edges into the data block's read are weak too: when the block cache
  // has the block, the Get may return without reading it.
  next_table.Children({open_table, {read_block, foreactor::kWeak}, builder.end()});
  open_table.Then(read_block, foreactor::kWeak).Then(more_reads, foreactor::kWeak);
  more_reads.Children({{read_block, foreactor::kWeak}, next_table});
  return builder.Build();
}();

// Runs `action`.  No exception may reach LevelDB (built without them): out
// of memory in the plugin only loses a prediction.
template <class Action>
void NoThrow(Action&& action) {
  try {
    action();
  } catch (...) {
  }
}

}  // namespace
}  // namespace leveldb_plugin

using namespace leveldb_plugin;

leveldb::Status WrapVersionGet(leveldb::Version* version, const leveldb::ReadOptions& options,
                               const leveldb::LookupKey& key, std::string* value, void* stats) {
  // The runtime's scope gate times Gets with and without a plan and scope
  // (a fixed depth or check mode plans every Get; foreactor off, none).
  thread_local std::vector<Table> plan;
  bool planned = false;
  if (graph.ScopeGate()) NoThrow([&] { planned = PlanGet(version, key, &plan); });
  if (!planned) return RealVersionGet(version, options, key, value, stats);
  foreactor::Scope scope(graph, plan);
  return RealVersionGet(version, options, key, value, stats);
}

leveldb::Status WrapDbOpen(const leveldb::Options& options, const std::string& name, leveldb::DB** db) {
  // Recorded before the call: the tables DB::Open opens are the new database's already.
  std::shared_ptr<Database> opened;  // stays null when out of memory: the database goes unpredicted
  NoThrow([&] {
    const bool bytewise = options.comparator == leveldb::BytewiseComparator();
    opened = std::make_shared<Database>(Database{name, options.filter_policy, bytewise, {}});
    std::unique_lock lock(mutex);
    databases.push_back(opened);
  });
  leveldb::Status status = RealDbOpen(options, name, db);
  if (opened == nullptr) return status;
  // When DB::Open succeeded, the database replaces the older ones of its
  // name (a reopened database starts afresh); otherwise it is dropped (a
  // database it could not lock stays as it was).  Threads take file lists
  // and their database afresh.
  std::unique_lock lock(mutex);
  std::erase_if(databases, [&](const std::shared_ptr<Database>& other) {
    return other->name == name && (other == opened) != status.ok();
  });
  epoch.fetch_add(1, std::memory_order_relaxed);
  return status;
}

leveldb::Status WrapLogAndApply(leveldb::VersionSet* versions, leveldb::VersionEdit* edit,
                                leveldb::port::Mutex* mutex) {
  epoch.fetch_add(1, std::memory_order_relaxed);  // a version is being installed
  leveldb::Status status = RealLogAndApply(versions, edit, mutex);
  epoch.fetch_add(1, std::memory_order_relaxed);
  return status;
}

leveldb::Status WrapTableOpen(const leveldb::Options& options, leveldb::RandomAccessFile* file,
                              uint64_t file_size, leveldb::Table** table) {
  leveldb::Status status = RealTableOpen(options, file, file_size, table);
  // When it succeeded, the table file this thread opened last is open
  // (unless its descriptor was closed since: mmap reads, the descriptor
  // limit) and keeps its blocks in the block cache.  Table::Open took the
  // cache's newest id for them; the id after it says which (ids only need
  // to be unique: taking one more changes nothing LevelDB does).
  const OpeningFile opened = std::exchange(opening, OpeningFile{});
  if (!status.ok() || opened.database == nullptr) return status;
  NoThrow([&] {  // out of memory: the table is predicted to be opened
    std::unique_lock lock(mutex);
    Table& entry = opened.database->tables[opened.number];
    entry.block_cache = options.block_cache;
    entry.cache_id = entry.block_cache != nullptr ? entry.block_cache->NewId() - 1 : 0;
    entry.fd = opened.fd;
  });
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
    NoThrow([&] { FileOpened(path, fd); });  // out of memory: predicted to be opened
  }
  return fd;
}

extern "C" int __wrap_close(int fd) {
  if (foreactor_enabled()) FileClosed(fd);  // first: the number may be reused at once
  return __real_close(fd);
}
