#include "walk/walkable_filesystem.h"

namespace foreactor {

bool IsWalkableFilesystem(long filesystem_type) {
  // Magic numbers of <linux/magic.h>, and of the out-of-tree ZFS, for
  // filesystems that live on block devices.
  switch (static_cast<unsigned long>(filesystem_type) & 0xffffffffUL) {
    case 0xEF53:      // ext2, ext3, ext4
    case 0x58465342:  // xfs
    case 0x9123683E:  // btrfs
    case 0xF2F52010:  // f2fs
    case 0xCA451A4E:  // bcachefs
    case 0x3153464A:  // jfs
    case 0x52654973:  // reiserfs
    case 0x3434:      // nilfs2
    case 0x4D44:      // vfat, msdos
    case 0x2011BAB0:  // exfat
    case 0x5346544E:  // ntfs
    case 0x7366746E:  // ntfs3
    case 0x9660:      // iso9660
    case 0x15013346:  // udf
    case 0x73717368:  // squashfs
    case 0xE0F5E1E2:  // erofs
    case 0x794C7630:  // overlayfs (container images on a disk)
    case 0x2FC12FC1:  // zfs
      return true;
    default:
      return false;
  }
}

}  // namespace foreactor
