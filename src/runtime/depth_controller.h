// depth_controller.h: how many calls the peek head may run ahead of the
// program, chosen while the program runs.
//
// FOREACTOR_DEPTH=auto (kAutomatic) chooses within [0, 256], starting at
// 32.  FOREACTOR_DEPTH=N (kAtMost) starts at N and chooses within [0, N]:
// a fixed depth is a bound, and the runtime never keeps issuing early what
// it measures not to pay (data in memory, where an engine only adds a
// hand-off).  With FOREACTOR_EXACT_DEPTH=1 (kExact) the depth is N whatever
// it costs: for tests and experiments that need every call issued early.
//
// One controller per graph and thread (it lives in the GraphRunner), so
// each graph finds the depth that suits its calls, its data and the device
// under the thread's own load.
//
// What it maximizes: the program's progress inside the graph's scopes, in
// graph calls per second of time spent in those scopes.  Time outside the
// scopes is not counted, so the figure does not depend on what the program
// does between scopes.
//
// Control law (a hill climber over the levels 0, 1, 2, 4, ..., the largest
// power of two below the maximum, the maximum):
//  - The controller measures in windows: a window ends after
//    max(kMinimumWindowCalls, kWindowCallsPerDepth * depth) graph calls at
//    one depth, so that each window sees several rounds of the pipeline,
//    and not before it has lasted kMinimumWindowNanoseconds of scope time
//    (the call count doubles until it has), so that bursts (a block of
//    inodes that arrives at once, a preempted thread) average out.
//  - The home rate is a running mean: each window at home moves it half
//    way to the window's rate, so one lucky or unlucky window neither
//    makes a probe win nor hides a better depth.
//  - It stays at its home level and measures its rate there.  After a hold
//    of some windows it probes another level for one window, in turn: one
//    step up, one step down, and level 0 (when that is not the step down).
//    Level 0 is probed directly because the rate need not fall steadily
//    towards it: with calls served from memory, running them through an
//    engine costs the same at every depth (and more depth overlaps more of
//    that cost), while depth 0 avoids the engine altogether.
//  - A probe up whose rate beats the home rate by more than kImprovementUp
//    makes that level the new home, and the next step up follows at once:
//    a cold start climbs 32 -> 64 -> 128 -> 256 in consecutive windows.
//    A probe down (or to 0) must beat it by kImprovementDown in two
//    windows in a row: too little depth costs a cold workload far more
//    than too much, and a device shared with other work makes single
//    windows noisy.  A probe that does not beat it returns home and
//    doubles the hold (from kInitialHoldWindows up to kMaximumHoldWindows),
//    so a settled controller probes rarely; each move resets the hold.
//  - After each move the calls the peek head had passed, issued (or left)
//    at the old depth, reach the frontier first, while it fills the new
//    depth: a window starts only once max(those calls, the new depth)
//    calls have finished (settling).  Measured from the move, a probe
//    down from 128 judged the 128 early reads still in flight, a window
//    at depth 0 on a cold workload won, and the window that confirmed it
//    read one call at a time; the first window home after such a probe
//    judged the refill and pulled the home rate down.
//  - A probe is looked at once, after kProbeCheckCalls calls of its
//    window: one running at less than kLosingProbeFraction of the home
//    rate ends there, lost.  A probe to depth 0 on a cold workload would
//    otherwise wait for a window of device reads one at a time.
//  - Level 0 (depth 0) issues nothing early: where the engine only costs
//    time (data in memory, calls the device does not parallelize, a
//    program that is CPU-bound) the controller walks down to it and stays
//    there, probing depth 1 now and then.
//  - Windows in which speculation did not run at all (reads served from the
//    page cache, speculation suspended after mispredictions) are discarded
//    by the owner with DiscardWindow(): they say nothing about the depth.
//
// With an exact depth the controller only reports N.
// Not thread-safe: used by the owning thread only.
#ifndef FOREACTOR_RUNTIME_DEPTH_CONTROLLER_H_
#define FOREACTOR_RUNTIME_DEPTH_CONTROLLER_H_

#include <algorithm>
#include <cstdint>

#include "config/settings.h"

namespace foreactor {

// How the depth is set (see the top of this file).
enum class DepthPolicy : unsigned char {
  kExact,      // always the given depth
  kAtMost,     // starts at the given depth, moves within [0, it]
  kAutomatic,  // starts at min(kStartDepth, the given depth), moves within [0, it]
};

// The policy `settings` ask for: kAutomatic for FOREACTOR_DEPTH=auto,
// kExact with FOREACTOR_EXACT_DEPTH=1, else kAtMost.
DepthPolicy DepthPolicyOf(const GraphSettings& settings);

class DepthController {
 public:
  // Monotonic time in nanoseconds; replaceable in tests.
  using Clock = uint64_t (*)();

  static constexpr unsigned kStartDepth = 32;
  static constexpr unsigned kMinimumWindowCalls = 128;
  static constexpr unsigned kWindowCallsPerDepth = 4;
  static constexpr uint64_t kMinimumWindowNanoseconds = 1'000'000;
  static constexpr unsigned kProbeCheckCalls = 16;
  static constexpr double kLosingProbeFraction = 0.5;
  static constexpr double kImprovementUp = 0.05;    // a probe up must be 5% faster to win
  static constexpr double kImprovementDown = 0.10;  // a probe down, 10% faster, twice
  static constexpr unsigned kInitialHoldWindows = 2;
  static constexpr unsigned kMaximumHoldWindows = 32;

  // kExact: depth() is always `depth`.  kAtMost: depth() moves within
  // [0, depth], starting at `depth`.  kAutomatic: it moves within [0, depth],
  // starting at min(kStartDepth, depth).  `clock` null means CLOCK_MONOTONIC.
  DepthController(DepthPolicy policy, unsigned depth, Clock clock = nullptr);

  // The number of syscall visits the peek head may have ahead now.
  unsigned depth() const { return depth_; }
  // The depth it settles at between probes (depth() during a probe differs).
  unsigned home_depth() const { return automatic() ? DepthOfLevel(home_level_) : depth_; }
  // False for an exact depth: depth() never moves.
  bool automatic() const { return policy_ != DepthPolicy::kExact; }
  // Makes depth() `depth` (at most the controller's largest) until the
  // controller next moves it; for tests of what a depth change does.
  void SetDepthForTests(unsigned depth) { depth_ = std::min(depth, maximum_depth_); }

  // The owning thread entered or left one of the graph's scopes.
  void ScopeEntered();
  void ScopeLeft();

  // One graph call finished at the frontier while speculation ran at the
  // current depth; `calls_ahead` calls the peek head passed have not
  // reached the frontier yet.  May end the window and change depth(); the
  // next window then starts after max(`calls_ahead`, the new depth) more
  // calls (see the top of this file).  Returns true when depth() changed.
  bool CallFinished(unsigned calls_ahead);

  // Forgets the window in progress (its calls did not run speculatively).
  void DiscardWindow();

  // Keeps depth() at `depth` or above (the lowest level that reaches it, at
  // most the largest) until called again: no probe goes below it, and a
  // home below it moves up to it (its rate then measured anew).  0 lifts
  // the floor.  For a scope whose reads stream a file past the page cache,
  // which at a shallower depth would go through the cache again
  // (graph_runner.h, kMinDirectReadBytesAhead): a probe there measures another
  // way of reading, and ends the stream.  Nothing happens for an exact
  // depth.
  void KeepAtLeast(unsigned depth);

  // Forgets what it learned: home at the start depth again, rate unknown,
  // hold at its initial length.  For a home of depth 0 that no scope will
  // measure again (the scope gate rests while a scope would issue nothing):
  // the next scopes measure from the start, so a workload that turned cold
  // is found.  Not for an exact depth (nothing happens).
  void Restart();

  // The last `nanoseconds` of the scope time do not count in the window in
  // progress: work the plugin knows no depth can speed up and whose amount
  // differs from window to window (du: reading a directory), which would
  // otherwise make windows at one depth differ far more than depths do.
  void ExcludeTime(uint64_t nanoseconds);

  // Counters for the statistics.
  uint64_t depth_changes() const { return depth_changes_; }        // moves of the home level
  uint64_t windows() const { return windows_; }                    // windows completed
  uint64_t window_depth_sum() const { return window_depth_sum_; }  // sum of each window's depth

 private:
  unsigned LevelCount() const;
  // The level the controller starts at: the top one for kAtMost, else the
  // highest whose depth is at most kStartDepth.
  unsigned StartLevel() const;
  // Level 0 is depth 0, level L > 0 depth 2^(L - 1), the top level the
  // maximum depth.
  unsigned DepthOfLevel(unsigned level) const;
  unsigned WindowLength() const;
  // Folds the scope time so far into the window and returns the window's time.
  uint64_t TakeWindowNanoseconds();
  // The window's calls per second if its window_calls_ calls took `nanoseconds`.
  double WindowRate(uint64_t nanoseconds) const;
  // Ends the window of window_calls_ calls in `nanoseconds`; true when depth() changed.
  bool FinishWindow(uint64_t nanoseconds);
  void EndWindow(double rate);
  // Which level a probe tries.
  enum class Probe : unsigned char { kUp, kDown, kZero };
  // The level `probe` tries from home, or -1 when there is none.
  int ProbeTarget(Probe probe) const;
  // Starts a probe of the next kind in turn that has a target.  Returns
  // false when no level but home exists.
  bool StartProbe();
  void SetLevel(unsigned level);

  const DepthPolicy policy_;
  const unsigned maximum_depth_;
  const Clock clock_;
  unsigned depth_;

  // The hill climber (automatic only).
  unsigned home_level_ = 0;
  unsigned floor_level_ = 0;    // no level below it is used (KeepAtLeast)
  unsigned current_level_ = 0;  // home_level_, or the probed neighbour
  bool probing_ = false;
  Probe probe_ = Probe::kUp;  // the kind being probed, or the next one to probe
  bool confirming_ = false;   // a probe down won once; this window must win again
  unsigned hold_windows_ = kInitialHoldWindows;  // hold length after a failed probe
  unsigned hold_left_ = 0;                       // windows still to wait before probing
  double home_rate_ = 0;                         // calls per second at home, last measured
  bool home_rate_known_ = false;

  // The window in progress.
  bool in_scope_ = false;
  uint64_t scope_mark_ = 0;          // when the window's time in the current scope began
  uint64_t window_nanoseconds_ = 0;  // time in scopes of the window, before scope_mark_
  unsigned window_calls_ = 0;
  unsigned window_calls_needed_ = 0;  // calls before the window may end; 0: WindowLength()
  unsigned settling_calls_ = 0;       // calls after a move before the next window starts

  uint64_t depth_changes_ = 0;
  uint64_t windows_ = 0;
  uint64_t window_depth_sum_ = 0;
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_DEPTH_CONTROLLER_H_
