// Tests of StatAnswers: which questions are answered, and its bounds.
#include "walk/stat_answers.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace foreactor {
namespace {

struct stat DirectoryStatus(ino_t inode, time_t modified = 100) {
  struct stat status {};
  status.st_dev = 7;
  status.st_ino = inode;
  status.st_mode = S_IFDIR | 0755;
  status.st_mtim.tv_sec = modified;
  status.st_ctim.tv_sec = modified;
  return status;
}

// Entries named `names`, each with its position as st_size.
std::vector<StatAnswers::Entry> Entries(std::initializer_list<const char*> names,
                                        off_t first_size = 0) {
  std::vector<StatAnswers::Entry> entries;
  off_t size = first_size;
  for (const char* name : names) {
    StatAnswers::Entry entry;
    entry.name = name;
    entry.stated = true;
    entry.status.st_size = size++;
    entries.push_back(entry);
  }
  return entries;
}

// The st_size an answer gives, or -1 when there is none.
off_t Asked(StatAnswers* answers, const struct stat& directory, const char* name) {
  struct stat status {};
  status.st_size = -2;
  if (!answers->Answer(directory, name, &status)) {
    EXPECT_EQ(status.st_size, -2) << "nothing is written without an answer";
    return -1;
  }
  return status.st_size;
}

TEST(StatAnswersTest, AnswersEachEntryOfAKeptDirectoryInTheOrderRead) {
  StatAnswers answers(1 << 20);
  const struct stat directory = DirectoryStatus(10);
  EXPECT_FALSE(answers.HasAnswers());
  const StatAnswers::Handle handle = answers.Begin(directory);
  ASSERT_TRUE(handle);
  EXPECT_TRUE(answers.HasAnswers());
  auto entries = Entries({"a", "b", "c"});
  answers.Add(handle, &entries);
  EXPECT_TRUE(entries.empty());
  answers.Finish(handle);
  EXPECT_EQ(Asked(&answers, directory, "a"), 0);
  EXPECT_EQ(Asked(&answers, directory, "b"), 1);
  EXPECT_EQ(Asked(&answers, directory, "c"), 2);
  // Every entry was asked for: the directory is gone.
  EXPECT_FALSE(answers.HasAnswers());
  EXPECT_EQ(Asked(&answers, directory, "a"), -1);
  const StatAnswers::Counters counters = answers.CountersSnapshot();
  EXPECT_EQ(counters.questions, 4u);
  EXPECT_EQ(counters.answers, 3u);
  EXPECT_EQ(counters.entries_kept, 3u);
  EXPECT_EQ(counters.directories_dropped, 0u);
  EXPECT_EQ(counters.bytes, 0u);
  EXPECT_GT(counters.most_bytes, 0u);
}

TEST(StatAnswersTest, EntriesThatAreSkippedOrNotYetKeptAreNotAnswered) {
  StatAnswers answers(1 << 20);
  const struct stat directory = DirectoryStatus(10);
  const StatAnswers::Handle handle = answers.Begin(directory);
  auto first = Entries({"a", "b", "c"});
  answers.Add(handle, &first);
  EXPECT_EQ(Asked(&answers, directory, "b"), 1);  // the program skipped a
  EXPECT_EQ(Asked(&answers, directory, "a"), 0);  // a little behind is looked at too
  EXPECT_EQ(Asked(&answers, directory, "c"), 2);
  EXPECT_EQ(Asked(&answers, directory, "d"), -1);  // not kept yet: the program stats it itself
  auto second = Entries({"d", "e"}, 3);
  answers.Add(handle, &second);
  EXPECT_EQ(Asked(&answers, directory, "e"), 4);  // d, which the program stat'ed, is passed
  EXPECT_EQ(Asked(&answers, directory, "zz"), -1);
}

TEST(StatAnswersTest, AProgramPastTheWalkerIsFoundAgainWhereItIs) {
  StatAnswers answers(1 << 20);
  const struct stat directory = DirectoryStatus(10);
  const StatAnswers::Handle handle = answers.Begin(directory);
  auto first = Entries({"a", "b"});
  EXPECT_EQ(answers.Add(handle, &first), 0u);  // the program has not asked yet
  EXPECT_EQ(Asked(&answers, directory, "a"), 0);
  EXPECT_EQ(Asked(&answers, directory, "b"), 1);
  // The program stats c, d and e itself before the walker keeps them.
  EXPECT_EQ(Asked(&answers, directory, "c"), -1);
  EXPECT_EQ(Asked(&answers, directory, "d"), -1);
  EXPECT_EQ(Asked(&answers, directory, "e"), -1);
  // The walker hears where the program is (position 5: f), and may leap.
  auto behind = Entries({"c", "d"}, 2);
  EXPECT_EQ(answers.Add(handle, &behind), 5u);
  auto caught_up = Entries({"e", "f", "g"}, 4);
  EXPECT_EQ(answers.Add(handle, &caught_up), 0u);
  EXPECT_EQ(Asked(&answers, directory, "f"), 5);
  EXPECT_EQ(Asked(&answers, directory, "g"), 6);
}

TEST(StatAnswersTest, AQuestionAskedTwiceLeavesTheRestAnswered) {
  StatAnswers answers(1 << 20);
  const struct stat directory = DirectoryStatus(10);
  const StatAnswers::Handle handle = answers.Begin(directory);
  auto first = Entries({"a"});
  answers.Add(handle, &first);
  EXPECT_EQ(Asked(&answers, directory, "a"), 0);
  // Asked twice while past the entries kept: counted as two entries.
  EXPECT_EQ(Asked(&answers, directory, "b"), -1);
  EXPECT_EQ(Asked(&answers, directory, "b"), -1);
  auto rest = Entries({"b", "c", "d"}, 1);
  answers.Add(handle, &rest);
  EXPECT_EQ(Asked(&answers, directory, "c"), 2);
  EXPECT_EQ(Asked(&answers, directory, "d"), 3);
}

TEST(StatAnswersTest, AnEntryWhoseStatFailedIsNotAnswered) {
  StatAnswers answers(1 << 20);
  const struct stat directory = DirectoryStatus(10);
  const StatAnswers::Handle handle = answers.Begin(directory);
  auto entries = Entries({"gone", "here"});
  entries[0].stated = false;
  answers.Add(handle, &entries);
  EXPECT_EQ(Asked(&answers, directory, "gone"), -1);
  EXPECT_EQ(Asked(&answers, directory, "here"), 1);
}

TEST(StatAnswersTest, ADirectoryThatChangedSinceItWasReadGetsNoAnswer) {
  StatAnswers answers(1 << 20);
  const StatAnswers::Handle handle = answers.Begin(DirectoryStatus(10, 100));
  auto entries = Entries({"a", "b"});
  answers.Add(handle, &entries);
  // The program's status of the directory is newer: an entry was added or removed.
  EXPECT_EQ(Asked(&answers, DirectoryStatus(10, 101), "a"), -1);
  // And the kept entries are dropped, even for the older status.
  EXPECT_EQ(Asked(&answers, DirectoryStatus(10, 100), "b"), -1);
  EXPECT_EQ(answers.CountersSnapshot().directories_dropped, 1u);
  // Another directory (another inode) is never answered from it.
  const StatAnswers::Handle again = answers.Begin(DirectoryStatus(10, 100));
  auto more = Entries({"a"});
  answers.Add(again, &more);
  EXPECT_EQ(Asked(&answers, DirectoryStatus(11, 100), "a"), -1);
  EXPECT_EQ(Asked(&answers, DirectoryStatus(10, 100), "a"), 0);
}

TEST(StatAnswersTest, DirectoriesPastTheBoundAreNotKept) {
  const size_t entry_bytes = sizeof(StatAnswers::Entry) + 1;
  StatAnswers answers(2 * entry_bytes);
  const StatAnswers::Handle first = answers.Begin(DirectoryStatus(1));
  auto two = Entries({"a", "b"});
  answers.Add(first, &two);
  // Full: the next directory is refused, and so are entries past the bound.
  EXPECT_FALSE(answers.Begin(DirectoryStatus(2)));
  auto third = Entries({"c"});
  answers.Add(first, &third);
  EXPECT_EQ(Asked(&answers, DirectoryStatus(1), "a"), -1);  // the directory was dropped
  const StatAnswers::Counters counters = answers.CountersSnapshot();
  EXPECT_EQ(counters.directories_refused, 2u);
  EXPECT_EQ(counters.bytes, 0u);
  EXPECT_EQ(counters.most_bytes, 2 * entry_bytes);
  // Room again: directories are kept.
  EXPECT_TRUE(answers.Begin(DirectoryStatus(3)));
}

TEST(StatAnswersTest, DirectoriesThatTheProgramHasPassedAreDropped) {
  StatAnswers answers(1 << 30);
  const StatAnswers::Handle skipped = answers.Begin(DirectoryStatus(1));
  auto entries = Entries({"a"});
  answers.Add(skipped, &entries);
  answers.Finish(skipped);
  StatAnswers::Handle last;
  for (ino_t inode = 2; inode < 3 + StatAnswers::kPassedDirectories; ++inode) {
    last = answers.Begin(DirectoryStatus(inode));
    auto one = Entries({"x"});
    answers.Add(last, &one);
  }
  EXPECT_EQ(Asked(&answers, DirectoryStatus(last.inode), "x"), 0);
  EXPECT_EQ(Asked(&answers, DirectoryStatus(1), "a"), -1);
  EXPECT_GE(answers.CountersSnapshot().directories_dropped, 1u);
}

TEST(StatAnswersTest, AHandleOfAReplacedDirectoryKeepsNothing) {
  StatAnswers answers(1 << 20);
  const StatAnswers::Handle old_read = answers.Begin(DirectoryStatus(10));
  const StatAnswers::Handle new_read = answers.Begin(DirectoryStatus(10));
  auto late = Entries({"a"});
  answers.Add(old_read, &late);
  EXPECT_TRUE(late.empty());
  auto entries = Entries({"b"}, 5);
  answers.Add(new_read, &entries);
  EXPECT_EQ(Asked(&answers, DirectoryStatus(10), "a"), -1);
  EXPECT_EQ(Asked(&answers, DirectoryStatus(10), "b"), 5);
}

// A child forked while a walker held the lock reads the counters at exit
// (the statistics file): reading them must not wait for the lock, which no
// thread of the child will ever release.
TEST(StatAnswersTest, ACountersSnapshotInAForkedChildNeverWaitsForTheLock) {
  StatAnswers answers(1 << 20);
  std::atomic<bool> stop{false};
  std::thread walker([&] {  // holds the lock most of the time
    ino_t inode = 1;
    while (!stop.load()) {
      const StatAnswers::Handle handle = answers.Begin(DirectoryStatus(inode++));
      auto entries = Entries({"a", "b", "c", "d"});
      answers.Add(handle, &entries);
      answers.Finish(handle);
      Asked(&answers, DirectoryStatus(inode - 1), "a");
    }
  });
  int hung = 0;
  for (int child_number = 0; child_number < 100; ++child_number) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      const StatAnswers::Counters counters = answers.CountersSnapshot();
      _exit(counters.questions <= counters.answers + counters.questions ? 0 : 1);
    }
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    pid_t done = 0;
    while ((done = waitpid(child, &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline) {
      usleep(1000);
    }
    if (done == 0) {
      ++hung;
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
    } else {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
  }
  stop.store(true);
  walker.join();
  EXPECT_EQ(hung, 0);
}

// In a process of its own: exits 0 when StatsEverKeptFlag() reads 0 until
// a directory is kept (not when one is refused), and stays nonzero once the
// directory is dropped.
void CheckStatsEverKeptFlag() {
  const int* flag = StatsEverKeptFlag();
  auto on = [flag] { return __atomic_load_n(flag, __ATOMIC_RELAXED) != 0; };
  const bool off_at_start = !on();
  StatAnswers refusing(0);  // every directory would pass its bound
  const bool refused = !refusing.Begin(DirectoryStatus(1));
  const bool off_after_refusal = !on();
  StatAnswers answers(1 << 20);
  const struct stat directory = DirectoryStatus(10);
  const StatAnswers::Handle handle = answers.Begin(directory);
  const bool on_once_kept = handle && on();
  auto entries = Entries({"a"});
  answers.Add(handle, &entries);
  answers.Finish(handle);
  const bool answered = Asked(&answers, directory, "a") == 0;
  const bool on_once_dropped = !answers.HasAnswers() && on();
  _exit(off_at_start && refused && off_after_refusal && on_once_kept && answered && on_once_dropped
            ? 0
            : 1);
}

TEST(StatAnswersTest, ProcessFlagTurnsOnWithTheFirstDirectoryKeptAndStaysOn) {
  // A process started afresh: this test's may have kept directories already.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(CheckStatsEverKeptFlag(), testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace foreactor
