// Tests of the scan plugin's LeafPlanner (plugins/leaf_planner.h): fed the
// inner pages a range scan reads, in order, it knows the very leaf list the
// tree then hands to bptree_read_leaves(); pages out of the walk's order
// (found in the tree's inner page cache) or not inner make it fail.
//
// This program is linked with
//   -Wl,--wrap=bptree_read_leaves -Wl,--wrap=_ZNK6bptree5Pager8ReadPageEmPNS_4PageE
// so that it sees, as the plugin does, the pages each scan reads and the
// leaves it gathered.

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "bulk_loader.h"
#include "leaf_planner.h"
#include "pager.h"
#include "status.h"
#include "test_support.h"
#include "tree.h"

namespace {

struct PageRead {
  uint64_t page_number;
  bptree::Page page;
};

bool recording = false;
std::vector<PageRead> pages_read;       // while recording
std::vector<uint64_t> leaves_gathered;  // by the last scan

}  // namespace

extern "C" {
int64_t __real_bptree_read_leaves(int fd, const uint64_t* leaf_pages, size_t leaf_count,
                                  uint64_t low, uint64_t high, bptree_pair* out,
                                  size_t out_capacity);
bptree::Status __real__ZNK6bptree5Pager8ReadPageEmPNS_4PageE(const bptree::Pager* pager,
                                                             uint64_t page_number,
                                                             bptree::Page* page);

int64_t __wrap_bptree_read_leaves(int fd, const uint64_t* leaf_pages, size_t leaf_count,
                                  uint64_t low, uint64_t high, bptree_pair* out,
                                  size_t out_capacity) {
  leaves_gathered.assign(leaf_pages, leaf_pages + leaf_count);
  recording = false;  // the leaf reads do not go through Pager::ReadPage, but stop anyway
  return __real_bptree_read_leaves(fd, leaf_pages, leaf_count, low, high, out, out_capacity);
}

bptree::Status __wrap__ZNK6bptree5Pager8ReadPageEmPNS_4PageE(const bptree::Pager* pager,
                                                             uint64_t page_number,
                                                             bptree::Page* page) {
  bptree::Status status = __real__ZNK6bptree5Pager8ReadPageEmPNS_4PageE(pager, page_number, page);
  if (recording && status.ok()) pages_read.push_back(PageRead{page_number, *page});
  return status;
}
}  // extern "C"

namespace {

using bptree_plugin::LeafPlanner;

// Scans [low, high] of `tree`, recording the inner pages it reads and the
// leaves it gathers.
void RecordScan(bptree::Tree* tree, uint64_t low, uint64_t high) {
  pages_read.clear();
  leaves_gathered.clear();
  recording = true;
  std::vector<bptree_pair> pairs;
  ASSERT_TRUE(tree->Scan(low, high, &pairs, nullptr).ok());
  recording = false;
}

// Feeds the recorded pages to `planner`; true when the last of them, and
// no earlier one, completed it.
bool PlanFromRecord(LeafPlanner* planner) {
  bool completed_at_last = false;
  for (size_t i = 0; i < pages_read.size(); ++i) {
    const bool completed = planner->InnerPageRead(pages_read[i].page_number, pages_read[i].page);
    if (completed && i + 1 != pages_read.size()) return false;
    completed_at_last = completed;
  }
  return completed_at_last;
}

class LeafPlannerTest : public ::testing::Test {
 protected:
  // A tree of `count` keys 0, 3, 6, ... bulk loaded at `degree`.
  std::unique_ptr<bptree::Tree> BulkTree(uint64_t count, uint32_t degree,
                                         size_t inner_cache_pages = 0) {
    const std::string path = directory_.File("bulk");
    std::vector<bptree_pair> pairs;
    for (uint64_t key = 0; key < count; ++key) pairs.push_back(bptree_pair{key * 3, key});
    bptree::VectorPairSource source(pairs);
    bptree::BulkLoader::Options options;
    options.degree = degree;
    EXPECT_TRUE(bptree::BulkLoader::Load(path, options, &source).ok());
    return Open(path, inner_cache_pages);
  }

  std::unique_ptr<bptree::Tree> Open(const std::string& path, size_t inner_cache_pages) {
    bptree::Tree::Options options;
    options.inner_cache_pages = inner_cache_pages;
    std::unique_ptr<bptree::Tree> tree;
    EXPECT_TRUE(bptree::Tree::Open(path, options, &tree).ok());
    return tree;
  }

  // Checks that a planner fed scan [low, high]'s inner pages completes with
  // the scan's own leaf list.
  void ExpectPlanMatches(bptree::Tree* tree, uint64_t low, uint64_t high) {
    RecordScan(tree, low, high);
    LeafPlanner planner(tree->meta().root_page, tree->meta().height, low, high);
    if (tree->meta().height == 1) {
      EXPECT_TRUE(planner.complete());
    } else {
      EXPECT_TRUE(PlanFromRecord(&planner)) << low << ".." << high;
    }
    EXPECT_TRUE(planner.complete());
    EXPECT_FALSE(planner.failed());
    EXPECT_EQ(std::vector<uint64_t>(planner.leaves().begin(), planner.leaves().end()),
              leaves_gathered)
        << low << ".." << high;
  }

  // ExpectPlanMatches() for 50 random ranges of keys below `key_limit`.
  void ExpectRandomPlansMatch(bptree::Tree* tree, uint64_t key_limit, uint64_t seed) {
    std::mt19937_64 random(seed);
    for (int i = 0; i < 50; ++i) {
      uint64_t low = random() % key_limit, high = random() % key_limit;
      if (low > high) std::swap(low, high);
      ExpectPlanMatches(tree, low, high);
    }
  }

  bptree_test::TempDirectory directory_;
};

TEST_F(LeafPlannerTest, KnowsTheScansLeavesAtItsLastInnerPage) {
  ASSERT_TRUE(directory_.ok());
  // Degree 4: 20,000 keys make 5,000 leaves under 5 inner levels.
  std::unique_ptr<bptree::Tree> tree = BulkTree(20000, 4);
  ASSERT_NE(tree, nullptr);
  ASSERT_GE(tree->meta().height, 4u);
  ExpectPlanMatches(tree.get(), 0, UINT64_MAX);
  ExpectPlanMatches(tree.get(), 0, 0);
  ExpectPlanMatches(tree.get(), 59999, 59999);       // the last key
  ExpectPlanMatches(tree.get(), 60000, UINT64_MAX);  // past the last key
  ExpectRandomPlansMatch(tree.get(), 61000, 7);
}

// The leaf list grows geometrically: a scan over thousands of inner pages
// moves it a few dozen times at most, not once per page.
TEST_F(LeafPlannerTest, MovesTheLeafListLogarithmicallyOften) {
  ASSERT_TRUE(directory_.ok());
  // Degree 4: 20,000 keys make 5,000 leaves under about 1,250 pages of
  // the level above them.
  std::unique_ptr<bptree::Tree> tree = BulkTree(20000, 4);
  ASSERT_NE(tree, nullptr);
  RecordScan(tree.get(), 0, UINT64_MAX);
  LeafPlanner planner(tree->meta().root_page, tree->meta().height, 0, UINT64_MAX);
  const uint64_t* data = planner.leaves().data();
  int moves = 0;
  for (const PageRead& read : pages_read) {
    planner.InnerPageRead(read.page_number, read.page);
    if (planner.leaves().data() != data) {
      moves++;
      data = planner.leaves().data();
    }
  }
  ASSERT_TRUE(planner.complete());
  ASSERT_EQ(planner.leaves().size(), leaves_gathered.size());
  EXPECT_LE(moves, 16) << "for " << planner.leaves().size() << " leaves";
}

TEST_F(LeafPlannerTest, KnowsTheLeavesOfAnInsertBuiltTree) {
  ASSERT_TRUE(directory_.ok());
  const std::string path = directory_.File("inserted");
  {
    std::unique_ptr<bptree::Tree> tree;
    ASSERT_TRUE(bptree::Tree::Create(path, 5, bptree::Tree::Options(), &tree).ok());
    std::mt19937_64 random(3);
    for (int i = 0; i < 3000; ++i) ASSERT_TRUE(tree->Put(random() % 100000, i).ok());
  }
  std::unique_ptr<bptree::Tree> tree = Open(path, 0);
  ASSERT_NE(tree, nullptr);
  ASSERT_GE(tree->meta().height, 3u);
  ExpectRandomPlansMatch(tree.get(), 100000, 11);
}

TEST_F(LeafPlannerTest, ARootLeafIsTheWholePlan) {
  ASSERT_TRUE(directory_.ok());
  std::unique_ptr<bptree::Tree> tree = BulkTree(3, 4);
  ASSERT_NE(tree, nullptr);
  ASSERT_EQ(tree->meta().height, 1u);
  ExpectPlanMatches(tree.get(), 0, UINT64_MAX);
}

// With the tree's inner page cache warm, a scan reads only the inner pages
// not cached: out of the walk's order, they fail the plan, and the plugin
// learns the leaves from bptree_read_leaves() instead.
TEST_F(LeafPlannerTest, PagesTheTreeFoundInItsCacheFailThePlan) {
  ASSERT_TRUE(directory_.ok());
  std::unique_ptr<bptree::Tree> tree = BulkTree(20000, 4, /*inner_cache_pages=*/4096);
  ASSERT_NE(tree, nullptr);
  RecordScan(tree.get(), 0, UINT64_MAX);
  const size_t all_inner_pages = pages_read.size();
  RecordScan(tree.get(), 0, 30000);  // the cache now holds every inner page: no read
  EXPECT_TRUE(pages_read.empty());
  tree = BulkTree(20000, 4, /*inner_cache_pages=*/4096);
  ASSERT_NE(tree, nullptr);
  RecordScan(tree.get(), 0, 30000);
  RecordScan(tree.get(), 0, UINT64_MAX);  // reads the inner pages right of 30000 only
  ASSERT_FALSE(pages_read.empty());
  ASSERT_LT(pages_read.size(), all_inner_pages);
  LeafPlanner planner(tree->meta().root_page, tree->meta().height, 0, UINT64_MAX);
  for (const PageRead& read : pages_read) planner.InnerPageRead(read.page_number, read.page);
  EXPECT_TRUE(planner.failed());
  EXPECT_FALSE(planner.complete());
}

TEST_F(LeafPlannerTest, APageThatIsNotInnerFailsThePlan) {
  ASSERT_TRUE(directory_.ok());
  std::unique_ptr<bptree::Tree> tree = BulkTree(20000, 4);
  ASSERT_NE(tree, nullptr);
  RecordScan(tree.get(), 0, UINT64_MAX);
  ASSERT_FALSE(pages_read.empty());
  LeafPlanner planner(tree->meta().root_page, tree->meta().height, 0, UINT64_MAX);
  bptree::Page zeros{};
  EXPECT_FALSE(planner.InnerPageRead(pages_read[0].page_number, zeros));
  EXPECT_TRUE(planner.failed());
  EXPECT_FALSE(planner.complete());
  // A failed plan stays failed.
  EXPECT_FALSE(planner.InnerPageRead(pages_read[0].page_number, pages_read[0].page));
  EXPECT_TRUE(planner.failed());
}

}  // namespace
