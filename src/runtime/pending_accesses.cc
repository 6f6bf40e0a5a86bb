#include "runtime/pending_accesses.h"

#include <sys/stat.h>
#include <unistd.h>

#include "base/call_types.h"
#include "runtime/call_matching.h"
#include "runtime/raw_syscalls.h"

namespace foreactor {
namespace {

// True for calls that change what other calls see: everything that is not
// issued on a guess, and getdents64, which moves the directory position.
bool ChangesState(const foreactor_call& call) {
  return EarlyIssueFor(call) != EarlyIssue::kOnGuess || call.type == FOREACTOR_CALL_GETDENTS64;
}

bool CreatesOrTruncates(const foreactor_call& call) {
  return IsOpen(call.type) && EarlyIssueFor(call) != EarlyIssue::kOnGuess;
}

}  // namespace

void PendingAccesses::Reserve(unsigned capacity) {
  entries_.reset(new Entry[capacity]);
  capacity_ = capacity;
  Clear();
}

void PendingAccesses::ByteRangeOf(const foreactor_call& call, int64_t* begin, int64_t* end) {
  const CallTypeInfo& info = InfoOf(call.type);
  if ((info.reads_data || info.writes_data) && call.type != FOREACTOR_CALL_GETDENTS64) {
    *begin = call.offset;
    *end = call.offset + static_cast<int64_t>(DataLength(call));
  } else {
    *begin = 0;
    *end = INT64_MAX;
  }
}

bool PendingAccesses::SameFile(int fd, int other_fd) {
  if (fd == other_fd) return true;
  if (fd < 0 || other_fd < 0) return false;
  const FileKindCache::Kind kind = file_kinds_->Lookup(fd);
  const FileKindCache::Kind other = file_kinds_->Lookup(other_fd);
  return kind.known && other.known && kind.device == other.device && kind.inode == other.inode;
}

bool PendingAccesses::BytesInteract(int fd, int64_t begin, int64_t end, bool writes,
                                    int64_t other_begin, int64_t other_end, bool other_writes) {
  if (begin < other_end && other_begin < end) return true;
  // Disjoint bytes still interact when one side writes and the other reads
  // across the end of the file: a write that grows the file changes how
  // many bytes (holes read as zeros) the read returns.
  if (writes == other_writes) return false;
  struct stat status;
  if (raw::Fstat(fd, &status) != 0) return true;
  const int64_t size = status.st_size;
  return end > size && other_end > size;
}

void PendingAccesses::Record(const foreactor_call& call) {
  Entry& entry = entries_[(head_ + count_) % capacity_];
  entry.fd = InfoOf(call.type).uses_fd ? call.fd : -1;
  ByteRangeOf(call, &entry.begin, &entry.end);
  entry.writes_data = InfoOf(call.type).writes_data;
  entry.changes = ChangesState(call);
  entry.changes_paths = CreatesOrTruncates(call);
  count_++;
  if (entry.changes) changes_++;
}

bool PendingAccesses::Blocks(const foreactor_call& call) {
  const CallTypeInfo& info = InfoOf(call.type);
  const bool changes = ChangesState(call);
  // A pure call only has to wait for changes; a change for every access.
  if (!changes && changes_ == 0) return false;
  int64_t begin, end;
  ByteRangeOf(call, &begin, &end);
  // Entries on another descriptor than the call's are compared by file
  // identity; the answer for the last such descriptor is kept, since the
  // entries ahead of a copy loop alternate between two descriptors (asking
  // the cache for both sides of every entry, 256 visits ahead, took 4% of
  // the program's thread).
  int other_fd = -1;
  bool other_is_same_file = false;
  for (unsigned i = 0; i < count_; ++i) {
    const Entry& access = At(i);
    if (!changes && !access.changes) continue;
    if (info.uses_fd && access.fd != call.fd && access.fd != other_fd) {
      other_fd = access.fd;
      other_is_same_file = SameFile(access.fd, call.fd);
    }
    if (info.uses_fd && (access.fd == call.fd || other_is_same_file) &&
        BytesInteract(call.fd, begin, end, info.writes_data, access.begin, access.end,
                      access.writes_data)) {
      return true;
    }
    if (info.uses_path && access.changes_paths) return true;
  }
  return false;
}

bool PendingAccesses::MayChangeEarlyResults(const foreactor_call& real) {
  return CreatesOrTruncates(real) || InfoOf(real.type).writes_data ||
         real.type == FOREACTOR_CALL_LSEEK || real.type == FOREACTOR_CALL_GETDENTS64 ||
         real.type == FOREACTOR_CALL_CLOSE;
}

PendingAccesses::Change PendingAccesses::ChangeBy(const foreactor_call& real) {
  const CallTypeInfo& info = InfoOf(real.type);
  Change change;
  change.paths = CreatesOrTruncates(real);
  change.writes = info.writes_data;
  // Calls that use or move a directory's position (an early getdents64 has
  // already moved it).
  change.seeks = real.type == FOREACTOR_CALL_LSEEK || real.type == FOREACTOR_CALL_GETDENTS64;
  change.closes = real.type == FOREACTOR_CALL_CLOSE;
  change.fd = real.fd;
  const FileKindCache::Kind target =
      change.writes ? file_kinds_->Lookup(real.fd) : FileKindCache::Kind{};
  if (change.writes && !info.implicit_offset) {
    ByteRangeOf(real, &change.begin, &change.end);
  } else if (change.writes && target.regular && !target.append) {
    // write(2) and writev(2) go to the file position (the call has not run
    // yet): only the bytes there change, not the early writes further on.
    foreactor_call at = real;
    at.offset = raw::Lseek(real.fd, 0, SEEK_CUR);
    if (at.offset >= 0) ByteRangeOf(at, &change.begin, &change.end);
  }
  return change;
}

bool PendingAccesses::MakesStale(const Change& change, const foreactor_call& early) {
  const CallTypeInfo& early_info = InfoOf(early.type);
  bool stale = change.paths && early_info.uses_path;
  if (early_info.uses_fd) {
    if (change.closes) stale = stale || early.fd == change.fd;
    if (change.seeks)
      stale = stale || (early.fd == change.fd && early.type == FOREACTOR_CALL_GETDENTS64);
    if (change.writes && !stale && SameFile(early.fd, change.fd)) {
      int64_t early_begin, early_end;
      ByteRangeOf(early, &early_begin, &early_end);
      stale = BytesInteract(change.fd, change.begin, change.end, true, early_begin, early_end,
                            early_info.writes_data);
    }
  }
  return stale;
}

}  // namespace foreactor
