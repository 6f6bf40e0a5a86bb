// Tests of the two C-linkage leaf loops, on hand-made pages.

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "leaf_io.h"
#include "page_format.h"
#include "test_support.h"

namespace {

using bptree::kPageSize;
using bptree::NodePageWriter;
using bptree::NodeType;
using bptree::Page;

// A leaf page holding `pairs` (in the given order).
Page MakeLeaf(const std::vector<bptree_pair>& pairs, uint64_t right_sibling = 0) {
  Page page;
  NodePageWriter writer(&page);
  writer.Reset(NodeType::kLeaf);
  writer.set_key_count(static_cast<uint32_t>(pairs.size()));
  writer.set_right_sibling(right_sibling);
  for (size_t i = 0; i < pairs.size(); ++i) {
    writer.set_key(static_cast<uint32_t>(i), pairs[i].key);
    writer.set_value(static_cast<uint32_t>(i), pairs[i].value);
  }
  return page;
}

class LeafIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(directory_.ok());
    fd_ = ::open(directory_.File("leaves").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override {
    if (fd_ >= 0) ::close(fd_);
  }

  void WritePage(uint64_t page_number, const Page& page) {
    ASSERT_EQ(0, bptree_write_leaves(fd_, page_number, &page, 1));
  }

  bptree_test::TempDirectory directory_;
  int fd_ = -1;
};

TEST_F(LeafIoTest, WriteLeavesPutsEachPageAtItsOffset) {
  std::vector<Page> pages(3);
  for (size_t i = 0; i < pages.size(); ++i) std::memset(pages[i].bytes, 'a' + int(i), kPageSize);
  ASSERT_EQ(0, bptree_write_leaves(fd_, 5, pages.data(), pages.size()));

  ASSERT_EQ(8 * static_cast<off_t>(kPageSize), ::lseek(fd_, 0, SEEK_END));
  Page read_back;
  for (uint64_t page_number = 0; page_number < 8; ++page_number) {
    ASSERT_EQ(
        static_cast<ssize_t>(kPageSize),
        ::pread(fd_, read_back.bytes, kPageSize, static_cast<off_t>(page_number * kPageSize)));
    const int expected = page_number < 5 ? 0 : 'a' + int(page_number - 5);
    for (size_t byte = 0; byte < kPageSize; ++byte) {
      ASSERT_EQ(expected, read_back.bytes[byte]) << "page " << page_number << " byte " << byte;
    }
  }
}

TEST_F(LeafIoTest, WriteLeavesOfNoPagesWritesNothing) {
  ASSERT_EQ(0, bptree_write_leaves(fd_, 3, nullptr, 0));
  EXPECT_EQ(0, ::lseek(fd_, 0, SEEK_END));
}

TEST_F(LeafIoTest, WriteLeavesReportsTheWriteError) {
  Page page;
  std::memset(page.bytes, 0, kPageSize);
  errno = 0;
  EXPECT_EQ(-1, bptree_write_leaves(-1, 1, &page, 1));
  EXPECT_EQ(EBADF, errno);
}

TEST_F(LeafIoTest, WriteLeavesRejectsOverflowingOffsets) {
  Page page;
  std::memset(page.bytes, 0, kPageSize);
  errno = 0;
  EXPECT_EQ(-1, bptree_write_leaves(fd_, bptree::MaxPageNumber() + 1, &page, 1));
  EXPECT_EQ(EINVAL, errno);
}

TEST_F(LeafIoTest, ReadLeavesFiltersAndKeepsPageOrder) {
  WritePage(1, MakeLeaf({{10, 100}, {20, 200}, {30, 300}}, 2));
  WritePage(2, MakeLeaf({{40, 400}, {50, 500}}, 3));
  WritePage(3, MakeLeaf({{60, 600}, {70, 700}, {80, 800}}, 0));

  const uint64_t leaves[] = {1, 2, 3};
  std::vector<bptree_pair> out(16);
  const int64_t count = bptree_read_leaves(fd_, leaves, 3, 15, 65, out.data(), out.size());
  const uint64_t expected_keys[] = {20, 30, 40, 50, 60};
  ASSERT_EQ(5, count);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(expected_keys[i], out[i].key);
    EXPECT_EQ(expected_keys[i] * 10, out[i].value);
  }
}

TEST_F(LeafIoTest, ReadLeavesIncludesBothBounds) {
  WritePage(1, MakeLeaf({{10, 100}, {20, 200}, {30, 300}}, 2));
  WritePage(2, MakeLeaf({{40, 400}, {50, 500}}, 0));
  const uint64_t leaves[] = {1, 2};
  std::vector<bptree_pair> out(16);
  ASSERT_EQ(3, bptree_read_leaves(fd_, leaves, 2, 20, 40, out.data(), out.size()));
  EXPECT_EQ(20u, out[0].key);
  EXPECT_EQ(30u, out[1].key);
  EXPECT_EQ(40u, out[2].key);
  EXPECT_EQ(400u, out[2].value);
}

TEST_F(LeafIoTest, ReadLeavesFollowsTheListNotTheSiblingLinks) {
  WritePage(1, MakeLeaf({{1, 11}}, 2));
  WritePage(2, MakeLeaf({{2, 22}}, 0));
  WritePage(3, MakeLeaf({{3, 33}}, 0));
  const uint64_t leaves[] = {3, 1};
  std::vector<bptree_pair> out(4);
  ASSERT_EQ(2, bptree_read_leaves(fd_, leaves, 2, 0, UINT64_MAX, out.data(), out.size()));
  EXPECT_EQ(3u, out[0].key);
  EXPECT_EQ(1u, out[1].key);
}

TEST_F(LeafIoTest, ReadLeavesReadsEveryListedPageWithoutEarlyExit) {
  // The first leaf's keys are all above `high`; the loop must still read the
  // second page, which lies beyond the end of the file.
  WritePage(1, MakeLeaf({{100, 1}}, 0));
  const uint64_t leaves[] = {1, 9};
  std::vector<bptree_pair> out(4);
  errno = 0;
  EXPECT_EQ(-1, bptree_read_leaves(fd_, leaves, 2, 0, 50, out.data(), out.size()));
  EXPECT_EQ(EBADMSG, errno);
}

TEST_F(LeafIoTest, ReadLeavesOfNoPagesReturnsNothing) {
  EXPECT_EQ(0, bptree_read_leaves(fd_, nullptr, 0, 0, UINT64_MAX, nullptr, 0));
}

TEST_F(LeafIoTest, ReadLeavesRejectsAPageThatIsNotALeaf) {
  Page inner;
  NodePageWriter writer(&inner);
  writer.Reset(NodeType::kInner);
  WritePage(1, inner);
  const uint64_t leaves[] = {1};
  std::vector<bptree_pair> out(4);
  errno = 0;
  EXPECT_EQ(-1, bptree_read_leaves(fd_, leaves, 1, 0, UINT64_MAX, out.data(), out.size()));
  EXPECT_EQ(EBADMSG, errno);
}

TEST_F(LeafIoTest, ReadLeavesRejectsAKeyCountAboveTheMaximum) {
  Page leaf = MakeLeaf({});
  NodePageWriter(&leaf).set_key_count(bptree::kMaxDegree + 1);
  WritePage(1, leaf);
  const uint64_t leaves[] = {1};
  std::vector<bptree_pair> out(1024);
  errno = 0;
  EXPECT_EQ(-1, bptree_read_leaves(fd_, leaves, 1, 0, UINT64_MAX, out.data(), out.size()));
  EXPECT_EQ(EBADMSG, errno);
}

TEST_F(LeafIoTest, ReadLeavesStopsWhenTheOutputIsFull) {
  WritePage(1, MakeLeaf({{1, 1}, {2, 2}, {3, 3}}, 0));
  const uint64_t leaves[] = {1};
  std::vector<bptree_pair> out(2);
  errno = 0;
  EXPECT_EQ(-1, bptree_read_leaves(fd_, leaves, 1, 0, UINT64_MAX, out.data(), out.size()));
  EXPECT_EQ(ENOBUFS, errno);
  EXPECT_EQ(2, bptree_read_leaves(fd_, leaves, 1, 2, UINT64_MAX, out.data(), out.size()));
}

TEST_F(LeafIoTest, ReadLeavesReportsTheReadError) {
  const uint64_t leaves[] = {1};
  std::vector<bptree_pair> out(2);
  errno = 0;
  EXPECT_EQ(-1, bptree_read_leaves(-1, leaves, 1, 0, UINT64_MAX, out.data(), out.size()));
  EXPECT_EQ(EBADF, errno);
}

TEST_F(LeafIoTest, ReadLeavesRejectsAPartialPageAtTheEndOfTheFile) {
  WritePage(1, MakeLeaf({{1, 1}}, 0));
  ASSERT_EQ(0, ::ftruncate(fd_, static_cast<off_t>(kPageSize + kPageSize / 2)));
  const uint64_t leaves[] = {1};
  std::vector<bptree_pair> out(2);
  errno = 0;
  EXPECT_EQ(-1, bptree_read_leaves(fd_, leaves, 1, 0, UINT64_MAX, out.data(), out.size()));
  EXPECT_EQ(EBADMSG, errno);
}

}  // namespace
