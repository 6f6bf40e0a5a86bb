// Tests of FileKindCache: what it reports about a descriptor, and that it
// asks the kernel once per descriptor until told to forget.
#include "runtime/file_kind_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "engine/test_files.h"

namespace foreactor {
namespace {

class FileKindCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    directory_ = temp_.path();
    path_ = temp_.Path("file");
    int fd = open(path_.c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    close(fd);
  }

  testing::TempDir temp_;
  std::string directory_;
  std::string path_;
};

TEST_F(FileKindCacheTest, RegularFileIsKnownWithItsDeviceAndInode) {
  int fd = open(path_.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  struct stat status;
  ASSERT_EQ(fstat(fd, &status), 0);
  FileKindCache cache;
  FileKindCache::Kind kind = cache.Lookup(fd);
  EXPECT_TRUE(kind.known);
  EXPECT_TRUE(kind.regular);
  EXPECT_FALSE(kind.directory);
  EXPECT_FALSE(kind.append);
  EXPECT_FALSE(kind.direct);
  EXPECT_EQ(kind.device, status.st_dev);
  EXPECT_EQ(kind.inode, status.st_ino);
  close(fd);
}

TEST_F(FileKindCacheTest, AppendFlagAndDirectoryAreSeen) {
  int append_fd = open(path_.c_str(), O_WRONLY | O_APPEND);
  int directory_fd = open(directory_.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(append_fd, 0);
  ASSERT_GE(directory_fd, 0);
  FileKindCache cache;
  EXPECT_TRUE(cache.Lookup(append_fd).append);
  EXPECT_TRUE(cache.Lookup(directory_fd).directory);
  EXPECT_FALSE(cache.Lookup(directory_fd).regular);
  close(append_fd);
  close(directory_fd);
}

TEST_F(FileKindCacheTest, DescriptorThatIsNotOpenIsUnknown) {
  FileKindCache cache;
  EXPECT_FALSE(cache.Lookup(-1).known);
  EXPECT_FALSE(cache.Lookup(-1).regular);
}

// The answer is kept for the descriptor number: a number that names
// another file since must be forgotten (or the cache cleared) to be asked
// again.
TEST_F(FileKindCacheTest, AnswerIsKeptUntilForgottenOrCleared) {
  int fd = open(path_.c_str(), O_RDONLY);
  int directory_fd = open(directory_.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  ASSERT_GE(directory_fd, 0);
  FileKindCache cache;
  ASSERT_TRUE(cache.Lookup(fd).regular);
  ASSERT_EQ(dup2(directory_fd, fd), fd);  // the number now names the directory
  EXPECT_TRUE(cache.Lookup(fd).regular);
  cache.Forget(fd);
  EXPECT_TRUE(cache.Lookup(fd).directory);
  ASSERT_EQ(close(fd), 0);
  ASSERT_EQ(open(path_.c_str(), O_RDONLY), fd);  // lowest free number: the same again
  EXPECT_TRUE(cache.Lookup(fd).directory);
  cache.Clear();
  EXPECT_TRUE(cache.Lookup(fd).regular);
  close(fd);
  close(directory_fd);
}

// OpenedForDirectIo() asks the kernel for the open flags alone, remembers
// nothing, and answers from a remembered kind when there is one.
TEST_F(FileKindCacheTest, OpenedForDirectIoReadsTheFlagsOrTheRememberedKind) {
  int buffered_fd = open(path_.c_str(), O_RDONLY);
  int direct_fd = open(path_.c_str(), O_RDONLY | O_DIRECT);
  ASSERT_GE(buffered_fd, 0);
  if (direct_fd < 0) {
    close(buffered_fd);
    GTEST_SKIP() << "the test directory's file system refuses O_DIRECT";
  }
  FileKindCache cache;
  EXPECT_FALSE(cache.OpenedForDirectIo(buffered_fd));
  EXPECT_TRUE(cache.OpenedForDirectIo(direct_fd));
  EXPECT_FALSE(cache.OpenedForDirectIo(-1));
  // Not remembered: the number now names a buffered descriptor.
  const int number = direct_fd;
  ASSERT_EQ(dup2(buffered_fd, number), number);
  EXPECT_FALSE(cache.OpenedForDirectIo(number));
  // Remembered by Lookup(): kept until forgotten, as Lookup()'s answer is.
  ASSERT_FALSE(cache.Lookup(number).direct);
  const int other_direct_fd = open(path_.c_str(), O_RDONLY | O_DIRECT);
  ASSERT_GE(other_direct_fd, 0);
  ASSERT_EQ(dup2(other_direct_fd, number), number);
  EXPECT_FALSE(cache.OpenedForDirectIo(number));
  cache.Forget(number);
  EXPECT_TRUE(cache.OpenedForDirectIo(number));
  close(other_direct_fd);
  close(number);
  close(buffered_fd);
}

// More descriptors than entries: each lookup still answers for its own
// descriptor.
TEST_F(FileKindCacheTest, MoreDescriptorsThanEntriesAreAnsweredEachForItself) {
  int directory_fd = open(directory_.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(directory_fd, 0);
  constexpr int kFiles = 20;
  int fds[kFiles];
  for (int& fd : fds) {
    fd = open(path_.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
  }
  FileKindCache cache;
  for (int round = 0; round < 2; ++round) {
    for (int fd : fds) EXPECT_TRUE(cache.Lookup(fd).regular);
    EXPECT_TRUE(cache.Lookup(directory_fd).directory);
  }
  for (int fd : fds) close(fd);
  close(directory_fd);
}

}  // namespace
}  // namespace foreactor
