// pread_walk.h: a graph's coming pread visits, walked from a cursor by
// asking the plugin's callbacks as the peek head does, with no runner and
// no slots: the read-ahead stream's walks (read_ahead_stream.h), and the
// look-ahead of a scope that follows its graph from the plugin's first
// look-ahead on (foreactor_graph_follow_from_look_ahead).
#ifndef FOREACTOR_RUNTIME_PREAD_WALK_H_
#define FOREACTOR_RUNTIME_PREAD_WALK_H_

#include <cstdint>

#include "graph/graph.h"
#include "runtime/cursor.h"
#include "runtime/file_kind_cache.h"

namespace foreactor {

// Bytes [start, end) of a file.
struct ByteRange {
  int64_t start = 0;
  int64_t end = 0;  // exclusive
};

// What one step of a walk found.
enum class PreadStep { kPassed, kRange, kWait, kStop };

// Takes one step of `graph` from `*cursor`, the callbacks seeing
// `scope_state`:
//  - a branch: takes the child its callback chooses (kPassed), or kWait
//    when the choice is not known yet;
//  - a pread: kRange with its descriptor in `*fd` and its bytes in
//    `*range`, or kPassed for one of no bytes or a negative offset (the
//    call fails as the program's); kWait when its arguments are not known
//    yet, kStop when the callback says the call never comes;
//  - an open or a close: kStop (a descriptor number may name another
//    file after it); any other call: kPassed;
//  - the graph's end: kStop.
// The cursor moves only past what it passed or read.
PreadStep StepToNextPread(const Graph& graph, void* scope_state, Cursor* cursor, ByteRange* range,
                          int* fd);

// The first reads of a walk (WalkFirstPreads).
struct FirstPreads {
  int fd = -1;         // the descriptor of the first pread; -1 when none
  unsigned reads = 0;  // preads on `fd` walked
  unsigned jumps = 0;  // of them, those not starting where the one before ended
};

// Walks from `from` until `max_reads` preads on the descriptor of the first
// one (at most `max_steps` steps; preads on other descriptors are stepped
// over), their ranges into `walked` (room for `max_reads`).  Returns false,
// with `*first` partly filled, when the walk waits for a callback's answer
// not known yet; true otherwise (the walk may have ended first).
bool WalkFirstPreads(const Graph& graph, void* scope_state, const Cursor& from, unsigned max_reads,
                     unsigned max_steps, ByteRange* walked, FirstPreads* first);

// The pread visits on one descriptor from a cursor, as WalkPreadRun()
// finds them.
struct PreadRun {
  int fd = -1;                // the descriptor walked
  int64_t start = INT64_MAX;  // the lowest offset read
  int64_t end = 0;            // the highest end
  unsigned reads = 0;
  uint64_t longest_read = 0;
  // Of the first `early_reads` reads (WalkPreadRun's argument), those not
  // starting where the one before ended.
  unsigned early_jumps = 0;
  // No other call was met, and the walk ended at the graph's end.
  bool rest_of_scope = true;
};

// How a walk goes through a loop whose branch has a loop count
// (foreactor_graph_set_loop_count).
enum class CountedLoops {
  kVisitEach,  // every iteration, as any loop
  // Once the walk has `early_reads` reads and met no other call, a loop
  // whose every node but its branch is a pread is taken as alike from one
  // iteration to the next: at its branch, the walk counts the reads of the
  // iterations up to the last one and goes on at the last.  The skipped
  // reads are counted in PreadRun::reads alone (not in its offsets, nor in
  // longest_read), and their callbacks are not asked.
  kSkipBetween,
};

// Walks the graph from `from` over at most `max_reads` pread visits on
// `fd` (on the descriptor of the first pread met when `fd` is negative;
// and 4 x `max_reads` other steps) into `*run`, counting the jumps of the
// first `early_reads`.  True when the walk ended within them (the graph's
// end, an open, a close or a read that never comes) after at least one
// read; false when it waits for arguments not known yet or goes on past
// them.
bool WalkPreadRun(const Graph& graph, void* scope_state, int fd, const Cursor& from,
                  unsigned max_reads, unsigned early_reads, CountedLoops counted_loops,
                  PreadRun* run);

// True when the walk from `from` meets at most `max_reads` preads of `fd`
// (of the first pread's descriptor when `fd` is negative), none longer
// than `max_read_bytes`, then the graph's end, with no other call, and
// that descriptor's reads go through the page cache (not opened with
// O_DIRECT, as `file_kinds` says, asked only when the walk qualifies):
// the page cache and the kernel's read-ahead on the program's descriptor
// serve such a run as well as anything issued early would.  `*run` holds
// what the walk found, with the jumps of its first `early_reads` reads.
// The walk skips within counted loops (CountedLoops::kSkipBetween).
bool RunIsRestOfScope(const Graph& graph, void* scope_state, FileKindCache* file_kinds, int fd,
                      const Cursor& from, unsigned max_reads, unsigned early_reads,
                      uint64_t max_read_bytes, PreadRun* run);

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_PREAD_WALK_H_
