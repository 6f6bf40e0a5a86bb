#include "runtime/scope_gate.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>

#include "runtime/monotonic_clock.h"

namespace foreactor {
namespace {

// The calling thread's voluntary context switches so far: each time it
// slept in the kernel (a read from the device, a lock, a full pipe).  When
// they cannot be read, the clock, which differs between any two calls: a
// thread is then never taken as one that did not wait.
uint64_t VoluntaryContextSwitchesOfThisThread() {
  struct rusage usage;
  if (getrusage(RUSAGE_THREAD, &usage) != 0) return MonotonicNanoseconds();
  return static_cast<uint64_t>(usage.ru_nvcsw);
}

}  // namespace

ScopeGate::ScopeGate(const foreactor_graph* graph, SpeculationQuery query, RetryRequest retry,
                     Clock clock, WaitCount waits)
    : graph_(graph),
      query_(query),
      retry_(retry),
      clock_(clock != nullptr ? clock : &MonotonicNanoseconds),
      waits_(waits != nullptr ? waits : &VoluntaryContextSwitchesOfThisThread) {}

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
  segment_start_ = now;
  waits_at_plain_start_ = waits_();
  checkpoint_ = 0;
  pair_units_ = stream_check_ ? stream_check_units_ : stretch_units_;
  return Segment(false, CheckpointUnits());
}

bool ScopeGate::StartTrial(uint64_t now) {
  phase_ = Phase::kTrial;
  segment_start_ = now;
  checkpoint_ = 0;
  trial_time_ = 0;
  trial_first_checkpoint_time_ = 0;
  unreported_.gate_trials++;
  return Segment(true, CheckpointUnits());
}

uint64_t ScopeGate::TakeCheckpoint(uint64_t now) {
  const uint64_t nanoseconds = now > segment_start_ ? now - segment_start_ : 0;
  segment_start_ = now;
  ++checkpoint_;
  return nanoseconds;
}

double ScopeGate::ClippedPlainTime() {
  uint64_t sorted[kTrialCheckpoints];
  std::copy(plain_checkpoints_, plain_checkpoints_ + kTrialCheckpoints, sorted);
  std::nth_element(sorted, sorted + kTrialCheckpoints / 2, sorted + kTrialCheckpoints);
  clip_nanoseconds_ = kOutlierFactor * static_cast<double>(sorted[kTrialCheckpoints / 2]);
  // The first checkpoint is compared with nothing (see the header).
  return ClippedPlainSum(1, kTrialCheckpoints);
}

bool ScopeGate::SettleAfterScope() {
  phase_ = Phase::kSettling;
  return Segment(false, std::max(1u, stretch_units_ / kSettleFraction));
}

double ScopeGate::ClippedPlainSum(uint32_t first, uint32_t end) const {
  double total = 0;
  for (uint32_t i = first; i < end; ++i) total += Clipped(plain_checkpoints_[i]);
  return total;
}

double ScopeGate::PlainCheckpointRelativeVariance() const {
  double sum_of_squares = 0;
  for (uint32_t i = 1; i < kTrialCheckpoints; ++i) {
    const double checkpoint = Clipped(plain_checkpoints_[i]);
    sum_of_squares += checkpoint * checkpoint;
  }
  constexpr double kCompared = kTrialCheckpoints - 1;
  const double mean = plain_time_ / kCompared;
  if (mean <= 0) return 0;
  const double variance = std::max(0.0, sum_of_squares / kCompared - mean * mean);
  return variance / (mean * mean);
}

void ScopeGate::WeighTrial() {
  if (stream_check_) return;                  // its length was not the gate's stretch length
  const uint32_t compared = checkpoint_ - 1;  // the trial's first checkpoint is not compared
  if (compared == 0) return;
  const double plain_same = ClippedPlainSum(1, checkpoint_);
  if (plain_same <= 0) return;
  const double margin = trial_time_ / plain_same - (1.0 - kRequiredGain);
  // The spread of a whole trial's ratio, were both stretches' checkpoints
  // as uneven as the plain one's: what this stretch length can tell apart.
  // Compared squared: the library does not link the math library.
  const double spread_squared = 2.0 / (kTrialCheckpoints - 1) * PlainCheckpointRelativeVariance();
  if (margin * margin >= spread_squared) return;  // a clear decision
  const double plain_stretch = plain_time_ + Clipped(plain_checkpoints_[0]);
  const double doubled_stretch = 2.0 * plain_stretch * stretch_units_ / pair_units_;
  if (doubled_stretch > static_cast<double>(kLongestUnevenStretchNanoseconds) ||
      stretch_units_ >= kMaximumStretchUnits) {
    return;
  }
  stretch_units_ *= 2;
  longest_stretch_nanoseconds_ = kLongestUnevenStretchNanoseconds;
  unreported_.gate_stretches_lengthened++;
}

bool ScopeGate::TrialLost() {
  WeighTrial();
  recheck_stretches_ = kFirstRecheckStretches;
  if (stream_check_) {
    unreported_.gate_stream_checks_lost++;
    if (++stream_check_losses_ < kStreamCheckLosses) return StartStreamCheck(false);
    stream_check_ = false;
    // Streams are left plain for a while; the loss rests the gate below as
    // a lost trial does.
    streams_left_until_ = clock_() + streams_left_nanoseconds_;
    streams_left_nanoseconds_ =
        std::min(2 * streams_left_nanoseconds_, kMaximumStreamsLeftNanoseconds);
  }
  if (retrying_) return RestIdle();
  if (!second_chance_) {
    // What the trial cost beyond the plain stretch's same checkpoints (both
    // clipped, as compared: a burst that one of them met by chance is not a
    // cost of the scope) buys a rest of at least 1 / kLostTrialShare times
    // as long.
    const double plain_part = ClippedPlainSum(0, checkpoint_);
    double plain_whole = 0;
    for (uint32_t i = 0; i < kTrialCheckpoints; ++i) {
      plain_whole += static_cast<double>(plain_checkpoints_[i]);
    }
    const double extra = trial_first_checkpoint_time_ + trial_time_ - plain_part;
    if (extra > 0 && plain_whole > 0) {
      const double unit_nanoseconds = plain_whole / pair_units_;
      minimum_rest_units_ = extra / kLostTrialShare / unit_nanoseconds;
    }
    return Rest();
  }
  second_chance_ = false;
  return SettleAfterScope();
}

bool ScopeGate::Rest() {
  phase_ = Phase::kResting;
  confirmed_ = false;
  second_chance_ = false;
  const double units =
      std::max(static_cast<double>(rest_stretches_) * stretch_units_, minimum_rest_units_);
  minimum_rest_units_ = 0;
  rest_stretches_ = std::min(2 * rest_stretches_, kMaximumRestStretches);
  return Segment(false, static_cast<uint32_t>(std::min<double>(std::ceil(units), UINT32_MAX)));
}

bool ScopeGate::RestIdle() {
  phase_ = Phase::kIdle;
  opening_ = false;
  confirmed_ = false;
  recheck_stretches_ = kFirstRecheckStretches;
  second_chance_ = false;
  retrying_ = false;
  const uint64_t units = static_cast<uint64_t>(retry_stretches_) * stretch_units_;
  return Segment(false, static_cast<uint32_t>(std::min<uint64_t>(units, UINT32_MAX)));
}

bool ScopeGate::Retry() {
  retry_stretches_ = std::min(2 * retry_stretches_, kMaximumRetryStretches);
  unreported_.gate_retries++;
  retry_(graph_);
  const foreactor_speculation answer = query_(graph_);
  if (answer == FOREACTOR_SPECULATION_AUTOMATIC) retrying_ = true;
  return Answered(answer);
}

bool ScopeGate::Answered(foreactor_speculation answer) {
  if (answer == FOREACTOR_SPECULATION_NONE) return RestIdle();
  if (answer == FOREACTOR_SPECULATION_REQUESTED) {
    phase_ = Phase::kRequested;
    return Segment(true, UINT32_MAX);
  }
  if (phase_ == Phase::kStart) return StartOpening();
  return StartPlain(clock_());
}

bool ScopeGate::WaitedForNothingSince(uint64_t waits_at_start) const {
  return !trials_without_waits_ && waits_() == waits_at_start;
}

bool ScopeGate::Streaming() const {
  if (streaming_ == nullptr) return false;
  if (streams_left_until_ != 0 && clock_() < streams_left_until_) return false;
  return streaming_(graph_);
}

bool ScopeGate::StreamsLeftPlain() const {
  return streaming_ != nullptr && streams_left_until_ != 0 && clock_() < streams_left_until_ &&
         streaming_(graph_);
}

bool ScopeGate::StreamCheckDue() {
  if (stream_checked_) return false;
  const uint64_t now = clock_();
  if (!stream_timing_) {
    // Timed from the stream's second kept stretch on: the first may hold
    // the scope's start.
    stream_timing_ = true;
    stream_start_ = now;
    stream_units_ = 0;
    return false;
  }
  stream_units_ += segment_units_;
  const uint64_t elapsed = now - stream_start_;
  if (elapsed < kStreamCheckAfterNanoseconds) return false;
  const double units = static_cast<double>(stream_units_) *
                       static_cast<double>(kStreamCheckNanoseconds) / static_cast<double>(elapsed);
  const double whole = std::floor(units / kTrialCheckpoints) * kTrialCheckpoints;
  stream_check_units_ =
      static_cast<uint32_t>(std::clamp<double>(whole, kMinimumStretchUnits, kMaximumStretchUnits));
  stream_check_losses_ = 0;
  return true;
}

bool ScopeGate::StartStreamCheck(bool kept_now) {
  unreported_.gate_stream_checks++;
  stream_check_ = true;
  opening_ = false;
  confirmed_ = false;
  second_chance_ = false;
  pair_units_ = stream_check_units_;
  if (!kept_now) {
    // After a lost check the stream runs plain: kept again untimed first,
    // as long as the timed stretch, so that the check times it as it runs
    // kept, not as it runs right after a switch.
    phase_ = Phase::kTrialSettling;
    return Segment(true, pair_units_);
  }
  // The stream's kept time since its timing began counts as kept too.
  kept_run_start_ = stream_start_;
  kept_run_units_ = stream_units_;
  kept_run_nanoseconds_ = 0;
  return StartCheckKept(clock_());
}

bool ScopeGate::StartCheckKept(uint64_t now) {
  // After a lost check, the kept units before this stretch pay the switch
  // back: the stretch alone adds to the stream's kept time.
  if (stream_check_losses_ > 0) kept_run_start_ = now;
  phase_ = Phase::kCheckKept;
  segment_start_ = now;
  checkpoint_ = 0;
  unreported_.gate_trials++;
  return Segment(true, CheckpointUnits());
}

bool ScopeGate::FinishStreamCheck() {
  // Both stretches count in full, unclipped (see the header); the first
  // checkpoint of each is compared with nothing, as a trial's.
  trial_first_checkpoint_time_ = Clipped(kept_checkpoints_[0]);
  double kept_time = 0;
  double plain_time = 0;
  for (uint32_t i = 1; i < kTrialCheckpoints; ++i) {
    kept_time += static_cast<double>(kept_checkpoints_[i]);
    plain_time += static_cast<double>(plain_checkpoints_[i]);
  }
  // The kept side is also timed at the stream's kept pace for as many
  // units: stalls that keeping the stream causes (see the header) count.
  const double kept_pace_time = static_cast<double>(kept_run_nanoseconds_) /
                                static_cast<double>(std::max<uint64_t>(kept_run_units_, 1)) *
                                (pair_units_ - CheckpointUnits());
  trial_time_ = std::max(kept_time, kept_pace_time);
  if (trial_time_ >= plain_time * (1.0 + kStreamCheckAllowedLoss)) return TrialLost();
  unreported_.gate_trials_won++;
  stream_check_ = false;
  stream_checked_ = true;
  streams_left_nanoseconds_ = kFirstStreamsLeftNanoseconds;
  return KeepFor(kFirstRecheckStretches);
}

bool ScopeGate::KeepFor(uint32_t stretches) {
  phase_ = Phase::kKept;
  stream_timing_ = false;  // a stream's time before its check counts while kept
  second_chance_ = false;
  retrying_ = false;
  rest_stretches_ = kInitialRestStretches;
  retry_stretches_ = kFirstRetryStretches;
  kept_stretches_left_ = stretches;
  return Segment(true, stretch_units_);
}

bool ScopeGate::KeepStream() {
  unreported_.gate_streaming_stretches++;
  opening_ = false;
  confirmed_ = false;
  return KeepFor(kFirstRecheckStretches);
}

bool ScopeGate::StartOpening() {
  phase_ = Phase::kKept;
  stream_timing_ = false;
  opening_ = true;
  waits_at_opening_ = waits_();
  opening_start_ = clock_();
  kept_stretches_left_ = kOpeningStretches;
  return Segment(true, stretch_units_);
}

bool ScopeGate::Decide() {
  if (phase_ != Phase::kStart) {
    (open_ ? unreported_.gate_scope_units : unreported_.gate_plain_units) += segment_units_;
    has_statistics_ = true;
  }
  switch (phase_) {
    case Phase::kStart:
    case Phase::kResting:
      return Answered(query_(graph_));
    case Phase::kIdle:
      return Retry();
    case Phase::kRequested:
      return Segment(true, UINT32_MAX);
    case Phase::kPlain: {
      const uint64_t now = clock_();
      const uint64_t checkpoint_nanoseconds = TakeCheckpoint(now);  // counts the checkpoint
      plain_checkpoints_[checkpoint_ - 1] = checkpoint_nanoseconds;
      if (checkpoint_ < kTrialCheckpoints) return Segment(false, CheckpointUnits());
      plain_time_ = ClippedPlainTime();
      if (stream_check_) return FinishStreamCheck();
      const double stretch_time = plain_time_ + Clipped(plain_checkpoints_[0]);
      if (stretch_time < kShortestStretchNanoseconds && stretch_units_ < kMaximumStretchUnits) {
        // Too short to time well: measure a longer stretch first.
        stretch_units_ *= 2;
        return StartPlain(now);
      }
      if (stretch_time > static_cast<double>(longest_stretch_nanoseconds_) &&
          stretch_units_ > kMinimumStretchUnits) {
        stretch_units_ /= 2;  // for the stretches after this pair
      }
      if (query_(graph_) == FOREACTOR_SPECULATION_NONE) return RestIdle();
      if (WaitedForNothingSince(waits_at_plain_start_)) {
        unreported_.gate_stretches_without_waits++;
        return RestIdle();  // nothing for a scope to overlap (see the header)
      }
      if (StreamsLeftPlain()) return Rest();  // no ordinary trial times a stream fairly
      return StartTrial(now);
    }
    case Phase::kTrialSettling:
      return StartCheckKept(clock_());
    case Phase::kCheckKept: {
      const uint64_t now = clock_();
      kept_checkpoints_[checkpoint_] = TakeCheckpoint(now);
      if (checkpoint_ < kTrialCheckpoints) return Segment(true, CheckpointUnits());
      kept_run_nanoseconds_ += now > kept_run_start_ ? now - kept_run_start_ : 0;
      kept_run_units_ += pair_units_;
      // The plain stretch's settling: the kernel's read-ahead ramps up.
      phase_ = Phase::kSettling;
      return Segment(false, std::max(1u, pair_units_ / kSettleFraction));
    }
    case Phase::kTrial: {
      if (!stream_check_ && Streaming()) return KeepStream();
      const uint64_t checkpoint_nanoseconds = TakeCheckpoint(clock_());
      const double winning_time = plain_time_ * (1.0 - kRequiredGain);
      if (checkpoint_ == 1) {
        // The scope's start (pipeline filling, an engine made): paid once
        // per scope kept, so not compared, unless it alone took the time
        // the whole trial had.
        trial_first_checkpoint_time_ = Clipped(checkpoint_nanoseconds);
        if (static_cast<double>(checkpoint_nanoseconds) >= winning_time) return TrialLost();
        return Segment(true, CheckpointUnits());
      }
      trial_time_ += Clipped(checkpoint_nanoseconds);
      if (checkpoint_ < kTrialCheckpoints) {
        // A trial that already took the time in which it must finish cannot
        // win, and one far behind the pace it needs is not worth finishing.
        if (trial_time_ >= winning_time) return TrialLost();
        if (checkpoint_ >= kFirstPaceCheckpoint) {
          const double done = static_cast<double>(checkpoint_ - 1) / (kTrialCheckpoints - 1);
          if (trial_time_ >= winning_time * done * kBehindPace) return TrialLost();
        }
        return Segment(true, CheckpointUnits());
      }
      if (trial_time_ >= winning_time) return TrialLost();
      unreported_.gate_trials_won++;
      WeighTrial();
      second_chance_ = false;
      rest_stretches_ = kInitialRestStretches;  // a win ends a run of losses
      if (!confirmed_) {
        confirmed_ = true;
        return SettleAfterScope();
      }
      const uint32_t kept_stretches = recheck_stretches_;
      recheck_stretches_ = std::min(2 * recheck_stretches_, kMaximumRecheckStretches);
      return KeepFor(kept_stretches);
    }
    case Phase::kKept:
      if (query_(graph_) == FOREACTOR_SPECULATION_NONE) return RestIdle();
      if (Streaming()) {
        unreported_.gate_streaming_stretches++;
        if (StreamCheckDue()) return StartStreamCheck(true);
        return Segment(true, stretch_units_);
      }
      stream_timing_ = false;  // the stream ended: the next one is checked anew
      stream_checked_ = false;
      if (opening_ && kept_stretches_left_ == kOpeningStretches &&
          WaitedForNothingSince(waits_at_opening_)) {
        // The opening's first stretch waited for nothing a scope could overlap.
        unreported_.gate_stretches_without_waits++;
        return RestIdle();
      }
      if (opening_ && clock_() - opening_start_ >= kLongestOpeningNanoseconds)
        kept_stretches_left_ = 1;
      if (--kept_stretches_left_ == 0) {
        // After the opening, pairs as after a rest; after a keep, its re-check.
        second_chance_ = !opening_;
        opening_ = false;
        return SettleAfterScope();
      }
      return Segment(true, stretch_units_);
    case Phase::kSettling:
      return StartPlain(clock_());
  }
  return Segment(false, 1);
}

}  // namespace foreactor
