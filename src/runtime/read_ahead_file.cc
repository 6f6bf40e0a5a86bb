// read_ahead_file.cc: the public foreactor_read_ahead_file()
// (include/foreactor/foreactor.h): a read-ahead hint for a file the program
// has not opened yet, carried out by PathReadAhead's thread.
#include <fcntl.h>
#include <sys/stat.h>

#include <cstdint>

#include "foreactor/foreactor.h"
#include "runtime/path_read_ahead.h"
#include "runtime/raw_syscalls.h"

extern "C" int foreactor_read_ahead_file(const char* path, uint64_t offset, uint64_t length) {
  if (path == nullptr || length == 0 || offset > INT64_MAX || length > INT64_MAX - offset)
    return -1;
  // Recent hints all found their ranges cached: this one is left out, path
  // unchecked (path_read_ahead.h).
  if (foreactor::PathReadAhead::Needless()) return 0;
  // Only a regular file is opened: opening a device or a FIFO can act on it.
  struct stat status;
  if (foreactor::raw::Fstatat(AT_FDCWD, path, &status, 0) < 0 || !S_ISREG(status.st_mode)) {
    return -1;
  }
  return foreactor::PathReadAhead::Queue(path, status.st_dev, status.st_ino, offset, length) ? 0
                                                                                             : -1;
}
