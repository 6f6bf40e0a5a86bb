// issue_rules.h: whether a visit ahead of the frontier is certain, and so
// whether a call with side effects may be issued early, and whether a call
// can run early at all (DESIGN §2 rules 1 and 3).
//
// Pure calls may be issued on a guess.  A call with side effects
// (EarlyIssue::kWhenCertain) is issued early only when certain; otherwise it
// is held back: passed like a call that never runs early, so that the
// program makes it at the frontier, and the pure calls after it may still
// be issued on a guess.  Certain means:
//  - no weak edge lies between the frontier and the call (one the frontier
//    crossed counts until the program makes its next graph call, since the
//    program may still return there);
//  - no visit between them rests on a guess the program has not confirmed:
//    every call but those with side effects issued as certain, and but
//    link heads (whose link asserts the pair).  A guess that is wrong about
//    the descriptor leaves the frontier waiting while the program goes on,
//    so no side effect is issued past one;
//  - the scope has not lost the program: a misprediction, or a call with
//    side effects the graph did not expect, ends following the graph to
//    the end of the scope (the frontier may then be out of step with the
//    program: loops repeat the same arguments, so even an exact match later
//    does not prove it is not);
// and, for a write at the file position (WriteAtPositionSettled), that the
// position is settled where the plugin says, with nothing ahead on its
// descriptor.
//
// Whatever the certainty, a call runs early only where it can run exactly
// as the program's would (Issuable): the engine runs it; reads and writes
// only on regular files (reading a pipe, socket or terminal consumes its
// data), never at an offset in place of the position of a file opened for
// appending, and direct I/O only as aligned as the kernel demands (never
// turned into a success by running it on foreactor's own aligned buffer);
// getdents64 only on a directory.
//
// The runner tells this class where its two cursors go (edges crossed,
// visits passed and reached, drains) and asks Uncertain() before each
// visit it passes.  One per runner; used by the owning thread only.
#ifndef FOREACTOR_RUNTIME_ISSUE_RULES_H_
#define FOREACTOR_RUNTIME_ISSUE_RULES_H_

#include <cstdint>

#include "base/call_types.h"
#include "engine/engine.h"
#include "foreactor/foreactor.h"
#include "runtime/file_kind_cache.h"
#include "runtime/pending_accesses.h"

namespace foreactor {

class IssueRules {
 public:
  // `engine` (null when there is none: nothing is asked then) and
  // `file_kinds` outlive this object.
  IssueRules(const Engine* engine, FileKindCache* file_kinds)
      : engine_(engine), file_kinds_(file_kinds) {}

  // A new scope; `start_edge_weak`: the edge from the start node is weak.
  void StartScope(bool start_edge_weak) {
    frontier_weak_edges_ = peek_weak_edges_ = 0;
    unconfirmed_weak_edge_ = start_edge_weak;
    guesses_ahead_ = 0;
    following_graph_ = true;
  }

  // The peek head crossed an edge.
  void PeekCrossed(bool weak) {
    if (weak) peek_weak_edges_++;
  }
  // The frontier crossed a weak edge.
  void FrontierCrossedWeakEdge() {
    frontier_weak_edges_++;
    unconfirmed_weak_edge_ = true;
  }
  // The peek head was at the frontier and moves on with it; also when
  // everything ahead was drained (with ForgetGuessesAhead).
  void PeekAtFrontier() { peek_weak_edges_ = frontier_weak_edges_; }
  // The program made a call of the graph: it went on past any weak edge
  // behind the frontier.
  void ProgramMadeGraphCall() { unconfirmed_weak_edge_ = false; }
  // A misprediction, or a call with side effects the graph did not expect:
  // nothing is certain until the scope ends.
  void LoseTheProgram() { following_graph_ = false; }

  // True when a call the peek head is at now is not certain.
  bool Uncertain() const {
    return peek_weak_edges_ > frontier_weak_edges_ || unconfirmed_weak_edge_ ||
           guesses_ahead_ > 0 || !following_graph_;
  }
  // True when a call whose EarlyIssueFor() is `early` has side effects and
  // may not be issued early because it is `uncertain`: it is passed like a
  // call that never runs early.
  static bool HeldBack(EarlyIssue early, bool uncertain) {
    return early == EarlyIssue::kWhenCertain && uncertain;
  }

  // The peek head passed a visit of `call`, `held_back` or not.  Returns
  // true when the visit may run otherwise than predicted, so that nothing
  // after it is certain until the frontier reaches it (GuessReached): a
  // guess, a call that never runs early, or a side effect held back, unless
  // it heads a link (its tail runs only after it, by the link).
  bool PassedRestsOnGuess(const foreactor_call& call, bool held_back) {
    const bool guess =
        (EarlyIssueFor(call) != EarlyIssue::kWhenCertain || held_back) && !call.link_next;
    if (guess) guesses_ahead_++;
    return guess;
  }
  // The frontier reached a visit for which PassedRestsOnGuess was true.
  void GuessReached() {
    if (guesses_ahead_ > 0) guesses_ahead_--;
  }
  // Everything ahead was drained.
  void ForgetGuessesAhead() { guesses_ahead_ = 0; }

  // True unless `call` writes at the file position and that position is
  // not settled at the offset the plugin predicts: the position of its
  // descriptor is call.offset now and no visit ahead uses the descriptor
  // (a write ahead would move the position by what it returns, which a
  // failed or short write makes other than its length).
  static bool WriteAtPositionSettled(const foreactor_call& call, const PendingAccesses& ahead);

  // True when `call` can run early exactly as the program's call would (see
  // above).  A write is issued only from an aligned buffer of the
  // program's; a read's buffer is checked when the program makes it.
  bool Issuable(const foreactor_call& call);

  // True unless `call` is on a file opened with O_DIRECT and its offset or
  // lengths (and, with `check_buffer`, its buffer addresses) are not as
  // aligned as the kernel demands.  For a vector form given without
  // iovecs, only its total length can be checked, and only without
  // `check_buffer`.
  bool DirectIoAllowed(const foreactor_call& call, bool check_buffer);

 private:
  const Engine* const engine_;
  FileKindCache* const file_kinds_;
  uint64_t frontier_weak_edges_ = 0;  // weak edges the frontier has crossed
  uint64_t peek_weak_edges_ = 0;      // weak edges the peek head has crossed
  // The frontier crossed a weak edge and the program has not made a graph
  // call since.
  bool unconfirmed_weak_edge_ = false;
  // Visits in [frontier, peek) that rest on a guess the program has not
  // confirmed yet.
  unsigned guesses_ahead_ = 0;
  // False from losing the program to the end of the scope.
  bool following_graph_ = true;
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_ISSUE_RULES_H_
