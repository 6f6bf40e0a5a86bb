// plugin_get_test.cc: LevelDB Gets checked against a model, for the plugin.
//
//   plugin_get_test build DIR SHAPE bloom|nobloom          make the database
//   plugin_get_test get DIR SHAPE bloom|nobloom GETS THREADS
//   plugin_get_test lookup DIR SHAPE bloom|nobloom NUMBER|evict|settle:N|stats...
//
// Keys are "key%08d" of a number; even numbers are written, odd never.
// SHAPE "levels": 30,000 keys in sorted batches (flushed memtables pushed
// down to level 2), overwrites and deletions compacted into them, then four
// flushed files of overwrites, deletions and new keys (one lands in level
// 1, three stay in level 0).  SHAPE "chain": 1,000 keys in one level-2
// table, numbers 100 and 900 overwritten in a level-1 table, 200 and 800 in
// a level-0 table, so that looking up 500 visits all three tables.
//
// `get` opens the database with a small block cache and looks up GETS
// random numbers (present, overwritten, deleted, never written, past the
// end) on THREADS threads; `lookup` looks up the NUMBERs in order, with
// ReadOptions::fill_cache off (a block read once is read again), at
// each `evict` drops the database's files from the page cache, and at each
// `settle:N` waits up to 10 s for the last page of N table files to be in
// the page cache (read-ahead carried out by foreactor's own thread), and at
// each `stats` writes foreactor's statistics so far (foreactor_write_stats)
// to the file PLUGIN_TEST_STATS names (linked with the plugin only).  Both
// check every status and value against the model the shape determines,
// print "gets N found F mismatches M" (and, for `get`, the file listing to
// stderr) and exit with status 0 iff M == 0.  Memory-mapped table reads are
// off, so tables are read with pread; with PLUGIN_TEST_NO_OPEN_TABLE_FILES
// set, LevelDB keeps no table file open (it opens and closes one per read).
// With PLUGIN_TEST_HEAP_GROWTH set, the summary line ends with
// "heap_growth B": the bytes of malloc's heap in use after the Gets minus
// before them (mallinfo2), which the plugin's records must not change.
#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "leveldb/cache.h"
#include "leveldb/db.h"
#include "leveldb/filter_policy.h"
#include "leveldb/options.h"
#include "support/no_mmap_reads.h"

namespace {

std::string Key(int number) {
  char key[32];
  std::snprintf(key, sizeof key, "key%08d", number);
  return key;
}

// Hardly compressible, so that tables have the size the key count says.
std::string Value(int number, int version) {
  std::string value = "v" + std::to_string(version) + "-" + std::to_string(number) + "-";
  std::minstd_rand random(static_cast<unsigned>(number * 31 + version));
  while (value.size() < 100) value.push_back(static_cast<char>('!' + random() % 90));
  return value;
}

// The writes of `build`, in order; kCompactAll and kFlush are where it
// compacts everything or forces the memtable into a table file.
struct Step {
  enum Kind { kPut, kDelete, kCompactAll, kFlush } kind;
  int number = 0;
  int version = 0;
};

std::vector<Step> Steps(const std::string& shape) {
  std::vector<Step> steps;
  if (shape == "chain") {
    for (int n = 0; n < 2000; n += 2) steps.push_back({Step::kPut, n, 0});
    steps.push_back({Step::kCompactAll});
    steps.insert(steps.end(), {{Step::kPut, 100, 1}, {Step::kPut, 900, 1}, {Step::kFlush}});
    steps.insert(steps.end(), {{Step::kPut, 200, 2}, {Step::kPut, 800, 2}, {Step::kFlush}});
    return steps;
  }
  constexpr int kKeys = 30000;
  std::mt19937 random(7);
  for (int i = 0; i < kKeys; ++i) steps.push_back({Step::kPut, 2 * i, 0});
  steps.push_back({Step::kFlush});
  for (int i = 0; i < kKeys / 4; ++i) {
    const int number = 2 * static_cast<int>(random() % kKeys);
    steps.push_back({random() % 3 == 0 ? Step::kDelete : Step::kPut, number, 1});
  }
  steps.push_back({Step::kCompactAll});
  for (int file = 0; file < 4; ++file) {
    for (int i = 0; i < 400; ++i) {
      const int number = 2 * static_cast<int>(random() % (kKeys + 200));  // some past the end
      steps.push_back({random() % 4 == 0 ? Step::kDelete : Step::kPut, number, 2 + file});
    }
    steps.push_back({Step::kFlush});
  }
  return steps;
}

std::map<int, std::string> Model(const std::string& shape) {
  std::map<int, std::string> model;  // number -> value; absent: not found
  for (const Step& step : Steps(shape)) {
    if (step.kind == Step::kPut) model[step.number] = Value(step.number, step.version);
    if (step.kind == Step::kDelete) model.erase(step.number);
  }
  return model;
}

// The options of every run; the database owns nothing of them.
struct DatabaseOptions {
  explicit DatabaseOptions(bool bloom)
      : cache(leveldb::NewLRUCache(32 << 10)),  // small: block cache hits and misses
        policy(bloom ? leveldb::NewBloomFilterPolicy(10) : nullptr) {
    options.create_if_missing = true;
    options.write_buffer_size = 256 << 10;
    options.max_file_size = 1 << 20;  // the least LevelDB accepts
    options.block_size = 1024;
    options.block_cache = cache.get();
    options.filter_policy = policy.get();
    options.compression = bloom ? leveldb::kSnappyCompression : leveldb::kNoCompression;
  }
  std::unique_ptr<leveldb::Cache> cache;
  std::unique_ptr<const leveldb::FilterPolicy> policy;
  leveldb::Options options;
};

std::unique_ptr<leveldb::DB> OpenOrExit(const leveldb::Options& options, const std::string& dir) {
  leveldb::DB* db = nullptr;
  const leveldb::Status status = leveldb::DB::Open(options, dir, &db);
  if (!status.ok()) {
    std::fprintf(stderr, "open %s: %s\n", dir.c_str(), status.ToString().c_str());
    std::exit(2);
  }
  return std::unique_ptr<leveldb::DB>(db);
}

void PrintListing(leveldb::DB* db) {
  std::string listing;
  db->GetProperty("leveldb.sstables", &listing);
  std::fprintf(stderr, "%s", listing.c_str());
}

int Build(const std::string& dir, const std::string& shape, bool bloom) {
  DatabaseOptions options(bloom);
  std::unique_ptr<leveldb::DB> db = OpenOrExit(options.options, dir);
  const leveldb::Slice last_key("~");
  for (const Step& step : Steps(shape)) {
    leveldb::Status status;
    if (step.kind == Step::kPut)
      status = db->Put({}, Key(step.number), Value(step.number, step.version));
    if (step.kind == Step::kDelete) status = db->Delete({}, Key(step.number));
    if (step.kind == Step::kCompactAll) db->CompactRange(nullptr, nullptr);
    // A compaction of a range no file holds only flushes the memtable.
    if (step.kind == Step::kFlush) db->CompactRange(&last_key, &last_key);
    if (!status.ok()) {
      std::fprintf(stderr, "write: %s\n", status.ToString().c_str());
      return 2;
    }
  }
  PrintListing(db.get());
  return 0;
}

// In a list of numbers to look up: drop the database's files from the page
// cache here (fdatasync, then POSIX_FADV_DONTNEED; LevelDB's own descriptors
// stay open), and wait, at most kSettleSeconds, until no page of a table
// file is cached.  The kernel keeps dirty pages (a database just built) and
// pages of a read in flight (a read-ahead the plugin started and no Get
// read) through DONTNEED: without the wait, which blocks the next Gets find
// cold would depend on timing.
constexpr int kEvict = -1;
// In a list of numbers to look up, kSettle - N (N >= 1, "settle:N" on the
// command line): wait until the last page of N table files is in the page
// cache, at most kSettleSeconds.  The plugin's read-ahead hints are carried
// out by a thread of foreactor's, which the process's exit right after its
// last Get would cut short on a loaded machine.
constexpr int kSettle = -1000;
constexpr int kSettleSeconds = 10;
// In a list of numbers to look up: write foreactor's statistics so far to
// the file PLUGIN_TEST_STATS names, so that a test can tell the counts of
// the Gets after this point from those of the Gets before it in one process.
constexpr int kWriteStats = -2;

// The pages of `fd`'s bytes [offset, offset + length) that the page cache
// holds (mincore(2) of a shared mapping); 0 when they cannot be mapped.
// `offset` is a multiple of the page size.
size_t CachedPages(int fd, off_t offset, size_t length) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* mapping = mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, offset);
  if (mapping == MAP_FAILED) return 0;
  std::vector<unsigned char> resident((length + page - 1) / page);
  size_t cached = 0;
  if (mincore(mapping, length, resident.data()) == 0) {
    for (unsigned char flags : resident) cached += flags & 1;
  }
  munmap(mapping, length);
  return cached;
}

// Calls visit(fd, size) for each non-empty table file of `dir`.
template <class Visit>
void ForEachTable(const std::string& dir, Visit&& visit) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".ldb") continue;
    const int fd = open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat status;
    if (fstat(fd, &status) == 0 && status.st_size > 0) visit(fd, status.st_size);
    close(fd);
  }
}

// Table files of `dir` whose last page is in the page cache.
int TablesWithTailCached(const std::string& dir) {
  const off_t page = sysconf(_SC_PAGESIZE);
  int cached = 0;
  ForEachTable(dir, [&](int fd, off_t size) {
    if (CachedPages(fd, (size - 1) / page * page, static_cast<size_t>(page)) > 0) cached++;
  });
  return cached;
}

void Settle(const std::string& dir, int tables) {
  for (int waited_ms = 0; waited_ms < kSettleSeconds * 1000; waited_ms += 10) {
    if (TablesWithTailCached(dir) >= tables) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Defined when linked with libforeactor.so (foreactor/foreactor.h).
extern "C" [[gnu::weak]] int foreactor_write_stats(FILE* out);

// Writes foreactor's statistics to the file PLUGIN_TEST_STATS names; false
// when there is no such file or no foreactor to ask.
bool WriteStats() {
  const char* path = std::getenv("PLUGIN_TEST_STATS");
  if (path == nullptr || foreactor_write_stats == nullptr) return false;
  FILE* out = std::fopen(path, "w");
  if (out == nullptr) return false;
  const bool written = foreactor_write_stats(out) == 0;
  return std::fclose(out) == 0 && written;
}

void Evict(const std::string& dir) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const int fd = open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kSettleSeconds);
  while (std::chrono::steady_clock::now() < deadline) {
    size_t cached = 0;
    ForEachTable(dir, [&](int fd, off_t size) {
      if (CachedPages(fd, 0, static_cast<size_t>(size)) == 0) return;
      posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      cached += CachedPages(fd, 0, static_cast<size_t>(size));
    });
    if (cached == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::fprintf(stderr, "evict: table pages still cached after %d s\n", kSettleSeconds);
}

// Looks up numbers(thread) on `threads` threads and checks each result.
template <class Numbers>
int Lookups(const std::string& dir, const std::string& shape, bool bloom, int threads,
            bool fill_cache, Numbers&& numbers) {
  leveldb::ReadOptions read_options;
  read_options.fill_cache = fill_cache;
  const std::map<int, std::string> model = Model(shape);
  DatabaseOptions options(bloom);
  options.options.create_if_missing = false;
  std::unique_ptr<leveldb::DB> db = OpenOrExit(options.options, dir);
  const size_t heap_before = mallinfo2().uordblks;
  std::vector<long> gets(static_cast<size_t>(threads)), found(gets.size()), mismatches(gets.size());
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int number : numbers(t)) {
        if (number == kEvict) {
          Evict(dir);
          continue;
        }
        if (number <= kSettle - 1) {
          Settle(dir, kSettle - number);
          continue;
        }
        if (number == kWriteStats) {
          if (!WriteStats()) {
            std::fprintf(stderr, "stats: cannot write PLUGIN_TEST_STATS\n");
            mismatches[static_cast<size_t>(t)]++;
          }
          continue;
        }
        std::string value;
        const leveldb::Status status = db->Get(read_options, Key(number), &value);
        auto expected = model.find(number);
        const bool right = expected == model.end() ? status.IsNotFound()
                                                   : status.ok() && value == expected->second;
        if (!right) {
          std::fprintf(stderr, "mismatch: %s: %s\n", Key(number).c_str(),
                       status.ToString().c_str());
          mismatches[static_cast<size_t>(t)]++;
        }
        gets[static_cast<size_t>(t)]++;
        if (status.ok()) found[static_cast<size_t>(t)]++;
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  const long heap_growth = static_cast<long>(mallinfo2().uordblks - heap_before);
  long total[3] = {0, 0, 0};
  for (size_t t = 0; t < gets.size(); ++t) {
    total[0] += gets[t];
    total[1] += found[t];
    total[2] += mismatches[t];
  }
  PrintListing(db.get());
  std::printf("gets %ld found %ld mismatches %ld", total[0], total[1], total[2]);
  if (std::getenv("PLUGIN_TEST_HEAP_GROWTH") != nullptr)
    std::printf(" heap_growth %ld", heap_growth);
  std::printf("\n");
  return total[2] == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  leveldb_case_study::DisableMmapTableReads();
  if (std::getenv("PLUGIN_TEST_NO_OPEN_TABLE_FILES") != nullptr)
    leveldb_case_study::CloseTableFilesAfterEachRead();
  const std::vector<std::string> args(argv + 1, argv + argc);
  const bool known_shape = args.size() >= 4 && (args[2] == "levels" || args[2] == "chain") &&
                           (args[3] == "bloom" || args[3] == "nobloom");
  const std::string mode = known_shape ? args[0] : "";
  const bool bloom = known_shape && args[3] == "bloom";
  if (mode == "build" && args.size() == 4) return Build(args[1], args[2], bloom);
  if (mode == "get" && args.size() == 6) {
    const int gets = std::stoi(args[4]), threads = std::stoi(args[5]);
    const int range = args[2] == "chain" ? 2100 : 60800;
    std::mt19937 random(7919);
    std::vector<int> all;  // the same lookups for any number of threads
    for (int i = 0; i < gets; ++i) all.push_back(static_cast<int>(random() % range));
    return Lookups(args[1], args[2], bloom, threads, true, [&](int thread) {
      std::vector<int> numbers;
      for (size_t i = static_cast<size_t>(thread); i < all.size();
           i += static_cast<size_t>(threads)) {
        numbers.push_back(all[i]);
      }
      return numbers;
    });
  }
  if (mode == "lookup" && args.size() >= 5) {
    std::vector<int> numbers;
    for (size_t i = 4; i < args.size(); ++i)
      numbers.push_back(args[i] == "evict"               ? kEvict
                        : args[i] == "stats"             ? kWriteStats
                        : args[i].starts_with("settle:") ? kSettle - std::stoi(args[i].substr(7))
                                                         : std::stoi(args[i]));
    return Lookups(args[1], args[2], bloom, 1, false, [&](int) { return numbers; });
  }
  std::fprintf(stderr,
               "usage: %s build DIR levels|chain bloom|nobloom\n"
               "       %s get DIR levels|chain bloom|nobloom GETS THREADS\n"
               "       %s lookup DIR levels|chain bloom|nobloom NUMBER|evict|settle:N|stats...\n",
               argv[0], argv[0], argv[0]);
  return 2;
}
