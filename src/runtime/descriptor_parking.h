// descriptor_parking.h: the descriptor numbers of opens issued early
// (DESIGN §2 rule 1).
//
// A program's open takes the lowest free descriptor number, and so does an
// open issued early, before the program asks for it.  This class keeps the
// numbers the program sees what they would be without foreactor:
//  - Parking: before the program takes a number itself (its own open, or
//    the delivery of an early one), the runner waits for every early open
//    still in flight and hands each result to Park(), which moves the
//    descriptor to the parking floor or above, in foreactor's high range
//    (engine/high_descriptors.h; the io_uring ring sits in its top 64), so
//    the lowest free number is the one the program would see.  When the
//    descriptor limit leaves no room up there, opens are not issued early
//    (HasRoom() is false); an early descriptor that cannot be moved (no
//    number free at or above the floor) is given up when its open is pure,
//    and keeps its number when the open has side effects.
//  - Delivery: an early open's result handed to the program becomes the
//    lowest free number at that moment (Deliver()).
//  - Order: descriptor numbers follow the order of opens, so no open is
//    issued early while an earlier one waits to run at the frontier (the
//    runner counts those with OpenPassedUnissued() and
//    UnissuedOpenReached()).
//
// The floor is looked up once per scope (StartScope), on first use.  One
// per runner; used by the owning thread only.
#ifndef FOREACTOR_RUNTIME_DESCRIPTOR_PARKING_H_
#define FOREACTOR_RUNTIME_DESCRIPTOR_PARKING_H_

#include <cstdint>

#include "foreactor/foreactor.h"

namespace foreactor {

class DescriptorParking {
 public:
  // The lowest number an early open's descriptor is moved to under the
  // descriptor range's top `ceiling` (HighDescriptorCeiling()): far above
  // the numbers a program uses.  -1 when the ceiling leaves no such room.
  static long FloorBelow(long ceiling);

  // A new scope: the floor is looked up again and no open waits.
  void StartScope() {
    floor_ = kFloorUnknown;
    unissued_opens_ = 0;
  }

  // True when early descriptors have a place to wait: opens may be issued
  // early.
  bool HasRoom() { return Floor() >= 0; }

  // The result of an early open `open` (a descriptor, or -errno), waited
  // for, becomes the returned one: the descriptor moved to the floor or
  // above (the one below it closed), the same descriptor when it is there
  // already or cannot be moved and `open` has side effects, -ECANCELED (the
  // descriptor closed: the program makes the open itself) when it cannot be
  // moved and `open` is pure.  A failure is returned as it is.
  int64_t Park(int64_t early, const foreactor_call& open);

  // The number the program gets for the early descriptor `early` of
  // `open`: the lowest free one now.  Whichever of `early` and the lowest
  // other free number is lower is returned, and the other one is closed;
  // `early` itself when the kernel cannot tell.
  static int64_t Deliver(int early, const foreactor_call& open);

  // The peek head passed an open without issuing it early.
  void OpenPassedUnissued() { unissued_opens_++; }
  // The frontier reached such an open.
  void UnissuedOpenReached() {
    if (unissued_opens_ > 0) unissued_opens_--;
  }
  // Everything ahead was drained.
  void ForgetUnissuedOpens() { unissued_opens_ = 0; }
  // True when an open passed without early issue waits at the frontier:
  // no later open may be issued early.
  bool OpenWaits() const { return unissued_opens_ > 0; }

 private:
  static constexpr long kFloorUnknown = -2;
  // FloorBelow(HighDescriptorCeiling()), looked up on first use in a scope.
  long Floor();

  long floor_ = kFloorUnknown;
  unsigned unissued_opens_ = 0;  // opens passed but not issued early, not yet reached
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_DESCRIPTOR_PARKING_H_
