// coalesced_reads.h: adjacent early direct reads sent to the device as one
// request (DESIGN §5).
//
// A copy loop reads its file in the program's chunks (cp: 128 KiB).  Sent
// past the page cache one by one (direct_reads.h), such reads reach the
// device as requests of the chunk's size, and a virtual disk may move a file
// in chunk-sized requests far slower than in requests of a mebibyte, at any
// queue depth: what the kernel's read-ahead gives a buffered copy.
//
// CoalescedReads gathers the early direct reads the peek head issues, in
// visit order, into groups.  A read joins the open group when it is on the
// same descriptor and starts where the group ends; a group goes to the
// engine as one PREADV whose vectors are its members' slot buffers, so the
// device fills every member's buffer in one request and no byte is copied
// more than it would be by a read of its own.
//
// A group is sent:
//  - once it holds kGroupBytes, or kMaxMembers reads;
//  - when a read arrives that does not continue it;
//  - at the end of a walk of the peek head (FinishWalk), while fewer than
//    kMinGroupsAhead sent groups wait for the program: the device is not
//    left idle while a group fills;
//  - when the program waits for one of its members (Wait).
//
// Results.  A group's result r covers its members in order: a member whose
// whole length lies within r gets its length, which is what its read alone
// would have returned.  A member that r cuts short or does not reach gets
// -ECANCELED, and every member of a group that failed gets the group's
// error: the program makes those reads itself, and meets the end of the
// file or the error as it would have.
//
// A member's own request never goes to an engine: while its read rides on a
// group, VisitSlot::read_group names the group and the request is
// kSubmitted; once the group completed (found by Reap, or waited for by
// Wait), the member's result is written and its request becomes kCompleted,
// as an engine would leave it.  So the runner and the write pipeline look at
// a member's request as at any other.
//
// One per runner; used by the owning thread only.  Its groups (24 KiB) are
// allocated at the first Join, so that a runner whose reads never go direct
// does not pay for them (a new process pays for every fresh page it
// touches, about 1.3 us a page on the development VM); nothing is allocated
// after that.
#ifndef FOREACTOR_RUNTIME_COALESCED_READS_H_
#define FOREACTOR_RUNTIME_COALESCED_READS_H_

#include <sys/uio.h>

#include <cstdint>
#include <memory>

#include "engine/engine.h"
#include "engine/request.h"
#include "runtime/statistics.h"
#include "runtime/visit_slot.h"

namespace foreactor {

class CoalescedReads {
 public:
  // The size a group is sent at.
  static constexpr uint64_t kGroupBytes = uint64_t{1} << 20;
  // The most reads in one group (vectors of one PREADV).
  static constexpr int kMaxMembers = 16;
  // Groups open or in flight at once; a read finding none free is issued
  // alone.
  static constexpr int kGroups = 32;
  // A partly filled group is sent at the end of a walk while fewer sent
  // groups than this wait for the program.
  static constexpr int kMinGroupsAhead = 2;

  // `engine` runs the groups; each group sent counts one
  // `statistics->direct_read_requests`.  Both outlive this object.
  CoalescedReads(Engine* engine, Statistics* statistics)
      : engine_(engine), statistics_(statistics) {}
  CoalescedReads(const CoalescedReads&) = delete;
  CoalescedReads& operator=(const CoalescedReads&) = delete;

  // Takes the early read of `slot`: its request is prepared (a PREAD of
  // call.length bytes at call.offset into call.buffer, on a descriptor
  // opened O_DIRECT) and not handed to any engine.  The read joins the
  // open group when it continues it; otherwise the open group is sent and
  // a new one opened.  Returns false, changing nothing about `slot`, when
  // no group is free, the groups could not be allocated or the engine runs
  // no PREADV: the caller issues the read alone.  Requests prepared
  // on the engine are counted for the caller's next Submit (FinishWalk).
  bool Join(VisitSlot* slot);

  // The end of a walk of the peek head: sends the open group if fewer than
  // kMinGroupsAhead sent groups are waiting.  Returns the number of groups
  // prepared on the engine since the last call: the caller submits them.
  unsigned FinishWalk();

  // Completes the members of every sent group whose request completed.
  // Does not poll the engine.
  void Reap();

  // Returns once the read of `slot`, a member of a group, completed: sends
  // and submits its group if still open, waits for the group and completes
  // its members.  Clears slot->read_group.
  void Wait(VisitSlot* slot);

  // The early read of `slot`, a member of a group, must not be used: an
  // open group completes every member with -ECANCELED now (none was
  // read); a sent group is cancelled (every member is then completed by
  // Wait or Reap, with its share or -ECANCELED).
  void Cancel(VisitSlot* slot);

  // True when no group is open or in flight.
  bool idle() const { return busy_groups_ == 0; }

 private:
  enum class GroupState : unsigned char { kFree, kOpen, kSent };
  struct Group {
    GroupState state = GroupState::kFree;
    bool cancel_asked = false;
    int members = 0;
    uint64_t bytes = 0;
    VisitSlot* member[kMaxMembers] = {};
    struct iovec vectors[kMaxMembers] = {};
    Request request;
  };

  // True when the read of `slot` continues `group` and fits in it.
  static bool Continues(const Group& group, const VisitSlot& slot);
  // Hands the open group to the engine; a refusal completes its members
  // with -ECANCELED.
  void Send(int index);
  // Writes each member's result from the completed request of group
  // `index` and frees it.
  void CompleteMembers(int index);
  // Completes every member of group `index` with `result` and frees it.
  void CompleteAllWith(int index, int64_t result);
  void Free(int index);
  int SentGroupsWaiting() const;

  Engine* engine_;
  Statistics* statistics_;
  std::unique_ptr<Group[]> groups_;  // kGroups, from the first Join on
  int open_ = -1;                    // index of the open group, -1: none
  int busy_groups_ = 0;
  unsigned prepared_since_walk_ = 0;
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_COALESCED_READS_H_
