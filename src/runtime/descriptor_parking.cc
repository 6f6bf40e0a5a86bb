#include "runtime/descriptor_parking.h"

#include <fcntl.h>

#include <cerrno>

#include "base/call_types.h"
#include "engine/high_descriptors.h"
#include "runtime/raw_syscalls.h"

namespace foreactor {
namespace {

// The fcntl command that duplicates a descriptor of `open` with the
// close-on-exec flag the open asked for.
int DuplicateCommand(const foreactor_call& open) {
  return (open.flags & O_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD;
}

}  // namespace

long DescriptorParking::FloorBelow(long ceiling) {
  if (ceiling < 256) return -1;
  return ceiling >= 2048 ? ceiling - 1024 : ceiling / 2;
}

long DescriptorParking::Floor() {
  if (floor_ == kFloorUnknown) floor_ = FloorBelow(HighDescriptorCeiling());
  return floor_;
}

int64_t DescriptorParking::Park(int64_t early, const foreactor_call& open) {
  if (early < 0) return early;
  const long floor = Floor();
  const int64_t parked = floor >= 0 && early < floor
                             ? raw::Fcntl(static_cast<int>(early), DuplicateCommand(open), floor)
                             : early;
  if (parked >= 0) {
    if (parked != early) raw::Close(static_cast<int>(early));
    return parked;
  }
  if (EarlyIssueFor(open) == EarlyIssue::kOnGuess) {
    // No room up there: a pure open is given up (the program makes it
    // itself); one with side effects keeps its number.
    raw::Close(static_cast<int>(early));
    return -ECANCELED;
  }
  return early;
}

int64_t DescriptorParking::Deliver(int early, const foreactor_call& open) {
  // F_DUPFD finds the lowest free number other than the early descriptor;
  // whichever of the two is lower is the answer.
  const int64_t lowest = raw::Fcntl(early, DuplicateCommand(open), 0);
  if (lowest < 0) return early;
  if (lowest < early) {
    raw::Close(early);
    return lowest;
  }
  raw::Close(static_cast<int>(lowest));
  return early;
}

}  // namespace foreactor
