// read_ahead_file.cc: the public foreactor_read_ahead_file()
// (include/foreactor/foreactor.h): a read-ahead hint for a file the program
// has not opened yet.
#include <fcntl.h>
#include <sys/stat.h>

#include <cstdint>

#include "foreactor/foreactor.h"
#include "runtime/raw_syscalls.h"

extern "C" int foreactor_read_ahead_file(const char* path, uint64_t offset, uint64_t length) {
  if (path == nullptr || length == 0 || offset > INT64_MAX || length > INT64_MAX - offset)
    return -1;
  // Only a regular file is opened: opening a device or a FIFO can act on it.
  struct stat status;
  if (foreactor::raw::Fstatat(AT_FDCWD, path, &status, 0) < 0 || !S_ISREG(status.st_mode)) {
    return -1;
  }
  const int64_t fd =
      foreactor::raw::Openat2(AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0);
  if (fd < 0) return -1;
  const int descriptor = static_cast<int>(fd);
  // The path may name another file than the one just checked.
  const bool regular = foreactor::raw::Fstat(descriptor, &status) == 0 && S_ISREG(status.st_mode);
  const bool started =
      regular && foreactor::raw::Readahead(descriptor, static_cast<int64_t>(offset), length) == 0;
  foreactor::raw::Close(descriptor);
  return started ? 0 : -1;
}
