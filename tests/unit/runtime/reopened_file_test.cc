// Tests of ReopenReadOnly(): the descriptor names the program's file, is
// read-only, close-on-exec and in the high range (the program's next open
// gets the number it would have got), carries the program's O_NOATIME, and
// none is made when the file is not the one the caller named.
#include "runtime/reopened_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "engine/high_descriptors.h"
#include "engine/test_files.h"
#include "gtest/gtest.h"

namespace foreactor {
namespace {

class ReopenedFileTest : public ::testing::Test {
 protected:
  // Opens `name`, written with `bytes`, with `flags`; fills `status_`.
  int OpenFile(const std::string& name, const std::string& bytes, int flags = O_RDWR) {
    const int writer = ::open(temp_.Path(name).c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    EXPECT_EQ(::write(writer, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    ::close(writer);
    const int fd = ::open(temp_.Path(name).c_str(), flags);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::fstat(fd, &status_), 0);
    return fd;
  }

  testing::TempDir temp_;
  struct stat status_ {};
};

TEST_F(ReopenedFileTest, ReadsTheSameFileReadOnlyFromAHighNumber) {
  const int fd = OpenFile("data", "the program's bytes");
  const int free_before = ::dup(fd);
  ::close(free_before);
  struct stat status {};
  const int ours = ReopenReadOnly(fd, 0, status_.st_dev, status_.st_ino, &status);
  ASSERT_GE(ours, 0);
  EXPECT_EQ(status.st_ino, status_.st_ino);
  EXPECT_EQ(status.st_size, status_.st_size);
  EXPECT_GE(ours, HighDescriptorFloor(HighDescriptorCeiling()));
  EXPECT_EQ(::fcntl(ours, F_GETFL) & O_ACCMODE, O_RDONLY);
  EXPECT_NE(::fcntl(ours, F_GETFD) & FD_CLOEXEC, 0);
  char bytes[64] = {};
  EXPECT_EQ(::pread(ours, bytes, sizeof(bytes), 4), 15);
  EXPECT_EQ(std::string(bytes), "program's bytes");
  // A descriptor of its own: its file position and the program's are apart.
  EXPECT_EQ(::read(ours, bytes, 3), 3);
  EXPECT_EQ(::lseek(fd, 0, SEEK_CUR), 0);
  const int next = ::dup(fd);
  EXPECT_EQ(next, free_before) << "the program's next number is unchanged";
  ::close(next);
  ::close(ours);
  ::close(fd);
}

TEST_F(ReopenedFileTest, AddsTheFlagsAskedForAndTheProgramsNoAccessTime) {
  const int fd = OpenFile("data", "bytes", O_RDONLY | O_NOATIME);
  struct stat status {};
  const int ours = ReopenReadOnly(fd, O_NONBLOCK, status_.st_dev, status_.st_ino, &status);
  ASSERT_GE(ours, 0);
  EXPECT_NE(::fcntl(ours, F_GETFL) & O_NOATIME, 0);
  EXPECT_NE(::fcntl(ours, F_GETFL) & O_NONBLOCK, 0);
  ::close(ours);
  ::close(fd);
}

TEST_F(ReopenedFileTest, MakesNoneForAnotherFile) {
  const int fd = OpenFile("data", "bytes");
  struct stat other {};
  ASSERT_EQ(::stat(temp_.Path(".").c_str(), &other), 0);
  struct stat status {};
  EXPECT_EQ(ReopenReadOnly(fd, 0, status_.st_dev, other.st_ino, &status), -1);
  // Nothing was left open: the next number is the lowest free one.
  const int next = ::dup(fd);
  EXPECT_EQ(next, fd + 1);
  ::close(next);
  ::close(fd);
}

TEST_F(ReopenedFileTest, MakesNoneForAClosedDescriptor) {
  const int fd = OpenFile("data", "bytes");
  ::close(fd);
  struct stat status {};
  EXPECT_EQ(ReopenReadOnly(fd, 0, status_.st_dev, status_.st_ino, &status), -1);
}

// A record lock of the process's on a byte of the file, through any of its
// descriptors, is seen from ours; CloseUnlessLocked() then keeps ours open
// (its close would release the lock), and closes it once the lock is gone.
TEST_F(ReopenedFileTest, ALockedFilesDescriptorIsClosedOnlyOnceUnlocked) {
  const int fd = OpenFile("data", "bytes of a locked file");
  struct stat status {};
  const int ours = ReopenReadOnly(fd, 0, status_.st_dev, status_.st_ino, &status);
  ASSERT_GE(ours, 0);
  EXPECT_FALSE(FileLocked(ours));
  struct flock lock {};
  lock.l_type = F_RDLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = 6;
  lock.l_len = 2;
  ASSERT_EQ(::fcntl(fd, F_SETLK, &lock), 0);
  EXPECT_TRUE(FileLocked(ours));
  EXPECT_FALSE(CloseUnlessLocked(ours));
  EXPECT_NE(::fcntl(ours, F_GETFD), -1) << "kept open";
  EXPECT_TRUE(FileLocked(fd)) << "the lock holds";
  lock.l_type = F_UNLCK;
  ASSERT_EQ(::fcntl(fd, F_SETLK, &lock), 0);
  EXPECT_TRUE(CloseUnlessLocked(ours));
  EXPECT_EQ(::fcntl(ours, F_GETFD), -1);
  ::close(fd);
}

TEST_F(ReopenedFileTest, AClosedDescriptorCountsAsLocked) { EXPECT_TRUE(FileLocked(-1)); }

}  // namespace
}  // namespace foreactor
