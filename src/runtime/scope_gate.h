// scope_gate.h: whether a graph's scopes pay on this thread, decided by
// timing the program's own work with and without them
// (foreactor_scope_gate()).
//
// The automatic depth can walk down to depth 0, but a scope at depth 0
// still costs: every call in it is matched against the graph, and the
// plugin may have planned arguments for it.  With the page cache hot an
// early call only adds a hand-off to the engine.  What no scope at all
// costs is seen only by running the same work without one; that is what
// the gate does, for any plugin.
//
// A plugin divides the work a scope covers into units of its choice (one
// LevelDB Get, one fts_read() of du's walk) and asks the gate before each
// unit whether the unit runs with a scope.  The gate times stretches of
// units, from one call of BeforeUnit() to the one a stretch later, minus
// the time the plugin excludes (work the graph cannot speed up):
//  - The opening: the graph's first units on a thread run with a scope,
//    untimed, as if it were kept: kOpeningStretches stretches, ending
//    early at the first stretch boundary after kLongestOpeningNanoseconds.
//    Where data is cold, a program's first units are those a scope speeds
//    up most (a cold LevelDB's first Gets read several blocks each from the
//    device, its later ones one or two), and a plain stretch there is the
//    costliest one to time: with the gate starting plain, LevelDB Gets at
//    10% memory were 4% slower on average than with every Get in a scope.
//    Where scopes do not pay, the opening is what the program pays once,
//    in its first stretches.  When the thread waited for nothing in the
//    opening's first stretch (every call served from memory), the gate
//    rests idle at once, as after a plain stretch without waits (below).
//    After the opening, pairs run as after a rest.
//  - Checkpoints: a stretch of N units is timed in kTrialCheckpoints
//    checkpoints of N / kTrialCheckpoints units each.  A stretch's time is
//    the sum of its checkpoints' times, each counted at most
//    kOutlierFactor x the median checkpoint of the pair's plain stretch.
//    Units with a heavy tail (a LevelDB Get that waits behind a
//    compaction's reads, twenty times as long as most) would otherwise decide a
//    comparison by how many tail units each stretch happened to hold.
//  - Stretch length: N starts at kInitialStretchUnits, doubles while a
//    plain stretch took less than kShortestStretchNanoseconds (so clock
//    reads and preemption are small against it) and halves while one took
//    more than kLongestStretchNanoseconds, within [kMinimumStretchUnits,
//    kMaximumStretchUnits].
//  - Uneven units: a trial whose ratio to its plain stretch (over the
//    checkpoints it ran) lies within a whole trial's spread of the required
//    gain was decided by chance.  The spread is estimated from the plain
//    stretch's compared checkpoints as sqrt(2 / (kTrialCheckpoints - 1)) x
//    their coefficient of variation.  Such a trial doubles N for
//    the stretches after it, while a plain stretch of 2N would take at
//    most kLongestUnevenStretchNanoseconds, which from then on is the
//    length above which N is halved.  LevelDB Gets at 10% memory take
//    10 us (blocks cached) to several hundred (two device reads): in
//    64-Get stretches, where scopes gained 13%, the spread was about a
//    quarter and trials won two in three, so the gate ran up to 40% of the
//    Gets plain; in stretches of about 100 ms trials won four in five or
//    more.  A clear decision (du cold: twice as fast; a scope that costs
//    much) keeps N, so the first pairs there stay short.
//  - A pair: a plain stretch of N units, then a trial stretch of the same N
//    units with a scope.  Their first checkpoints are not compared: the
//    trial's pays for the scope's start (its pipeline filling, on a cold
//    walk of du twice as long as the units after it; an engine made after
//    a rest), which a kept scope pays once.  The trial wins when its other
//    checkpoints took less than (1 - kRequiredGain) of the plain stretch's
//    same checkpoints.  Its first checkpoint alone loses it only when it
//    took that whole time.  A plain stretch that
//    would follow units with a scope (a confirming pair, a re-check) is
//    preceded by N / kSettleFraction plain units that are not timed: the
//    first units after a scope find work its early calls have done (du:
//    the inodes of the next few hundred entries read in), which would make
//    the plain stretch look faster than plain is.
//  - Two wins in a row keep the scope open (one may be noise: the plain
//    stretch preempted).  A kept scope is re-checked by one more pair
//    kFirstRecheckStretches stretches later; each re-check it passes
//    doubles the stretches to the next, up to kMaximumRecheckStretches.
//    A re-check runs 1 + 1/kSettleFraction stretches plain, the price of
//    seeing a scope that stops paying: 8% of a paying scope's units at 16
//    stretches (LevelDB Gets at 10% memory: 7% of them plain, each about
//    a quarter slower), 2% at 64.  When a re-check's trial loses,
//    a second pair is run, and the scope is kept when that one wins: as
//    one win may be noise, so may one loss (a trial that met a burst of
//    slow calls).
//  - A trial is given up at the checkpoint where it took the winning time,
//    or where it is kBehindPace times behind the pace it needs, so a losing
//    trial costs a fraction of a stretch.  The pace is judged from
//    checkpoint kFirstPaceCheckpoint on: a few checkpoints' units average
//    out bursts (a block of inodes arriving at once).
//  - A loss rests the gate: kInitialRestStretches stretches without a
//    scope, doubling with each loss in a row up to kMaximumRestStretches;
//    then another pair.  A rest also lasts at least what the lost trial
//    took beyond its plain stretch's same checkpoints (all of them, the
//    first too, each counted as in the comparison), divided by
//    kLostTrialShare: where a scope costs much (a thread pool's hand-off
//    for each stat of a hot du walk, 2x a unit's time, and the engine made
//    at its start), losing trials cost the program at most about that
//    share of its time, also while rests are still short.
//  - While kept, and before each pair, the gate asks the runtime what a
//    scope would do: when it would issue nothing early (depth settled at 0,
//    speculation suspended after mispredictions) the gate goes idle: it
//    rests for kFirstRetryStretches stretches, then asks the runtime to
//    retry (lift the suspension, start the depth over), since only scopes
//    would change that state, and runs a pair.  Each idle rest that ends
//    in nothing to issue again, or in a pair that loses (a trial, or the
//    pair confirming a win), doubles the next idle rest up to
//    kMaximumRetryStretches: a program that stays hot pays a pair ever
//    more rarely, one whose data turns cold later is sped up after a
//    bounded wait.  A kept scope resets the idle rest to its first length.
//  - A plain stretch in which the thread never waited (no voluntary context
//    switch: every call it made was served from memory, at once) leaves a
//    scope nothing to overlap, so no trial follows it: the gate rests idle
//    as when the runtime would issue nothing.  On a hot du walk a trial
//    and its rest cost 3%: the program pays plain stretches only, and one
//    getrusage(2) per stretch.  A thread that waits for anything else
//    (a full pipe, a lock) still gets its trials, and so does every plain
//    stretch of a graph whose scopes move work to another core
//    (TrialsWithoutWaits(): a copy loop's write pipeline runs its writes
//    while the program reads, waits or not; a hot 1 GiB cp ran 0.76x of
//    stock's time with it, and the rule had kept it from every trial).
//  - When the runtime says the configuration asks for scopes (an exact depth,
//    check mode), every unit runs with a scope.
//  - Streams past the page cache (KeepWhileStreaming()): while the graph's
//    scopes read a mostly cold file past the page cache (direct_reads.h),
//    a kept scope stays kept, its re-check and the opening's end waiting
//    until they stop, and a trial is kept at its next checkpoint.  An
//    ordinary pair cannot time such a stream fairly: each switch to plain
//    hands the program a cold file, whose read-ahead starts over, and each
//    switch back reads the kernel's last read-ahead window again past the
//    cache (a cold 1 GiB cp ran 1.04x of stock's time with every stream
//    timed by ordinary pairs, 0.87x with every chunk in a scope).  Each
//    stretch kept so counts in gate_streaming_stretches.
//  - A stream check: a stream kept for kStreamCheckAfterNanoseconds is
//    timed once by a pair of long stretches, each of the units the kept
//    stream read in kStreamCheckNanoseconds: the kept one first, as the
//    stream runs, then, after a quarter as many units not timed (the
//    kernel's read-ahead ramping up), the plain one.  Timed second, right
//    after a plain stretch, a kept stretch ran faster than the stream ran
//    kept (a cold 1 GiB cp on the development VM: 42 us a chunk in the
//    checks, 61 us over the copy; the checks won while the copies ran
//    1.05-1.7x of stock's time).  Both stretches count in full, none of
//    their checkpoints clipped as a trial's are: a plain stream waits for
//    each read-ahead window of the kernel, fast between (a cold 1 GiB cp
//    on that VM: checkpoints of 28 chunks in 1.1 ms, two of each stretch
//    9-13 ms), and those waits are its pace (clipped as outliers, plain
//    looked 1.8x faster than it ran, and the checks of streams that
//    copied 1.5x faster kept than plain lost).  The kept side counts as
//    the slower of its stretch and the stream's own pace over all its kept
//    time since its timing began, for as many units: keeping a stream can
//    cause stalls of its own every few tens of milliseconds, which the
//    stretch alone may miss (on that VM the host's steal when both vCPUs
//    ran: stalls of 25-42 ms every 30-90 ms of a kept copy, none in
//    stock's; the checks won, the copies ran 1.15-1.22x of stock's time).
//    A second check, after a lost one,
//    keeps the stream for as many units untimed before its kept stretch
//    (they pay the switch back), which adds to that kept time.  A win
//    keeps the stream to its end, unchecked again; the next stream is
//    checked anew.  A loss is followed at once by a second check (one may
//    be noise); kStreamCheckLosses losses in a row rest the gate as a lost
//    trial does, and streams are then left plain, with no ordinary pair,
//    for kFirstStreamsLeftNanoseconds, doubling with each stream that
//    loses its checks up to kMaximumStreamsLeftNanoseconds, back to the
//    first length after a check won; the next stream after that is kept
//    and checked again.  Timed by ordinary pairs instead, a stream that
//    lost its checks won its trials on the reads the kept stretch issued
//    ahead in its first checkpoint, which is not compared (a cold 1 GiB
//    cp on the development VM: trials at 0.3-0.5x of plain's time, the
//    copy at 1.5x of stock's).  Unlike a trial, which must win by
//    kRequiredGain, a check leaves the stream only when its kept side was
//    at least kStreamCheckAllowedLoss slower than its plain stretch:
//    leaving a stream that pays costs far more than keeping one that costs
//    a little (a cold 2 GiB cp on the development VM left plain after
//    lost checks took 1.5x as long as one kept to its end), and stretches
//    of a few tens of milliseconds differ by several percent from run to
//    run.  With the second vCPU busy with another program,
//    kept streams' checkpoints were 10-40% slower than plain ones and a
//    cold 1 GiB cp ran 1.21x of stock's time with streams never checked,
//    1.11x with the check (kept 64 ms before it).  Where streams pay, a check
//    costs its plain stretch's extra time and the settling, one to two
//    percent of a 1 GiB copy, more of a shorter one (a quarter to two fifths
//    of a 256 MiB copy's chunks ran plain with the check at 64 ms: so it
//    waits for 128 ms, and streams read in less are never checked);
//    there a first check lost by chance is followed by a second.  Checks
//    and their losses count in gate_stream_checks and
//    gate_stream_checks_lost.
//
// Cost per unit outside decisions: a decrement and a branch (none with
// BeforeUnits(), which hands the count of units to the caller).  The clock
// is read only at checkpoints of timed stretches and at the ends of others.
// Not thread-safe: one gate per graph and thread.
#ifndef FOREACTOR_RUNTIME_SCOPE_GATE_H_
#define FOREACTOR_RUNTIME_SCOPE_GATE_H_

#include <algorithm>
#include <cstdint>

#include "foreactor/foreactor.h"
#include "runtime/statistics.h"

namespace foreactor {

class ScopeGate {
 public:
  // Monotonic time in nanoseconds; replaceable in tests.
  using Clock = uint64_t (*)();
  // What a scope of `graph` entered now would do (foreactor_scope_speculation
  // outside tests).
  using SpeculationQuery = foreactor_speculation (*)(const foreactor_graph* graph);
  // Asks the runtime to retry speculation in the next scopes of `graph`
  // (GraphRunner::RetrySpeculation outside tests).
  using RetryRequest = void (*)(const foreactor_graph* graph);
  // Times the calling thread has waited so far (voluntary context switches,
  // getrusage(RUSAGE_THREAD) outside tests); replaceable in tests.
  using WaitCount = uint64_t (*)();

  static constexpr uint32_t kTrialCheckpoints = 16;
  static constexpr uint32_t kInitialStretchUnits = 64;
  // A stretch is timed at every 1/kTrialCheckpoints of it: at least one unit each.
  static constexpr uint32_t kMinimumStretchUnits = kTrialCheckpoints;
  static constexpr uint32_t kMaximumStretchUnits = 1u << 16;
  static constexpr uint64_t kShortestStretchNanoseconds = 4'000'000;
  static constexpr uint64_t kLongestStretchNanoseconds = 32'000'000;
  static constexpr uint64_t kLongestUnevenStretchNanoseconds = 4 * kLongestStretchNanoseconds;
  static constexpr double kRequiredGain = 0.05;  // a trial must be 5% faster than plain
  static constexpr double kBehindPace = 1.5;
  static constexpr double kOutlierFactor = 3.0;
  static constexpr uint32_t kFirstPaceCheckpoint = 4;
  static constexpr uint32_t kSettleFraction = 4;
  static constexpr uint32_t kInitialRestStretches = 4;
  static constexpr uint32_t kMaximumRestStretches = 64;
  static constexpr double kLostTrialShare = 0.02;  // lost trials' extra time, at most this share
  static constexpr uint32_t kOpeningStretches = 16;
  static constexpr uint64_t kLongestOpeningNanoseconds = 16 * kLongestStretchNanoseconds;
  static constexpr uint32_t kFirstRecheckStretches = 16;
  static constexpr uint32_t kMaximumRecheckStretches = 64;
  static constexpr uint32_t kFirstRetryStretches = 64;
  static constexpr uint32_t kMaximumRetryStretches = 4096;
  static constexpr uint64_t kStreamCheckAfterNanoseconds = 128'000'000;
  static constexpr uint64_t kStreamCheckNanoseconds = 24'000'000;
  static constexpr uint32_t kStreamCheckLosses = 2;
  static constexpr double kStreamCheckAllowedLoss = 0.10;  // kept 10% slower: the check loses
  static constexpr uint64_t kFirstStreamsLeftNanoseconds = 4'000'000'000;
  static constexpr uint64_t kMaximumStreamsLeftNanoseconds = 64'000'000'000;

  // `query` is asked with `graph` only at decisions, `retry` only at the end
  // of an idle rest.  `clock` null means CLOCK_MONOTONIC; `waits` null means
  // the calling thread's voluntary context switches.
  ScopeGate(const foreactor_graph* graph, SpeculationQuery query, RetryRequest retry,
            Clock clock = nullptr, WaitCount waits = nullptr);

  // Called before each unit.  Returns true when the unit should run with a
  // scope of the graph, false when it should run plain (no scope, nothing
  // planned).
  bool BeforeUnit() {
    if (countdown_ > 0) {
      --countdown_;
      return open_;
    }
    return Decide();
  }

  // BeforeUnit() for this unit and the ones after it: returns whether they
  // run with a scope and sets `*units` to how many units that answer holds
  // for, this one included (at least 1).  The caller must not ask again
  // before those units ran, and must ask again before the next one:
  // the gate then decides exactly where it would have with BeforeUnit().
  bool BeforeUnits(uint32_t* units) {
    const bool open = BeforeUnit();
    *units = countdown_ + 1;
    countdown_ = 0;
    return open;
  }

  // The graph's scopes move work off the program's thread (a write
  // pipeline): plain stretches in which the thread never waited get their
  // trials too.
  void TrialsWithoutWaits() { trials_without_waits_ = true; }

  // True while the graph's scopes on this thread stream a file past the
  // page cache (GraphRunner::streaming_past_cache() outside tests).
  using StreamQuery = bool (*)(const foreactor_graph* graph);
  // Asks `query` at the gate's decisions while a scope is kept or tried:
  // scopes that stream are kept (see the top of this file).
  void KeepWhileStreaming(StreamQuery query) { streaming_ = query; }

  // The last `nanoseconds` do not count in the stretch being timed.
  void ExcludeTime(uint64_t nanoseconds) { segment_start_ += nanoseconds; }

  // True when the units of the last answer are measured: a timed plain
  // stretch, or units with a scope (the automatic depth measures them).
  // Excluded time changes nothing otherwise.
  bool measuring() const { return open_ || phase_ == Phase::kPlain; }

  // True when counters have changed since the last TakeStatistics() (only
  // after a decision, not on every unit).
  bool has_statistics() const { return has_statistics_; }
  // True while the gate rests after a trial that lost (or while the graph
  // would not speculate): its scopes stay shut for a while.
  bool resting() const { return phase_ == Phase::kResting || phase_ == Phase::kIdle; }
  // Adds the gate_* counters gathered since the last call into `into`.
  void TakeStatistics(Statistics* into);

 private:
  enum class Phase : unsigned char {
    kStart,
    kRequested,
    kResting,
    kIdle,
    kSettling,
    kPlain,
    kTrialSettling,  // a stream check's kept stretch, untimed (after a lost check)
    kTrial,
    kCheckKept,  // a stream check's kept stretch, timed before its plain one
    kKept
  };

  // The slow path of BeforeUnit(): the segment of units that just ended is
  // counted and the next one chosen.
  bool Decide();
  // Starts a segment of `units` units (this one included) with or without
  // a scope; returns `open`.
  bool Segment(bool open, uint32_t units);
  bool StartPlain(uint64_t now);
  // After units with a scope, 1/kSettleFraction of a stretch runs plain
  // and untimed before a timed plain stretch (see the header).
  bool SettleAfterScope();
  bool Rest();
  // Rests idle (see the header) for retry_stretches_ stretches.
  bool RestIdle();
  // The end of an idle rest: the runtime retries and a pair starts, or the
  // gate rests idle again.
  bool Retry();
  // The opening (see the header): the graph's first units on this thread
  // run with a scope, as kept.
  bool StartOpening();
  // True when KeepWhileStreaming()'s query says the scopes stream, unless
  // stream checks were lost (see the header).
  bool Streaming() const;
  // True when the query says the scopes stream and stream checks were lost
  // less than streams_left_nanoseconds_ ago: no trial is made.
  bool StreamsLeftPlain() const;
  // At a decision of a kept scope that streams: counts the stream's units
  // and time; true when its check is due (see the header).
  bool StreamCheckDue();
  // Starts a stream check of stream_check_units_ units: its kept stretch,
  // at once when the stream is kept now (`kept_now`), else after as many
  // kept units untimed.
  bool StartStreamCheck(bool kept_now);
  // Starts the timed kept stretch of a stream check at `now`.
  bool StartCheckKept(uint64_t now);
  // At the end of a stream check's plain stretch: compares its kept one.
  bool FinishStreamCheck();
  // Starts the trial stretch of the pair in progress at `now`.
  bool StartTrial(uint64_t now);
  // Keeps the scope for `stretches` stretches, then re-checks it: after a
  // trial that won (confirmed), or one that streams.
  bool KeepFor(uint32_t stretches);
  // Keeps the scope of a trial that streams, re-checked as after a first
  // kept win once the stream stops (two wins needed to stay kept).
  bool KeepStream();
  // True when the thread has not waited since waits_() was
  // `waits_at_start`, unless TrialsWithoutWaits(): the stretch since then
  // left a scope nothing to overlap (see the header).
  bool WaitedForNothingSince(uint64_t waits_at_start) const;
  // What the runtime answered at kStart or at the end of a rest.
  bool Answered(foreactor_speculation answer);
  // The trial in progress lost: a second pair when the trial was a kept
  // scope's first re-check, a rest otherwise.
  bool TrialLost();
  // At the end of a trial, won or lost: lengthens the stretches after it
  // when the trial's ratio to its plain stretch lay within the comparison's
  // spread of the required gain (see the header).
  void WeighTrial();
  // The variance of the pair's plain checkpoints that are compared, each
  // clipped as compared, over their mean squared (the squared coefficient
  // of variation).  Needs plain_time_ (ClippedPlainTime()).
  double PlainCheckpointRelativeVariance() const;
  // The sum of the plain stretch's checkpoints [first, end), each clipped.
  double ClippedPlainSum(uint32_t first, uint32_t end) const;
  // The units between two checkpoints of the pair in progress.
  uint32_t CheckpointUnits() const { return pair_units_ / kTrialCheckpoints; }
  // Ends the checkpoint in progress at `now`; returns its time.
  uint64_t TakeCheckpoint(uint64_t now);
  // A checkpoint's time as the comparison counts it: at most clip_nanoseconds_.
  double Clipped(uint64_t nanoseconds) const {
    return std::min(static_cast<double>(nanoseconds), clip_nanoseconds_);
  }
  // Sets clip_nanoseconds_ from the plain stretch's checkpoints and returns
  // their clipped sum.
  double ClippedPlainTime();

  const foreactor_graph* const graph_;
  const SpeculationQuery query_;
  const RetryRequest retry_;
  const Clock clock_;
  const WaitCount waits_;

  Phase phase_ = Phase::kStart;
  bool open_ = false;
  bool confirmed_ = false;  // a trial won since the last rest: one more win keeps the scope
  bool second_chance_ =
      false;               // the pair in progress re-checks a kept scope: a loss gets one more pair
  bool retrying_ = false;  // the pairs in progress follow a retry: a loss rests idle again
  bool has_statistics_ = false;
  uint32_t countdown_ = 0;      // units left before the next decision
  uint32_t segment_units_ = 0;  // units of the segment in progress
  uint32_t stretch_units_ = kInitialStretchUnits;
  // Stretches longer than this are halved; raised by WeighTrial().
  uint64_t longest_stretch_nanoseconds_ = kLongestStretchNanoseconds;
  uint32_t pair_units_ =
      0;  // units of the pair's stretches (stretch_units_ may change after its plain one)
  uint32_t rest_stretches_ = kInitialRestStretches;  // length of the next rest
  uint32_t retry_stretches_ = kFirstRetryStretches;  // length of the next idle rest
  uint32_t kept_stretches_left_ = 0;
  // Stretches from the next keep to its re-check: doubles with each pair
  // won, back to the first length after a loss or a rest.
  uint32_t recheck_stretches_ = kFirstRecheckStretches;
  uint32_t checkpoint_ = 0;            // checkpoints of the stretch in progress passed
  uint64_t segment_start_ = 0;         // start of the checkpoint in progress
  bool trials_without_waits_ = false;  // TrialsWithoutWaits()
  StreamQuery streaming_ = nullptr;    // KeepWhileStreaming()
  // The stream in progress is being timed for its check: since the kept
  // stretch after the one that started the keep (KeepFor, StartOpening).
  bool stream_timing_ = false;
  uint64_t stream_start_ = 0;        // clock_() when that timing began
  uint64_t stream_units_ = 0;        // units the stream kept since then
  bool stream_checked_ = false;      // the stream in progress won its check: kept to its end
  bool stream_check_ = false;        // the pair in progress is a stream check
  uint32_t stream_check_units_ = 0;  // the units of each of its stretches
  // A stream's kept time that its checks count (see the header): the units
  // and nanoseconds of the kept run the first check's kept stretch ends and
  // of each later check's kept stretch, added at the stretch's end; the
  // run or stretch in progress began at kept_run_start_.
  uint64_t kept_run_start_ = 0;
  uint64_t kept_run_units_ = 0;
  uint64_t kept_run_nanoseconds_ = 0;
  uint32_t stream_check_losses_ = 0;  // stream checks lost in a row
  // After kStreamCheckLosses lost checks, streams are left plain until
  // clock_() reaches this (0: never were).
  uint64_t streams_left_until_ = 0;
  // How long the next such time lasts: doubles with each stream that loses
  // its checks, back to the first length after a check won.
  uint64_t streams_left_nanoseconds_ = kFirstStreamsLeftNanoseconds;
  uint64_t waits_at_plain_start_ = 0;  // waits_() when the plain stretch in progress began
  uint64_t waits_at_opening_ = 0;      // waits_() when the opening began
  uint64_t opening_start_ = 0;         // clock_() when the opening began
  bool opening_ = false;               // the scope kept is the opening's (see the header)
  uint64_t plain_checkpoints_[kTrialCheckpoints] = {};  // the pair's plain stretch, per checkpoint
  uint64_t kept_checkpoints_[kTrialCheckpoints] = {};   // a stream check's kept stretch, likewise
  double clip_nanoseconds_ = 0;  // kOutlierFactor x the median of plain_checkpoints_
  double plain_time_ = 0;        // the plain stretch's clipped time
  double trial_time_ = 0;        // the trial's clipped time so far, first checkpoint left out
  double trial_first_checkpoint_time_ = 0;  // the trial's first checkpoint, clipped
  double minimum_rest_units_ = 0;           // set by a costly lost trial for the next Rest()

  Statistics unreported_;  // gate_* counters only
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_SCOPE_GATE_H_
