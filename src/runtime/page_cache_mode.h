// page_cache_mode.h: whether a graph's reads are being found in the page
// cache, and what the runner does about it (DESIGN §5).
//
// An asynchronous engine only costs time on data already in memory.  Before
// issuing a read early, the runner's peek head tries it with RWF_NOWAIT: a
// full hit is kept and the engine is not used.  A full read that waited for
// the device all the same (FromMemory) is no hit.
// This class decides:
//  - which reads are probed: all of them, until kColdMissStreak misses in a
//    row; then one in kColdProbeInterval until a probe hits again (a miss
//    costs a failed call that also starts the read);
//  - when to serve reads from the cache at the frontier instead of issuing
//    them: after hits worth cached_streak_needed() units of
//    kCacheHitUnitBytes in a row (an amount of data, so small and large
//    reads switch after the same bytes);
//  - which of the reads served so are checked with RWF_NOWAIT (one in
//    kCacheCheckInterval; the others are plain reads, cheaper) and what a
//    checked read that would block does: back to speculating, and each
//    quick return (within twice the streak needed of checked reads, that is
//    kCacheCheckInterval times as many reads served) doubles the streak
//    needed next time, up to kMaxCachedStreak, so a partly cached file does
//    not flip the mode back and forth; a long stay resets it (the rule of
//    ServingStreak, serving_streak.h, which the lookups' mode shares).
//    Counting the stay in checked reads makes the rule a bound on the share
//    of reads that miss: serving stays cheap only while fewer than about one
//    read in 2 x the streak needed misses (LevelDB's level-0 Gets: a dozen
//    cached block reads, then one from the device; served, that read waits
//    at the frontier);
//  - when a scope stops following its graph: after
//    kServedPerNeededHitBeforeLeavingToCache x the streak needed reads
//    served from the cache in a row within it.
// The mode is kept across scopes; the served run is per scope.
//
// A policy only: the runner makes the reads and counts statistics.  One
// per runner; not thread-safe.
#ifndef FOREACTOR_RUNTIME_PAGE_CACHE_MODE_H_
#define FOREACTOR_RUNTIME_PAGE_CACHE_MODE_H_

#include <algorithm>
#include <cstdint>

#include "runtime/serving_streak.h"

namespace foreactor {

class PageCacheMode {
 public:
  static constexpr unsigned kInitialCachedStreak = 32;
  static constexpr unsigned kMaxCachedStreak = 4096;
  static constexpr uint64_t kCacheHitUnitBytes = 8192;
  static constexpr unsigned kColdMissStreak = 16;
  static constexpr unsigned kColdProbeInterval = 8;
  static constexpr unsigned kCacheCheckInterval = 8;
  static constexpr unsigned kServedPerNeededHitBeforeLeavingToCache = 8;

  // A read of `bytes` made with RWF_NOWAIT returned them all after
  // `nanoseconds` (a probe, or a checked read while serving).  Returns
  // false when it waited for the device: then the data was cold, whatever
  // the read returned.  RWF_NOWAIT does not always keep a buffered read
  // from waiting: on Linux 6.18, in about one cold scan in ten of the
  // bptree tool, every probe of a leaf returned its 8 KiB after 140-310 us
  // (under strace), so a cold file looked cached, the scope was left to
  // the cache after 288 reads, and the rest of the file was read plain.
  // A read is slow when it took longer than kMemoryReadNanoseconds plus
  // one nanosecond per kMemoryReadBytesPerNanosecond bytes (8 KiB from the
  // page cache: 3-10 us; from the development VM's disk: 40 us and more;
  // the runner's buffers have their pages faulted in before they are read
  // into, GrowingBuffer).  A slow read alone may be the thread preempted
  // (about one hot probe in a hundred there took 25-100 us): only a slow
  // read right after another slow one counts as having waited.  On a
  // device whose reads return within the bound they count as cached, as
  // they did before.
  static constexpr uint64_t kMemoryReadNanoseconds = 20000;
  static constexpr uint64_t kMemoryReadBytesPerNanosecond = 1;  // 1 GB/s, a slow copy
  bool FromMemory(uint64_t bytes, uint64_t nanoseconds) {
    const bool slow = nanoseconds > kMemoryReadNanoseconds + bytes / kMemoryReadBytesPerNanosecond;
    const bool waited = slow && previous_read_slow_;
    previous_read_slow_ = slow;
    return !waited;
  }

  // Reads are served from the page cache at the frontier; the peek head
  // issues none.
  bool serving_from_cache() const { return serving_from_cache_; }

  // The trial a runner starts with (StartTrial): reads are served from the
  // page cache at the frontier, every one checked with RWF_NOWAIT into the
  // program's buffer, and the peek head rests, until the streak needed has
  // been found cached (NoteTrialHit: serving as usual from then on) or one
  // is not (EndTrial: speculating, the streak needed unchanged).  Probes
  // ahead would find cached reads at the cost of a copy into a slot of
  // the runner's and a copy out, and a fresh slot buffer each in a new
  // process; a cold start loses the overlap of its first read alone.
  void StartTrial() {
    trial_ = true;
    serving_from_cache_ = true;
  }
  bool in_trial() const { return trial_; }
  // A checked read of `bytes` in the trial was found cached.  Returns true
  // when the trial ends with it (serving as usual).
  bool NoteTrialHit(uint64_t bytes) {
    const uint64_t units = std::max<uint64_t>(1, bytes / kCacheHitUnitBytes);
    consecutive_hits_ =
        static_cast<unsigned>(std::min<uint64_t>(consecutive_hits_ + units, kMaxCachedStreak));
    if (consecutive_hits_ < streak_.needed()) return false;
    trial_ = false;
    served_since_switch_ = 0;
    return true;
  }
  // A read in the trial was not found cached, or cannot be served from the
  // cache: back to speculating.
  void EndTrial() {
    trial_ = false;
    serving_from_cache_ = false;
    consecutive_hits_ = 0;
    served_in_a_row_ = 0;
  }
  // Hit units in a row that switch to serving from the cache.
  unsigned cached_streak_needed() const { return streak_.needed(); }

  // The file system refused RWF_NOWAIT: no read is probed or served from
  // the cache any more.
  bool nowait_unsupported() const { return nowait_unsupported_; }
  void NoteNowaitUnsupported() { nowait_unsupported_ = true; }

  // A scope starts: its run of reads served from the cache starts over.
  void StartScope() { served_in_a_row_ = 0; }

  // Asked before probing a read: false when the data looks cold and this
  // read is not among the ones still probed.
  bool ProbeWanted() {
    return consecutive_misses_ < kColdMissStreak || ++reads_since_probe_ % kColdProbeInterval == 0;
  }

  // The outcome of a probe of `bytes`: `hit` when it returned them all
  // and FromMemory() took it as read from memory.  Returns true when it
  // switches to serving reads from the cache.
  bool NoteProbe(bool hit, uint64_t bytes) {
    if (!hit) {
      consecutive_hits_ = 0;
      consecutive_misses_++;
      return false;
    }
    consecutive_misses_ = 0;
    const uint64_t units = std::max<uint64_t>(1, bytes / kCacheHitUnitBytes);
    consecutive_hits_ =
        static_cast<unsigned>(std::min<uint64_t>(consecutive_hits_ + units, kMaxCachedStreak));
    if (consecutive_hits_ < streak_.needed() || serving_from_cache_) return false;
    serving_from_cache_ = true;
    served_since_switch_ = 0;
    return true;
  }

  // While serving from the cache, asked for each read: true when this one
  // is made with RWF_NOWAIT to see whether the data is still cached.
  bool CheckThisRead() { return trial_ || ++reads_since_check_ % kCacheCheckInterval == 0; }

  // A checked read found the data not cached (it would block, or it
  // waited: FromMemory): back to speculating.
  void LeaveServing() {
    if (trial_) {
      EndTrial();
      return;
    }
    served_in_a_row_ = 0;
    serving_from_cache_ = false;
    consecutive_hits_ = 0;
    // The stay counted in reads served: twice the streak needed of checked
    // reads is kCacheCheckInterval times as many served.
    streak_.NoteStayEnded(served_since_switch_, 2 * kCacheCheckInterval);
  }

  // A read was served from the cache.
  void NoteServed() { served_since_switch_++; }

  // Counts the read just served in this scope's run; true when the run is
  // long enough for the scope to stop following its graph (the runner
  // also waits until nothing is ahead).
  bool ServedRunLeavesScope() {
    return ++served_in_a_row_ >= kServedPerNeededHitBeforeLeavingToCache * streak_.needed();
  }

 private:
  bool serving_from_cache_ = false;
  bool trial_ = false;
  bool nowait_unsupported_ = false;
  unsigned consecutive_hits_ = 0;  // in kCacheHitUnitBytes: a hit of 128 KiB counts 16
  unsigned consecutive_misses_ = 0;
  unsigned reads_since_probe_ = 0;  // reads not probed while the data looks cold
  unsigned reads_since_check_ = 0;  // reads served from the cache (kCacheCheckInterval)
  unsigned served_in_a_row_ = 0;    // this scope: reads served since speculating last
  ServingStreak streak_{kInitialCachedStreak, kMaxCachedStreak};
  uint64_t served_since_switch_ = 0;  // reads served since the last switch to serving
  bool previous_read_slow_ = false;   // the last read FromMemory() timed was slow
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_PAGE_CACHE_MODE_H_
