#include "walk/directory_queue.h"

#include <utility>

#include "base/out_of_memory.h"

namespace foreactor {

DirectoryQueue::DirectoryQueue(size_t max_directories, size_t max_path_bytes)
    : max_directories_(max_directories), max_path_bytes_(max_path_bytes) {}

size_t DirectoryQueue::PushFront(std::vector<PendingDirectory>* found) {
  size_t dropped = 0;
  for (auto it = found->rbegin(); it != found->rend(); ++it) {
    if (!AllocationSucceeds([&] { entries_.push_front(std::move(*it)); })) {
      // Out of memory: the earlier entries of `found` are dropped.
      dropped += static_cast<size_t>(found->rend() - it);
      break;
    }
    path_bytes_ += entries_.front().path.size();
  }
  found->clear();
  while (!entries_.empty() &&
         (entries_.size() > max_directories_ || path_bytes_ > max_path_bytes_)) {
    path_bytes_ -= entries_.back().path.size();
    entries_.pop_back();
    ++dropped;
  }
  return dropped;
}

bool DirectoryQueue::PopFront(PendingDirectory* next) {
  if (entries_.empty()) return false;
  *next = std::move(entries_.front());
  entries_.pop_front();
  path_bytes_ -= next->path.size();
  return true;
}

bool DirectoryQueue::PopBack(PendingDirectory* last) {
  if (entries_.empty()) return false;
  *last = std::move(entries_.back());
  entries_.pop_back();
  path_bytes_ -= last->path.size();
  return true;
}

size_t DirectoryQueue::PushBack(std::vector<PendingDirectory>* found) {
  size_t dropped = 0;
  for (PendingDirectory& directory : *found) {
    const size_t bytes = directory.path.size();
    if (entries_.size() >= max_directories_ || path_bytes_ + bytes > max_path_bytes_ ||
        !AllocationSucceeds([&] { entries_.push_back(std::move(directory)); })) {
      ++dropped;
      continue;
    }
    path_bytes_ += bytes;
  }
  found->clear();
  return dropped;
}

void DirectoryQueue::Clear() {
  entries_.clear();
  path_bytes_ = 0;
}

}  // namespace foreactor
