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
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_PATH_READ_AHEAD_H_
