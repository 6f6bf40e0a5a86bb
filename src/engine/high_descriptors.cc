#include "engine/high_descriptors.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace foreactor {

long HighDescriptorCeiling() {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > static_cast<rlim_t>(kHighDescriptorCap)) {
    return kHighDescriptorCap;
  }
  return static_cast<long>(limit.rlim_cur);
}

long HighDescriptorFloor(long ceiling) {
  if (ceiling < 256) return -1;
  return ceiling >= 2048 ? ceiling - 1024 : ceiling / 2;
}

void ReserveHighDescriptors() {
  const long ceiling = HighDescriptorCeiling();
  if (ceiling < 1) return;
  // Any descriptor will do as the source of the duplicate; open one of our
  // own rather than rely on the program's 0, 1 and 2.
  const long source = syscall(SYS_openat, AT_FDCWD, "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (source < 0) return;
  const long top = syscall(SYS_fcntl, source, F_DUPFD_CLOEXEC, ceiling - 1);
  if (top >= 0) syscall(SYS_close, top);
  syscall(SYS_close, source);
}

}  // namespace foreactor
