// file_kind_cache.h: what the runner knows about a descriptor for the
// length of a scope: file type, open flags, identity, direct I/O alignment.
//
// Asked on the hot path before calls are issued or matched; the kernel is
// asked once per descriptor and scope (fstat, fcntl, statx), and the cache
// is cleared at each scope's start, because a descriptor number can name
// another file in the next scope.  Holds kEntries descriptors, replaced in
// turn when it is full.  Used by the owning thread only.
#ifndef FOREACTOR_RUNTIME_FILE_KIND_CACHE_H_
#define FOREACTOR_RUNTIME_FILE_KIND_CACHE_H_

#include <sys/types.h>

#include <cstdint>

namespace foreactor {

// The buffer address and the offset and length alignment that direct I/O
// on `fd` needs (statx STATX_DIOALIGN).  False, with the outputs
// untouched, when the kernel cannot say.
bool DirectIoAlignment(int fd, uint32_t* memory_align, uint32_t* offset_align);

// What the runtime knows about a descriptor for the length of a scope.
class FileKindCache {
 public:
  struct Kind {
    bool regular = false;    // S_ISREG
    bool directory = false;  // S_ISDIR
    bool append = false;     // O_APPEND set
    bool direct = false;     // O_DIRECT set: reads bypass the page cache, buffers must be aligned
    uint32_t direct_memory_align = 0;  // direct only: buffer address alignment the kernel needs
    uint32_t direct_offset_align = 0;  // direct only: offset and length alignment
    bool known = false;                // fstat succeeded: device and inode are set
    dev_t device = 0;
    ino_t inode = 0;
  };
  // The kind of `fd`, asking the kernel on first use since Clear() or
  // Forget(fd).  A descriptor the kernel cannot stat has known == false.
  Kind Lookup(int fd) {
    const Entry* entry = Find(fd);
    return entry != nullptr ? entry->kind : AskKernel(fd);
  }
  // True when `fd` was opened with O_DIRECT: the kind remembered for it
  // when there is one, otherwise one fcntl(F_GETFL), not remembered (what
  // a scope that only needs to know whether reads go through the page
  // cache asks: Lookup() also stats the file).  False when the kernel
  // cannot say.
  bool OpenedForDirectIo(int fd) const;
  // `fd` was closed or may name another file now.
  void Forget(int fd) {
    for (int i = 0; i < used_; ++i) {
      if (entries_[i].fd == fd) entries_[i].fd = -1;
    }
  }
  void Clear() { used_ = 0; }

 private:
  static constexpr int kEntries = 8;
  struct Entry {
    int fd;
    Kind kind;
  };

  // The remembered entry of `fd`, or null.
  const Entry* Find(int fd) const {
    for (int i = 0; i < used_; ++i) {
      if (entries_[i].fd == fd) return &entries_[i];
    }
    return nullptr;
  }
  // Asks the kernel about `fd` and remembers the answer.
  Kind AskKernel(int fd);
  Entry entries_[kEntries] = {};
  int used_ = 0;
  int next_victim_ = 0;
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_FILE_KIND_CACHE_H_
