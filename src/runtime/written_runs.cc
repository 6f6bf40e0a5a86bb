#include "runtime/written_runs.h"

namespace foreactor {

WrittenRuns::WrittenRuns(uint64_t chunk_bytes)
    : chunk_bytes_(chunk_bytes < static_cast<uint64_t>(kPageBytes)
                       ? kPageBytes
                       : static_cast<int64_t>(chunk_bytes)) {}

void WrittenRuns::TakeUnstartedTail(Run* run, Range ready[], int* count) {
  if (run->started == run->begin || run->done <= run->started) return;
  ready[(*count)++] = Range{run->fd, run->started, run->done};
  run->started = run->done;
}

int WrittenRuns::Note(int fd, FileIdentity file, int64_t offset, uint64_t length,
                      Range ready[kMaxReadyPerNote]) {
  int count = 0;
  if (fd < 0 || offset < 0 || length == 0 || length > static_cast<uint64_t>(INT64_MAX - offset)) {
    return 0;
  }
  const int64_t end = offset + static_cast<int64_t>(length);
  Run* run = nullptr;
  for (Run& candidate : runs_) {
    if (candidate.fd == fd) run = &candidate;
  }
  if (run == nullptr) {
    for (Run& candidate : runs_) {
      if (candidate.fd < 0) {
        run = &candidate;
        break;
      }
    }
    if (run == nullptr) {
      // Every slot holds a run: the oldest slot in turn makes room.
      run = &runs_[next_victim_];
      next_victim_ = (next_victim_ + 1) % kMaxRuns;
      TakeUnstartedTail(run, ready, &count);
    }
    *run = Run{fd, file, offset, offset, end};
  } else if (!(run->file == file)) {
    // The number names another file now (closed and reused while nobody
    // watched): the old run's bytes cannot be named through it any more.
    *run = Run{fd, file, offset, offset, end};
  } else if (offset == run->done) {
    run->done = end;
  } else {
    // The program writes elsewhere (a jump, a rewrite): the bytes behind
    // it are finished as far as this run knows.
    TakeUnstartedTail(run, ready, &count);
    *run = Run{fd, file, offset, offset, end};
  }
  if (run->done - run->started >= chunk_bytes_) {
    // Cut at a page boundary: the page the next write continues is left
    // for the next chunk.
    const int64_t cut = run->done / kPageBytes * kPageBytes;
    if (cut > run->started) {
      ready[count++] = Range{fd, run->started, cut};
      run->started = cut;
    }
  }
  return count;
}

bool WrittenRuns::TakeTail(Range* tail) {
  for (Run& run : runs_) {
    if (run.fd < 0) continue;
    int count = 0;
    TakeUnstartedTail(&run, tail, &count);
    if (count > 0) return true;
  }
  return false;
}

void WrittenRuns::Forget(int fd) {
  for (Run& run : runs_) {
    if (run.fd == fd) run.fd = -1;
  }
}

}  // namespace foreactor
