#include "runtime/scope_gate.h"

#include <algorithm>

#include "runtime/monotonic_clock.h"

namespace foreactor {

ScopeGate::ScopeGate(const foreactor_graph* graph, SpeculationQuery query, Clock clock)
    : graph_(graph), query_(query), clock_(clock != nullptr ? clock : &MonotonicNanoseconds) {}

void ScopeGate::TakeStatistics(Statistics* into) {
  into->Add(unreported_);
  unreported_ = Statistics{};
  has_statistics_ = false;
}

bool ScopeGate::Segment(bool open, uint32_t units) {
  open_ = open;
  segment_units_ = units;
  countdown_ = units - 1;  // this unit is the segment's first
  return open;
}

bool ScopeGate::StartPlain(uint64_t now) {
  phase_ = Phase::kPlain;
  stretch_start_ = now;
  return Segment(false, stretch_units_);
}

bool ScopeGate::SettleAfterScope() {
  phase_ = Phase::kSettling;
  return Segment(false, std::max(1u, stretch_units_ / kSettleFraction));
}

bool ScopeGate::TrialLost() {
  if (!second_chance_) return Rest();
  second_chance_ = false;
  return SettleAfterScope();
}

bool ScopeGate::Rest() {
  phase_ = Phase::kResting;
  confirmed_ = false;
  second_chance_ = false;
  const uint64_t units = static_cast<uint64_t>(rest_stretches_) * stretch_units_;
  rest_stretches_ = std::min(2 * rest_stretches_, kMaximumRestStretches);
  return Segment(false, static_cast<uint32_t>(std::min<uint64_t>(units, UINT32_MAX)));
}

bool ScopeGate::Decide() {
  if (phase_ != Phase::kStart) {
    (open_ ? unreported_.gate_scope_units : unreported_.gate_plain_units) += segment_units_;
    has_statistics_ = true;
  }
  switch (phase_) {
    case Phase::kStart:
    case Phase::kResting: {
      const foreactor_speculation answer = query_(graph_);
      if (answer == FOREACTOR_SPECULATION_NONE) return Rest();
      if (answer == FOREACTOR_SPECULATION_REQUESTED) {
        phase_ = Phase::kRequested;
        return Segment(true, UINT32_MAX);
      }
      return StartPlain(clock_());
    }
    case Phase::kRequested:
      return Segment(true, UINT32_MAX);
    case Phase::kPlain: {
      const uint64_t now = clock_();
      const uint64_t elapsed = now - stretch_start_;
      if (elapsed < kShortestStretchNanoseconds && stretch_units_ < kMaximumStretchUnits) {
        // Too short to time well: measure a longer stretch first.
        stretch_units_ *= 2;
        return StartPlain(now);
      }
      plain_nanoseconds_ = elapsed;
      trial_units_ = stretch_units_;
      if (elapsed > kLongestStretchNanoseconds && stretch_units_ > kMinimumStretchUnits) {
        stretch_units_ /= 2;  // for the stretches after this pair
      }
      if (query_(graph_) == FOREACTOR_SPECULATION_NONE) return Rest();
      phase_ = Phase::kTrial;
      stretch_start_ = now;
      checkpoint_ = 0;
      unreported_.gate_trials++;
      return Segment(true, CheckpointUnits());
    }
    case Phase::kTrial: {
      const uint64_t now = clock_();
      const double elapsed = static_cast<double>(now - stretch_start_);
      const double winning_time = static_cast<double>(plain_nanoseconds_) * (1.0 - kRequiredGain);
      ++checkpoint_;
      if (checkpoint_ < kTrialCheckpoints) {
        // A trial that already took the time in which it must finish cannot
        // win, and one far behind the pace it needs is not worth finishing
        // (the pace of the units after the first checkpoint, see the header).
        if (elapsed >= winning_time) return TrialLost();
        if (checkpoint_ == 1) first_checkpoint_nanoseconds_ = elapsed;
        if (checkpoint_ >= kFirstPaceCheckpoint) {
          const double done = static_cast<double>(checkpoint_ - 1) / kTrialCheckpoints;
          if (elapsed - first_checkpoint_nanoseconds_ >= winning_time * done * kBehindPace) {
            return TrialLost();
          }
        }
        return Segment(true, CheckpointUnits());
      }
      if (elapsed >= winning_time) return TrialLost();
      second_chance_ = false;
      rest_stretches_ = kInitialRestStretches;  // a win ends a run of losses
      unreported_.gate_trials_won++;
      if (!confirmed_) {
        confirmed_ = true;
        return SettleAfterScope();
      }
      phase_ = Phase::kKept;
      kept_stretches_left_ = kRecheckStretches;
      return Segment(true, stretch_units_);
    }
    case Phase::kKept:
      if (query_(graph_) == FOREACTOR_SPECULATION_NONE) return Rest();
      if (--kept_stretches_left_ == 0) {
        second_chance_ = true;
        return SettleAfterScope();
      }
      return Segment(true, stretch_units_);
    case Phase::kSettling:
      return StartPlain(clock_());
  }
  return Segment(false, 1);
}

}  // namespace foreactor
