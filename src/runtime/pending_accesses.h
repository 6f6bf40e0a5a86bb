// pending_accesses.h: the order of the side effects ahead of the frontier
// (DESIGN §2 rule 3).
//
// Every visit the peek head passes and the frontier has not reached holds
// an entry here, in visit order (Record, then ReleaseOldest when the
// frontier reaches it): which bytes of which descriptor it reads or changes
// ([begin, end) for the read and write families, the whole file
// otherwise), whether it writes data, whether it changes what other calls
// see (anything but a pure read: writes, closes, getdents64, which moves the
// directory position), and whether it creates or truncates files by path.
// Calls further ahead are issued only in an order that cannot change what
// any of them sees: Blocks() stops the peek head before a call whose bytes
// an earlier pending visit changes (or, for a change, uses), on the same
// open file or the same inode, and before a call that takes a path after
// one that creates or truncates by path.  Disjoint bytes still interact
// when one side writes and the other reads across the end of the file: a
// write that grows the file changes how many bytes the read returns.
//
// A call the program makes outside the graph (or not as the graph said)
// may change early results already taken: ChangeBy() describes what it may
// change and MakesStale() says whether one early call's result may no
// longer be used.
//
// Identity of files comes from the runner's FileKindCache; sizes and file
// positions are asked of the kernel when needed.  One per runner; used by
// the owning thread only.
#ifndef FOREACTOR_RUNTIME_PENDING_ACCESSES_H_
#define FOREACTOR_RUNTIME_PENDING_ACCESSES_H_

#include <cstdint>
#include <memory>

#include "foreactor/foreactor.h"
#include "runtime/file_kind_cache.h"

namespace foreactor {

class PendingAccesses {
 public:
  // `file_kinds` outlives this object.
  explicit PendingAccesses(FileKindCache* file_kinds) : file_kinds_(file_kinds) {}

  PendingAccesses(const PendingAccesses&) = delete;
  PendingAccesses& operator=(const PendingAccesses&) = delete;

  // Room for `capacity` entries, the most visits that may be ahead; throws
  // std::bad_alloc (run it under AllocationSucceeds).  Empties the queue.
  void Reserve(unsigned capacity);

  // Forgets every entry: a new scope, or everything ahead was drained.
  void Clear() { head_ = count_ = changes_ = 0; }

  bool empty() const { return count_ == 0; }

  // The peek head passed a visit that makes `call`: adds its entry.  At
  // most the reserved capacity of entries are held.
  void Record(const foreactor_call& call);

  // The frontier reached the oldest entry's visit.  Nothing when empty.
  void ReleaseOldest() {
    if (count_ == 0) return;
    if (entries_[head_].changes) changes_--;
    head_ = (head_ + 1) % capacity_;
    count_--;
  }

  // True when `call`, issued now, could run before an earlier pending
  // visit that changes what it sees, or change what one sees.
  bool Blocks(const foreactor_call& call);

  // True when a pending visit uses descriptor `fd` (and so might move its
  // file position).
  bool UsesDescriptor(int fd) const {
    for (unsigned i = 0; i < count_; ++i) {
      if (At(i).fd == fd) return true;
    }
    return false;
  }

  // What a call the program makes now may change.  `real` has not run yet.
  struct Change {
    bool paths = false;   // creates or truncates files by path
    bool writes = false;  // writes bytes [begin, end) of `fd`'s file
    bool seeks = false;   // moves or uses a directory position of `fd`
    bool closes = false;  // closes `fd`
    int fd = -1;
    int64_t begin = 0;
    int64_t end = INT64_MAX;
  };
  // True when `real` may change an early result at all: it creates or
  // truncates by path, writes, seeks, reads a directory or closes.
  static bool MayChangeEarlyResults(const foreactor_call& real);
  // What `real` changes.  For a write at the file position of a regular
  // file not opened for appending, only the bytes at the position now.
  Change ChangeBy(const foreactor_call& real);
  // True when the early result of `early` may differ from what `early`
  // would return after `change`.
  bool MakesStale(const Change& change, const foreactor_call& early);

  // The bytes of its file a call reads or writes: [offset, offset + length)
  // for the read and write families, the whole file for every other call.
  static void ByteRangeOf(const foreactor_call& call, int64_t* begin, int64_t* end);

 private:
  struct Entry {
    int fd;  // descriptor it uses, or -1
    int64_t begin;
    int64_t end;
    bool writes_data;    // a write of [begin, end), which may also grow the file
    bool changes;        // writes, closes, seeks a directory: anything but a pure read
    bool changes_paths;  // creates or truncates files by path
  };

  // True when `fd` and `other_fd` name the same open file or the same inode.
  bool SameFile(int fd, int other_fd);
  // True when an access to bytes [begin, end) of the file `fd` and one to
  // [other_begin, other_end) of the same file can change what the other
  // sees, given which of them write.  Asks the file's size only when the
  // ranges are disjoint and one side writes.
  static bool BytesInteract(int fd, int64_t begin, int64_t end, bool writes, int64_t other_begin,
                            int64_t other_end, bool other_writes);
  const Entry& At(unsigned index) const { return entries_[(head_ + index) % capacity_]; }

  FileKindCache* const file_kinds_;
  std::unique_ptr<Entry[]> entries_;  // FIFO ring of capacity_ entries, in visit order
  unsigned capacity_ = 0;
  unsigned head_ = 0;
  unsigned count_ = 0;
  unsigned changes_ = 0;  // entries with `changes` set
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_PENDING_ACCESSES_H_
