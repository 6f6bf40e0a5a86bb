#include "runtime/reopened_file.h"

#include <fcntl.h>

#include <cstdio>

#include "engine/high_descriptors.h"
#include "runtime/raw_syscalls.h"

namespace foreactor {

int ReopenReadOnly(int fd, uint64_t flags, dev_t device, ino_t inode, struct stat* status) {
  const long floor = HighDescriptorFloor(HighDescriptorCeiling());
  if (floor < 0) return -1;
  const int64_t program_flags = raw::Fcntl(fd, F_GETFL, 0);
  if (program_flags < 0) return -1;
  const uint64_t no_access_time = (program_flags & O_NOATIME) != 0 ? O_NOATIME : 0;
  char path[40];
  std::snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  const int64_t opened =
      raw::Openat2(AT_FDCWD, path, O_RDONLY | O_CLOEXEC | flags | no_access_time, 0);
  if (opened < 0) return -1;
  const int64_t moved = raw::Fcntl(static_cast<int>(opened), F_DUPFD_CLOEXEC, floor);
  raw::Close(static_cast<int>(opened));
  if (moved < 0) return -1;
  const int descriptor = static_cast<int>(moved);
  if (raw::Fstat(descriptor, status) != 0 || status->st_dev != device || status->st_ino != inode) {
    raw::Close(descriptor);
    return -1;
  }
  return descriptor;
}

int OpenSameRegularFile(const char* path, uint64_t flags, dev_t device, ino_t inode) {
  const int64_t opened = raw::Openat2(AT_FDCWD, path, flags, 0);
  if (opened < 0) return -1;
  const int descriptor = static_cast<int>(opened);
  struct stat status {};
  if (raw::Fstat(descriptor, &status) != 0 || !S_ISREG(status.st_mode) || status.st_dev != device ||
      status.st_ino != inode) {
    raw::Close(descriptor);
    return -1;
  }
  return descriptor;
}

bool FileLocked(int fd) {
  struct flock probe {};
  probe.l_type = F_WRLCK;  // conflicts with every lock
  probe.l_whence = SEEK_SET;
  return raw::Fcntl(fd, F_OFD_GETLK, reinterpret_cast<long>(&probe)) != 0 ||
         probe.l_type != F_UNLCK;
}

bool CloseUnlessLocked(int fd) {
  if (FileLocked(fd)) return false;
  raw::Close(fd);
  return true;
}

}  // namespace foreactor
