#include "walk/stat_answers.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <utility>

#include "base/out_of_memory.h"

namespace foreactor {

namespace {

// Adds `amount` to a counter only mutex_'s holder changes.
void Count(std::atomic<uint64_t>& counter, uint64_t amount = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
}

bool SameTime(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

// StatsEverKeptFlag(): written only with std::atomic_ref, on a line of its
// own (the program's threads read it on every stat).
alignas(64) int stats_ever_kept = 0;

}  // namespace

const int* StatsEverKeptFlag() { return &stats_ever_kept; }

StatAnswers::StatAnswers(size_t max_bytes) : max_bytes_(max_bytes) {}

StatAnswers::Handle StatAnswers::Begin(const struct stat& directory) {
  Handle handle{directory.st_dev, directory.st_ino, 0};
  const Key key{directory.st_dev, directory.st_ino};
  std::lock_guard<std::mutex> lock(mutex_);
  TrimOrder();
  if (bytes_ >= max_bytes_) {
    Count(counters_.directories_refused);
    return handle;
  }
  const auto kept = directories_.find(key);
  if (kept != directories_.end()) Drop(kept, /*asked_for_every_entry=*/false);
  const uint64_t number = next_handle_++;
  const bool made = AllocationSucceeds([&] {
    auto fresh = std::make_unique<Directory>();
    fresh->handle = number;
    fresh->modified = directory.st_mtim;
    fresh->changed = directory.st_ctim;
    order_.emplace_back(number, key);  // a handle whose directory is missing is trimmed later
    directories_.emplace(key, std::move(fresh));
  });
  if (!made) return handle;
  kept_directories_.fetch_add(1, std::memory_order_relaxed);
  std::atomic_ref<int> ever_kept(stats_ever_kept);
  if (ever_kept.load(std::memory_order_relaxed) == 0) ever_kept.store(1, std::memory_order_relaxed);
  Count(counters_.directories_kept);
  handle.number = number;
  return handle;
}

size_t StatAnswers::Add(const Handle& handle, std::vector<Entry>* entries) {
  if (!handle) {
    entries->clear();
    return 0;
  }
  size_t program_past = 0;
  size_t bytes = 0;
  for (const Entry& entry : *entries) bytes += BytesOf(entry);
  std::lock_guard<std::mutex> lock(mutex_);
  const auto kept = Find(handle);
  if (kept != directories_.end()) {
    Directory& directory = *kept->second;
    const bool fits = bytes_ + bytes <= max_bytes_;
    if (fits && AllocationSucceeds([&] {
          directory.entries.insert(directory.entries.end(),
                                   std::make_move_iterator(entries->begin()),
                                   std::make_move_iterator(entries->end()));
        })) {
      directory.bytes += bytes;
      bytes_ += bytes;
      counters_.bytes.store(bytes_, std::memory_order_relaxed);
      if (bytes_ > counters_.most_bytes.load(std::memory_order_relaxed))
        counters_.most_bytes.store(bytes_, std::memory_order_relaxed);
      Count(counters_.entries_kept, entries->size());
      if (directory.next > directory.entries.size()) program_past = directory.next;
    } else {
      if (!fits) Count(counters_.directories_refused);
      Drop(kept, /*asked_for_every_entry=*/false);
    }
  }
  entries->clear();
  return program_past;
}

void StatAnswers::Finish(const Handle& handle) {
  if (!handle) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto kept = Find(handle);
  if (kept == directories_.end()) return;
  kept->second->finished = true;
  if (kept->second->next >= kept->second->entries.size()) Drop(kept, true);
}

bool StatAnswers::Answer(const struct stat& directory, const char* name, struct stat* status) {
  std::lock_guard<std::mutex> lock(mutex_);
  Count(counters_.questions);
  const auto kept = directories_.find(Key{directory.st_dev, directory.st_ino});
  if (kept == directories_.end()) return false;
  Directory& entries = *kept->second;
  if (!SameTime(entries.modified, directory.st_mtim) ||
      !SameTime(entries.changed, directory.st_ctim)) {
    Drop(kept, /*asked_for_every_entry=*/false);  // changed since it was read
    return false;
  }
  if (entries.handle != last_asked_) {
    last_asked_ = entries.handle;
    DropPassed(entries.handle);  // never this directory: it is not older than itself
  }
  const size_t end = std::min(entries.entries.size(), entries.next + kSearchWindow);
  for (size_t i = entries.next - std::min(entries.next, kSearchBehind); i < end; ++i) {
    const Entry& entry = entries.entries[i];
    if (std::strcmp(entry.name.c_str(), name) != 0) continue;
    entries.next = i + 1;
    const bool answered = entry.stated;
    if (answered) {
      *status = entry.status;
      Count(counters_.answers);
    }
    if (entries.finished && entries.next >= entries.entries.size()) Drop(kept, true);
    return answered;
  }
  // Past the entries kept: the program stats this one itself, and asks
  // about the one after it next.
  if (entries.next >= entries.entries.size() && !entries.finished) entries.next++;
  return false;
}

StatAnswers::Counters StatAnswers::CountersSnapshot() const {
  Counters snapshot;
  snapshot.directories_kept = counters_.directories_kept.load(std::memory_order_relaxed);
  snapshot.directories_refused = counters_.directories_refused.load(std::memory_order_relaxed);
  snapshot.directories_dropped = counters_.directories_dropped.load(std::memory_order_relaxed);
  snapshot.entries_kept = counters_.entries_kept.load(std::memory_order_relaxed);
  snapshot.questions = counters_.questions.load(std::memory_order_relaxed);
  snapshot.answers = counters_.answers.load(std::memory_order_relaxed);
  snapshot.bytes = counters_.bytes.load(std::memory_order_relaxed);
  snapshot.most_bytes = counters_.most_bytes.load(std::memory_order_relaxed);
  return snapshot;
}

StatAnswers::Directories::iterator StatAnswers::Find(const Handle& handle) {
  const auto kept = directories_.find(Key{handle.device, handle.inode});
  if (kept == directories_.end() || kept->second->handle != handle.number)
    return directories_.end();
  return kept;
}

void StatAnswers::Drop(Directories::iterator where, bool asked_for_every_entry) {
  bytes_ -= where->second->bytes;
  counters_.bytes.store(bytes_, std::memory_order_relaxed);
  if (!asked_for_every_entry) Count(counters_.directories_dropped);
  directories_.erase(where);
  kept_directories_.fetch_sub(1, std::memory_order_relaxed);
}

void StatAnswers::TrimOrder() {
  while (!order_.empty()) {
    const auto& [number, key] = order_.front();
    const auto kept = directories_.find(key);
    if (kept != directories_.end() && kept->second->handle == number) return;
    order_.pop_front();
  }
}

void StatAnswers::DropPassed(uint64_t handle) {
  while (!order_.empty() && order_.front().first + kPassedDirectories < handle) {
    const auto [number, key] = order_.front();
    order_.pop_front();
    const auto kept = directories_.find(key);
    if (kept != directories_.end() && kept->second->handle == number) Drop(kept, false);
  }
}

}  // namespace foreactor
