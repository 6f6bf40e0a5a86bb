// hostile_scope: scopes in hostile situations, printing everything the
// program observes so that runs with foreactor off and on can be compared
// (test_hostile.py).
//
// Usage: hostile_scope MODE FILE [ARGUMENT...]
//   FILE is a regular file of at least 1 MiB.
//   reads FILE N              one scope of N preads at scattered offsets
//   signals FILE restart|norestart
//                             SIGALRM every 50 us (handler with or without
//                             SA_RESTART) during 20 scopes of 200 preads
//   nofile FILE               RLIMIT_NOFILE set 6 above the lowest free fd,
//                             then a scope that opens FILE 20 times (never
//                             closing) and reads from each descriptor
//   memlock FILE              RLIMIT_MEMLOCK 0, then `reads FILE 300`
//   forkexec FILE SELF        a scope of 100 preads that forks after 50; the
//                             child execs `SELF reads FILE 20`; the parent
//                             waits, then finishes its scope
//   threads FILE              4 threads in scopes (50 scopes of 40 preads
//                             each) while the main thread starts and joins
//                             60 short-lived threads, each with one scope
//   plugin FILE KIND          a misbehaving plugin: KIND is wrong-args,
//                             wrong-branch, throw-args, throw-choice,
//                             throw-result or garbage; 3 scopes of 200 preads
// Exit status 0; 2 on bad usage; 1 when a setup step fails.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "foreactor/foreactor.hpp"

namespace {

constexpr size_t kBlock = 4096;

// How the plugin misbehaves (kNone: a correct plugin).
enum class Misbehaviour {
  kNone,
  kWrongArgs,
  kWrongBranch,
  kThrowArgs,
  kThrowChoice,
  kThrowResult,
  kGarbage
};
Misbehaviour misbehaviour = Misbehaviour::kNone;

struct ReadState {
  int fd = -1;
  const std::vector<int64_t>* offsets = nullptr;
};

uint64_t Hash(const unsigned char* bytes, size_t length) {
  uint64_t hash = 1469598103934665603ULL;
  for (size_t i = 0; i < length; ++i) hash = (hash ^ bytes[i]) * 1099511628211ULL;
  return hash;
}

// Offsets spread over the first MiB of the file, from `seed`.
std::vector<int64_t> Offsets(size_t count, uint64_t seed) {
  std::vector<int64_t> offsets;
  uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (size_t i = 0; i < count; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    offsets.push_back(static_cast<int64_t>(x % 255) * static_cast<int64_t>(kBlock) +
                      static_cast<int64_t>(x % 7));
  }
  return offsets;
}

foreactor::Graph<ReadState>& ReadGraph() {
  static foreactor::Graph<ReadState> graph = [] {
    foreactor::GraphBuilder<ReadState> builder("hostile_reads");
    auto read = builder.Syscall(
        "read", FOREACTOR_CALL_PREAD,
        [](ReadState& state, const foreactor::Visit& visit, foreactor_call& call) {
          const uint64_t i = visit.iteration(0);
          if (i >= state.offsets->size()) return FOREACTOR_NEVER;
          call = foreactor::Pread(state.fd, kBlock, (*state.offsets)[i]);
          switch (misbehaviour) {
            case Misbehaviour::kWrongArgs:
              if (i % 2 == 0) call.offset += 1;
              if (i % 3 == 0) call.length -= 1;
              if (i % 5 == 4) call.fd = state.fd + 100;
              break;
            case Misbehaviour::kThrowArgs:
              if (i % 3 == 0) throw std::runtime_error("arguments");
              break;
            case Misbehaviour::kGarbage:
              if (i % 4 == 0) call.type = FOREACTOR_CALL_FSTAT;
              if (i % 4 == 1) call.length = SIZE_MAX;
              if (i % 4 == 2) call.offset = -4096;
              if (i % 4 == 3) call.fd = -7;
              break;
            default:
              break;
          }
          return FOREACTOR_READY;
        },
        [](ReadState&, const foreactor::Visit&, int64_t) {
          if (misbehaviour == Misbehaviour::kThrowResult) throw std::logic_error("result");
        });
    auto more = builder.Branch("more", [](ReadState& state, const foreactor::Visit& visit) {
      const uint64_t i = visit.iteration(0);
      const int truth = i + 1 < state.offsets->size() ? 0 : 1;
      switch (misbehaviour) {
        case Misbehaviour::kWrongBranch:
          return i % 7 == 3 || i + 1 == state.offsets->size() ? 1 - truth : truth;
        case Misbehaviour::kThrowChoice:
          if (i % 4 == 0) throw std::runtime_error("choice");
          return truth;
        case Misbehaviour::kGarbage:
          return i % 5 == 0 ? 99 : i % 5 == 1 ? -5 : truth;
        default:
          return truth;
      }
    });
    builder.start().Then(read).Then(more);
    more.Children({read, builder.end()});
    return builder.Build();
  }();
  return graph;
}

// One scope of preads at `offsets`; appends what each call showed.
void ReadScope(int fd, const std::vector<int64_t>& offsets, std::string& out) {
  ReadState state;
  state.fd = fd;
  state.offsets = &offsets;
  std::vector<unsigned char> buffer(kBlock);
  foreactor::Scope scope(ReadGraph(), state);
  for (size_t i = 0; i < offsets.size(); ++i) {
    std::memset(buffer.data(), 0xA5, buffer.size());
    errno = 4242;
    ssize_t result;
    do {
      result = pread(fd, buffer.data(), kBlock, offsets[i]);
    } while (result < 0 && errno == EINTR);
    char line[160];
    std::snprintf(line, sizeof(line), "pread off=%" PRId64 " = %zd errno=%d hash=%016" PRIx64 "\n",
                  offsets[i], result, result < 0 ? errno : 0, Hash(buffer.data(), buffer.size()));
    out += line;
  }
}

int OpenFile(const char* path) {
  const int fd = open(path, O_RDONLY);
  if (fd < 0) {
    std::perror(path);
    std::exit(1);
  }
  return fd;
}

int Reads(const char* path, size_t count) {
  const int fd = OpenFile(path);
  std::string out;
  ReadScope(fd, Offsets(count, 1), out);
  std::fputs(out.c_str(), stdout);
  close(fd);
  return 0;
}

std::atomic<unsigned long> alarms{0};
void OnAlarm(int) { alarms.fetch_add(1, std::memory_order_relaxed); }

int Signals(const char* path, bool restart) {
  struct sigaction action {};
  action.sa_handler = &OnAlarm;
  action.sa_flags = restart ? SA_RESTART : 0;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGALRM, &action, nullptr) != 0) return 1;
  struct itimerval timer {};
  timer.it_interval.tv_usec = 50;
  timer.it_value.tv_usec = 50;
  if (setitimer(ITIMER_REAL, &timer, nullptr) != 0) return 1;
  const int fd = OpenFile(path);
  std::string out;
  for (int round = 0; round < 20; ++round) ReadScope(fd, Offsets(200, 10 + round), out);
  struct itimerval off {};
  setitimer(ITIMER_REAL, &off, nullptr);
  std::fputs(out.c_str(), stdout);
  std::fprintf(stderr, "hostile_scope: %lu alarms\n", alarms.load());
  close(fd);
  return 0;
}

struct OpenState {
  const char* path = nullptr;
  size_t count = 0;
  std::vector<int> fds;  // results of the opens so far
};

int NoFile(const char* path) {
  // The lowest free descriptor, then a limit 6 above it.
  const int probe = dup(0);
  if (probe < 0) return 1;
  close(probe);
  struct rlimit limit {};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = static_cast<rlim_t>(probe + 6);
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return 1;

  static foreactor::Graph<OpenState> graph = [] {
    foreactor::GraphBuilder<OpenState> builder("hostile_opens");
    auto opening = builder.Syscall(
        "open", FOREACTOR_CALL_OPEN,
        [](OpenState& state, const foreactor::Visit& visit, foreactor_call& call) {
          if (visit.iteration(0) >= state.count) return FOREACTOR_NEVER;
          call = foreactor::Open(state.path, O_RDONLY);
          return FOREACTOR_READY;
        },
        [](OpenState& state, const foreactor::Visit&, int64_t result) {
          state.fds.push_back(static_cast<int>(result));
        });
    auto read =
        builder.Syscall("read", FOREACTOR_CALL_PREAD,
                        [](OpenState& state, const foreactor::Visit& visit, foreactor_call& call) {
                          const uint64_t i = visit.iteration(0);
                          if (i >= state.fds.size()) return FOREACTOR_NOT_YET;
                          call = foreactor::Pread(state.fds[i] < 0 ? -1 : state.fds[i], 512,
                                                  static_cast<int64_t>(i) * 512);
                          return FOREACTOR_READY;
                        });
    auto more = builder.Branch("more", [](OpenState& state, const foreactor::Visit& visit) {
      return visit.iteration(0) + 1 < state.count ? 0 : 1;
    });
    builder.start().Then(opening).Then(read).Then(more);
    more.Children({opening, builder.end()});
    return builder.Build();
  }();
  OpenState state;
  state.path = path;
  state.count = 20;
  std::vector<int> opened;
  {
    foreactor::Scope scope(graph, state);
    for (size_t i = 0; i < state.count; ++i) {
      errno = 4242;
      const int fd = open(path, O_RDONLY);
      std::printf("open = %d errno=%d\n", fd, fd < 0 ? errno : 0);
      opened.push_back(fd);
      unsigned char buffer[512];
      errno = 4242;
      const ssize_t result = pread(fd, buffer, sizeof(buffer), static_cast<int64_t>(i) * 512);
      std::printf("pread = %zd errno=%d hash=%016" PRIx64 "\n", result, result < 0 ? errno : 0,
                  result > 0 ? Hash(buffer, static_cast<size_t>(result)) : 0);
    }
  }
  for (int fd : opened) {
    if (fd >= 0) close(fd);
  }
  // After the scope every descriptor is back: as many opens succeed as before.
  int again = 0;
  std::vector<int> more;
  for (int fd; (fd = open(path, O_RDONLY)) >= 0 && again < 50; ++again) more.push_back(fd);
  std::printf("opens possible after the scope: %d (errno=%d)\n", again, errno);
  for (int fd : more) close(fd);
  return 0;
}

int MemLock(const char* path) {
  struct rlimit limit {
    0, 0
  };
  if (setrlimit(RLIMIT_MEMLOCK, &limit) != 0) return 1;
  return Reads(path, 300);
}

int ForkExec(const char* path, const char* self) {
  const int fd = OpenFile(path);
  const std::vector<int64_t> offsets = Offsets(100, 3);
  ReadState state;
  state.fd = fd;
  state.offsets = &offsets;
  std::vector<unsigned char> buffer(kBlock);
  {
    foreactor::Scope scope(ReadGraph(), state);
    for (size_t i = 0; i < offsets.size(); ++i) {
      if (i == 50) {
        std::fflush(stdout);
        const pid_t child = fork();
        if (child < 0) return 1;
        if (child == 0) {
          execl(self, self, "reads", path, "20", static_cast<char*>(nullptr));
          _exit(127);
        }
        int status = 0;
        waitpid(child, &status, 0);
        std::printf("child exit status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
      }
      errno = 4242;
      const ssize_t result = pread(fd, buffer.data(), kBlock, offsets[i]);
      std::printf("pread off=%" PRId64 " = %zd errno=%d hash=%016" PRIx64 "\n", offsets[i], result,
                  result < 0 ? errno : 0, Hash(buffer.data(), buffer.size()));
    }
  }
  close(fd);
  return 0;
}

int Threads(const char* path) {
  const int fd = OpenFile(path);
  constexpr int kWorkers = 4;
  std::vector<std::string> outputs(kWorkers);
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < kWorkers; ++t) {
    workers.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round)
        ReadScope(fd, Offsets(40, 100 * t + round), outputs[t]);
    });
  }
  std::vector<std::string> short_lived(60);
  for (int i = 0; i < 60; ++i) {
    std::thread thread([&, i] { ReadScope(fd, Offsets(10, 7000 + i), short_lived[i]); });
    thread.join();
  }
  for (std::thread& worker : workers) worker.join();
  stop = true;
  for (int t = 0; t < kWorkers; ++t) std::printf("thread %d\n%s", t, outputs[t].c_str());
  for (int i = 0; i < 60; ++i) std::printf("short thread %d\n%s", i, short_lived[i].c_str());
  close(fd);
  return 0;
}

int Plugin(const char* path, const std::string& kind) {
  if (kind == "wrong-args")
    misbehaviour = Misbehaviour::kWrongArgs;
  else if (kind == "wrong-branch")
    misbehaviour = Misbehaviour::kWrongBranch;
  else if (kind == "throw-args")
    misbehaviour = Misbehaviour::kThrowArgs;
  else if (kind == "throw-choice")
    misbehaviour = Misbehaviour::kThrowChoice;
  else if (kind == "throw-result")
    misbehaviour = Misbehaviour::kThrowResult;
  else if (kind == "garbage")
    misbehaviour = Misbehaviour::kGarbage;
  else
    return 2;
  const int fd = OpenFile(path);
  std::string out;
  for (int round = 0; round < 3; ++round) ReadScope(fd, Offsets(200, 50 + round), out);
  std::fputs(out.c_str(), stdout);
  close(fd);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODE FILE [ARGUMENT...]\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  const char* path = argv[2];
  int status = 2;
  if (mode == "reads" && argc == 4)
    status = Reads(path, std::strtoul(argv[3], nullptr, 10));
  else if (mode == "signals" && argc == 4)
    status = Signals(path, std::strcmp(argv[3], "restart") == 0);
  else if (mode == "nofile")
    status = NoFile(path);
  else if (mode == "memlock")
    status = MemLock(path);
  else if (mode == "forkexec" && argc == 4)
    status = ForkExec(path, argv[3]);
  else if (mode == "threads")
    status = Threads(path);
  else if (mode == "plugin" && argc == 4)
    status = Plugin(path, argv[3]);
  if (status == 2) std::fprintf(stderr, "hostile_scope: bad usage\n");
  std::fflush(stdout);
  return status;
}
