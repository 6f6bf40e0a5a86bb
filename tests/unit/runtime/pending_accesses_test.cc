// Tests of PendingAccesses: which calls ahead must wait for the visits
// ahead of the frontier, and which early results a call the program makes
// outside the graph makes stale.  Real temporary files, because files are
// told apart by inode and sizes are asked of the kernel.
#include "runtime/pending_accesses.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/test_files.h"

namespace foreactor {
namespace {

constexpr int64_t kFileSize = 16384;

// A call of `type` on descriptor `fd`; the other arguments zero.
foreactor_call OnDescriptor(foreactor_call_type type, int fd) {
  foreactor_call call{};
  call.type = type;
  call.fd = fd;
  return call;
}
foreactor_call Data(foreactor_call_type type, int fd, int64_t offset, size_t length) {
  foreactor_call call = OnDescriptor(type, fd);
  call.offset = offset;
  call.length = length;
  return call;
}
foreactor_call Pread(int fd, int64_t offset, size_t length) {
  return Data(FOREACTOR_CALL_PREAD, fd, offset, length);
}
foreactor_call Pwrite(int fd, int64_t offset, size_t length) {
  return Data(FOREACTOR_CALL_PWRITE, fd, offset, length);
}
foreactor_call ByPath(foreactor_call_type type, const char* path, int flags = 0) {
  foreactor_call call = OnDescriptor(type, AT_FDCWD);
  call.path = path;
  call.flags = flags;
  return call;
}

class PendingAccessesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(directory_.ok());
    path_ = directory_.Path("file");
    other_path_ = directory_.Path("other");
    for (const std::string* path : {&path_, &other_path_}) {
      int fd = ::open(path->c_str(), O_CREAT | O_RDWR, 0600);
      ASSERT_GE(fd, 0);
      ASSERT_EQ(ftruncate(fd, kFileSize), 0);
      ::close(fd);
    }
    fd_ = ::open(path_.c_str(), O_RDWR);
    same_file_fd_ = ::open(path_.c_str(), O_RDONLY);
    other_fd_ = ::open(other_path_.c_str(), O_RDWR);
    ASSERT_GE(fd_, 0);
    ASSERT_GE(same_file_fd_, 0);
    ASSERT_GE(other_fd_, 0);
    accesses_.Reserve(4);
  }
  void TearDown() override {
    ::close(fd_);
    ::close(same_file_fd_);
    ::close(other_fd_);
  }

  testing::TempDir directory_;  // removed with the files the tests make in it
  std::string path_;
  std::string other_path_;
  int fd_ = -1;
  int same_file_fd_ = -1;
  int other_fd_ = -1;
  FileKindCache file_kinds_;
  PendingAccesses accesses_{&file_kinds_};
};

TEST_F(PendingAccessesTest, PureReadsNeverWaitForEachOther) {
  accesses_.Record(Pread(fd_, 0, 4096));
  accesses_.Record(ByPath(FOREACTOR_CALL_STAT, path_.c_str()));
  EXPECT_FALSE(accesses_.Blocks(Pread(fd_, 0, 4096)));
  EXPECT_FALSE(accesses_.Blocks(ByPath(FOREACTOR_CALL_STAT, path_.c_str())));
}

TEST_F(PendingAccessesTest, AReadWaitsForAPendingWriteOfItsBytesOnly) {
  accesses_.Record(Pwrite(fd_, 4096, 4096));
  EXPECT_TRUE(accesses_.Blocks(Pread(fd_, 6000, 100)));
  EXPECT_TRUE(accesses_.Blocks(Pread(fd_, 0, 4097))) << "one byte in common";
  EXPECT_FALSE(accesses_.Blocks(Pread(fd_, 0, 4096)));
  EXPECT_FALSE(accesses_.Blocks(Pread(fd_, 8192, 4096)));
  EXPECT_FALSE(accesses_.Blocks(Pread(other_fd_, 4096, 4096))) << "another file";
}

TEST_F(PendingAccessesTest, AWriteWaitsForEveryPendingAccessOfItsBytes) {
  accesses_.Record(Pread(fd_, 0, 4096));
  EXPECT_TRUE(accesses_.Blocks(Pwrite(fd_, 0, 10)));
  EXPECT_TRUE(accesses_.Blocks(Pwrite(fd_, 100, 10)));
  EXPECT_FALSE(accesses_.Blocks(Pwrite(fd_, 4096, 10)));
}

TEST_F(PendingAccessesTest, AnotherDescriptorOfTheSameFileIsTheSameFile) {
  accesses_.Record(Pwrite(fd_, 0, 4096));
  EXPECT_TRUE(accesses_.Blocks(Pread(same_file_fd_, 0, 4096)));
  EXPECT_FALSE(accesses_.Blocks(Pread(other_fd_, 0, 4096)));
}

// A copy loop's entries alternate between two descriptors; each entry is
// judged by its own file, whichever descriptor came before it.
TEST_F(PendingAccessesTest, EntriesOnAlternatingDescriptorsAreEachJudgedByTheirFile) {
  accesses_.Record(Pwrite(other_fd_, 0, 4096));
  accesses_.Record(Pwrite(fd_, 8192, 4096));
  accesses_.Record(Pwrite(other_fd_, 4096, 4096));
  accesses_.Record(Pread(same_file_fd_, 0, 4096));
  EXPECT_TRUE(accesses_.Blocks(Pread(same_file_fd_, 8192, 100))) << "the second entry's bytes";
  EXPECT_TRUE(accesses_.Blocks(Pread(fd_, 9000, 100)));
  EXPECT_FALSE(accesses_.Blocks(Pread(same_file_fd_, 4096, 4096))) << "the other file's bytes";
  EXPECT_TRUE(accesses_.Blocks(Pread(other_fd_, 5000, 100))) << "the third entry's bytes";
  EXPECT_FALSE(accesses_.Blocks(Pread(other_fd_, 8192, 4096)));
  EXPECT_TRUE(accesses_.Blocks(Pwrite(fd_, 0, 10))) << "the fourth entry reads those bytes";
  EXPECT_FALSE(accesses_.Blocks(Pwrite(fd_, 4096, 10)));
}

TEST_F(PendingAccessesTest, AWriteThatGrowsTheFileMeetsReadsAcrossTheEnd) {
  accesses_.Record(Pwrite(fd_, kFileSize + 4096, 4096));
  EXPECT_TRUE(accesses_.Blocks(Pread(fd_, kFileSize - 100, 4096)))
      << "the read returns more bytes once the file grew";
  EXPECT_FALSE(accesses_.Blocks(Pread(fd_, 0, 4096))) << "inside the file: unchanged";
}

TEST_F(PendingAccessesTest, ClosesAndDirectoryReadsChangeTheWholeFile) {
  accesses_.Record(OnDescriptor(FOREACTOR_CALL_CLOSE, fd_));
  EXPECT_TRUE(accesses_.Blocks(Pread(fd_, 8192, 1)));
  accesses_.Clear();
  accesses_.Record(Data(FOREACTOR_CALL_GETDENTS64, fd_, 0, 4096));
  EXPECT_TRUE(accesses_.Blocks(Data(FOREACTOR_CALL_GETDENTS64, fd_, 0, 4096)));
}

TEST_F(PendingAccessesTest, CallsByPathWaitForAPendingOpenThatCreatesOrTruncates) {
  const std::string created = directory_.Path("created");
  accesses_.Record(ByPath(FOREACTOR_CALL_OPEN, path_.c_str(), O_RDONLY));
  EXPECT_FALSE(accesses_.Blocks(ByPath(FOREACTOR_CALL_STAT, created.c_str())))
      << "a pure open changes no path";
  accesses_.Record(ByPath(FOREACTOR_CALL_OPEN, created.c_str(), O_WRONLY | O_CREAT));
  EXPECT_TRUE(accesses_.Blocks(ByPath(FOREACTOR_CALL_STAT, created.c_str())));
  EXPECT_TRUE(accesses_.Blocks(ByPath(FOREACTOR_CALL_STAT, path_.c_str())))
      << "any path: it may name the same file";
  EXPECT_FALSE(accesses_.Blocks(Pread(fd_, 0, 4096)));
}

TEST_F(PendingAccessesTest, TheFrontierReleasesEntriesInVisitOrder) {
  accesses_.Record(Pwrite(fd_, 0, 4096));
  accesses_.Record(Pread(fd_, 8192, 4096));
  EXPECT_TRUE(accesses_.Blocks(Pread(fd_, 0, 4096)));
  EXPECT_TRUE(accesses_.Blocks(Pwrite(fd_, 8192, 1)));
  accesses_.ReleaseOldest();  // the write
  EXPECT_FALSE(accesses_.Blocks(Pread(fd_, 0, 4096)));
  EXPECT_TRUE(accesses_.Blocks(Pwrite(fd_, 8192, 1)));
  accesses_.ReleaseOldest();  // the read
  EXPECT_TRUE(accesses_.empty());
  EXPECT_FALSE(accesses_.Blocks(Pwrite(fd_, 8192, 1)));
  accesses_.ReleaseOldest();
  EXPECT_TRUE(accesses_.empty()) << "releasing nothing changes nothing";
}

TEST_F(PendingAccessesTest, TheRingWrapsAroundItsCapacity) {
  for (int round = 0; round < 10; ++round) {
    accesses_.Record(Pread(fd_, 0, 1));
    accesses_.Record(Pwrite(fd_, round * 100, 1));
    accesses_.Record(Pread(other_fd_, 0, 1));
    EXPECT_TRUE(accesses_.Blocks(Pread(fd_, round * 100, 1))) << "round " << round;
    EXPECT_FALSE(accesses_.Blocks(Pread(fd_, round * 100 + 1, 1))) << "round " << round;
    accesses_.ReleaseOldest();
    accesses_.ReleaseOldest();
    EXPECT_FALSE(accesses_.Blocks(Pread(fd_, round * 100, 1))) << "round " << round;
    accesses_.ReleaseOldest();
    EXPECT_TRUE(accesses_.empty());
  }
}

TEST_F(PendingAccessesTest, UsesDescriptorSeesEveryPendingVisitOnIt) {
  EXPECT_FALSE(accesses_.UsesDescriptor(fd_));
  accesses_.Record(Pread(other_fd_, 0, 1));
  accesses_.Record(Pread(fd_, 0, 1));
  EXPECT_TRUE(accesses_.UsesDescriptor(fd_));
  EXPECT_FALSE(accesses_.UsesDescriptor(same_file_fd_)) << "a descriptor, not a file";
  accesses_.Record(ByPath(FOREACTOR_CALL_STAT, path_.c_str()));
  EXPECT_FALSE(accesses_.UsesDescriptor(AT_FDCWD)) << "calls by path use no descriptor";
  accesses_.Clear();
  EXPECT_FALSE(accesses_.UsesDescriptor(fd_));
}

TEST_F(PendingAccessesTest, OnlyCallsWithEffectsMayChangeEarlyResults) {
  EXPECT_FALSE(PendingAccesses::MayChangeEarlyResults(Pread(fd_, 0, 1)));
  EXPECT_FALSE(PendingAccesses::MayChangeEarlyResults(OnDescriptor(FOREACTOR_CALL_FSTAT, fd_)));
  EXPECT_FALSE(
      PendingAccesses::MayChangeEarlyResults(ByPath(FOREACTOR_CALL_OPEN, path_.c_str(), O_RDONLY)));
  EXPECT_TRUE(PendingAccesses::MayChangeEarlyResults(Pwrite(fd_, 0, 1)));
  EXPECT_TRUE(PendingAccesses::MayChangeEarlyResults(OnDescriptor(FOREACTOR_CALL_CLOSE, fd_)));
  EXPECT_TRUE(PendingAccesses::MayChangeEarlyResults(OnDescriptor(FOREACTOR_CALL_LSEEK, fd_)));
  EXPECT_TRUE(
      PendingAccesses::MayChangeEarlyResults(Data(FOREACTOR_CALL_GETDENTS64, fd_, 0, 4096)));
  EXPECT_TRUE(PendingAccesses::MayChangeEarlyResults(
      ByPath(FOREACTOR_CALL_OPEN, path_.c_str(), O_WRONLY | O_TRUNC)));
}

TEST_F(PendingAccessesTest, AWriteMakesStaleTheEarlyReadsOfItsBytes) {
  const PendingAccesses::Change change = accesses_.ChangeBy(Pwrite(fd_, 4096, 4096));
  EXPECT_TRUE(accesses_.MakesStale(change, Pread(fd_, 8000, 4096)));
  EXPECT_TRUE(accesses_.MakesStale(change, Pread(same_file_fd_, 4096, 1)));
  EXPECT_FALSE(accesses_.MakesStale(change, Pread(fd_, 0, 4096)));
  EXPECT_FALSE(accesses_.MakesStale(change, Pread(other_fd_, 4096, 4096)));
  EXPECT_FALSE(accesses_.MakesStale(change, ByPath(FOREACTOR_CALL_STAT, path_.c_str())));
}

TEST_F(PendingAccessesTest, AWriteAtTheFilePositionChangesOnlyTheBytesThere) {
  ASSERT_EQ(lseek(fd_, 8192, SEEK_SET), 8192);
  foreactor_call write = Data(FOREACTOR_CALL_WRITE, fd_, 0, 4096);  // offset: not yet known
  const PendingAccesses::Change change = accesses_.ChangeBy(write);
  EXPECT_TRUE(accesses_.MakesStale(change, Pread(fd_, 8192, 10)));
  EXPECT_FALSE(accesses_.MakesStale(change, Pread(fd_, 0, 4096)));
}

TEST_F(PendingAccessesTest, AWriteToAFileOpenedForAppendingChangesAllOfIt) {
  const int appending = ::open(path_.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(appending, 0);
  const PendingAccesses::Change change =
      accesses_.ChangeBy(Data(FOREACTOR_CALL_WRITE, appending, 0, 10));
  EXPECT_TRUE(accesses_.MakesStale(change, Pread(fd_, 0, 1)));
  ::close(appending);
}

TEST_F(PendingAccessesTest, CloseSeekAndCreationMakeStaleWhatTheyTouch) {
  const PendingAccesses::Change close = accesses_.ChangeBy(OnDescriptor(FOREACTOR_CALL_CLOSE, fd_));
  EXPECT_TRUE(accesses_.MakesStale(close, Pread(fd_, 0, 1)));
  EXPECT_FALSE(accesses_.MakesStale(close, Pread(same_file_fd_, 0, 1)))
      << "the file stays open through the other descriptor";

  const PendingAccesses::Change seek = accesses_.ChangeBy(OnDescriptor(FOREACTOR_CALL_LSEEK, fd_));
  EXPECT_TRUE(accesses_.MakesStale(seek, Data(FOREACTOR_CALL_GETDENTS64, fd_, 0, 4096)));
  EXPECT_FALSE(accesses_.MakesStale(seek, Pread(fd_, 0, 1))) << "a pread has its own offset";

  const std::string created = directory_.Path("created");
  const PendingAccesses::Change creation =
      accesses_.ChangeBy(ByPath(FOREACTOR_CALL_OPEN, created.c_str(), O_WRONLY | O_CREAT));
  EXPECT_TRUE(accesses_.MakesStale(creation, ByPath(FOREACTOR_CALL_STAT, created.c_str())));
  EXPECT_FALSE(accesses_.MakesStale(creation, Pread(fd_, 0, 1)));
}

}  // namespace
}  // namespace foreactor
