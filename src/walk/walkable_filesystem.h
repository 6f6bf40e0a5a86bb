// walkable_filesystem.h: which filesystems walk-ahead may read ahead of a
// program.
//
// Walk-ahead warms the kernel's caches for a program's coming directory
// reads and stats.  That pays only where those calls wait for a device, and
// it is safe only where reading a directory has no effect beyond its access
// time.  So the rule is an allowlist of filesystems that keep their
// directories and inodes on a block device: pseudo filesystems (/proc, /sys,
// cgroups, debugfs, ...), memory filesystems (tmpfs, ramfs), network and
// FUSE filesystems are never walked ahead.
#ifndef FOREACTOR_WALK_WALKABLE_FILESYSTEM_H_
#define FOREACTOR_WALK_WALKABLE_FILESYSTEM_H_

namespace foreactor {

// True when a filesystem whose statfs(2) f_type is `filesystem_type` may be
// walked ahead (see above).
bool IsWalkableFilesystem(long filesystem_type);

}  // namespace foreactor

#endif  // FOREACTOR_WALK_WALKABLE_FILESYSTEM_H_
