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
// (-w-: weak edge, the Get may return there.)  The plan of a Get (the data
// block reads, in order) is made before the scope from LevelDB's own objects
// and code: the tables Version::Get visits (its own walk,
// Version::ForEachOverlapping), and per table the index and filter blocks
// LevelDB keeps in memory, seen as ReadBlock returns them inside
// Table::Open, read with LevelDB's own Block and FilterBlockReader code.  A
// table on the Get's path LevelDB has not opened has no planned read:
// opening it makes calls the plugin does not predict, which pass by the
// scope (an open, then reads of a descriptor no planned read uses), as does
// the read of its data block; its index is read ahead instead
// (foreactor_read_ahead_file), so that opening the table (two reads, one
// after the other) finds index and footer cached.  When LevelDB's table cache
// can hold every table of the Version (it then keeps each open from its
// first Get on), the first planned Get after LevelDB opened a table reads
// ahead the index of every table not opened yet, so that later Gets opening
// a table wait for their data block alone: at most one index per table in a
// process (for tables of 2 MiB, 2.4% of the database; kIndexShare).  Reads of
// blocks the page cache holds are left out (foreactor::RangesInCache, asked
// per block): they pass by the scope (another descriptor than the next
// planned read's) while the planned reads of colder blocks after them are in
// flight.  Tables are planned deepest first, and a block found cold is
// started at once (foreactor_scope_start_read): the cold blocks are mostly
// in the large levels, which the Get reaches last, and the device reads them
// while the tables above are planned (13 us for 14 tables at the published
// point), not from the scope's first look ahead on.  A key whose plan was not
// worth a scope is planned again only after a few Gets
// (foreactor::PlansWithoutOverlap): planning costs about what LevelDB's own
// index seeks cost.
//
// That plan before the scope is made where every Get runs in one (an exact
// depth, check mode) or the runtime issues the planned reads itself
// (page-cache awareness off, the sync engine).  Where the runtime lets the
// plugin start reads (foreactor::Graph::StartsReads) and the scope gate
// decides (the automatic depth, a fixed one as a bound), a Get is planned
// late instead, with no scope.  The tables with kLeftOutForOneRead or more
// tables before them on its path are planned as it starts, as above
// (deepest first, cold blocks started at once, indexes of tables not opened
// read ahead): LevelDB's work in the tables above overlaps their reads.
// Each pread of the Get reads first what the page cache holds, without
// waiting (preadv2(2), RWF_NOWAIT); the first one found not wholly cached
// plans the tables after it up to the deep ones, and the Get reads on
// plain.  A Get of a short path that the page cache serves pays for no plan
// (planned first, a Get with 75% of the default image cached took 1.25x
// plain's median time), and the scope added nothing there: its runtime found
// every planned read coming in and issued none.  Tables are known by file
// number and size: a table of another database open in the same
// process with both equal only costs a misprediction (its descriptor is not
// the one the Get reads).
#include <sys/types.h>
#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <memory>
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
#define WRAPPED(name, symbol, ...)           \
  using name = leveldb::Status(__VA_ARGS__); \
  name Real##name asm("__real_" symbol);     \
  name Wrap##name asm("__wrap_" symbol)
WRAPPED(VersionGet,
        "_ZN7leveldb7Version3GetERKNS_11ReadOptionsERKNS_9LookupKeyEPNSt7__cxx1112basic_string"
        "IcSt11char_traitsIcESaIcEEEPNS0_8GetStatsE",
        leveldb::Version*, const leveldb::ReadOptions&, const leveldb::LookupKey&, std::string*,
        void*);
WRAPPED(TableOpen, "_ZN7leveldb5Table4OpenERKNS_7OptionsEPNS_16RandomAccessFileEmPPS0_",
        const leveldb::Options&, leveldb::RandomAccessFile*, uint64_t, leveldb::Table**);
WRAPPED(ReadBlock,
        "_ZN7leveldb9ReadBlockEPNS_16RandomAccessFileERKNS_11ReadOptionsERKNS_11BlockHandleEPNS_"
        "13BlockContentsE",
        leveldb::RandomAccessFile*, const leveldb::ReadOptions&, const leveldb::BlockHandle&,
        leveldb::BlockContents*);
void RealTableDelete(leveldb::Table* table) asm("__real__ZN7leveldb5TableD1Ev");
void WrapTableDelete(leveldb::Table* table) asm("__wrap__ZN7leveldb5TableD1Ev");
std::string RealTableFileName(const std::string& dbname, uint64_t number) asm(
    "__real__ZN7leveldb13TableFileNameERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEm");
std::string WrapTableFileName(const std::string& dbname, uint64_t number) asm(
    "__wrap__ZN7leveldb13TableFileNameERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEm");
// Version::ForEachOverlapping (private): calls visit(arg, level, file) for
// each table Version::Get visits for the key, in its order, while it returns true.
using ForEachOverlapping = void(leveldb::Version*, leveldb::Slice user_key,
                                leveldb::Slice internal_key, void* arg,
                                bool (*visit)(void* arg, int level, leveldb::FileMetaData*));
ForEachOverlapping VersionForEachOverlapping asm(
    "_ZN7leveldb7Version18ForEachOverlappingENS_5SliceES1_PvPFbS2_iPNS_12FileMetaDataEE");
extern "C" ssize_t __real_pread(int fd, void* buffer, size_t length, off_t offset);
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
// metaindex and filter).
struct OpeningTable {
  uint64_t number = 0;
  const std::string* database = nullptr;  // TableCache's, with the number
  int fd = -1;                            // -1 until read, and once closed
  bool in_table_open = false;
  foreactor::PrivateVector<leveldb::Slice> blocks;
};

// The open tables by file number, shared by all threads, under `mutex`.
std::shared_mutex mutex;
foreactor::PrivateUnorderedMap<uint64_t, Table> tables;
thread_local OpeningTable opening;
// The directory of the database whose table was opened last, under `mutex`
// (a process with several databases may read ahead in another's table of
// the same number: time lost, nothing else).
std::basic_string<char, std::char_traits<char>, foreactor::PrivateAllocator<char>> database;
// The data blocks Gets find in the page cache: their reads are left out.
foreactor::RangesInCache ranges_in_cache;
// The Gets whose plans were not worth a scope: planned again only now and then.
foreactor::PlansWithoutOverlap plans_without_overlap;

// A plan with one read is worth a scope after this many tables left out
// (LevelDB's work in one table from memory, a few µs, is about a scope's
// cost), or after one table LevelDB opens (device reads).  A late Get (see
// the top) plans the tables with this many before them as it starts.
constexpr int kLeftOutForOneRead = 4;

// The preads of a Get, in order.
struct Plan {
  foreactor::PrivateVector<foreactor_call> reads;
  // LevelDB's work before the first read, in tables left out: each table
  // whose read is left out counts 1, each it opens kLeftOutForOneRead.
  int left_out_before_first_read = 0;
  bool met_unopened_table = false;  // its plan is then to be made again
  // While planning: the tables Version::Get visits, in its order.
  foreactor::PrivateVector<const leveldb::FileMetaData*> path;
};

const foreactor::Graph<Plan> graph = [] {
  foreactor::GraphBuilder<Plan> builder("leveldb_get");
  using foreactor::Visit;
  auto read_block = builder.Syscall("read_block", FOREACTOR_CALL_PREAD,
                                    [](Plan& plan, const Visit& visit, foreactor_call& call) {
                                      call = plan.reads[visit.iteration(0)];
                                      return FOREACTOR_READY;
                                    });
  auto more = builder.Branch("more", [](Plan& plan, const Visit& visit) {
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

// The first time in a process that LevelDB has opened a table, reads ahead
// the index of every table of `version` it has not opened, when its table
// cache can hold them all (the files of each level taken with the public
// Version::GetOverlappingInputs(level, nullptr, nullptr)).  Call it under
// the shared lock.
void ReadIndexesAheadOnce(leveldb::Version* version) {
  // A load first: every planned Get comes here, and only the first may write.
  if (table_cache_capacity.load() == 0 || indexes_read_ahead.load(std::memory_order_relaxed) ||
      indexes_read_ahead.exchange(true))
    return;
  std::vector<leveldb::FileMetaData*> levels[leveldb::config::kNumLevels];
  size_t count = 0;
  for (int level = 0; level < leveldb::config::kNumLevels; ++level) {
    version->GetOverlappingInputs(level, nullptr, nullptr, &levels[level]);
    count += levels[level].size();
  }
  if (count > static_cast<size_t>(table_cache_capacity.load())) return;
  for (const auto& level : levels)
    for (const leveldb::FileMetaData* file : level)
      if (!tables.contains(file->number)) ReadIndexAhead(*file);
}

// Adds the read the Get of `key` makes in table `file` to `plan`, if any
// (Table::InternalGet: the index entry Seek() finds, none past the last
// block, unless the Bloom filter rules the key out or the block cache holds
// the block), and starts it, unless the table's reads are left out (see the
// top).  When LevelDB has not opened the table, reads its index ahead
// instead.  Tables are planned in the reverse of the Get's order: `plan`'s
// reads are then in reverse order, and its left_out_before_first_read counts
// the tables planned since its last read.  Call it under the shared lock.
void PlanTable(const leveldb::FileMetaData& file, const leveldb::LookupKey& key, Plan* plan) {
  const auto found = tables.find(file.number);
  if (found == tables.end() || found->second.file_size != file.file_size) {
    ReadIndexAhead(file);
    plan->met_unopened_table = true;
    plan->left_out_before_first_read += kLeftOutForOneRead;
    return;
  }
  const Table& table = found->second;
  std::unique_ptr<leveldb::Iterator> entry(table.index->NewIterator(&comparator));
  entry->Seek(key.internal_key());
  leveldb::Slice value = entry->Valid() ? entry->value() : leveldb::Slice();
  leveldb::BlockHandle handle;
  if (handle.DecodeFrom(&value).ok() &&
      (table.filter == nullptr || table.filter->KeyMayMatch(handle.offset(), key.internal_key())) &&
      !BlockCached(table, handle.offset())) {
    const uint64_t length = handle.size() + leveldb::kBlockTrailerSize;
    if (ranges_in_cache.InCache(table.fd, handle.offset(), length)) {
      plan->left_out_before_first_read++;
      return;
    }
    plan->reads.push_back(foreactor::Pread(table.fd, length, int64_t(handle.offset())));
    plan->left_out_before_first_read = 0;
    graph.StartRead(table.fd, handle.offset(), length);
  }
}

// Starts the plan of the Get of `key` in `version`: its path, the tables
// Version::Get visits, in its order (LevelDB's own walk).
void FindPath(leveldb::Version* version, const leveldb::LookupKey& key, Plan* plan) {
  plan->reads.clear();
  plan->path.clear();
  plan->left_out_before_first_read = 0;
  plan->met_unopened_table = false;
  VersionForEachOverlapping(version, key.user_key(), key.internal_key(), plan,
                            [](void* arg, int, leveldb::FileMetaData* file) {
                              static_cast<Plan*>(arg)->path.push_back(file);
                              return true;
                            });
}

// Plans tables [first, end) of the path, deepest first (PlanTable).  Call it
// under the shared lock.
void PlanTables(leveldb::Version* version, const leveldb::LookupKey& key, size_t first, size_t end,
                Plan* plan) {
  ReadIndexesAheadOnce(version);
  for (size_t table = std::min(end, plan->path.size()); table-- > first;)
    PlanTable(*plan->path[table], key, plan);
}

// Plans the Get of `key` in `version`: its reads in the tables LevelDB has
// open, in order (the indexes of those it has not opened read ahead).  The
// plan is worth a scope when its reads can overlap another planned read, or
// LevelDB's work in the tables left out or opened before the first; a plan
// that met a table LevelDB had not opened is made again next time.
foreactor::PlansWithoutOverlap::Outcome PlanGet(leveldb::Version* version,
                                                const leveldb::LookupKey& key, Plan* plan) {
  using Outcome = foreactor::PlansWithoutOverlap::Outcome;
  FindPath(version, key, plan);
  std::shared_lock lock(mutex);
  PlanTables(version, key, 0, plan->path.size(), plan);
  std::reverse(plan->reads.begin(), plan->reads.end());
  // Two reads, or one after enough of LevelDB's work (it counts as a second).
  if (plan->reads.size() + (plan->left_out_before_first_read >= kLeftOutForOneRead) >= 2)
    return Outcome::kScope;
  return plan->met_unopened_table ? Outcome::kPlainOnce : Outcome::kPlain;
}

// The Get in progress on this thread when it is planned late (see the
// top), from WrapVersionGet's call of Version::Get to its return.
struct LateGet {
  leveldb::Version* version = nullptr;  // null: no Get planned late
  const leveldb::LookupKey* key = nullptr;
  bool planned = false;  // a read of it was found cold, and the plan made
};
thread_local LateGet late_get;
thread_local Plan late_plan;  // the late Get's path and the reads planned

// At the start of a late Get: its path, and the tables with at least
// kLeftOutForOneRead tables before them planned at once (LevelDB's work in
// those overlaps their cold blocks' reads; at the published point most cold
// blocks are in the large levels, below 16 tables read from memory).
void PlanDeepTables() {
  FindPath(late_get.version, *late_get.key, &late_plan);
  if (late_plan.path.size() <= static_cast<size_t>(kLeftOutForOneRead)) return;
  std::shared_lock lock(mutex);
  PlanTables(late_get.version, *late_get.key, kLeftOutForOneRead, late_plan.path.size(),
             &late_plan);
}

// Plans the tables of the late Get's path after the one it reads through
// `fd` (or is opening: its Table::Open reads) and before the deep ones.
void PlanTablesAfter(int fd) {
  const auto& path = late_plan.path;
  std::shared_lock lock(mutex);
  const auto reading = std::find_if(path.begin(), path.end(), [&](const auto* file) {
    if (opening.in_table_open) return file->number == opening.number;
    const auto found = tables.find(file->number);
    return found != tables.end() && found->second.fd == fd;
  });
  if (reading != path.end())
    PlanTables(late_get.version, *late_get.key, reading - path.begin() + 1, kLeftOutForOneRead,
               &late_plan);
}

// A read of a late Get before its first cold one (pread(2)'s contract): what
// the page cache holds is read without waiting (preadv2(2), RWF_NOWAIT).
// When that is not the whole range, the tables after it are planned, and the
// range read as pread(2) reads it (not started with the others: pread's
// read-ahead window also brings in the blocks around it, which later Gets
// find cached); the Get reads plain from then on, also when the kernel
// cannot tell (an error other than EAGAIN).
ssize_t ReadOrPlan(int fd, void* buffer, size_t length, off_t offset) {
  const int saved_errno = errno;
  iovec vector = {buffer, length};
  const ssize_t cached = preadv2(fd, &vector, 1, offset, RWF_NOWAIT);
  const bool cold = cached > 0 || (cached < 0 && errno == EAGAIN);
  errno = saved_errno;
  if (cached == static_cast<ssize_t>(length) || cached == 0) return cached;  // or end of file
  late_get.planned = true;
  if (cold) foreactor::NoThrow([&] { PlanTablesAfter(fd); });
  return __real_pread(fd, buffer, length, offset);
}

}  // namespace

leveldb::Status WrapVersionGet(leveldb::Version* version, const leveldb::ReadOptions& options,
                               const leveldb::LookupKey& key, std::string* value, void* stats) {
  // The runtime's scope gate times Gets with and without a plan (and scope;
  // an exact depth or check mode plans every Get; foreactor off, none).
  if (graph.ScopeSpeculation() == FOREACTOR_SPECULATION_AUTOMATIC && graph.StartsReads()) {
    if (!graph.ScopeGate()) return RealVersionGet(version, options, key, value, stats);
    struct Late {
      Late(leveldb::Version* version, const leveldb::LookupKey& key) {
        late_get = LateGet{version, &key, false};
        foreactor::NoThrow([] { PlanDeepTables(); });
      }
      ~Late() { late_get.version = nullptr; }
    } late(version, key);
    return RealVersionGet(version, options, key, value, stats);
  }
  // Planned before the scope.  Keys whose plans were not worth a scope are
  // remembered per Version, by its address: a Version at a freed one's
  // address costs a few Gets unplanned.
  thread_local Plan plan;
  const std::string_view user_key(key.user_key().data(), key.user_key().size());
  if (!plans_without_overlap.PlanUnit(graph, user_key, reinterpret_cast<uintptr_t>(version),
                                      [&] { return PlanGet(version, key, &plan); }))
    return RealVersionGet(version, options, key, value, stats);
  foreactor::Scope scope(graph, plan);
  return RealVersionGet(version, options, key, value, stats);
}

leveldb::Status WrapReadBlock(leveldb::RandomAccessFile* file, const leveldb::ReadOptions& options,
                              const leveldb::BlockHandle& handle, leveldb::BlockContents* result) {
  leveldb::Status status = RealReadBlock(file, options, handle, result);
  if (opening.in_table_open && status.ok())
    foreactor::NoThrow([&] { opening.blocks.push_back(result->data); });
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
  if (!status.ok() || opened.number == 0 || opened.fd < 0 || opened.blocks.empty() ||
      options.comparator->Name() != std::string_view("leveldb.InternalKeyComparator") ||
      static_cast<const leveldb::InternalKeyComparator*>(options.comparator)->user_comparator() !=
          leveldb::BytewiseComparator())
    return status;
  foreactor::NoThrow([&] {
    Table entry{*table, opened.fd, options.block_cache, file_size, 0, nullptr, nullptr};
    entry.cache_id = entry.block_cache != nullptr ? entry.block_cache->NewId() - 1 : 0;
    // BlockContents: data, cachable, heap_allocated (the view does not own the data).
    entry.index = foreactor::MakePrivate<leveldb::Block>(
        leveldb::BlockContents{opened.blocks[0], false, false});
    if (options.filter_policy != nullptr && opened.blocks.size() == 3)
      entry.filter = foreactor::MakePrivate<leveldb::FilterBlockReader>(options.filter_policy,
                                                                        opened.blocks[2]);
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
  opening = OpeningTable{number, &dbname, -1, false, {}};  // nothing read yet
  return RealTableFileName(dbname, number);
}

// LevelDB's own pread(2) and close(2) calls (util/env_posix.cc): the
// descriptor Table::Open reads the table through (none with mmap reads), and
// whether it was closed before Table::Open returned (LevelDB's descriptor
// limit: such a descriptor is never used).  A published table's descriptor
// is closed after its Table is deleted (TableCache's DeleteEntry).
extern "C" ssize_t __wrap_pread(int fd, void* buffer, size_t length, off_t offset) {
  if (opening.in_table_open) opening.fd = fd;
  if (late_get.version != nullptr && !late_get.planned)
    return ReadOrPlan(fd, buffer, length, offset);
  return __real_pread(fd, buffer, length, offset);
}

extern "C" int __wrap_close(int fd) {
  if (opening.fd == fd) opening.fd = -1;
  return __real_close(fd);
}
