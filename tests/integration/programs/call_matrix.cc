// call_matrix: every call type foreactor knows, run inside a scope whose
// graph describes the calls, with everything the program observes printed.
//
// Each case is a loop: the same short sequence of calls ("steps") made once
// per iteration, and a graph with one syscall node per step and a branch
// that closes the loop.  The graph's arguments callbacks answer from the
// case's plan, so foreactor can issue calls ahead; some cases plan wrong
// guesses on purpose, leave the loop early, or make calls the graph does not
// know.  The program then makes the calls itself and prints return values,
// errno (after success too), hashes of every buffer byte, every stat field,
// dirents, the file positions and the contents of the files it wrote, and
// whether any descriptor was left open.  The test compares this output with
// foreactor off and on (every engine, several depths): it must not differ.
//
// Usage: call_matrix FIXTURE SCRATCH [CASE...]
//   FIXTURE: the tree made by tests/integration/conftest.py (read only)
//   SCRATCH: an empty directory the program may write to
//   CASE:    names of cases to run (default: all); "--list" lists them.
//
// Besides stdout, each case writes one line to stderr:
//   call_matrix: CASE: result callbacks missing=M of T
// (how many visits the program made whose result callback never came; the
// test checks it when foreactor is on).  Cases that guess wrong on purpose
// add " (wrong guesses)": after a wrong descriptor, or once mispredictions
// stop speculation, foreactor may no longer follow the program's visits.
#include <fcntl.h>
#include <limits.h>
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
#include <functional>
#include <string>
#include <vector>

#include "foreactor/foreactor.h"
#include "observation.h"

using observation::DescribeDirents;
using observation::DescribeFileContents;
using observation::DescribeStat;
using observation::DescribeStatx;
using observation::Format;
using observation::Hash;
using observation::OpenDescriptorsUnder;
using observation::PathNames;
using observation::ReturnAndErrno;

namespace {

constexpr int kErrnoSentinel = 4242;
constexpr unsigned char kFillByte = 0xA5;

// ------------------------------------------------------------------- plans

// One call of one iteration.
struct Step {
  foreactor_call actual{};       // what the program calls (read buffers are its own)
  foreactor_call predicted{};    // what the arguments callback answers
  std::vector<size_t> segments;  // READV/PREADV: the program's iovec lengths
  int fd_from_step = -1;         // the fd is what this earlier step of the iteration returned
  int data_from_step = -1;       // WRITE: sends the bytes this earlier step read
  bool never_ready = false;      // the arguments callback keeps saying "not yet"
  bool outside_graph = false;    // the program makes the call, but no node stands for it
  bool stable_identity = true;   // stat results name objects that are the same in every run
};

struct Case {
  std::string name;
  std::vector<std::vector<Step>> iterations;  // the plan; every iteration has the same steps
  size_t program_iterations = 0;              // how many the program makes (early exit when fewer)
  bool weak_exit = false;                     // the edge into the loop's branch is weak
  bool wrong_guesses = false;                 // the plan predicts some calls wrongly
  std::vector<int> descriptors;               // opened before the scope; closed after it
  std::vector<std::string> outputs;           // files whose final contents are printed
  std::deque<std::string> storage;            // paths and bytes the calls point into
  std::deque<std::vector<struct iovec>> vectors;

  const char* Keep(std::string text) {
    storage.push_back(std::move(text));
    return storage.back().c_str();
  }
};

Step MakeStep(foreactor_call_type type) {
  Step step;
  step.actual.type = type;
  step.actual.fd = -1;
  step.predicted = step.actual;
  return step;
}

// Sets a field in both the actual and the predicted call.
#define BOTH(step, field, value)      \
  do {                                \
    (step).actual.field = (value);    \
    (step).predicted.field = (value); \
  } while (0)

Step Open(Case& c, const std::string& path, int flags, unsigned mode = 0) {
  Step step = MakeStep(FOREACTOR_CALL_OPEN);
  BOTH(step, path, c.Keep(path));
  BOTH(step, flags, flags);
  BOTH(step, mode, mode);
  return step;
}

Step OpenAt(Case& c, int directory_fd, const std::string& path, int flags, unsigned mode = 0) {
  Step step = MakeStep(FOREACTOR_CALL_OPENAT);
  BOTH(step, fd, directory_fd);
  BOTH(step, path, c.Keep(path));
  BOTH(step, flags, flags);
  BOTH(step, mode, mode);
  return step;
}

Step FdCall(foreactor_call_type type, int fd) {
  Step step = MakeStep(type);
  BOTH(step, fd, fd);
  return step;
}

Step Close(int fd) { return FdCall(FOREACTOR_CALL_CLOSE, fd); }
Step Fstat(int fd) { return FdCall(FOREACTOR_CALL_FSTAT, fd); }

// A read at the file position; `position` is what the plan expects it to be.
Step Read(int fd, size_t length, int64_t position) {
  Step step = FdCall(FOREACTOR_CALL_READ, fd);
  BOTH(step, length, length);
  BOTH(step, offset, position);
  return step;
}

Step Pread(int fd, size_t length, int64_t offset) {
  Step step = FdCall(FOREACTOR_CALL_PREAD, fd);
  BOTH(step, length, length);
  BOTH(step, offset, offset);
  return step;
}

Step Lseek(int fd, int64_t offset, int whence) {
  Step step = FdCall(FOREACTOR_CALL_LSEEK, fd);
  BOTH(step, offset, offset);
  BOTH(step, whence, whence);
  return step;
}

Step Getdents(int fd, size_t length) {
  Step step = FdCall(FOREACTOR_CALL_GETDENTS64, fd);
  BOTH(step, length, length);
  return step;
}

Step WriteLike(Case& c, foreactor_call_type type, int fd, const std::string& bytes,
               int64_t offset) {
  Step step = FdCall(type, fd);
  const char* kept = c.Keep(bytes);
  BOTH(step, buffer, const_cast<char*>(kept));
  BOTH(step, length, bytes.size());
  BOTH(step, offset, offset);
  return step;
}

Step Write(Case& c, int fd, const std::string& bytes, int64_t position) {
  return WriteLike(c, FOREACTOR_CALL_WRITE, fd, bytes, position);
}

Step Pwrite(Case& c, int fd, const std::string& bytes, int64_t offset) {
  return WriteLike(c, FOREACTOR_CALL_PWRITE, fd, bytes, offset);
}

Step PathStat(Case& c, foreactor_call_type type, int directory_fd, const std::string& path,
              int flags, unsigned mask = 0) {
  Step step = MakeStep(type);
  BOTH(step, fd, directory_fd);
  BOTH(step, path, c.Keep(path));
  BOTH(step, flags, flags);
  BOTH(step, mode, mask);
  return step;
}

size_t Total(const std::vector<size_t>& segments) {
  size_t total = 0;
  for (size_t length : segments) total += length;
  return total;
}

// readv/preadv: the program reads into `segments`; the plugin only gives the total.
Step VectorRead(foreactor_call_type type, int fd, std::vector<size_t> segments, int64_t offset) {
  Step step = FdCall(type, fd);
  BOTH(step, length, Total(segments));
  BOTH(step, offset, offset);
  BOTH(step, iovcnt, static_cast<int>(segments.size()));
  step.segments = std::move(segments);
  return step;
}

Step VectorWrite(Case& c, foreactor_call_type type, int fd, const std::vector<std::string>& pieces,
                 int64_t offset) {
  Step step = FdCall(type, fd);
  std::vector<struct iovec> vector;
  size_t total = 0;
  for (const std::string& piece : pieces) {
    const char* kept = c.Keep(piece);
    vector.push_back({const_cast<char*>(kept), piece.size()});
    total += piece.size();
  }
  c.vectors.push_back(std::move(vector));
  BOTH(step, iov, c.vectors.back().data());
  BOTH(step, iovcnt, static_cast<int>(pieces.size()));
  BOTH(step, length, total);
  BOTH(step, offset, offset);
  return step;
}

#undef BOTH

// Deterministic bytes.
std::string Bytes(size_t count, uint32_t seed) {
  std::string bytes(count, '\0');
  uint32_t state = seed * 2654435761u + 1;
  for (size_t i = 0; i < count; ++i) {
    state = state * 1664525u + 1013904223u;
    bytes[i] = static_cast<char>(state >> 24);
  }
  return bytes;
}

// Follows the file position of a separate descriptor of the same file, so
// that plans for calls with an implicit offset know the position each call
// will find.  Used before the scope only.
class PositionTracker {
 public:
  explicit PositionTracker(const std::string& path) : fd_(open(path.c_str(), O_RDONLY)) {}
  ~PositionTracker() { close(fd_); }
  PositionTracker(const PositionTracker&) = delete;
  PositionTracker& operator=(const PositionTracker&) = delete;

  int64_t Position() const { return lseek(fd_, 0, SEEK_CUR); }

  // The position before the read; then reads.
  int64_t Read(size_t length) {
    int64_t before = Position();
    std::vector<char> buffer(length);
    ssize_t ignored = read(fd_, buffer.data(), length);
    (void)ignored;
    return before;
  }

  void Seek(int64_t offset, int whence) { lseek(fd_, offset, whence); }

 private:
  int fd_;
};

int OpenOrDie(const std::string& path, int flags, mode_t mode = 0) {
  int fd = open(path.c_str(), flags, mode);
  if (fd < 0) {
    std::fprintf(stderr, "call_matrix: cannot open %s: %s\n", path.c_str(), std::strerror(errno));
    std::exit(2);
  }
  return fd;
}

int64_t FileSize(const std::string& path) {
  struct stat status;
  return stat(path.c_str(), &status) == 0 ? status.st_size : -1;
}

// ------------------------------------------------------------------ cases

struct Places {
  std::string fixture;
  std::string scratch;
};

using CaseMaker = std::function<void(const Places&, Case&)>;

struct NamedCase {
  const char* name;
  CaseMaker make;
};

void SingleStepIterations(Case& c, std::vector<Step> steps) {
  for (Step& step : steps) c.iterations.push_back({std::move(step)});
}

void OpenReadClose(const Places& p, Case& c) {
  std::vector<std::string> names = {"small.txt",     "medium.bin", "large.bin", "empty",
                                    "link_to_small", "missing",    "hole.bin"};
  for (int i = 0; i < 16; ++i) names.push_back(Format("dir/f%03d", i * 17));
  for (const std::string& name : names) {
    Step fstat_step = Fstat(-1);
    fstat_step.fd_from_step = 0;
    Step first = Pread(-1, 8192, 0);
    first.fd_from_step = 0;
    Step second = Pread(-1, 8192, 65536);
    second.fd_from_step = 0;
    Step close_step = Close(-1);
    close_step.fd_from_step = 0;
    c.iterations.push_back(
        {Open(c, p.fixture + "/" + name, O_RDONLY), fstat_step, first, second, close_step});
  }
}

void OpenFlags(const Places& p, Case& c) {
  struct Attempt {
    std::string path;
    int flags;
    unsigned mode;
    bool stable;
  };
  const std::string f = p.fixture, s = p.scratch;
  const std::vector<Attempt> attempts = {
      {f + "/dir", O_RDONLY | O_DIRECTORY, 0, true},
      {f + "/small.txt", O_RDONLY | O_DIRECTORY, 0, true},
      {f + "/small.txt", O_RDONLY | O_CLOEXEC, 0, true},
      {f + "/link_to_small", O_RDONLY | O_NOFOLLOW, 0, true},
      {f + "/link_to_small", O_PATH | O_NOFOLLOW, 0, true},
      {s + "/created", O_CREAT | O_WRONLY | O_TRUNC, 0640, false},
      {s + "/created", O_CREAT | O_EXCL | O_WRONLY, 0600, false},
      {s + "/created2", O_CREAT | O_RDWR, 0604, false},
      {s, O_TMPFILE | O_RDWR, 0600, false},
      {s + "/created", O_WRONLY | O_TRUNC, 0, false},
      {"", O_RDONLY, 0, true},
      {f + "/small.txt/x", O_RDONLY, 0, true},
      {f + "/" + std::string(NAME_MAX + 1, 'n'), O_RDONLY, 0, true},
      {f + "/dir/sub", O_RDONLY, 0, true},
      {f + "/small.txt", O_WRONLY | O_DIRECTORY, 0, true},
  };
  for (const Attempt& attempt : attempts) {
    Step fstat_step = Fstat(-1);
    fstat_step.fd_from_step = 0;
    fstat_step.stable_identity = attempt.stable;
    Step close_step = Close(-1);
    close_step.fd_from_step = 0;
    c.iterations.push_back(
        {Open(c, attempt.path, attempt.flags, attempt.mode), fstat_step, close_step});
  }
  c.outputs = {s + "/created", s + "/created2"};
}

void OpenAtCases(const Places& p, Case& c) {
  const int fixture_fd = OpenOrDie(p.fixture, O_RDONLY | O_DIRECTORY);
  const int file_fd = OpenOrDie(p.fixture + "/small.txt", O_RDONLY);
  const int scratch_fd = OpenOrDie(p.scratch, O_RDONLY | O_DIRECTORY);
  c.descriptors = {fixture_fd, file_fd, scratch_fd};
  struct Attempt {
    int directory_fd;
    std::string path;
    int flags;
    unsigned mode;
  };
  const std::vector<Attempt> attempts = {
      {fixture_fd, "small.txt", O_RDONLY, 0},
      {fixture_fd, "dir/f001", O_RDONLY, 0},
      {fixture_fd, "link_to_small", O_RDONLY, 0},
      {fixture_fd, "missing", O_RDONLY, 0},
      {fixture_fd, "dir/../medium.bin", O_RDONLY, 0},
      {-1, p.fixture + "/large.bin", O_RDONLY, 0},
      {-1, "small.txt", O_RDONLY, 0},
      {file_fd, "x", O_RDONLY, 0},
      {AT_FDCWD, p.fixture + "/hole.bin", O_RDONLY, 0},
      {scratch_fd, "made_by_openat", O_CREAT | O_RDWR, 0620},
      {scratch_fd, "made_by_openat", O_CREAT | O_EXCL | O_RDWR, 0620},
  };
  for (const Attempt& attempt : attempts) {
    Step read_step = Pread(-1, 100, 0);
    read_step.fd_from_step = 0;
    Step close_step = Close(-1);
    close_step.fd_from_step = 0;
    c.iterations.push_back(
        {OpenAt(c, attempt.directory_fd, attempt.path, attempt.flags, attempt.mode), read_step,
         close_step});
  }
  c.outputs = {p.scratch + "/made_by_openat"};
}

void CloseCases(const Places& p, Case& c) {
  std::vector<Step> steps;
  int last = -1;
  for (const char* name : {"small.txt", "medium.bin", "large.bin", "dir", "empty", "hole.bin"}) {
    last = OpenOrDie(p.fixture + "/" + name, O_RDONLY);
    steps.push_back(Close(last));
  }
  steps.push_back(Close(-1));
  steps.push_back(Close(last));
  steps.push_back(Close(987));
  SingleStepIterations(c, std::move(steps));
}

void ReadSequential(const Places& p, Case& c) {
  const std::string path = p.fixture + "/medium.bin";
  const int fd = OpenOrDie(path, O_RDONLY);
  c.descriptors = {fd};
  PositionTracker tracker(path);
  for (int i = 0; i < 17; ++i) c.iterations.push_back({Read(fd, 5000, tracker.Read(5000))});
}

void ReadTwoFiles(const Places& p, Case& c) {
  const std::string small = p.fixture + "/small.txt", large = p.fixture + "/large.bin";
  const int small_fd = OpenOrDie(small, O_RDONLY), large_fd = OpenOrDie(large, O_RDONLY);
  c.descriptors = {small_fd, large_fd};
  PositionTracker small_tracker(small), large_tracker(large);
  for (int i = 0; i < 12; ++i) {
    c.iterations.push_back({Read(small_fd, 30, small_tracker.Read(30)),
                            Read(large_fd, 100000, large_tracker.Read(100000))});
  }
}

void ReadMispredicted(const Places& p, Case& c) {
  const std::string path = p.fixture + "/medium.bin";
  const int fd = OpenOrDie(path, O_RDONLY);
  c.descriptors = {fd};
  PositionTracker tracker(path);
  for (int i = 0; i < 14; ++i) {
    Step step = Read(fd, 4096, tracker.Read(4096));
    if (i == 3 || i == 7) step.predicted.offset += 1;
    if (i == 9) step.predicted.length = 4095;
    if (i == 11) step.predicted.fd = fd + 100;
    c.iterations.push_back({step});
  }
  c.wrong_guesses = true;
}

// The program seeks with calls the graph does not know; `plugin_knows`
// decides whether the plugin still predicts the right positions.
void ReadWithForeignSeeks(const Places& p, Case& c, bool plugin_knows) {
  const std::string path = p.fixture + "/large.bin";
  const int fd = OpenOrDie(path, O_RDONLY);
  c.descriptors = {fd};
  for (int i = 0; i < 12; ++i) {
    const int64_t target = (i * 7919) % 900000;
    Step seek = Lseek(fd, target, SEEK_SET);
    seek.outside_graph = true;
    Step read_step = Read(fd, 3000, target);
    if (!plugin_knows) read_step.predicted.offset = i * 3000;
    c.iterations.push_back({seek, read_step});
  }
  c.wrong_guesses = !plugin_knows;
}

// Reads from a pipe consume its bytes: foreactor must never read one early.
void ReadPipe(const Places&, Case& c) {
  int ends[2];
  if (pipe(ends) != 0) std::exit(2);
  const std::string bytes = Bytes(100, 7);
  if (write(ends[1], bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
    std::exit(2);
  }
  close(ends[1]);
  c.descriptors = {ends[0]};
  for (int i = 0; i < 16; ++i) c.iterations.push_back({Read(ends[0], 7, i * 7)});
}

void PipeOtherCalls(const Places&, Case& c) {
  int ends[2];
  if (pipe(ends) != 0) std::exit(2);
  const std::string bytes = Bytes(50, 8);
  if (write(ends[1], bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
    std::exit(2);
  }
  c.descriptors = {ends[0], ends[1]};
  for (int i = 0; i < 4; ++i) {
    Step status = Fstat(ends[0]);
    status.stable_identity = false;
    c.iterations.push_back({Pread(ends[0], 7, i), status, Lseek(ends[0], 0, SEEK_CUR)});
  }
}

void PreadMatrix(const Places& p, Case& c) {
  const int large = OpenOrDie(p.fixture + "/large.bin", O_RDONLY);
  const int hole = OpenOrDie(p.fixture + "/hole.bin", O_RDONLY);
  const int directory = OpenOrDie(p.fixture + "/dir", O_RDONLY | O_DIRECTORY);
  const int writer = OpenOrDie(p.scratch + "/write_only", O_CREAT | O_WRONLY, 0600);
  c.descriptors = {large, hole, directory, writer};
  SingleStepIterations(c, {
                              Pread(large, 4096, 0),
                              Pread(large, 4096, 4096),
                              Pread(large, 100000, 500000),
                              Pread(large, 0, 10),
                              Pread(large, 4096, 1048580),
                              Pread(large, 4096, 1048583),
                              Pread(large, 4096, int64_t{1} << 40),
                              Pread(large, 10, -1),
                              Pread(hole, 8192, 0),
                              Pread(hole, 8192, (1 << 20) - 4096),
                              Pread(directory, 100, 0),
                              Pread(-1, 100, 0),
                              Pread(writer, 100, 0),
                              Pread(large, 1 << 20, 3),
                          });
}

void PreadRandom(const Places& p, Case& c) {
  const int fd = OpenOrDie(p.fixture + "/large.bin", O_RDONLY);
  c.descriptors = {fd};
  uint32_t state = 12345;
  for (int i = 0; i < 64; ++i) {
    state = state * 1664525u + 1013904223u;
    const int64_t offset = (state >> 8) % (1 << 20);
    const size_t length = 4096 + (state % 12289);
    c.iterations.push_back({Pread(fd, length, offset)});
  }
}

void WriteSequential(const Places& p, Case& c) {
  const std::string path = p.scratch + "/sequential";
  const int fd = OpenOrDie(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  c.descriptors = {fd};
  int64_t position = 0;
  const size_t lengths[] = {10, 0, 4096, 3, 70000, 1, 65536, 17};
  uint32_t seed = 1;
  for (size_t length : lengths) {
    c.iterations.push_back({Write(c, fd, Bytes(length, seed++), position)});
    position += static_cast<int64_t>(length);
  }
  c.outputs = {path};
}

void WriteAppend(const Places& p, Case& c) {
  const std::string path = p.scratch + "/appended";
  const int prefill = OpenOrDie(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const std::string head = Bytes(1000, 99);
  if (write(prefill, head.data(), head.size()) != 1000) std::exit(2);
  close(prefill);
  const int fd = OpenOrDie(path, O_WRONLY | O_APPEND);
  c.descriptors = {fd};
  int64_t position = 0;  // where the descriptor is before each write
  int64_t size = 1000;
  for (uint32_t i = 0; i < 6; ++i) {
    const size_t length = 100 + i * 333;
    c.iterations.push_back({Write(c, fd, Bytes(length, 200 + i), position)});
    size += static_cast<int64_t>(length);
    position = size;
  }
  c.outputs = {path};
}

void WriteErrors(const Places& p, Case& c) {
  const int read_only = OpenOrDie(p.fixture + "/small.txt", O_RDONLY);
  const int directory = OpenOrDie(p.fixture + "/dir", O_RDONLY | O_DIRECTORY);
  c.descriptors = {read_only, directory};
  SingleStepIterations(c, {Write(c, read_only, "abc", 0), Write(c, directory, "abc", 0),
                           Write(c, -1, "abc", 0), Write(c, read_only, "", 0)});
}

void PwriteOverlapping(const Places& p, Case& c) {
  const std::string path = p.scratch + "/overlapping";
  const int fd = OpenOrDie(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  const int read_only = OpenOrDie(p.fixture + "/small.txt", O_RDONLY);
  c.descriptors = {fd, read_only};
  SingleStepIterations(c, {
                              Pwrite(c, fd, std::string(100, 'A'), 0),
                              Pwrite(c, fd, std::string(50, 'B'), 25),
                              Pwrite(c, fd, std::string(10, 'C'), 1000000),
                              Pwrite(c, fd, "", 5),
                              Pwrite(c, fd, std::string(20, 'E'), 90),
                              Pwrite(c, fd, std::string(10, 'F'), -1),
                              Pwrite(c, fd, Bytes(70000, 5), 4000),
                              Pwrite(c, fd, std::string(3, 'G'), 4001),
                              Pwrite(c, read_only, "x", 0),
                          });
  c.outputs = {path};
}

void LseekMix(const Places& p, Case& c) {
  const std::string path = p.fixture + "/hole.bin";
  const int fd = OpenOrDie(path, O_RDONLY);
  c.descriptors = {fd};
  struct Move {
    int64_t offset;
    int whence;
  };
  const Move moves[] = {{0, SEEK_SET},
                        {10, SEEK_CUR},
                        {-5, SEEK_END},
                        {0, SEEK_DATA},
                        {0, SEEK_HOLE},
                        {2 << 20, SEEK_DATA},
                        {-100000000, SEEK_CUR},
                        {5, 99},
                        {1 << 20, SEEK_SET},
                        {100, SEEK_DATA},
                        {(1 << 20) + 4095, SEEK_SET}};
  PositionTracker tracker(path);
  for (const Move& move : moves) {
    tracker.Seek(move.offset, move.whence);
    c.iterations.push_back({Lseek(fd, move.offset, move.whence), Read(fd, 8, tracker.Read(8))});
  }
}

void FstatKinds(const Places& p, Case& c) {
  const int small = OpenOrDie(p.fixture + "/small.txt", O_RDONLY);
  const int directory = OpenOrDie(p.fixture + "/dir", O_RDONLY | O_DIRECTORY);
  const int hole = OpenOrDie(p.fixture + "/hole.bin", O_RDONLY);
  const int link = OpenOrDie(p.fixture + "/link_to_small", O_PATH | O_NOFOLLOW);
  int ends[2];
  if (pipe(ends) != 0) std::exit(2);
  const int closed = OpenOrDie(p.fixture + "/empty", O_RDONLY);  // the highest descriptor
  close(closed);
  c.descriptors = {small, directory, hole, link, ends[0], ends[1]};
  SingleStepIterations(c, {Fstat(small), Fstat(directory), Fstat(hole), Fstat(link), Fstat(-1),
                           Fstat(9999), Fstat(closed), Fstat(small)});
  Step pipe_status = Fstat(ends[0]);
  pipe_status.stable_identity = false;
  c.iterations.push_back({pipe_status});
}

void FstatatMatrix(const Places& p, Case& c) {
  const int fixture_fd = OpenOrDie(p.fixture, O_RDONLY | O_DIRECTORY);
  const int file_fd = OpenOrDie(p.fixture + "/small.txt", O_RDONLY);
  c.descriptors = {fixture_fd, file_fd};
  const foreactor_call_type t = FOREACTOR_CALL_FSTATAT;
  SingleStepIterations(c, {
                              PathStat(c, t, fixture_fd, "small.txt", 0),
                              PathStat(c, t, fixture_fd, "link_to_small", 0),
                              PathStat(c, t, fixture_fd, "link_to_small", AT_SYMLINK_NOFOLLOW),
                              PathStat(c, t, fixture_fd, "dangling", 0),
                              PathStat(c, t, fixture_fd, "dangling", AT_SYMLINK_NOFOLLOW),
                              PathStat(c, t, fixture_fd, "dir/sub/a", 0),
                              PathStat(c, t, fixture_fd, "", AT_EMPTY_PATH),
                              PathStat(c, t, fixture_fd, "", 0),
                              PathStat(c, t, fixture_fd, "small.txt", 0x40000000),
                              PathStat(c, t, fixture_fd, "small.txt/x", 0),
                              PathStat(c, t, AT_FDCWD, p.fixture + "/large.bin", 0),
                              PathStat(c, t, -1, "small.txt", 0),
                              PathStat(c, t, file_fd, "x", 0),
                              PathStat(c, t, file_fd, "", AT_EMPTY_PATH),
                              PathStat(c, t, fixture_fd, "link_to_dir", AT_SYMLINK_NOFOLLOW),
                          });
}

std::vector<std::string> InterestingPaths(const std::string& f) {
  return {f + "/small.txt",
          f + "/link_to_small",
          f + "/link_to_dir",
          f + "/dangling",
          f + "/dir",
          f + "/dir/sub",
          f + "/missing",
          "",
          f + "/" + std::string(NAME_MAX + 1, 'n'),
          f + "/small.txt/x",
          f + "/dir/sub/../f003",
          f + "/empty"};
}

void StatPaths(const Places& p, Case& c) {
  for (const std::string& path : InterestingPaths(p.fixture)) {
    c.iterations.push_back({PathStat(c, FOREACTOR_CALL_STAT, -1, path, 0)});
  }
}

void LstatPaths(const Places& p, Case& c) {
  for (const std::string& path : InterestingPaths(p.fixture)) {
    c.iterations.push_back({PathStat(c, FOREACTOR_CALL_LSTAT, -1, path, 0)});
  }
}

void StatxMatrix(const Places& p, Case& c) {
  const int fixture_fd = OpenOrDie(p.fixture, O_RDONLY | O_DIRECTORY);
  const int medium = OpenOrDie(p.fixture + "/medium.bin", O_RDONLY);
  c.descriptors = {fixture_fd, medium};
  const foreactor_call_type t = FOREACTOR_CALL_STATX;
  SingleStepIterations(
      c, {
             PathStat(c, t, fixture_fd, "small.txt", 0, STATX_BASIC_STATS),
             PathStat(c, t, fixture_fd, "link_to_small", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS),
             PathStat(c, t, fixture_fd, "link_to_small", 0, STATX_ALL),
             PathStat(c, t, fixture_fd, "dir", 0, STATX_SIZE | STATX_MODE),
             PathStat(c, t, medium, "", AT_EMPTY_PATH, STATX_ALL),
             PathStat(c, t, fixture_fd, "missing", 0, STATX_BASIC_STATS),
             PathStat(c, t, fixture_fd, "small.txt", 0, STATX__RESERVED),
             PathStat(c, t, fixture_fd, "small.txt", 0x40000000, STATX_BASIC_STATS),
             PathStat(c, t, fixture_fd, "small.txt", AT_STATX_DONT_SYNC, STATX_BASIC_STATS),
             PathStat(c, t, AT_FDCWD, p.fixture + "/large.bin", 0, STATX_BTIME),
             PathStat(c, t, fixture_fd, "hole.bin", AT_STATX_FORCE_SYNC, 0),
             PathStat(c, t, -1, "small.txt", 0, STATX_BASIC_STATS),
         });
}

void GetdentsWholeDirectory(const Places& p, Case& c) {
  const std::string path = p.fixture + "/dir";
  const int fd = OpenOrDie(path, O_RDONLY | O_DIRECTORY);
  c.descriptors = {fd};
  // Count the calls until the end, on a separate descriptor.
  const int counter = OpenOrDie(path, O_RDONLY | O_DIRECTORY);
  std::vector<char> buffer(1024);
  int calls = 1;
  while (getdents64(counter, buffer.data(), buffer.size()) > 0) ++calls;
  close(counter);
  for (int i = 0; i < calls + 1; ++i) c.iterations.push_back({Getdents(fd, 1024)});
}

void GetdentsRewind(const Places& p, Case& c) {
  const int fd = OpenOrDie(p.fixture + "/dir/sub", O_RDONLY | O_DIRECTORY);
  const int big = OpenOrDie(p.fixture + "/dir", O_RDONLY | O_DIRECTORY);
  c.descriptors = {fd, big};
  for (int i = 0; i < 5; ++i) {
    c.iterations.push_back({Getdents(big, 512), Getdents(fd, 4096), Lseek(big, 0, SEEK_SET),
                            Getdents(fd, 4096), Lseek(fd, 0, SEEK_SET)});
  }
}

void GetdentsErrors(const Places& p, Case& c) {
  const int directory = OpenOrDie(p.fixture + "/dir", O_RDONLY | O_DIRECTORY);
  const int file = OpenOrDie(p.fixture + "/small.txt", O_RDONLY);
  c.descriptors = {directory, file};
  SingleStepIterations(c, {Getdents(directory, 8), Getdents(file, 4096), Getdents(-1, 4096),
                           Getdents(directory, 0)});
}

void ReadvMatrix(const Places& p, Case& c) {
  const std::string path = p.fixture + "/medium.bin";
  const int fd = OpenOrDie(path, O_RDONLY);
  c.descriptors = {fd};
  PositionTracker tracker(path);
  const std::vector<std::vector<size_t>> shapes = {{1, 4095, 333}, {0, 10, 0}, {65536}, {7, 7}};
  for (int i = 0; i < 12; ++i) {
    const std::vector<size_t>& shape = shapes[i % shapes.size()];
    c.iterations.push_back(
        {VectorRead(FOREACTOR_CALL_READV, fd, shape, tracker.Read(Total(shape)))});
  }
}

void PreadvMatrix(const Places& p, Case& c) {
  const int fd = OpenOrDie(p.fixture + "/large.bin", O_RDONLY);
  c.descriptors = {fd};
  const foreactor_call_type t = FOREACTOR_CALL_PREADV;
  SingleStepIterations(c, {
                              VectorRead(t, fd, {7, 300, 33}, 0),
                              VectorRead(t, fd, {4096, 4096, 4096, 4096}, 1048000),
                              VectorRead(t, fd, {10}, int64_t{1} << 40),
                              VectorRead(t, fd, {1, 1}, -1),
                              VectorRead(t, fd, {}, 5),
                              VectorRead(t, fd, {100, 0, 100}, 77777),
                              VectorRead(t, -1, {10}, 0),
                          });
}

void WritevSequential(const Places& p, Case& c) {
  const std::string path = p.scratch + "/vectored";
  const int fd = OpenOrDie(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  c.descriptors = {fd};
  const std::vector<std::vector<std::string>> writes = {
      {"ab", "", "cdef"}, {Bytes(5000, 1), Bytes(3, 2)}, {""}, {Bytes(65536, 3), "z"}};
  int64_t position = 0;
  for (const auto& pieces : writes) {
    Step step = VectorWrite(c, FOREACTOR_CALL_WRITEV, fd, pieces, position);
    position += static_cast<int64_t>(step.actual.length);
    c.iterations.push_back({step});
  }
  c.outputs = {path};
}

void PwritevOffsets(const Places& p, Case& c) {
  const std::string path = p.scratch + "/vectored_positional";
  const int fd = OpenOrDie(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  c.descriptors = {fd};
  const foreactor_call_type t = FOREACTOR_CALL_PWRITEV;
  SingleStepIterations(c, {
                              VectorWrite(c, t, fd, {"0123456789", "abc"}, 0),
                              VectorWrite(c, t, fd, {"XY"}, 5),
                              VectorWrite(c, t, fd, {Bytes(10000, 4), Bytes(10, 5)}, 200000),
                              VectorWrite(c, t, fd, {"late"}, -1),
                              VectorWrite(c, t, fd, {"", ""}, 3),
                              VectorWrite(c, t, fd, {"over", "lap"}, 199998),
                          });
  c.outputs = {path};
}

// cp-like: each chunk read is written out; the read asks to be linked with
// the write, which then carries no buffer of its own.
void CopyLinked(const Places& p, Case& c) {
  const std::string source = p.fixture + "/medium.bin";
  const std::string target = p.scratch + "/copy";
  const int in = OpenOrDie(source, O_RDONLY);
  const int out = OpenOrDie(target, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  c.descriptors = {in, out};
  const int64_t size = FileSize(source);
  const size_t chunk = 16384;
  for (int64_t position = 0; position <= size; position += chunk) {
    Step read_step = Read(in, chunk, position);
    read_step.predicted.link_next = 1;
    const size_t expected = static_cast<size_t>(std::min<int64_t>(chunk, size - position));
    Step write_step = MakeStep(FOREACTOR_CALL_WRITE);
    write_step.actual.fd = write_step.predicted.fd = out;
    write_step.data_from_step = 0;
    write_step.predicted.buffer = nullptr;
    write_step.predicted.length = expected;
    write_step.predicted.offset = position;
    c.iterations.push_back({read_step, write_step});
  }
  c.outputs = {target};
}

void DuLike(const Places& p, Case& c) {
  const int directory = OpenOrDie(p.fixture + "/dir", O_RDONLY | O_DIRECTORY);
  c.descriptors = {directory};
  for (int i = 0; i < 300; ++i) {
    c.iterations.push_back(
        {PathStat(c, FOREACTOR_CALL_FSTATAT, directory, Format("f%03d", i), AT_SYMLINK_NOFOLLOW)});
  }
  c.iterations.push_back(
      {PathStat(c, FOREACTOR_CALL_FSTATAT, directory, "sub", AT_SYMLINK_NOFOLLOW)});
}

void EarlyExitPread(const Places& p, Case& c) {
  const int fd = OpenOrDie(p.fixture + "/large.bin", O_RDONLY);
  c.descriptors = {fd};
  for (int i = 0; i < 40; ++i) c.iterations.push_back({Pread(fd, 8192, i * 20000)});
  c.program_iterations = 10;
  c.weak_exit = true;
}

void EarlyExitOpen(const Places& p, Case& c) {
  for (int i = 0; i < 30; ++i) {
    Step read_step = Pread(-1, 512, 0);
    read_step.fd_from_step = 0;
    Step close_step = Close(-1);
    close_step.fd_from_step = 0;
    c.iterations.push_back(
        {Open(c, p.fixture + Format("/dir/f%03d", 100 + i), O_RDONLY), read_step, close_step});
  }
  c.program_iterations = 6;
  c.weak_exit = true;
}

void NeverReady(const Places& p, Case& c) {
  const int fd = OpenOrDie(p.fixture + "/medium.bin", O_RDONLY);
  c.descriptors = {fd};
  for (int i = 0; i < 8; ++i) {
    Step step = Pread(fd, 1000, i * 1000);
    step.never_ready = true;
    c.iterations.push_back({step});
  }
}

void OpenMispredictedPaths(const Places& p, Case& c) {
  for (int i = 0; i < 12; ++i) {
    Step open_step = Open(c, p.fixture + Format("/dir/f%03d", 200 + i), O_RDONLY);
    if (i % 2 == 1) open_step.predicted.path = c.Keep(p.fixture + Format("/dir/f%03d", 250 + i));
    if (i == 4) open_step.predicted.flags = O_RDONLY | O_CLOEXEC;
    Step read_step = Pread(-1, 4096, 0);
    read_step.fd_from_step = 0;
    Step close_step = Close(-1);
    close_step.fd_from_step = 0;
    c.iterations.push_back({open_step, read_step, close_step});
  }
  c.wrong_guesses = true;
}

const std::vector<NamedCase>& AllCases() {
  static const std::vector<NamedCase> cases = {
      {"open_read_close", OpenReadClose},
      {"open_flags", OpenFlags},
      {"openat", OpenAtCases},
      {"close", CloseCases},
      {"read_sequential", ReadSequential},
      {"read_two_files", ReadTwoFiles},
      {"read_mispredicted", ReadMispredicted},
      {"read_foreign_seeks_known",
       [](const Places& p, Case& c) { ReadWithForeignSeeks(p, c, true); }},
      {"read_foreign_seeks_unknown",
       [](const Places& p, Case& c) { ReadWithForeignSeeks(p, c, false); }},
      {"read_pipe", ReadPipe},
      {"pipe_other_calls", PipeOtherCalls},
      {"pread_matrix", PreadMatrix},
      {"pread_random", PreadRandom},
      {"write_sequential", WriteSequential},
      {"write_append", WriteAppend},
      {"write_errors", WriteErrors},
      {"pwrite_overlapping", PwriteOverlapping},
      {"lseek_mix", LseekMix},
      {"fstat_kinds", FstatKinds},
      {"fstatat_matrix", FstatatMatrix},
      {"stat_paths", StatPaths},
      {"lstat_paths", LstatPaths},
      {"statx_matrix", StatxMatrix},
      {"getdents_whole_directory", GetdentsWholeDirectory},
      {"getdents_rewind", GetdentsRewind},
      {"getdents_errors", GetdentsErrors},
      {"readv_matrix", ReadvMatrix},
      {"preadv_matrix", PreadvMatrix},
      {"writev_sequential", WritevSequential},
      {"pwritev_offsets", PwritevOffsets},
      {"copy_linked", CopyLinked},
      {"du_like", DuLike},
      {"early_exit_pread", EarlyExitPread},
      {"early_exit_open", EarlyExitOpen},
      {"never_ready", NeverReady},
      {"open_mispredicted_paths", OpenMispredictedPaths},
  };
  return cases;
}

// ----------------------------------------------------------------- graphs

// What the callbacks of one scope share with the program.
struct ScopeState {
  const Case* plan = nullptr;
  std::vector<std::vector<int64_t>> reported;  // result callback values per visit
  std::vector<std::vector<int>> report_count;
  size_t expected_iteration = 0;  // the visit the next result callback must be for
  size_t expected_step = 0;
  int protocol_errors = 0;  // callbacks out of order, bad visits

  explicit ScopeState(const Case& c) : plan(&c) {
    for (const auto& iteration : c.iterations) {
      reported.emplace_back(iteration.size(), 0);
      report_count.emplace_back(iteration.size(), 0);
    }
    SkipOutsideSteps();
  }

  // Moves the expected visit to the next graph step in program order.
  void AdvanceExpected() {
    if (++expected_step == plan->iterations[0].size()) {
      expected_step = 0;
      ++expected_iteration;
    }
    SkipOutsideSteps();
  }

 private:
  void SkipOutsideSteps() {
    const size_t steps = plan->iterations[0].size();
    while (expected_iteration < plan->iterations.size() &&
           plan->iterations[expected_iteration][expected_step].outside_graph) {
      if (++expected_step == steps) {
        expected_step = 0;
        ++expected_iteration;
      }
    }
  }
};

// node_data of each syscall node: its step index.
size_t step_indices[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

foreactor_readiness Arguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<ScopeState*>(visit->scope_state);
  const size_t step_index = *static_cast<const size_t*>(visit->node_data);
  if (visit->loop_count != 1) {
    ++state->protocol_errors;
    return FOREACTOR_NEVER;
  }
  const uint64_t iteration = visit->iteration[0];
  if (iteration >= state->plan->iterations.size()) return FOREACTOR_NEVER;
  const Step& step = state->plan->iterations[iteration][step_index];
  if (step.never_ready) return FOREACTOR_NOT_YET;
  foreactor_call predicted = step.predicted;
  if (step.fd_from_step >= 0) {
    if (state->report_count[iteration][step.fd_from_step] == 0) return FOREACTOR_NOT_YET;
    const int64_t opened = state->reported[iteration][step.fd_from_step];
    predicted.fd = opened >= 0 ? static_cast<int>(opened) : -1;
  }
  if (predicted.type != call->type) ++state->protocol_errors;
  *call = predicted;
  return FOREACTOR_READY;
}

void ResultReported(const foreactor_visit* visit, int64_t result) {
  auto* state = static_cast<ScopeState*>(visit->scope_state);
  const size_t step_index = *static_cast<const size_t*>(visit->node_data);
  const uint64_t iteration = visit->loop_count == 1 ? visit->iteration[0] : UINT64_MAX;
  if (iteration >= state->plan->iterations.size()) {
    ++state->protocol_errors;
    return;
  }
  if (iteration != state->expected_iteration || step_index != state->expected_step) {
    ++state->protocol_errors;
  } else {
    state->AdvanceExpected();
  }
  state->reported[iteration][step_index] = result;
  ++state->report_count[iteration][step_index];
}

int ChooseLoop(const foreactor_visit* visit) {
  auto* state = static_cast<ScopeState*>(visit->scope_state);
  if (visit->loop_count != 1) return FOREACTOR_CHOICE_NOT_YET;
  return visit->iteration[0] + 1 < state->plan->iterations.size() ? 0 : 1;
}

// start -> step 0 -> ... -> step n-1 -> branch; branch child 0 goes back to
// the first graph step, child 1 to the end.  Returns null (after printing
// why) when the graph is refused.
foreactor_graph* BuildGraph(const Case& c) {
  foreactor_graph* graph = foreactor_graph_create(("matrix_" + c.name).c_str());
  if (graph == nullptr) return nullptr;
  int previous = FOREACTOR_START_NODE;
  int first = -1;
  const std::vector<Step>& steps = c.iterations[0];
  for (size_t j = 0; j < steps.size(); ++j) {
    if (steps[j].outside_graph) continue;
    const int node =
        foreactor_graph_add_syscall(graph, Format("step%zu", j).c_str(), steps[j].actual.type,
                                    &Arguments, &ResultReported, &step_indices[j]);
    if (first < 0) first = node;
    foreactor_graph_set_next(graph, previous, node, 0);
    previous = node;
  }
  const int branch = foreactor_graph_add_branch(graph, "again", &ChooseLoop, nullptr);
  foreactor_graph_set_next(graph, previous, branch, c.weak_exit ? 1 : 0);
  foreactor_graph_add_child(graph, branch, first, 0);
  foreactor_graph_add_child(graph, branch, FOREACTOR_END_NODE, 0);
  char error[256] = "";
  if (foreactor_graph_finish(graph, error, sizeof(error)) != 0) {
    std::printf("graph refused: %s\n", error);
    foreactor_graph_destroy(graph);
    return nullptr;
  }
  return graph;
}

// ---------------------------------------------------------------- running

PathNames names;

std::string Describe(const foreactor_call& call, const std::vector<size_t>& segments) {
  const char* type = foreactor_call_type_name(call.type);
  switch (call.type) {
    case FOREACTOR_CALL_OPEN:
      return Format("%s(%s, %#x, %o)", type, names.Show(call.path).c_str(), call.flags, call.mode);
    case FOREACTOR_CALL_OPENAT:
      return Format("%s(%d, %s, %#x, %o)", type, call.fd, names.Show(call.path).c_str(), call.flags,
                    call.mode);
    case FOREACTOR_CALL_CLOSE:
    case FOREACTOR_CALL_FSTAT:
      return Format("%s(%d)", type, call.fd);
    case FOREACTOR_CALL_READ:
    case FOREACTOR_CALL_WRITE:
    case FOREACTOR_CALL_GETDENTS64:
      return Format("%s(%d, %zu)", type, call.fd, call.length);
    case FOREACTOR_CALL_PREAD:
    case FOREACTOR_CALL_PWRITE:
      return Format("%s(%d, %zu, %" PRId64 ")", type, call.fd, call.length, call.offset);
    case FOREACTOR_CALL_LSEEK:
      return Format("%s(%d, %" PRId64 ", %d)", type, call.fd, call.offset, call.whence);
    case FOREACTOR_CALL_FSTATAT:
      return Format("%s(%d, %s, %#x)", type, call.fd, names.Show(call.path).c_str(), call.flags);
    case FOREACTOR_CALL_STAT:
    case FOREACTOR_CALL_LSTAT:
      return Format("%s(%s)", type, names.Show(call.path).c_str());
    case FOREACTOR_CALL_STATX:
      return Format("%s(%d, %s, %#x, %#x)", type, call.fd, names.Show(call.path).c_str(),
                    call.flags, call.mode);
    case FOREACTOR_CALL_READV:
    case FOREACTOR_CALL_PREADV: {
      std::string shape;
      for (size_t length : segments) shape += Format("%s%zu", shape.empty() ? "" : "+", length);
      return Format("%s(%d, [%s], %d, %" PRId64 ")", type, call.fd, shape.c_str(), call.iovcnt,
                    call.type == FOREACTOR_CALL_PREADV ? call.offset : 0);
    }
    case FOREACTOR_CALL_WRITEV:
    case FOREACTOR_CALL_PWRITEV:
      return Format("%s(%d, %zu bytes, %d, %" PRId64 ")", type, call.fd, call.length, call.iovcnt,
                    call.type == FOREACTOR_CALL_PWRITEV ? call.offset : 0);
    default:
      return Format("type%d", static_cast<int>(call.type));
  }
}

// What one call showed the program.
struct Observed {
  int64_t result = 0;                // return value, or -errno
  std::string text;                  // the printed line(s)
  std::vector<unsigned char> bytes;  // data read (read family), for linked writes
};

std::string BufferText(const std::vector<unsigned char>& buffer) {
  return Format("buffer=%016" PRIx64, Hash(buffer.data(), buffer.size()));
}

// Makes the call `call` (the step's actual call with its dependencies
// resolved) and describes what it showed.
Observed Perform(const Step& step, const foreactor_call& call) {
  Observed observed;
  std::string detail;
  errno = kErrnoSentinel;
  int64_t returned = -1;
  int error = 0;
  std::vector<unsigned char> buffer;
  struct stat status;
  struct statx extended;
  std::memset(&status, kFillByte, sizeof(status));
  std::memset(&extended, kFillByte, sizeof(extended));
  std::vector<struct iovec> vector;
  if (call.type == FOREACTOR_CALL_READV || call.type == FOREACTOR_CALL_PREADV) {
    buffer.assign(Total(step.segments), kFillByte);
    size_t start = 0;
    for (size_t length : step.segments) {
      vector.push_back({buffer.data() + start, length});
      start += length;
    }
  } else if (call.type == FOREACTOR_CALL_READ || call.type == FOREACTOR_CALL_PREAD ||
             call.type == FOREACTOR_CALL_GETDENTS64) {
    buffer.assign(call.length, kFillByte);
  }
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
    case FOREACTOR_CALL_STAT:
      returned = stat(call.path, &status);
      break;
    case FOREACTOR_CALL_LSTAT:
      returned = lstat(call.path, &status);
      break;
    case FOREACTOR_CALL_STATX:
      returned = statx(call.fd, call.path, call.flags, call.mode, &extended);
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
  error = errno;
  observed.result = returned < 0 ? -static_cast<int64_t>(error) : returned;
  observed.text = Describe(call, step.segments) + " " + ReturnAndErrno(returned, error);
  switch (call.type) {
    case FOREACTOR_CALL_FSTAT:
    case FOREACTOR_CALL_FSTATAT:
    case FOREACTOR_CALL_STAT:
    case FOREACTOR_CALL_LSTAT:
      observed.text +=
          " " + (returned == 0 ? DescribeStat(status, step.stable_identity)
                               : Format("bytes=%016" PRIx64, Hash(&status, sizeof(status))));
      break;
    case FOREACTOR_CALL_STATX:
      observed.text += " " + DescribeStatx(extended);
      break;
    case FOREACTOR_CALL_READ:
    case FOREACTOR_CALL_PREAD:
    case FOREACTOR_CALL_READV:
    case FOREACTOR_CALL_PREADV:
      observed.text += " " + BufferText(buffer);
      if (returned > 0) observed.bytes.assign(buffer.begin(), buffer.begin() + returned);
      break;
    case FOREACTOR_CALL_GETDENTS64:
      observed.text += " " + BufferText(buffer);
      if (returned > 0) {
        observed.text += "\n" + DescribeDirents(reinterpret_cast<const char*>(buffer.data()),
                                                static_cast<size_t>(returned));
        if (!observed.text.empty() && observed.text.back() == '\n') observed.text.pop_back();
      }
      break;
    default:
      break;
  }
  return observed;
}

void RunCase(Case& c) {
  if (c.program_iterations == 0) c.program_iterations = c.iterations.size();
  std::printf("== %s: %zu iterations planned, %zu made\n", c.name.c_str(), c.iterations.size(),
              c.program_iterations);
  foreactor_graph* graph = BuildGraph(c);
  if (graph == nullptr) return;

  ScopeState state(c);
  std::vector<std::vector<Observed>> observed(c.program_iterations);
  foreactor_scope_enter(graph, &state);
  for (size_t i = 0; i < c.program_iterations; ++i) {
    const std::vector<Step>& steps = c.iterations[i];
    for (size_t j = 0; j < steps.size(); ++j) {
      const Step& step = steps[j];
      foreactor_call call = step.actual;
      if (step.fd_from_step >= 0) {
        const int64_t opened = observed[i][step.fd_from_step].result;
        call.fd = opened >= 0 ? static_cast<int>(opened) : -1;
      }
      if (step.data_from_step >= 0) {
        const std::vector<unsigned char>& bytes = observed[i][step.data_from_step].bytes;
        call.buffer = const_cast<unsigned char*>(bytes.data());
        call.length = bytes.size();
      }
      observed[i].push_back(Perform(step, call));
    }
  }
  foreactor_scope_exit(graph);

  int violations = state.protocol_errors;
  int missing = 0;
  int visits = 0;
  for (size_t i = 0; i < c.iterations.size(); ++i) {
    for (size_t j = 0; j < c.iterations[i].size(); ++j) {
      if (c.iterations[i][j].outside_graph) continue;
      const int count = state.report_count[i][j];
      if (i >= c.program_iterations) {
        if (count != 0) ++violations;
        continue;
      }
      ++visits;
      std::printf("%s[%zu.%zu] %s\n", c.name.c_str(), i, j, observed[i][j].text.c_str());
      if (count == 0) ++missing;
      if (count > 1 || (count == 1 && state.reported[i][j] != observed[i][j].result)) ++violations;
    }
    if (i < c.program_iterations) {
      for (size_t j = 0; j < c.iterations[i].size(); ++j) {
        if (!c.iterations[i][j].outside_graph) continue;
        std::printf("%s[%zu.%zu] outside graph: %s\n", c.name.c_str(), i, j,
                    observed[i][j].text.c_str());
      }
    }
  }
  std::printf("%s: result callback violations=%d\n", c.name.c_str(), violations);
  std::fprintf(stderr, "call_matrix: %s: result callbacks missing=%d of %d%s\n", c.name.c_str(),
               missing, visits, c.wrong_guesses ? " (wrong guesses)" : "");

  for (size_t k = 0; k < c.descriptors.size(); ++k) {
    std::printf("%s: descriptor %zu position=%jd\n", c.name.c_str(), k,
                static_cast<intmax_t>(lseek(c.descriptors[k], 0, SEEK_CUR)));
  }
  for (int fd : c.descriptors) close(fd);
  for (const std::string& path : c.outputs) {
    std::printf("%s: file %s %s\n", c.name.c_str(), names.Show(path.c_str()).c_str(),
                DescribeFileContents(path).c_str());
  }
  foreactor_graph_destroy(graph);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--list") == 0) {
    for (const NamedCase& named : AllCases()) std::printf("%s\n", named.name);
    return 0;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s FIXTURE SCRATCH [CASE...] | --list\n", argv[0]);
    return 2;
  }
  Places places{argv[1], argv[2]};
  names.Add(places.fixture, "$F");
  names.Add(places.scratch, "$S");
  std::vector<std::string> wanted(argv + 3, argv + argc);
  for (const std::string& name : wanted) {
    bool known = false;
    for (const NamedCase& named : AllCases()) known = known || name == named.name;
    if (!known) {
      std::fprintf(stderr, "call_matrix: unknown case '%s'\n", name.c_str());
      return 2;
    }
  }
  for (const NamedCase& named : AllCases()) {
    if (!wanted.empty()) {
      bool chosen = false;
      for (const std::string& name : wanted) chosen = chosen || name == named.name;
      if (!chosen) continue;
    }
    Case c;
    c.name = named.name;
    named.make(places, c);
    RunCase(c);
    std::printf("%s: descriptors left under fixture=%d scratch=%d\n", named.name,
                OpenDescriptorsUnder(places.fixture), OpenDescriptorsUnder(places.scratch));
    std::fflush(stdout);
  }
  return 0;
}
