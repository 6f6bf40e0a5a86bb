// du_walk_plugin.cc: the foreaction graph of du's directory walk.
//
// fts (gnulib, FTS_DEFER_STAT) reads a whole directory first and then, each
// time fts_read() hands the next entry to du, stats that entry with
// fstatat(directory fd, name, AT_SYMLINK_NOFOLLOW).  Once a directory is
// read, the names of the entries still to come are known, so those fstatat
// calls (pure) can be issued ahead:
//
//   start -> stat_entry (fstatat) --weak--> next_entry? -> stat_entry | end
//
// Visit k of stat_entry is the k-th entry fstatat of the walk.  Its
// arguments come from the expectations du_walk_attach.c records; a visit
// with no expectation yet answers NOT_YET (the peek head waits there, and
// the program's own call runs synchronously).  The branch always continues:
// the walk's end is the end of the scope, not a node visit.
#include <cstdint>
#include <deque>
#include <new>
#include <string>

#include "du_walk_plugin.h"
#include "foreactor/foreactor.hpp"

namespace {

struct ExpectedStat {
  int dirfd;
  int flags;
  std::string name;
};

// Per-thread state of one walk.  `expected[i]` is visit `first_expected + i`.
struct WalkState {
  bool active = false;
  uint64_t completed_visits = 0;
  uint64_t first_expected = 0;
  std::deque<ExpectedStat> expected;

  void DropCompleted() {
    while (first_expected < completed_visits && !expected.empty()) {
      expected.pop_front();
      first_expected++;
    }
    if (expected.empty()) first_expected = completed_visits;
  }
};

thread_local WalkState walk;

// Built once and never destroyed: du and cp may exit() from inside the
// loop (a fatal error), and a graph must outlive every scope of it.
const foreactor::Graph<WalkState>& walk_graph = *new foreactor::Graph<WalkState>([] {
  foreactor::GraphBuilder<WalkState> builder("du_stat_entries");
  auto stat_entry = builder.Syscall(
      "stat_entry", FOREACTOR_CALL_FSTATAT,
      [](WalkState& state, const foreactor::Visit& visit, foreactor_call& call) {
        const uint64_t number = visit.iteration(0);
        if (number < state.first_expected || number - state.first_expected >= state.expected.size()) {
          return FOREACTOR_NOT_YET;
        }
        const ExpectedStat& stat = state.expected[number - state.first_expected];
        call = foreactor::Fstatat(stat.dirfd, stat.name.c_str(), stat.flags);
        return FOREACTOR_READY;
      },
      [](WalkState& state, const foreactor::Visit& visit, int64_t) {
        state.completed_visits = visit.iteration(0) + 1;
      });
  auto next_entry = builder.Branch("next_entry", [](WalkState&, const foreactor::Visit&) { return 0; });
  builder.start().Then(stat_entry).Then(next_entry, foreactor::kWeak);
  next_entry.Children({stat_entry, builder.end()});
  return builder.Build();
}());

}  // namespace

extern "C" void du_walk_begin(void) {
  // With foreactor off the scope would only be recorded: no visit would
  // ever complete, and the attachment would keep re-recording the same
  // expectations for nothing.  No scope, then: du runs as if unlinked.
  if (walk.active || walk_graph.handle() == nullptr || !foreactor_enabled()) return;
  walk.active = true;
  walk.completed_visits = 0;
  walk.first_expected = 0;
  walk.expected.clear();
  foreactor_scope_enter(walk_graph.handle(), &walk);
}

extern "C" void du_walk_end(void) {
  if (!walk.active) return;
  foreactor_scope_exit(walk_graph.handle());
  walk.active = false;
  walk.expected.clear();
}

extern "C" int du_walk_active(void) { return walk.active ? 1 : 0; }

extern "C" uint64_t du_walk_completed_visits(void) { return walk.completed_visits; }

extern "C" void du_walk_forget_from(uint64_t first_visit) {
  walk.DropCompleted();
  if (first_visit < walk.first_expected) first_visit = walk.first_expected;
  const uint64_t keep = first_visit - walk.first_expected;
  if (keep < walk.expected.size()) walk.expected.resize(keep);
}

extern "C" int du_walk_expect(uint64_t visit, int dirfd, const char* name, int flags) {
  walk.DropCompleted();
  if (visit != walk.first_expected + walk.expected.size()) return -1;
  try {
    walk.expected.push_back(ExpectedStat{dirfd, flags, std::string(name)});
  } catch (const std::bad_alloc&) {
    return -1;
  }
  return 0;
}

extern "C" uint64_t du_walk_expected_until(void) {
  walk.DropCompleted();
  return walk.first_expected + walk.expected.size();
}
