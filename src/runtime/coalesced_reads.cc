#include "runtime/coalesced_reads.h"

#include <cerrno>

#include "base/out_of_memory.h"

namespace foreactor {

bool CoalescedReads::Continues(const Group& group, const VisitSlot& slot) {
  const foreactor_call& first = group.member[0]->request.call;
  const foreactor_call& call = slot.request.call;
  return call.fd == first.fd && call.offset == first.offset + static_cast<int64_t>(group.bytes) &&
         group.members < kMaxMembers && group.bytes + call.length <= kGroupBytes;
}

bool CoalescedReads::Join(VisitSlot* slot) {
  if (!engine_->Supports(FOREACTOR_CALL_PREADV)) return false;
  if (groups_ == nullptr) {
    groups_.reset(NewArrayOrNull<Group>(kGroups));
    if (groups_ == nullptr) return false;
  }
  if (open_ >= 0 && !Continues(groups_[open_], *slot)) Send(open_);
  if (open_ < 0) {
    for (int index = 0; index < kGroups; ++index) {
      if (groups_[index].state == GroupState::kFree) {
        open_ = index;
        break;
      }
    }
    if (open_ < 0) return false;
    Group& fresh = groups_[open_];
    fresh.state = GroupState::kOpen;
    fresh.cancel_asked = false;
    fresh.members = 0;
    fresh.bytes = 0;
    busy_groups_++;
  }
  Group& group = groups_[open_];
  const foreactor_call& call = slot->request.call;
  group.member[group.members] = slot;
  group.vectors[group.members] = iovec{call.buffer, call.length};
  group.members++;
  group.bytes += call.length;
  slot->read_group = open_;
  slot->request.result = 0;
  slot->request.state.store(RequestState::kSubmitted, std::memory_order_relaxed);
  if (group.bytes >= kGroupBytes || group.members == kMaxMembers) Send(open_);
  return true;
}

void CoalescedReads::Send(int index) {
  Group& group = groups_[index];
  if (index == open_) open_ = -1;
  const foreactor_call& first = group.member[0]->request.call;
  Request& request = group.request;
  request.operation = RequestOperation::kCall;
  request.call = foreactor_call{};
  request.call.type = FOREACTOR_CALL_PREADV;
  request.call.fd = first.fd;
  request.call.offset = first.offset;
  request.call.iov = group.vectors;
  request.call.iovcnt = group.members;
  request.call.length = group.bytes;
  request.result = 0;
  request.linked_next = nullptr;
  request.ordered = false;
  request.streamed = true;
  request.state.store(RequestState::kIdle, std::memory_order_relaxed);
  if (!engine_->Prepare(&request)) {
    CompleteAllWith(index, -ECANCELED);  // the queue is full: the program reads
    return;
  }
  group.state = GroupState::kSent;
  prepared_since_walk_++;
  statistics_->direct_read_requests++;
}

unsigned CoalescedReads::FinishWalk() {
  if (open_ >= 0 && SentGroupsWaiting() < kMinGroupsAhead) Send(open_);
  const unsigned prepared = prepared_since_walk_;
  prepared_since_walk_ = 0;
  return prepared;
}

int CoalescedReads::SentGroupsWaiting() const {
  int waiting = 0;
  for (int index = 0; index < kGroups; ++index)
    waiting += groups_[index].state == GroupState::kSent ? 1 : 0;
  return waiting;
}

void CoalescedReads::Reap() {
  if (busy_groups_ == 0) return;
  for (int index = 0; index < kGroups; ++index) {
    const Group& group = groups_[index];
    if (group.state == GroupState::kSent &&
        group.request.state.load(std::memory_order_acquire) == RequestState::kCompleted) {
      CompleteMembers(index);
    }
  }
}

void CoalescedReads::Wait(VisitSlot* slot) {
  const int index = slot->read_group;
  if (index < 0) return;
  if (index == open_) {
    Send(index);
    if (groups_[index].state == GroupState::kSent) {
      prepared_since_walk_--;
      engine_->Submit();  // a failure completes the group with -ECANCELED
    }
  }
  Group& group = groups_[index];
  if (group.state == GroupState::kSent) {
    if (group.request.state.load(std::memory_order_acquire) != RequestState::kCompleted) {
      engine_->Wait(&group.request);
    }
    CompleteMembers(index);
  }
}

void CoalescedReads::Cancel(VisitSlot* slot) {
  const int index = slot->read_group;
  if (index < 0) return;
  Group& group = groups_[index];
  if (group.state == GroupState::kOpen) {
    CompleteAllWith(index, -ECANCELED);
  } else if (group.state == GroupState::kSent && !group.cancel_asked) {
    group.cancel_asked = true;
    engine_->Cancel(&group.request);
  }
}

void CoalescedReads::CompleteMembers(int index) {
  Group& group = groups_[index];
  const int64_t result = group.request.result;
  if (result < 0) {
    CompleteAllWith(index, result);
    return;
  }
  uint64_t start = 0;
  for (int member = 0; member < group.members; ++member) {
    Request& request = group.member[member]->request;
    const uint64_t length = request.call.length;
    const bool whole = static_cast<uint64_t>(result) >= start + length;
    request.result = whole ? static_cast<int64_t>(length) : -ECANCELED;
    start += length;
  }
  Free(index);
}

void CoalescedReads::CompleteAllWith(int index, int64_t result) {
  Group& group = groups_[index];
  for (int member = 0; member < group.members; ++member) {
    group.member[member]->request.result = result;
  }
  Free(index);
}

void CoalescedReads::Free(int index) {
  Group& group = groups_[index];
  for (int member = 0; member < group.members; ++member) {
    VisitSlot* slot = group.member[member];
    slot->read_group = -1;
    slot->request.state.store(RequestState::kCompleted, std::memory_order_release);
    group.member[member] = nullptr;
  }
  if (index == open_) open_ = -1;
  group.members = 0;
  group.bytes = 0;
  group.state = GroupState::kFree;
  group.request.state.store(RequestState::kIdle, std::memory_order_relaxed);
  busy_groups_--;
}

}  // namespace foreactor
