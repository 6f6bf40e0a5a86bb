// scope_concurrency: scopes meeting fork() and threads.
//
// Every scope runs the same graph, a loop over files:
//   open(dir/fNNN) -> fstat(fd) -> pread(fd, 4096, 0) -> pread(large.bin, 8192, offset) ->
//   close(fd)
// and prints everything each call showed, so that the output with
// foreactor off and on can be compared.
//
// Usage:
//   scope_concurrency fork FIXTURE
//       One scope; in the middle of an iteration (after the open and the
//       first pread of iteration 10) the program forks.  The child goes on
//       with the loop, leaves the scope and exits normally (exit handlers
//       run); the parent waits for it, then goes on with the same loop.
//   scope_concurrency threads FIXTURE
//       Four threads, each in its own scope of the one shared graph, with
//       different files and offsets, plus a fifth thread making plain calls
//       outside any scope meanwhile.  Output is printed per thread, in order.
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "foreactor/foreactor.h"
#include "observation.h"

using observation::DescribeStat;
using observation::Format;
using observation::Hash;
using observation::ReturnAndErrno;

namespace {

constexpr int kIterations = 40;
constexpr int kErrnoSentinel = 4242;

enum StepIndex { kOpen = 0, kFstat, kPreadOwn, kPreadLarge, kClose, kStepCount };
int step_ids[kStepCount] = {kOpen, kFstat, kPreadOwn, kPreadLarge, kClose};

// One scope's plan and what its result callbacks reported.
struct LoopState {
  std::string fixture;
  int first_file = 0;  // iteration i opens dir/f((first_file + 7 * i) % 300)
  int large_fd = -1;
  int64_t offset_step = 0;
  bool show_descriptors = true;  // false where threads race for descriptor numbers
  std::vector<std::string> paths;
  std::vector<int64_t> opened = std::vector<int64_t>(kIterations, 0);
  std::vector<int> open_reported = std::vector<int>(kIterations, 0);
  int callback_errors = 0;

  void Plan() {
    for (int i = 0; i < kIterations; ++i) {
      paths.push_back(fixture + Format("/dir/f%03d", (first_file + 7 * i) % 300));
    }
  }
  int64_t LargeOffset(int i) const { return (i * offset_step) % 1000000; }
};

foreactor_readiness Arguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<LoopState*>(visit->scope_state);
  const int step = *static_cast<const int*>(visit->node_data);
  if (visit->loop_count != 1) return FOREACTOR_NEVER;
  const uint64_t i = visit->iteration[0];
  if (i >= kIterations) return FOREACTOR_NEVER;
  switch (step) {
    case kOpen:
      call->path = state->paths[i].c_str();
      call->flags = O_RDONLY;
      return FOREACTOR_READY;
    case kPreadLarge:
      call->fd = state->large_fd;
      call->length = 8192;
      call->offset = state->LargeOffset(static_cast<int>(i));
      return FOREACTOR_READY;
    default:
      if (!state->open_reported[i]) return FOREACTOR_NOT_YET;
      call->fd = state->opened[i] >= 0 ? static_cast<int>(state->opened[i]) : -1;
      call->length = 4096;
      call->offset = 0;
      return FOREACTOR_READY;
  }
}

void ResultReported(const foreactor_visit* visit, int64_t result) {
  auto* state = static_cast<LoopState*>(visit->scope_state);
  const int step = *static_cast<const int*>(visit->node_data);
  if (visit->loop_count != 1 || visit->iteration[0] >= kIterations) {
    ++state->callback_errors;
    return;
  }
  if (step == kOpen) {
    state->opened[visit->iteration[0]] = result;
    ++state->open_reported[visit->iteration[0]];
  }
}

int ChooseLoop(const foreactor_visit* visit) {
  return visit->iteration[0] + 1 < kIterations ? 0 : 1;
}

foreactor_graph* BuildGraph() {
  foreactor_graph* graph = foreactor_graph_create("concurrency_loop");
  const foreactor_call_type types[kStepCount] = {FOREACTOR_CALL_OPEN, FOREACTOR_CALL_FSTAT,
                                                 FOREACTOR_CALL_PREAD, FOREACTOR_CALL_PREAD,
                                                 FOREACTOR_CALL_CLOSE};
  int previous = FOREACTOR_START_NODE;
  int first = -1;
  for (int step = 0; step < kStepCount; ++step) {
    int node = foreactor_graph_add_syscall(graph, Format("step%d", step).c_str(), types[step],
                                           &Arguments, &ResultReported, &step_ids[step]);
    if (first < 0) first = node;
    foreactor_graph_set_next(graph, previous, node, 0);
    previous = node;
  }
  int branch = foreactor_graph_add_branch(graph, "again", &ChooseLoop, nullptr);
  foreactor_graph_set_next(graph, previous, branch, 0);
  foreactor_graph_add_child(graph, branch, first, 0);
  foreactor_graph_add_child(graph, branch, FOREACTOR_END_NODE, 0);
  char error[256] = "";
  if (foreactor_graph_finish(graph, error, sizeof(error)) != 0) {
    std::fprintf(stderr, "scope_concurrency: graph refused: %s\n", error);
    std::exit(2);
  }
  return graph;
}

// Runs steps [first_step, last_step) of iteration i, appending what they
// showed to `out`.  `own_fd` carries the descriptor between steps.
void RunSteps(LoopState& state, int i, int first_step, int last_step, int* own_fd,
              std::string* out) {
  for (int step = first_step; step < last_step; ++step) {
    errno = kErrnoSentinel;
    int64_t returned = -1;
    std::string text;
    char buffer[8192];
    std::memset(buffer, 0xA5, sizeof(buffer));
    struct stat status;
    std::memset(&status, 0xA5, sizeof(status));
    switch (step) {
      case kOpen:
        returned = open(state.paths[i].c_str(), O_RDONLY);
        *own_fd = static_cast<int>(returned);
        text = Format("open(f%s)", state.paths[i].substr(state.paths[i].size() - 3).c_str());
        break;
      case kFstat:
        returned = fstat(*own_fd, &status);
        text = Format("fstat(%d)", *own_fd);
        break;
      case kPreadOwn:
        returned = pread(*own_fd, buffer, 4096, 0);
        text = Format("pread(%d, 4096, 0)", *own_fd);
        break;
      case kPreadLarge:
        returned = pread(state.large_fd, buffer, 8192, state.LargeOffset(i));
        text = Format("pread(large, 8192, %" PRId64 ")", state.LargeOffset(i));
        break;
      case kClose:
        returned = close(*own_fd);
        text = Format("close(%d)", *own_fd);
        break;
    }
    const int error = errno;
    if (!state.show_descriptors) {
      // Descriptor numbers depend on how the threads interleave.
      text = text.substr(0, text.find('(')) + "(...)";
      if (step == kOpen && returned >= 0) returned = 0;
    }
    text += " " + ReturnAndErrno(returned, error);
    if (step == kFstat && returned == 0) text += " " + DescribeStat(status);
    if (step == kPreadOwn || step == kPreadLarge) {
      text += Format(" buffer=%016" PRIx64, Hash(buffer, sizeof(buffer)));
    }
    *out += Format("[%d.%d] ", i, step) + text + "\n";
  }
}

// ------------------------------------------------------------------- fork

int RunFork(const std::string& fixture) {
  foreactor_graph* graph = BuildGraph();
  LoopState state;
  state.fixture = fixture;
  state.first_file = 3;
  state.offset_step = 30011;
  state.large_fd = open((fixture + "/large.bin").c_str(), O_RDONLY);
  state.Plan();
  std::string out;
  int own_fd = -1;
  const int fork_iteration = 10;

  foreactor_scope_enter(graph, &state);
  for (int i = 0; i < fork_iteration; ++i) RunSteps(state, i, 0, kStepCount, &own_fd, &out);
  RunSteps(state, fork_iteration, kOpen, kPreadLarge, &own_fd, &out);
  std::fputs(("before fork:\n" + out).c_str(), stdout);
  std::fflush(stdout);
  out.clear();

  const pid_t child = fork();
  if (child < 0) {
    std::perror("fork");
    return 2;
  }
  const char* who = child == 0 ? "child" : "parent";
  int child_status = 0;
  if (child > 0) waitpid(child, &child_status, 0);
  RunSteps(state, fork_iteration, kPreadLarge, kStepCount, &own_fd, &out);
  for (int i = fork_iteration + 1; i < kIterations; ++i) {
    RunSteps(state, i, 0, kStepCount, &own_fd, &out);
  }
  foreactor_scope_exit(graph);
  if (child > 0) {
    std::printf("child exit: %s %d\n", WIFEXITED(child_status) ? "status" : "signal",
                WIFEXITED(child_status) ? WEXITSTATUS(child_status) : WTERMSIG(child_status));
  }
  std::printf("%s after fork:\n%s", who, out.c_str());
  std::printf("%s callback errors: %d\n", who, state.callback_errors);
  close(state.large_fd);
  foreactor_graph_destroy(graph);
  return 0;  // the child too returns from main: exit handlers run in both
}

// ---------------------------------------------------------------- threads

struct ThreadWork {
  foreactor_graph* graph = nullptr;
  LoopState state;
  std::string out;
};

void* RunScopeThread(void* argument) {
  auto* work = static_cast<ThreadWork*>(argument);
  int own_fd = -1;
  foreactor_scope_enter(work->graph, &work->state);
  for (int i = 0; i < kIterations; ++i) {
    RunSteps(work->state, i, 0, kStepCount, &own_fd, &work->out);
  }
  foreactor_scope_exit(work->graph);
  work->out += Format("callback errors: %d\n", work->state.callback_errors);
  return nullptr;
}

struct PlainWork {
  std::string fixture;
  std::string out;
};

// Calls made outside any scope while the other threads are in theirs.
void* RunPlainThread(void* argument) {
  auto* work = static_cast<PlainWork*>(argument);
  for (int i = 0; i < 200; ++i) {
    const std::string path = work->fixture + Format("/dir/f%03d", (i * 13) % 300);
    char buffer[512];
    std::memset(buffer, 0, sizeof(buffer));
    int fd = open(path.c_str(), O_RDONLY);
    ssize_t got = read(fd, buffer, sizeof(buffer));
    struct stat status;
    int stat_result = stat(path.c_str(), &status);
    close(fd);
    work->out +=
        Format("plain %d: read %zd stat %d size %jd buffer=%016" PRIx64 "\n", i, got, stat_result,
               static_cast<intmax_t>(status.st_size), Hash(buffer, sizeof(buffer)));
  }
  return nullptr;
}

int RunThreads(const std::string& fixture) {
  foreactor_graph* graph = BuildGraph();
  const int large_fd = open((fixture + "/large.bin").c_str(), O_RDONLY);
  constexpr int kThreads = 4;
  ThreadWork works[kThreads];
  pthread_t threads[kThreads + 1];
  for (int t = 0; t < kThreads; ++t) {
    works[t].graph = graph;
    works[t].state.fixture = fixture;
    works[t].state.first_file = 50 * t;
    works[t].state.large_fd = large_fd;
    works[t].state.offset_step = 10007 * (t + 1);
    works[t].state.show_descriptors = false;
    works[t].state.Plan();
  }
  PlainWork plain{fixture, ""};
  for (int t = 0; t < kThreads; ++t)
    pthread_create(&threads[t], nullptr, &RunScopeThread, &works[t]);
  pthread_create(&threads[kThreads], nullptr, &RunPlainThread, &plain);
  for (pthread_t& thread : threads) pthread_join(thread, nullptr);
  for (int t = 0; t < kThreads; ++t) std::printf("thread %d:\n%s", t, works[t].out.c_str());
  std::printf("plain thread:\n%s", plain.out.c_str());
  close(large_fd);
  foreactor_graph_destroy(graph);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "fork") == 0) return RunFork(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "threads") == 0) return RunThreads(argv[2]);
  std::fprintf(stderr, "usage: %s fork|threads FIXTURE\n", argv[0]);
  return 2;
}
