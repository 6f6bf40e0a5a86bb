// Tests of the tree: randomized against std::map (put, get, scan, bulk
// load, reopen), buffered and with direct I/O (O_DIRECT); a tree grown by
// inserts in random order, whose leaves are scattered over the file; and
// the error paths.  The same binary runs with foreactor's plugins linked in
// and foreactor on, for each engine (plugins/CMakeLists.txt).

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "bulk_loader.h"
#include "node.h"
#include "test_support.h"
#include "tree.h"

namespace {

using bptree::BulkLoader;
using bptree::Status;
using bptree::Tree;
using Model = std::map<uint64_t, uint64_t>;

constexpr uint64_t kMaxKey = UINT64_MAX;

Tree::Options CacheOptions(size_t pages, bool direct_io = false) {
  Tree::Options options;
  options.inner_cache_pages = pages;
  options.direct_io = direct_io;
  return options;
}

// Skips the current test when direct I/O is asked for and the file system
// of the test directory refuses O_DIRECT (e.g. an old tmpfs as TMPDIR).
#define SKIP_IF_NO_DIRECT_IO(directory, direct_io)                         \
  do {                                                                     \
    if ((direct_io) && !bptree_test::SupportsDirectIo(directory)) {        \
      GTEST_SKIP() << "the test directory's file system refuses O_DIRECT"; \
    }                                                                      \
  } while (0)

std::vector<bptree_pair> ModelRange(const Model& model, uint64_t low, uint64_t high) {
  std::vector<bptree_pair> pairs;
  if (low > high) return pairs;
  for (auto it = model.lower_bound(low); it != model.end() && it->first <= high; ++it) {
    pairs.push_back(bptree_pair{it->first, it->second});
  }
  return pairs;
}

// Scans [low, high] and compares with the model; returns a description of
// the first difference, or "" if none.
std::string CompareScan(Tree& tree, const Model& model, uint64_t low, uint64_t high) {
  std::vector<bptree_pair> actual;
  Status status = tree.Scan(low, high, &actual);
  if (!status.ok()) return "scan failed: " + status.ToString();
  std::vector<bptree_pair> expected = ModelRange(model, low, high);
  if (actual.size() != expected.size()) {
    return "scan [" + std::to_string(low) + ", " + std::to_string(high) + "] returned " +
           std::to_string(actual.size()) + " pairs, expected " + std::to_string(expected.size());
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    if (actual[i].key != expected[i].key || actual[i].value != expected[i].value) {
      return "scan [" + std::to_string(low) + ", " + std::to_string(high) + "] differs at " +
             std::to_string(i) + ": key " + std::to_string(actual[i].key) + " expected " +
             std::to_string(expected[i].key);
    }
  }
  return "";
}

// A key near the model's keys or anywhere, for gets and scan bounds.
uint64_t ProbeKey(const Model& model, std::mt19937_64& random) {
  switch (random() % 6) {
    case 0:
      return random();
    case 1:
      return random() % 2 == 0 ? 0 : kMaxKey;
    default:
      break;
  }
  if (model.empty()) return random();
  auto it = model.lower_bound(random());
  if (it == model.end()) it = std::prev(model.end());
  const uint64_t key = it->first;
  switch (random() % 3) {
    case 0:
      return key == 0 ? key : key - 1;
    case 1:
      return key == kMaxKey ? key : key + 1;
    default:
      return key;
  }
}

// Compares `gets` random gets and `scans` random scans, the whole range and
// the structure; stops at the first failure.
void ExpectTreeMatchesModel(Tree& tree, const Model& model, std::mt19937_64& random, int gets,
                            int scans) {
  ASSERT_EQ(model.size(), tree.meta().entry_count);
  for (int i = 0; i < gets; ++i) {
    const uint64_t key = ProbeKey(model, random);
    uint64_t value = 0;
    Status status = tree.Get(key, &value);
    auto it = model.find(key);
    if (it == model.end()) {
      ASSERT_TRUE(status.IsNotFound()) << "key " << key << ": " << status.ToString();
    } else {
      ASSERT_TRUE(status.ok()) << "key " << key << ": " << status.ToString();
      ASSERT_EQ(it->second, value) << "key " << key;
    }
  }
  // Each scan of a large model walks much of the std::map: fewer of them.
  if (model.size() > 50000) scans = std::max(3, scans / 10);
  for (int i = 0; i < scans; ++i) {
    uint64_t low = ProbeKey(model, random);
    uint64_t high = ProbeKey(model, random);
    if (random() % 8 != 0 && low > high) std::swap(low, high);  // sometimes keep low > high
    ASSERT_EQ("", CompareScan(tree, model, low, high));
  }
  ASSERT_EQ("", CompareScan(tree, model, 0, kMaxKey));
  Status status = tree.CheckInvariants();
  ASSERT_TRUE(status.ok()) << status.ToString();
}

// A key for a put: an existing key (overwrite), an extreme, or a new one
// from a small dense domain or the whole 64-bit range.
uint64_t PutKey(const Model& model, std::mt19937_64& random, bool dense, uint64_t domain) {
  const uint64_t choice = random() % 20;
  if (choice == 0 && !model.empty()) {
    auto it = model.lower_bound(random());
    return it == model.end() ? model.begin()->first : it->first;
  }
  if (choice == 1) {
    const uint64_t extremes[] = {0, 1, kMaxKey - 1, kMaxKey};
    return extremes[random() % 4];
  }
  return dense ? random() % domain : random();
}

void ReopenTree(const std::string& path, bool direct_io, std::mt19937_64& random,
                std::unique_ptr<Tree>* tree) {
  tree->reset();
  const size_t cache_sizes[] = {0, 1, 3, 256};
  Status status = Tree::Open(path, CacheOptions(cache_sizes[random() % 4], direct_io), tree);
  ASSERT_TRUE(status.ok()) << status.ToString();
}

// ---------------------------------------------------------------------------
// Randomized puts, gets and scans against std::map.

// (degree, seed, direct I/O)
class RandomizedPutTest : public ::testing::TestWithParam<std::tuple<uint32_t, uint64_t, bool>> {};

TEST_P(RandomizedPutTest, MatchesStdMap) {
  const auto [degree, seed, direct_io] = GetParam();
  bptree_test::TempDirectory directory;
  ASSERT_TRUE(directory.ok());
  SKIP_IF_NO_DIRECT_IO(directory, direct_io);
  const std::string path = directory.File("tree");
  std::mt19937_64 random(seed * 7919 + degree);

  std::unique_ptr<Tree> tree;
  Status status =
      Tree::Create(path, degree, CacheOptions(seed % 2 == 0 ? 0 : 64, direct_io), &tree);
  ASSERT_TRUE(status.ok()) << status.ToString();
  Model model;
  ASSERT_NO_FATAL_FAILURE(ExpectTreeMatchesModel(*tree, model, random, 5, 5));

  // Direct I/O waits for the device on every page access: fewer puts.
  const int puts = (degree <= 8 ? 2500 : 6000) / (direct_io ? 3 : 1);
  const bool dense = seed % 2 == 0;
  const uint64_t domain = 2 * static_cast<uint64_t>(puts);
  for (int i = 1; i <= puts; ++i) {
    const uint64_t key = PutKey(model, random, dense, domain);
    const uint64_t value = random();
    status = tree->Put(key, value);
    ASSERT_TRUE(status.ok()) << "put " << key << ": " << status.ToString();
    model[key] = value;

    if (i % 97 == 0) {
      uint64_t read = 0;
      status = tree->Get(key, &read);
      ASSERT_TRUE(status.ok()) << status.ToString();
      ASSERT_EQ(value, read);
      ASSERT_EQ("", CompareScan(*tree, model, ProbeKey(model, random), ProbeKey(model, random)));
    }
    if (i % (puts / 3) == 0) {
      ASSERT_NO_FATAL_FAILURE(ExpectTreeMatchesModel(*tree, model, random, 50, 20));
      ASSERT_NO_FATAL_FAILURE(ReopenTree(path, direct_io, random, &tree));
      ASSERT_NO_FATAL_FAILURE(ExpectTreeMatchesModel(*tree, model, random, 50, 20));
    }
  }
  EXPECT_GE(tree->meta().height, degree <= 8 ? 4u : 2u);
}

INSTANTIATE_TEST_SUITE_P(Degrees, RandomizedPutTest,
                         ::testing::Combine(::testing::Values(3u, 4u, 5u, 64u, 510u),
                                            ::testing::Range<uint64_t>(1, 7),
                                            ::testing::Values(false)));
// Direct I/O: every page access waits for the device, so fewer cases.
// (Seed 1: sparse keys, a 64-page inner cache; seed 2: dense keys, no cache.)
INSTANTIATE_TEST_SUITE_P(DirectIo, RandomizedPutTest,
                         ::testing::Values(std::make_tuple(4u, uint64_t{1}, true),
                                           std::make_tuple(64u, uint64_t{2}, true)));

// ---------------------------------------------------------------------------
// Randomized bulk loads, then puts, against std::map.

struct BulkCase {
  uint32_t degree;
  uint64_t count;
  size_t leaves_per_batch;
};

void PrintTo(const BulkCase& bulk_case, std::ostream* out) {
  *out << "degree " << bulk_case.degree << " count " << bulk_case.count << " batch "
       << bulk_case.leaves_per_batch;
}

// (shape, seed, direct I/O)
class RandomizedBulkLoadTest
    : public ::testing::TestWithParam<std::tuple<BulkCase, uint64_t, bool>> {};

uint32_t ExpectedHeight(uint64_t count, uint32_t degree) {
  uint64_t nodes = count == 0 ? 1 : (count + degree - 1) / degree;
  uint32_t height = 1;
  while (nodes > 1) {
    nodes = (nodes + degree) / (degree + 1);
    ++height;
  }
  return height;
}

TEST_P(RandomizedBulkLoadTest, MatchesStdMap) {
  const auto [bulk_case, seed, direct_io] = GetParam();
  bptree_test::TempDirectory directory;
  ASSERT_TRUE(directory.ok());
  SKIP_IF_NO_DIRECT_IO(directory, direct_io);
  const std::string path = directory.File("tree");
  std::mt19937_64 random(seed * 104729 + bulk_case.count);

  // Distinct sorted keys: dense for odd seeds, spread over 64 bits for even.
  Model model;
  while (model.size() < bulk_case.count) {
    const uint64_t key = seed % 2 == 1 ? random() % (3 * bulk_case.count) : random();
    model[key] = random();
  }
  std::vector<bptree_pair> pairs;
  for (const auto& [key, value] : model) pairs.push_back(bptree_pair{key, value});

  BulkLoader::Options options;
  options.degree = bulk_case.degree;
  options.leaves_per_batch = bulk_case.leaves_per_batch;
  options.direct_io = direct_io;
  bptree::VectorPairSource source(pairs);
  bptree::TreeMeta loaded;
  Status status = BulkLoader::Load(path, options, &source, &loaded);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(bulk_case.count, loaded.entry_count);
  EXPECT_EQ(ExpectedHeight(bulk_case.count, bulk_case.degree), loaded.height);
  const uint64_t expected_leaves =
      bulk_case.count == 0 ? 1 : (bulk_case.count + bulk_case.degree - 1) / bulk_case.degree;
  EXPECT_EQ(expected_leaves, loaded.leaf_count);
  EXPECT_EQ(1u, loaded.first_leaf_page);

  std::unique_ptr<Tree> tree;
  ASSERT_NO_FATAL_FAILURE(ReopenTree(path, direct_io, random, &tree));
  EXPECT_EQ(loaded.height, tree->meta().height);
  EXPECT_EQ(loaded.root_page, tree->meta().root_page);
  ASSERT_NO_FATAL_FAILURE(ExpectTreeMatchesModel(*tree, model, random, 100, 30));

  // Puts on top of the loaded tree: overwrites, new keys, extremes.
  const int puts = 1500;
  for (int i = 1; i <= puts; ++i) {
    const uint64_t key =
        PutKey(model, random, seed % 2 == 1, 3 * std::max<uint64_t>(bulk_case.count, 1));
    const uint64_t value = random();
    status = tree->Put(key, value);
    ASSERT_TRUE(status.ok()) << "put " << key << ": " << status.ToString();
    model[key] = value;
    if (i == puts / 2) {
      ASSERT_NO_FATAL_FAILURE(ReopenTree(path, direct_io, random, &tree));
      ASSERT_NO_FATAL_FAILURE(ExpectTreeMatchesModel(*tree, model, random, 50, 20));
    }
  }
  ASSERT_NO_FATAL_FAILURE(ReopenTree(path, direct_io, random, &tree));
  ASSERT_NO_FATAL_FAILURE(ExpectTreeMatchesModel(*tree, model, random, 100, 30));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, RandomizedBulkLoadTest,
    ::testing::Combine(::testing::Values(
                           // Empty, one pair, exactly full and one over at each level.
                           BulkCase{4, 0, 1024}, BulkCase{4, 1, 1024}, BulkCase{4, 4, 1024},
                           BulkCase{4, 5, 1}, BulkCase{4, 20, 3}, BulkCase{4, 21, 3},
                           BulkCase{4, 100, 7}, BulkCase{4, 101, 7}, BulkCase{4, 3000, 16},
                           BulkCase{3, 1000, 2}, BulkCase{64, 64, 1024}, BulkCase{64, 65, 1},
                           BulkCase{64, 4160, 5}, BulkCase{64, 4161, 5}, BulkCase{64, 40000, 64},
                           BulkCase{510, 1, 1024}, BulkCase{510, 510, 1024}, BulkCase{510, 511, 1},
                           BulkCase{510, 260610, 100}, BulkCase{510, 260611, 1024}),
                       ::testing::Values<uint64_t>(1, 2), ::testing::Values(false)));
// (Seed 1: dense keys; seed 2: keys spread over 64 bits.)
INSTANTIATE_TEST_SUITE_P(
    DirectIo, RandomizedBulkLoadTest,
    ::testing::Values(std::make_tuple(BulkCase{4, 0, 1024}, uint64_t{2}, true),
                      std::make_tuple(BulkCase{4, 101, 7}, uint64_t{1}, true),
                      std::make_tuple(BulkCase{64, 4161, 5}, uint64_t{2}, true),
                      std::make_tuple(BulkCase{64, 40000, 64}, uint64_t{1}, true)));

// ---------------------------------------------------------------------------
// A tree grown by inserts in random key order, as `bptree insert` builds it:
// leaf splits append pages at the end of the file, so the leaf chain jumps
// around the file.  Read buffered and with direct I/O, it must match the
// model and a bulk-loaded tree of the same pairs.

// (degree, seed, direct I/O for the reads)
class InsertBuiltTreeTest : public ::testing::TestWithParam<std::tuple<uint32_t, uint64_t, bool>> {
};

TEST_P(InsertBuiltTreeTest, ScatteredLeavesMatchStdMapAndBulkLoad) {
  const auto [degree, seed, direct_io] = GetParam();
  bptree_test::TempDirectory directory;
  ASSERT_TRUE(directory.ok());
  SKIP_IF_NO_DIRECT_IO(directory, direct_io);
  std::mt19937_64 random(seed * 15485863 + degree);

  Model model;
  const size_t key_count = 8000;
  while (model.size() < key_count) model[random()] = random();
  std::vector<uint64_t> order;
  for (const auto& entry : model) order.push_back(entry.first);
  std::shuffle(order.begin(), order.end(), random);

  // Built buffered (quick), then reopened for the reads.
  std::unique_ptr<Tree> tree;
  Status status = Tree::Create(directory.File("inserted"), degree, CacheOptions(256), &tree);
  ASSERT_TRUE(status.ok()) << status.ToString();
  for (uint64_t key : order) ASSERT_TRUE(tree->Put(key, model[key]).ok());

  // The leaves are scattered: most sibling links do not go to the next page.
  std::unique_ptr<bptree::Pager> pager;
  ASSERT_TRUE(bptree::Pager::Open(directory.File("inserted"),
                                  bptree::Pager::OpenMode::kOpenExisting, &pager)
                  .ok());
  uint64_t links = 0, links_to_next_page = 0;
  for (uint64_t leaf_page = tree->meta().first_leaf_page; leaf_page != bptree::kNoPage;) {
    bptree::Page page;
    ASSERT_TRUE(pager->ReadPage(leaf_page, &page).ok());
    const uint64_t sibling = bptree::NodePageView(page).right_sibling();
    if (sibling != bptree::kNoPage) {
      ++links;
      if (sibling == leaf_page + 1) ++links_to_next_page;
    }
    leaf_page = sibling;
  }
  EXPECT_GT(links, key_count / degree);
  EXPECT_LT(links_to_next_page * 4, links) << links_to_next_page << " of " << links;

  std::vector<bptree_pair> pairs;
  for (const auto& [key, value] : model) pairs.push_back(bptree_pair{key, value});
  BulkLoader::Options options;
  options.degree = degree;
  bptree::VectorPairSource source(pairs);
  ASSERT_TRUE(BulkLoader::Load(directory.File("loaded"), options, &source).ok());
  std::unique_ptr<Tree> loaded;
  ASSERT_TRUE(Tree::Open(directory.File("loaded"), CacheOptions(256, direct_io), &loaded).ok());

  ASSERT_NO_FATAL_FAILURE(ReopenTree(directory.File("inserted"), direct_io, random, &tree));
  ASSERT_NO_FATAL_FAILURE(ExpectTreeMatchesModel(*tree, model, random, 100, 20));
  for (int i = 0; i < 10; ++i) {
    uint64_t low = ProbeKey(model, random), high = ProbeKey(model, random);
    if (low > high) std::swap(low, high);
    std::vector<bptree_pair> from_inserted, from_loaded;
    ASSERT_TRUE(tree->Scan(low, high, &from_inserted).ok());
    ASSERT_TRUE(loaded->Scan(low, high, &from_loaded).ok());
    ASSERT_EQ(from_loaded.size(), from_inserted.size());
    ASSERT_EQ(0, std::memcmp(from_loaded.data(), from_inserted.data(),
                             from_loaded.size() * sizeof(bptree_pair)));
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, InsertBuiltTreeTest,
                         ::testing::Combine(::testing::Values(16u, 64u),
                                            ::testing::Values<uint64_t>(1), ::testing::Bool()));

// ---------------------------------------------------------------------------
// Direct I/O bypasses the kernel's page cache.

// Pages of `path` resident in the page cache, by mincore(2).
size_t ResidentPages(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return SIZE_MAX;
  struct stat info;
  size_t resident = SIZE_MAX;
  if (::fstat(fd, &info) == 0 && info.st_size > 0) {
    const size_t length = static_cast<size_t>(info.st_size);
    void* mapping = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
    if (mapping != MAP_FAILED) {
      const long memory_page = ::sysconf(_SC_PAGESIZE);
      std::vector<unsigned char> flags((length + memory_page - 1) / memory_page);
      if (::mincore(mapping, length, flags.data()) == 0) {
        resident = 0;
        for (unsigned char flag : flags) resident += flag & 1;
      }
      ::munmap(mapping, length);
    }
  }
  ::close(fd);
  return resident;
}

// Writes back and evicts `path` from the page cache.
bool EvictFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fdatasync(fd) == 0 && ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
  ::close(fd);
  return ok;
}

TEST(DirectIoTest, ScansAndLoadsBypassThePageCache) {
  bptree_test::TempDirectory directory;
  ASSERT_TRUE(directory.ok());
  SKIP_IF_NO_DIRECT_IO(directory, true);
  const std::string path = directory.File("tree");
  std::vector<bptree_pair> pairs;
  for (uint64_t key = 0; key < 20000; ++key) pairs.push_back(bptree_pair{key * 3, key});
  bptree::VectorPairSource source(pairs);
  BulkLoader::Options options;
  options.degree = 64;
  options.direct_io = true;
  ASSERT_TRUE(BulkLoader::Load(path, options, &source).ok());
  ASSERT_EQ(0u, ResidentPages(path)) << "a direct load left pages in the page cache";

  std::vector<bptree_pair> scanned;
  std::unique_ptr<Tree> tree;
  ASSERT_TRUE(Tree::Open(path, CacheOptions(256, true), &tree).ok());
  ASSERT_TRUE(tree->Scan(0, UINT64_MAX, &scanned).ok());
  ASSERT_EQ(pairs.size(), scanned.size());
  EXPECT_EQ(0u, ResidentPages(path)) << "a direct scan read through the page cache";

  // The same scan buffered fills the page cache (the check can fail).
  ASSERT_TRUE(EvictFile(path));
  ASSERT_TRUE(Tree::Open(path, CacheOptions(256, false), &tree).ok());
  ASSERT_TRUE(tree->Scan(0, UINT64_MAX, &scanned).ok());
  EXPECT_GT(ResidentPages(path), 300u);
}

// ---------------------------------------------------------------------------
// Fixed cases and errors.

class TreeTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(directory_.ok()); }
  std::string Path() const { return directory_.File("tree"); }

  bptree_test::TempDirectory directory_;
};

TEST_F(TreeTest, CreateChecksTheDegree) {
  std::unique_ptr<Tree> tree;
  EXPECT_TRUE(Tree::Create(Path(), 0, Tree::Options(), &tree).IsInvalidArgument());
  EXPECT_TRUE(Tree::Create(Path(), 2, Tree::Options(), &tree).IsInvalidArgument());
  EXPECT_TRUE(Tree::Create(Path(), 511, Tree::Options(), &tree).IsInvalidArgument());
  EXPECT_TRUE(Tree::Create(Path(), 3, Tree::Options(), &tree).ok());
  EXPECT_TRUE(Tree::Create(Path(), 510, Tree::Options(), &tree).ok());
  EXPECT_EQ(510u, tree->meta().degree);
}

TEST_F(TreeTest, EmptyTreeHasNothing) {
  std::unique_ptr<Tree> tree;
  ASSERT_TRUE(Tree::Create(Path(), 4, Tree::Options(), &tree).ok());
  uint64_t value = 0;
  EXPECT_TRUE(tree->Get(0, &value).IsNotFound());
  std::vector<bptree_pair> pairs{{1, 1}};
  ASSERT_TRUE(tree->Scan(0, kMaxKey, &pairs).ok());
  EXPECT_TRUE(pairs.empty());
  EXPECT_TRUE(tree->CheckInvariants().ok());
  tree.reset();
  ASSERT_TRUE(Tree::Open(Path(), Tree::Options(), &tree).ok());
  EXPECT_EQ(0u, tree->meta().entry_count);
  EXPECT_EQ(1u, tree->meta().height);
}

TEST_F(TreeTest, ExtremeKeysAndInclusiveBounds) {
  std::unique_ptr<Tree> tree;
  ASSERT_TRUE(Tree::Create(Path(), 3, Tree::Options(), &tree).ok());
  for (uint64_t key : {kMaxKey, uint64_t{0}, uint64_t{5}, kMaxKey - 1, uint64_t{1}}) {
    ASSERT_TRUE(tree->Put(key, ~key).ok());
  }
  std::vector<bptree_pair> pairs;
  ASSERT_TRUE(tree->Scan(0, kMaxKey, &pairs).ok());
  ASSERT_EQ(5u, pairs.size());
  EXPECT_EQ(0u, pairs[0].key);
  EXPECT_EQ(kMaxKey, pairs[4].key);
  EXPECT_EQ(0u, pairs[4].value);
  ASSERT_TRUE(tree->Scan(kMaxKey, kMaxKey, &pairs).ok());
  ASSERT_EQ(1u, pairs.size());
  ASSERT_TRUE(tree->Scan(5, 5, &pairs).ok());
  ASSERT_EQ(1u, pairs.size());
  EXPECT_EQ(~uint64_t{5}, pairs[0].value);
  ASSERT_TRUE(tree->Scan(6, 4, &pairs).ok());
  EXPECT_TRUE(pairs.empty());
  ASSERT_TRUE(tree->Scan(2, 4, &pairs).ok());
  EXPECT_TRUE(pairs.empty());
  EXPECT_TRUE(tree->CheckInvariants().ok());
}

TEST_F(TreeTest, ScanTimesItsLeafLoopWithinTheWholeScan) {
  std::unique_ptr<Tree> tree;
  ASSERT_TRUE(Tree::Create(Path(), 4, Tree::Options(), &tree).ok());
  for (uint64_t key = 0; key < 2000; ++key) ASSERT_TRUE(tree->Put(key, key).ok());
  std::vector<bptree_pair> pairs;
  double leaf_loop_ms = -1;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(tree->Scan(0, kMaxKey, &pairs, &leaf_loop_ms).ok());
  const double whole_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(2000u, pairs.size());
  EXPECT_GT(leaf_loop_ms, 0.0);
  EXPECT_LE(leaf_loop_ms, whole_ms);
  // An empty range reads no leaf: the loop takes no time.
  ASSERT_TRUE(tree->Scan(6, 4, &pairs, &leaf_loop_ms).ok());
  EXPECT_EQ(0.0, leaf_loop_ms);
}

TEST_F(TreeTest, PutReplacesTheValueOfAPresentKey) {
  std::unique_ptr<Tree> tree;
  ASSERT_TRUE(Tree::Create(Path(), 4, Tree::Options(), &tree).ok());
  ASSERT_TRUE(tree->Put(7, 70).ok());
  ASSERT_TRUE(tree->Put(7, 71).ok());
  uint64_t value = 0;
  ASSERT_TRUE(tree->Get(7, &value).ok());
  EXPECT_EQ(71u, value);
  EXPECT_EQ(1u, tree->meta().entry_count);
}

TEST_F(TreeTest, SequentialPutsSplitTheRoot) {
  std::unique_ptr<Tree> tree;
  ASSERT_TRUE(Tree::Create(Path(), 4, Tree::Options(), &tree).ok());
  for (uint64_t key = 1; key <= 4; ++key) ASSERT_TRUE(tree->Put(key, key).ok());
  EXPECT_EQ(1u, tree->meta().height);
  ASSERT_TRUE(tree->Put(5, 5).ok());
  EXPECT_EQ(2u, tree->meta().height);
  EXPECT_EQ(2u, tree->meta().leaf_count);
  EXPECT_TRUE(tree->CheckInvariants().ok());
}

TEST_F(TreeTest, CreateReplacesAnExistingTree) {
  std::unique_ptr<Tree> tree;
  ASSERT_TRUE(Tree::Create(Path(), 4, Tree::Options(), &tree).ok());
  for (uint64_t key = 0; key < 100; ++key) ASSERT_TRUE(tree->Put(key, key).ok());
  tree.reset();
  ASSERT_TRUE(Tree::Create(Path(), 8, Tree::Options(), &tree).ok());
  EXPECT_EQ(0u, tree->meta().entry_count);
  EXPECT_EQ(2u, tree->meta().page_count);
  EXPECT_TRUE(tree->CheckInvariants().ok());
}

TEST_F(TreeTest, OpenReportsAMissingFile) {
  std::unique_ptr<Tree> tree;
  EXPECT_TRUE(Tree::Open(Path(), Tree::Options(), &tree).IsNotFound());
}

void WriteBytes(const std::string& path, const std::string& bytes, off_t offset, bool truncate) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | (truncate ? O_TRUNC : 0), 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(static_cast<ssize_t>(bytes.size()), ::pwrite(fd, bytes.data(), bytes.size(), offset));
  ::close(fd);
}

TEST_F(TreeTest, OpenRejectsFilesThatAreNotTrees) {
  std::unique_ptr<Tree> tree;
  WriteBytes(Path(), "", 0, true);
  EXPECT_TRUE(Tree::Open(Path(), Tree::Options(), &tree).IsCorruption());
  WriteBytes(Path(), std::string(bptree::kPageSize, 'x'), 0, true);
  EXPECT_TRUE(Tree::Open(Path(), Tree::Options(), &tree).IsCorruption());
}

TEST_F(TreeTest, OpenRejectsATruncatedTree) {
  std::unique_ptr<Tree> tree;
  ASSERT_TRUE(Tree::Create(Path(), 4, Tree::Options(), &tree).ok());
  for (uint64_t key = 0; key < 50; ++key) ASSERT_TRUE(tree->Put(key, key).ok());
  const uint64_t pages = tree->meta().page_count;
  tree.reset();
  ASSERT_EQ(0, ::truncate(Path().c_str(), static_cast<off_t>((pages - 1) * bptree::kPageSize)));
  EXPECT_TRUE(Tree::Open(Path(), Tree::Options(), &tree).IsCorruption());
}

TEST_F(TreeTest, CorruptLeafIsReportedByGetScanAndCheck) {
  std::vector<bptree_pair> pairs;
  for (uint64_t key = 0; key < 100; ++key) pairs.push_back(bptree_pair{key, key});
  bptree::VectorPairSource source(pairs);
  BulkLoader::Options options;
  options.degree = 10;
  ASSERT_TRUE(BulkLoader::Load(Path(), options, &source).ok());
  // Leaf 3 (keys 20..29) becomes an inner node header.
  bptree::InnerNode inner;
  inner.children.push_back(1);
  bptree::Page page;
  inner.EncodeTo(&page);
  WriteBytes(Path(), std::string(reinterpret_cast<const char*>(page.bytes), bptree::kPageSize),
             3 * bptree::kPageSize, false);

  std::unique_ptr<Tree> tree;
  ASSERT_TRUE(Tree::Open(Path(), Tree::Options(), &tree).ok());
  uint64_t value = 0;
  EXPECT_TRUE(tree->Get(5, &value).ok());
  EXPECT_TRUE(tree->Get(25, &value).IsCorruption());
  std::vector<bptree_pair> result;
  EXPECT_TRUE(tree->Scan(0, 15, &result).ok());
  EXPECT_EQ(16u, result.size());
  EXPECT_TRUE(tree->Scan(0, 99, &result).IsCorruption());
  EXPECT_TRUE(result.empty());
  EXPECT_TRUE(tree->Put(21, 0).IsCorruption());
  EXPECT_TRUE(tree->CheckInvariants().IsCorruption());
}

TEST_F(TreeTest, BulkLoadRejectsUnsortedOrDuplicateKeys) {
  for (const std::vector<bptree_pair>& pairs : {std::vector<bptree_pair>{{1, 1}, {3, 3}, {2, 2}},
                                                std::vector<bptree_pair>{{1, 1}, {2, 2}, {2, 3}}}) {
    bptree::VectorPairSource source(pairs);
    BulkLoader::Options options;
    options.degree = 4;
    EXPECT_TRUE(BulkLoader::Load(Path(), options, &source).IsInvalidArgument());
    std::unique_ptr<Tree> tree;
    EXPECT_FALSE(Tree::Open(Path(), Tree::Options(), &tree).ok());
  }
}

TEST_F(TreeTest, BulkLoadChecksItsOptions) {
  std::vector<bptree_pair> pairs{{1, 1}};
  bptree::VectorPairSource source(pairs);
  BulkLoader::Options options;
  options.degree = 511;
  EXPECT_TRUE(BulkLoader::Load(Path(), options, &source).IsInvalidArgument());
  options.degree = 2;
  EXPECT_TRUE(BulkLoader::Load(Path(), options, &source).IsInvalidArgument());
  options.degree = 4;
  options.leaves_per_batch = 0;
  EXPECT_TRUE(BulkLoader::Load(Path(), options, &source).IsInvalidArgument());
}

TEST_F(TreeTest, BulkLoadedLeavesAreFullAndLinkedInPageOrder) {
  std::vector<bptree_pair> pairs;
  for (uint64_t key = 0; key < 25; ++key) pairs.push_back(bptree_pair{key * 2, key});
  bptree::VectorPairSource source(pairs);
  BulkLoader::Options options;
  options.degree = 4;
  options.leaves_per_batch = 2;
  ASSERT_TRUE(BulkLoader::Load(Path(), options, &source).ok());

  std::unique_ptr<bptree::Pager> pager;
  ASSERT_TRUE(bptree::Pager::Open(Path(), bptree::Pager::OpenMode::kOpenExisting, &pager).ok());
  for (uint64_t page_number = 1; page_number <= 7; ++page_number) {
    bptree::Page page;
    ASSERT_TRUE(pager->ReadPage(page_number, &page).ok());
    bptree::LeafNode leaf;
    ASSERT_TRUE(bptree::LeafNode::Decode(page, 4, &leaf).ok()) << page_number;
    EXPECT_EQ(page_number == 7 ? 1u : 4u, leaf.keys.size());
    EXPECT_EQ(page_number == 7 ? 0u : page_number + 1, leaf.right_sibling);
    EXPECT_EQ((page_number - 1) * 8, leaf.keys.front());
  }
}

}  // namespace
