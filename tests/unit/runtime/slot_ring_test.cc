// Tests of SlotRing: which slot a visit lives in as the ring grows, and
// that growing keeps what the slots hold.
#include <gtest/gtest.h>
#include <malloc.h>

#include <set>

#include "runtime/visit_slot.h"

namespace foreactor {
namespace {

TEST(SlotRingTest, StartsWithOneSlotForEveryVisit) {
  SlotRing ring;
  ring.Allocate(8);
  EXPECT_EQ(ring.length(), 1u);
  EXPECT_EQ(&ring.At(0), &ring.At(5));
}

TEST(SlotRingTest, VisitsGoRoundTheSlotsInUse) {
  SlotRing ring;
  ring.Allocate(8);
  ring.GrowTo(4);
  EXPECT_EQ(ring.length(), 4u);
  for (uint64_t visit = 0; visit < 4; ++visit) {
    EXPECT_EQ(&ring.At(visit), &ring.At(visit + 4)) << visit;
    EXPECT_NE(&ring.At(visit), &ring.At(visit + 1)) << visit;
  }
}

TEST(SlotRingTest, GrowsUpToItsCapacityAndNeverShrinks) {
  SlotRing ring;
  ring.Allocate(8);
  ring.GrowTo(100);
  EXPECT_EQ(ring.length(), 8u);
  ring.GrowTo(2);
  EXPECT_EQ(ring.length(), 8u);
  EXPECT_EQ(&ring.At(3), &ring.At(11));
}

TEST(SlotRingTest, GrowingKeepsTheSlotsAndTheirBuffers) {
  SlotRing ring;
  ring.Allocate(8);
  ring.GrowTo(2);
  VisitSlot& second = ring.At(1);
  ASSERT_TRUE(second.data.Reserve(4096));
  char* buffer = second.data.data();
  second.state = SlotState::kPassed;
  ring.GrowTo(8);
  EXPECT_EQ(&ring.At(1), &second);
  EXPECT_EQ(ring.At(1).data.data(), buffer);
  EXPECT_EQ(ring.At(1).state, SlotState::kPassed);
  // The new slots start empty.
  for (uint64_t visit = 2; visit < 8; ++visit) {
    EXPECT_EQ(ring.At(visit).state, SlotState::kEmpty) << visit;
    EXPECT_EQ(ring.At(visit).data.data(), nullptr) << visit;
  }
}

TEST(SlotRingTest, SlotsKeepTheirPlaceAcrossChunks) {
  SlotRing ring;
  ring.Allocate(257);
  ring.GrowTo(10);
  VisitSlot* ninth = &ring.At(9);
  EXPECT_EQ(ring.GrowTo(40), 40u);
  EXPECT_EQ(&ring.At(9), ninth);
  std::set<VisitSlot*> distinct;
  for (uint64_t visit = 0; visit < 40; ++visit) distinct.insert(&ring.At(visit));
  EXPECT_EQ(distinct.size(), 40u);
  EXPECT_EQ(&ring.At(41), &ring.At(1));
}

TEST(SlotRingTest, TakesRoomOnlyForTheSlotsInUse) {
  // A capacity of 257 slots (the automatic depth's) used one at a time
  // takes one chunk of slots, not room for all 257.
  const size_t before = mallinfo2().uordblks;
  SlotRing ring;
  ring.Allocate(257);
  const size_t taken = mallinfo2().uordblks - before;
  EXPECT_LE(taken, (SlotRing::kChunkSlots + 2) * sizeof(VisitSlot));
  EXPECT_LT(taken, 257 * sizeof(VisitSlot) / 4);
}

TEST(SlotRingTest, MovesWithItsSlots) {
  SlotRing ring;
  ring.Allocate(4);
  ring.GrowTo(4);
  VisitSlot* third = &ring.At(2);
  SlotRing moved(std::move(ring));
  EXPECT_EQ(moved.length(), 4u);
  EXPECT_EQ(&moved.At(2), third);
  EXPECT_EQ(ring.length(), 0u);
}

}  // namespace
}  // namespace foreactor
