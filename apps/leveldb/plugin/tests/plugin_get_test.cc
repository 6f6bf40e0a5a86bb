// plugin_get_test.cc: LevelDB Gets checked against a model, for the plugin.
//
//   plugin_get_test build DIR SEED (bloom|nobloom)   make the database
//   plugin_get_test get DIR SEED (bloom|nobloom) GETS THREADS
//   plugin_get_test build-small DIR (bloom|nobloom)  one table of 1000 keys
//   plugin_get_test lookup DIR (bloom|nobloom) NUMBER...
//
// `build` writes a database whose keys lie in several levels: sorted batches
// (flushed memtables pushed down to level 2), then overwrites and deletions
// compacted into level 1, then a few level-0 files of overwrites, deletions
// and new keys.  `get` opens it with a small block cache and looks up GETS
// keys (present, overwritten, deleted, never written; inside and outside
// the key range) on THREADS threads, checking each status and value against
// the model the seed determines.  It prints "gets N found F mismatches M"
// and the database's file listing to stderr; exit status 0 iff M == 0.
// `lookup` looks up "key%08d" of each NUMBER in the small database (even
// numbers below 2000 are present) and prints "gets N mismatches M".
// Memory-mapped table reads are off, so tables are read with pread.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
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
#include "leveldb/write_batch.h"
#include "support/no_mmap_reads.h"

namespace {

constexpr int kKeys = 30000;

std::string Key(int i) {
  char key[32];
  std::snprintf(key, sizeof key, "key%08d", i * 2);  // odd numbers are never written
  return key;
}

// Hardly compressible, so that the tables have the size the key count says.
std::string Value(int i, int version, size_t size) {
  std::string value = "v" + std::to_string(version) + "-" + std::to_string(i) + "-";
  std::minstd_rand random(static_cast<unsigned>(i * 31 + version));
  while (value.size() < size) value.push_back(static_cast<char>('!' + random() % 90));
  return value;
}

// The operations of `build`, in order, as the model sees them; `flush`
// marks where build compacts or forces a memtable out.
struct Step {
  enum Kind { kPut, kDelete, kCompactAll, kFlush } kind;
  int key;
  int version;
};

std::vector<Step> Operations(unsigned seed) {
  std::mt19937 random(seed);
  std::vector<Step> steps;
  for (int i = 0; i < kKeys; ++i) steps.push_back({Step::kPut, i, 0});  // sorted: level 2
  steps.push_back({Step::kFlush, 0, 0});
  for (int i = 0; i < kKeys / 4; ++i) {
    const int key = static_cast<int>(random() % kKeys);
    steps.push_back({random() % 3 == 0 ? Step::kDelete : Step::kPut, key, 1});
  }
  steps.push_back({Step::kCompactAll, 0, 0});  // level 0 -> level 1
  for (int file = 0; file < 4; ++file) {  // one level-1 file, then three level-0 files
    for (int i = 0; i < 400; ++i) {
      const int key = static_cast<int>(random() % (kKeys + 200));  // some beyond the range
      steps.push_back({random() % 4 == 0 ? Step::kDelete : Step::kPut, key, 2 + file});
    }
    steps.push_back({Step::kFlush, 0, 0});
  }
  return steps;
}

leveldb::Options MakeOptions(bool bloom) {
  leveldb::Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 256 << 10;
  options.max_file_size = 128 << 10;
  options.block_size = 1024;
  options.block_cache = leveldb::NewLRUCache(32 << 10);  // small: hits and misses
  options.filter_policy = bloom ? leveldb::NewBloomFilterPolicy(10) : nullptr;
  options.compression = bloom ? leveldb::kSnappyCompression : leveldb::kNoCompression;
  return options;
}

void Check(const leveldb::Status& status, const char* what) {
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
    std::exit(2);
  }
}

// Forces the memtable into a table file: a key-range compaction of one
// key, which LevelDB starts with a memtable flush.
void FlushMemtable(leveldb::DB* db) {
  const leveldb::Slice key("~");
  db->CompactRange(&key, &key);
}

int Build(const std::string& dir, unsigned seed, bool bloom) {
  leveldb::Options options = MakeOptions(bloom);
  leveldb::DB* raw = nullptr;
  Check(leveldb::DB::Open(options, dir, &raw), "open");
  std::unique_ptr<leveldb::DB> db(raw);
  for (const Step& step : Operations(seed)) {
    switch (step.kind) {
      case Step::kPut:
        Check(db->Put({}, Key(step.key), Value(step.key, step.version, 100)), "put");
        break;
      case Step::kDelete:
        Check(db->Delete({}, Key(step.key)), "delete");
        break;
      case Step::kCompactAll:
        db->CompactRange(nullptr, nullptr);
        break;
      case Step::kFlush:
        FlushMemtable(db.get());
        break;
    }
  }
  std::string listing;
  db->GetProperty("leveldb.sstables", &listing);
  std::fprintf(stderr, "%s", listing.c_str());
  db.reset();
  delete options.block_cache;
  delete options.filter_policy;
  return 0;
}

int Get(const std::string& dir, unsigned seed, bool bloom, int gets, int threads) {
  std::map<int, std::string> model;  // key -> value; absent: not found
  for (const Step& step : Operations(seed)) {
    if (step.kind == Step::kPut) model[step.key] = Value(step.key, step.version, 100);
    if (step.kind == Step::kDelete) model.erase(step.key);
  }
  leveldb::Options options = MakeOptions(bloom);
  options.create_if_missing = false;
  leveldb::DB* raw = nullptr;
  Check(leveldb::DB::Open(options, dir, &raw), "open");
  std::unique_ptr<leveldb::DB> db(raw);
  std::vector<long> found(static_cast<size_t>(threads)), mismatches(static_cast<size_t>(threads));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937 random(seed * 7919 + static_cast<unsigned>(t));
      for (int i = t; i < gets; i += threads) {
        // Even numbers: keys of the model's range (present, deleted or
        // overwritten); odd: never written; beyond kKeys + 200: past the end.
        const int number = static_cast<int>(random() % (2 * (kKeys + 300)));
        char key[32];
        std::snprintf(key, sizeof key, "key%08d", number);
        std::string value;
        const leveldb::Status status = db->Get({}, key, &value);
        auto expected = number % 2 == 0 ? model.find(number / 2) : model.end();
        const bool right = expected == model.end()
                               ? status.IsNotFound()
                               : status.ok() && value == expected->second;
        if (!right) {
          std::fprintf(stderr, "mismatch: %s: %s\n", key, status.ToString().c_str());
          mismatches[static_cast<size_t>(t)]++;
        }
        if (status.ok()) found[static_cast<size_t>(t)]++;
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  long total_found = 0, total_mismatches = 0;
  for (int t = 0; t < threads; ++t) {
    total_found += found[static_cast<size_t>(t)];
    total_mismatches += mismatches[static_cast<size_t>(t)];
  }
  std::string listing;
  db->GetProperty("leveldb.sstables", &listing);
  std::fprintf(stderr, "%s", listing.c_str());
  std::printf("gets %d found %ld mismatches %ld\n", gets, total_found, total_mismatches);
  db.reset();
  delete options.block_cache;
  delete options.filter_policy;
  return total_mismatches == 0 ? 0 : 1;
}

// One table file of kSmallKeys keys (all in one level).
constexpr int kSmallKeys = 1000;

int BuildSmall(const std::string& dir, bool bloom) {
  leveldb::Options options = MakeOptions(bloom);
  leveldb::DB* raw = nullptr;
  Check(leveldb::DB::Open(options, dir, &raw), "open");
  std::unique_ptr<leveldb::DB> db(raw);
  for (int i = 0; i < kSmallKeys; ++i) Check(db->Put({}, Key(i), Value(i, 0, 100)), "put");
  db->CompactRange(nullptr, nullptr);
  db.reset();
  delete options.block_cache;
  delete options.filter_policy;
  return 0;
}

// Looks up "key%08d" of each number in the small database, in order.
int Lookup(const std::string& dir, bool bloom, const std::vector<int>& numbers) {
  leveldb::Options options = MakeOptions(bloom);
  leveldb::DB* raw = nullptr;
  Check(leveldb::DB::Open(options, dir, &raw), "open");
  std::unique_ptr<leveldb::DB> db(raw);
  long mismatches = 0;
  for (int number : numbers) {
    char key[32];
    std::snprintf(key, sizeof key, "key%08d", number);
    std::string value;
    const leveldb::Status status = db->Get({}, key, &value);
    const bool present = number % 2 == 0 && number / 2 < kSmallKeys;
    if (present ? !(status.ok() && value == Value(number / 2, 0, 100)) : !status.IsNotFound()) {
      std::fprintf(stderr, "mismatch: %s: %s\n", key, status.ToString().c_str());
      mismatches++;
    }
  }
  std::printf("gets %zu mismatches %ld\n", numbers.size(), mismatches);
  db.reset();
  delete options.block_cache;
  delete options.filter_policy;
  return mismatches == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  leveldb_case_study::DisableMmapTableReads();
  const std::string mode = argc > 1 ? argv[1] : "";
  const std::vector<std::string> args(argv + std::min(argc, 2), argv + argc);
  if (mode == "build" && args.size() == 3) return Build(args[0], std::stoul(args[1]), args[2] == "bloom");
  if (mode == "get" && args.size() == 5) {
    return Get(args[0], std::stoul(args[1]), args[2] == "bloom", std::stoi(args[3]), std::stoi(args[4]));
  }
  if (mode == "build-small" && args.size() == 2) return BuildSmall(args[0], args[1] == "bloom");
  if (mode == "lookup" && args.size() >= 3) {
    std::vector<int> numbers;
    for (size_t i = 2; i < args.size(); ++i) numbers.push_back(std::stoi(args[i]));
    return Lookup(args[0], args[1] == "bloom", numbers);
  }
  std::fprintf(stderr,
               "usage: %s build DIR SEED bloom|nobloom\n"
               "       %s get DIR SEED bloom|nobloom GETS THREADS\n"
               "       %s build-small DIR bloom|nobloom\n"
               "       %s lookup DIR bloom|nobloom NUMBER...\n",
               argv[0], argv[0], argv[0], argv[0]);
  return 2;
}
