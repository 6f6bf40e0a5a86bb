// path_read_ahead.h: read-ahead hints for files the program has not opened,
// carried out by a thread of foreactor's own with a descriptor table of its
// own (foreactor_read_ahead_file(), include/foreactor/foreactor.h).
//
// A hint names a file by path and a byte range of it.  The thread opens the
// file, asks the kernel to read the range (readahead(2)) and closes it.  It
// does so in a descriptor table of its own (close_range(2) with
// CLOSE_RANGE_UNSHARE, as cache_fill.h's thread), because an open and close
// in the program's table would be seen: the descriptor would take the
// lowest free number for the while (another thread's open would get the
// next one), and closing a descriptor of a file releases every POSIX record
// lock the process holds on that file.  The program's thread only checks
// the path and queues the hint; opening a cold file and the kernel's
// reading of its block map happen on the other thread.
//
// One thread per process, started by the first hint (again in a forked
// child, whose hints still waiting in the parent are dropped), with every
// signal blocked (quiet_thread.h).  Its state is never destroyed: the thread
// may still wait on it while the process exits.
//
// Hints for data that is already cached.  Before its readahead(2) the
// thread asks the page cache (cachestat(2)) whether the whole range is
// there already.  While the last kNeedlessInARow hints it carried out all
// found so, callers leave their hints out (Needless()), all but one in
// kProbeEvery, whose answer starts hints again once a range is found
// missing; a forked child's hints are judged afresh by its own thread.  A
// program whose files are all cached (a LevelDB database held in memory,
// whose table opens the plugin hints) then pays nothing per hint, where a
// stat, a hand-over and the thread's open, readahead and close beside it
// made the Gets that open a table 1.2-1.4x as slow at the 99th percentile;
// where the ranges are cold, each hint is carried out.
#ifndef FOREACTOR_RUNTIME_PATH_READ_AHEAD_H_
#define FOREACTOR_RUNTIME_PATH_READ_AHEAD_H_

#include <sys/types.h>

#include <cstdint>

namespace foreactor {

class PathReadAhead {
 public:
  // Hints that may wait for the thread at once; a hint beyond them waits
  // for the oldest to be taken, at most a bounded time (Queue()).
  static constexpr int kQueueEntries = 64;
  static constexpr uint32_t kNeedlessInARow = 16;
  static constexpr uint32_t kProbeEvery = 16;
  static constexpr size_t kStackBytes = 64 * 1024;

  // Queues a hint: the thread reads [offset, offset + length) of the
  // regular file at `path` into the page cache, when the file it opens
  // there is still the one on `device` with `inode` (the caller's stat of
  // it).  A relative `path` is resolved against the working directory when
  // the thread opens it.  Returns false, queueing nothing, when `path` does
  // not fit a queue entry (PATH_MAX bytes with its terminator), no thread
  // can be started, or the queue is full and the thread took no hint within
  // 2 seconds (from then on a full queue refuses at once, until the thread
  // takes one: a thread that stopped progressing never hangs the program).
  // Thread-safe; not async-signal-safe.
  static bool Queue(const char* path, dev_t device, ino_t inode, uint64_t offset, uint64_t length);

  // True when a caller should leave its hint out: the last kNeedlessInARow
  // hints carried out each found its whole range in the page cache, and
  // this is not the one call in kProbeEvery that goes through (see the
  // top).  Thread-safe; a relaxed atomic or two.
  static bool Needless();

  // For tests, each of which expects a process's fresh start: forgets the
  // hints found cached, so that the next are carried out.
  static void ForgetHintsFoundCachedForTest();
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_PATH_READ_AHEAD_H_
