// misprediction_guard.h: when a graph's runner suspends speculation after
// mispredictions, and when it resumes (DESIGN §2 rule 2, §5).
//
// After kMispredictionLimit mispredictions in a row the runner suspends
// speculation (its peek head rests), but its frontier keeps following the
// program through the graph and compares each call with what the graph
// predicts (a shadow prediction).  After a run of correct shadow
// predictions speculation resumes.  A suspension soon after a resumption
// (within twice the run that ended the last one) doubles the run needed
// next time, up to kMaxCorrectRunToResume; a longer good stretch resets it
// to kInitialCorrectRunToResume, so a graph that is right only in
// stretches does not flap.  The suspension outlives scopes: the next scope
// of the graph on the thread starts suspended.
//
// A policy only: the runner does what a decision implies (drain what is
// ahead, count statistics).  One per runner; not thread-safe.
#ifndef FOREACTOR_RUNTIME_MISPREDICTION_GUARD_H_
#define FOREACTOR_RUNTIME_MISPREDICTION_GUARD_H_

#include <algorithm>
#include <cstdint>

namespace foreactor {

class MispredictionGuard {
 public:
  static constexpr unsigned kMispredictionLimit = 4;
  static constexpr unsigned kInitialCorrectRunToResume = 16;
  static constexpr unsigned kMaxCorrectRunToResume = 4096;

  // Speculation is suspended; the frontier still follows the program.
  bool suspended() const { return suspended_; }

  // Correct predictions in a row that end the current or next suspension.
  unsigned correct_run_to_resume() const { return correct_run_to_resume_; }

  // The count of mispredictions in a row starts over: at a scope's start,
  // and when an early result was served (a correct prediction).
  void ResetMispredictionRun() { consecutive_mispredictions_ = 0; }

  // Counts a misprediction.  Returns true when it must suspend speculation:
  // the limit is reached while `speculating` and not yet suspended.  The
  // caller then drains what is ahead and calls Suspend().
  bool MispredictionSuspends(bool speculating) {
    return ++consecutive_mispredictions_ >= kMispredictionLimit && speculating && !suspended_;
  }

  // Suspends speculation, and sets the run of correct predictions that
  // resumes it.
  void Suspend() {
    suspended_ = true;
    correct_predictions_ = 0;
    if (calls_since_resume_ < 2 * static_cast<uint64_t>(correct_run_to_resume_)) {
      correct_run_to_resume_ = std::min(2 * correct_run_to_resume_, kMaxCorrectRunToResume);
    } else {
      correct_run_to_resume_ = kInitialCorrectRunToResume;
    }
  }

  // While suspended: the frontier compared a call with its prediction.
  // Returns true when this completes the run that resumes speculation; the
  // caller then calls Resume().
  bool ShadowPredictionResumes(bool correct) {
    if (!correct) {
      correct_predictions_ = 0;
      return false;
    }
    return ++correct_predictions_ >= correct_run_to_resume_;
  }

  // Ends a suspension (a run of correct predictions, or a retry asked for
  // from outside).
  void Resume() {
    suspended_ = false;
    consecutive_mispredictions_ = 0;
    calls_since_resume_ = 0;
  }

  // One graph call reached the frontier.
  void NoteFrontierCall() { calls_since_resume_++; }

 private:
  unsigned consecutive_mispredictions_ = 0;
  bool suspended_ = false;
  unsigned correct_predictions_ = 0;  // in a row, at the frontier, while suspended
  unsigned correct_run_to_resume_ = kInitialCorrectRunToResume;
  uint64_t calls_since_resume_ = UINT64_MAX / 2;  // since speculation last resumed (never: many)
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_MISPREDICTION_GUARD_H_
