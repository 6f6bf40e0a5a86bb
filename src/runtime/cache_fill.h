// cache_fill.h: byte ranges of a program's file read into the page cache
// by a thread of foreactor's own, with a descriptor table of its own.
//
// An in-order read-ahead stream (read_ahead_stream.h) has the regions of a
// run of the program's reads in file order read while the program sets up,
// and stays ahead of the program: its reads of a region wait for the fill
// (WaitFor) rather than start the kernel's read-ahead on the program's
// descriptor beside the fill's.  A fill:
//  - reads its ranges one after the other through one open file
//    description of its own, so that the kernel's read-ahead on it streams
//    them at the device's pace, as for a program reading the file;
//  - copies nothing out: sendfile(2) of each range to /dev/null (pread(2)
//    into a buffer of its own where the kernel refuses that).  On the
//    development VM a cold 44 MiB run took 22 ms so, and 26-28 ms read in
//    1 MiB preads, whose copying is the reader's own work;
//  - runs on a thread whose descriptor table is its own from its start
//    (close_range(2) with CLOSE_RANGE_UNSHARE, which copies none of the
//    program's descriptors), where it opens the file again through
//    /proc/<pid>/task/<tid>/fd/<fd> of the thread that started it, and
//    /dev/null.  The program never sees these descriptors and none of its
//    numbers moves; a descriptor the program closes or dup2()s onto can
//    never become one the fill writes to; and closing them releases none of
//    the program's POSIX record locks on the file (closing any descriptor
//    of a file in the program's table would: a process's record locks on a
//    file go with the first close of any of its descriptors of it);
//  - has every signal blocked on its thread (quiet_thread.h).
// Bounds: at most kMaxRanges ranges per fill; one thread per fill, started
// by Start() and joined by Stop(), with a kStackBytes stack; a
// kFallbackBytes buffer only where sendfile(2) is refused.
//
// Start(), WaitFor(), Stop() and Abandon() are for one thread (the runner's):
// not thread-safe among themselves.
#ifndef FOREACTOR_RUNTIME_CACHE_FILL_H_
#define FOREACTOR_RUNTIME_CACHE_FILL_H_

#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>

namespace foreactor {

class CacheFill {
 public:
  static constexpr int kMaxRanges = 64;
  static constexpr size_t kStackBytes = 256 * 1024;
  static constexpr size_t kFallbackBytes = 128 * 1024;

  struct Range {
    int64_t offset = 0;
    uint64_t length = 0;
  };

  CacheFill() = default;
  // Stops the fill in progress, unless abandoned.
  ~CacheFill();

  CacheFill(const CacheFill&) = delete;
  CacheFill& operator=(const CacheFill&) = delete;

  // Stops the fill in progress, then starts reading `ranges[0..count)`
  // (1 <= count <= kMaxRanges, each range non-empty, at a non-negative
  // offset), in that order, of the file that the calling thread's
  // descriptor `fd` names.  The fill reads it only when its own descriptor
  // is of the regular file on `device` with `inode`; `no_access_time`: it
  // opens the file O_NOATIME (as the program's descriptor is).  Returns
  // false when the arguments are invalid or no thread can be started:
  // then nothing is read.  A started fill may still read nothing (the file
  // was closed or replaced since, /proc is not mounted, the kernel lacks
  // close_range(2)): WaitFor() then returns at once.
  bool Start(int fd, dev_t device, ino_t inode, bool no_access_time, const Range* ranges,
             int count);

  // Waits until ranges [0, index] of the fill have been read, or the fill
  // ended without them (an error, Stop()).  At once when no fill started.
  void WaitFor(int index) const;

  // True when a fill was started and not yet stopped or abandoned (its
  // thread may have ended).
  bool started() const { return joinable_; }

  // Ranges the last fill read: its final count once Stop() returned.
  int ranges_read() const { return ranges_read_.load(std::memory_order_acquire); }

  // Has the fill's thread end after the range it reads, and waits for it.
  // Does nothing when no fill was started.
  void Stop();

  // After fork() in the child: forgets the fill, whose thread runs in the
  // parent only; WaitFor() returns at once from then on.
  void Abandon();

 private:
  static void* ThreadMain(void* fill);
  // The fill's thread: opens its descriptors in a table of its own, reads
  // the ranges, closes them.
  void Run();
  // Reads `range` of `file` into the page cache (to `sink`, or through a
  // buffer of its own); false on an error of the kernel's.
  bool ReadRange(int file, int sink, const Range& range, char** buffer);
  // Lets every waiter go: the fill is over.
  void End();

  // Set by Start() before the thread starts, read-only after.
  int fd_ = -1;
  pid_t process_ = 0;
  pid_t starter_ = 0;  // the thread whose descriptor fd_ is
  dev_t device_ = 0;
  ino_t inode_ = 0;
  bool no_access_time_ = false;
  Range ranges_[kMaxRanges];
  int count_ = 0;

  std::atomic<bool> stop_{false};
  // Ranges read so far; kEnded once the fill is over, read or not.
  static constexpr int kEnded = kMaxRanges + 1;
  std::atomic<int> progress_{kEnded};
  std::atomic<int> ranges_read_{0};
  pthread_t thread_{};
  bool joinable_ = false;
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_CACHE_FILL_H_
