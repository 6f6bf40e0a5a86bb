// foreactor-trace-recorder: records the I/O system calls a program makes
// inside each invocation of one of its functions.
//
//   foreactor-trace-recorder --function SYMBOL --output LOG -- CMD ARGS...
//
// It runs CMD under ptrace, puts a breakpoint (int3) at SYMBOL's entry and,
// while a thread is inside the function, a breakpoint at the return address
// and stops that thread at every system call (PTRACE_SYSCALL); outside the
// function threads run freely.  Threads are followed; forked children are
// released with the breakpoints taken out of their memory.  LOG receives
// JSON lines:
//
//   {"event":"start","function":"f","executable":"/path","address":123}
//   {"event":"invocation","index":0,"thread":77,"finished":true,
//    "arguments":[rdi,rsi,rdx,rcx,r8,r9],"calls":[{"call":"pread","fd":3,...,"result":4096},...]}
//   {"event":"exit","status":0} or {"event":"exit","signal":9}
//   {"event":"error","message":"..."}           (the program did not run)
//
// Exit status: the program's own (128+N when it was killed by signal N); 2
// for a bad argument or a missing symbol; 126/127 when CMD cannot be run.
//
// Limits: x86-64 only.  A thread that enters the function while another
// thread steps over the entry breakpoint is not seen; a function left by
// longjmp or an exception is recorded as unfinished; after an exec of the
// traced program nothing more is recorded.
#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "elf_symbol.h"
#include "syscall_log.h"

namespace foreactor_trace {
namespace {

constexpr int kExitUsage = 2;
constexpr uint8_t kInt3 = 0xcc;

// int3 breakpoints in the traced process's memory, counted per address.
class Breakpoints {
 public:
  // Adds a reference to a breakpoint at `address`, writing the int3 on the first.
  bool Insert(pid_t pid, uint64_t address) {
    auto found = points_.find(address);
    if (found != points_.end()) {
      found->second.references++;
      return true;
    }
    errno = 0;
    const long word = ptrace(PTRACE_PEEKTEXT, pid, address, nullptr);
    if (errno != 0) return false;
    Point point{static_cast<uint8_t>(word & 0xff), 1};
    if (!WriteByte(pid, address, kInt3)) return false;
    points_[address] = point;
    return true;
  }
  // Drops a reference; the last one restores the original byte.
  void Release(pid_t pid, uint64_t address) {
    auto found = points_.find(address);
    if (found == points_.end()) return;
    if (--found->second.references == 0) {
      WriteByte(pid, address, found->second.original);
      points_.erase(found);
    }
  }
  bool Has(uint64_t address) const { return points_.count(address) != 0; }
  // Restores the original byte for a moment (Rearm puts the int3 back).
  void Disarm(pid_t pid, uint64_t address) const {
    WriteByte(pid, address, points_.at(address).original);
  }
  void Rearm(pid_t pid, uint64_t address) const {
    if (Has(address)) WriteByte(pid, address, kInt3);
  }
  // Takes every breakpoint out of the memory of `pid` (a forked copy).
  void RemoveAllFrom(pid_t pid) const {
    for (const auto& [address, point] : points_) WriteByte(pid, address, point.original);
  }
  // Forgets every breakpoint without touching memory (after an exec).
  void Forget() { points_.clear(); }

 private:
  struct Point {
    uint8_t original;
    int references;
  };
  static bool WriteByte(pid_t pid, uint64_t address, uint8_t byte) {
    errno = 0;
    long word = ptrace(PTRACE_PEEKTEXT, pid, address, nullptr);
    if (errno != 0) return false;
    word = static_cast<long>((static_cast<unsigned long>(word) & ~0xfful) | byte);
    return ptrace(PTRACE_POKETEXT, pid, address, word) == 0;
  }
  std::map<uint64_t, Point> points_;
};

// The log file: one JSON object per line.
class Log {
 public:
  explicit Log(const char* path) : file_(fopen(path, "w")) {}
  ~Log() {
    if (file_ != nullptr) fclose(file_);
  }
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;
  bool valid() const { return file_ != nullptr; }
  void Line(const std::string& json) {
    fputs(json.c_str(), file_);
    fputc('\n', file_);
    fflush(file_);
  }

 private:
  FILE* file_;
};

// One call of the function on the stack of a thread.
struct Frame {
  uint64_t return_address;
  uint64_t stack_after_return;  // rsp once the function has returned
};

struct ThreadState {
  std::vector<Frame> frames;  // empty: outside the function
  uint64_t index = 0;         // invocation number of the outermost frame
  uint64_t arguments[6] = {};
  std::vector<std::string> calls;
  std::string pending_call;  // logged call between its entry and exit
  int pending_signal = 0;    // a signal that arrived while stepping
};

enum class ChildKind { kThread, kFork, kVfork };

class Recorder {
 public:
  Recorder(Log* log, std::string function) : log_(log), function_(std::move(function)) {}

  // Runs `command` to its end.  Returns the exit status described above.
  int Run(char** command);

 private:
  bool Start(pid_t pid);
  void HandleStop(pid_t tid, int status);
  void HandleNewChild(pid_t pid, ChildKind kind);
  void HandleEvent(pid_t tid, int event);
  void HandleSyscall(pid_t tid);
  bool HandleBreakpoint(pid_t tid);
  void StepOver(pid_t tid, uint64_t address);
  void FinishInvocation(pid_t tid, bool finished);
  void Resume(pid_t tid, int signal);

  Log* log_;
  std::string function_;
  pid_t main_pid_ = -1;
  uint64_t entry_ = 0;
  bool tracing_ = true;  // false after the program exec'd another image
  uint64_t invocations_ = 0;
  int exit_status_ = 0;
  Breakpoints breakpoints_;
  std::map<pid_t, ThreadState> threads_;
  std::map<pid_t, ChildKind> announced_;  // children reported by an event, not stopped yet
  std::set<pid_t> unannounced_;           // children stopped before their event
};

std::string Hex(uint64_t value) {
  char text[32];
  snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

int Recorder::Run(char** command) {
  const pid_t pid = fork();
  if (pid < 0) {
    perror("foreactor-trace-recorder: fork");
    return 126;
  }
  if (pid == 0) {
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    execvp(command[0], command);
    const int error = errno;
    fprintf(stderr, "foreactor trace: cannot run %s: %s\n", command[0], strerror(error));
    _exit(error == ENOENT ? 127 : 126);
  }
  main_pid_ = pid;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status)) {
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 126;
    log_->Line("{\"event\":\"error\",\"message\":\"the command could not be run\"}");
    return code;
  }
  if (!Start(pid)) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return kExitUsage;
  }
  threads_[pid] = ThreadState{};
  Resume(pid, 0);
  while (true) {
    const pid_t tid = waitpid(-1, &status, __WALL);
    if (tid < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: everyone is gone
    }
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      if (threads_.count(tid) && !threads_[tid].frames.empty()) FinishInvocation(tid, false);
      threads_.erase(tid);
      if (tid == main_pid_) {
        exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        log_->Line(
            WIFEXITED(status)
                ? "{\"event\":\"exit\",\"status\":" + std::to_string(WEXITSTATUS(status)) + "}"
                : "{\"event\":\"exit\",\"signal\":" + std::to_string(WTERMSIG(status)) + "}");
      }
      continue;
    }
    if (WIFSTOPPED(status)) HandleStop(tid, status);
  }
  return exit_status_;
}

bool Recorder::Start(pid_t pid) {
  ptrace(PTRACE_SETOPTIONS, pid, nullptr,
         PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
             PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC);
  char executable[PATH_MAX] = "";
  const std::string link = "/proc/" + std::to_string(pid) + "/exe";
  const ssize_t length = readlink(link.c_str(), executable, sizeof executable - 1);
  if (length <= 0) {
    fprintf(stderr, "foreactor trace: cannot find the executable of the command\n");
    return false;
  }
  executable[length] = '\0';
  FunctionSymbol symbol;
  std::string error;
  std::vector<std::string> similar;
  if (!FindFunctionSymbol(executable, function_, &symbol, &error, &similar)) {
    std::string hint = "list its functions with 'nm -C " + std::string(executable) + "'";
    if (!similar.empty()) {
      hint = "similar names:";
      for (const std::string& name : similar) hint += " " + name;
    }
    fprintf(stderr,
            "foreactor trace: %s; %s (a static function needs a binary with its symbol table, not "
            "stripped)\n",
            error.c_str(), hint.c_str());
    log_->Line("{\"event\":\"error\",\"message\":" + JsonString(error + "; " + hint) + "}");
    return false;
  }
  entry_ = RuntimeAddress(pid, executable, symbol);
  if (entry_ == 0 || !breakpoints_.Insert(pid, entry_)) {
    fprintf(stderr, "foreactor trace: cannot place a breakpoint at %s in %s\n", function_.c_str(),
            executable);
    log_->Line("{\"event\":\"error\",\"message\":\"cannot place a breakpoint\"}");
    return false;
  }
  log_->Line("{\"event\":\"start\",\"function\":" + JsonString(function_) +
             ",\"executable\":" + JsonString(executable) + ",\"address\":\"" + Hex(entry_) + "\"}");
  return true;
}

void Recorder::Resume(pid_t tid, int signal) {
  auto found = threads_.find(tid);
  const bool inside = found != threads_.end() && !found->second.frames.empty() && tracing_;
  ptrace(inside ? PTRACE_SYSCALL : PTRACE_CONT, tid, nullptr, signal);
}

void Recorder::HandleStop(pid_t tid, int status) {
  const int signal = WSTOPSIG(status);
  const int event = status >> 16;
  if (!threads_.count(tid)) {
    // The first stop of a new thread or child.
    auto announced = announced_.find(tid);
    if (announced == announced_.end()) {
      unannounced_.insert(tid);
      return;
    }
    const ChildKind kind = announced->second;
    announced_.erase(announced);
    HandleNewChild(tid, kind);
    return;
  }
  ThreadState& thread = threads_[tid];
  if (signal == (SIGTRAP | 0x80)) {
    HandleSyscall(tid);
    Resume(tid, 0);
    return;
  }
  if (signal == SIGTRAP && event != 0) {
    HandleEvent(tid, event);
    if (threads_.count(tid)) Resume(tid, 0);
    return;
  }
  if (signal == SIGTRAP && HandleBreakpoint(tid)) {
    const int pending = thread.pending_signal;
    thread.pending_signal = 0;
    Resume(tid, pending);
    return;
  }
  siginfo_t info;
  if (ptrace(PTRACE_GETSIGINFO, tid, nullptr, &info) < 0) {
    Resume(tid, 0);  // a group-stop: nothing to deliver
    return;
  }
  Resume(tid, signal);
}

void Recorder::HandleNewChild(pid_t pid, ChildKind kind) {
  switch (kind) {
    case ChildKind::kThread:
      threads_[pid] = ThreadState{};
      Resume(pid, 0);
      break;
    case ChildKind::kFork:
      breakpoints_.RemoveAllFrom(pid);
      ptrace(PTRACE_DETACH, pid, nullptr, 0);
      break;
    case ChildKind::kVfork:  // shares our memory until it execs: leave it alone
      ptrace(PTRACE_DETACH, pid, nullptr, 0);
      break;
  }
}

void Recorder::HandleEvent(pid_t tid, int event) {
  if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK) {
    unsigned long message = 0;
    ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &message);
    const pid_t child = static_cast<pid_t>(message);
    const ChildKind kind = event == PTRACE_EVENT_CLONE  ? ChildKind::kThread
                           : event == PTRACE_EVENT_FORK ? ChildKind::kFork
                                                        : ChildKind::kVfork;
    // A clone without CLONE_THREAD that shares memory (posix_spawn) is a vfork.
    if (unannounced_.erase(child)) {
      HandleNewChild(child, kind);
    } else {
      announced_[child] = kind;
    }
    return;
  }
  if (event == PTRACE_EVENT_EXEC && tracing_) {
    // A new program image: our breakpoints are gone with the old one.
    for (auto& [thread_id, thread] : threads_) {
      if (!thread.frames.empty()) FinishInvocation(thread_id, false);
    }
    breakpoints_.Forget();
    tracing_ = false;
  }
}

void Recorder::HandleSyscall(pid_t tid) {
  ThreadState& thread = threads_[tid];
  __ptrace_syscall_info info;
  if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof info, &info) <= 0) return;
  if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
    thread.pending_call.clear();
    if (!thread.frames.empty() && IsLoggedSyscall(info.entry.nr)) {
      thread.pending_call = DescribeEntry(tid, info.entry.nr, info.entry.args);
    }
  } else if (info.op == PTRACE_SYSCALL_INFO_EXIT && !thread.pending_call.empty()) {
    thread.calls.push_back(thread.pending_call + ",\"result\":" + std::to_string(info.exit.rval) +
                           "}");
    thread.pending_call.clear();
  }
}

bool Recorder::HandleBreakpoint(pid_t tid) {
  user_regs_struct registers;
  if (!tracing_ || ptrace(PTRACE_GETREGS, tid, nullptr, &registers) < 0) return false;
  const uint64_t address = registers.rip - 1;
  if (!breakpoints_.Has(address)) return false;
  registers.rip = address;
  ptrace(PTRACE_SETREGS, tid, nullptr, &registers);
  ThreadState& thread = threads_[tid];
  if (address == entry_) {
    errno = 0;
    const long return_address = ptrace(PTRACE_PEEKDATA, tid, registers.rsp, nullptr);
    if (errno == 0) {
      if (thread.frames.empty()) {
        thread.index = invocations_++;
        const uint64_t arguments[6] = {registers.rdi, registers.rsi, registers.rdx,
                                       registers.rcx, registers.r8,  registers.r9};
        std::copy(arguments, arguments + 6, thread.arguments);
        thread.calls.clear();
        thread.pending_call.clear();
      }
      thread.frames.push_back(Frame{static_cast<uint64_t>(return_address), registers.rsp + 8});
      breakpoints_.Insert(tid, static_cast<uint64_t>(return_address));
    }
  }
  if (!thread.frames.empty() && address == thread.frames.back().return_address &&
      registers.rsp == thread.frames.back().stack_after_return) {
    thread.frames.pop_back();
    breakpoints_.Release(tid, address);
    if (thread.frames.empty()) FinishInvocation(tid, true);
  }
  if (breakpoints_.Has(address)) StepOver(tid, address);
  return true;
}

// Executes the original instruction under a breakpoint, then puts the
// breakpoint back.
void Recorder::StepOver(pid_t tid, uint64_t address) {
  breakpoints_.Disarm(tid, address);
  ThreadState& thread = threads_[tid];
  for (int attempt = 0; attempt < 8; ++attempt) {
    if (ptrace(PTRACE_SINGLESTEP, tid, nullptr, 0) < 0) break;
    int status = 0;
    if (waitpid(tid, &status, __WALL) < 0 || !WIFSTOPPED(status)) break;
    if (WSTOPSIG(status) == SIGTRAP) break;
    // A signal arrived before the step: deliver it when the thread resumes.
    thread.pending_signal = WSTOPSIG(status);
  }
  breakpoints_.Rearm(tid, address);
}

void Recorder::FinishInvocation(pid_t tid, bool finished) {
  ThreadState& thread = threads_[tid];
  std::string line = "{\"event\":\"invocation\",\"index\":" + std::to_string(thread.index) +
                     ",\"thread\":" + std::to_string(tid) +
                     ",\"finished\":" + (finished ? "true" : "false") + ",\"arguments\":[";
  for (int i = 0; i < 6; ++i) line += (i ? "," : "") + std::to_string(thread.arguments[i]);
  line += "],\"calls\":[";
  for (size_t i = 0; i < thread.calls.size(); ++i) line += (i ? "," : "") + thread.calls[i];
  line += "]}";
  log_->Line(line);
  thread.calls.clear();
  thread.pending_call.clear();
  thread.frames.clear();
}

int Usage(const char* message) {
  fprintf(stderr,
          "foreactor-trace-recorder: %s\n"
          "usage: foreactor-trace-recorder --function SYMBOL --output LOG -- CMD [ARGS...]\n"
          "(normally run by 'foreactor trace'; see 'foreactor trace --help')\n",
          message);
  return kExitUsage;
}

}  // namespace
}  // namespace foreactor_trace

int main(int argc, char** argv) {
  using namespace foreactor_trace;
  const char* function = nullptr;
  const char* output = nullptr;
  int command_at = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--") {
      command_at = i + 1;
      break;
    }
    if ((argument == "--function" || argument == "--output") && i + 1 < argc) {
      (argument == "--function" ? function : output) = argv[++i];
    } else {
      return Usage(("unknown argument '" + argument + "'").c_str());
    }
  }
  if (function == nullptr || output == nullptr)
    return Usage("--function and --output are required");
  if (command_at < 0 || command_at >= argc) return Usage("no command after '--'");
  Log log(output);
  if (!log.valid()) {
    fprintf(stderr, "foreactor-trace-recorder: cannot write %s: %s\n", output, strerror(errno));
    return kExitUsage;
  }
  signal(SIGPIPE, SIG_DFL);
  Recorder recorder(&log, function);
  return recorder.Run(argv + command_at);
}
