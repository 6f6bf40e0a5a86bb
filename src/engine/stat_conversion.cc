#include "engine/stat_conversion.h"

#include <sys/sysmacros.h>

#include <cstring>

namespace foreactor {

void StatFromStatx(const struct statx& in, struct stat* out) {
  std::memset(out, 0, sizeof(*out));
  out->st_dev = makedev(in.stx_dev_major, in.stx_dev_minor);
  out->st_ino = in.stx_ino;
  out->st_mode = in.stx_mode;
  out->st_nlink = in.stx_nlink;
  out->st_uid = in.stx_uid;
  out->st_gid = in.stx_gid;
  out->st_rdev = makedev(in.stx_rdev_major, in.stx_rdev_minor);
  out->st_size = static_cast<off_t>(in.stx_size);
  out->st_blksize = static_cast<blksize_t>(in.stx_blksize);
  out->st_blocks = static_cast<blkcnt_t>(in.stx_blocks);
  out->st_atim.tv_sec = in.stx_atime.tv_sec;
  out->st_atim.tv_nsec = in.stx_atime.tv_nsec;
  out->st_mtim.tv_sec = in.stx_mtime.tv_sec;
  out->st_mtim.tv_nsec = in.stx_mtime.tv_nsec;
  out->st_ctim.tv_sec = in.stx_ctime.tv_sec;
  out->st_ctim.tv_nsec = in.stx_ctime.tv_nsec;
}

}  // namespace foreactor
