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
  engine_->RestartOrder();  // the last scope drained every write it sent
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
  int sent = 0;
  for (unsigned index = 0; index < count_; ++index) {
    Entry& entry = At(index);
    if (entry.state == EntryState::kSent) {
      // Sent entries come before held ones.  One that fell short or failed
      // stops the pipeline (the engine cancels the ordered writes after it).
      const Request& request = entry.write->request;
      if (request.state.load(std::memory_order_acquire) == RequestState::kCompleted &&
          !TransferredAll(request)) {
        Stop();
        break;
      }
      continue;
    }
    if (entry.state == EntryState::kReleased) break;  // the program's own call goes first
    const foreactor_call& predicted = entry.write->predicted;
    if (InfoOf(predicted.type).implicit_offset) {
      // A write at the file position goes where it was predicted only if
      // the position is there then: after the writes before it, each
      // ending where the next begins, or, with none before it, now.
      const Entry* before = index > 0 ? &At(index - 1) : nullptr;
      const bool follows = before != nullptr && before->write->predicted.fd == predicted.fd &&
                           before->write->predicted.offset +
                                   static_cast<int64_t>(before->write->request.call.length) ==
                               predicted.offset;
      const bool here_now =
          before == nullptr && raw::Lseek(predicted.fd, 0, SEEK_CUR) == predicted.offset;
      if (!follows && !here_now) break;
    }
    bool failed = false;
    if (!ReadSettled(entry, &failed)) {
      if (failed) Release(entry);
      break;
    }
    Request& request = entry.write->request;
    request.linked_next = nullptr;
    request.ordered = true;
    if (!engine_->Prepare(&request)) {
      request.ordered = false;
      break;  // refused (queue full, a fault scheduled): the next pump, or the program
    }
    entry.state = EntryState::kSent;
    entry.write->state = SlotState::kIssued;
    sent++;
  }
  if (sent == 0) return 0;
  writes_sent_ += static_cast<uint64_t>(sent);
  engine_->Submit();  // a failure completes the requests with -ECANCELED
  return sent;
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
  ReleaseHeld();
  front_ = 0;
  count_ = 0;
}

void WritePipeline::Release(Entry& entry) {
  entry.state = EntryState::kReleased;
  entry.write->state = SlotState::kPassed;
}

void WritePipeline::Stop() {
  stopped_ = true;
  ReleaseHeld();
}

void WritePipeline::ReleaseHeld() {
  for (unsigned index = 0; index < count_; ++index) {
    Entry& entry = At(index);
    if (entry.state == EntryState::kHeld) Release(entry);
  }
}

}  // namespace foreactor
