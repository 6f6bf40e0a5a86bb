// du_walk_scope_policy.h: when du's walk should have its foreactor scope
// open.
//
// The automatic depth can lower the depth to 0 but cannot see what no scope
// at all costs: with the page cache hot an early statx only adds a hand-off
// to an io_uring worker, and even at depth 0 every stat inside a scope pays
// the runtime's bookkeeping (~0.5 us on a ~2 us stat).  So, with the
// automatic depth, the walk runs trials: it times a stretch of fts_read()
// calls without a scope, then the next stretch with one, and keeps the scope
// only when it made the walk faster, twice in a row (once when re-checked).
// A trial is given up as soon as it has taken longer than it may, or is
// kBehindPace times behind the pace it needs (checked every
// kTrialCheckReads calls), so a losing one costs little.  Otherwise the walk rests without a scope
// (kInitialRestStretches stretches, doubling up to kMaximumRestStretches)
// and tries again.  While the scope is kept, it is left again when the
// runtime says it would issue nothing early for a whole stretch (depth 0 or
// speculation suspended), and re-tried against a plain stretch every
// kRecheckStretches stretches.
//
// With a fixed depth or check mode (FOREACTOR_SPECULATION_REQUESTED) the
// scope is always open: the configuration asked for it.  With foreactor off
// it never is.
//
// Pure logic: the caller gives the clock and the runtime's answer, and does
// what Step() says.  The clock is read only where a stretch ends and at a
// trial's checkpoints.  The caller leaves out of the stretches the time of
// work the graph does not cover (du: reading a directory, ExcludeTime()),
// which would otherwise make stretches differ by where directories fall.
#ifndef FOREACTOR_APPS_COREUTILS_DU_WALK_SCOPE_POLICY_H_
#define FOREACTOR_APPS_COREUTILS_DU_WALK_SCOPE_POLICY_H_

#include <cstdint>

#include "foreactor/foreactor.h"

namespace du_walk {

class ScopePolicy {
 public:
  static constexpr uint32_t kStretchReads = 2048;  // fts_read calls per measured stretch
  static constexpr double kRequiredGain = 0.05;    // a trial must be 5% faster than plain
  static constexpr uint32_t kTrialCheckReads = 256;  // a trial looks at the clock this often
  // A trial this far behind the winning pace at a checkpoint is given up.
  static constexpr double kBehindPace = 1.5;
  static constexpr uint32_t kInitialRestStretches = 32;
  static constexpr uint32_t kMaximumRestStretches = 64;
  static constexpr uint32_t kRecheckStretches = 16;

  enum class Action : unsigned char { kNothing, kOpen, kClose };

  // The cheap part of Step(), for the caller's fast path: true when this
  // fts_read() only counts towards the end of a stretch without a decision
  // or a question to the runtime (Step() must not be called for it then).
  bool QuietRead() {
    if (reads_left_ == 0 || phase_ == Phase::kSpeculating) return false;
    if (phase_ == Phase::kTrial && (reads_left_ - 1) % kTrialCheckReads == 0) return false;
    reads_left_--;
    return true;
  }

  // The last `nanoseconds` do not count in the stretch being timed (the
  // caller spent them in work the scope cannot speed up).
  void ExcludeTime(uint64_t nanoseconds) { stretch_start_ += nanoseconds; }

  // Called before each fts_read().  `speculation` is asked only while a
  // scope is open or about to be; `now` (monotonic ns) only at stretch ends.
  template <class AskSpeculation, class Now>
  Action Step(bool scope_open, AskSpeculation speculation, Now now) {
    if (reads_left_ > 0) {
      reads_left_--;
      if (phase_ == Phase::kTrial) {
        // A trial that already took the time in which it would have to
        // finish to win cannot win any more, and one far behind the pace it
        // needs is not worth finishing: stop paying for it now.
        if (reads_left_ % kTrialCheckReads == 0) {
          const double elapsed = static_cast<double>(now() - stretch_start_);
          const double done = static_cast<double>(kStretchReads - reads_left_) / kStretchReads;
          if (elapsed >= WinningTime() || elapsed >= WinningTime() * done * kBehindPace) return Rest();
        }
        return Action::kNothing;
      }
      if (phase_ != Phase::kSpeculating || !scope_open) return Action::kNothing;
      // While kept: leave when the runtime would issue nothing for a stretch.
      if (speculation() != FOREACTOR_SPECULATION_NONE) {
        idle_reads_ = 0;
      } else if (++idle_reads_ >= kStretchReads) {
        idle_reads_ = 0;
        return Rest();
      }
      return Action::kNothing;
    }
    switch (phase_) {
      case Phase::kStart: {
        const foreactor_speculation answer = speculation();
        if (answer == FOREACTOR_SPECULATION_NONE) return Rest();
        if (answer == FOREACTOR_SPECULATION_REQUESTED) {
          phase_ = Phase::kRequested;
          return Action::kOpen;
        }
        return Plain(now());
      }
      case Phase::kRequested:
        return scope_open ? Action::kNothing : Action::kOpen;
      case Phase::kResting:
        return Plain(now());
      case Phase::kPlain: {
        const uint64_t time = now();
        plain_nanoseconds_ = time - stretch_start_;
        stretch_start_ = time;
        phase_ = Phase::kTrial;
        reads_left_ = kStretchReads;
        return Action::kOpen;
      }
      case Phase::kTrial: {
        const uint64_t time = now();
        if (static_cast<double>(time - stretch_start_) < WinningTime()) {
          if (!confirmed_) {
            // One win may be noise (the plain stretch preempted): the next
            // pair must win too.
            confirmed_ = true;
            return Plain(time, Action::kClose);
          }
          phase_ = Phase::kSpeculating;
          rest_stretches_ = kInitialRestStretches;
          idle_reads_ = 0;
          reads_left_ = kRecheckStretches * kStretchReads;
          return Action::kNothing;
        }
        return Rest();
      }
      case Phase::kSpeculating:
        // Time to check that the scope still pays.
        stretch_start_ = now();
        phase_ = Phase::kPlain;
        reads_left_ = kStretchReads;
        return Action::kClose;
    }
    return Action::kNothing;
  }

 private:
  enum class Phase : unsigned char { kStart, kRequested, kResting, kPlain, kTrial, kSpeculating };

  // The time within which a trial stretch must finish to be kept.
  double WinningTime() const { return static_cast<double>(plain_nanoseconds_) * (1.0 - kRequiredGain); }

  Action Rest() {
    confirmed_ = false;
    phase_ = Phase::kResting;
    reads_left_ = rest_stretches_ * kStretchReads;
    rest_stretches_ = rest_stretches_ * 2 > kMaximumRestStretches ? kMaximumRestStretches
                                                                  : rest_stretches_ * 2;
    return Action::kClose;
  }
  Action Plain(uint64_t time, Action action = Action::kNothing) {
    stretch_start_ = time;
    phase_ = Phase::kPlain;
    reads_left_ = kStretchReads;
    return action;
  }

  Phase phase_ = Phase::kStart;
  uint32_t reads_left_ = 0;       // fts_read calls until the phase's next decision
  uint32_t idle_reads_ = 0;       // kSpeculating: "would issue nothing" answers in a row
  uint32_t rest_stretches_ = kInitialRestStretches;  // length of the next rest
  uint64_t stretch_start_ = 0;
  uint64_t plain_nanoseconds_ = 0;  // the last plain stretch
  bool confirmed_ = false;  // a trial won since the last rest: the next win keeps the scope
};

}  // namespace du_walk

#endif  // FOREACTOR_APPS_COREUTILS_DU_WALK_SCOPE_POLICY_H_
