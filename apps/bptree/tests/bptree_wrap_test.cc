// Shows that both leaf loops can be taken over at link time: this program
// is linked with -Wl,--wrap=bptree_read_leaves,--wrap=bptree_write_leaves,
// so the tree's calls land in the __wrap_ functions below, which record
// their arguments and call the originals.

#include <cstdint>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "bulk_loader.h"
#include "test_support.h"
#include "tree.h"

namespace {

struct ReadCall {
  int fd;
  std::vector<uint64_t> leaf_pages;
  uint64_t low, high;
};
struct WriteCall {
  int fd;
  uint64_t first_page;
  size_t page_count;
};
std::vector<ReadCall> read_calls;
std::vector<WriteCall> write_calls;

}  // namespace

extern "C" {
int64_t __real_bptree_read_leaves(int fd, const uint64_t* leaf_pages, size_t leaf_count,
                                  uint64_t low, uint64_t high, bptree_pair* out,
                                  size_t out_capacity);
int __real_bptree_write_leaves(int fd, uint64_t first_page, const void* pages, size_t page_count);

int64_t __wrap_bptree_read_leaves(int fd, const uint64_t* leaf_pages, size_t leaf_count,
                                  uint64_t low, uint64_t high, bptree_pair* out,
                                  size_t out_capacity) {
  read_calls.push_back(
      ReadCall{fd, std::vector<uint64_t>(leaf_pages, leaf_pages + leaf_count), low, high});
  return __real_bptree_read_leaves(fd, leaf_pages, leaf_count, low, high, out, out_capacity);
}

int __wrap_bptree_write_leaves(int fd, uint64_t first_page, const void* pages, size_t page_count) {
  write_calls.push_back(WriteCall{fd, first_page, page_count});
  return __real_bptree_write_leaves(fd, first_page, pages, page_count);
}
}  // extern "C"

namespace {

TEST(LinkTimeWrap, BulkLoadAndScanGoThroughTheWrappedLoops) {
  bptree_test::TempDirectory directory;
  ASSERT_TRUE(directory.ok());
  const std::string path = directory.File("tree");

  std::vector<bptree_pair> pairs;
  for (uint64_t key = 0; key < 1000; ++key) pairs.push_back(bptree_pair{key * 3, key});
  bptree::VectorPairSource source(pairs);
  bptree::BulkLoader::Options options;
  options.degree = 10;  // 100 leaves
  options.leaves_per_batch = 30;
  write_calls.clear();
  ASSERT_TRUE(bptree::BulkLoader::Load(path, options, &source).ok());
  ASSERT_EQ(4u, write_calls.size());
  uint64_t next_page = 1;
  for (const WriteCall& call : write_calls) {
    EXPECT_GE(call.fd, 0);
    EXPECT_EQ(next_page, call.first_page);
    next_page += call.page_count;
  }
  EXPECT_EQ(101u, next_page);

  std::unique_ptr<bptree::Tree> tree;
  ASSERT_TRUE(bptree::Tree::Open(path, bptree::Tree::Options(), &tree).ok());
  read_calls.clear();
  std::vector<bptree_pair> result;
  // Leaf page p holds the keys 30 * (p - 1) .. 30 * (p - 1) + 27, so the
  // keys 90 .. 300 lie in pages 4 .. 11.
  ASSERT_TRUE(tree->Scan(90, 300, &result).ok());
  ASSERT_EQ(1u, read_calls.size());
  EXPECT_EQ((std::vector<uint64_t>{4, 5, 6, 7, 8, 9, 10, 11}), read_calls[0].leaf_pages);
  EXPECT_EQ(90u, read_calls[0].low);
  EXPECT_EQ(300u, read_calls[0].high);
  EXPECT_EQ(71u, result.size());
}

}  // namespace
