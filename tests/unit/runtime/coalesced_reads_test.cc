// Tests of CoalescedReads: which early direct reads share a request, when a
// group goes to the engine, how a group's result is shared among its
// members, and cancellation.  The fake engine completes every group with a
// scripted result: no file is read.
#include "runtime/coalesced_reads.h"

#include <cerrno>
#include <cstdint>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/fake_engine.h"

namespace foreactor {
namespace {

constexpr uint64_t kChunk = 128 << 10;
constexpr int kChunksPerGroup = static_cast<int>(CoalescedReads::kGroupBytes / kChunk);
constexpr int kDirect = 1000;  // a descriptor number no request opens or reads

class CoalescedReadsTest : public ::testing::Test {
 protected:
  // A slot whose prepared early read is a PREAD of `length` bytes at
  // `offset` on `fd` into its own buffer.
  VisitSlot* Slot(int64_t offset, uint64_t length = kChunk, int fd = kDirect) {
    slots_.push_back(std::make_unique<VisitSlot>());
    VisitSlot* slot = slots_.back().get();
    EXPECT_TRUE(slot->data.Reserve(length));
    slot->state = SlotState::kIssued;
    slot->request.call.type = FOREACTOR_CALL_PREAD;
    slot->request.call.fd = fd;
    slot->request.call.offset = offset;
    slot->request.call.length = length;
    slot->request.call.buffer = slot->data.data();
    return slot;
  }

  // Joins `count` adjacent reads of kChunk starting at chunk `first`.
  std::vector<VisitSlot*> JoinChunks(int first, int count) {
    std::vector<VisitSlot*> joined;
    for (int chunk = first; chunk < first + count; ++chunk) {
      VisitSlot* slot = Slot(static_cast<int64_t>(chunk * kChunk));
      EXPECT_TRUE(reads_.Join(slot)) << "chunk " << chunk;
      joined.push_back(slot);
    }
    return joined;
  }

  static bool Completed(const VisitSlot* slot) {
    return slot->request.state.load() == RequestState::kCompleted && slot->read_group < 0;
  }

  testing::FakeEngine engine_;
  Statistics statistics_;
  CoalescedReads reads_{&engine_, &statistics_};
  std::vector<std::unique_ptr<VisitSlot>> slots_;
};

TEST_F(CoalescedReadsTest, AdjacentReadsGoAsOneVectoredReadOnceTheGroupIsFull) {
  std::vector<VisitSlot*> members = JoinChunks(4, kChunksPerGroup - 1);
  EXPECT_TRUE(engine_.prepared().empty()) << "a group is not sent before it is full";
  for (VisitSlot* member : members) {
    EXPECT_GE(member->read_group, 0);
    EXPECT_EQ(member->request.state.load(), RequestState::kSubmitted) << "with no engine";
  }
  members.push_back(JoinChunks(4 + kChunksPerGroup - 1, 1)[0]);
  ASSERT_EQ(engine_.prepared().size(), 1u);
  const foreactor_call& sent = engine_.prepared()[0].call;
  EXPECT_EQ(sent.type, FOREACTOR_CALL_PREADV);
  EXPECT_TRUE(engine_.prepared()[0].streamed) << "the program consumes groups in order";
  EXPECT_EQ(sent.fd, kDirect);
  EXPECT_EQ(sent.offset, static_cast<int64_t>(4 * kChunk));
  EXPECT_EQ(sent.length, CoalescedReads::kGroupBytes);
  ASSERT_EQ(sent.iovcnt, kChunksPerGroup);
  for (int index = 0; index < kChunksPerGroup; ++index) {
    EXPECT_EQ(sent.iov[index].iov_base, members[index]->data.data()) << "into the slot's buffer";
    EXPECT_EQ(sent.iov[index].iov_len, kChunk);
  }
  EXPECT_EQ(reads_.FinishWalk(), 1u) << "the caller submits it";
  EXPECT_EQ(statistics_.direct_read_requests, 1u);
  for (VisitSlot* member : members) {
    EXPECT_EQ(member->read_group, members[0]->read_group) << "every read in the one request";
  }
}

TEST_F(CoalescedReadsTest, AReadThatDoesNotContinueTheGroupSendsIt) {
  JoinChunks(0, 3);
  ASSERT_TRUE(reads_.Join(Slot(static_cast<int64_t>(4 * kChunk))));  // a gap
  ASSERT_EQ(engine_.prepared().size(), 1u);
  EXPECT_EQ(engine_.prepared()[0].call.iovcnt, 3);
  ASSERT_TRUE(reads_.Join(Slot(static_cast<int64_t>(5 * kChunk), kChunk, kDirect + 1)));
  ASSERT_EQ(engine_.prepared().size(), 2u) << "another descriptor";
  EXPECT_EQ(engine_.prepared()[1].call.iovcnt, 1);
  EXPECT_EQ(engine_.prepared()[1].call.offset, static_cast<int64_t>(4 * kChunk));
}

TEST_F(CoalescedReadsTest, AWalkSendsAPartlyFilledGroupOnlyWhileFewGroupsWait) {
  JoinChunks(0, kChunksPerGroup);
  JoinChunks(kChunksPerGroup, kChunksPerGroup);
  JoinChunks(2 * kChunksPerGroup, 3);
  static_assert(CoalescedReads::kMinGroupsAhead == 2);
  EXPECT_EQ(reads_.FinishWalk(), 2u) << "two full groups; the third keeps filling";
  engine_.Submit();
  ASSERT_TRUE(engine_.CompleteNext());
  EXPECT_EQ(reads_.FinishWalk(), 0u) << "a completed group waits until reaped";
  reads_.Reap();
  EXPECT_EQ(reads_.FinishWalk(), 1u) << "one group waits now: the third goes";
  EXPECT_EQ(engine_.prepared().back().call.iovcnt, 3);
}

TEST_F(CoalescedReadsTest, EachMemberGetsItsShareOfTheGroupsResult) {
  std::vector<VisitSlot*> members = JoinChunks(0, 4);
  engine_.SetResultForCall(0, static_cast<int64_t>(2 * kChunk + kChunk / 2));
  ASSERT_EQ(reads_.FinishWalk(), 1u);
  engine_.Submit();
  engine_.CompleteAll();
  reads_.Reap();
  for (VisitSlot* member : members) EXPECT_TRUE(Completed(member));
  EXPECT_EQ(members[0]->request.result, static_cast<int64_t>(kChunk));
  EXPECT_EQ(members[1]->request.result, static_cast<int64_t>(kChunk));
  EXPECT_EQ(members[2]->request.result, -ECANCELED) << "cut short: the program reads it";
  EXPECT_EQ(members[3]->request.result, -ECANCELED) << "not reached";
  EXPECT_TRUE(reads_.idle());
}

TEST_F(CoalescedReadsTest, AFailedGroupFailsEveryMember) {
  std::vector<VisitSlot*> members = JoinChunks(0, 3);
  engine_.SetResultForCall(0, -EIO);
  ASSERT_EQ(reads_.FinishWalk(), 1u);
  engine_.Submit();
  reads_.Wait(members[2]);
  for (VisitSlot* member : members) {
    EXPECT_TRUE(Completed(member));
    EXPECT_EQ(member->request.result, -EIO);
  }
}

TEST_F(CoalescedReadsTest, WaitingForAMemberOfTheOpenGroupSendsAndSubmitsIt) {
  JoinChunks(0, kChunksPerGroup);
  JoinChunks(kChunksPerGroup, kChunksPerGroup);
  std::vector<VisitSlot*> open = JoinChunks(2 * kChunksPerGroup, 2);
  ASSERT_EQ(reads_.FinishWalk(), 2u);
  engine_.Submit();
  engine_.SetResultForCall(2, static_cast<int64_t>(2 * kChunk));
  reads_.Wait(open[1]);
  ASSERT_EQ(engine_.prepared().size(), 3u);
  EXPECT_EQ(engine_.submit_batches().size(), 2u) << "submitted by the wait";
  EXPECT_TRUE(Completed(open[0]));
  EXPECT_TRUE(Completed(open[1]));
  EXPECT_EQ(open[1]->request.result, static_cast<int64_t>(kChunk));
  EXPECT_EQ(reads_.FinishWalk(), 0u) << "nothing left for the walk's submit";
}

TEST_F(CoalescedReadsTest, CancellingAMemberOfTheOpenGroupCompletesItWithoutTheEngine) {
  std::vector<VisitSlot*> members = JoinChunks(0, 2);
  reads_.Cancel(members[1]);
  EXPECT_TRUE(engine_.prepared().empty());
  for (VisitSlot* member : members) {
    EXPECT_TRUE(Completed(member));
    EXPECT_EQ(member->request.result, -ECANCELED);
  }
  EXPECT_TRUE(reads_.idle());
}

TEST_F(CoalescedReadsTest, CancellingMembersOfASentGroupCancelsItsRequestOnce) {
  std::vector<VisitSlot*> members = JoinChunks(0, kChunksPerGroup);
  engine_.Submit();
  reads_.Cancel(members[3]);
  reads_.Cancel(members[4]);
  EXPECT_EQ(engine_.cancel_count(), 1u);
  reads_.Wait(members[0]);
  for (VisitSlot* member : members) {
    EXPECT_TRUE(Completed(member));
    EXPECT_EQ(member->request.result, -ECANCELED);
  }
}

TEST_F(CoalescedReadsTest, AGroupTheEngineRefusesLeavesItsReadsToTheProgram) {
  engine_.SetCapacity(0);
  std::vector<VisitSlot*> members = JoinChunks(0, kChunksPerGroup);
  for (VisitSlot* member : members) {
    EXPECT_TRUE(Completed(member));
    EXPECT_EQ(member->request.result, -ECANCELED);
  }
  EXPECT_EQ(reads_.FinishWalk(), 0u);
  EXPECT_TRUE(reads_.idle());
}

TEST_F(CoalescedReadsTest, WithEveryGroupBusyAReadIsLeftToIssueAlone) {
  for (int group = 0; group < CoalescedReads::kGroups; ++group) {
    ASSERT_TRUE(reads_.Join(Slot(static_cast<int64_t>(2 * group * kChunk))));
  }
  VisitSlot* alone = Slot(static_cast<int64_t>(2 * CoalescedReads::kGroups * kChunk));
  EXPECT_FALSE(reads_.Join(alone));
  EXPECT_LT(alone->read_group, 0);
  EXPECT_EQ(alone->state, SlotState::kIssued) << "unchanged";
  EXPECT_EQ(alone->request.state.load(), RequestState::kIdle);
  EXPECT_EQ(engine_.prepared().size(), static_cast<size_t>(CoalescedReads::kGroups));
}

TEST_F(CoalescedReadsTest, AnEngineWithoutVectoredReadsGetsTheReadsAlone) {
  engine_.SetSupports(FOREACTOR_CALL_PREADV, false);
  VisitSlot* slot = Slot(0);
  EXPECT_FALSE(reads_.Join(slot));
  EXPECT_LT(slot->read_group, 0);
  EXPECT_EQ(slot->request.state.load(), RequestState::kIdle);
  EXPECT_TRUE(reads_.idle());
}

}  // namespace
}  // namespace foreactor
