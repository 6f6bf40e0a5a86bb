// lettered_file.h: a temporary file of lettered blocks, for the runtime's
// unit tests that read it through scopes and check what each read returns,
// and a way to take a range of a file out of the page cache (also used by
// the random-graph tester, tests/random_graphs).
#ifndef FOREACTOR_TESTS_UNIT_RUNTIME_LETTERED_FILE_H_
#define FOREACTOR_TESTS_UNIT_RUNTIME_LETTERED_FILE_H_

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "foreactor/foreactor.h"

namespace foreactor {

// The byte every byte of block `block` holds.
inline char BlockLetter(uint64_t block) { return static_cast<char>('a' + block); }

// A descriptor of a new file in /tmp, already unlinked, of `blocks` blocks
// of `block_bytes` bytes, block i filled with BlockLetter(i); -1 when it
// cannot be made or written.
inline int MakeLetteredFile(uint64_t blocks, uint64_t block_bytes) {
  char path[] = "/tmp/foreactor_lettered_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return -1;
  unlink(path);
  for (uint64_t block = 0; block < blocks; ++block) {
    const std::string bytes(block_bytes, BlockLetter(block));
    if (write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
      close(fd);
      return -1;
    }
  }
  return fd;
}

// Writes `fd`'s dirty pages back and drops bytes [offset, offset + length)
// of its file from the page cache (POSIX_FADV_DONTNEED drops clean pages
// only).  Returns true when the page cache then holds none of the range's
// pages; false when one stays (tmpfs keeps them) or the kernel cannot tell
// (no cachestat(2)): tests of cold ranges are then skipped.
inline bool DropFromPageCache(int fd, uint64_t offset, uint64_t length) {
  if (fdatasync(fd) != 0) return false;
  posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(length), POSIX_FADV_DONTNEED);
  uint64_t cached = 1, pages = 0;
  return foreactor_pages_cached(fd, offset, length, &cached, &pages) == 0 && cached == 0;
}

}  // namespace foreactor

#endif  // FOREACTOR_TESTS_UNIT_RUNTIME_LETTERED_FILE_H_
