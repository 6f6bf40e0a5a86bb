// pread_walk.cc: walks of a graph's coming preads (pread_walk.h).
#include "runtime/pread_walk.h"

#include <algorithm>

#include "base/call_types.h"

namespace foreactor {

PreadStep StepToNextPread(const Graph& graph, void* scope_state, Cursor* cursor, ByteRange* range,
                          int* fd) {
  const Node& node = graph.node(cursor->node);
  uint64_t iteration[FOREACTOR_MAX_LOOPS];
  if (node.kind == NodeKind::kBranch) {
    const foreactor_visit visit = VisitAt(graph, *cursor, scope_state, iteration);
    const int choice = node.choice(&visit);
    if (choice < 0 || choice >= static_cast<int>(node.children.size())) return PreadStep::kWait;
    cursor->Take(node.children[choice]);
    return PreadStep::kPassed;
  }
  if (node.kind != NodeKind::kSyscall) return PreadStep::kStop;  // the end
  // After an open or a close, a descriptor number may name another file.
  if (IsOpen(node.call_type) || node.call_type == FOREACTOR_CALL_CLOSE) return PreadStep::kStop;
  if (node.call_type != FOREACTOR_CALL_PREAD) {
    cursor->Take(node.next);
    return PreadStep::kPassed;
  }
  const foreactor_visit visit = VisitAt(graph, *cursor, scope_state, iteration);
  foreactor_call call{};
  call.type = FOREACTOR_CALL_PREAD;
  const foreactor_readiness readiness = node.arguments(&visit, &call);
  if (readiness == FOREACTOR_NEVER) return PreadStep::kStop;
  if (readiness != FOREACTOR_READY) return PreadStep::kWait;
  cursor->Take(node.next);
  if (call.offset < 0 || call.length == 0 ||
      call.length > static_cast<size_t>(INT64_MAX - call.offset)) {
    return PreadStep::kPassed;
  }
  *fd = call.fd;
  range->start = call.offset;
  range->end = call.offset + static_cast<int64_t>(call.length);
  return PreadStep::kRange;
}

bool WalkFirstPreads(const Graph& graph, void* scope_state, const Cursor& from, unsigned max_reads,
                     unsigned max_steps, ByteRange* walked, FirstPreads* first) {
  *first = FirstPreads{};
  Cursor cursor = from;
  int64_t previous_end = -1;
  for (unsigned steps = 0; steps < max_steps && first->reads < max_reads; ++steps) {
    ByteRange range;
    int fd = -1;
    const PreadStep step = StepToNextPread(graph, scope_state, &cursor, &range, &fd);
    if (step == PreadStep::kStop) break;
    if (step == PreadStep::kWait) return false;
    if (step != PreadStep::kRange || (first->fd >= 0 && fd != first->fd)) continue;
    first->fd = fd;
    walked[first->reads] = range;
    if (first->reads > 0 && range.start != previous_end) first->jumps++;
    previous_end = range.end;
    first->reads++;
  }
  return true;
}

namespace {

// At the branch of a counted loop whose body is preads alone (cursor at
// the branch, the iteration's reads walked and counted in `*run`): when
// the count says the loop goes on past the next iteration, counts the
// reads of the iterations before its last into `*run` and moves `*cursor`
// to the last iteration's first node.  Returns false when those reads
// take the run to `max_reads` or past it (the walk ends there); true
// otherwise, moved or not.
bool SkipToLastIteration(const Graph& graph, void* scope_state, unsigned max_reads, Cursor* cursor,
                         PreadRun* run) {
  const Node& branch = graph.node(cursor->node);
  const Loop& loop = graph.loop(branch.counted_loop);
  if (loop.preads_per_iteration == 0) return true;
  uint64_t iteration[FOREACTOR_MAX_LOOPS];
  const foreactor_visit visit = VisitAt(graph, *cursor, scope_state, iteration);
  const int64_t count = branch.loop_count(&visit);
  const uint64_t current = cursor->iteration[branch.counted_loop];
  if (count < 0 || static_cast<uint64_t>(count) <= current + 2) return true;
  const uint64_t skipped = static_cast<uint64_t>(count) - current - 2;
  if (skipped >= max_reads ||
      run->reads + skipped * loop.preads_per_iteration >= uint64_t{max_reads}) {
    run->reads = max_reads;  // as a walk of every iteration would stop
    return false;
  }
  run->reads += static_cast<unsigned>(skipped * loop.preads_per_iteration);
  cursor->Take(branch.children[loop.child]);
  cursor->iteration[branch.counted_loop] = static_cast<uint64_t>(count) - 1;
  return true;
}

}  // namespace

bool WalkPreadRun(const Graph& graph, void* scope_state, int fd, const Cursor& from,
                  unsigned max_reads, unsigned early_reads, CountedLoops counted_loops,
                  PreadRun* run) {
  Cursor cursor = from;
  *run = PreadRun{};
  run->fd = fd;
  int64_t previous_end = -1;
  for (unsigned passed = 0; run->reads < max_reads && passed < 4 * max_reads;) {
    ByteRange range;
    int walked_fd = -1;
    if (counted_loops == CountedLoops::kSkipBetween && run->reads >= early_reads &&
        run->rest_of_scope && graph.node(cursor.node).counted_loop >= 0 &&
        !SkipToLastIteration(graph, scope_state, max_reads, &cursor, run)) {
      return false;
    }
    const bool at_call = graph.node(cursor.node).kind == NodeKind::kSyscall;
    const PreadStep step = StepToNextPread(graph, scope_state, &cursor, &range, &walked_fd);
    if (step == PreadStep::kWait) return false;  // not known yet: it may be longer
    if (step == PreadStep::kStop) {
      // (A walk stops at a call only for an open, a close or a read that
      // never comes; otherwise at the graph's end.)
      run->rest_of_scope = run->rest_of_scope && graph.node(cursor.node).kind != NodeKind::kSyscall;
      return run->reads > 0;
    }
    if (step == PreadStep::kRange && run->fd < 0) run->fd = walked_fd;
    if (step == PreadStep::kPassed || walked_fd != run->fd) {
      if (at_call) run->rest_of_scope = false;
      ++passed;
      continue;
    }
    if (run->reads > 0 && run->reads < early_reads && range.start != previous_end) {
      run->early_jumps++;
    }
    previous_end = range.end;
    run->reads++;
    run->start = std::min(run->start, range.start);
    run->end = std::max(run->end, range.end);
    run->longest_read = std::max(run->longest_read, static_cast<uint64_t>(range.end - range.start));
  }
  return false;
}

bool RunIsRestOfScope(const Graph& graph, void* scope_state, FileKindCache* file_kinds, int fd,
                      const Cursor& from, unsigned max_reads, unsigned early_reads,
                      uint64_t max_read_bytes, PreadRun* run) {
  if (!WalkPreadRun(graph, scope_state, fd, from, max_reads, early_reads,
                    CountedLoops::kSkipBetween, run) ||
      !run->rest_of_scope || run->longest_read > max_read_bytes) {
    return false;
  }
  // O_DIRECT reads never find the page cache; any other pread goes
  // through it and the kernel's read-ahead (a regular file's, a block
  // device's).
  return !file_kinds->OpenedForDirectIo(run->fd);
}

}  // namespace foreactor
