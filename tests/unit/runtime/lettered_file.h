// lettered_file.h: a temporary file of lettered blocks, for the runtime's
// unit tests that read it through scopes and check what each read returns.
#ifndef FOREACTOR_TESTS_UNIT_RUNTIME_LETTERED_FILE_H_
#define FOREACTOR_TESTS_UNIT_RUNTIME_LETTERED_FILE_H_

#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <string>

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

}  // namespace foreactor

#endif  // FOREACTOR_TESTS_UNIT_RUNTIME_LETTERED_FILE_H_
