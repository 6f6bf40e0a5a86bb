// Tests of foreactor_read_ahead_file(): the range of a file dropped from the
// page cache is read back into it without the caller opening the file, the
// program's descriptors and record locks stay as they were, more hints than
// the queue holds and hints in a forked child are all carried out, a
// caller never waits for ever on a hint thread that stopped progressing,
// hints of cached ranges are left out while they keep being found cached,
// and paths that name no regular file, empty ranges and overflowing ones
// are refused.
#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "engine/test_files.h"
#include "foreactor/foreactor.h"
#include "runtime/path_read_ahead.h"

namespace {

using foreactor::testing::DirectoryEntries;
using foreactor::testing::LockWholeFile;
using foreactor::testing::OpenDescriptorCount;
using foreactor::testing::TempDir;
using foreactor::testing::ThreadIdsNamed;
using foreactor::testing::ThreadsNamed;
using foreactor::testing::WriteLockHeld;

// The first line of /proc/self/task/<task>/<file>, empty when unreadable.
std::string TaskFileLine(const std::string& task, const char* file) {
  std::ifstream in("/proc/self/task/" + task + "/" + file);
  std::string line;
  std::getline(in, line);
  return line;
}

// Every thread of this process: id, name, state, system call and kernel
// wait channel, one line each, after the process's tracer and allowed
// CPUs, for a failure's message.
std::string TaskReport() {
  std::ostringstream report;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("TracerPid:") || line.starts_with("Cpus_allowed_list:")) {
      report << line << "\n";
    }
  }
  for (const std::string& task : DirectoryEntries("/proc/self/task")) {
    if (task == "." || task == "..") continue;
    const std::string stat = TaskFileLine(task, "stat");
    const size_t name_end = stat.rfind(')');
    report << "task " << task << " '" << TaskFileLine(task, "comm") << "' state "
           << (name_end != std::string::npos && name_end + 2 < stat.size()
                   ? stat.substr(name_end + 2, 1)
                   : "?")
           << " syscall [" << TaskFileLine(task, "syscall") << "] wchan ["
           << TaskFileLine(task, "wchan") << "]\n";
  }
  return report.str();
}

constexpr uint64_t kPage = 4096;
constexpr uint64_t kFilePages = 64;

class ReadAheadFileTest : public testing::Test {
 protected:
  void SetUp() override {
    // Hints an earlier test of this process found cached would leave this
    // one's out.
    foreactor::PathReadAhead::ForgetHintsFoundCachedForTest();
    ASSERT_TRUE(directory_.ok());
    path_ = directory_.Path("file");
    ASSERT_TRUE(directory_.WritePatternFile("file", kFilePages * kPage));
    fd_ = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd_, 0);
    ASSERT_EQ(fdatasync(fd_), 0);  // clean pages: POSIX_FADV_DONTNEED drops them
    uint64_t cached = 0, pages = 0;
    if (foreactor_pages_cached(fd_, 0, kPage, &cached, &pages) != 0) {
      GTEST_SKIP() << "the kernel has no cachestat(2): the cached pages cannot be counted";
    }
  }
  void TearDown() override {
    if (fd_ >= 0) close(fd_);
  }

  // Pages of [offset, offset + length) the page cache holds; -1 unknown.
  int64_t CachedPages(uint64_t offset, uint64_t length) {
    uint64_t cached = 0, pages = 0;
    if (foreactor_pages_cached(fd_, offset, length, &cached, &pages) != 0) return -1;
    return static_cast<int64_t>(cached);
  }

  // Waits up to a minute for every page of the range to be cached (a
  // loaded machine may run the hint thread late).
  bool BecomesCached(uint64_t offset, uint64_t length) {
    for (int i = 0; i < 6000; ++i) {
      if (CachedPages(offset, length) == static_cast<int64_t>(length / kPage)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  // Reads the events the inotify descriptor `watch` has within `timeout_ms`
  // (0: those already queued) and calls on_event(mask) for each, in order.
  template <class OnEvent>
  static void ReadEvents(int watch, int timeout_ms, OnEvent&& on_event) {
    pollfd ready{watch, POLLIN, 0};
    if (poll(&ready, 1, timeout_ms) <= 0) return;
    alignas(inotify_event) char events[4096];
    const ssize_t bytes = read(watch, events, sizeof(events));
    for (ssize_t at = 0; at < bytes;) {
      const auto* event = reinterpret_cast<const inotify_event*>(events + at);
      on_event(event->mask);
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }

  // What the inotify descriptor `watch` saw of the file within `seconds`.
  enum class Seen { kNothing, kOpened, kOpenedAndClosed };
  static Seen WatchForOpenAndClose(int watch, int seconds) {
    Seen seen = Seen::kNothing;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (seen != Seen::kOpenedAndClosed && std::chrono::steady_clock::now() < deadline) {
      ReadEvents(watch, 100, [&](uint32_t mask) {
        if ((mask & IN_OPEN) && seen == Seen::kNothing) seen = Seen::kOpened;
        if (seen == Seen::kOpened && (mask & IN_CLOSE_NOWRITE)) seen = Seen::kOpenedAndClosed;
      });
    }
    return seen;
  }

  // The closes the inotify descriptor `watch` saw (IN_CLOSE_NOWRITE: each
  // hint carried out opens and closes the file; watched with IN_OPEN too,
  // since inotify merges identical events in a row) until `count` were
  // seen or `seconds` passed; with 0 seconds, those already queued.
  static int WatchForCloses(int watch, int count, int seconds) {
    int closes = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    do {
      ReadEvents(watch, seconds == 0 ? 0 : 100,
                 [&](uint32_t mask) { closes += (mask & IN_CLOSE_NOWRITE) != 0; });
    } while (closes < count && std::chrono::steady_clock::now() < deadline);
    return closes;
  }

  TempDir directory_;
  std::string path_;
  int fd_ = -1;
};

TEST_F(ReadAheadFileTest, ReadsTheRangeBackIntoThePageCache) {
  posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
  if (CachedPages(0, kFilePages * kPage) != 0) GTEST_SKIP() << "the file's pages stay cached";
  const uint64_t tail = 8 * kPage;
  ASSERT_EQ(foreactor_read_ahead_file(path_.c_str(), (kFilePages - 8) * kPage, tail), 0);
  EXPECT_TRUE(BecomesCached((kFilePages - 8) * kPage, tail));
  // Before the range: not read (the kernel reads what was asked, no more
  // before it).
  EXPECT_EQ(CachedPages(0, kPage), 0);
}

TEST_F(ReadAheadFileTest, LeavesNoDescriptorBehind) {
  const int before = OpenDescriptorCount();
  ASSERT_GT(before, 0);
  posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
  ASSERT_EQ(foreactor_read_ahead_file(path_.c_str(), 0, kPage), 0);
  EXPECT_TRUE(BecomesCached(0, kPage));
  EXPECT_EQ(OpenDescriptorCount(), before);
  // The hints' thread, with a table of its own, is the process's one.
  EXPECT_EQ(ThreadsNamed("foreactor-ahead"), 1);
}

// Closing any descriptor of a file in the process's table releases the
// process's POSIX record locks on it: the hint's open and close must not
// happen there.
TEST_F(ReadAheadFileTest, KeepsTheProgramsRecordLocks) {
  const int writable = open(path_.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(writable, 0);
  ASSERT_TRUE(LockWholeFile(writable));
  ASSERT_TRUE(WriteLockHeld(path_));
  posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
  ASSERT_EQ(foreactor_read_ahead_file(path_.c_str(), 0, 4 * kPage), 0);
  EXPECT_TRUE(BecomesCached(0, 4 * kPage));
  EXPECT_TRUE(WriteLockHeld(path_)) << "the program's record lock was released";
  close(writable);
}

// More hints than the queue holds at once: the caller waits for room, and
// every hint is carried out.
TEST_F(ReadAheadFileTest, CarriesOutMoreHintsThanTheQueueHolds) {
  posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
  if (CachedPages(0, kFilePages * kPage) != 0) GTEST_SKIP() << "the file's pages stay cached";
  for (int round = 0; round < 3; ++round) {
    for (uint64_t page = 0; page < kFilePages; ++page) {
      ASSERT_EQ(foreactor_read_ahead_file(path_.c_str(), page * kPage, kPage), 0);
    }
  }
  EXPECT_TRUE(BecomesCached(0, kFilePages * kPage));
}

// Hints of a range the page cache holds cost the program nothing once the
// thread found kNeedlessInARow of them cached in a row: one call in
// kProbeEvery is carried out, and a probe that finds its range gone starts
// hints again.
TEST_F(ReadAheadFileTest, LeavesOutHintsWhileTheirRangesAreFoundCached) {
  using foreactor::PathReadAhead;
  char page[kPage];
  for (uint64_t index = 0; index < kFilePages; ++index) {
    ASSERT_EQ(pread(fd_, page, kPage, static_cast<off_t>(index * kPage)),
              static_cast<ssize_t>(kPage));
  }
  if (CachedPages(0, kFilePages * kPage) != kFilePages) GTEST_SKIP() << "the file is not cached";
  ASSERT_TRUE(directory_.WritePatternFile("sentinel", kPage));  // cached as written
  const std::string sentinel = directory_.Path("sentinel");
  const int watch = inotify_init1(IN_CLOEXEC);
  const int sentinel_watch = inotify_init1(IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(sentinel_watch, 0);
  ASSERT_GE(inotify_add_watch(watch, path_.c_str(), IN_OPEN | IN_CLOSE_NOWRITE), 0);
  ASSERT_GE(inotify_add_watch(sentinel_watch, sentinel.c_str(), IN_OPEN | IN_CLOSE_NOWRITE), 0);
  const int in_a_row = static_cast<int>(PathReadAhead::kNeedlessInARow);
  for (int hint = 0; hint < in_a_row; ++hint) {
    ASSERT_EQ(foreactor_read_ahead_file(path_.c_str(), static_cast<uint64_t>(hint) * kPage, kPage),
              0);
  }
  ASSERT_EQ(WatchForCloses(watch, in_a_row, 60), in_a_row) << "hints not carried out";
  // Of the next kProbeEvery calls one is carried out; the call after them
  // (the next probe, of the sentinel file) says when the thread got there.
  const int probe_every = static_cast<int>(PathReadAhead::kProbeEvery);
  for (int hint = 0; hint < probe_every; ++hint) {
    ASSERT_EQ(foreactor_read_ahead_file(path_.c_str(), 0, kPage), 0);
  }
  ASSERT_EQ(foreactor_read_ahead_file(sentinel.c_str(), 0, kPage), 0);
  ASSERT_EQ(WatchForCloses(sentinel_watch, 1, 60), 1)
      << "the probe of the sentinel not carried out";
  EXPECT_EQ(WatchForCloses(watch, probe_every, 0), 1);
  // The range gone: the probe among the next kProbeEvery calls finds it
  // missing, and the hints after it are carried out again.
  posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
  if (CachedPages(0, kFilePages * kPage) != 0) GTEST_SKIP() << "the file's pages stay cached";
  for (int hint = 0; hint < probe_every; ++hint) {
    ASSERT_EQ(foreactor_read_ahead_file(path_.c_str(), 0, kPage), 0);
  }
  ASSERT_EQ(WatchForCloses(watch, 1, 60), 1);
  ASSERT_EQ(foreactor_read_ahead_file(path_.c_str(), 8 * kPage, 4 * kPage), 0);
  EXPECT_TRUE(BecomesCached(8 * kPage, 4 * kPage));
  close(watch);
  close(sentinel_watch);
}

// The hint thread's id once it waits for hints (in a futex wait, holding
// nothing); -1 when it does not within a minute.
pid_t IdleHintThread() {
  for (int i = 0; i < 6000; ++i) {
    const std::vector<pid_t> named = ThreadIdsNamed("foreactor-ahead");
    const pid_t thread = named.empty() ? -1 : named.front();
    if (thread > 0 && TaskFileLine(std::to_string(thread), "syscall").starts_with("202 ")) {
      return thread;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

// How a forked child's hint ended, as the child's exit status.
enum ChildOutcome : int {
  kCarriedOut = 0,      // the file was opened and closed, the range read in
  kNotQueued = 1,       // foreactor_read_ahead_file() refused the hint
  kNoHintThread = 2,    // the child has no hint thread of its own
  kRangeNotCached = 3,  // the file was opened and closed, the range not read
  kNoWatch = 4,         // inotify could not watch the file
  kNeverOpened = 5,     // the child's hint thread runs, but never opened the file
  kNeverClosed = 6,     // the file was opened, but not closed again
};

// A forked child has no thread of its parent's: its hints start one of its
// own.  The child watches the file with inotify, so that the hint thread's
// open and close of it prove the hint was carried out, and checks the range
// right after the close (readahead(2) puts the range's pages into the page
// cache before it returns), not seconds later when the machine may have
// reclaimed them.  The child waits up to a minute: the hint is carried out
// by another thread, which a loaded machine may run late (CI twice saw no
// open within 10 s, while thousands of runs here take milliseconds); the
// exit status tells which step did not happen.
TEST_F(ReadAheadFileTest, WorksInAForkedChild) {
  // The parent's thread reads another file: only the child's opens this one.
  ASSERT_TRUE(directory_.WritePatternFile("other", kPage));
  ASSERT_EQ(foreactor_read_ahead_file(directory_.Path("other").c_str(), 0, kPage), 0);
  // The parent's thread has started and waits before the fork.  Forked
  // while that thread was still starting, the child's own thread, under
  // ASan, waited for ever before it ran a line of ours (no thread named
  // foreactor-ahead in the child, an unnamed one in a futex wait: status 2,
  // in CI and in about one run in eight of the ASan build).
  ASSERT_GT(IdleHintThread(), 0);
  posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
  if (CachedPages(0, kFilePages * kPage) != 0) GTEST_SKIP() << "the file's pages stay cached";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int watch = inotify_init1(IN_CLOEXEC);
    if (watch < 0 || inotify_add_watch(watch, path_.c_str(), IN_OPEN | IN_CLOSE_NOWRITE) < 0) {
      _exit(kNoWatch);
    }
    if (foreactor_read_ahead_file(path_.c_str(), 8 * kPage, 4 * kPage) != 0) _exit(kNotQueued);
    switch (WatchForOpenAndClose(watch, 60)) {
      case Seen::kNothing: {
        // What every thread of the child is doing, for the failure's output.
        const std::string report = TaskReport();
        fprintf(stderr, "forked child, no open of the file in 60 s:\n%s", report.c_str());
        _exit(ThreadsNamed("foreactor-ahead") == 0 ? kNoHintThread : kNeverOpened);
      }
      case Seen::kOpened:
        _exit(kNeverClosed);
      case Seen::kOpenedAndClosed:
        break;
    }
    _exit(CachedPages(8 * kPage, 4 * kPage) == 4 ? kCarriedOut : kRangeNotCached);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kCarriedOut);
}

// A hint thread that stopped progressing (held here by a tracer; in a
// program, an open stuck on a dead network mount) never hangs the program:
// a caller finding the ring full waits a bounded time and drops its hint,
// the next is dropped too while the thread has taken nothing, and once the
// thread runs again the queued hints are carried out and new ones taken.
TEST_F(ReadAheadFileTest, NeverWaitsForEverOnAThreadThatStoppedProgressing) {
  ASSERT_EQ(foreactor_read_ahead_file(path_.c_str(), 0, kPage), 0);
  const pid_t thread = IdleHintThread();
  ASSERT_GT(thread, 0) << TaskReport();
  int stopped[2], release[2];
  ASSERT_EQ(pipe(stopped), 0);
  ASSERT_EQ(pipe(release), 0);
  const pid_t tracer = fork();
  ASSERT_GE(tracer, 0);
  if (tracer == 0) {
    // Stops the one thread (a ptrace interrupt stops no other), reports
    // it, and lets it go when the test writes to `release`.
    char byte = 0;
    int status = 0;
    if (ptrace(PTRACE_SEIZE, thread, nullptr, nullptr) != 0 ||
        ptrace(PTRACE_INTERRUPT, thread, nullptr, nullptr) != 0 ||
        waitpid(thread, &status, __WALL) != thread || write(stopped[1], &byte, 1) != 1) {
      _exit(1);
    }
    (void)read(release[0], &byte, 1);
    ptrace(PTRACE_DETACH, thread, nullptr, nullptr);
    _exit(0);
  }
  close(stopped[1]);
  close(release[0]);
  char byte = 0;
  if (read(stopped[0], &byte, 1) != 1) {
    int status = 0;
    waitpid(tracer, &status, 0);
    GTEST_SKIP() << "the hint thread could not be stopped by ptrace";
  }
  posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
  for (int hint = 0; hint < foreactor::PathReadAhead::kQueueEntries; ++hint) {
    ASSERT_EQ(foreactor_read_ahead_file(path_.c_str(), static_cast<uint64_t>(hint) * kPage, kPage),
              0);
  }
  // The ring is full and its thread stopped: the next hint is dropped.
  auto full = std::async(std::launch::async,
                         [&] { return foreactor_read_ahead_file(path_.c_str(), 0, kPage); });
  const bool returned = full.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  EXPECT_TRUE(returned) << "a hint waited 30 s for room the stopped thread never made";
  if (returned) {
    EXPECT_EQ(full.get(), -1);
    EXPECT_EQ(foreactor_read_ahead_file(path_.c_str(), 0, kPage), -1);
  }
  ASSERT_EQ(write(release[1], &byte, 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(tracer, &status, 0), tracer);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (!returned) full.get();
  close(stopped[0]);
  close(release[1]);
  EXPECT_TRUE(BecomesCached(0, kFilePages * kPage));
  EXPECT_EQ(foreactor_read_ahead_file(path_.c_str(), 0, kPage), 0);
}

TEST_F(ReadAheadFileTest, RefusesWhatIsNoRegularFileAndBadRanges) {
  EXPECT_EQ(foreactor_read_ahead_file(directory_.Path("missing").c_str(), 0, kPage), -1);
  EXPECT_EQ(foreactor_read_ahead_file(directory_.path().c_str(), 0, kPage), -1);  // a directory
  const std::string fifo = directory_.Path("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Refused without opening it (an open for reading would wait for a writer).
  EXPECT_EQ(foreactor_read_ahead_file(fifo.c_str(), 0, kPage), -1);
  EXPECT_EQ(foreactor_read_ahead_file(nullptr, 0, kPage), -1);
  EXPECT_EQ(foreactor_read_ahead_file(path_.c_str(), 0, 0), -1);
  EXPECT_EQ(foreactor_read_ahead_file(path_.c_str(), UINT64_MAX - 10, kPage), -1);
}

}  // namespace
