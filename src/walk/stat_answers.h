// stat_answers.h: the stats walk-ahead made, kept so that the program's
// own stat of the same entry can be answered without a system call.
//
// Walk-ahead stats every entry of a directory it reads ahead of the program
// (fstatat with AT_SYMLINK_NOFOLLOW).  The program then makes the same call
// on the same entry, on an inode walk-ahead has just loaded: on a hot tree
// three quarters of du's time is those calls.  When a plugin asks for it
// (foreactor_walk_ahead_keep_stats), walk-ahead keeps its results here, by
// directory and in the order it read them, and the plugin answers the
// program's stat of an entry from them (foreactor_walk_ahead_stat), as a
// graph answers a call from the result of the same call issued early.
//
// Which directory.  A directory is kept under the device, inode number,
// modification time and change time that walk-ahead's fstat of it gave once
// it had read it.  A question names the directory by the status the
// program holds of it, and is answered only when all four are equal: a
// directory whose entries changed in between (created, removed, renamed
// in or out) has another modification time, one replaced by another has
// another inode, and either gets no answer.  An entry's own status is the
// one walk-ahead's stat returned, like the result of any call issued early.
//
// Bounds.  The entries kept take at most `max_bytes` (their status and
// name); a directory that would pass it is not kept (walk-ahead still reads
// it).  A directory is dropped once the program has asked for its last
// entry, and when the program asks for a directory kept more than
// kPassedDirectories directories after another that is still kept, that
// one is dropped: the program has passed it.
//
// Thread-safe: walk-ahead's threads add, the program's threads ask.
#ifndef FOREACTOR_WALK_STAT_ANSWERS_H_
#define FOREACTOR_WALK_STAT_ANSWERS_H_

#include <sys/stat.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace foreactor {

// A word of the process that is 0 until some StatAnswers keeps its first
// directory and nonzero from then on (it never goes back to 0): while it
// reads 0, no question can be answered.  Read it with a relaxed atomic load;
// foreactor_walk_ahead_stats_kept_flag() hands it to plugins.
const int* StatsEverKeptFlag();

class StatAnswers {
 public:
  // A directory kept more than this many directories before the one the
  // program asks about is dropped (the program has passed it).
  static constexpr uint64_t kPassedDirectories = 4096;
  // How far past the entry the program asked for last the next question is
  // looked for (walker and program read a directory in the same order; an
  // entry the walker has not kept yet, or the program skips, is passed).
  static constexpr size_t kSearchWindow = 64;
  // And how far before it: a question the program repeats, or one counted
  // as past the entries kept that was not, must not leave the rest of the
  // directory unanswered.
  static constexpr size_t kSearchBehind = 4;

  // One entry as walk-ahead stat'ed it.
  struct Entry {
    std::string name;
    bool stated = false;  // false: not stat'ed (passed by), or its stat failed
    struct stat status {};
  };

  // What happened so far (each counter only grows, except bytes).
  struct Counters {
    uint64_t directories_kept = 0;     // directories whose entries were kept
    uint64_t directories_refused = 0;  // not kept: the bytes would have passed the bound
    uint64_t directories_dropped = 0;  // dropped before the program asked for every entry
    uint64_t entries_kept = 0;
    uint64_t questions = 0;   // questions the program asked
    uint64_t answers = 0;     // questions answered
    uint64_t bytes = 0;       // bytes kept now
    uint64_t most_bytes = 0;  // most bytes kept at once
  };

  explicit StatAnswers(size_t max_bytes);

  StatAnswers(const StatAnswers&) = delete;
  StatAnswers& operator=(const StatAnswers&) = delete;

  // Walk-ahead's side --------------------------------------------------

  // A directory being kept.  False when it is not (over the bound, out of
  // memory): then Add() and Finish() do nothing.
  struct Handle {
    dev_t device = 0;
    ino_t inode = 0;
    uint64_t number = 0;  // 0: not kept
    explicit operator bool() const { return number != 0; }
  };

  // Starts keeping the entries of the directory whose fstat is `directory`.
  // A directory kept already under the same device and inode is replaced.
  // Never throws.
  Handle Begin(const struct stat& directory);

  // Appends `entries` (in the order read) to the directory of `handle`, and
  // empties `entries`.  Nothing is kept when the directory was dropped; one
  // that would pass the bound is dropped.  Returns the position (counted in
  // entries, from 0) of the entry the program asks about next when the
  // program is past the entries kept (it stat'ed the others itself: the
  // walker may leap there), else 0.  Never throws.
  size_t Add(const Handle& handle, std::vector<Entry>* entries);

  // The directory of `handle` has no more entries: once the program has
  // asked for its last, it is dropped.
  void Finish(const Handle& handle);

  // The program's side ---------------------------------------------------

  // Answers a stat (AT_SYMLINK_NOFOLLOW) of entry `name` of the directory
  // whose status the program holds as `directory`: true with `*status`
  // written when that directory is kept under the same status and its
  // entry was stat'ed; false, writing nothing, otherwise.  Never throws.
  bool Answer(const struct stat& directory, const char* name, struct stat* status);

  // True when some directory is kept: a question may be answered.  One
  // relaxed load.
  bool HasAnswers() const { return kept_directories_.load(std::memory_order_relaxed) > 0; }

  // The counters, read without the lock: it never waits (a child forked
  // while a walker held the lock writes its statistics at exit too).
  Counters CountersSnapshot() const;

 private:
  struct Key {
    dev_t device;
    ino_t inode;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const {
      return std::hash<uint64_t>()(static_cast<uint64_t>(key.inode) * 0x9e3779b97f4a7c15u ^
                                   static_cast<uint64_t>(key.device));
    }
  };
  struct Directory {
    uint64_t handle = 0;  // also its order: handles grow as directories are begun
    struct timespec modified {};
    struct timespec changed {};
    std::vector<Entry> entries;
    // The position of the entry the program asks about next: past the last
    // one it asked about and was kept, plus one for each question asked
    // while it was past the entries kept.
    size_t next = 0;
    bool finished = false;
    size_t bytes = 0;
  };
  using Directories = std::unordered_map<Key, std::unique_ptr<Directory>, KeyHash>;

  static size_t BytesOf(const Entry& entry) { return sizeof(Entry) + entry.name.size(); }
  // The kept directory of `handle`, or end().  Caller holds mutex_.
  Directories::iterator Find(const Handle& handle);
  // Drops the directory at `where`.  Caller holds mutex_.
  void Drop(Directories::iterator where, bool asked_for_every_entry);
  // Forgets the oldest handles whose directories are gone.  Caller holds mutex_.
  void TrimOrder();
  // Drops the directories kept more than kPassedDirectories before
  // `handle`.  Caller holds mutex_.
  void DropPassed(uint64_t handle);

  const size_t max_bytes_;
  std::mutex mutex_;
  Directories directories_;
  // Handles in the order begun, with their keys: the oldest first.
  std::deque<std::pair<uint64_t, Key>> order_;
  uint64_t next_handle_ = 1;
  uint64_t last_asked_ = 0;  // the handle of the directory of the last question
  size_t bytes_ = 0;         // bytes kept now
  // Counters' fields, changed under mutex_ and read without it.
  struct SharedCounters {
    std::atomic<uint64_t> directories_kept{0}, directories_refused{0}, directories_dropped{0},
        entries_kept{0}, questions{0}, answers{0}, bytes{0}, most_bytes{0};
  };
  SharedCounters counters_;
  std::atomic<size_t> kept_directories_{0};
};

}  // namespace foreactor

#endif  // FOREACTOR_WALK_STAT_ANSWERS_H_
