#include "walk/walk_ahead.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "base/out_of_memory.h"
#include "base/process_threads.h"
#include "base/quiet_thread.h"
#include "config/report.h"
#include "config/settings.h"
#include "runtime/raw_syscalls.h"
#include "runtime/serving_streak.h"
#include "runtime/statistics.h"
#include "walk/directory_queue.h"
#include "walk/stat_answers.h"
#include "walk/walkable_filesystem.h"

namespace foreactor {

namespace internal {
std::atomic<int> walk_ahead_switch{-1};
}  // namespace internal

namespace {

constexpr unsigned kMaxRoots = 4;
constexpr size_t kMaxQueuedDirectories = 65536;
constexpr size_t kMaxQueuedPathBytes = 16u << 20;
constexpr int kIdleSeconds = 3;
// While the walk is `distance` ahead, or rests, one of its threads (the
// watcher) looks again after this long: the program never wakes
// walk-ahead's threads, so that its own calls stay a counter increment.
// The other threads sleep until the watcher finds work and wakes them: with
// every thread looking, stock du on the hot deep tree made 380-530 context
// switches a run, with one 165-181.
constexpr auto kWaitForProgram = std::chrono::milliseconds(2);
// The distance a walk starts with, and how fast it grows: the lead may be
// kInitialDistance plus kDistanceGrowth times the directories the program
// opened since the walk began, up to the configured distance.  A program
// that opens two directories and stops (ls DIR SUBDIR) costs a few reads.
constexpr uint64_t kInitialDistance = 32;
constexpr uint64_t kDistanceGrowth = 2;
constexpr size_t kDirectoryBufferBytes = 64 * 1024;
// A directory counts as cached when reading it and stat'ing its entries
// made the reading thread submit no read to a block device (its rusage
// ru_inblock did not grow; the kernel counts every read bio a thread
// submits, metadata included).  Timing the calls instead misjudges: a
// lowest-priority thread is often preempted between two clock reads.
// Once enough directories were cached in a row (ahead of the program:
// what it read itself is cached), the tree is taken as cached and the walk
// rests: it reads nothing while the program opens the next
// kFirstRestDirectories directories.  Then it probes: it reads the
// directory at the back of its queue, the one the program would reach
// last, with at most kProbeEntries entries stat'ed (its subdirectories go
// to the back, so each probe reads a directory not read before).  A cached
// probe doubles the rest, up to
// kLongestRestDirectories; a probe that read from a device ends the rest,
// and the walk goes on from where it stopped (passing through what the
// program read meanwhile as it does behind the program).  Reading a cached
// tree alongside the program only takes CPU and cache lines from it: on a
// cached tree a walk costs a few dozen directories and a probe now and
// then.  Without the kernel's I/O accounting (no /proc/self/io) nothing
// tells a cached directory apart, and the walk never rests.
//
// "Enough" is learnt (ServingStreak): kWarmDirectoriesForRest directories,
// or kWarmEntriesPerDirectory times that many entries, at first.  A cold
// tree has cached stretches too: the kernel reads directory blocks and
// inode tables ahead in clusters, so a run of directories whose blocks a
// neighbour's read brought in looks cached.  A rest that ends within
// kLongRestPerNeeded x the streak needed (counted in directories the
// program opened), at a cold probe or at a cold directory still being read
// when it began, doubles the streak needed, up to
// kMostWarmDirectoriesForRest; a longer rest resets it.
constexpr unsigned kWarmDirectoriesForRest = 32;
constexpr unsigned kMostWarmDirectoriesForRest = 4096;
constexpr uint64_t kWarmEntriesPerDirectory = 16;
constexpr uint64_t kLongRestPerNeeded = 8;
constexpr uint64_t kFirstRestDirectories = 64;
constexpr uint64_t kLongestRestDirectories = 8192;
constexpr uint64_t kProbeEntries = 64;
// A directory whose first kEntriesToJudgeCached stats read nothing from a
// device (and whose own blocks were cached) is taken as cached: its other
// entries are only passed through, as behind the program (subdirectories
// known by their type).  On a cached tree of large directories (4,000
// entries each) every thread otherwise stat'ed a whole directory before
// the walk could rest: about 32,000 stats, 50-60 ms of CPU taken from a
// two-core machine.  Twice the inodes one read of ext4's inode table
// read-ahead brings in (32 blocks of 16), so that a neighbour's read-ahead
// alone does not make a cold directory look cached.
constexpr uint64_t kEntriesToJudgeCached = 1024;
// Until the other threads run, the first one looks every
// kStatsPerColdCheck stats whether the directory it reads made it read
// from a device, and starts them at once if so: waiting for the end of the
// first cold directory left a 1,000-entry directory to one thread at the
// lowest priority for its whole read (about 100 ms into a 265 ms walk of
// wide-100k, cold), while the program caught up and loaded the inodes
// itself.  One getrusage(2) (about 0.3 us) per 16 stats, and only while
// the leader walks alone.
constexpr uint64_t kStatsPerColdCheck = 16;
// Directories the program has opened when a walk begins (the root, and the
// one under it whose open showed the walk is recursive).
constexpr uint64_t kOpenedBeforeTheWalk = 2;
constexpr size_t kThreadStackBytes = 256 * 1024;
// Walk-ahead's first thread starts only once the program's own calls show
// that the tree is not cached: the process has read from a block device
// since the root was opened (rusage ru_inblock of the whole process, so
// that reads an engine's workers make for the program count too).  The
// check runs when a walk begins and then once every
// kProgramDirectoriesPerColdCheck directories the program opens, until
// the thread starts: one getrusage(2) (0.1-0.2 us here) per 16
// directories.  While the process has only ever had one thread, that
// thread's count (RUSAGE_THREAD) is the process's, and is what is asked
// (ProcessBlocksRead()): the process's (RUSAGE_SELF) makes the kernel
// bring the caller's CPU time up to date first, a point where the
// scheduler may switch to another task, and with du's output in a pipe,
// asked every 16 directories (or even every 128) it cost a hot walk of
// the deep tree 140-190 context switches and 1.3-1.5% of its time on the
// development VM.  On a cached tree no thread ever starts: an idle second
// thread alone made stock du 2-3% slower on the hot deep tree (glibc
// leaves its single-threaded shortcuts once a process has two threads).
// On a cold tree the program's read of the root's own blocks shows it
// before the walk begins, so the walk starts when it did before.
constexpr uint64_t kProgramDirectoriesPerColdCheck = 16;
// The stats walk-ahead keeps for a plugin's answers (StatAnswers): at most
// this many bytes, about 170,000 entries; they are handed over to the
// kept directory kStatsPerHandOver at a time, so that a program reading the
// same directory finds the first ones answered while the rest are read.
constexpr size_t kMaxKeptStatBytes = 32u << 20;
constexpr size_t kStatsPerHandOver = 32;
// When the program has passed the walker in the directory both read (it
// stat'ed those entries itself), the walker leaps to this many entries
// past the program's and stats on from there: stat'ing behind the program
// only takes CPU from it.
constexpr size_t kLeapPastTheProgram = 16;

// Flags of every directory walk-ahead opens; O_NOATIME is tried first.
constexpr uint64_t kDirectoryOpenFlags =
    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW;
// Beneath a root: no symbolic link, no magic link, no mount point, never above it.
constexpr uint64_t kBeneathRoot =
    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;

// Reads `who` (RUSAGE_THREAD: the calling thread; RUSAGE_SELF: the whole
// process) submitted to block devices so far (512-byte units), or 0 when
// they cannot be read.
uint64_t BlocksRead(int who) {
  struct rusage usage;
  if (getrusage(who, &usage) != 0) return 0;
  return static_cast<uint64_t>(usage.ru_inblock);
}

uint64_t BlocksReadByThisThread() { return BlocksRead(RUSAGE_THREAD); }

// The process's block reads so far (see kProgramDirectoriesPerColdCheck),
// and, in `*of_process` unless it is null, whether getrusage(2) was asked
// for the whole process's.  A baseline taken of one thread and a later
// count of the process's differ by the reads of threads that ended before
// an exec: such a walk may start early, and on a cached tree it rests.
uint64_t ProcessBlocksRead(bool* of_process = nullptr) {
  const bool whole_process = !ProcessHasOnlyOneThread();
  if (of_process != nullptr) *of_process = whole_process;
  return BlocksRead(whole_process ? RUSAGE_SELF : RUSAGE_THREAD);
}

// True when the kernel accounts each thread's block I/O (rusage ru_inblock).
bool KernelAccountsBlockReads() {
  return raw::Result(syscall(SYS_faccessat, AT_FDCWD, "/proc/self/io", R_OK)) == 0;
}

void RaiseTo(std::atomic<uint64_t>& most, uint64_t value) {
  uint64_t seen = most.load(std::memory_order_relaxed);
  while (value > seen && !most.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

// The counters behind WalkAheadStatistics.
struct Counters {
  std::atomic<uint64_t> walks_started{0};
  std::atomic<uint64_t> roots_walked{0};
  std::atomic<uint64_t> roots_refused{0};
  std::atomic<uint64_t> program_directories{0};
  std::atomic<uint64_t> directories_read{0};
  std::atomic<uint64_t> directories_sampled{0};
  std::atomic<uint64_t> directories_cold{0};
  std::atomic<uint64_t> directories_behind{0};
  std::atomic<uint64_t> directories_judged_cached{0};
  std::atomic<uint64_t> entries_stated{0};
  std::atomic<uint64_t> directories_failed{0};
  std::atomic<uint64_t> directories_dropped{0};
  std::atomic<uint64_t> rests{0};
  std::atomic<uint64_t> probes{0};
  std::atomic<uint64_t> probes_cold{0};
  std::atomic<uint64_t> walks_stopped_idle{0};
  std::atomic<uint64_t> waits_for_program{0};
  std::atomic<uint64_t> most_ahead{0};
  std::atomic<uint64_t> most_queued{0};
  std::atomic<uint64_t> most_queued_path_bytes{0};
  std::atomic<uint64_t> most_descriptors{0};
  std::atomic<uint64_t> threads{0};
  std::atomic<uint64_t> stats_before_workers{0};
  std::atomic<uint64_t> cold_checks{0};
  std::atomic<uint64_t> cold_checks_of_process{0};
  std::atomic<uint64_t> distance{0};
};

Counters counters;

// A tree walk-ahead knows of.
struct Root {
  enum class State { kEmpty, kCandidate, kToOpen, kOpen, kRefused };
  State state = State::kEmpty;
  uint64_t generation = 0;  // bumped each time the slot takes another tree
  uint64_t last_used = 0;   // the program's directory count when it last opened in this tree
  std::string path;     // as the program gave it (relative to the working directory, or absolute)
  int descriptor = -1;  // in walk-ahead's own table: the open tree's, or until a thread
                        // opens the slot's new tree, the previous one's
  dev_t device = 0;     // the root's filesystem (descendants on another are not walked)
  bool no_access_time = true;  // O_NOATIME is accepted here (it is tried until refused)
  // The process's block reads when the program opened the root, while no
  // walk-ahead thread ran (kProgramDirectoriesPerColdCheck).
  uint64_t process_blocks_at_open = 0;
};

// True when `path` is `root` or lies under it, by the strings alone.
bool PathWithin(const std::string& root, const char* path) {
  const size_t length = root.size();
  if (std::strncmp(path, root.c_str(), length) != 0) return false;
  if (path[length] == '\0' || path[length] == '/') return true;
  return length > 0 && root[length - 1] == '/';
}

class WalkAhead {
 public:
  explicit WalkAhead(const WalkAheadSettings& settings)
      : workers_(settings.workers),
        distance_(settings.distance),
        queue_(kMaxQueuedDirectories, kMaxQueuedPathBytes),
        io_accounting_(KernelAccountsBlockReads()),
        answers_(kMaxKeptStatBytes) {
    counters.distance.store(distance_, std::memory_order_relaxed);
  }

  // Program side --------------------------------------------------------
  //
  // These run inside the program's calls.  The common one (a directory
  // opened relative to another while a walk is under way) is an atomic
  // increment; the others take walk-ahead's lock, which its threads hold
  // only for short stretches without system calls that wait (a lowest-
  // priority thread preempted while holding it runs again as soon as the
  // waiting program leaves a core idle).

  void OpenedByPath(const char* path, int opened_fd) {
    const uint64_t opened = NoteProgramDirectory();
    if (path == nullptr || path[0] == '\0') return;
    bool start = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      Root* within = nullptr;
      for (Root& root : roots_) {
        if (root.state == Root::State::kEmpty) continue;
        if (PathWithin(root.path, path) &&
            (within == nullptr || root.path.size() > within->path.size())) {
          within = &root;
        }
      }
      if (within != nullptr) {
        within->last_used = opened;
        most_recent_ = within;
        if (within->state == Root::State::kCandidate &&
            std::strcmp(path, within->path.c_str()) != 0) {
          start = Promote(within);  // a second directory under it: a recursive walk
        }
      } else {
        Assign(&LeastRecentlyUsedSlot(), path, opened, OnWalkableFilesystem(opened_fd, path));
      }
    }
    if (start) StartedWalk();
  }

  void OpenedRelative(int opened_fd) {
    const uint64_t opened = NoteProgramDirectory();
    // The common case: a walk under way and no new tree to start.
    if (walking_.load(std::memory_order_relaxed) &&
        !candidate_waiting_.load(std::memory_order_relaxed)) {
      return;
    }
    bool start = false;
    bool have_root = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (most_recent_ != nullptr && most_recent_->state != Root::State::kEmpty) {
        have_root = true;
        most_recent_->last_used = opened;
        if (most_recent_->state == Root::State::kCandidate) start = Promote(most_recent_);
      }
    }
    if (!have_root && opened_fd >= 0) {
      // A walk the program began from a descriptor: find where it is.
      char link[64];
      char target[PATH_MAX];
      std::snprintf(link, sizeof(link), "/proc/self/fd/%d", opened_fd);
      const int64_t length = raw::Readlink(link, target, sizeof(target) - 1);
      if (length <= 0 || target[0] != '/') return;
      target[length] = '\0';
      const bool walkable = OnWalkableFilesystem(opened_fd, target);
      std::lock_guard<std::mutex> lock(mutex_);
      Root& slot = LeastRecentlyUsedSlot();
      if (Assign(&slot, target, opened, walkable) && walkable) start = Promote(&slot);
    }
    if (start) StartedWalk();
  }

  // Walk-ahead's threads -------------------------------------------------

  // Gives the calling thread the lowest priority (nice 19): walk-ahead uses
  // a core only when the program's threads (and the machine's other work)
  // leave it idle, as they do while the program waits for the device, so a
  // walk that does not pay costs the program next to no CPU.  (Not
  // SCHED_IDLE: a thread holding a directory's lock must still get to run
  // on a busy machine.)
  static void YieldToTheProgram() { setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19); }

  // The first thread: takes a descriptor table of its own, then walks; the
  // others start in that table once the walk needs them (StartWorkers).
  static void* LeaderMain(void* self) {
    auto* walk = static_cast<WalkAhead*>(self);
    prctl(PR_SET_NAME, "foreactor-walk", 0, 0, 0);
    YieldToTheProgram();
    if (!TakeEmptyDescriptorTable()) {
      walk->Disable(
          "walk-ahead needs close_range(2) with CLOSE_RANGE_UNSHARE (Linux 5.9); walk-ahead is "
          "off");
      return nullptr;
    }
    if (!walk->io_accounting_) walk->StartWorkers(0);  // nothing tells a cached tree apart
    walk->Work();
    return nullptr;
  }

  // Starts the threads after the first, once: as soon as the first one's
  // stats show that a directory it reads is not cached (kStatsPerColdCheck),
  // or at once without the kernel's I/O accounting.  `stated_now`: entries
  // the calling thread stat'ed in the directory it is reading, not yet in
  // counters.entries_stated.  On a cached tree the first thread alone reads
  // the few dozen directories before the walk rests: starting all of them
  // at once cost du on the hot deep tree about 150 context switches and 480
  // page faults a run (their stacks and directory buffers).  Called by
  // walk-ahead's threads only (they share its descriptor table).
  void StartWorkers(uint64_t stated_now) {
    if (workers_started_.exchange(true)) return;
    counters.stats_before_workers.store(
        counters.entries_stated.load(std::memory_order_relaxed) + stated_now,
        std::memory_order_relaxed);
    for (unsigned i = 1; i < workers_; ++i) {
      if (StartThread(&WorkerMain, this)) counters.threads.fetch_add(1, std::memory_order_relaxed);
    }
  }

  // A plugin asked for the stats to be kept (foreactor_walk_ahead_keep_stats).
  void KeepStats() { keep_stats_.store(true, std::memory_order_relaxed); }
  StatAnswers& answers() { return answers_; }

  static void* WorkerMain(void* self) {
    prctl(PR_SET_NAME, "foreactor-walk", 0, 0, 0);
    YieldToTheProgram();
    static_cast<WalkAhead*>(self)->Work();
    return nullptr;
  }

 private:
  // One piece of work taken from the shared state.
  struct Task {
    enum class Kind { kOpenRoot, kReadDirectory } kind = Kind::kReadDirectory;
    unsigned root = 0;
    uint64_t generation = 0;
    std::string path;
    int root_descriptor = -1;
    dev_t device = 0;
    bool no_access_time = true;
    bool sampling = false;  // read it the cheap way: the program is ahead of the walk
    bool probe = false;     // a resting walk's probe (at most kProbeEntries stats)
  };

  uint64_t NoteProgramDirectory() {
    const uint64_t opened =
        counters.program_directories.fetch_add(1, std::memory_order_relaxed) + 1;
    if (leader_waits_for_cold_.load(std::memory_order_relaxed)) CheckWhetherTheTreeIsCold(opened);
    return opened;
  }

  Root& LeastRecentlyUsedSlot() {
    Root* chosen = &roots_[0];
    for (Root& root : roots_) {
      if (root.state == Root::State::kEmpty) return root;
      if (root.last_used < chosen->last_used) chosen = &root;
    }
    return *chosen;
  }

  // True when the directory the program opened (`fd`, or `path` when `fd`
  // is -1) lies on a filesystem walk-ahead may walk.  One statfs(2) on the
  // program's thread, once per new root; it changes nothing the program sees.
  static bool OnWalkableFilesystem(int fd, const char* path) {
    struct statfs filesystem;
    const int64_t result = fd >= 0 ? raw::Fstatfs(fd, &filesystem) : raw::Statfs(path, &filesystem);
    return result == 0 && IsWalkableFilesystem(filesystem.f_type);
  }

  // Makes `slot` the root for `path`: a candidate, or refused when not
  // `walkable` (then directories under it are known and never walked).
  // Caller holds mutex_.
  bool Assign(Root* slot, const char* path, uint64_t opened, bool walkable) {
    if (!AllocationSucceeds([&] { slot->path.assign(path); })) return false;
    // The previous tree's descriptor, if any, stays open (in walk-ahead's
    // table, which only its threads may change) until a thread opens this
    // slot's new tree or drops the walks.
    slot->state = walkable ? Root::State::kCandidate : Root::State::kRefused;
    if (walkable) candidate_waiting_.store(true, std::memory_order_relaxed);
    if (!walkable) counters.roots_refused.fetch_add(1, std::memory_order_relaxed);
    slot->generation++;
    slot->last_used = opened;
    slot->no_access_time = true;
    // Only needed while no thread runs (kProgramDirectoriesPerColdCheck).
    if (walkable && io_accounting_ && !threads_started_.load(std::memory_order_relaxed)) {
      slot->process_blocks_at_open = ProcessBlocksRead();
    }
    most_recent_ = slot;
    return true;
  }

  // The program descends under candidate `root`: walk it.  Caller holds
  // mutex_.  Returns true when the walk threads must be started or woken.
  bool Promote(Root* root) {
    root->state = Root::State::kToOpen;
    candidate_waiting_.store(false, std::memory_order_relaxed);
    counters.walks_started.fetch_add(1, std::memory_order_relaxed);
    // The program has opened the root and one directory under it already:
    // the walk begins that far behind.
    const uint64_t program = counters.program_directories.load(std::memory_order_relaxed);
    walk_begin_program_ = program - std::min<uint64_t>(program, kOpenedBeforeTheWalk);
    walk_begin_read_ = read_;
    StopResting();
    walking_.store(true, std::memory_order_relaxed);
    // The baseline of the cold checks, while no thread runs.
    blocks_before_walk_.store(root->process_blocks_at_open, std::memory_order_relaxed);
    return true;
  }

  // The walk found the tree cold: a rest under way ends, and its length
  // teaches the streak needed for the next one.  Caller holds mutex_.
  void FoundCold() {
    if (resting_) {
      rest_streak_.NoteStayEnded(
          counters.program_directories.load(std::memory_order_relaxed) - rest_began_program_,
          kLongRestPerNeeded);
    }
    StopResting();
  }

  // The walk reads again, and a later rest starts at its first length.
  // Caller holds mutex_.
  void StopResting() {
    resting_ = false;
    rest_directories_ = kFirstRestDirectories;
    warm_directories_ = 0;
    warm_entries_ = 0;
  }

  // A walk began (Promote() noted the process's block reads when the
  // program opened its root).  Runs on the program's thread, without mutex_.
  void StartedWalk() {
    if (threads_started_.load(std::memory_order_acquire)) {
      wake_.notify_all();
      return;
    }
    // A seccomp filter may forbid the calls walk-ahead's threads make
    // (close_range, openat2), and may kill the process for them.  Asked
    // whenever a walk begins before the thread ran, so that the program
    // hears of it whether or not its tree is cached.
    if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 0) {
      Disable("walk-ahead does not run under a seccomp filter; walk-ahead is off");
      return;
    }
    bool of_process = false;
    if (io_accounting_ &&
        ProcessBlocksRead(&of_process) == blocks_before_walk_.load(std::memory_order_relaxed)) {
      // Cached so far: look again as the program goes on.
      counters.cold_checks.fetch_add(1, std::memory_order_relaxed);
      if (of_process) counters.cold_checks_of_process.fetch_add(1, std::memory_order_relaxed);
      next_cold_check_.store(counters.program_directories.load(std::memory_order_relaxed) +
                                 kProgramDirectoriesPerColdCheck,
                             std::memory_order_relaxed);
      leader_waits_for_cold_.store(true, std::memory_order_relaxed);
      return;
    }
    StartLeader();
  }

  // The program opened its `opened`-th directory (any open it reports,
  // NoteProgramDirectory()) while a walk waits for the tree to show it is
  // not cached: every kProgramDirectoriesPerColdCheck
  // directories, starts the walk's first thread if the process has read
  // from a block device since the root was opened.
  void CheckWhetherTheTreeIsCold(uint64_t opened) {
    if (opened < next_cold_check_.load(std::memory_order_relaxed)) return;
    next_cold_check_.store(opened + kProgramDirectoriesPerColdCheck, std::memory_order_relaxed);
    counters.cold_checks.fetch_add(1, std::memory_order_relaxed);
    bool of_process = false;
    const uint64_t blocks = ProcessBlocksRead(&of_process);
    if (of_process) counters.cold_checks_of_process.fetch_add(1, std::memory_order_relaxed);
    if (blocks == blocks_before_walk_.load(std::memory_order_relaxed)) return;
    StartLeader();
  }

  // Starts the walk's first thread, once.
  void StartLeader() {
    leader_waits_for_cold_.store(false, std::memory_order_relaxed);
    if (threads_started_.exchange(true, std::memory_order_acq_rel)) return;
    if (StartThread(&LeaderMain, this)) {
      counters.threads.fetch_add(1, std::memory_order_relaxed);
    } else {
      Disable("cannot start the walk-ahead thread; walk-ahead is off");
    }
  }

  // Starts a thread running `main(walk)`, with every signal blocked (a
  // signal meant for the program must never run its handler on walk-ahead's
  // thread) and a small stack.
  static bool StartThread(void* (*main)(void*), WalkAhead* walk) {
    return StartQuietThread(main, walk, kThreadStackBytes, /*detached=*/true, nullptr) == 0;
  }

  void Disable(const char* message) {
    internal::walk_ahead_switch.store(0, std::memory_order_relaxed);
    walking_.store(false, std::memory_order_relaxed);
    Report(message);
  }

  // How far ahead the current walk may run now.  Caller holds mutex_.
  uint64_t AllowedLead(uint64_t program_since_begin) const {
    const uint64_t grown = kInitialDistance + kDistanceGrowth * program_since_begin;
    return std::min<uint64_t>(distance_, grown);
  }

  // Waits for work and takes it.  Returns false never (threads live as
  // long as the process).
  void NextTask(std::unique_lock<std::mutex>& lock, Task* task) {
    uint64_t seen_program = 0;
    auto seen_since = std::chrono::steady_clock::now();
    bool waiting_for_program = false;
    // The watcher that finds work hands the watch on: the others wake and
    // look, and one of those that find none becomes the watcher.
    WatcherRole watcher(this);
    for (;;) {
      for (unsigned i = 0; i < kMaxRoots; ++i) {
        Root& root = roots_[i];
        if (root.state != Root::State::kToOpen) continue;
        root.state = Root::State::kOpen;  // being opened; read tasks wait for the descriptor
        if (!AllocationSucceeds([&] { task->path = root.path; })) {
          root.state = Root::State::kRefused;  // out of memory: this tree is not walked
          continue;
        }
        task->kind = Task::Kind::kOpenRoot;
        task->root = i;
        task->generation = root.generation;
        return;
      }
      if (!queue_.empty()) {
        const uint64_t program = counters.program_directories.load(std::memory_order_relaxed);
        if (resting_ && !probing_ && program >= rest_end_program_ && TakeProbe(task)) return;
        const uint64_t program_since = program - std::min(program, walk_begin_program_);
        const uint64_t read_since = read_ - walk_begin_read_ + in_flight_;
        const uint64_t lead = read_since > program_since ? read_since - program_since : 0;
        const bool behind = read_since < program_since;
        if (!resting_ && lead < AllowedLead(program_since)) {
          PendingDirectory next;
          queue_.PopFront(&next);
          // Behind the program, a directory is only passed through: the
          // program is reading it (or has), and stat'ing its entries twice
          // at once would only take the CPU the program needs.
          if (!MakeReadTask(&next, /*sampling=*/behind, /*probe=*/false, task)) continue;
          RaiseTo(counters.most_ahead, lead + 1);
          in_flight_++;
          if (behind) counters.directories_behind.fetch_add(1, std::memory_order_relaxed);
          return;
        }
        // `distance` ahead: wait for the program, and drop the walk when it
        // stopped descending.
        const auto now = std::chrono::steady_clock::now();
        if (!waiting_for_program || program != seen_program) {
          if (!waiting_for_program)
            counters.waits_for_program.fetch_add(1, std::memory_order_relaxed);
          waiting_for_program = true;
          seen_program = program;
          seen_since = now;
        } else if (now - seen_since > std::chrono::seconds(kIdleSeconds)) {
          DropWalks();
          counters.walks_stopped_idle.fetch_add(1, std::memory_order_relaxed);
          waiting_for_program = false;
          continue;
        }
        if (watcher.TakeIfFree()) {
          wake_.wait_for(lock, kWaitForProgram);
        } else {
          wake_.wait(lock);
        }
        continue;
      }
      waiting_for_program = false;
      if (in_flight_ == 0) walking_.store(false, std::memory_order_relaxed);
      watcher.Release(/*wake_the_others=*/false);  // nothing queued: nothing to watch for
      wake_.wait(lock);
    }
  }

  // The role of the one thread that looks for the program's progress while
  // the walk waits for it (kWaitForProgram).  Held only under mutex_.
  class WatcherRole {
   public:
    explicit WatcherRole(WalkAhead* walk) : walk_(walk) {}
    // Leaving NextTask with work: the others look for work too.
    ~WatcherRole() { Release(/*wake_the_others=*/true); }
    WatcherRole(const WatcherRole&) = delete;
    WatcherRole& operator=(const WatcherRole&) = delete;

    // True when this thread is (now) the watcher.
    bool TakeIfFree() {
      if (!held_ && !walk_->watcher_present_) held_ = walk_->watcher_present_ = true;
      return held_;
    }
    void Release(bool wake_the_others) {
      if (!held_) return;
      held_ = walk_->watcher_present_ = false;
      if (wake_the_others) walk_->wake_.notify_all();
    }

   private:
    WalkAhead* const walk_;
    bool held_ = false;
  };

  // Makes `task` the probe of a resting walk: the directory at the back of
  // the queue, the one the program reaches last (its subdirectories go
  // back there once read).  False when there is none to read (the walk
  // then waits as it rests).  Caller holds mutex_.
  bool TakeProbe(Task* task) {
    PendingDirectory last;
    if (!queue_.PopBack(&last) || !MakeReadTask(&last, /*sampling=*/false, /*probe=*/true, task)) {
      return false;
    }
    probing_ = true;
    counters.probes.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  // Makes `task` the read of `directory` (its path moved into the task).
  // False, counting it dropped, when its tree is gone (the slot took
  // another tree, or the walk was dropped).  Caller holds mutex_.
  bool MakeReadTask(PendingDirectory* directory, bool sampling, bool probe, Task* task) {
    const Root& root = roots_[directory->root];
    if (root.generation != directory->generation || root.descriptor < 0) {
      counters.directories_dropped.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    task->kind = Task::Kind::kReadDirectory;
    task->root = directory->root;
    task->generation = directory->generation;
    task->path = std::move(directory->path);
    task->root_descriptor = root.descriptor;
    task->device = root.device;
    task->no_access_time = root.no_access_time;
    task->sampling = sampling;
    task->probe = probe;
    return true;
  }

  // Closes `root`'s descriptor in walk-ahead's table, if it has one.  Only
  // walk-ahead's threads call it.  Caller holds mutex_.
  void CloseRootDescriptor(Root* root) {
    if (root->descriptor < 0) return;
    raw::Close(root->descriptor);
    root->descriptor = -1;
    descriptors_.fetch_sub(1, std::memory_order_relaxed);
  }

  // Drops every queued directory and forgets every tree.  Caller holds mutex_.
  void DropWalks() {
    counters.directories_dropped.fetch_add(queue_.size(), std::memory_order_relaxed);
    queue_.Clear();
    for (Root& root : roots_) {
      CloseRootDescriptor(&root);
      root.state = Root::State::kEmpty;
      root.generation++;
    }
    most_recent_ = nullptr;
    StopResting();
    walking_.store(false, std::memory_order_relaxed);
  }

  void Work() {
    std::unique_ptr<char[]> buffer(NewArrayOrNull<char>(kDirectoryBufferBytes));
    if (buffer == nullptr) return;
    std::vector<PendingDirectory> found;
    Task task;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      NextTask(lock, &task);
      lock.unlock();
      if (task.kind == Task::Kind::kOpenRoot) {
        OpenRoot(task);
        lock.lock();
        continue;
      }
      DirectoryOutcome outcome;
      ReadDirectory(task, buffer.get(), &found, &outcome);
      if (!outcome.warm) StartWorkers(0);
      lock.lock();
      if (task.probe) {
        FinishProbe(outcome.warm);
        if (roots_[task.root].generation == task.generation) {
          counters.directories_dropped.fetch_add(queue_.PushBack(&found),
                                                 std::memory_order_relaxed);
        } else {
          counters.directories_dropped.fetch_add(found.size(), std::memory_order_relaxed);
          found.clear();
        }
        continue;
      }
      in_flight_--;
      read_++;
      NoteWarmth(outcome, task.sampling);
      Root& root = roots_[task.root];
      if (root.generation == task.generation) {
        if (outcome.access_time_refused) root.no_access_time = false;
        counters.directories_dropped.fetch_add(queue_.PushFront(&found), std::memory_order_relaxed);
        RaiseTo(counters.most_queued, queue_.size());
        RaiseTo(counters.most_queued_path_bytes, queue_.path_bytes());
        if (!queue_.empty()) wake_.notify_all();
      } else {
        counters.directories_dropped.fetch_add(found.size(), std::memory_order_relaxed);
        found.clear();
      }
    }
  }

  // Opens the root of `task` in walk-ahead's table and queues its tree.
  void OpenRoot(const Task& task) {
    int64_t fd = raw::Openat2(AT_FDCWD, task.path.c_str(), kDirectoryOpenFlags | O_NOATIME,
                              RESOLVE_NO_MAGICLINKS);
    bool no_access_time = true;
    if (fd == -EPERM) {
      no_access_time = false;
      fd = raw::Openat2(AT_FDCWD, task.path.c_str(), kDirectoryOpenFlags, RESOLVE_NO_MAGICLINKS);
    }
    struct statfs filesystem;
    struct stat status;
    bool walkable = fd >= 0 && raw::Fstatfs(static_cast<int>(fd), &filesystem) == 0 &&
                    IsWalkableFilesystem(filesystem.f_type) &&
                    raw::Fstat(static_cast<int>(fd), &status) == 0;
    std::lock_guard<std::mutex> lock(mutex_);
    Root& root = roots_[task.root];
    if (!walkable || root.generation != task.generation) {
      if (fd >= 0) raw::Close(static_cast<int>(fd));
      if (root.generation == task.generation) {
        root.state = Root::State::kRefused;
        counters.roots_refused.fetch_add(1, std::memory_order_relaxed);
      }
      return;
    }
    CloseRootDescriptor(&root);  // the slot's previous tree
    root.descriptor = static_cast<int>(fd);
    root.device = status.st_dev;
    root.no_access_time = no_access_time;
    RaiseTo(counters.most_descriptors, descriptors_.fetch_add(1, std::memory_order_relaxed) + 1);
    counters.roots_walked.fetch_add(1, std::memory_order_relaxed);
    const bool queued = AllocationSucceeds([&] {
      std::vector<PendingDirectory> top(1);
      top[0].root = task.root;
      top[0].generation = task.generation;
      queue_.PushFront(&top);
    });
    if (!queued) counters.directories_dropped.fetch_add(1, std::memory_order_relaxed);
    wake_.notify_all();
  }

  // What reading one directory found out.
  struct DirectoryOutcome {
    bool warm = true;                  // reading it read nothing from a device
    bool access_time_refused = false;  // O_NOATIME was refused under this root
    uint64_t entries = 0;              // entries it held (. and .. aside)
  };

  // Counts a directory the walk read towards a rest, and rests once the
  // tree has been cached for long enough (see kWarmDirectoriesForRest).
  // A directory passed through `behind` the program is cached because the
  // program read it: it says nothing of the tree ahead and does not count,
  // unless it was not cached.  Caller holds mutex_.
  void NoteWarmth(const DirectoryOutcome& outcome, bool behind) {
    if (!outcome.warm) {
      if (resting_) wake_.notify_all();  // a read begun before the rest: read again
      FoundCold();
      return;
    }
    if (behind) return;
    warm_directories_++;
    warm_entries_ += outcome.entries;
    const uint64_t needed = rest_streak_.needed();
    if (resting_ ||
        (warm_directories_ < needed && warm_entries_ < kWarmEntriesPerDirectory * needed)) {
      return;
    }
    resting_ = true;
    rest_began_program_ = counters.program_directories.load(std::memory_order_relaxed);
    rest_end_program_ = rest_began_program_ + rest_directories_;
    counters.rests.fetch_add(1, std::memory_order_relaxed);
  }

  // A resting walk's probe came back: `warm` rests twice as long, else the
  // walk reads again.  Caller holds mutex_.
  void FinishProbe(bool warm) {
    probing_ = false;
    if (!resting_) return;  // the walk was dropped or restarted meanwhile
    if (warm) {
      rest_directories_ = std::min(2 * rest_directories_, kLongestRestDirectories);
      rest_end_program_ =
          counters.program_directories.load(std::memory_order_relaxed) + rest_directories_;
      return;
    }
    counters.probes_cold.fetch_add(1, std::memory_order_relaxed);
    FoundCold();
    wake_.notify_all();
  }

  // The stats of one directory being kept in a StatAnswers, handed over
  // kStatsPerHandOver at a time.
  class KeptStats {
   public:
    KeptStats() = default;
    KeptStats(const KeptStats&) = delete;
    KeptStats& operator=(const KeptStats&) = delete;
    ~KeptStats() { Finish(); }

    // Starts keeping the stats of the entries of `directory` (open, read
    // from its start) in `answers`, under the directory's fstat.
    void Begin(StatAnswers* answers, int directory) {
      struct stat status;
      if (raw::Fstat(directory, &status) != 0) return;
      handle_ = answers->Begin(status);
      if (handle_) answers_ = answers;
    }

    explicit operator bool() const { return answers_ != nullptr; }

    // True when the program has stat'ed the next entry itself already (it
    // passed the walker in this directory): it need not be stat'ed, and is
    // kept with Add(name, false, _).
    bool ProgramIsPast() const { return answers_ != nullptr && position_ < leap_to_; }

    // Keeps the next entry's stat (`stat_ok`: `status` holds it).
    void Add(const char* name, bool stat_ok, const struct stat& status) {
      if (answers_ == nullptr) return;
      const bool added = AllocationSucceeds([&] {
        if (batch_.capacity() == 0) batch_.reserve(kStatsPerHandOver);
        StatAnswers::Entry& entry = batch_.emplace_back();
        entry.name = name;
        entry.stated = stat_ok;
        if (stat_ok) entry.status = status;
      });
      if (!added) {  // out of memory: the directory is kept up to here
        Finish();
        return;
      }
      position_++;
      if (batch_.size() < kStatsPerHandOver) return;
      const size_t program = answers_->Add(handle_, &batch_);
      if (program > position_) leap_to_ = program + kLeapPastTheProgram;
    }

    // Hands over what is left, and no more is kept.
    void Finish() {
      if (answers_ == nullptr) return;
      answers_->Add(handle_, &batch_);
      answers_->Finish(handle_);
      answers_ = nullptr;
    }

   private:
    StatAnswers* answers_ = nullptr;  // null: nothing (more) is kept
    StatAnswers::Handle handle_;
    std::vector<StatAnswers::Entry> batch_;
    size_t position_ = 0;  // entries kept so far, the batch's included
    size_t leap_to_ = 0;   // entries before this position are passed by (ProgramIsPast)
  };

  // Reads the directory of `task` and stats its entries; appends the
  // subdirectories on the same filesystem to `found`, in the order read.
  //
  // `task.sampling`: the program is ahead of the walk, so only the first
  // entry (and entries of unknown type) are stat'ed, and subdirectories are
  // known by their type in the directory; a mount point among them is
  // refused later by the open (RESOLVE_NO_XDEV).  `task.probe`: at most
  // kProbeEntries entries are stat'ed.  After kEntriesToJudgeCached stats
  // that read nothing from a device the rest is read as when sampling.
  // The directory is warm when none of this made the thread read from a
  // device.
  void ReadDirectory(const Task& task, char* buffer, std::vector<PendingDirectory>* found,
                     DirectoryOutcome* outcome) {
    bool sampling = task.sampling;
    const uint64_t most_stats = task.probe ? kProbeEntries : UINT64_MAX;
    const char* relative = task.path.empty() ? "." : task.path.c_str();
    const uint64_t blocks_before = BlocksReadByThisThread();
    int64_t fd = -EPERM;
    if (task.no_access_time) {
      fd = raw::Openat2(task.root_descriptor, relative, kDirectoryOpenFlags | O_NOATIME,
                        kBeneathRoot);
      if (fd == -EPERM) outcome->access_time_refused = true;
    }
    if (fd == -EPERM)
      fd = raw::Openat2(task.root_descriptor, relative, kDirectoryOpenFlags, kBeneathRoot);
    if (fd < 0) {
      counters.directories_failed.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    RaiseTo(counters.most_descriptors, descriptors_.fetch_add(1, std::memory_order_relaxed) + 1);
    const int directory = static_cast<int>(fd);
    uint64_t stated = 0;
    // The stats kept for answers: of a directory read in full, each entry's,
    // until it is judged cached (the rest is then only passed through).
    KeptStats kept;
    if (!sampling && !task.probe && keep_stats_.load(std::memory_order_relaxed)) {
      kept.Begin(&answers_, directory);
    }
    for (;;) {
      const int64_t length = raw::GetDents64(directory, buffer, kDirectoryBufferBytes);
      if (length < 0) {
        counters.directories_failed.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      if (length == 0) break;
      for (int64_t offset = 0; offset < length;) {
        const auto* entry = reinterpret_cast<const struct dirent64*>(buffer + offset);
        offset += entry->d_reclen;
        const char* name = entry->d_name;
        if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
        outcome->entries++;
        bool is_directory = entry->d_type == DT_DIR;
        // The program stat'ed it already: passed by, known by its type.
        const bool passed = kept.ProgramIsPast() && entry->d_type != DT_UNKNOWN;
        if (passed) {
          kept.Add(name, /*stat_ok=*/false, {});
        } else if ((!sampling || stated == 0 || entry->d_type == DT_UNKNOWN) &&
                   stated < most_stats) {
          struct stat status;
          const bool stat_ok =
              raw::Fstatat(directory, name, &status, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) == 0;
          stated++;
          kept.Add(name, stat_ok, status);
          is_directory = stat_ok && S_ISDIR(status.st_mode) && status.st_dev == task.device;
          // Both questions below need the blocks this thread read: one
          // getrusage(2) answers both when they fall on the same stat.
          const bool check_cold =
              stated % kStatsPerColdCheck == 0 && !workers_started_.load(std::memory_order_relaxed);
          const bool judge_cached = stated == kEntriesToJudgeCached;
          if (io_accounting_ && (check_cold || judge_cached)) {
            const bool read_from_device = BlocksReadByThisThread() != blocks_before;
            if (check_cold && read_from_device) StartWorkers(stated);
            if (judge_cached && !read_from_device) {
              sampling = true;
              kept.Finish();  // the rest is not stat'ed
              counters.directories_judged_cached.fetch_add(1, std::memory_order_relaxed);
            }
          }
        }
        if (!is_directory) continue;
        const size_t name_length = std::strlen(name);
        if (task.path.size() + 1 + name_length >= PATH_MAX) continue;
        // Out of memory: this subdirectory is not read ahead.
        static_cast<void>(AllocationSucceeds([&] {
          PendingDirectory child;
          child.root = task.root;
          child.generation = task.generation;
          child.path.reserve(task.path.size() + 1 + name_length);
          if (!task.path.empty()) {
            child.path = task.path;
            child.path += '/';
          }
          child.path.append(name, name_length);
          found->push_back(std::move(child));
        }));
      }
    }
    kept.Finish();
    raw::Close(directory);
    descriptors_.fetch_sub(1, std::memory_order_relaxed);
    outcome->warm = io_accounting_ && BlocksReadByThisThread() == blocks_before;
    counters.entries_stated.fetch_add(stated, std::memory_order_relaxed);
    counters.directories_read.fetch_add(1, std::memory_order_relaxed);
    if (task.sampling) counters.directories_sampled.fetch_add(1, std::memory_order_relaxed);
    if (!outcome->warm) counters.directories_cold.fetch_add(1, std::memory_order_relaxed);
  }

  const unsigned workers_;
  const uint64_t distance_;

  std::mutex mutex_;
  std::condition_variable wake_;
  Root roots_[kMaxRoots];
  Root* most_recent_ = nullptr;  // the tree the program last opened a directory in
  DirectoryQueue queue_;
  uint64_t read_ = 0;                     // directories read (or failed) since the start
  uint64_t in_flight_ = 0;                // directories being read now
  uint64_t walk_begin_program_ = 0;       // the program's directory count when the walk began
  uint64_t walk_begin_read_ = 0;          // read_ when the walk began
  std::atomic<uint64_t> descriptors_{0};  // walk-ahead's descriptors open now
  // Rests (see kWarmDirectoriesForRest); guarded by mutex_.
  uint64_t warm_directories_ = 0;  // directories read in a row that were cached
  uint64_t warm_entries_ = 0;      // the entries those held
  bool resting_ = false;           // the tree was found cached: read nothing but probes
  bool probing_ = false;           // a probe is being read
  bool watcher_present_ = false;   // a thread waits for the program with a timeout (WatcherRole)
  uint64_t rest_end_program_ = 0;  // the program's directory count at which to probe
  uint64_t rest_directories_ = kFirstRestDirectories;  // the current rest's length
  uint64_t rest_began_program_ = 0;  // the program's directory count when the rest began
  ServingStreak rest_streak_{kWarmDirectoriesForRest, kMostWarmDirectoriesForRest};
  const bool io_accounting_;             // KernelAccountsBlockReads()
  std::atomic<bool> keep_stats_{false};  // a plugin answers the program's stats from answers_
  StatAnswers answers_;
  std::atomic<bool> threads_started_{false};
  // A walk began, and its first thread waits for the program's calls to
  // show the tree is not cached (kProgramDirectoriesPerColdCheck).
  std::atomic<bool> leader_waits_for_cold_{false};
  std::atomic<uint64_t> blocks_before_walk_{0};  // the process's block reads at the root's open
  std::atomic<uint64_t> next_cold_check_{0};     // the program's directory count of the next check
  std::atomic<bool> workers_started_{false};     // StartWorkers() ran
  std::atomic<bool> walking_{false};             // a walk is under way: relative opens only count
  std::atomic<bool> candidate_waiting_{false};   // a candidate root waits for a second directory
};

// The one instance, made when walk-ahead is switched on, never destroyed
// (its threads run until the process ends).
std::atomic<WalkAhead*> instance{nullptr};

// Makes the instance unless it exists.  False when out of memory.
bool MakeInstance(const ProcessSettings& settings) {
  if (instance.load(std::memory_order_acquire) != nullptr) return true;
  WalkAhead* fresh = NewOrNull<WalkAhead>(settings.walk_ahead);
  if (fresh == nullptr) return false;
  WalkAhead* expected = nullptr;
  if (!instance.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) delete fresh;
  return true;
}

// True in a child after fork(): walk-ahead never starts again there.
std::atomic<bool> forked_child{false};

WalkAhead* Instance() {
  if (!WalkAheadObserving()) return nullptr;
  return instance.load(std::memory_order_acquire);
}

// Observers run on the program's thread, inside one of its calls: they
// leave errno as they found it.
class SavedErrno {
 public:
  SavedErrno() : saved_(errno) {}
  ~SavedErrno() { errno = saved_; }

 private:
  int saved_;
};

// The descriptor of the last directory the calling thread opened with
// O_DIRECTORY: fdopendir of it is the same directory, not a new one.
constinit thread_local int last_observed_descriptor __attribute__((tls_model("initial-exec"))) = -1;

}  // namespace

namespace internal {

int LoadWalkAheadSwitch() {
  SavedErrno saved;
  const ProcessSettings& settings = Settings();
  if (settings.enabled) AddStatisticsSection("walk_ahead", &WriteWalkAheadStatisticsJson);
  const int on = settings.enabled && settings.walk_ahead.enabled && MakeInstance(settings) ? 1 : 0;
  int unknown = -1;
  walk_ahead_switch.compare_exchange_strong(unknown, on, std::memory_order_relaxed);
  return walk_ahead_switch.load(std::memory_order_relaxed);
}

}  // namespace internal

void ObserveDirectoryOpenedByPath(const char* path, int opened_fd) {
  WalkAhead* walk = Instance();
  if (walk == nullptr) return;
  SavedErrno saved;
  last_observed_descriptor = opened_fd;
  walk->OpenedByPath(path, opened_fd);
}

void ObserveDirectoryOpenedAt(int opened_fd) {
  WalkAhead* walk = Instance();
  if (walk == nullptr) return;
  SavedErrno saved;
  last_observed_descriptor = opened_fd;
  walk->OpenedRelative(opened_fd);
}

void ObserveDirectoryStream(int fd) {
  WalkAhead* walk = Instance();
  if (walk == nullptr) return;
  if (fd == last_observed_descriptor) {  // opened with O_DIRECTORY: already counted
    last_observed_descriptor = -1;
    return;
  }
  SavedErrno saved;
  walk->OpenedRelative(fd);
}

bool RequestWalkAhead() {
  if (WalkAheadObserving()) return true;
  SavedErrno saved;
  const ProcessSettings& settings = Settings();
  if (!settings.enabled || settings.walk_ahead.refused || forked_child.load() ||
      !MakeInstance(settings)) {
    return false;
  }
  internal::walk_ahead_switch.store(1, std::memory_order_relaxed);
  return true;
}

bool KeepWalkAheadStats() {
  if (!RequestWalkAhead()) return false;
  WalkAhead* walk = Instance();
  if (walk == nullptr) return false;
  walk->KeepStats();
  return true;
}

bool AnswerStatFromWalkAhead(const struct stat& directory, const char* name, struct stat* status) {
  WalkAhead* walk = Instance();
  if (walk == nullptr || !walk->answers().HasAnswers()) return false;
  return walk->answers().Answer(directory, name, status);
}

void StopWalkAheadAfterFork() {
  forked_child.store(true);
  internal::walk_ahead_switch.store(0, std::memory_order_relaxed);
}

WalkAheadStatistics WalkAheadStatisticsSnapshot() {
  WalkAheadStatistics s;
  s.walks_started = counters.walks_started.load(std::memory_order_relaxed);
  s.roots_walked = counters.roots_walked.load(std::memory_order_relaxed);
  s.roots_refused = counters.roots_refused.load(std::memory_order_relaxed);
  s.program_directories = counters.program_directories.load(std::memory_order_relaxed);
  s.directories_read = counters.directories_read.load(std::memory_order_relaxed);
  s.directories_sampled = counters.directories_sampled.load(std::memory_order_relaxed);
  s.directories_cold = counters.directories_cold.load(std::memory_order_relaxed);
  s.directories_behind = counters.directories_behind.load(std::memory_order_relaxed);
  s.directories_judged_cached = counters.directories_judged_cached.load(std::memory_order_relaxed);
  s.entries_stated = counters.entries_stated.load(std::memory_order_relaxed);
  s.directories_failed = counters.directories_failed.load(std::memory_order_relaxed);
  s.directories_dropped = counters.directories_dropped.load(std::memory_order_relaxed);
  s.rests = counters.rests.load(std::memory_order_relaxed);
  s.probes = counters.probes.load(std::memory_order_relaxed);
  s.probes_cold = counters.probes_cold.load(std::memory_order_relaxed);
  s.walks_stopped_idle = counters.walks_stopped_idle.load(std::memory_order_relaxed);
  s.waits_for_program = counters.waits_for_program.load(std::memory_order_relaxed);
  s.most_ahead = counters.most_ahead.load(std::memory_order_relaxed);
  s.most_queued = counters.most_queued.load(std::memory_order_relaxed);
  s.most_queued_path_bytes = counters.most_queued_path_bytes.load(std::memory_order_relaxed);
  s.most_descriptors = counters.most_descriptors.load(std::memory_order_relaxed);
  s.threads = counters.threads.load(std::memory_order_relaxed);
  s.stats_before_workers = counters.stats_before_workers.load(std::memory_order_relaxed);
  s.cold_checks = counters.cold_checks.load(std::memory_order_relaxed);
  s.cold_checks_of_process = counters.cold_checks_of_process.load(std::memory_order_relaxed);
  s.distance = counters.distance.load(std::memory_order_relaxed);
  if (WalkAhead* walk = instance.load(std::memory_order_acquire); walk != nullptr) {
    const StatAnswers::Counters kept = walk->answers().CountersSnapshot();
    s.stats_kept = kept.entries_kept;
    s.stat_questions = kept.questions;
    s.stat_answers = kept.answers;
    s.stat_directories_kept = kept.directories_kept;
    s.stat_directories_refused = kept.directories_refused;
    s.stat_directories_dropped = kept.directories_dropped;
    s.most_kept_stat_bytes = kept.most_bytes;
  }
  return s;
}

bool WriteWalkAheadStatisticsJson(FILE* out) {
  const WalkAheadStatistics s = WalkAheadStatisticsSnapshot();
  const struct {
    const char* name;
    uint64_t value;
  } fields[] = {
      {"walks_started", s.walks_started},
      {"roots_walked", s.roots_walked},
      {"roots_refused", s.roots_refused},
      {"program_directories", s.program_directories},
      {"directories_read", s.directories_read},
      {"directories_sampled", s.directories_sampled},
      {"directories_cold", s.directories_cold},
      {"directories_behind", s.directories_behind},
      {"directories_judged_cached", s.directories_judged_cached},
      {"entries_stated", s.entries_stated},
      {"directories_failed", s.directories_failed},
      {"directories_dropped", s.directories_dropped},
      {"rests", s.rests},
      {"probes", s.probes},
      {"probes_cold", s.probes_cold},
      {"walks_stopped_idle", s.walks_stopped_idle},
      {"waits_for_program", s.waits_for_program},
      {"most_ahead", s.most_ahead},
      {"most_queued", s.most_queued},
      {"most_queued_path_bytes", s.most_queued_path_bytes},
      {"most_descriptors", s.most_descriptors},
      {"threads", s.threads},
      {"stats_before_workers", s.stats_before_workers},
      {"cold_checks", s.cold_checks},
      {"cold_checks_of_process", s.cold_checks_of_process},
      {"distance", s.distance},
      {"stats_kept", s.stats_kept},
      {"stat_questions", s.stat_questions},
      {"stat_answers", s.stat_answers},
      {"stat_directories_kept", s.stat_directories_kept},
      {"stat_directories_refused", s.stat_directories_refused},
      {"stat_directories_dropped", s.stat_directories_dropped},
      {"most_kept_stat_bytes", s.most_kept_stat_bytes},
      {"limit_kept_stat_bytes", kMaxKeptStatBytes},
      {"limit_queued", kMaxQueuedDirectories},
      {"limit_queued_path_bytes", kMaxQueuedPathBytes},
  };
  if (std::fputs("{", out) < 0) return false;
  bool first = true;
  for (const auto& field : fields) {
    if (std::fprintf(out, "%s\"%s\": %llu", first ? "" : ", ", field.name,
                     static_cast<unsigned long long>(field.value)) < 0) {
      return false;
    }
    first = false;
  }
  return std::fputs("}", out) >= 0;
}

}  // namespace foreactor

extern "C" __attribute__((visibility("default"))) int foreactor_walk_ahead(void) {
  return foreactor::RequestWalkAhead() ? 1 : 0;
}

extern "C" __attribute__((visibility("default"))) int foreactor_walk_ahead_keep_stats(void) {
  return foreactor::KeepWalkAheadStats() ? 1 : 0;
}

extern "C" __attribute__((visibility("default"))) const int* foreactor_walk_ahead_stats_kept_flag(
    void) {
  return foreactor::StatsEverKeptFlag();
}

extern "C" __attribute__((visibility("default"))) int foreactor_walk_ahead_stat(
    const struct stat* directory, const char* name, struct stat* status) {
  if (directory == nullptr || name == nullptr || status == nullptr) return 0;
  return foreactor::AnswerStatFromWalkAhead(*directory, name, status) ? 1 : 0;
}
