// serving_streak.h: how long a run of cache hits must be before a cache
// mode starts serving calls at the frontier, learnt from how its earlier
// stays in serving ended (page_cache_mode.h for reads, quick_call_mode.h
// for lookups).
//
// A quick return from serving (a stay shorter than a given multiple of the
// streak needed) doubles the streak needed next time, up to a maximum, so
// that data that is only partly in memory does not flip the mode back and
// forth; a long stay shows the data was in memory, and resets it.
//
// A value type of the modes; not thread-safe.
#ifndef FOREACTOR_RUNTIME_SERVING_STREAK_H_
#define FOREACTOR_RUNTIME_SERVING_STREAK_H_

#include <algorithm>
#include <cstdint>

namespace foreactor {

class ServingStreak {
 public:
  // `initial` hits switch the first time; never more than `maximum`
  // (0 < initial <= maximum).
  constexpr ServingStreak(unsigned initial, unsigned maximum)
      : initial_(initial), maximum_(maximum), needed_(initial) {}

  // Hits in a row that switch to serving now.
  unsigned needed() const { return needed_; }

  // A stay in serving ended after `stay` units (the caller's: reads or
  // lookups served).  Shorter than `long_stay_per_needed` x needed():
  // needed() doubles, up to the maximum; else it is reset.
  void NoteStayEnded(uint64_t stay, uint64_t long_stay_per_needed) {
    if (stay < long_stay_per_needed * needed_) {
      needed_ = std::min(maximum_, 2 * needed_);
    } else {
      needed_ = initial_;
    }
  }

 private:
  unsigned initial_;
  unsigned maximum_;
  unsigned needed_;
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_SERVING_STREAK_H_
