// write_behind.h: starting write-back of a graph's finished output early
// (foreactor_graph_set_write_behind; DESIGN §2 rule 1 and §5).
//
// The program's writes of nodes that declare write-behind tell this class
// which bytes are finished (NoteWrite, once the program has the call's
// result, whether the call ran early or not).  WrittenRuns decides when a
// contiguous range is long enough; this class then hands the engine a
// write-back hint, RequestOperation::kStartWriteBack, which runs
// sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE) off the
// program's thread.  When the scope ends (EndScope) the tails of the runs
// that reached a chunk go too; shorter runs wait for later scopes to
// extend them, or are left to the kernel.  Only regular files opened
// without O_DIRECT (no page cache to write back) and without O_APPEND (the
// offset says nothing about where the bytes went) are hinted.
//
// Why nothing observable changes.  SYNC_FILE_RANGE_WRITE alone only starts
// write-back of the dirty pages of the range that are not under write-back
// yet (filemap_fdatawrite_range_kick, WB_SYNC_NONE, in fs/sync.c); it waits
// for no page and reads no error: only the WAIT flags go through
// file_fdatawait_range(), which advances the file's write-back error cursor
// (file_check_and_advance_wb_err).  So a later fsync by the program still
// reports any write-back error, every call of the program returns what it
// would have returned, and the only trace is data reaching the device
// earlier.  A hint's own result (an error, a cancellation) is counted and
// otherwise ignored.
//
// Hints are fire and forget: the program never waits for one, except
//  - when it closes a descriptor a hint names (BeforeClose): a thread pool
//    worker names the descriptor by its number, which a later open could
//    reuse, so the close waits, as it waits for early requests on it
//    (io_uring takes its own reference on the file at submission and would
//    not need it; one rule for both engines);
//  - never for a slot: while a hint runs, ranges finished meanwhile wait
//    (kMaxRunningHints) and go, merged, at the next finished chunk after it
//    completed, or at the scope's end; a range that finds every slot in use
//    is not hinted (a later fsync writes it as it always would);
//  - in WaitAll(): before the thread's engines rest, when the runner is
//    destroyed (thread exit) and at process exit, so that nothing is left
//    running then.  After fork() the child abandons the parent's hints.
// Completed hints are reaped (their slots freed) when a slot is needed, at
// EndScope() and at BeforeClose(), with one engine Poll() each.
//
// `*thread_hints_in_flight` counts the hints in flight of every WriteBehind
// of the thread: while it is not zero, the thread's close() calls are
// watched even outside scopes (ThreadContext in interception.h).
//
// One per runner (graph and thread); used by the owning thread only.
#ifndef FOREACTOR_RUNTIME_WRITE_BEHIND_H_
#define FOREACTOR_RUNTIME_WRITE_BEHIND_H_

#include <cstdint>

#include "engine/engine.h"
#include "runtime/file_kind_cache.h"
#include "runtime/statistics.h"
#include "runtime/written_runs.h"

namespace foreactor {

class WriteBehind {
 public:
  // Bytes a run of finished writes holds before its write-back is started
  // (DESIGN §5).
  static constexpr uint64_t kChunkBytes = uint64_t{4} << 20;
  // Hints running at once while the program writes: further finished
  // ranges wait, merged when contiguous, until the running one completes
  // (DESIGN §5).  The scope's end starts every waiting range.
  static constexpr int kMaxRunningHints = 1;
  // Hint slots (requests), the most in flight at once.
  static constexpr int kMaxHints = 8;

  // Every pointer outlives this object.  `statistics` receives the
  // write_behind_* counters.  `chunk_bytes`: see kChunkBytes (tests use
  // smaller chunks, ChunkBytesForTests()).
  WriteBehind(Engine* engine, FileKindCache* file_kinds, Statistics* statistics,
              unsigned* thread_hints_in_flight, uint64_t chunk_bytes = kChunkBytes);

  // kChunkBytes, or, for the test suites that drive small files through
  // write-behind, FOREACTOR_TEST_WRITE_BEHIND_CHUNK_BYTES when it holds a
  // number of at least one page.
  static uint64_t ChunkBytesForTests();
  // Waits for every hint in flight, unless abandoned.
  ~WriteBehind();

  WriteBehind(const WriteBehind&) = delete;
  WriteBehind& operator=(const WriteBehind&) = delete;

  // The program's write on `fd` at `offset` (the file position for write
  // and writev) returned `result`.  Errors and empty writes note nothing.
  void NoteWrite(int fd, int64_t offset, int64_t result);

  // The scope ends: hints the unstarted tails of the runs that reached a
  // chunk (the runs go on into the next scope) and reaps completed hints.
  // Waits for nothing.
  void EndScope();

  // The program is about to close `fd`: forgets its run (unstarted bytes
  // are left to the kernel) and what the file kind cache knows of it, and
  // waits for the hints that name it.
  void BeforeClose(int fd);

  // Waits for every hint in flight.
  void WaitAll();

  bool has_hints_in_flight() const { return in_flight_ > 0; }

  // After fork() in the child: never touch the engine again.
  void Abandon() { abandoned_ = true; }

 private:
  // Adds `range` to the waiting ranges (merged with one it continues).
  void Queue(const WrittenRuns::Range& range);
  // Starts waiting ranges, oldest first: while fewer than kMaxRunningHints
  // run (after reaping once), or all of them with `all`.
  void Dispatch(bool all);
  // Hints [range] when a slot is free (after reaping, if none was).
  void Start(const WrittenRuns::Range& range);
  // Frees the slots of completed hints; with `poll`, asks the engine for
  // completions first.
  void Reap(bool poll);
  // Waits for the hint in `slot`, then frees it.
  void WaitFor(int slot);
  // Counts the result of the completed hint in `slot` and frees the slot.
  void Release(int slot);

  Engine* const engine_;
  FileKindCache* const file_kinds_;
  Statistics* const statistics_;
  unsigned* const thread_hints_in_flight_;
  WrittenRuns runs_;
  WrittenRuns::Range waiting_[WrittenRuns::kMaxRuns];  // oldest first
  int waiting_count_ = 0;
  Request hints_[kMaxHints];
  bool busy_[kMaxHints] = {};
  int in_flight_ = 0;
  bool abandoned_ = false;
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_WRITE_BEHIND_H_
