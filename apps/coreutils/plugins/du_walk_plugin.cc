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
#include <climits>
#include <cstdint>
#include <cstring>
#include <ctime>

#include "du_walk_plugin.h"
#include "foreactor/foreactor.hpp"

namespace {

struct ExpectedStat {
  int dirfd;
  int flags;
  char name[NAME_MAX + 1];
};

// Expected visits kept at once: at least the attachment's window (256).
constexpr uint64_t kExpectedCapacity = 256;

// Per-thread state of one walk: expected visits [first_expected,
// end_expected), visit v in ring[v % kExpectedCapacity].  Fixed-size and
// zero-initialised, so the hot path neither allocates nor runs a
// thread_local initialiser.
struct WalkState {
  bool active;  // a scope is open (du_walk_before_read)
  uint64_t completed_visits;
  uint64_t first_expected;
  uint64_t end_expected;
  ExpectedStat ring[kExpectedCapacity];

  void DropCompleted() {
    if (end_expected < completed_visits) end_expected = completed_visits;
    if (first_expected < completed_visits) first_expected = completed_visits;
  }
  void Clear() {
    completed_visits = 0;
    first_expected = 0;
    end_expected = 0;
  }
};

constinit thread_local WalkState walk{};

// Built once and never destroyed: du and cp may exit() from inside the
// loop (a fatal error), and a graph must outlive every scope of it.
const foreactor::Graph<WalkState>& walk_graph = *new foreactor::Graph<WalkState>([] {
  foreactor::GraphBuilder<WalkState> builder("du_stat_entries");
  auto stat_entry = builder.Syscall(
      "stat_entry", FOREACTOR_CALL_FSTATAT,
      [](WalkState& state, const foreactor::Visit& visit, foreactor_call& call) {
        const uint64_t number = visit.iteration(0);
        if (number < state.first_expected || number >= state.end_expected) {
          return FOREACTOR_NOT_YET;
        }
        const ExpectedStat& stat = state.ring[number % kExpectedCapacity];
        call = foreactor::Fstatat(stat.dirfd, stat.name, stat.flags);
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

extern "C" int du_walk_before_read(void) {
  // The scope gate answers 0 while foreactor is off: without a scope no
  // visit completes, and the attachment records no expectations.
  const bool open = walk_graph.ScopeGate();
  if (open && !walk.active) {
    walk.active = true;
    walk.Clear();
    foreactor_scope_enter(walk_graph.handle(), &walk);
  } else if (!open && walk.active) {
    du_walk_end();
  }
  return walk.active ? 1 : 0;
}

extern "C" uint64_t du_walk_clock(void) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

extern "C" void du_walk_exclude_time(uint64_t nanoseconds) {
  foreactor_scope_gate_exclude(walk_graph.handle(), nanoseconds);
}

extern "C" void du_walk_end(void) {
  if (!walk.active) return;
  foreactor_scope_exit(walk_graph.handle());
  walk.active = false;
  walk.Clear();
}

extern "C" int du_walk_active(void) { return walk.active ? 1 : 0; }

extern "C" uint64_t du_walk_completed_visits(void) { return walk.completed_visits; }

extern "C" void du_walk_forget_from(uint64_t first_visit) {
  walk.DropCompleted();
  if (first_visit < walk.first_expected) first_visit = walk.first_expected;
  if (first_visit < walk.end_expected) walk.end_expected = first_visit;
}

extern "C" int du_walk_expect(uint64_t visit, int dirfd, const char* name, int flags) {
  walk.DropCompleted();
  if (visit != walk.end_expected || visit - walk.first_expected >= kExpectedCapacity) return -1;
  const size_t length = std::strlen(name);
  if (length > NAME_MAX) return -1;
  ExpectedStat& stat = walk.ring[visit % kExpectedCapacity];
  stat.dirfd = dirfd;
  stat.flags = flags;
  std::memcpy(stat.name, name, length + 1);
  walk.end_expected++;
  return 0;
}

extern "C" uint64_t du_walk_expected_until(void) {
  walk.DropCompleted();
  return walk.end_expected;
}
