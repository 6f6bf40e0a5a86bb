#include "runtime/write_behind.h"

#include <cerrno>
#include <cstdlib>

#include "runtime/monotonic_clock.h"

namespace foreactor {

WriteBehind::WriteBehind(Engine* engine, FileKindCache* file_kinds, Statistics* statistics,
                         unsigned* thread_hints_in_flight, uint64_t chunk_bytes)
    : engine_(engine),
      file_kinds_(file_kinds),
      statistics_(statistics),
      thread_hints_in_flight_(thread_hints_in_flight),
      runs_(chunk_bytes) {
  for (Request& hint : hints_) hint.operation = RequestOperation::kStartWriteBack;
}

uint64_t WriteBehind::ChunkBytesForTests() {
  const char* value = std::getenv("FOREACTOR_TEST_WRITE_BEHIND_CHUNK_BYTES");
  if (value == nullptr || *value == '\0') return kChunkBytes;
  char* end = nullptr;
  const unsigned long long bytes = std::strtoull(value, &end, 10);
  if (*end != '\0' || bytes < static_cast<unsigned long long>(WrittenRuns::kPageBytes)) {
    return kChunkBytes;
  }
  return bytes;
}

WriteBehind::~WriteBehind() {
  if (!abandoned_) WaitAll();
}

void WriteBehind::NoteWrite(int fd, int64_t offset, int64_t result) {
  if (abandoned_ || result <= 0 || offset < 0) return;
  const FileKindCache::Kind kind = file_kinds_->Lookup(fd);
  if (!kind.regular || kind.direct || kind.append) return;
  WrittenRuns::Range ready[WrittenRuns::kMaxReadyPerNote];
  const int count = runs_.Note(fd, WrittenRuns::FileIdentity{kind.device, kind.inode}, offset,
                               static_cast<uint64_t>(result), ready);
  if (count == 0) return;
  for (int i = 0; i < count; ++i) Queue(ready[i]);
  Dispatch(false);
}

void WriteBehind::EndScope() {
  if (abandoned_) return;
  WrittenRuns::Range tail;
  while (runs_.TakeTail(&tail)) Queue(tail);
  if (in_flight_ > 0) Reap(true);
  Dispatch(true);
}

void WriteBehind::Queue(const WrittenRuns::Range& range) {
  for (int i = 0; i < waiting_count_; ++i) {
    WrittenRuns::Range& waiting = waiting_[i];
    if (waiting.fd == range.fd && waiting.end == range.begin) {
      waiting.end = range.end;
      return;
    }
  }
  if (waiting_count_ == WrittenRuns::kMaxRuns) {
    // No room to wait: the oldest goes now, beside the running hints.
    Start(waiting_[0]);
    for (int i = 1; i < waiting_count_; ++i) waiting_[i - 1] = waiting_[i];
    --waiting_count_;
  }
  waiting_[waiting_count_++] = range;
}

void WriteBehind::Dispatch(bool all) {
  if (!all && in_flight_ >= kMaxRunningHints) Reap(true);
  int started = 0;
  while (started < waiting_count_ && (all || in_flight_ < kMaxRunningHints)) {
    Start(waiting_[started++]);
  }
  for (int i = started; i < waiting_count_; ++i) waiting_[i - started] = waiting_[i];
  waiting_count_ -= started;
}

void WriteBehind::BeforeClose(int fd) {
  runs_.Forget(fd);
  file_kinds_->Forget(fd);
  int kept = 0;
  for (int i = 0; i < waiting_count_; ++i) {
    if (waiting_[i].fd != fd) waiting_[kept++] = waiting_[i];
  }
  waiting_count_ = kept;
  if (abandoned_ || in_flight_ == 0) return;
  Reap(true);
  for (int slot = 0; slot < kMaxHints; ++slot) {
    if (busy_[slot] && hints_[slot].call.fd == fd) WaitFor(slot);
  }
}

void WriteBehind::WaitAll() {
  if (abandoned_) return;
  for (int slot = 0; slot < kMaxHints && in_flight_ > 0; ++slot) {
    if (busy_[slot]) WaitFor(slot);
  }
}

void WriteBehind::Start(const WrittenRuns::Range& range) {
  int free_slot = -1;
  for (int pass = 0; pass < 2 && free_slot < 0; ++pass) {
    if (pass == 1) {
      if (in_flight_ == 0) break;
      Reap(true);
    }
    for (int slot = 0; slot < kMaxHints; ++slot) {
      if (!busy_[slot]) {
        free_slot = slot;
        break;
      }
    }
  }
  if (free_slot < 0) return;  // every hint still runs: this range is left to the kernel
  Request& hint = hints_[free_slot];
  hint.state.store(RequestState::kIdle, std::memory_order_relaxed);
  hint.linked_next = nullptr;
  hint.result = 0;
  hint.call.fd = range.fd;
  hint.call.offset = range.begin;
  hint.call.length = static_cast<size_t>(range.end - range.begin);
  if (!engine_->Prepare(&hint)) return;  // no engine that can, or no room: not hinted
  busy_[free_slot] = true;
  ++in_flight_;
  ++*thread_hints_in_flight_;
  statistics_->write_behind_requests++;
  statistics_->write_behind_bytes += hint.call.length;
  engine_->Submit();  // a failed submission completes the hint with -ECANCELED
}

void WriteBehind::Reap(bool poll) {
  if (poll) engine_->Poll();
  for (int slot = 0; slot < kMaxHints; ++slot) {
    if (busy_[slot] &&
        hints_[slot].state.load(std::memory_order_acquire) == RequestState::kCompleted) {
      Release(slot);
    }
  }
}

void WriteBehind::WaitFor(int slot) {
  if (hints_[slot].state.load(std::memory_order_acquire) != RequestState::kCompleted) {
    const uint64_t start = MonotonicNanoseconds();
    engine_->Wait(&hints_[slot]);
    statistics_->write_behind_wait_nanoseconds += MonotonicNanoseconds() - start;
  }
  Release(slot);
}

void WriteBehind::Release(int slot) {
  const int64_t result = hints_[slot].result;
  // -ECANCELED: not executed (a refused submission); nothing went wrong.
  if (result < 0 && result != -ECANCELED) statistics_->write_behind_errors++;
  hints_[slot].state.store(RequestState::kIdle, std::memory_order_relaxed);
  busy_[slot] = false;
  --in_flight_;
  --*thread_hints_in_flight_;
}

}  // namespace foreactor
