// du_walk_plugin.cc: the foreaction graph of du's directory walk, attached
// to an unmodified du at link time:
//
//   -Wl,--wrap=rpl_fts_read -Wl,--wrap=rpl_fts_close -Wl,--wrap=fstatat
//
// (gnulib names its fts functions rpl_fts_*).  Compiled against coreutils'
// own config.h and gnulib's fts_.h (they compile as C++, with the same
// layout as in C), so it reads the FTS and FTSENT structures exactly as
// du's fts does; it only reads them.
//
// What fts does, for du (FTS_PHYSICAL | FTS_CWDFD | FTS_NOSTAT, deferred
// stats): when it enters a directory it reads every entry into a list
// linked through fts_link, in the order it will return them, without
// stat'ing them.  du then takes them one by one; each one is stat'ed with
// fstatat(fts_cwd_fd, fts_accpath, _, AT_SYMLINK_NOFOLLOW) before du uses
// it (regular files through du's fts_set(FTS_AGAIN) + fts_read, directories
// and unknown types inside fts_read).  A directory among them is descended
// into right after its stat, so its children's stats come before those of
// its later siblings.  Those fstatat calls (pure) can be issued ahead:
//
//   start -> stat_entry (fstatat) --weak--> next_entry? -> stat_entry | end
//
// Visit k of stat_entry is the k-th entry fstatat of the scope.  After each
// fts_read() returns an entry E in a directory, the next stats are those of
// E (when not stat'ed yet) and of E's later siblings, up to and including
// the first one that is (or may be) a directory: they become the expected
// visits, in one ring.  Returns that do not continue the expected sequence
// (after a directory, a post-order visit, an excluded file) start the
// expectations afresh.  A visit with no expectation answers NOT_YET (the
// peek head waits there, and the program's own call runs synchronously).
// The branch always continues: the walk's end is the end of the scope.
//
// One walk is one fts handle, from its first fts_read() to its last; a scope
// covers all of it or, when speculation does not pay, only some stretches of
// it: the runtime's scope gate decides before every fts_read() (asked once
// per stretch of them, foreactor_scope_gate_units).  Not
// predicted (run plain, without a scope): logical walks (-L), walks without
// FTS_CWDFD; and entries of the root level get no expectations.
// Single-threaded use per walk; state is per thread.
//
// Besides the graph, the plugin asks for walk-ahead
// (foreactor_walk_ahead_keep_stats): foreactor's own threads read the
// tree's directories and stat their entries ahead of du, warming the caches
// its calls then find warm, and keep those stats.  Outside a scope, fts's
// stat of the entry it is about to return (fts_cur, by its name in the
// directory fts reads, fts_cwd_fd) is answered from walk-ahead's stat of
// the same entry when walk-ahead read that directory under the status fts
// holds of it (the entry's parent): on a tree walk-ahead has just read,
// three quarters of du's own time would be those calls again.
// FOREACTOR_WALK_AHEAD=0 turns walk-ahead, and so the answers, off.
#include <config.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>

#include "foreactor/foreactor.hpp"
#include "fts_.h"

extern "C" {
FTSENT* __real_rpl_fts_read(FTS* fts);
int __real_rpl_fts_close(FTS* fts);
FTSENT* __wrap_rpl_fts_read(FTS* fts);
int __wrap_rpl_fts_close(FTS* fts);
int __real_fstatat(int fd, const char* path, struct stat* status, int flags);
int __wrap_fstatat(int fd, const char* path, struct stat* status, int flags);
}

namespace {

// fts.c's private marks in fts_statp->st_size of a deferred entry.
constexpr off_t kDeferredNoStatRequired = 1;
constexpr off_t kDeferredStatRequired = 2;

// How many visits beyond the completed ones may be expected at once.
constexpr uint64_t kWindow = 256;

struct ExpectedStat {
  uint64_t visit;
  const FTSENT* entry;  // compared, never read: fts frees entries when it leaves their directory,
  int dirfd;
  char name[NAME_MAX + 1];  // so the name is a copy
};

// Per-thread state of the walk being followed.  Zero-initialised, so the
// hot path runs no thread_local initialiser.
struct WalkState {
  const FTS* fts;
  bool in_scope;
  // The scope gate's last answer holds for this many more fts_reads (the
  // gate is asked once per stretch: a question costs as much as a hot
  // unit's own work in the plugin).  Per thread, not per walk, as the
  // gate's own count is.
  bool gate_open;
  bool gate_measuring;  // the gate measures those fts_reads: directory reads are left out
  // The fts_reads the answer holds for, beyond the one that asked: in
  // quiet_units_left when the answer is neither open nor measuring (the
  // fast path in __wrap_rpl_fts_read takes those of this walk), else in
  // gate_units_left.  At most one of the two is nonzero.
  uint32_t gate_units_left;
  uint32_t quiet_units_left;
  uint64_t completed;     // entry stats completed in the scope: the next visit's number
  uint64_t expected_end;  // visits [completed, expected_end) are expected, in ring[v % kWindow]
  const FTSENT* next_unexpected;  // the next entry of the directory list not yet expected
  ExpectedStat ring[kWindow];
};

// Initial-exec: the plugin is always linked into the program, and its objects
// are compiled -fPIC, where the default model would call __tls_get_addr (and
// make every wrapper save its arguments around that call).
constinit thread_local WalkState walk __attribute__((tls_model("initial-exec"))){};

// Built once and never destroyed: du may exit() from inside the walk (a
// fatal error), and a graph must outlive every scope of it.
const foreactor::Graph<WalkState>& walk_graph = *new foreactor::Graph<WalkState>([] {
  foreactor::GraphBuilder<WalkState> builder("du_stat_entries");
  auto stat_entry = builder.Syscall(
      "stat_entry", FOREACTOR_CALL_FSTATAT,
      [](WalkState& state, const foreactor::Visit& visit, foreactor_call& call) {
        const uint64_t number = visit.iteration(0);
        if (number < state.completed || number >= state.expected_end) return FOREACTOR_NOT_YET;
        const ExpectedStat& stat = state.ring[number % kWindow];
        call = foreactor::Fstatat(stat.dirfd, stat.name, AT_SYMLINK_NOFOLLOW);
        return FOREACTOR_READY;
      },
      [](WalkState& state, const foreactor::Visit& visit, int64_t) {
        state.completed = visit.iteration(0) + 1;
      });
  auto next_entry =
      builder.Branch("next_entry", [](WalkState&, const foreactor::Visit&) { return 0; });
  builder.start().Then(stat_entry).Then(next_entry, foreactor::kWeak);
  next_entry.Children({stat_entry, builder.end()});
  return builder.Build();
}());

// Asked once, at load: settings never change.
const bool foreactor_on = foreactor_enabled() != 0;
// Walk-ahead's word that turns nonzero once it keeps a stat
// (foreactor_walk_ahead_stats_kept_flag); null until the plugin's
// initialisers have run.
const int* const walk_ahead_stats_kept = foreactor_walk_ahead_stats_kept_flag();

bool Predictable(const FTS* fts) {
  const int options = fts->fts_options;
  return (options & FTS_CWDFD) && (options & FTS_PHYSICAL) &&
         !(options & (FTS_NOCHDIR | FTS_LOGICAL));
}

bool Deferred(const FTSENT* entry) {
  const off_t mark = entry->fts_statp->st_size;
  return entry->fts_info == FTS_NSOK &&
         (mark == kDeferredStatRequired || mark == kDeferredNoStatRequired);
}

bool ExpectedAs(const FTSENT* entry, uint64_t visit) {
  const ExpectedStat& slot = walk.ring[visit % kWindow];
  return slot.visit == visit && slot.entry == entry && visit < walk.expected_end;
}

void LeaveScope() {
  if (!walk.in_scope) return;
  foreactor_scope_exit(walk_graph.handle());
  walk.in_scope = false;
}

// After fts_read returned ENTRY in the scope: expects the stats to come, as
// far as the list and the window go.
__attribute__((noinline)) void ExpectUpcomingStats(const FTS* fts, const FTSENT* entry) {
  const uint64_t completed = walk.completed;
  if (!ExpectedAs(entry, completed) && !(completed > 0 && ExpectedAs(entry, completed - 1))) {
    // Not the expected sequence: start afresh (a new scope always does).
    walk.expected_end = completed;
    walk.next_unexpected = nullptr;
    if (entry->fts_level > FTS_ROOTLEVEL) {
      if (Deferred(entry)) {
        walk.next_unexpected = entry;
      } else if (entry->fts_info != FTS_D && entry->fts_info != FTS_DNR &&
                 entry->fts_info != FTS_ERR) {
        walk.next_unexpected = entry->fts_link;
      }
    }
  }
  // Two visits of margin keep the slots of the last completed visit and the next one intact.
  uint64_t visit = std::max(walk.expected_end, completed);
  while (walk.next_unexpected != nullptr && visit + 2 < completed + kWindow) {
    const FTSENT* next = walk.next_unexpected;
    const size_t length = std::strlen(next->fts_accpath);
    walk.next_unexpected = nullptr;
    // fts would skip it or has stat'ed it already: stop guessing.
    if (next->fts_instr == FTS_SKIP || !Deferred(next) || length > NAME_MAX) break;
    ExpectedStat& slot = walk.ring[visit % kWindow];
    slot.visit = visit;
    slot.entry = next;
    slot.dirfd = fts->fts_cwd_fd;
    std::memcpy(slot.name, next->fts_accpath, length + 1);
    walk.expected_end = ++visit;
    // A directory (or possibly one) is descended into right after its stat.
    const mode_t type = next->fts_statp->st_mode & S_IFMT;
    if (type != S_IFDIR && type != 0) walk.next_unexpected = next->fts_link;
  }
}

// True when the next fts_read() of `fts` reads a directory: the entry it
// returned last (fts_cur: fts_open sets an FTS_INIT one, the end of the walk
// none) is one that fts enters (preorder).
bool DirectoryReadNext(const FTS* fts) {
  const FTSENT* last = fts->fts_cur;
  return last != nullptr && last->fts_info == FTS_D;
}

// Every fts_read() that the fast path in __wrap_rpl_fts_read does not take.
__attribute__((noinline)) FTSENT* ReadEntry(FTS* fts) {
  if (walk.fts != fts) {  // another walk: the previous one's scope is over
    LeaveScope();
    walk.fts = fts;
    // The gate's answer still holds for its count, but this walk takes the
    // path below until the gate answers for it.
    walk.gate_units_left += walk.quiet_units_left;
    walk.quiet_units_left = 0;
    // The graph covers the entries' stats; the directory reads between them
    // (most of a cold walk) it cannot issue early.  Walk-ahead reads the
    // tree ahead of du on threads of its own, before fts opens the root,
    // and keeps its stats for __wrap_fstatat.
    static const bool walk_ahead [[maybe_unused]] = foreactor_walk_ahead_keep_stats() != 0;
  }
  if (!Predictable(fts)) return __real_rpl_fts_read(fts);
  if (walk.gate_units_left > 0) {
    --walk.gate_units_left;
  } else {
    uint32_t units = 1;
    walk.gate_open = walk_graph.ScopeGate(&units);
    walk.gate_measuring = walk_graph.ScopeGateMeasuring();
    if (!walk.gate_open && !walk.gate_measuring) {
      walk.quiet_units_left = units - 1;
    } else {
      walk.gate_units_left = units - 1;
    }
  }
  const bool open = walk.gate_open;
  if (open && !walk.in_scope) {
    walk.in_scope = true;
    walk.completed = 0;
    walk.expected_end = 0;
    foreactor_scope_enter(walk_graph.handle(), &walk);
  } else if (!open) {
    LeaveScope();
  }
  FTSENT* entry;
  if (walk.gate_measuring && DirectoryReadNext(fts)) {
    // This fts_read reads the directory it returned last: the graph issues
    // none of its calls early, so its time (cold, most of a walk's) stays
    // out of the scope gate's comparison of stretches and the automatic depth's windows.
    const auto start = std::chrono::steady_clock::now();
    entry = __real_rpl_fts_read(fts);
    const std::chrono::nanoseconds spent = std::chrono::steady_clock::now() - start;
    foreactor_scope_gate_exclude(walk_graph.handle(), spent.count());
  } else {
    entry = __real_rpl_fts_read(fts);
  }
  if (walk.in_scope) {
    const int saved_errno = errno;
    if (entry == nullptr)
      LeaveScope();
    else
      ExpectUpcomingStats(fts, entry);
    errno = saved_errno;
  }
  return entry;
}

}  // namespace

FTSENT* __wrap_rpl_fts_read(FTS* fts) {
  if (!foreactor_on) return __real_rpl_fts_read(fts);  // du as it is
  // The fast path, most fts_read()s of a hot walk: the gate's last answer
  // (no scope, so none is open, and no measurement, so no directory read's
  // time to leave out) still holds, for a walk ReadEntry() found
  // predictable.  It keeps the state ReadEntry() would keep on that path,
  // and has nothing to do after the read, so it ends in a tail call.
  WalkState& state = walk;
  if (state.fts == fts && state.quiet_units_left != 0) [[likely]] {
    --state.quiet_units_left;
    return __real_rpl_fts_read(fts);
  }
  return ReadEntry(fts);
}

int __wrap_rpl_fts_close(FTS* fts) {
  if (walk.fts == fts) {
    LeaveScope();
    walk.fts = nullptr;
  }
  return __real_rpl_fts_close(fts);
}

namespace {

// fts's stat of the entry it is about to return, in the directory it reads
// (fts.c's fts_stat for FTS_PHYSICAL: fstatat(fts_cwd_fd, fts_accpath, _,
// AT_SYMLINK_NOFOLLOW) with p == fts_cur): answered from walk-ahead's stat
// of that entry when it has one (see the top).  In a scope the graph's
// early stats serve du's calls, and the runtime must see every one of them.
// Every other call is made as du made it.
__attribute__((noinline)) int StatOrAnswer(int fd, const char* path, struct stat* status,
                                           int flags) {
  const FTS* fts = walk.fts;
  if (fts != nullptr && !walk.in_scope && flags == AT_SYMLINK_NOFOLLOW && fd == fts->fts_cwd_fd) {
    const FTSENT* entry = fts->fts_cur;
    if (entry != nullptr && path == entry->fts_accpath && entry->fts_level > FTS_ROOTLEVEL &&
        entry->fts_parent->fts_info == FTS_D &&
        foreactor_walk_ahead_stat(entry->fts_parent->fts_statp, path, status) != 0) {
      return 0;
    }
  }
  return __real_fstatat(fd, path, status, flags);
}

}  // namespace

int __wrap_fstatat(int fd, const char* path, struct stat* status, int flags) {
  // Nothing can be answered before walk-ahead keeps a stat: never on a
  // cached tree, whose stats then cost two loads more than du's own (the
  // rest is out of line, so that this path needs no stack frame).
  const int* kept = walk_ahead_stats_kept;
  if (kept == nullptr || __atomic_load_n(kept, __ATOMIC_RELAXED) == 0) [[likely]] {
    return __real_fstatat(fd, path, status, flags);
  }
  return StatOrAnswer(fd, path, status, flags);
}
