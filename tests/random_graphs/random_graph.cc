// random_graph: the interpreter of the random-graph differential test.
//
// For each seed it generates a random "function" (a tree of statements:
// system calls, two-way branches, nested loops, blocks that open a file, use
// it and close it, weak edges where the function may return early), builds
// the foreaction graph that describes it through the C API, and runs the
// function's path with real system calls on real files inside a scope.
// Everything the function observes is printed: return values, errno (after
// success too), buffer hashes, stat fields, dirents, file positions, final
// file contents and sizes, the descriptors left open.  The same seeds run
// with foreactor off and on must print the same text.
//
// The plugin (the graph's callbacks) knows the function's intended path,
// precomputed from the seed, but is sometimes wrong on purpose:
//  - arguments of pure calls that differ from the program's (offset,
//    length, descriptor, path), or a pure call replaced by another type;
//  - branch choices that name the other arm (only when both arms are pure:
//    a non-pure call issued on a wrong guess could not be undone, which is
//    a plugin bug no runtime can hide);
//  - arguments that are "not yet" for a while, or forever;
//  - the function returns early at weak edges the plugin does not foresee.
// Arguments for non-pure calls are either exact or "not yet" (same reason).
//
// With --look-ahead, the function also tells foreactor that it may look
// ahead (foreactor_scope_look_ahead) before some calls, and always before
// its first one in graphs that follow from the look-ahead
// (foreactor_graph_follow_from_look_ahead, half the seeds); most seeds get a
// scan loop of preads alone (in file order or scattered, often of 17-64
// iterations, of a file up to 1 MiB); loops get counts
// (foreactor_graph_set_loop_count) that are right, short of the loop, past
// its end, known after the loop's first read, or never known; and the data
// files start out of the page cache.  Counts and look-aheads may only
// change what foreactor warms, never what the function sees.
//
// Usage: random_graph WORKDIR FIRST_SEED COUNT [--plan] [--avoid-known-bugs
//                     [--writes-past-early-returns]] [--linked-reads]
//                     [--look-ahead]
//   WORKDIR must be empty (it is reused by every seed).  Each seed's case
//   directory is WORKDIR/case; paths are printed relative to it.
//   --plan prints each seed's generated function before its calls.
//   Environment: FOREACTOR* as usual; RANDOM_GRAPH_TRACE_CALLBACKS=1 prints
//   every result callback on stderr.
//   Per graph ("rg_<seed>") the depth is set from the seed through
//   FOREACTOR_DEPTH_rg_<seed> (exact: FOREACTOR_EXACT_DEPTH_rg_<seed>=1,
//   except for graphs that follow from the look-ahead, which an exact depth
//   would follow from the scope's entry) unless RANDOM_GRAPH_FIXED_DEPTH is
//   set.
//
// stderr gets one line per seed:
//   random_graph: seed S depth D: callbacks violations=V reported=R
// (result callbacks whose value or order disagreed with what the program
// saw, in seeds without wrong guesses; the test checks V == 0).
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "foreactor/foreactor.h"
#include "lettered_file.h"
#include "observation.h"

using observation::ErrnoName;
using observation::Format;
using observation::Hash;

namespace {

constexpr int kErrnoSentinel = 4242;
constexpr unsigned char kFillByte = 0xA5;
constexpr int kDataFiles = 4;                  // data0 .. data3
constexpr int kFixedSlots = 5;                 // data0 rw, data1 ro, data2 rw, dir, pipe
constexpr int kSlots = 8;                      // 5 fixed + 3 opened inside the scope
constexpr int64_t kFrozenAccess = 1900000000;  // 2030: reads never update atime
constexpr int64_t kFrozenModify = 946684800;   // 2000

// --avoid-known-bugs: generate only functions that stay clear of the
// runtime's known differences (docs/RELIABILITY.md, "Open findings"):
// writes are positional, go to data2 only (which no read, stat or open
// touches) and never overlap; opens and getdents64 are never issued early
// (the plugin says "not yet" for them), and neither is any non-pure call in
// a function that returns early and no close happens inside the scope (the function
// closes its files after it); no lseek on the directory; the read of a
// linked copy reads a regular file and is predicted exactly and at once.
bool avoid_known_bugs = false;
// --writes-past-early-returns: with --avoid-known-bugs, still give the
// arguments of non-pure calls in functions that return early (replays the
// finding "non-pure call issued past the weak edge the program returns at").
bool writes_past_early_returns = false;
// --linked-reads: half of the linked pairs link a pread to a second pread
// (of a fixed readable slot) instead of to a pwrite of its bytes.  An
// option, so that every other seed still makes the function it made when
// its finding was recorded.
bool linked_reads = false;
// --look-ahead: look-aheads, scan loops, loop counts and cold data files
// (see the top).  An option for the same reason as --linked-reads.
bool look_ahead = false;
// RANDOM_GRAPH_TRACE_CALLBACKS set: every result callback is printed on stderr.
bool trace_callbacks = false;

// ------------------------------------------------------------- randomness

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class Random {
 public:
  explicit Random(uint64_t seed) : state_(Mix(seed)) {}
  uint64_t Next() { return state_ = Mix(state_); }
  // Uniform in [0, bound).
  uint64_t Below(uint64_t bound) { return bound == 0 ? 0 : Next() % bound; }
  bool Chance(unsigned percent) { return Below(100) < percent; }
  template <class T>
  const T& Pick(const std::vector<T>& items) {
    return items[Below(items.size())];
  }

 private:
  uint64_t state_;
};

std::string Bytes(size_t count, uint64_t seed) {
  std::string bytes(count, '\0');
  Random random(seed);
  for (size_t i = 0; i < count; i += 8) {
    uint64_t word = random.Next();
    for (size_t j = 0; j < 8 && i + j < count; ++j)
      bytes[i + j] = static_cast<char>(word >> (8 * j));
  }
  return bytes;
}

// ------------------------------------------------------------- the function

using Iterations = std::vector<uint64_t>;

// Identifies one visit: a node and the iteration indices of its loops.
struct VisitKey {
  int node;
  Iterations iterations;
  bool operator<(const VisitKey& other) const {
    return node != other.node ? node < other.node : iterations < other.iterations;
  }
};

// What a call statement does; the visit's own numbers come from hashing.
struct CallTemplate {
  foreactor_call_type type = FOREACTOR_CALL_PREAD;
  int slot = 0;        // descriptor slot (fd-based calls)
  int write_slot = 0;  // linked copy: the slot the pwrite goes to
  int open_slot = -1;  // OPEN/OPENAT: the slot the new descriptor goes to
  std::string path;    // OPEN/OPENAT/FSTATAT: relative to the case directory
  int flags = 0;
  unsigned mode = 0;
  size_t length = 0;
  int64_t offset_span = 1;   // explicit offsets are drawn from [0, span)
  bool linked_copy = false;  // pread from slot, then pwrite of those bytes to write_slot
  bool linked_read = false;  // pread from slot, then a linked pread of second_read_slot
  int second_read_slot = 0;  // linked read: the slot the second pread reads
  bool in_order = false;     // pread of a scan loop: at base_offset + iteration x length
  int64_t base_offset = 0;

  // A pread linked to the call of a second node (statement.second_node).
  bool linked() const { return linked_copy || linked_read; }
};

struct Statement {
  enum Kind { kCall, kIf, kLoop } kind = kCall;
  CallTemplate call;
  bool weak_after = false;                   // kCall: the edge out of the call node is weak
  int node = -1;                             // kCall: syscall node (linked copy: the pread)
  int second_node = -1;                      // linked pair: the pwrite or second pread node
  int branch = -1;                           // kIf / kLoop: the branch node
  std::vector<std::vector<Statement>> arms;  // kIf: two arms; kLoop: arms[0] is the body
  bool pure = true;                          // contains only pure calls (recursively)
  bool wrong_choices = false;                // kIf: the plugin names the other arm sometimes
  int loop_index = -1;                       // kLoop: position of the loop in the nesting
  bool scan = false;                         // kLoop: a scan loop of preads alone (--look-ahead)
  bool long_loop = false;                    // kLoop: runs 17-64 times instead of 1-4
  // kLoop: what the plugin's loop-count callback answers (--look-ahead).
  enum CountMode { kNoCount, kExact, kShort, kPast, kAfterFirstRead, kNever };
  CountMode count_mode = kNoCount;
};

// One call of the intended path.
struct Event {
  VisitKey key;
  foreactor_call actual{};       // what the program calls
  foreactor_call predicted{};    // what the plugin answers
  std::vector<size_t> segments;  // readv/preadv: the program's iovec lengths
  int fd_from_event = -1;        // fd is the result of this earlier (open) event
  int predicted_fd_from_event = -1;
  int data_from_event = -1;  // the bytes this earlier read produced are written
  bool pure = true;
  bool never_ready = false;
  int lazy_queries = 0;            // "not yet" this many times first
  bool exit_after = false;         // the program returns after this call
  bool look_ahead_before = false;  // foreactor_scope_look_ahead() before this call
  bool stable_stat = true;
};

struct Choice {
  int actual = 0;
  int predicted = 0;
};

class Case {
 public:
  Case(uint64_t seed, std::string root) : seed_(seed), root_(std::move(root)), random_(seed) {}

  uint64_t seed() const { return seed_; }
  const std::string& root() const { return root_; }

  void Generate();
  foreactor_graph* BuildGraph(char* error, size_t error_size);
  void Trace();

  // Files before the scope.
  void MakeFiles();
  void OpenFixedSlots();

  std::vector<Statement> body;
  std::vector<Event> events;
  std::map<VisitKey, int> event_of;    // visit -> index in events
  std::map<VisitKey, Choice> choices;  // branch visit -> choice
  std::vector<int> node_kind;          // node id -> foreactor_call_type, -1 for branches
  std::vector<const Statement*> node_statement;
  int fixed_fd[kFixedSlots] = {-1, -1, -1, -1, -1};
  bool wrong_guesses = false;
  bool returns_early = false;       // the program returns at a weak edge
  bool follows_look_ahead = false;  // foreactor_graph_follow_from_look_ahead (--look-ahead)
  std::deque<std::string> storage;  // bytes and paths calls point into
  std::deque<std::vector<struct iovec>> vectors;
  std::vector<std::string> created_names;

 private:
  std::vector<Statement> Block(int depth, int budget, bool in_loop, int open_slots);
  Statement Call(int open_slots);
  Statement ScanLoop(Random& random);
  void AddLoopCounts(std::vector<Statement>& statements, Random& random);
  void Number(std::vector<Statement>& statements, foreactor_graph* graph, std::vector<int>& ends,
              std::vector<bool>& ends_weak, std::vector<int>& end_child_of, int& first);
  void Walk(const std::vector<Statement>& statements, Iterations& iterations);
  void AddEvent(const Statement& statement, Iterations& iterations);
  int Connect(foreactor_graph* graph, std::vector<int>& ends, std::vector<bool>& weak,
              std::vector<int>& child_of, int to);
  const char* Keep(std::string text) {
    storage.push_back(std::move(text));
    return storage.back().c_str();
  }

  uint64_t seed_;
  std::string root_;
  Random random_;
  int loops_ = 0;
  int calls_ = 0;
  // Simulation of the intended path, for implicit offsets.
  int64_t file_size_[kDataFiles] = {};
  int64_t position_[kSlots] = {};
  int slot_file_[kSlots] = {0, 1, 2, -1, -1, -1, -1, -1};
  int slot_open_event_[kSlots] = {-1, -1, -1, -1, -1, -1, -1, -1};
  bool weak_pending_ = false;  // a weak edge lies on the path since the last exit decision
  int exits_left_ = 0;
  int exit_countdown_ = 0;
};

bool IsPure(foreactor_call_type type, int flags) {
  switch (type) {
    case FOREACTOR_CALL_OPEN:
    case FOREACTOR_CALL_OPENAT:
      return (flags & (O_CREAT | O_TRUNC)) == 0;
    case FOREACTOR_CALL_READ:
    case FOREACTOR_CALL_PREAD:
    case FOREACTOR_CALL_FSTAT:
    case FOREACTOR_CALL_FSTATAT:
    case FOREACTOR_CALL_GETDENTS64:
    case FOREACTOR_CALL_READV:
    case FOREACTOR_CALL_PREADV:
      return true;
    default:
      return false;
  }
}

const std::vector<std::string>& OpenablePaths() {
  static const std::vector<std::string> paths = {"data0", "data1",   "data2",    "data3",
                                                 "dir",   "missing", "dir/e001", "dir/sub"};
  return paths;
}

Statement Case::Call(int open_slots) {
  Statement statement;
  CallTemplate& call = statement.call;
  // Slots usable now: the fixed ones and the ones opened by enclosing blocks.
  std::vector<int> readable = {0, 1, 2};
  std::vector<int> writable = {0, 2};
  if (avoid_known_bugs) {
    readable = {0, 1};
    writable = {2};
  }
  for (int slot = kFixedSlots; slot < kFixedSlots + open_slots; ++slot) readable.push_back(slot);
  const uint64_t kind = random_.Below(100);
  call.length = random_.Pick(std::vector<size_t>{1, 100, 512, 4096, 5000, 8192, 20000});
  call.offset_span = random_.Pick(std::vector<int64_t>{1, 4096, 30000});
  if (kind < 22) {
    call.type = FOREACTOR_CALL_PREAD;
    call.slot = random_.Pick(readable);
  } else if (kind < 32) {
    call.type = FOREACTOR_CALL_READ;
    call.slot = random_.Chance(10) ? 4 : random_.Pick(readable);
  } else if (kind < 38) {
    call.type = random_.Chance(50) ? FOREACTOR_CALL_READV : FOREACTOR_CALL_PREADV;
    call.slot = random_.Pick(readable);
  } else if (kind < 46) {
    call.type = FOREACTOR_CALL_PWRITE;
    call.slot = random_.Pick(writable);
    call.length = random_.Pick(std::vector<size_t>{1, 100, 4096, 6000});
  } else if (kind < 51) {
    call.type = avoid_known_bugs ? FOREACTOR_CALL_PWRITE : FOREACTOR_CALL_WRITE;
    call.slot = random_.Pick(writable);
    call.length = random_.Pick(std::vector<size_t>{1, 100, 4096, 6000});
  } else if (kind < 54) {
    call.type =
        random_.Chance(50) && !avoid_known_bugs ? FOREACTOR_CALL_WRITEV : FOREACTOR_CALL_PWRITEV;
    call.slot = random_.Pick(writable);
    call.length = random_.Pick(std::vector<size_t>{3, 100, 5000});
  } else if (kind < 63) {
    call.type = FOREACTOR_CALL_FSTAT;
    call.slot = random_.Chance(15) ? random_.Pick(std::vector<int>{3, 4}) : random_.Pick(readable);
  } else if (kind < 71) {
    call.type = FOREACTOR_CALL_FSTATAT;
    call.slot = 3;  // relative to the directory, or AT_FDCWD-like absolute paths
    call.path = random_.Pick(std::vector<std::string>{"e000", "e003", "sub", "nothing", "link"});
    call.flags = random_.Chance(30) ? AT_SYMLINK_NOFOLLOW : 0;
  } else if (kind < 78) {
    call.type = FOREACTOR_CALL_GETDENTS64;
    call.slot = 3;
    call.length = random_.Pick(std::vector<size_t>{64, 200, 1024, 32768});
  } else if (kind < 84) {
    call.type = FOREACTOR_CALL_LSEEK;
    call.slot = avoid_known_bugs     ? random_.Pick(readable)
                : random_.Chance(20) ? 3
                                     : random_.Pick(readable);
  } else if (kind < 90) {
    call.type = FOREACTOR_CALL_PREAD;
    call.linked_copy = true;
    call.slot = avoid_known_bugs ? random_.Pick(std::vector<int>{0, 1}) : random_.Pick(readable);
    call.write_slot = random_.Pick(writable);
    call.length = random_.Pick(std::vector<size_t>{100, 4096, 8000});
    if (linked_reads && random_.Chance(50)) {
      call.linked_copy = false;
      call.linked_read = true;
      call.second_read_slot = random_.Pick(std::vector<int>{0, 1});
    }
  } else {
    call.type = random_.Chance(50) ? FOREACTOR_CALL_FSTATAT : FOREACTOR_CALL_PREAD;
    call.slot = call.type == FOREACTOR_CALL_FSTATAT ? 3 : random_.Pick(readable);
    call.path = "e010";
  }
  ++calls_;
  statement.pure = IsPure(call.type, call.flags) && !call.linked_copy;  // a read pair is pure
  return statement;
}

// A block of statements; `open_slots` dynamic slots are open around it.
std::vector<Statement> Case::Block(int depth, int budget, bool in_loop, int open_slots) {
  std::vector<Statement> statements;
  const int count = 1 + static_cast<int>(random_.Below(static_cast<uint64_t>(budget)));
  for (int i = 0; i < count && (i == 0 || calls_ < 40); ++i) {
    const uint64_t kind = random_.Below(100);
    if (i > 0 && depth < 3 && kind < 15) {
      Statement branch;
      branch.kind = Statement::kIf;
      for (int arm = 0; arm < 2; ++arm) {
        branch.arms.push_back(Block(depth + 1, 2, in_loop, open_slots));
        for (const Statement& inner : branch.arms.back()) branch.pure = branch.pure && inner.pure;
      }
      bool opens = false;
      for (const auto& arm : branch.arms) {
        for (const Statement& inner : arm) {
          opens = opens || inner.kind != Statement::kCall ||
                  inner.call.type == FOREACTOR_CALL_OPEN ||
                  inner.call.type == FOREACTOR_CALL_OPENAT;
        }
      }
      branch.wrong_choices =
          wrong_guesses && branch.pure && random_.Chance(60) && !(avoid_known_bugs && opens);
      statements.push_back(std::move(branch));
    } else if (i > 0 && depth < 3 && loops_ < FOREACTOR_MAX_LOOPS && kind < 35) {
      Statement loop;
      loop.kind = Statement::kLoop;
      ++loops_;
      loop.arms.push_back(Block(depth + 1, 3, true, open_slots));
      for (const Statement& inner : loop.arms[0]) loop.pure = loop.pure && inner.pure;
      statements.push_back(std::move(loop));
    } else if (depth < 3 && open_slots < kSlots - kFixedSlots && kind < 45) {
      // open; block using it; close.
      const int slot = kFixedSlots + open_slots;
      Statement open = Call(open_slots);
      open.call = CallTemplate{};
      open.call.type = random_.Chance(70) ? FOREACTOR_CALL_OPEN : FOREACTOR_CALL_OPENAT;
      open.call.open_slot = slot;
      open.call.slot = 3;
      if (random_.Chance(15)) {
        open.call.path = Format("new%zu", created_names.size());
        created_names.push_back(open.call.path);
        open.call.flags = O_CREAT | O_RDWR | (random_.Chance(50) ? O_TRUNC : O_EXCL);
        open.call.mode = 0640;
      } else {
        open.call.path = random_.Pick(OpenablePaths());
        while (avoid_known_bugs && open.call.path == "data2") {
          open.call.path = random_.Pick(OpenablePaths());
        }
        open.call.flags = O_RDONLY | (random_.Chance(20) ? O_CLOEXEC : 0);
      }
      if (open.call.type == FOREACTOR_CALL_OPENAT && open.call.path.rfind("dir/", 0) == 0) {
        open.call.path = open.call.path.substr(4);  // relative to the directory slot
      } else {
        open.call.type = FOREACTOR_CALL_OPEN;
      }
      open.pure = IsPure(open.call.type, open.call.flags);
      statements.push_back(std::move(open));
      std::vector<Statement> inner = Block(depth + 1, 3, in_loop, open_slots + 1);
      for (Statement& statement : inner) statements.push_back(std::move(statement));
      if (!avoid_known_bugs) {
        Statement close;
        close.call.type = FOREACTOR_CALL_CLOSE;
        close.call.slot = slot;
        close.pure = false;
        statements.push_back(std::move(close));
      }
    } else {
      statements.push_back(Call(open_slots));
    }
    statements.back().weak_after = statements.back().kind == Statement::kCall &&
                                   !statements.back().call.linked() && random_.Chance(12);
  }
  // A loop body must begin with a call (the loop's header is that node).
  if (in_loop && statements.front().kind != Statement::kCall) {
    statements.insert(statements.begin(), Call(open_slots));
  }
  return statements;
}

void Case::Generate() {
  wrong_guesses = random_.Chance(40);
  for (int file = 0; file < kDataFiles; ++file) {
    file_size_[file] = static_cast<int64_t>(
        random_.Pick(std::vector<uint64_t>{0, 1, 100, 4095, 4096, 5000, 20000, 65537}));
  }
  body = Block(0, 6, false, 0);
  exits_left_ = random_.Chance(50) ? 1 : 0;
  exit_countdown_ = static_cast<int>(random_.Below(30));
  if (look_ahead) {
    // Draws of their own, after the others: the function is the one the
    // seed makes without the option, plus what is added here.
    Random random(seed_ ^ 0x100cull);
    follows_look_ahead = random.Chance(50);
    // data1 is never written: a scan of it reads what it was made with.
    file_size_[1] =
        static_cast<int64_t>(random.Pick(std::vector<uint64_t>{65537, 262144, uint64_t{1} << 20}));
    if (loops_ < FOREACTOR_MAX_LOOPS && random.Chance(70)) {
      // Last (the rest of the scope is the scan) or after some statement.
      const size_t at = random.Chance(60) ? body.size() : 1 + random.Below(body.size());
      body.insert(body.begin() + static_cast<std::ptrdiff_t>(at), ScanLoop(random));
    }
    AddLoopCounts(body, random);
  }
}

Statement Case::ScanLoop(Random& random) {
  Statement loop;
  loop.kind = Statement::kLoop;
  loop.scan = true;
  loop.long_loop = random.Chance(60);
  ++loops_;
  std::vector<Statement> reads(1 + random.Below(2));
  for (Statement& read : reads) {
    read.call.type = FOREACTOR_CALL_PREAD;
    read.call.slot = random.Chance(70) ? 1 : random.Pick(std::vector<int>{0, 2});
    read.call.length = random.Pick(std::vector<size_t>{512, 4096, 8192});
    read.call.in_order = random.Chance(70);
    read.call.base_offset =
        static_cast<int64_t>(random.Pick(std::vector<uint64_t>{0, 4096, 12288}));
    read.call.offset_span = int64_t{1} << 20;
    read.weak_after = random.Chance(5);
  }
  loop.arms.push_back(std::move(reads));
  return loop;
}

void Case::AddLoopCounts(std::vector<Statement>& statements, Random& random) {
  for (Statement& statement : statements) {
    if (statement.kind == Statement::kLoop && (statement.scan || random.Chance(50))) {
      const uint64_t draw = random.Below(100);
      statement.count_mode = draw < 40   ? Statement::kExact
                             : draw < 55 ? Statement::kShort
                             : draw < 70 ? Statement::kPast
                             : draw < 85 ? Statement::kAfterFirstRead
                                         : Statement::kNever;
    }
    for (auto& arm : statement.arms) AddLoopCounts(arm, random);
  }
}

// ------------------------------------------------------------ the graph

foreactor_readiness ArgumentsCallback(const foreactor_visit* visit, foreactor_call* call);
void ResultCallback(const foreactor_visit* visit, int64_t result);
int ChoiceCallback(const foreactor_visit* visit);
int64_t CountCallback(const foreactor_visit* visit);

// Node ids as node_data (callbacks need the id; graphs keep no pointer to it).
int node_ids[256];

// Connects every open end to `to`; returns 0 or -1.
int Case::Connect(foreactor_graph* graph, std::vector<int>& ends, std::vector<bool>& weak,
                  std::vector<int>& child_of, int to) {
  int status = 0;
  for (size_t i = 0; i < ends.size(); ++i) {
    if (child_of[i]) {
      if (foreactor_graph_add_child(graph, ends[i], to, weak[i] ? 1 : 0) < 0) status = -1;
    } else if (foreactor_graph_set_next(graph, ends[i], to, weak[i] ? 1 : 0) < 0) {
      status = -1;
    }
  }
  ends.clear();
  weak.clear();
  child_of.clear();
  return status;
}

// Adds the nodes of `statements` in program order.  `ends` are the nodes
// whose next edge goes to whatever comes next (child_of: it is a branch
// child); `first` receives the first node made.
void Case::Number(std::vector<Statement>& statements, foreactor_graph* graph,
                  std::vector<int>& ends, std::vector<bool>& ends_weak,
                  std::vector<int>& end_child_of, int& first) {
  auto add_syscall = [&](foreactor_call_type type, const Statement* statement) {
    const int id = static_cast<int>(node_kind.size());
    node_kind.push_back(type);
    node_statement.push_back(statement);
    const int node = foreactor_graph_add_syscall(
        graph, Format("n%d", id).c_str(), type, &ArgumentsCallback, &ResultCallback, &node_ids[id]);
    // Every write node declares write-behind: the suites then check that
    // its hints change nothing the program sees (no random draw, so the
    // generated functions stay as they were).  A refusal would make the
    // graph invalid at foreactor_graph_finish().
    const bool writes = type == FOREACTOR_CALL_WRITE || type == FOREACTOR_CALL_PWRITE ||
                        type == FOREACTOR_CALL_WRITEV || type == FOREACTOR_CALL_PWRITEV;
    if (writes) foreactor_graph_set_write_behind(graph, node);
    if (first < 0) first = node;
    Connect(graph, ends, ends_weak, end_child_of, node);
    return node;
  };
  for (Statement& statement : statements) {
    switch (statement.kind) {
      case Statement::kCall: {
        statement.node = add_syscall(statement.call.type, &statement);
        ends = {statement.node};
        ends_weak = {statement.call.linked_copy ? false : statement.weak_after};
        end_child_of = {0};
        if (statement.call.linked()) {
          statement.second_node =
              add_syscall(statement.call.linked_copy ? FOREACTOR_CALL_PWRITE : FOREACTOR_CALL_PREAD,
                          &statement);
          ends = {statement.second_node};
          ends_weak = {statement.weak_after};
          end_child_of = {0};
        }
        break;
      }
      case Statement::kIf: {
        const int id = static_cast<int>(node_kind.size());
        node_kind.push_back(-1);
        node_statement.push_back(&statement);
        statement.branch = foreactor_graph_add_branch(graph, Format("b%d", id).c_str(),
                                                      &ChoiceCallback, &node_ids[id]);
        if (first < 0) first = statement.branch;
        Connect(graph, ends, ends_weak, end_child_of, statement.branch);
        std::vector<int> all_ends;
        std::vector<bool> all_weak;
        std::vector<int> all_child_of;
        for (auto& arm : statement.arms) {
          std::vector<int> arm_ends = {statement.branch};
          std::vector<bool> arm_weak = {false};
          std::vector<int> arm_child_of = {1};
          int arm_first = -1;
          Number(arm, graph, arm_ends, arm_weak, arm_child_of, arm_first);
          all_ends.insert(all_ends.end(), arm_ends.begin(), arm_ends.end());
          all_weak.insert(all_weak.end(), arm_weak.begin(), arm_weak.end());
          all_child_of.insert(all_child_of.end(), arm_child_of.begin(), arm_child_of.end());
        }
        ends = all_ends;
        ends_weak = all_weak;
        end_child_of = all_child_of;
        break;
      }
      case Statement::kLoop: {
        int body_first = -1;
        Number(statement.arms[0], graph, ends, ends_weak, end_child_of, body_first);
        if (first < 0) first = body_first;
        const int id = static_cast<int>(node_kind.size());
        node_kind.push_back(-1);
        node_statement.push_back(&statement);
        statement.branch = foreactor_graph_add_branch(graph, Format("b%d", id).c_str(),
                                                      &ChoiceCallback, &node_ids[id]);
        Connect(graph, ends, ends_weak, end_child_of, statement.branch);
        foreactor_graph_add_child(graph, statement.branch, body_first, 0);  // child 0: again
        if (statement.count_mode != Statement::kNoCount)
          foreactor_graph_set_loop_count(graph, statement.branch, &CountCallback);
        ends = {statement.branch};
        ends_weak = {false};
        end_child_of = {1};  // child 1: leave the loop
        break;
      }
    }
  }
}

foreactor_graph* Case::BuildGraph(char* error, size_t error_size) {
  foreactor_graph* graph = foreactor_graph_create(Format("rg_%" PRIu64, seed_).c_str());
  if (graph == nullptr) return nullptr;
  node_kind = {-1, -1};  // start, end
  node_statement = {nullptr, nullptr};
  std::vector<int> ends = {FOREACTOR_START_NODE};
  std::vector<bool> weak = {false};
  std::vector<int> child_of = {0};
  int first = -1;
  Number(body, graph, ends, weak, child_of, first);
  Connect(graph, ends, weak, child_of, FOREACTOR_END_NODE);
  if (follows_look_ahead) foreactor_graph_follow_from_look_ahead(graph);
  if (foreactor_graph_finish(graph, error, error_size) != 0) {
    foreactor_graph_destroy(graph);
    return nullptr;
  }
  return graph;
}

// ------------------------------------------------------------ the path

uint64_t VisitHash(uint64_t seed, int node, const Iterations& iterations, uint64_t salt) {
  uint64_t hash = Mix(seed ^ (static_cast<uint64_t>(node) << 32) ^ salt);
  for (uint64_t index : iterations) hash = Mix(hash ^ index);
  return hash;
}

// Loops run 1..4 times per entry (long ones 17..64); an arm is chosen per
// visit.
uint64_t LoopCount(uint64_t seed, const Statement& loop, const Iterations& outer) {
  const uint64_t hash = VisitHash(seed, loop.branch, outer, 77);
  return loop.long_loop ? 17 + hash % 48 : 1 + hash % 4;
}

void Case::AddEvent(const Statement& statement, Iterations& iterations) {
  const CallTemplate& t = statement.call;
  const uint64_t hash = VisitHash(seed_, statement.node, iterations, 1);
  Random random(hash);
  Event event;
  event.key = VisitKey{statement.node, iterations};
  foreactor_call& call = event.actual;
  call.type = t.type;
  call.fd = t.slot < kFixedSlots ? fixed_fd[t.slot] : -1;
  if (t.slot >= kFixedSlots) event.fd_from_event = slot_open_event_[t.slot];
  call.length = t.length;
  call.offset = static_cast<int64_t>(random.Below(static_cast<uint64_t>(t.offset_span)));
  if (t.in_order) {
    call.offset = t.base_offset + static_cast<int64_t>(iterations.back() * t.length);
  }
  call.flags = t.flags;
  call.mode = t.mode;
  event.pure = statement.pure;
  // The function's first call is the first one the graph may follow.
  event.look_ahead_before =
      look_ahead && (events.empty() || VisitHash(seed_, statement.node, iterations, 31) % 10 == 0);
  const int file = t.slot < kSlots ? slot_file_[t.slot] : -1;
  switch (t.type) {
    case FOREACTOR_CALL_OPEN:
      call.fd = -1;
      call.path = Keep(root_ + "/" + t.path);
      break;
    case FOREACTOR_CALL_OPENAT:
      call.fd = fixed_fd[3];
      call.path = Keep(t.path);
      break;
    case FOREACTOR_CALL_FSTATAT:
      call.path = Keep(t.path);
      if (random.Chance(20)) {
        call.fd = AT_FDCWD;
        call.path = Keep(root_ + "/dir/" + t.path);
      }
      break;
    case FOREACTOR_CALL_READ:
    case FOREACTOR_CALL_READV:
    case FOREACTOR_CALL_WRITE:
    case FOREACTOR_CALL_WRITEV:
      call.offset = position_[t.slot];
      break;
    case FOREACTOR_CALL_LSEEK: {
      const uint64_t how = random.Below(3);
      call.whence = how == 0 ? SEEK_SET : how == 1 ? SEEK_CUR : SEEK_END;
      call.offset = static_cast<int64_t>(random.Below(9000)) - (how == 0 ? 100 : 4500);
      if (t.slot == 3) {  // directories: rewind
        call.whence = SEEK_SET;
        call.offset = 0;
      }
      break;
    }
    default:
      break;
  }
  if (t.type == FOREACTOR_CALL_READV || t.type == FOREACTOR_CALL_PREADV) {
    size_t left = call.length;
    const int pieces = 1 + static_cast<int>(random.Below(3));
    for (int i = 0; i < pieces - 1 && left > 1; ++i) {
      const size_t piece = 1 + random.Below(left - 1);
      event.segments.push_back(piece);
      left -= piece;
    }
    event.segments.push_back(left);
    call.iovcnt = static_cast<int>(event.segments.size());
  }
  const bool writes = t.type == FOREACTOR_CALL_WRITE || t.type == FOREACTOR_CALL_PWRITE ||
                      t.type == FOREACTOR_CALL_WRITEV || t.type == FOREACTOR_CALL_PWRITEV;
  if (writes) {
    const char* bytes = Keep(Bytes(call.length, hash));
    call.buffer = const_cast<char*>(bytes);
    if (t.type == FOREACTOR_CALL_WRITEV || t.type == FOREACTOR_CALL_PWRITEV) {
      std::vector<struct iovec> vector;
      size_t start = 0;
      while (start < call.length) {
        const size_t piece = std::min(call.length - start, 1 + random.Below(call.length));
        vector.push_back({const_cast<char*>(bytes) + start, piece});
        start += piece;
      }
      vectors.push_back(std::move(vector));
      call.iov = vectors.back().data();
      call.iovcnt = static_cast<int>(vectors.back().size());
    }
  }
  event.stable_stat = true;
  if (avoid_known_bugs && writes) call.offset = 65536 + static_cast<int64_t>(events.size()) * 8192;

  // The plugin's answer: exact, or (pure calls only, sometimes) wrong.
  event.predicted = call;
  event.predicted_fd_from_event = event.fd_from_event;
  const bool link_head = t.linked_copy && avoid_known_bugs;
  if (wrong_guesses && event.pure && !link_head && random.Chance(15)) {
    switch (random.Below(4)) {
      case 0:
        event.predicted.offset += 1 + static_cast<int64_t>(random.Below(4096));
        break;
      case 1:
        event.predicted.length = event.predicted.length / 2 + 1;
        break;
      case 2:
        if (event.predicted_fd_from_event < 0) event.predicted.fd = fixed_fd[random.Below(3)];
        break;
      default:
        if (call.path != nullptr && !(avoid_known_bugs && t.type != FOREACTOR_CALL_FSTATAT)) {
          event.predicted.path = Keep(root_ + "/data3");
        } else
          event.predicted.offset += 512;
        break;
    }
  }
  // The program does something else than the node says (pure calls only).
  if (wrong_guesses && event.pure && t.type == FOREACTOR_CALL_PREAD && !t.linked_copy &&
      random.Chance(8)) {
    call.type = FOREACTOR_CALL_FSTAT;
  }
  if (!link_head && random.Chance(10)) event.lazy_queries = 1 + static_cast<int>(random.Below(3));
  if (!link_head && random.Chance(2)) event.never_ready = true;

  // Simulate the file positions and sizes the intended path leads to.
  auto grow = [&](int64_t end) {
    if (file >= 0 && file < kDataFiles) file_size_[file] = std::max(file_size_[file], end);
  };
  const int64_t size = file >= 0 && file < kDataFiles ? file_size_[file] : 0;
  switch (call.type) {
    case FOREACTOR_CALL_READ:
    case FOREACTOR_CALL_READV:
      if (file >= 0) {
        position_[t.slot] += std::max<int64_t>(
            0, std::min<int64_t>(static_cast<int64_t>(call.length), size - position_[t.slot]));
      }
      break;
    case FOREACTOR_CALL_WRITE:
    case FOREACTOR_CALL_WRITEV:
      position_[t.slot] += static_cast<int64_t>(call.length);
      grow(position_[t.slot]);
      break;
    case FOREACTOR_CALL_PWRITE:
    case FOREACTOR_CALL_PWRITEV:
      grow(call.offset + static_cast<int64_t>(call.length));
      break;
    case FOREACTOR_CALL_LSEEK: {
      const int64_t base = call.whence == SEEK_SET   ? 0
                           : call.whence == SEEK_CUR ? position_[t.slot]
                                                     : size;
      if (base + call.offset >= 0) position_[t.slot] = base + call.offset;
      break;
    }
    case FOREACTOR_CALL_OPEN:
    case FOREACTOR_CALL_OPENAT: {
      const int slot = t.open_slot;
      slot_open_event_[slot] = static_cast<int>(events.size());
      position_[slot] = 0;
      slot_file_[slot] = -1;
      for (int f = 0; f < kDataFiles; ++f) {
        if (t.path == Format("data%d", f)) slot_file_[slot] = f;
      }
      if ((t.flags & O_TRUNC) && slot_file_[slot] >= 0) file_size_[slot_file_[slot]] = 0;
      break;
    }
    default:
      break;
  }

  // Early exits: only where the edge out of the node is weak.
  if (statement.weak_after && !t.linked() && exits_left_ > 0 && exit_countdown_-- <= 0) {
    event.exit_after = true;
    returns_early = true;
    --exits_left_;
  }
  event_of[event.key] = static_cast<int>(events.size());
  events.push_back(std::move(event));

  // The second call of a linked pair: a pwrite of the bytes the pread
  // produced (predicted with no buffer), or a pread of its own slot.
  if (t.linked()) {
    events.back().predicted.link_next = 1;
    Event tail;
    tail.key = VisitKey{statement.second_node, iterations};
    tail.actual.type = t.linked_copy ? FOREACTOR_CALL_PWRITE : FOREACTOR_CALL_PREAD;
    tail.actual.fd = fixed_fd[t.linked_copy ? t.write_slot : t.second_read_slot];
    tail.actual.length = t.length;
    tail.actual.offset =
        static_cast<int64_t>(VisitHash(seed_, statement.second_node, iterations, 2) % 20000);
    tail.exit_after = false;
    if (t.linked_copy) {
      if (avoid_known_bugs) tail.actual.offset = 65536 + static_cast<int64_t>(events.size()) * 8192;
      tail.pure = false;
      tail.data_from_event = static_cast<int>(events.size()) - 1;
      const int written_file = slot_file_[t.write_slot];
      if (written_file >= 0 && written_file < kDataFiles) {
        file_size_[written_file] =
            std::max(file_size_[written_file], tail.actual.offset + static_cast<int64_t>(t.length));
      }
    }
    tail.predicted = tail.actual;
    if (t.linked_copy) tail.predicted.buffer = nullptr;
    event_of[tail.key] = static_cast<int>(events.size());
    events.push_back(std::move(tail));
  }
}

void Case::Walk(const std::vector<Statement>& statements, Iterations& iterations) {
  for (const Statement& statement : statements) {
    switch (statement.kind) {
      case Statement::kCall:
        AddEvent(statement, iterations);
        break;
      case Statement::kIf: {
        const int arm = static_cast<int>(VisitHash(seed_, statement.branch, iterations, 3) % 2);
        Choice choice{arm, arm};
        if (statement.wrong_choices && VisitHash(seed_, statement.branch, iterations, 4) % 3 == 0) {
          choice.predicted = 1 - arm;
        }
        choices[VisitKey{statement.branch, iterations}] = choice;
        Walk(statement.arms[arm], iterations);
        break;
      }
      case Statement::kLoop: {
        const uint64_t count = LoopCount(seed_, statement, iterations);
        iterations.push_back(0);
        for (uint64_t i = 0; i < count; ++i) {
          iterations.back() = i;
          const size_t first_event = events.size();
          Walk(statement.arms[0], iterations);
          // The plugin looks ahead as a scan starts (it has just learned
          // what the loop reads).
          if (statement.scan && i == 0 && first_event < events.size())
            events[first_event].look_ahead_before = true;
          const int again = i + 1 < count ? 0 : 1;
          choices[VisitKey{statement.branch, iterations}] = Choice{again, again};
        }
        iterations.pop_back();
        break;
      }
    }
  }
}

void Case::Trace() {
  Iterations iterations;
  Walk(body, iterations);
}

// ------------------------------------------------------------ files

void WriteFile(const std::string& path, const std::string& bytes) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
    std::fprintf(stderr, "random_graph: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    std::exit(2);
  }
  close(fd);
}

void Freeze(const std::string& path) {
  struct timespec times[2] = {{kFrozenAccess, 123456789}, {kFrozenModify, 987654321}};
  utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW);
}

void Case::MakeFiles() {
  mkdir(root_.c_str(), 0755);
  Random random(seed_ ^ 0x5eed);
  for (int file = 0; file < kDataFiles; ++file) {
    WriteFile(Format("%s/data%d", root_.c_str(), file),
              Bytes(static_cast<size_t>(file_size_[file]), seed_ * 16 + file));
  }
  const std::string dir = root_ + "/dir";
  mkdir(dir.c_str(), 0755);
  const int entries = static_cast<int>(random.Below(40));
  for (int i = 0; i < entries; ++i) {
    WriteFile(Format("%s/e%03d", dir.c_str(), i), Bytes(random.Below(300), seed_ + i));
    Freeze(Format("%s/e%03d", dir.c_str(), i));
  }
  mkdir((dir + "/sub").c_str(), 0755);
  if (symlink("e000", (dir + "/link").c_str()) != 0) std::exit(2);
  Freeze(dir + "/sub");
  Freeze(dir + "/link");
  for (int file = 0; file < kDataFiles; ++file) Freeze(Format("%s/data%d", root_.c_str(), file));
  Freeze(dir);
  if (look_ahead) {
    // The function's reads of the data files start cold (where the file
    // system lets their pages go).
    for (int file = 0; file < kDataFiles; ++file) {
      const int fd = open(Format("%s/data%d", root_.c_str(), file).c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      foreactor::DropFromPageCache(fd, 0, static_cast<uint64_t>(file_size_[file]));
      close(fd);
    }
  }
}

void Case::OpenFixedSlots() {
  fixed_fd[0] = open((root_ + "/data0").c_str(), O_RDWR | O_CLOEXEC);
  fixed_fd[1] = open((root_ + "/data1").c_str(), O_RDONLY | O_CLOEXEC);
  fixed_fd[2] = open((root_ + "/data2").c_str(), O_RDWR | O_CLOEXEC);
  fixed_fd[3] = open((root_ + "/dir").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) std::exit(2);
  const std::string bytes = Bytes(3000, seed_);
  if (write(pipe_fds[1], bytes.data(), bytes.size()) != 3000) std::exit(2);
  close(pipe_fds[1]);
  fixed_fd[4] = pipe_fds[0];
  for (int fd : fixed_fd) {
    if (fd < 0) {
      std::fprintf(stderr, "random_graph: cannot open the fixed files\n");
      std::exit(2);
    }
  }
}

// ------------------------------------------------------------ callbacks

// What the callbacks of one scope share with the program.
struct ScopeState {
  Case* plan = nullptr;
  std::map<VisitKey, int64_t> reported;  // result callbacks, by visit
  std::vector<int> lazy_left;            // per event
  size_t next_expected = 0;              // the event the next result callback should be for
  int violations = 0;
  int reported_count = 0;
};

VisitKey KeyOf(const foreactor_visit* visit) {
  VisitKey key;
  key.node = *static_cast<const int*>(visit->node_data);
  key.iterations.assign(visit->iteration, visit->iteration + visit->loop_count);
  return key;
}

foreactor_readiness ArgumentsCallback(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<ScopeState*>(visit->scope_state);
  const VisitKey key = KeyOf(visit);
  auto found = state->plan->event_of.find(key);
  if (found == state->plan->event_of.end()) {
    // A visit off the intended path (after a wrong branch choice): pure
    // calls get made-up arguments, others wait.
    const foreactor_call_type type = static_cast<foreactor_call_type>(call->type);
    if (type != FOREACTOR_CALL_PREAD && type != FOREACTOR_CALL_FSTAT) return FOREACTOR_NOT_YET;
    foreactor_call guess{};
    guess.type = type;
    guess.fd =
        state->plan->fixed_fd[VisitHash(state->plan->seed(), key.node, key.iterations, 9) % 3];
    guess.length = 4096;
    guess.offset = 8192;
    *call = guess;
    return FOREACTOR_READY;
  }
  const Event& event = state->plan->events[found->second];
  if (event.never_ready) return FOREACTOR_NOT_YET;
  if (avoid_known_bugs && !writes_past_early_returns && state->plan->returns_early && !event.pure) {
    return FOREACTOR_NOT_YET;
  }
  if (avoid_known_bugs &&
      (event.actual.type == FOREACTOR_CALL_OPEN || event.actual.type == FOREACTOR_CALL_OPENAT ||
       event.actual.type == FOREACTOR_CALL_GETDENTS64)) {
    return FOREACTOR_NOT_YET;
  }
  int& lazy = state->lazy_left[found->second];
  if (lazy > 0) {
    --lazy;
    return FOREACTOR_NOT_YET;
  }
  foreactor_call predicted = event.predicted;
  if (event.predicted_fd_from_event >= 0) {
    const VisitKey& open_key = state->plan->events[event.predicted_fd_from_event].key;
    auto opened = state->reported.find(open_key);
    if (opened == state->reported.end()) return FOREACTOR_NOT_YET;
    predicted.fd = opened->second >= 0 ? static_cast<int>(opened->second) : -1;
  }
  *call = predicted;
  return FOREACTOR_READY;
}

void ResultCallback(const foreactor_visit* visit, int64_t result) {
  auto* state = static_cast<ScopeState*>(visit->scope_state);
  const VisitKey key = KeyOf(visit);
  ++state->reported_count;
  if (trace_callbacks) {
    std::string iterations;
    for (uint64_t index : key.iterations) iterations += Format(".%" PRIu64, index);
    std::fprintf(stderr, "random_graph: result callback n%d%s = %" PRId64 "\n", key.node,
                 iterations.c_str(), result);
  }
  if (!state->reported.emplace(key, result).second) ++state->violations;  // twice
  auto found = state->plan->event_of.find(key);
  if (found == state->plan->event_of.end()) {
    ++state->violations;  // a visit the program never made
    return;
  }
  // Program order: never for an event before one already reported.
  if (static_cast<size_t>(found->second) + 1 < state->next_expected) ++state->violations;
  state->next_expected = static_cast<size_t>(found->second) + 1;
}

int ChoiceCallback(const foreactor_visit* visit) {
  auto* state = static_cast<ScopeState*>(visit->scope_state);
  auto found = state->plan->choices.find(KeyOf(visit));
  if (found == state->plan->choices.end()) {
    return static_cast<int>(
        VisitHash(state->plan->seed(), KeyOf(visit).node, KeyOf(visit).iterations, 5) % 2);
  }
  return found->second.predicted;
}

// The loop count the plugin gives (Statement::CountMode): wrong ones stay
// the same for the loop's instance, as the contract asks of right ones.
int64_t CountCallback(const foreactor_visit* visit) {
  auto* state = static_cast<ScopeState*>(visit->scope_state);
  const Case& plan = *state->plan;
  const VisitKey key = KeyOf(visit);
  const Statement& loop = *plan.node_statement[static_cast<size_t>(key.node)];
  Iterations outer = key.iterations;
  if (outer.empty()) return FOREACTOR_COUNT_NOT_YET;  // (a branch closing a loop has a counter)
  outer.pop_back();
  const int64_t count = static_cast<int64_t>(LoopCount(plan.seed(), loop, outer));
  const uint64_t hash = VisitHash(plan.seed(), key.node, outer, 41);
  switch (loop.count_mode) {
    case Statement::kExact:
      return count;
    case Statement::kShort:
      return std::max<int64_t>(1, count - 1 - static_cast<int64_t>(hash % 8));
    case Statement::kPast:
      return count + 1 + static_cast<int64_t>(hash % 40);
    case Statement::kAfterFirstRead: {
      Iterations first = outer;
      first.push_back(0);
      const int first_node = loop.arms[0].front().node;
      return state->reported.count(VisitKey{first_node, first}) != 0 ? count
                                                                     : FOREACTOR_COUNT_NOT_YET;
    }
    default:
      return FOREACTOR_COUNT_NOT_YET;
  }
}

// ------------------------------------------------------------ running

class Printer {
 public:
  explicit Printer(const std::string& root) : root_(root) {}

  std::string Path(const char* path) const {
    if (path == nullptr) return "(null)";
    std::string text(path);
    if (text.compare(0, root_.size(), root_) == 0) return "$C" + text.substr(root_.size());
    return text;
  }

  // Stat fields that are the same in two runs of the same seed: identity
  // shown as a name, times as "frozen" when untouched.
  std::string Stat(const struct stat& status) const {
    std::string identity = "?";
    for (const auto& [inode, name] : inodes_) {
      if (inode == status.st_ino) identity = name;
    }
    auto time_text = [](const struct timespec& time, int64_t frozen) {
      return time.tv_sec == frozen ? Format("frozen.%09ld", time.tv_nsec) : std::string("recent");
    };
    return Format(
        "ino=%s mode=%o nlink=%ju uid=%u gid=%u size=%jd blocks=%jd blksize=%jd rdev=%ju"
        " atime=%s mtime=%s",
        identity.c_str(), status.st_mode, static_cast<uintmax_t>(status.st_nlink), status.st_uid,
        status.st_gid, static_cast<intmax_t>(status.st_size),
        static_cast<intmax_t>(status.st_blocks), static_cast<intmax_t>(status.st_blksize),
        static_cast<uintmax_t>(status.st_rdev), time_text(status.st_atim, kFrozenAccess).c_str(),
        time_text(status.st_mtim, kFrozenModify).c_str());
  }

  std::string Dirents(const unsigned char* buffer, size_t length) const {
    std::string text;
    size_t position = 0;
    while (position + offsetof(struct dirent64, d_name) <= length) {
      struct dirent64 header;
      std::memcpy(&header, buffer + position, offsetof(struct dirent64, d_name));
      if (header.d_reclen == 0 || position + header.d_reclen > length) return text + " <malformed>";
      const char* name =
          reinterpret_cast<const char*>(buffer) + position + offsetof(struct dirent64, d_name);
      text += Format(" [%.*s type=%u reclen=%u off=%jd]",
                     static_cast<int>(strnlen(name, header.d_reclen)), name, header.d_type,
                     header.d_reclen, static_cast<intmax_t>(header.d_off));
      position += header.d_reclen;
    }
    return text;
  }

  // Remembers the inode of every entry under the case directory.
  void LearnInodes() {
    inodes_.clear();
    Learn(root_, "$C");
  }

 private:
  void Learn(const std::string& path, const std::string& name) {
    struct stat status;
    if (lstat(path.c_str(), &status) != 0) return;
    inodes_.emplace_back(status.st_ino, name);
    if (!S_ISDIR(status.st_mode)) return;
    DIR* directory = opendir(path.c_str());
    if (directory == nullptr) return;
    std::vector<std::string> children;
    while (struct dirent* entry = readdir(directory)) {
      if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0) {
        children.push_back(entry->d_name);
      }
    }
    closedir(directory);
    for (const std::string& child : children) Learn(path + "/" + child, name + "/" + child);
  }

  std::string root_;
  std::vector<std::pair<ino_t, std::string>> inodes_;
};

struct Observed {
  int64_t result = 0;
  std::vector<unsigned char> bytes;  // what a read produced
};

std::string DescribeCall(const Printer& printer, const foreactor_call& call) {
  return Format("%s(fd=%d path=%s flags=%#x mode=%o len=%zu off=%" PRId64 " whence=%d iovcnt=%d)",
                foreactor_call_type_name(call.type), call.fd, printer.Path(call.path).c_str(),
                call.flags, call.mode, call.length, call.offset, call.whence, call.iovcnt);
}

Observed Perform(const Printer& printer, const Event& event, const foreactor_call& call,
                 std::string& line) {
  Observed observed;
  std::vector<unsigned char> buffer;
  std::vector<struct iovec> vector;
  struct stat status;
  std::memset(&status, kFillByte, sizeof(status));
  if (call.type == FOREACTOR_CALL_READV || call.type == FOREACTOR_CALL_PREADV) {
    buffer.assign(call.length, kFillByte);
    size_t start = 0;
    for (size_t length : event.segments) {
      vector.push_back({buffer.data() + start, length});
      start += length;
    }
  } else if (call.type == FOREACTOR_CALL_READ || call.type == FOREACTOR_CALL_PREAD ||
             call.type == FOREACTOR_CALL_GETDENTS64) {
    buffer.assign(call.length, kFillByte);
  }
  errno = kErrnoSentinel;
  int64_t returned = -1;
  switch (call.type) {
    case FOREACTOR_CALL_OPEN:
      returned = open(call.path, call.flags, call.mode);
      break;
    case FOREACTOR_CALL_OPENAT:
      returned = openat(call.fd, call.path, call.flags, call.mode);
      break;
    case FOREACTOR_CALL_CLOSE:
      returned = close(call.fd);
      break;
    case FOREACTOR_CALL_READ:
      returned = read(call.fd, buffer.data(), call.length);
      break;
    case FOREACTOR_CALL_PREAD:
      returned = pread(call.fd, buffer.data(), call.length, call.offset);
      break;
    case FOREACTOR_CALL_WRITE:
      returned = write(call.fd, call.buffer, call.length);
      break;
    case FOREACTOR_CALL_PWRITE:
      returned = pwrite(call.fd, call.buffer, call.length, call.offset);
      break;
    case FOREACTOR_CALL_LSEEK:
      returned = lseek(call.fd, call.offset, call.whence);
      break;
    case FOREACTOR_CALL_FSTAT:
      returned = fstat(call.fd, &status);
      break;
    case FOREACTOR_CALL_FSTATAT:
      returned = fstatat(call.fd, call.path, &status, call.flags);
      break;
    case FOREACTOR_CALL_GETDENTS64:
      returned = getdents64(call.fd, buffer.data(), call.length);
      break;
    case FOREACTOR_CALL_READV:
      returned = readv(call.fd, vector.data(), call.iovcnt);
      break;
    case FOREACTOR_CALL_PREADV:
      returned = preadv(call.fd, vector.data(), call.iovcnt, call.offset);
      break;
    case FOREACTOR_CALL_WRITEV:
      returned = writev(call.fd, call.iov, call.iovcnt);
      break;
    case FOREACTOR_CALL_PWRITEV:
      returned = pwritev(call.fd, call.iov, call.iovcnt, call.offset);
      break;
    default:
      break;
  }
  const int error = errno;
  observed.result = returned < 0 ? -static_cast<int64_t>(error) : returned;
  line = DescribeCall(printer, call) + " " + observation::ReturnAndErrno(returned, error);
  switch (call.type) {
    case FOREACTOR_CALL_FSTAT:
    case FOREACTOR_CALL_FSTATAT:
      line += " " + (returned == 0 ? printer.Stat(status)
                                   : Format("bytes=%016" PRIx64, Hash(&status, sizeof(status))));
      break;
    case FOREACTOR_CALL_READ:
    case FOREACTOR_CALL_PREAD:
    case FOREACTOR_CALL_READV:
    case FOREACTOR_CALL_PREADV:
      line += Format(" buffer=%016" PRIx64, Hash(buffer.data(), buffer.size()));
      if (returned > 0) observed.bytes.assign(buffer.begin(), buffer.begin() + returned);
      break;
    case FOREACTOR_CALL_GETDENTS64:
      // Record bytes beyond `returned` are the caller's own: hash them too,
      // but d_ino and d_off inside records differ between runs, so the
      // records are shown field by field instead of hashed.
      line += Format(" tail=%016" PRIx64,
                     returned >= 0 ? Hash(buffer.data() + returned, buffer.size() - returned) : 0);
      if (returned > 0) line += printer.Dirents(buffer.data(), static_cast<size_t>(returned));
      break;
    default:
      break;
  }
  return observed;
}

void Describe(const Statement& statement, int depth, std::string& text) {
  const std::string indent(2 * depth, ' ');
  switch (statement.kind) {
    case Statement::kCall:
      text += indent + Format("node %d %s%s slot=%d%s%s\n", statement.node,
                              foreactor_call_type_name(statement.call.type),
                              statement.call.linked_copy   ? " +linked pwrite"
                              : statement.call.linked_read ? " +linked pread"
                                                           : "",
                              statement.call.slot, statement.call.in_order ? " in file order" : "",
                              statement.weak_after ? " (weak edge out)" : "");
      break;
    case Statement::kIf:
      text += indent + Format("if (branch %d)%s\n", statement.branch,
                              statement.wrong_choices ? " wrong choices" : "");
      for (const auto& arm : statement.arms) {
        text += indent + " arm:\n";
        for (const Statement& inner : arm) Describe(inner, depth + 1, text);
      }
      break;
    case Statement::kLoop:
      static const char* const kCountModes[] = {"",
                                                " count exact",
                                                " count short",
                                                " count past",
                                                " count after the first read",
                                                " count never known"};
      text += indent + Format("loop (branch %d)%s%s%s\n", statement.branch,
                              statement.scan ? " scan" : "", statement.long_loop ? " long" : "",
                              kCountModes[statement.count_mode]);
      for (const Statement& inner : statement.arms[0]) Describe(inner, depth + 1, text);
      break;
  }
}

unsigned DepthFor(uint64_t seed) {
  static const unsigned depths[] = {1, 2, 3, 4, 8, 16, 64};
  return depths[Mix(seed ^ 0xd0) % (sizeof(depths) / sizeof(depths[0]))];
}

void RemoveTree(const std::string& path) {
  struct stat status;
  if (lstat(path.c_str(), &status) != 0) return;
  if (S_ISDIR(status.st_mode)) {
    DIR* directory = opendir(path.c_str());
    if (directory != nullptr) {
      std::vector<std::string> children;
      while (struct dirent* entry = readdir(directory)) {
        if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0) {
          children.push_back(entry->d_name);
        }
      }
      closedir(directory);
      for (const std::string& child : children) RemoveTree(path + "/" + child);
    }
    rmdir(path.c_str());
  } else {
    unlink(path.c_str());
  }
}

// Tells tests/faults' fault library (when preloaded) that the scope's calls
// begin (1) or end (0), so that only they get faults.
void FaultWindow(int open) {
  using WindowFunction = void(int);
  static WindowFunction* window =
      reinterpret_cast<WindowFunction*>(dlsym(RTLD_DEFAULT, "foreactor_test_faults_window"));
  if (window != nullptr) window(open);
}

void RunSeed(const std::string& workdir, uint64_t seed, bool show_plan) {
  const std::string root = workdir + "/case";
  RemoveTree(root);
  Case plan(seed, root);
  plan.Generate();
  plan.MakeFiles();
  plan.OpenFixedSlots();
  Printer printer(root);
  printer.LearnInodes();

  char error[256] = "";
  foreactor_graph* graph = plan.BuildGraph(error, sizeof(error));
  std::printf("== seed %" PRIu64 "\n", seed);
  if (graph == nullptr) {
    std::printf("graph refused: %s\n", error);
    return;
  }
  plan.Trace();
  if (show_plan) {
    std::string text;
    for (const Statement& statement : plan.body) Describe(statement, 0, text);
    std::fputs(text.c_str(), stdout);
  }
  const unsigned depth = DepthFor(seed);
  if (std::getenv("RANDOM_GRAPH_FIXED_DEPTH") == nullptr) {
    setenv(Format("FOREACTOR_DEPTH_rg_%" PRIu64, seed).c_str(), Format("%u", depth).c_str(), 1);
    // Exact: every seed runs its early path at its depth, whatever it costs
    // (but an exact depth follows every scope from its entry).
    if (!plan.follows_look_ahead)
      setenv(Format("FOREACTOR_EXACT_DEPTH_rg_%" PRIu64, seed).c_str(), "1", 1);
  }

  ScopeState state;
  state.plan = &plan;
  state.lazy_left.resize(plan.events.size());
  for (size_t i = 0; i < plan.events.size(); ++i) state.lazy_left[i] = plan.events[i].lazy_queries;
  std::vector<Observed> observed(plan.events.size());
  std::vector<std::string> lines(plan.events.size());
  size_t made = 0;
  FaultWindow(1);  // before the scope: entering it may issue calls
  foreactor_scope_enter(graph, &state);
  for (size_t i = 0; i < plan.events.size(); ++i) {
    const Event& event = plan.events[i];
    foreactor_call call = event.actual;
    if (event.fd_from_event >= 0) {
      const int64_t opened = observed[event.fd_from_event].result;
      call.fd = opened >= 0 ? static_cast<int>(opened) : -1;
    }
    if (event.data_from_event >= 0) {
      const std::vector<unsigned char>& bytes = observed[event.data_from_event].bytes;
      call.buffer = const_cast<unsigned char*>(bytes.data());
      call.length = bytes.size();
    }
    if (event.look_ahead_before) foreactor_scope_look_ahead(graph);
    observed[i] = Perform(printer, event, call, lines[i]);
    ++made;
    if (event.exit_after) break;
  }
  foreactor_scope_exit(graph);
  FaultWindow(0);

  for (size_t i = 0; i < made; ++i) {
    std::string iterations;
    for (uint64_t index : plan.events[i].key.iterations) iterations += Format(".%" PRIu64, index);
    std::printf("[%zu] n%d%s %s\n", i, plan.events[i].key.node, iterations.c_str(),
                lines[i].c_str());
  }
  if (made < plan.events.size())
    std::printf("returned early after %zu of %zu calls\n", made, plan.events.size());
  // Results the callbacks reported must be what the program saw.
  for (const auto& [key, result] : state.reported) {
    auto found = plan.event_of.find(key);
    if (found == plan.event_of.end()) continue;
    const size_t index = static_cast<size_t>(found->second);
    if (index >= made) {
      ++state.violations;  // reported, never made
    } else if (plan.events[index].actual.type == plan.events[index].predicted.type &&
               observed[index].result != result) {
      ++state.violations;
    }
  }
  // After a wrong guess the program's calls may be taken for visits of
  // other nodes (a call of the node's type on its descriptor is its visit):
  // callbacks are checked in cases without wrong guesses only.
  std::fprintf(stderr,
               "random_graph: seed %" PRIu64 " depth %u: callbacks violations=%d reported=%d\n",
               seed, depth, plan.wrong_guesses ? 0 : state.violations, state.reported_count);

  for (int slot = 0; slot < kFixedSlots; ++slot) {
    errno = 0;
    const off_t position = lseek(plan.fixed_fd[slot], 0, SEEK_CUR);
    std::printf("slot %d position=%jd %s\n", slot, static_cast<intmax_t>(position),
                position < 0 ? ErrnoName(errno).c_str() : "");
  }
  std::printf("descriptors under the case directory after the scope: %d\n",
              observation::OpenDescriptorsUnder(root));
  // The function's own opens that it did not close (it returned early).
  std::vector<bool> closed(plan.events.size(), false);
  for (size_t i = 0; i < made; ++i) {
    const Event& event = plan.events[i];
    if (event.actual.type == FOREACTOR_CALL_CLOSE && event.fd_from_event >= 0) {
      closed[event.fd_from_event] = true;
    }
  }
  for (size_t i = 0; i < made; ++i) {
    const foreactor_call_type type = plan.events[i].actual.type;
    if ((type == FOREACTOR_CALL_OPEN || type == FOREACTOR_CALL_OPENAT) && !closed[i] &&
        observed[i].result >= 0) {
      close(static_cast<int>(observed[i].result));
    }
  }
  for (int fd : plan.fixed_fd) close(fd);
  std::printf("descriptors under the case directory at the end: %d\n",
              observation::OpenDescriptorsUnder(root));
  for (int file = 0; file < kDataFiles; ++file) {
    std::printf("data%d %s\n", file,
                observation::DescribeFileContents(Format("%s/data%d", root.c_str(), file)).c_str());
  }
  for (const std::string& name : plan.created_names) {
    std::printf("%s %s\n", name.c_str(),
                observation::DescribeFileContents(root + "/" + name).c_str());
  }
  foreactor_graph_destroy(graph);
  RemoveTree(root);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: %s WORKDIR FIRST_SEED COUNT [--plan] [--avoid-known-bugs] "
                 "[--writes-past-early-returns] [--linked-reads] [--look-ahead]\n",
                 argv[0]);
    return 2;
  }
  const std::string workdir = argv[1];
  const uint64_t first = std::strtoull(argv[2], nullptr, 10);
  const uint64_t count = std::strtoull(argv[3], nullptr, 10);
  bool show_plan = false;
  for (int i = 4; i < argc; ++i) {
    if (std::strcmp(argv[i], "--plan") == 0)
      show_plan = true;
    else if (std::strcmp(argv[i], "--avoid-known-bugs") == 0)
      avoid_known_bugs = true;
    else if (std::strcmp(argv[i], "--writes-past-early-returns") == 0)
      writes_past_early_returns = true;
    else if (std::strcmp(argv[i], "--linked-reads") == 0)
      linked_reads = true;
    else if (std::strcmp(argv[i], "--look-ahead") == 0)
      look_ahead = true;
    else {
      std::fprintf(stderr, "random_graph: unknown option '%s'\n", argv[i]);
      return 2;
    }
  }
  for (int i = 0; i < 256; ++i) node_ids[i] = i;
  trace_callbacks = std::getenv("RANDOM_GRAPH_TRACE_CALLBACKS") != nullptr;
  for (uint64_t seed = first; seed < first + count; ++seed) RunSeed(workdir, seed, show_plan);
  return 0;
}
