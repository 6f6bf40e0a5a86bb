#include "runtime/file_kind_cache.h"

#include <fcntl.h>
#include <linux/stat.h>
#include <sys/stat.h>

#include "runtime/raw_syscalls.h"

namespace foreactor {

bool DirectIoAlignment(int fd, uint32_t* memory_align, uint32_t* offset_align) {
  struct statx alignment {};
  if (raw::FstatxOf(fd, STATX_DIOALIGN, &alignment) != 0 ||
      (alignment.stx_mask & STATX_DIOALIGN) == 0 || alignment.stx_dio_mem_align == 0 ||
      alignment.stx_dio_offset_align == 0) {
    return false;
  }
  *memory_align = alignment.stx_dio_mem_align;
  *offset_align = alignment.stx_dio_offset_align;
  return true;
}

bool FileKindCache::OpenedForDirectIo(int fd) const {
  const Entry* entry = Find(fd);
  if (entry != nullptr) return entry->kind.direct;
  const int64_t flags = raw::Fcntl(fd, F_GETFL, 0);
  return flags >= 0 && (flags & O_DIRECT) != 0;
}

FileKindCache::Kind FileKindCache::AskKernel(int fd) {
  Kind kind;
  struct stat status;
  if (raw::Fstat(fd, &status) == 0) {
    kind.regular = S_ISREG(status.st_mode);
    kind.directory = S_ISDIR(status.st_mode);
    kind.known = true;
    kind.device = status.st_dev;
    kind.inode = status.st_ino;
    int64_t flags = raw::Fcntl(fd, F_GETFL, 0);
    kind.append = flags >= 0 && (flags & O_APPEND) != 0;
    kind.direct = flags >= 0 && (flags & O_DIRECT) != 0;
    if (kind.direct) {
      // What the kernel demands of direct I/O on this file; when it cannot
      // say, a page, which no file system exceeds for memory or offsets.
      kind.direct_memory_align = kind.direct_offset_align = 4096;
      DirectIoAlignment(fd, &kind.direct_memory_align, &kind.direct_offset_align);
    }
  }
  int index = used_ < kEntries ? used_++ : (next_victim_++ % kEntries);
  entries_[index] = Entry{fd, kind};
  return kind;
}

}  // namespace foreactor
