// bptree: command-line tool for bptree files.  Run without arguments for
// the usage text.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "bulk_loader.h"
#include "tree.h"

namespace {

constexpr char kUsage[] =
    "usage:\n"
    "  bptree load FILE --count N [--degree D] [--seed S] [--batch L] [--direct]\n"
    "      create FILE from N distinct random keys (mt19937_64 seeded with S, default 1),\n"
    "      sorted and bulk loaded with degree D (3..510, default 510), L leaf pages per\n"
    "      write batch (default 1024); the value of key k is k * 0x9e3779b97f4a7c15 mod 2^64\n"
    "  bptree insert FILE --count N [--degree D] [--seed S] [--order-seed R] [--direct]\n"
    "      create FILE with the same N keys and values as load, put one by one in a random\n"
    "      order (Fisher-Yates with mt19937_64 seeded with R, default 2): leaf splits append\n"
    "      pages, so the leaves end up scattered over the file\n"
    "      load and insert print the milliseconds they took and started_ns, the\n"
    "      CLOCK_MONOTONIC time they started at (a caller may time them to the process's end)\n"
    "  bptree scan FILE LOW HIGH [--repeat N] [--direct]\n"
    "      print the count of pairs with LOW <= key <= HIGH, their checksum (64-bit FNV-1a\n"
    "      over the little-endian bytes of each key then value, in key order) and the\n"
    "      milliseconds the scan took; --repeat scans N times (default 1) in this process,\n"
    "      one line each (after the first, the tree's inner pages are in its own cache)\n"
    "  bptree get FILE KEY [--direct]          print the value of KEY (exit status 1 if absent)\n"
    "  bptree put FILE KEY VALUE [--direct]    insert KEY or replace its value\n"
    "  bptree stats FILE [--check] [--direct]  print the meta page; --check verifies the whole\n"
    "      tree\n"
    "--direct opens FILE with O_DIRECT: page reads and writes bypass the kernel's page cache.\n"
    "Numbers are decimal or 0x-prefixed hexadecimal.\n";

constexpr uint64_t kValueMultiplier = 0x9e3779b97f4a7c15;

int UsageError(const char* message) {
  std::fprintf(stderr, "bptree: %s\n%s", message, kUsage);
  return 2;
}

int Fail(const bptree::Status& status) {
  std::fprintf(stderr, "bptree: %s\n", status.ToString().c_str());
  return 1;
}

// Parses an unsigned 64-bit number, decimal or 0x-hexadecimal.
bool ParseU64(const char* text, uint64_t* number) {
  if (text == nullptr || *text == '\0' || *text == '-' || *text == '+' || *text == ' ') {
    return false;
  }
  errno = 0;
  char* end = nullptr;
  unsigned long long parsed = std::strtoull(text, &end, 0);
  if (errno != 0 || *end != '\0') return false;
  *number = parsed;
  return true;
}

// Removes every "--direct" from argv[0 .. *argc) and returns whether there
// was one.
bool TakeDirectFlag(int* argc, char** argv) {
  bool found = false;
  int kept = 0;
  for (int i = 0; i < *argc; ++i) {
    if (std::string_view(argv[i]) == "--direct") {
      found = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  return found;
}

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// `time` in nanoseconds of CLOCK_MONOTONIC (steady_clock's clock on Linux),
// which other processes of the machine read too.
int64_t MonotonicNanoseconds(std::chrono::steady_clock::time_point time) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

// 64-bit FNV-1a over the little-endian bytes of each key, then its value.
class PairChecksum {
 public:
  void Add(const bptree_pair& pair) {
    AddWord(pair.key);
    AddWord(pair.value);
  }
  uint64_t value() const { return hash_; }

 private:
  void AddWord(uint64_t word) {
    for (int byte = 0; byte < 8; ++byte) {
      hash_ ^= (word >> (8 * byte)) & 0xff;
      hash_ *= 0x100000001b3;
    }
  }
  uint64_t hash_ = 0xcbf29ce484222325;
};

// Sorted distinct keys, each paired with its derived value.
class GeneratedPairSource : public bptree::SortedPairSource {
 public:
  explicit GeneratedPairSource(const std::vector<uint64_t>& keys) : keys_(keys) {}
  bool Next(uint64_t* key, uint64_t* value) override {
    if (position_ == keys_.size()) return false;
    *key = keys_[position_++];
    *value = *key * kValueMultiplier;
    return true;
  }

 private:
  const std::vector<uint64_t>& keys_;
  size_t position_ = 0;
};

std::vector<uint64_t> DistinctRandomKeys(uint64_t count, uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::vector<uint64_t> keys;
  keys.reserve(count);
  while (keys.size() < count) {
    while (keys.size() < count) keys.push_back(generator());
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  }
  return keys;
}

int RunLoad(int argc, char** argv) {
  bptree::BulkLoader::Options options;
  options.direct_io = TakeDirectFlag(&argc, argv);
  if (argc < 1) return UsageError("load needs FILE");
  const std::string path = argv[0];
  options.degree = bptree::kMaxDegree;
  uint64_t count = 0, seed = 1;
  bool have_count = false;
  for (int i = 1; i < argc; i += 2) {
    std::string_view option = argv[i];
    uint64_t number = 0;
    if (i + 1 >= argc || !ParseU64(argv[i + 1], &number)) {
      return UsageError("load options take a number");
    }
    if (option == "--count") {
      count = number;
      have_count = true;
    } else if (option == "--degree") {
      if (number > bptree::kMaxDegree) return UsageError("--degree is at most 510");
      options.degree = static_cast<uint32_t>(number);
    } else if (option == "--seed") {
      seed = number;
    } else if (option == "--batch") {
      options.leaves_per_batch = static_cast<size_t>(number);
    } else {
      return UsageError("unknown load option");
    }
  }
  if (!have_count) return UsageError("load needs --count N");

  const std::vector<uint64_t> keys = DistinctRandomKeys(count, seed);
  GeneratedPairSource source(keys);
  bptree::TreeMeta meta;
  const auto start = std::chrono::steady_clock::now();
  bptree::Status status = bptree::BulkLoader::Load(path, options, &source, &meta);
  const double elapsed_ms = MillisecondsSince(start);
  if (!status.ok()) return Fail(status);
  std::printf("loaded %" PRIu64 " pairs into %s: degree %u, height %u, %" PRIu64 " leaves, %" PRIu64
              " pages, elapsed_ms %.3f started_ns %" PRId64 "\n",
              meta.entry_count, path.c_str(), meta.degree, meta.height, meta.leaf_count,
              meta.page_count, elapsed_ms, MonotonicNanoseconds(start));
  return 0;
}

// Fisher-Yates shuffle driven by mt19937_64 (the same order with every
// standard library, unlike std::shuffle).
void ShuffleKeys(uint64_t seed, std::vector<uint64_t>* keys) {
  std::mt19937_64 generator(seed);
  for (size_t i = keys->size(); i > 1; --i) {
    const size_t j = static_cast<size_t>(generator() % i);
    std::swap((*keys)[i - 1], (*keys)[j]);
  }
}

int RunInsert(int argc, char** argv) {
  bptree::Tree::Options tree_options;
  tree_options.direct_io = TakeDirectFlag(&argc, argv);
  // Every inner node of a 1.6M-key tree fits (degree 64: about 800).
  tree_options.inner_cache_pages = 4096;
  if (argc < 1) return UsageError("insert needs FILE");
  const std::string path = argv[0];
  uint32_t degree = bptree::kMaxDegree;
  uint64_t count = 0, seed = 1, order_seed = 2;
  bool have_count = false;
  for (int i = 1; i < argc; i += 2) {
    std::string_view option = argv[i];
    uint64_t number = 0;
    if (i + 1 >= argc || !ParseU64(argv[i + 1], &number)) {
      return UsageError("insert options take a number");
    }
    if (option == "--count") {
      count = number;
      have_count = true;
    } else if (option == "--degree") {
      if (number > bptree::kMaxDegree) return UsageError("--degree is at most 510");
      degree = static_cast<uint32_t>(number);
    } else if (option == "--seed") {
      seed = number;
    } else if (option == "--order-seed") {
      order_seed = number;
    } else {
      return UsageError("unknown insert option");
    }
  }
  if (!have_count) return UsageError("insert needs --count N");

  std::vector<uint64_t> keys = DistinctRandomKeys(count, seed);
  ShuffleKeys(order_seed, &keys);
  std::unique_ptr<bptree::Tree> tree;
  const auto start = std::chrono::steady_clock::now();
  bptree::Status status = bptree::Tree::Create(path, degree, tree_options, &tree);
  for (size_t i = 0; status.ok() && i < keys.size(); ++i) {
    status = tree->Put(keys[i], keys[i] * kValueMultiplier);
  }
  const double elapsed_ms = MillisecondsSince(start);
  if (!status.ok()) return Fail(status);
  const bptree::TreeMeta& meta = tree->meta();
  std::printf("inserted %" PRIu64 " pairs into %s: degree %u, height %u, %" PRIu64
              " leaves, %" PRIu64 " pages, elapsed_ms %.3f started_ns %" PRId64 "\n",
              meta.entry_count, path.c_str(), meta.degree, meta.height, meta.leaf_count,
              meta.page_count, elapsed_ms, MonotonicNanoseconds(start));
  return 0;
}

bptree::Status OpenTree(const char* path, bool direct_io, std::unique_ptr<bptree::Tree>* tree) {
  bptree::Tree::Options options;
  options.direct_io = direct_io;
  return bptree::Tree::Open(path, options, tree);
}

int RunScan(int argc, char** argv) {
  const bool direct_io = TakeDirectFlag(&argc, argv);
  uint64_t repeat = 1;
  if (argc == 5 && std::string_view(argv[3]) == "--repeat") {
    if (!ParseU64(argv[4], &repeat) || repeat == 0) return UsageError("--repeat needs N >= 1");
    argc -= 2;
  }
  uint64_t low = 0, high = 0;
  if (argc != 3 || !ParseU64(argv[1], &low) || !ParseU64(argv[2], &high)) {
    return UsageError("scan needs FILE LOW HIGH");
  }
  std::unique_ptr<bptree::Tree> tree;
  bptree::Status status = OpenTree(argv[0], direct_io, &tree);
  if (!status.ok()) return Fail(status);
  for (uint64_t scan = 0; scan < repeat; ++scan) {
    std::vector<bptree_pair> pairs;
    double leaf_loop_ms = 0;
    const auto start = std::chrono::steady_clock::now();
    status = tree->Scan(low, high, &pairs, &leaf_loop_ms);
    const double elapsed_ms = MillisecondsSince(start);
    if (!status.ok()) return Fail(status);
    PairChecksum checksum;
    for (const bptree_pair& pair : pairs) checksum.Add(pair);
    std::printf("count %zu checksum 0x%016" PRIx64 " elapsed_ms %.3f leaf_loop_ms %.3f\n",
                pairs.size(), checksum.value(), elapsed_ms, leaf_loop_ms);
  }
  return 0;
}

int RunGet(int argc, char** argv) {
  const bool direct_io = TakeDirectFlag(&argc, argv);
  uint64_t key = 0;
  if (argc != 2 || !ParseU64(argv[1], &key)) return UsageError("get needs FILE KEY");
  std::unique_ptr<bptree::Tree> tree;
  bptree::Status status = OpenTree(argv[0], direct_io, &tree);
  if (!status.ok()) return Fail(status);
  uint64_t value = 0;
  status = tree->Get(key, &value);
  if (!status.ok()) return Fail(status);
  std::printf("%" PRIu64 "\n", value);
  return 0;
}

int RunPut(int argc, char** argv) {
  const bool direct_io = TakeDirectFlag(&argc, argv);
  uint64_t key = 0, value = 0;
  if (argc != 3 || !ParseU64(argv[1], &key) || !ParseU64(argv[2], &value)) {
    return UsageError("put needs FILE KEY VALUE");
  }
  std::unique_ptr<bptree::Tree> tree;
  bptree::Status status = OpenTree(argv[0], direct_io, &tree);
  if (!status.ok()) return Fail(status);
  status = tree->Put(key, value);
  if (!status.ok()) return Fail(status);
  return 0;
}

int RunStats(int argc, char** argv) {
  const bool direct_io = TakeDirectFlag(&argc, argv);
  const bool check = argc == 2 && std::string_view(argv[1]) == "--check";
  if (argc != 1 && !check) return UsageError("stats needs FILE [--check]");
  std::unique_ptr<bptree::Tree> tree;
  bptree::Status status = OpenTree(argv[0], direct_io, &tree);
  if (!status.ok()) return Fail(status);
  const bptree::TreeMeta& meta = tree->meta();
  std::printf("file %s\n", tree->path().c_str());
  std::printf("page_size %zu\n", bptree::kPageSize);
  std::printf("degree %u\n", meta.degree);
  std::printf("height %u\n", meta.height);
  std::printf("entries %" PRIu64 "\n", meta.entry_count);
  std::printf("pages %" PRIu64 "\n", meta.page_count);
  std::printf("leaves %" PRIu64 "\n", meta.leaf_count);
  std::printf("inner_nodes %" PRIu64 "\n", meta.page_count - 1 - meta.leaf_count);
  std::printf("root_page %" PRIu64 "\n", meta.root_page);
  std::printf("first_leaf_page %" PRIu64 "\n", meta.first_leaf_page);
  if (check) {
    status = tree->CheckInvariants();
    if (!status.ok()) return Fail(status);
    std::printf("check ok\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return UsageError("no command");
  const std::string_view command = argv[1];
  if (command == "load") return RunLoad(argc - 2, argv + 2);
  if (command == "insert") return RunInsert(argc - 2, argv + 2);
  if (command == "scan") return RunScan(argc - 2, argv + 2);
  if (command == "get") return RunGet(argc - 2, argv + 2);
  if (command == "put") return RunPut(argc - 2, argv + 2);
  if (command == "stats") return RunStats(argc - 2, argv + 2);
  if (command == "help" || command == "--help" || command == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  return UsageError("unknown command");
}
