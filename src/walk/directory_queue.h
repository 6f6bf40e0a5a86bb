// directory_queue.h: the directories walk-ahead has found and not read yet.
//
// The queue keeps them in the order a depth-first walk would reach them,
// which is the order most walkers (fts, find, du, tar, cp) read a tree in:
// the subdirectories found in one directory go to the front, in the order
// they were found, so the next one taken is the first of them.  It is
// bounded by a number of directories and by the bytes of their paths; when
// full, it gives up the directories at its back, those the program would
// reach last.
//
// Not thread-safe: its owner serialises access.
#ifndef FOREACTOR_WALK_DIRECTORY_QUEUE_H_
#define FOREACTOR_WALK_DIRECTORY_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace foreactor {

// One directory to read ahead: a path under one of walk-ahead's roots.
struct PendingDirectory {
  unsigned root = 0;        // the root's slot
  uint64_t generation = 0;  // the slot's generation when the directory was found
  std::string path;         // relative to the root; empty for the root itself
};

class DirectoryQueue {
 public:
  // A queue of at most `max_directories` entries whose paths hold at most
  // `max_path_bytes` bytes together.
  DirectoryQueue(size_t max_directories, size_t max_path_bytes);

  DirectoryQueue(const DirectoryQueue&) = delete;
  DirectoryQueue& operator=(const DirectoryQueue&) = delete;

  // Moves `found` (in the order given) to the front of the queue, then
  // drops entries from the back until the bounds hold again.  Returns the
  // number of entries dropped (also those of `found` that found no memory).
  // `found` is left empty.  Never throws.
  size_t PushFront(std::vector<PendingDirectory>* found);

  // Takes the front entry into `*next`.  False when the queue is empty.
  bool PopFront(PendingDirectory* next);

  // Takes the back entry, the one a depth-first walk reaches last (the
  // shallowest of those not read yet), into `*last`.  False when the queue
  // is empty.
  bool PopBack(PendingDirectory* last);

  // Moves `found` (in the order given) to the back of the queue: where a
  // depth-first walk reaches the subdirectories of the entry PopBack() took.
  // Entries that do not fit the bounds are dropped.  Returns the number
  // dropped; `found` is left empty.  Never throws.
  size_t PushBack(std::vector<PendingDirectory>* found);

  // Drops every entry.
  void Clear();

  size_t size() const { return entries_.size(); }
  size_t path_bytes() const { return path_bytes_; }
  bool empty() const { return entries_.empty(); }

 private:
  const size_t max_directories_;
  const size_t max_path_bytes_;
  std::deque<PendingDirectory> entries_;
  size_t path_bytes_ = 0;
};

}  // namespace foreactor

#endif  // FOREACTOR_WALK_DIRECTORY_QUEUE_H_
