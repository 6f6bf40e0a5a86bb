#include "runtime/write_pipeline.h"

#include <unistd.h>

#include "base/call_types.h"
#include "runtime/raw_syscalls.h"

namespace foreactor {

namespace {

bool TransferredAll(const Request& request) {
  return request.result == static_cast<int64_t>(request.call.length);
}

}  // namespace

WritePipeline::WritePipeline(Engine* engine, unsigned capacity)
    : engine_(engine), capacity_(capacity == 0 ? 1 : capacity), entries_(new Entry[capacity_]) {}

void WritePipeline::StartScope() {
  Clear();
  stopped_ = false;
}

bool WritePipeline::Hold(VisitSlot* read, VisitSlot* write) {
  if (stopped_ || count_ == capacity_) return false;
  entries_[(front_ + count_) % capacity_] = Entry{read, write, EntryState::kHeld, false, false};
  count_++;
  write->request.linked_next = nullptr;
  write->state = SlotState::kHeld;
  return true;
}

bool WritePipeline::ReadSettled(const Entry& entry, bool* failed) const {
  *failed = false;
  if (entry.read_consumed) {
    *failed = !entry.read_full;
    return entry.read_full;
  }
  const VisitSlot& read = *entry.read;
  if (read.state != SlotState::kIssued && read.state != SlotState::kCached) {
    *failed = true;
    return false;
  }
  if (read.request.state.load(std::memory_order_acquire) != RequestState::kCompleted) return false;
  *failed = !TransferredAll(read.request);
  return !*failed;
}

int WritePipeline::Pump() {
  if (count_ == 0 || stopped_) return 0;
  engine_->Poll();
  unsigned first = count_;  // the chain's first entry
  unsigned chained = 0;
  Request* tail = nullptr;
  for (unsigned index = 0; index < count_; ++index) {
    Entry& entry = At(index);
    const foreactor_call& predicted = entry.write->predicted;
    if (entry.state == EntryState::kHeld && InfoOf(predicted.type).implicit_offset) {
      // A write at the file position goes where it was predicted only if
      // the position is there then: after the writes before it, each
      // ending where the next begins, or, with none before it, now.
      const Entry* before = index > 0 ? &At(index - 1) : nullptr;
      const bool follows = before != nullptr && before->state != EntryState::kReleased &&
                           before->write->predicted.fd == predicted.fd &&
                           before->write->predicted.offset +
                                   static_cast<int64_t>(before->write->request.call.length) ==
                               predicted.offset;
      const bool here_now =
          before == nullptr && raw::Lseek(predicted.fd, 0, SEEK_CUR) == predicted.offset;
      if (!follows && !here_now) break;
    }
    if (entry.state == EntryState::kSent) {
      // Sent entries come before held ones: a chain is in flight until
      // its last write completed.
      if (entry.write->request.state.load(std::memory_order_acquire) != RequestState::kCompleted) {
        return 0;
      }
      if (!TransferredAll(entry.write->request)) {
        Stop();
        return 0;
      }
      continue;
    }
    if (entry.state == EntryState::kReleased) break;  // the program's own call goes first
    bool failed = false;
    if (!ReadSettled(entry, &failed)) {
      if (failed) Release(entry);
      break;
    }
    Request& request = entry.write->request;
    request.linked_next = nullptr;
    request.off_thread = true;
    if (tail != nullptr) {
      tail->linked_next = &request;
    } else {
      first = index;
    }
    tail = &request;
    chained++;
  }
  if (chained == 0) return 0;
  if (!engine_->Prepare(&At(first).write->request)) {
    for (unsigned index = first; index < first + chained; ++index) {
      At(index).write->request.linked_next = nullptr;
    }
    return 0;  // the engine's queue is full: the next pump tries again
  }
  for (unsigned index = first; index < first + chained; ++index) {
    At(index).state = EntryState::kSent;
    At(index).write->state = SlotState::kIssued;
  }
  writes_sent_ += chained;
  engine_->Submit();  // a failure completes the chain with -ECANCELED
  return static_cast<int>(chained);
}

void WritePipeline::ReadConsumed(const VisitSlot* read, bool full) {
  for (unsigned index = 0; index < count_; ++index) {
    Entry& entry = At(index);
    if (entry.read != read) continue;
    entry.read_consumed = true;
    entry.read_full = full;
    return;
  }
}

void WritePipeline::FrontierReached(VisitSlot* write) {
  if (count_ == 0) return;
  Entry& entry = At(0);
  if (entry.write == write && entry.state == EntryState::kHeld) Release(entry);
}

void WritePipeline::FrontierFinished(const VisitSlot* write, bool full) {
  if (count_ == 0 || At(0).write != write) return;
  front_ = (front_ + 1) % capacity_;
  count_--;
  if (!full) Stop();
}

void WritePipeline::Clear() {
  for (unsigned index = 0; index < count_; ++index) {
    Entry& entry = At(index);
    if (entry.state == EntryState::kHeld) Release(entry);
  }
  front_ = 0;
  count_ = 0;
}

void WritePipeline::Release(Entry& entry) {
  entry.state = EntryState::kReleased;
  entry.write->state = SlotState::kPassed;
}

void WritePipeline::Stop() {
  stopped_ = true;
  for (unsigned index = 0; index < count_; ++index) {
    Entry& entry = At(index);
    if (entry.state == EntryState::kHeld) Release(entry);
  }
}

}  // namespace foreactor
