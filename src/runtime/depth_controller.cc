#include "runtime/depth_controller.h"

#include <algorithm>

#include "runtime/monotonic_clock.h"

namespace foreactor {

DepthPolicy DepthPolicyOf(const GraphSettings& settings) {
  if (settings.automatic_depth) return DepthPolicy::kAutomatic;
  return settings.exact_depth ? DepthPolicy::kExact : DepthPolicy::kAtMost;
}

DepthController::DepthController(DepthPolicy policy, unsigned depth, Clock clock)
    : policy_(policy),
      maximum_depth_(depth),
      clock_(clock != nullptr ? clock : &MonotonicNanoseconds),
      depth_(depth) {
  Restart();
}

unsigned DepthController::StartLevel() const {
  if (policy_ == DepthPolicy::kAtMost) return LevelCount() - 1;
  // The highest level whose depth is at most kStartDepth (and the maximum).
  unsigned level = 0;
  while (level + 1 < LevelCount() && DepthOfLevel(level + 1) <= kStartDepth) ++level;
  return level;
}

void DepthController::Restart() {
  if (!automatic()) return;
  home_level_ = std::max(StartLevel(), floor_level_);
  SetLevel(home_level_);
  probing_ = false;
  probe_ = Probe::kUp;
  confirming_ = false;
  hold_windows_ = kInitialHoldWindows;
  hold_left_ = 0;
  home_rate_ = 0;
  home_rate_known_ = false;
  settling_calls_ = 0;
  DiscardWindow();
}

void DepthController::KeepAtLeast(unsigned depth) {
  if (!automatic()) return;
  unsigned level = 0;
  while (level + 1 < LevelCount() && DepthOfLevel(level) < depth) ++level;
  floor_level_ = level;
  if (home_level_ < floor_level_) {
    home_level_ = floor_level_;
    home_rate_known_ = false;
    hold_left_ = 0;
  }
  if (current_level_ < floor_level_) {
    probing_ = false;
    confirming_ = false;
    SetLevel(home_level_);
    DiscardWindow();
  }
}

unsigned DepthController::DepthOfLevel(unsigned level) const {
  if (level == 0) return 0;
  // Below the top level the powers of two; the top one is the maximum
  // itself, which need not be one.
  const unsigned power = level - 1 < 31 ? 1u << (level - 1) : maximum_depth_;
  return std::min(power, maximum_depth_);
}

unsigned DepthController::LevelCount() const {
  // Level 0, then one per power of two below the maximum, then the maximum.
  unsigned count = 1;
  while (count - 1 < 31 && (1u << (count - 1)) < maximum_depth_) ++count;
  return maximum_depth_ == 0 ? 1 : count + 1;
}

unsigned DepthController::WindowLength() const {
  return std::max(kMinimumWindowCalls, kWindowCallsPerDepth * depth_);
}

void DepthController::SetLevel(unsigned level) {
  current_level_ = level;
  depth_ = DepthOfLevel(level);
}

void DepthController::ScopeEntered() {
  if (!automatic()) return;
  in_scope_ = true;
  scope_mark_ = clock_();
}

void DepthController::ScopeLeft() {
  if (!automatic() || !in_scope_) return;
  in_scope_ = false;
  window_nanoseconds_ += clock_() - scope_mark_;
  if (settling_calls_ > 0) {
    // Nothing is ahead once the scope ended: the next scope starts at the
    // new depth, and its window with it.
    settling_calls_ = 0;
    DiscardWindow();
  }
}

void DepthController::DiscardWindow() {
  if (!automatic()) return;
  window_calls_ = 0;
  window_calls_needed_ = 0;
  window_nanoseconds_ = 0;
  if (in_scope_) scope_mark_ = clock_();
}

void DepthController::ExcludeTime(uint64_t nanoseconds) {
  if (!automatic()) return;
  if (in_scope_) {
    // Never past now: the excluded work may have begun before the scope.
    scope_mark_ = std::min(scope_mark_ + nanoseconds, clock_());
  } else {
    window_nanoseconds_ -= std::min(window_nanoseconds_, nanoseconds);
  }
}

uint64_t DepthController::TakeWindowNanoseconds() {
  if (in_scope_) {
    const uint64_t now = clock_();
    window_nanoseconds_ += now - scope_mark_;
    scope_mark_ = now;
  }
  return window_nanoseconds_;
}

double DepthController::WindowRate(uint64_t nanoseconds) const {
  return static_cast<double>(window_calls_) * 1e9 /
         static_cast<double>(std::max<uint64_t>(nanoseconds, 1));
}

bool DepthController::FinishWindow(uint64_t nanoseconds) {
  const double rate = WindowRate(nanoseconds);
  window_calls_ = 0;
  window_calls_needed_ = 0;
  window_nanoseconds_ = 0;
  const unsigned before = depth_;
  EndWindow(rate);
  return depth_ != before;
}

bool DepthController::CallFinished(unsigned calls_ahead) {
  if (!automatic()) return false;
  if (settling_calls_ > 0) {
    if (--settling_calls_ == 0) DiscardWindow();  // the window starts now
    return false;
  }
  ++window_calls_;
  bool moved = false;
  if (probing_ && home_rate_known_ && window_calls_ == kProbeCheckCalls) {
    // A probe far behind home ends now, lost: a window at depth 0 on a
    // cold workload would otherwise wait for 128 device reads in a row.
    const uint64_t nanoseconds = TakeWindowNanoseconds();
    if (WindowRate(nanoseconds) < home_rate_ * kLosingProbeFraction)
      moved = FinishWindow(nanoseconds);
  }
  if (!moved && window_calls_ >= std::max(window_calls_needed_, WindowLength())) {
    const uint64_t nanoseconds = TakeWindowNanoseconds();
    if (nanoseconds < kMinimumWindowNanoseconds && window_calls_ < (1u << 30)) {
      window_calls_needed_ = 2 * window_calls_;  // too short to tell depths apart: go on
      return false;
    }
    moved = FinishWindow(nanoseconds);
  }
  if (moved) settling_calls_ = std::max(calls_ahead, depth_);
  return moved;
}

void DepthController::EndWindow(double rate) {
  windows_++;
  window_depth_sum_ += depth_;
  if (!probing_) {
    home_rate_ = home_rate_known_ ? (home_rate_ + rate) / 2 : rate;
    home_rate_known_ = true;
    if (hold_left_ > 0) {
      hold_left_--;
      return;
    }
    StartProbe();
    return;
  }
  // A probe window ended.
  const bool up = probe_ == Probe::kUp;
  const double needed = up ? kImprovementUp : kImprovementDown;
  const bool won = home_rate_known_ && rate > home_rate_ * (1.0 + needed);
  if (won && !up && !confirming_) {
    confirming_ = true;  // stay at the probed level for one more window
    return;
  }
  confirming_ = false;
  probing_ = false;
  if (won) {
    home_level_ = current_level_;
    home_rate_ = rate;
    depth_changes_++;
    hold_windows_ = kInitialHoldWindows;
    hold_left_ = 0;
    // A step that paid: keep going the same way at once.
    if (probe_ != Probe::kZero && ProbeTarget(probe_) >= 0) {
      probing_ = true;
      SetLevel(static_cast<unsigned>(ProbeTarget(probe_)));
      return;
    }
    hold_left_ = hold_windows_;
    SetLevel(home_level_);
    return;
  }
  SetLevel(home_level_);
  probe_ = probe_ == Probe::kUp ? Probe::kDown : probe_ == Probe::kDown ? Probe::kZero : Probe::kUp;
  hold_left_ = hold_windows_;
  hold_windows_ = std::min(2 * hold_windows_, kMaximumHoldWindows);
}

int DepthController::ProbeTarget(Probe probe) const {
  switch (probe) {
    case Probe::kUp:
      return home_level_ + 1 < LevelCount() ? static_cast<int>(home_level_ + 1) : -1;
    case Probe::kDown:
      return home_level_ > floor_level_ ? static_cast<int>(home_level_ - 1) : -1;
    case Probe::kZero:
      // From level 1, the step down is level 0.
      return floor_level_ == 0 && home_level_ > 1 ? 0 : -1;
  }
  return -1;
}

bool DepthController::StartProbe() {
  for (int attempt = 0; attempt < 3; ++attempt) {
    const int target = ProbeTarget(probe_);
    if (target >= 0) {
      probing_ = true;
      SetLevel(static_cast<unsigned>(target));
      return true;
    }
    probe_ = probe_ == Probe::kUp     ? Probe::kDown
             : probe_ == Probe::kDown ? Probe::kZero
                                      : Probe::kUp;
  }
  return false;
}

}  // namespace foreactor
