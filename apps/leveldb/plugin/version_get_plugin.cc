// version_get_plugin.cc: the foreaction graph of LevelDB 1.23's
// leveldb::Version::Get, attached at link time (apps/leveldb/plugin/README.md).
//
// Version::Get looks a key up in the Version's table files, newest first,
// and returns at the first file that holds the key.  In each table the
// table cache holds open, Table::InternalGet seeks the table's index block,
// asks its Bloom filter, looks the data block up in the block cache and, on
// a miss, preads it (size + 5 bytes):
//
//   start -> next_table --0w--> read_block -w-> more --> next_table (loop)
//                 \--1--> end
//
// (-w-: weak edge, the Get may return there.)  A Get is planned as it
// runs (as it starts or at its first read, below), from LevelDB's own
// objects and code: the tables Version::Get visits (its own walk,
// Version::ForEachOverlapping, taken as the Get starts), and per table the
// index and filter blocks LevelDB keeps in memory, seen as ReadBlock
// returns them inside Table::Open, read with LevelDB's own Block and
// FilterBlockReader code.  A Get planned at its first read that the page
// cache serves whole pays for its path alone (planned before the scope, a
// Get with 75% of the default image cached took 1.25x plain's median
// time).
//
// Where the runtime lets the plugin start reads
// (foreactor::Graph::StartsReads) and the scope gate decides (the
// automatic depth, a fixed one as a bound), a Get runs with no scope, and
// how it is planned follows this thread's last 16 planned Gets
// (Get::cold_gets):
// - When at least kColdGetsToPlanAtStart of them found a block the page
//   cache lacked, the Get is planned as it starts: its tables after the
//   first, deepest first, each cold block found started at once
//   (foreactor_scope_start_read), so that LevelDB's work in the tables
//   above overlaps their reads; then it reads on plain.  (The first
//   table's block is left to LevelDB's read, which comes before any work a
//   start could overlap: planned too, it cost the published point 0.73x of
//   plain's time instead of 0.64x-0.67x.)
// - Otherwise (most Gets served from memory: a plan at the start would
//   cost each of them a page cache query per table), each pread of the Get
//   reads first what the page cache holds, without waiting
//   (foreactor::ReadFromPageCache); the first one found not wholly cached
//   plans the tables after it.
// Once a Get planned so has started a read, each of its reads (the one that
// planned it included: the kernel started its pages at the first try)
// waits for its block by polling the page cache rather than asleep in
// pread(2) (foreactor::Graph::ReadStarted): on a virtual machine a sleep
// costs the CPU's halt and the wake-up (bench/log/leveldb.md, 2026-12-07,
// fourth stop).  A scope added nothing there: its runtime found every
// planned read coming in and issued none.
//
// Where every Get runs in a scope (an exact depth, check mode) or the
// runtime issues the planned reads itself (page-cache awareness off, the
// sync engine), the Get's first read plans the tables after it, and the Get
// runs in a scope from that read on, when the plan has two reads, or one
// after the table LevelDB is opening.
//
// In every plan, a table on the Get's path LevelDB has not opened has no
// planned read: opening it makes calls the plugin does not predict, which
// pass by the scope (an open, then reads of a descriptor no planned read
// uses), as does the read of its data block; its index is read ahead
// instead (foreactor_read_ahead_file), so that opening the table (two
// reads, one after the other) finds index and footer cached.  When
// LevelDB's table cache can hold every table of the Version (it then keeps
// each open from its first Get on), the first Get after LevelDB opened a
// table that finds a block the page cache lacks (ReadIndexesAheadOnce)
// reads ahead the index of every table not opened yet, so that later Gets
// opening a table wait for their data block alone: at most one index per
// table in a process (for tables of 2 MiB, 2.4% of the database;
// kIndexShare).  Reads of blocks the page cache holds are left
// out (foreactor::RangesInCache, asked per block): they pass by the scope
// (another descriptor than the next planned read's).  Tables are known by
// file number and size: a table of another database open in the same
// process with both equal only costs a misprediction (its descriptor is not
// the one the Get reads).
#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "db/dbformat.h"
#include "db/version_set.h"
#include "foreactor/foreactor.hpp"
#include "leveldb/cache.h"
#include "leveldb/comparator.h"
#include "leveldb/iterator.h"
#include "leveldb/table.h"
#include "table/block.h"
#include "table/filter_block.h"
#include "table/format.h"

// The functions wrapped with -Wl,--wrap (plugin.cmake names them), by their
// mangled names: Real<Name> calls LevelDB's, Wrap<Name> is defined below.
// Member functions take `this` first.
#define WRAPPED(name, result, symbol, ...) \
  using name = result(__VA_ARGS__);        \
  name Real##name asm("__real_" symbol);   \
  name Wrap##name asm("__wrap_" symbol)
WRAPPED(VersionGet, leveldb::Status,
        "_ZN7leveldb7Version3GetERKNS_11ReadOptionsERKNS_9LookupKeyEPNSt7__cxx1112basic_string"
        "IcSt11char_traitsIcESaIcEEEPNS0_8GetStatsE",
        leveldb::Version*, const leveldb::ReadOptions&, const leveldb::LookupKey&, std::string*,
        void*);
WRAPPED(TableOpen, leveldb::Status,
        "_ZN7leveldb5Table4OpenERKNS_7OptionsEPNS_16RandomAccessFileEmPPS0_",
        const leveldb::Options&, leveldb::RandomAccessFile*, uint64_t, leveldb::Table**);
WRAPPED(ReadBlock, leveldb::Status,
        "_ZN7leveldb9ReadBlockEPNS_16RandomAccessFileERKNS_11ReadOptionsERKNS_11BlockHandleEPNS_"
        "13BlockContentsE",
        leveldb::RandomAccessFile*, const leveldb::ReadOptions&, const leveldb::BlockHandle&,
        leveldb::BlockContents*);
WRAPPED(TableDelete, void, "_ZN7leveldb5TableD1Ev", leveldb::Table*);
WRAPPED(TableFileName, std::string,
        "_ZN7leveldb13TableFileNameERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEm",
        const std::string&, uint64_t);
// Version::ForEachOverlapping (private): calls visit(arg, level, file) for
// each table Version::Get visits for the key, in its order, while it returns true.
using ForEachOverlapping = void(leveldb::Version*, leveldb::Slice, leveldb::Slice, void*,
                                bool (*)(void*, int, leveldb::FileMetaData*));
ForEachOverlapping VersionForEachOverlapping asm(
    "_ZN7leveldb7Version18ForEachOverlappingENS_5SliceES1_PvPFbS2_iPNS_12FileMetaDataEE");
extern "C" ssize_t __real_pread(int, void*, size_t, off_t), __wrap_pread(int, void*, size_t, off_t);
extern "C" int __real_close(int fd);

namespace {

// The comparator of every lookup the plugin makes (it plans only tables
// whose keys are ordered as BytewiseComparator orders them).
const leveldb::InternalKeyComparator comparator(leveldb::BytewiseComparator());

// A table LevelDB holds open, from its Table::Open to its deletion.  `index`
// and `filter` read LevelDB's own bytes (the Table owns them), so they are
// used only under the shared lock: ~Table takes the unique lock first.
struct Table {
  const leveldb::Table* table = nullptr;
  int fd = -1;                            // LevelDB's descriptor of the file
  leveldb::Cache* block_cache = nullptr;  // Table::Open keeps the blocks there under cache_id
  uint64_t file_size = 0, cache_id = 0;
  foreactor::PrivatePtr<leveldb::Block> index;
  // Null: no filter.  Its policy is the one Table::Open had, LevelDB's
  // internal-key wrapper of the database's: it takes internal keys.
  foreactor::PrivatePtr<leveldb::FilterBlockReader> filter;
};

// What this thread sees of the table it is opening: its file number (the
// name TableCache made last), then inside Table::Open the descriptor its
// preads use and the blocks ReadBlock returns (index; with a filter policy,
// metaindex and filter; `block_count` counts past the three kept).
struct OpeningTable {
  uint64_t number = 0;
  const std::string* database = nullptr;  // TableCache's, with the number
  int fd = -1;                            // -1 until read, and once closed
  bool in_table_open = false;
  size_t block_count = 0;
  std::string_view blocks[3] = {};
};

// The open tables by file number, shared by all threads, under `mutex`.
std::shared_mutex mutex;
foreactor::PrivateUnorderedMap<uint64_t, Table> tables;
// This thread's, and `pending_key` below: constinit and trivially destroyed,
// so that each wrapped call, in every Get, reads them with one load.
constinit thread_local OpeningTable opening;
// The directory of the database whose table was opened last, under `mutex`
// (a process with several databases may read ahead in another's table of
// the same number: time lost, nothing else).
std::basic_string<char, std::char_traits<char>, foreactor::PrivateAllocator<char>> database;
// The data blocks Gets find in the page cache: their reads are left out.
foreactor::RangesInCache ranges_in_cache;

// A Get planned without a scope is planned as it starts when at least this
// many of this thread's last 16 such Gets (Get::cold_gets) found a cold
// block (see the top).  With 75% of the default image cached, a fifth of
// the Gets found one, and 2.5% of the Gets came after 8 or more in 16; at
// 10% memory, over two thirds did, and 96% came after 8 or more.
constexpr int kColdGetsToPlanAtStart = 8;

// The key of this thread's Get while its reads may plan it; null: no Get
// planned on this thread, its plan at the start holding a cold block, or its
// first read not found wholly cached made.
constinit thread_local const leveldb::LookupKey* pending_key = nullptr;

// The Get in progress on this thread, from WrapVersionGet's call of
// Version::Get to its return, and its plan (the state of its scope).
struct Get {
  leveldb::Version* version = nullptr;  // the Version whose Get this is
  // No scope runs: the plugin plans the Get as it runs (at its start after
  // cold Gets, otherwise at its first cold read) and starts the plan's reads
  // itself (see the top).
  bool late = false;
  // Bit i: the Get i + 1 Gets before this one, planned late, found a block
  // the page cache lacked (made a read not wholly cached, or started one).
  uint16_t cold_gets = 0;
  // The tables Version::Get visits, in its order, and the preads planned,
  // the Get's last first (the graph takes them from the end).
  foreactor::PrivateVector<const leveldb::FileMetaData*> path;
  foreactor::PrivateVector<foreactor_call> reads;
  std::optional<foreactor::Scope> scope;
};
thread_local Get get;

const foreactor::Graph<Get> graph = [] {
  foreactor::GraphBuilder<Get> builder("leveldb_get");
  using foreactor::Visit;
  auto read_block = builder.Syscall("read_block", FOREACTOR_CALL_PREAD,
                                    [](Get& plan, const Visit& visit, foreactor_call& call) {
                                      call = plan.reads[plan.reads.size() - 1 - visit.iteration(0)];
                                      return FOREACTOR_READY;
                                    });
  auto more = builder.Branch("more", [](Get& plan, const Visit& visit) {
    return visit.iteration(0) + 1 < plan.reads.size() ? 0 : 1;
  });
  // Weak into the first read too: a block cache hit the plan did not foresee
  // lets the Get skip it (a scope's plan holds at least one read).
  builder.start().Then(read_block, foreactor::kWeak).Then(more, foreactor::kWeak);
  more.Children({read_block, builder.end()});
  return builder.Build();
}();

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

// Table::Open reads the footer at the end of the table, then the index just
// before it: about 0.9% of a table of 4 KiB blocks, so the last
// 1 / kIndexShare of the table and kIndexMargin bytes hold both.
constexpr uint64_t kIndexShare = 64, kIndexMargin = 16384;

// The tables LevelDB's table cache holds (DBImpl's TableCacheSize: the
// sanitized max_open_files less the 10 files it keeps for others) in the
// database of the table opened last; 0 until a table is opened.
std::atomic<int> table_cache_capacity{0};
// Set once a Get has asked for the indexes of every table not opened.
std::atomic<bool> indexes_read_ahead{false};

// Reads the footer and index of table `file` ahead.  Call it under the
// shared lock.
void ReadIndexAhead(const leveldb::FileMetaData& file) {
  const uint64_t length = std::min(file.file_size, file.file_size / kIndexShare + kIndexMargin);
  foreactor_read_ahead_file(RealTableFileName(std::string(database), file.number).c_str(),
                            file.file_size - length, length);
}

// The first time in a process that a Get finds a block the page cache
// lacks after LevelDB opened a table, reads ahead the index of every table
// of `version` it has not opened, when its table cache can hold them all
// (the files of each level taken with the public
// Version::GetOverlappingInputs(level, nullptr, nullptr)).  Not sooner: with
// the default image in memory, hinting the 526 cached indexes took the Get
// that did it 0.8 ms, and 20,000 Gets 1.8% more time (the hints' path
// checks and hand-over; path_read_ahead.h leaves hints out only once its
// thread found a run of them needless).
void ReadIndexesAheadOnce(leveldb::Version* version) {
  // Only Gets that found a block the page cache lacks come here: an exchange
  // costs them nothing against their read.
  if (table_cache_capacity.load() == 0 || indexes_read_ahead.exchange(true)) return;
  std::vector<leveldb::FileMetaData*> files, level_files;
  for (int level = 0; level < leveldb::config::kNumLevels; ++level) {
    version->GetOverlappingInputs(level, nullptr, nullptr, &level_files);
    files.insert(files.end(), level_files.begin(), level_files.end());
  }
  if (files.size() > static_cast<size_t>(table_cache_capacity.load())) return;
  std::shared_lock lock(mutex);
  for (const leveldb::FileMetaData* file : files)
    if (!tables.contains(file->number)) ReadIndexAhead(*file);
}

// Adds the read this thread's Get makes in table `file` to its plan, if any
// (Table::InternalGet: the index entry Seek() finds, none past the last
// block, unless the Bloom filter rules the key out or the block cache holds
// the block), and starts it, unless the page cache holds the block.  When
// LevelDB has not opened the table, reads its index ahead instead.  Call it
// under the shared lock.
void PlanTable(const leveldb::FileMetaData& file) {
  const auto found = tables.find(file.number);
  if (found == tables.end() || found->second.file_size != file.file_size)
    return ReadIndexAhead(file);
  const Table& table = found->second;
  std::unique_ptr<leveldb::Iterator> entry(table.index->NewIterator(&comparator));
  entry->Seek(pending_key->internal_key());
  leveldb::Slice value = entry->Valid() ? entry->value() : leveldb::Slice();
  leveldb::BlockHandle handle;
  if (!handle.DecodeFrom(&value).ok()) return;
  const uint64_t offset = handle.offset(), length = handle.size() + leveldb::kBlockTrailerSize;
  if ((table.filter == nullptr || table.filter->KeyMayMatch(offset, pending_key->internal_key())) &&
      !BlockCached(table, offset) && !ranges_in_cache.InCache(table.fd, offset, length)) {
    get.reads.push_back(foreactor::Pread(table.fd, length, int64_t(offset)));
    graph.StartRead(table.fd, offset, length);
  }
}

// Plans the tables of this thread's Get's path from `first` on, deepest
// first (PlanTable): its plan's reads are then in the reverse of the Get's
// order.
void PlanTables(size_t first) {
  std::shared_lock lock(mutex);
  for (size_t table = get.path.size(); table-- > first;) PlanTable(*get.path[table]);
}

// As `version`'s Get of `key` starts on this thread: its path (LevelDB's own
// walk) and, planned late after cold Gets, its plan (see the top).
void StartGet(leveldb::Version* version, const leveldb::LookupKey& key) {
  pending_key = &key;
  get.version = version;
  get.late = graph.ScopeSpeculation() == FOREACTOR_SPECULATION_AUTOMATIC && graph.StartsReads();
  get.path.clear();  // (get.reads: cleared as the last Get ended)
  VersionForEachOverlapping(version, key.user_key(), key.internal_key(), nullptr,
                            [](void*, int, leveldb::FileMetaData* file) {
                              get.path.push_back(file);
                              return true;
                            });
  if (!get.late || std::popcount(get.cold_gets) < kColdGetsToPlanAtStart) return;
  PlanTables(1);
  if (!get.reads.empty()) pending_key = nullptr;  // planned: the Get reads on plain
}

// Plans this thread's Get from its first read on, `read`, of the table it
// reads through `fd` (or is opening: then Table::Open's read, not planned):
// the tables after it, and, unless planned late, the Get runs in a scope
// from `read` on when the plan has a read to overlap with another, or with
// the table's opening.
void PlanFrom(const foreactor_call& read) {
  std::shared_lock lock(mutex);
  const auto reading = std::find_if(get.path.begin(), get.path.end(), [&](const auto* file) {
    if (opening.in_table_open) return file->number == opening.number;
    const auto found = tables.find(file->number);
    return found != tables.end() && found->second.fd == read.fd;
  });
  lock.unlock();
  if (reading == get.path.end()) return;
  PlanTables(reading - get.path.begin() + 1);
  // Planned late, `read` is not wholly cached; otherwise a planned read is not.
  if (get.late || !get.reads.empty()) ReadIndexesAheadOnce(get.version);
  // Planned late, `read` is then polled for with the reads started.
  if (!opening.in_table_open) get.reads.push_back(read);
  if (!get.late && get.reads.size() + opening.in_table_open >= 2) get.scope.emplace(graph, get);
}

// The first read of a planned Get (pread(2)'s contract).  Planned late,
// the Get first reads what the page cache holds, without waiting
// (foreactor::ReadFromPageCache), and is planned only when that is not the
// whole range (not at all when the kernel cannot tell); the range is then
// read as pread(2) reads it (not started with the others: see the top).
// Otherwise the Get is planned at this read.  Its later reads run plain, or
// in its scope.
[[gnu::noinline]] ssize_t ReadOrPlan(int fd, void* buffer, size_t length, off_t offset) {
  bool cold = true;
  ssize_t cached = get.late ? foreactor::ReadFromPageCache(fd, buffer, length, offset, &cold) : -1;
  if (cached == static_cast<ssize_t>(length) || cached == 0) return cached;  // or end of file
  if (cold) foreactor::NoThrow([&] { PlanFrom(foreactor::Pread(fd, length, offset)); });
  pending_key = nullptr;
  return __wrap_pread(fd, buffer, length, offset);  // (polled when planned late)
}

}  // namespace

leveldb::Status WrapVersionGet(leveldb::Version* version, const leveldb::ReadOptions& options,
                               const leveldb::LookupKey& key, std::string* value, void* stats) {
  // The runtime's scope gate times Gets planned and plain (an exact depth or
  // check mode plans every Get; foreactor off, none).
  if (!graph.ScopeGate()) return RealVersionGet(version, options, key, value, stats);
  struct EndOfGet {
    ~EndOfGet() {
      get.scope.reset();
      get.reads.clear();  // (a later pread of this thread is no planned read)
      // A Get that made a read not wholly cached, or planned one, has no key.
      if (get.late) get.cold_gets = static_cast<uint16_t>(get.cold_gets << 1 | !pending_key);
      pending_key = nullptr;
    }
  } end_of_get;
  foreactor::NoThrow([&] { StartGet(version, key); });
  return RealVersionGet(version, options, key, value, stats);
}

leveldb::Status WrapReadBlock(leveldb::RandomAccessFile* file, const leveldb::ReadOptions& options,
                              const leveldb::BlockHandle& handle, leveldb::BlockContents* result) {
  leveldb::Status status = RealReadBlock(file, options, handle, result);
  if (opening.in_table_open && status.ok() && opening.block_count++ < std::size(opening.blocks))
    opening.blocks[opening.block_count - 1] = {result->data.data(), result->data.size()};
  return status;
}

leveldb::Status WrapTableOpen(const leveldb::Options& options, leveldb::RandomAccessFile* file,
                              uint64_t file_size, leveldb::Table** table) {
  opening.in_table_open = true;
  leveldb::Status status = RealTableOpen(options, file, file_size, table);
  OpeningTable opened = std::exchange(opening, OpeningTable{});
  // When it succeeded, it opened the table file whose name this thread made
  // last (none: number 0), read through `opened.fd` (-1: mmap reads, or a
  // descriptor closed since, the descriptor limit).  Its blocks, in
  // Table::Open's order: the index, then with a filter policy the metaindex
  // (freed since) and the filter, if the table has one of this policy; the
  // Table keeps index and filter.  Its block cache id is the cache's newest
  // (ids need only be unique: taking one more changes nothing LevelDB does).
  // Only the tables of a database (keys compared by LevelDB's internal key
  // comparator) whose user keys are ordered bytewise.
  if (!status.ok() || opened.number == 0 || opened.fd < 0 || opened.block_count == 0 ||
      options.comparator->Name() != std::string_view("leveldb.InternalKeyComparator") ||
      static_cast<const leveldb::InternalKeyComparator*>(options.comparator)->user_comparator() !=
          leveldb::BytewiseComparator())
    return status;
  foreactor::NoThrow([&] {
    Table entry{*table, opened.fd, options.block_cache, file_size, 0, nullptr, nullptr};
    entry.cache_id = entry.block_cache != nullptr ? entry.block_cache->NewId() - 1 : 0;
    // BlockContents: data, cachable, heap_allocated (the view does not own the data).
    entry.index = foreactor::MakePrivate<leveldb::Block>(
        leveldb::BlockContents{{opened.blocks[0].data(), opened.blocks[0].size()}, false, false});
    if (options.filter_policy != nullptr && opened.block_count == 3)
      entry.filter = foreactor::MakePrivate<leveldb::FilterBlockReader>(
          options.filter_policy, leveldb::Slice(opened.blocks[2].data(), opened.blocks[2].size()));
    std::unique_lock lock(mutex);
    tables.insert_or_assign(opened.number, std::move(entry));
    database.assign(*opened.database);
    table_cache_capacity.store(options.max_open_files - 10);
  });
  return status;
}

void WrapTableDelete(leveldb::Table* table) {
  // First (and under the lock, which ~Table does not take): no plan reads the
  // table's blocks from now on.
  std::unique_lock lock(mutex);
  std::erase_if(tables, [&](const auto& entry) { return entry.second.table == table; });
  RealTableDelete(table);
}

// The table file TableCache::FindTable is about to open: it makes the
// file's name first (db/table_cache.cc).  The number is kept until the
// Table::Open that follows ends.
std::string WrapTableFileName(const std::string& dbname, uint64_t number) {
  opening = OpeningTable{number, &dbname, -1, false, 0, {}};  // nothing read yet
  return RealTableFileName(dbname, number);
}

// LevelDB's own pread(2) and close(2) calls (util/env_posix.cc): the
// descriptor Table::Open reads the table through (none with mmap reads), and
// whether it was closed before Table::Open returned (LevelDB's descriptor
// limit: such a descriptor is never used).  A published table's descriptor
// is closed after its Table is deleted (TableCache's DeleteEntry).
extern "C" ssize_t __wrap_pread(int fd, void* buffer, size_t length, off_t offset) {
  if (opening.in_table_open) opening.fd = fd;
  if (pending_key != nullptr) return ReadOrPlan(fd, buffer, length, offset);
  // A Get planned late that started reads polls for its blocks (see the top).
  if (get.late && !get.reads.empty()) return graph.ReadStarted(fd, buffer, length, offset);
  return __real_pread(fd, buffer, length, offset);
}

extern "C" int __wrap_close(int fd) {
  if (opening.fd == fd) opening.fd = -1;
  return __real_close(fd);
}
