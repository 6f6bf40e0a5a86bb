// Tests of the filesystems walk-ahead may walk.
#include "walk/walkable_filesystem.h"

#include <linux/magic.h>
#include <sys/statfs.h>

#include <initializer_list>

#include <gtest/gtest.h>

namespace foreactor {
namespace {

TEST(WalkableFilesystemTest, DiskFilesystemsAreWalkable) {
  EXPECT_TRUE(IsWalkableFilesystem(EXT4_SUPER_MAGIC));
  EXPECT_TRUE(IsWalkableFilesystem(XFS_SUPER_MAGIC));
  EXPECT_TRUE(IsWalkableFilesystem(BTRFS_SUPER_MAGIC));
  EXPECT_TRUE(IsWalkableFilesystem(F2FS_SUPER_MAGIC));
  EXPECT_TRUE(IsWalkableFilesystem(OVERLAYFS_SUPER_MAGIC));
}

TEST(WalkableFilesystemTest, PseudoMemoryAndNetworkFilesystemsAreNot) {
  for (long type : std::initializer_list<long>{
           PROC_SUPER_MAGIC, SYSFS_MAGIC, TMPFS_MAGIC, RAMFS_MAGIC, DEBUGFS_MAGIC,
           CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, DEVPTS_SUPER_MAGIC, TRACEFS_MAGIC,
           NFS_SUPER_MAGIC, FUSE_SUPER_MAGIC, SECURITYFS_MAGIC, BPF_FS_MAGIC}) {
    EXPECT_FALSE(IsWalkableFilesystem(type)) << std::hex << type;
  }
}

TEST(WalkableFilesystemTest, ProcAndSysOfThisMachineAreNotWalkable) {
  struct statfs filesystem;
  ASSERT_EQ(statfs("/proc", &filesystem), 0);
  EXPECT_FALSE(IsWalkableFilesystem(filesystem.f_type));
  ASSERT_EQ(statfs("/sys", &filesystem), 0);
  EXPECT_FALSE(IsWalkableFilesystem(filesystem.f_type));
}

}  // namespace
}  // namespace foreactor
