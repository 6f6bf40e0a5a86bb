// StatFromStatx must give the very bytes fstat/stat/lstat/fstatat give.
#include "engine/stat_conversion.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace foreactor {
namespace {

// A fresh directory holding a regular file (with nanosecond times and a
// size above 4 GiB), a subdirectory and a symlink; removed afterwards.
class StatConversionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/statconv.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    file_ = dir_ + "/file";
    subdir_ = dir_ + "/subdir";
    link_ = dir_ + "/link";
    const int fd = open(file_.c_str(), O_CREAT | O_WRONLY, 0640);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "hello", 5), 5);
    ASSERT_EQ(ftruncate(fd, (off_t{5} << 30) + 123), 0);
    const struct timespec times[2] = {{1000000000, 123456789}, {1200000000, 987654321}};
    ASSERT_EQ(futimens(fd, times), 0);
    close(fd);
    ASSERT_EQ(mkdir(subdir_.c_str(), 0750), 0);
    ASSERT_EQ(symlink("file", link_.c_str()), 0);
  }

  void TearDown() override {
    unlink(link_.c_str());
    unlink(file_.c_str());
    rmdir(subdir_.c_str());
    if (!device_.empty()) unlink(device_.c_str());
    rmdir(dir_.c_str());
  }

  std::string dir_, file_, subdir_, link_, device_;
};

// Converts with StatFromStatx into a buffer full of garbage, so unzeroed
// padding would show.
struct stat Converted(const struct statx& in) {
  struct stat out;
  std::memset(&out, 0xab, sizeof(out));
  StatFromStatx(in, &out);
  return out;
}

void ExpectSameStat(const struct stat& expected, const struct stat& actual) {
  EXPECT_EQ(expected.st_dev, actual.st_dev);
  EXPECT_EQ(expected.st_ino, actual.st_ino);
  EXPECT_EQ(expected.st_mode, actual.st_mode);
  EXPECT_EQ(expected.st_nlink, actual.st_nlink);
  EXPECT_EQ(expected.st_uid, actual.st_uid);
  EXPECT_EQ(expected.st_gid, actual.st_gid);
  EXPECT_EQ(expected.st_rdev, actual.st_rdev);
  EXPECT_EQ(expected.st_size, actual.st_size);
  EXPECT_EQ(expected.st_blksize, actual.st_blksize);
  EXPECT_EQ(expected.st_blocks, actual.st_blocks);
  EXPECT_EQ(expected.st_atim.tv_sec, actual.st_atim.tv_sec);
  EXPECT_EQ(expected.st_atim.tv_nsec, actual.st_atim.tv_nsec);
  EXPECT_EQ(expected.st_mtim.tv_sec, actual.st_mtim.tv_sec);
  EXPECT_EQ(expected.st_mtim.tv_nsec, actual.st_mtim.tv_nsec);
  EXPECT_EQ(expected.st_ctim.tv_sec, actual.st_ctim.tv_sec);
  EXPECT_EQ(expected.st_ctim.tv_nsec, actual.st_ctim.tv_nsec);
  EXPECT_EQ(0, std::memcmp(&expected, &actual, sizeof(struct stat))) << "padding differs";
}

// stat(path) or lstat(path) against statx with the matching flags.
void ExpectPathMatches(const std::string& path, bool follow) {
  SCOPED_TRACE(path + (follow ? " (stat)" : " (lstat)"));
  struct stat expected;
  std::memset(&expected, 0xcd, sizeof(expected));
  ASSERT_EQ(follow ? stat(path.c_str(), &expected) : lstat(path.c_str(), &expected), 0);
  struct statx in;
  ASSERT_EQ(statx(AT_FDCWD, path.c_str(), follow ? 0 : AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &in),
            0);
  ExpectSameStat(expected, Converted(in));
}

// fstat(fd) against statx(fd, "", AT_EMPTY_PATH).
void ExpectDescriptorMatches(const std::string& path, int open_flags) {
  SCOPED_TRACE(path + " (fstat)");
  const int fd = open(path.c_str(), open_flags);
  ASSERT_GE(fd, 0);
  struct stat expected;
  std::memset(&expected, 0xcd, sizeof(expected));
  ASSERT_EQ(fstat(fd, &expected), 0);
  struct statx in;
  ASSERT_EQ(statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &in), 0);
  close(fd);
  ExpectSameStat(expected, Converted(in));
}

// fstatat(dirfd, name, flags) against statx(dirfd, name, flags).
void ExpectAtMatches(const std::string& dir, const char* name, int flags) {
  SCOPED_TRACE(dir + "/" + name + " (fstatat)");
  const int dirfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dirfd, 0);
  struct stat expected;
  std::memset(&expected, 0xcd, sizeof(expected));
  ASSERT_EQ(fstatat(dirfd, name, &expected, flags), 0);
  struct statx in;
  ASSERT_EQ(statx(dirfd, name, flags, STATX_BASIC_STATS, &in), 0);
  close(dirfd);
  ExpectSameStat(expected, Converted(in));
}

TEST_F(StatConversionTest, RegularFileMatchesStatLstatFstatAndFstatat) {
  ExpectPathMatches(file_, true);
  ExpectPathMatches(file_, false);
  ExpectDescriptorMatches(file_, O_RDONLY);
  ExpectAtMatches(dir_, "file", 0);
  struct statx in;
  ASSERT_EQ(statx(AT_FDCWD, file_.c_str(), 0, STATX_BASIC_STATS, &in), 0);
  const struct stat out = Converted(in);
  EXPECT_EQ(out.st_size, (off_t{5} << 30) + 123);
  EXPECT_EQ(out.st_atim.tv_nsec, 123456789);
  EXPECT_EQ(out.st_mtim.tv_nsec, 987654321);
}

TEST_F(StatConversionTest, DirectoryMatches) {
  ExpectPathMatches(subdir_, true);
  ExpectPathMatches(subdir_, false);
  ExpectDescriptorMatches(subdir_, O_RDONLY | O_DIRECTORY);
  ExpectAtMatches(dir_, "subdir", 0);
  ExpectAtMatches(dir_, ".", 0);
}

TEST_F(StatConversionTest, SymlinkMatchesBothFollowedAndNot) {
  ExpectPathMatches(link_, true);
  ExpectPathMatches(link_, false);
  ExpectDescriptorMatches(link_, O_PATH | O_NOFOLLOW);
  ExpectAtMatches(dir_, "link", 0);
  ExpectAtMatches(dir_, "link", AT_SYMLINK_NOFOLLOW);
  struct statx in;
  ASSERT_EQ(statx(AT_FDCWD, link_.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &in), 0);
  EXPECT_TRUE(S_ISLNK(Converted(in).st_mode));
}

TEST_F(StatConversionTest, DevNullMatchesWithItsDeviceNumber) {
  ExpectPathMatches("/dev/null", true);
  ExpectDescriptorMatches("/dev/null", O_RDONLY);
  ExpectAtMatches("/dev", "null", 0);
  struct statx in;
  ASSERT_EQ(statx(AT_FDCWD, "/dev/null", 0, STATX_BASIC_STATS, &in), 0);
  const struct stat out = Converted(in);
  EXPECT_EQ(major(out.st_rdev), 1u);
  EXPECT_EQ(minor(out.st_rdev), 3u);
}

// Major and minor numbers wider than 8 bits use the split encoding.
TEST_F(StatConversionTest, LargeDeviceNumbersMatch) {
  device_ = dir_ + "/device";
  if (mknod(device_.c_str(), S_IFCHR | 0600, makedev(300, 70000)) != 0) {
    device_.clear();
    GTEST_SKIP() << "mknod not permitted here";
  }
  ExpectPathMatches(device_, true);
  ExpectAtMatches(dir_, "device", 0);
  struct statx in;
  ASSERT_EQ(statx(AT_FDCWD, device_.c_str(), 0, STATX_BASIC_STATS, &in), 0);
  const struct stat out = Converted(in);
  EXPECT_EQ(major(out.st_rdev), 300u);
  EXPECT_EQ(minor(out.st_rdev), 70000u);
}

}  // namespace
}  // namespace foreactor
