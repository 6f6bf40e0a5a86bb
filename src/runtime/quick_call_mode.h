// quick_call_mode.h: whether a kind of call a graph makes (metadata
// lookups, the stat family; buffered writes) takes the program less time
// than a hand-off to an engine would, and what the runner does about it
// (DESIGN §5).
//
// Reads have RWF_NOWAIT to ask the page cache (page_cache_mode.h).  A stat
// has no such flag, and an early one costs a hand-off to the engine
// (io_uring runs every statx on a kernel worker) even when the inode is in
// memory.  (Opens are not judged so: an early open gives the descriptor
// the reads after it need, and a file's data can be cold while its inode
// is cached.)  A buffered write copies into the page cache and waits for
// the device only when the kernel throttles the writer or must read a
// page it partly covers; a page-sized one takes 2-4 microseconds.  So this
// class judges such calls by the time the program's own take at the
// frontier: one that needs the device waits for at least one device
// request (tens of microseconds on the fastest drives), or is throttled
// for milliseconds; one served from memory takes a few microseconds.
// For lookups kFastNanoseconds separates the two, and is about what a
// hand-off to a thread pool costs on two cores: a call quicker than that
// never pays to issue early.  Writes are judged against
// kFastWriteNanoseconds instead: while early writes to the same file run
// on another core, the program's own slow down to 6-20 us (the file's
// lock, its pages), so a write that does not wait for the device can look
// slower than a hand-off, yet issuing it early only adds that contention.
// The runner keeps one instance per kind, and pauses its peek head while a
// write probe is timed.
// What follows says "lookup" for any call of the kind.
//  - Deciding (the start): every lookup the peek head would issue early is
//    a probe, until one is slow (then speculating) or streak_needed() in a
//    row are fast (then serving).  A kind of call that is quick from the
//    start is never issued early: on a hot tree du's first early stats cost
//    it about 300 us each (io_uring's first kernel workers start), 12.7 ms
//    of a 140 ms run.  On a cold tree the first stat is slow, and the
//    probing ends after one call.
//  - Speculating: one lookup in kProbeInterval that the peek head would
//    issue early is left to the frontier instead (a probe), and timed.
//    After kSlowStreak slow probes in a row, only one in
//    kColdProbeInterval: on a cold tree every probe is a device wait the
//    program makes alone.
//  - After streak_needed() fast probes in a row, the runner serves
//    lookups at the frontier: none is issued early, and one in
//    kServedCheckInterval of those the program makes is timed (two clock
//    reads cost about a tenth of a cached stat).
//  - While serving, kSlowToLeave slow ones close together (each weighs
//    kSlowWindow, each fast one takes one off) switch speculation back
//    on.  A few alone may be the program's thread preempted, or slowed by
//    the process's other threads on a machine with few cores (walk-ahead's,
//    on a hot du: a lookup now and then over 20 us); on a tree that is not
//    cached about one lookup in sixteen reads an inode table block
//    (sixteen 256-byte inodes to a 4 KiB block) and the others find it.
//  - A quick return (fewer than kLongStayPerNeeded x the streak needed
//    lookups served) doubles the streak needed next time, up to
//    kMaxFastStreak, so a tree whose early lookups warmed its next ones
//    (siblings share inode table blocks) does not flip the mode back and
//    forth; a long stay resets it (ServingStreak, serving_streak.h).
// The mode is kept across scopes.
//
// A policy only: the runner times the calls and counts statistics.  One
// per runner; not thread-safe.
#ifndef FOREACTOR_RUNTIME_QUICK_CALL_MODE_H_
#define FOREACTOR_RUNTIME_QUICK_CALL_MODE_H_

#include <cstdint>

#include "runtime/serving_streak.h"

namespace foreactor {

class QuickCallMode {
 public:
  static constexpr uint64_t kFastNanoseconds = 5000;
  // Buffered writes (see the top).
  static constexpr uint64_t kFastWriteNanoseconds = 50000;

  // A call that takes the program less than `fast_nanoseconds` counts as
  // quick.
  explicit QuickCallMode(uint64_t fast_nanoseconds = kFastNanoseconds)
      : fast_nanoseconds_(fast_nanoseconds) {}
  static constexpr unsigned kProbeInterval = 8;
  static constexpr unsigned kSlowStreak = 8;
  static constexpr unsigned kColdProbeInterval = 64;
  static constexpr unsigned kInitialFastStreak = 16;
  static constexpr unsigned kMaxFastStreak = 1024;
  static constexpr unsigned kLongStayPerNeeded = 64;
  static constexpr unsigned kSlowWindow = 32;
  static constexpr unsigned kSlowToLeave = 4;
  static constexpr unsigned kServedCheckInterval = 4;

  // Lookups are served at the frontier; the peek head issues none.
  bool serving() const { return serving_; }
  // Fast probes in a row that switch to serving.
  unsigned streak_needed() const { return streak_.needed(); }

  // Speculating: whether the lookup the peek head is about to issue is
  // left to the frontier as a probe instead.
  bool ProbeThis() {
    if (deciding_) return true;
    const unsigned interval = slow_streak_ >= kSlowStreak ? kColdProbeInterval : kProbeInterval;
    if (++since_probe_ < interval) return false;
    since_probe_ = 0;
    return true;
  }

  // Serving: whether the lookup the program is making now is timed.
  bool CheckThisServed() {
    if (++since_check_ < kServedCheckInterval) return false;
    since_check_ = 0;
    return true;
  }

  // A lookup the program made at the frontier (a probe, or any lookup
  // while serving) took `nanoseconds`.  Returns true when the mode changed.
  bool NoteTimedCall(uint64_t nanoseconds) {
    const bool fast = nanoseconds < fast_nanoseconds_;
    if (serving_) {
      served_ += kServedCheckInterval;
      if (fast) {
        if (slow_debt_ > 0) slow_debt_--;
        return false;
      }
      slow_debt_ += kSlowWindow;
      if (slow_debt_ <= kSlowWindow * (kSlowToLeave - 1)) return false;
      serving_ = false;
      fast_streak_ = 0;
      slow_streak_ = 1;
      since_probe_ = 0;
      streak_.NoteStayEnded(served_, kLongStayPerNeeded);
      return true;
    }
    if (!fast) {
      deciding_ = false;
      fast_streak_ = 0;
      slow_streak_++;
      return false;
    }
    slow_streak_ = 0;
    if (++fast_streak_ < streak_.needed()) return false;
    deciding_ = false;
    serving_ = true;
    served_ = 0;
    slow_debt_ = 0;
    return true;
  }

 private:
  uint64_t fast_nanoseconds_;
  bool deciding_ = true;  // no call timed slow yet, and not served yet: every one is a probe
  bool serving_ = false;
  ServingStreak streak_{kInitialFastStreak, kMaxFastStreak};
  unsigned fast_streak_ = 0;
  unsigned slow_streak_ = 0;
  unsigned since_probe_ = 0;
  unsigned since_check_ = 0;
  uint64_t served_ = 0;  // lookups served since the switch to serving
  // While serving: kSlowWindow per slow lookup, less one per fast one;
  // serving ends when it passes kSlowWindow x (kSlowToLeave - 1).
  unsigned slow_debt_ = 0;
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_QUICK_CALL_MODE_H_
