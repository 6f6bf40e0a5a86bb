// stat_conversion.h: struct statx -> struct stat, exactly as stat(2) fills it.
//
// The engines run every stat-family call (fstat, fstatat, stat, lstat) as
// statx(2), because that is the one form io_uring offers.  The program still
// expects a struct stat; this conversion must give the very bytes the plain
// call would have written (DESIGN §2 rule 1).
#ifndef FOREACTOR_ENGINE_STAT_CONVERSION_H_
#define FOREACTOR_ENGINE_STAT_CONVERSION_H_

#include <linux/stat.h>  // struct statx
#include <sys/stat.h>

namespace foreactor {

// Fills every field of `*out` from `in`: st_dev and st_rdev from the
// major/minor pairs (makedev), inode, mode, link count, owner, group, size,
// block size, block count, and the access/modification/change times with
// their nanoseconds.  Padding and reserved fields are zeroed, so the result
// compares equal byte for byte with what fstat/stat/lstat/fstatat return.
// `in` must hold at least STATX_BASIC_STATS.  `out` must not be null.
void StatFromStatx(const struct statx& in, struct stat* out);

}  // namespace foreactor

#endif  // FOREACTOR_ENGINE_STAT_CONVERSION_H_
