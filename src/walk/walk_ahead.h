// walk_ahead.h: reading a directory tree ahead of the program that walks it.
//
// A program that walks a tree (du, find, ls -R, cp -r, tar, rsync) reads
// one directory and stats its entries at a time, and each of those calls
// waits for the device when the tree is not cached.  Walk-ahead reads the
// same tree on threads of its own, a little ahead of the program, so that
// the program's calls find the kernel's dentry, inode and directory-block
// caches warm.  It delivers nothing to the program: the program's calls run
// as they would, and see the tree as it is when they are made.  Only a
// plugin that asks (KeepWalkAheadStats) is handed walk-ahead's stats, to
// answer the program's stats of the same entries as a graph answers a call
// from an early one (stat_answers.h).
//
// Arming.  The interposers report each directory the program opens (open
// or openat with O_DIRECTORY, opendir, fdopendir).  A directory opened by
// path becomes a candidate root; when the program then opens a second
// directory (by a path under the candidate, or relative to a directory
// descriptor), it is walking recursively, and walk-ahead starts reading the
// candidate's tree.  Up to kMaxRoots roots are remembered, so a program
// that walks a source and a destination, or several trees in turn, keeps
// its walks.
//
// Rules (DESIGN §2, rule 7):
//  - Its threads have a descriptor table of their own (close_range(2) with
//    CLOSE_RANGE_UNSHARE): the program's descriptor numbers, its table's
//    size and its record locks are untouched, and the program never sees a
//    descriptor of walk-ahead.  All signals are blocked on its threads.
//  - It opens only directories, read-only, with O_NOATIME where the kernel
//    allows it (the caller owns the directory, or is privileged), under a
//    root with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//    RESOLVE_NO_XDEV): it follows no symbolic link, never leaves the root
//    and never crosses a mount point.  Stats use AT_SYMLINK_NOFOLLOW and
//    AT_NO_AUTOMOUNT.  A root must lie on a walkable filesystem
//    (walkable_filesystem.h): never /proc, /sys or another pseudo or memory
//    filesystem.
//  - Bounded: it reads at most `distance` directories more than the program
//    has opened since the walk began (fewer at first: the distance grows as
//    the program keeps descending), queues at most kMaxQueuedDirectories
//    directories and kMaxQueuedPathBytes bytes of paths, and holds at most
//    one descriptor per thread plus one per root.
//  - It stops reading when the program stops descending: when the program
//    has opened no directory for kIdleSeconds while walk-ahead waits for it,
//    the walk is dropped.  Its threads die with the process.
//  - It costs nothing where the tree is cached: its first thread starts
//    only once the program's own calls have read from a block device since
//    the root was opened (the process's rusage, looked at when the walk
//    begins and then every few directories the program opens).  On a
//    cached tree the program runs with no thread of walk-ahead.
//  - It costs little where it does not pay: its threads run at nice 19, so
//    they use a core the program and the machine leave idle; a directory
//    reached behind the program is only passed through (read for its
//    subdirectories, one entry stat'ed); and once the walk has found the
//    tree cached (no block read for a few dozen directories) it rests,
//    probing one directory far ahead now and then, and reads again when a
//    probe waits for the device (walk_ahead.cc, kWarmDirectoriesForRest).
//    One thread walks until a directory it reads is not cached; only then
//    do the others start, so a cached tree never gets them.
//  - Under a seccomp filter (which could forbid, or kill the process for,
//    the calls its threads make) it stays off and says so.
//  - After fork() the child never walks ahead.
//  - A tree that changes meanwhile costs at most useless reads: every
//    failure of walk-ahead's own calls is counted and skipped.
#ifndef FOREACTOR_WALK_WALK_AHEAD_H_
#define FOREACTOR_WALK_WALK_AHEAD_H_

#include <atomic>
#include <cstdint>
#include <cstdio>

#include <sys/stat.h>

namespace foreactor {

namespace internal {
extern std::atomic<int> walk_ahead_switch;  // -1 until known, then 0 (off) or 1 (on)
int LoadWalkAheadSwitch();                  // reads the settings; returns 0 or 1
}  // namespace internal

// True when walk-ahead is on for this process: the interposers then report
// directory opens.  One relaxed load once the settings are known.
inline bool WalkAheadObserving() {
  const int known = internal::walk_ahead_switch.load(std::memory_order_relaxed);
  if (__builtin_expect(known >= 0, 1)) return known != 0;
  return internal::LoadWalkAheadSwitch() != 0;
}

// The program opened directory `path` by path (opendir(path), open(path,
// O_DIRECTORY), or openat(AT_FDCWD or any descriptor, an absolute path,
// O_DIRECTORY)), and got descriptor `opened_fd` (-1 when unknown, as for
// opendir).  Call only after the open succeeded.  Preserves errno.
void ObserveDirectoryOpenedByPath(const char* path, int opened_fd);

// The program opened a directory relative to a directory descriptor
// (openat(fd, "name", O_DIRECTORY)) and got `opened_fd`.  Preserves errno.
void ObserveDirectoryOpenedAt(int opened_fd);

// The program made a directory stream of descriptor `fd` (fdopendir).
// Preserves errno.
void ObserveDirectoryStream(int fd);

// A plugin asks for walk-ahead (foreactor_walk_ahead()): turns it on unless
// the settings refuse it.  Returns true when it is on.
bool RequestWalkAhead();

// A plugin asks for walk-ahead and for its stats to be kept for answers
// (foreactor_walk_ahead_keep_stats(); stat_answers.h).  Returns true when
// walk-ahead is on.
bool KeepWalkAheadStats();

// Answers the program's fstatat(AT_SYMLINK_NOFOLLOW) of entry `name` of the
// directory whose status it holds as `directory` from walk-ahead's kept
// stats (foreactor_walk_ahead_stat()).  False, writing nothing, when there
// is no answer.
bool AnswerStatFromWalkAhead(const struct stat& directory, const char* name, struct stat* status);

// Called in the child after fork(): walk-ahead stays off there.
void StopWalkAheadAfterFork();

// What walk-ahead did in this process so far.
struct WalkAheadStatistics {
  uint64_t walks_started = 0;        // times the program began to walk a tree recursively
  uint64_t roots_walked = 0;         // trees walk-ahead's threads opened and began to read
  uint64_t roots_refused = 0;        // candidate roots not walked (filesystem, open failed)
  uint64_t program_directories = 0;  // directory opens of the program it observed
  uint64_t directories_read = 0;     // directories walk-ahead read
  uint64_t directories_sampled = 0;  // of those, read the cheap way (behind the program)
  uint64_t directories_behind = 0;   // of those, passed through behind the program
  // Of those, large directories taken as cached after their first
  // entries' stats read nothing from a device (the rest passed through).
  uint64_t directories_judged_cached = 0;
  uint64_t directories_cold = 0;     // of those, directories that waited for the device
  uint64_t entries_stated = 0;       // entries it stat'ed
  uint64_t directories_failed = 0;   // its opens or reads that failed (tree changed, permissions)
  uint64_t directories_dropped = 0;  // found but not read: queue full, or walk dropped
  uint64_t rests = 0;                // times the walk found the tree cached and rested
  uint64_t probes = 0;               // directories a resting walk read to see if it still was
  uint64_t probes_cold = 0;          // of those, probes that read from a device (rest ended)
  uint64_t walks_stopped_idle = 0;   // walks dropped because the program stopped descending
  uint64_t waits_for_program = 0;    // times a thread waited because it was `distance` ahead
  uint64_t most_ahead = 0;           // largest lead over the program, in directories
  uint64_t most_queued = 0;          // largest number of queued directories
  uint64_t most_queued_path_bytes = 0;  // largest bytes of queued paths
  uint64_t most_descriptors = 0;        // largest number of descriptors open at once
  uint64_t threads = 0;                 // walk-ahead threads started
  // Entries the first thread had stat'ed when the others started (they
  // start once a directory it reads is not cached; 0 when they never did).
  uint64_t stats_before_workers = 0;
  uint64_t cold_checks = 0;             // times the program's side asked whether the tree is cached
  uint64_t cold_checks_of_process = 0;  // of those, asked of the whole process's block reads
  uint64_t distance = 0;                // the configured distance (0: walk-ahead off)
  // Stats kept for a plugin's answers (foreactor_walk_ahead_keep_stats):
  uint64_t stats_kept = 0;                // entries whose stat was kept
  uint64_t stat_questions = 0;            // the program's stats the plugin asked about while
                                          // stats were kept
  uint64_t stat_answers = 0;              // of those, answered from a kept stat
  uint64_t stat_directories_kept = 0;     // directories whose stats were kept
  uint64_t stat_directories_refused = 0;  // not kept: the bytes would have passed the bound
  uint64_t stat_directories_dropped = 0;  // dropped before the program asked for all (changed,
                                          // passed, or over the bound)
  uint64_t most_kept_stat_bytes = 0;      // most bytes of kept stats at once
};

// A snapshot of the counters (consistent enough for a report; each counter
// is read once).
WalkAheadStatistics WalkAheadStatisticsSnapshot();

// Writes the statistics as one JSON object ("{...}") to `out`.  Returns
// false on a write error.
bool WriteWalkAheadStatisticsJson(FILE* out);

}  // namespace foreactor

#endif  // FOREACTOR_WALK_WALK_AHEAD_H_
