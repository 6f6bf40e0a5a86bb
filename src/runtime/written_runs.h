// written_runs.h: which bytes the program has finished writing, as runs of
// contiguous bytes per descriptor, and when a run is long enough to start
// its write-back (the decision half of write-behind, write_behind.h).
//
// A run is the bytes [begin, done) of one descriptor that the program's
// writes completed one after the other, each starting where the previous
// one ended; [begin, started) of it has been handed out to be written back
// already.  Note() extends the run of a write's descriptor, or, when the
// write starts anywhere else, hands out the unstarted rest of the old run
// and starts a new one there.  A run hands out its unstarted part once it
// holds at least the chunk size, cut at a page boundary so that a page the
// next write completes is not written back twice; what is left goes at
// EndScope().  Pure bookkeeping: no system call, no allocation; used by the
// owning thread only.
#ifndef FOREACTOR_RUNTIME_WRITTEN_RUNS_H_
#define FOREACTOR_RUNTIME_WRITTEN_RUNS_H_

#include <cstdint>

namespace foreactor {

class WrittenRuns {
 public:
  // Bytes of one descriptor whose write-back may start now.
  struct Range {
    int fd = -1;
    int64_t begin = 0;
    int64_t end = 0;  // exclusive; end > begin
  };

  // Runs tracked at once: descriptors written in one scope.  A write to a
  // further descriptor hands out the rest of the run it replaces.
  static constexpr int kMaxRuns = 4;
  // Most ranges one Note() hands out: the rest of the run it ends or
  // replaces, and a chunk of the run it extends or starts.
  static constexpr int kMaxReadyPerNote = 2;
  // Page size the cut of a chunk is aligned to.
  static constexpr int64_t kPageBytes = 4096;

  // `chunk_bytes`: a run hands out its unstarted part once it holds this
  // many bytes (at least one page).
  explicit WrittenRuns(uint64_t chunk_bytes);

  // The program's write of `fd` at `offset` completed `length` bytes
  // (length > 0, offset >= 0).  Stores the ranges to start now in
  // ready[0 .. returned count).
  int Note(int fd, int64_t offset, uint64_t length, Range ready[kMaxReadyPerNote]);

  // Hands out the unstarted part of one run and forgets the run; false when
  // no run with an unstarted part is left (every run is forgotten then).
  // Called until false when the scope ends.
  bool TakeRest(Range* rest);

  // `fd` is being closed: its run is forgotten, unstarted part included.
  void Forget(int fd);

 private:
  struct Run {
    int fd = -1;  // -1: slot free
    int64_t started = 0;
    int64_t done = 0;
  };

  // Hands out [started, done) of `run` when non-empty, into ready[*count].
  static void TakeUnstarted(Run* run, Range ready[], int* count);

  const int64_t chunk_bytes_;
  Run runs_[kMaxRuns];
  int next_victim_ = 0;
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_WRITTEN_RUNS_H_
