// written_runs.h: which bytes the program has finished writing, as runs of
// contiguous bytes per file, and when a run is long enough to start its
// write-back (the decision half of write-behind, write_behind.h).
//
// A run is the bytes [begin, done) of one file, written through one
// descriptor, that the program's writes completed one after the other,
// each starting where the previous one ended; [begin, started) of it has
// been handed out to be written back already.  Note() extends the run of
// a write's descriptor, or, when the write starts anywhere else, ends the
// old run and starts a new one there.  A run hands out its unstarted part
// once that holds at least the chunk size, cut at a page boundary so that
// a page the next write completes is not written back twice.
//
// Only streams are hinted: a run that never reached the chunk size hands
// out nothing, ever; a run that did hands out its unstarted tail when it
// ends (a write elsewhere, a further descriptor) and at each scope's end
// (TakeTails).  Small or scattered writes stay with the kernel's own
// write-back: starting it early for a few pages would gain nothing and
// would cut the file's delayed allocation into more, smaller extents.
//
// Runs outlive scopes: a program that writes a stream a batch per call
// (one scope each) makes one run.  A descriptor number can name another
// file in a later scope, so a run also holds its file's identity (device
// and inode); a write through the same number to another file starts a
// new run and hands out nothing of the old one.
//
// Pure bookkeeping: no system call, no allocation; used by the owning
// thread only.
#ifndef FOREACTOR_RUNTIME_WRITTEN_RUNS_H_
#define FOREACTOR_RUNTIME_WRITTEN_RUNS_H_

#include <sys/types.h>

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

  // The file a descriptor names.
  struct FileIdentity {
    dev_t device = 0;
    ino_t inode = 0;
    bool operator==(const FileIdentity&) const = default;
  };

  // Runs tracked at once.  A write to a further descriptor replaces the
  // oldest run and hands out its tail.
  static constexpr int kMaxRuns = 4;
  // Most ranges one Note() hands out: the tail of the run it ends or
  // replaces, and a chunk of the run it extends or starts.
  static constexpr int kMaxReadyPerNote = 2;
  // Page size the cut of a chunk is aligned to.
  static constexpr int64_t kPageBytes = 4096;

  // `chunk_bytes`: a run hands out its unstarted part once it holds this
  // many bytes (at least one page).
  explicit WrittenRuns(uint64_t chunk_bytes);

  // The program's write of `fd`, which names `file`, at `offset` completed
  // `length` bytes (length > 0, offset >= 0).  Stores the ranges to start
  // now in ready[0 .. returned count).
  int Note(int fd, FileIdentity file, int64_t offset, uint64_t length,
           Range ready[kMaxReadyPerNote]);

  // Hands out the unstarted tail of one run that reached the chunk size;
  // the run goes on.  False when no such tail is left.  Called until false
  // when a scope ends.
  bool TakeTail(Range* tail);

  // `fd` is being closed: its run is forgotten, unstarted part included.
  void Forget(int fd);

 private:
  struct Run {
    int fd = -1;  // -1: slot free
    FileIdentity file;
    int64_t begin = 0;
    int64_t started = 0;  // started > begin: the run reached the chunk size
    int64_t done = 0;
  };

  // Moves [started, done) of `run` into ready[*count] when it is non-empty
  // and the run reached the chunk size.
  static void TakeUnstartedTail(Run* run, Range ready[], int* count);

  const int64_t chunk_bytes_;
  Run runs_[kMaxRuns];
  int next_victim_ = 0;
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_WRITTEN_RUNS_H_
