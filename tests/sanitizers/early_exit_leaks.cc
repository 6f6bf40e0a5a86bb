// early_exit_leaks: scopes that end before their graph does, many times
// over, and a check that nothing accumulates.
//
// The graph is a loop over N files: open (read-only, so it may be issued on
// a guess), pread, fstat, close, with a weak edge after the pread (the
// function may return there).  Each round the function stops early, either
// by returning at the weak edge or by throwing a C++ exception through
// foreactor::Scope, so that early opens, reads in flight and buffers must
// all be dropped by the scope's exit.
//
// Usage: early_exit_leaks DIRECTORY ROUNDS
//   Creates its files in DIRECTORY.  Prints one line per checkpoint:
//     round R: descriptors=D heap_bytes=B
//   and at the end "descriptors grew by X, heap grew by Y bytes", exiting 1
//   when descriptors grew at all or the heap grew by more than 1 MiB after
//   the warm-up (per-thread instances and engines are made once and kept).
//   Under LeakSanitizer, leaks are also reported at exit.
#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "foreactor/foreactor.hpp"

namespace {

constexpr int kFiles = 24;
constexpr size_t kReadLength = 16384;

struct ScanState {
  std::vector<std::string> paths;
  int current_fd = -1;      // reported by the open's result callback
  uint64_t stop_after = 0;  // the function leaves after this many files
};

int CountDescriptors() {
  DIR* directory = opendir("/proc/self/fd");
  if (directory == nullptr) return -1;
  int count = 0;
  while (struct dirent* entry = readdir(directory)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(directory);
  return count - 1;  // the directory stream's own descriptor
}

size_t HeapBytes() { return mallinfo2().uordblks; }

foreactor::Graph<ScanState> MakeGraph() {
  foreactor::GraphBuilder<ScanState> b("early_exit_scan");
  auto open = b.Syscall(
      "open", FOREACTOR_CALL_OPEN,
      [](ScanState& s, const foreactor::Visit& v, foreactor_call& call) {
        const uint64_t i = v.iteration(0);
        if (i >= s.paths.size()) return FOREACTOR_NEVER;
        call = foreactor::Open(s.paths[i].c_str(), O_RDONLY);
        return FOREACTOR_READY;
      },
      [](ScanState& s, const foreactor::Visit&, int64_t result) {
        s.current_fd = static_cast<int>(result);
      });
  // The fd is known only once the open's result came back: later visits'
  // reads wait ("not yet"), the opens ahead are issued on a guess.
  auto read = b.Syscall("read", FOREACTOR_CALL_PREAD,
                        [](ScanState& s, const foreactor::Visit&, foreactor_call& call) {
                          if (s.current_fd < 0) return FOREACTOR_NOT_YET;
                          call = foreactor::Pread(s.current_fd, kReadLength, 0);
                          return FOREACTOR_READY;
                        });
  auto stat = b.Syscall("stat", FOREACTOR_CALL_FSTAT,
                        [](ScanState& s, const foreactor::Visit&, foreactor_call& call) {
                          if (s.current_fd < 0) return FOREACTOR_NOT_YET;
                          call = foreactor::Call(FOREACTOR_CALL_FSTAT);
                          call.fd = s.current_fd;
                          return FOREACTOR_READY;
                        });
  auto close = b.Syscall(
      "close", FOREACTOR_CALL_CLOSE,
      [](ScanState& s, const foreactor::Visit&, foreactor_call& call) {
        if (s.current_fd < 0) return FOREACTOR_NOT_YET;
        call = foreactor::Call(FOREACTOR_CALL_CLOSE);
        call.fd = s.current_fd;
        return FOREACTOR_READY;
      },
      [](ScanState& s, const foreactor::Visit&, int64_t) { s.current_fd = -1; });
  auto more = b.Branch("more", [](ScanState& s, const foreactor::Visit& v) {
    return v.iteration(0) + 1 < s.paths.size() ? 0 : 1;
  });
  b.start().Then(open).Then(read).Then(stat, foreactor::kWeak).Then(close).Then(more);
  more.Children({open, b.end()});
  return b.Build();
}

struct EarlyExit : std::runtime_error {
  EarlyExit() : std::runtime_error("early exit") {}
};

// The wrapped function: reads files until `stop_after`, then leaves by
// returning (throw_out false) or by an exception (throw_out true), with
// the current file still open, as a careless function would.
uint64_t Scan(const foreactor::Graph<ScanState>& graph, ScanState& state, bool throw_out) {
  foreactor::Scope scope(graph, state);
  uint64_t checksum = 0;
  std::vector<char> buffer(kReadLength);
  for (uint64_t i = 0; i < state.paths.size(); ++i) {
    const int fd = ::open(state.paths[i].c_str(), O_RDONLY);
    if (fd < 0) continue;
    const ssize_t got = ::pread(fd, buffer.data(), buffer.size(), 0);
    if (got > 0)
      checksum += static_cast<unsigned char>(buffer[got - 1]) + static_cast<uint64_t>(got);
    if (i == state.stop_after) {
      ::close(fd);
      if (throw_out) throw EarlyExit();
      return checksum;
    }
    struct stat status;
    if (::fstat(fd, &status) == 0) checksum += static_cast<uint64_t>(status.st_size);
    ::close(fd);
  }
  return checksum;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s DIRECTORY ROUNDS\n", argv[0]);
    return 2;
  }
  const std::string directory = argv[1];
  const int rounds = std::atoi(argv[2]);
  ScanState state;
  for (int i = 0; i < kFiles; ++i) {
    const std::string path = directory + "/file" + std::to_string(i);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::string bytes(1000 + 3000 * static_cast<size_t>(i), static_cast<char>('a' + i % 26));
    if (fd < 0 || ::write(fd, bytes.data(), bytes.size()) < 0) return 2;
    ::close(fd);
    state.paths.push_back(path);
  }
  const foreactor::Graph<ScanState> graph = MakeGraph();
  if (!graph.valid()) {
    std::fprintf(stderr, "graph refused: %s\n", graph.error().c_str());
    return 2;
  }

  uint64_t total = 0;
  int base_descriptors = -1;
  size_t base_heap = 0;
  const int warm_up = rounds / 10 + 1;
  for (int round = 0; round < rounds; ++round) {
    state.current_fd = -1;
    state.stop_after = static_cast<uint64_t>(round * 7) % kFiles;
    const bool throw_out = round % 2 == 1;
    try {
      total += Scan(graph, state, throw_out);
    } catch (const EarlyExit&) {
      total += 1;
    }
    if (round + 1 == warm_up) {
      base_descriptors = CountDescriptors();
      base_heap = HeapBytes();
    }
    if ((round + 1) % (rounds / 4 + 1) == 0 || round + 1 == rounds) {
      std::printf("round %d: descriptors=%d heap_bytes=%zu\n", round + 1, CountDescriptors(),
                  HeapBytes());
    }
  }
  const int descriptor_growth = CountDescriptors() - base_descriptors;
  const long long heap_growth =
      static_cast<long long>(HeapBytes()) - static_cast<long long>(base_heap);
  std::printf("checksum %llu\n", static_cast<unsigned long long>(total));
  std::printf("descriptors grew by %d, heap grew by %lld bytes\n", descriptor_growth, heap_growth);
  return descriptor_growth > 0 || heap_growth > (1 << 20) ? 1 : 0;
}
