// libforeactor_faults.so: a fault schedule for the system calls of a test
// program, applied below libc's callers and, through the fault-injecting
// engine of a -DFOREACTOR_FAULT_INJECTION=ON build, to the calls foreactor
// issues early.
//
// Load it AFTER libforeactor.so:
//   LD_PRELOAD="libforeactor.so libforeactor_faults.so" PROGRAM ...
// foreactor resolves its "real" functions with dlsym(RTLD_NEXT), so its
// synchronous calls reach the interposers here; the program's calls reach
// them too when foreactor is off.  Early requests never pass through libc:
// the engine decorator asks foreactor_test_fault_decide() instead.
//
// A fault is keyed by the identity of the call, never by its order in the
// process: family (read, write, open, stat, close), the file's path (the
// descriptor's path from /proc/self/fd, or the path argument made absolute)
// and, for reads and writes, the file offset.  Occurrences are counted per
// identity ("the 2nd stat of P").
//
// FOREACTOR_FAULTS: clauses separated by ';'
//   under=PREFIX        only paths that start with PREFIX (required)
//   random=SEED/PERMILLE  each identity faults with probability PERMILLE/1000,
//                       of a kind drawn from its family's kinds, the same
//                       at every occurrence (a call issued early and never
//                       used cannot shift the schedule)
//   per-occurrence      draw anew for each occurrence of a non-pure call
//                       (writes, closes, creating opens); exact only when
//                       every non-pure call runs once
//   rule=FAMILY:SUFFIX:OFFSET:NTH:FAULT   explicit fault; SUFFIX ends the
//                       path; OFFSET and NTH are numbers or '*'
//   window              faults only between foreactor_test_faults_window(1)
//                       and foreactor_test_faults_window(0)
//   report=PATH         append one line of counts per kind at exit
//   trace               print every counted decision on stderr
//   nothrow-new         every `new (std::nothrow)` fails (returns null), in
//                       the window if there is one: foreactor's allocations
//                       that can fail without an exception
// FAULT: eio eintr eagain enospc enomem short (half the bytes).  getdents64
// and lseek are never faulted.
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <new>
#include <type_traits>

#include "engine/fault_injection_engine.h"

namespace {

// ------------------------------------------------------------- schedule

enum Family { kNoFamily = -1, kRead, kWrite, kOpen, kStat, kClose, kFamilies };
enum Kind { kEio, kEintr, kEagain, kEnospc, kEnomem, kShort, kKinds };

constexpr const char* kFamilyNames[kFamilies] = {"read", "write", "open", "stat", "close"};
constexpr const char* kKindNames[kKinds] = {"eio", "eintr", "eagain", "enospc", "enomem", "short"};
constexpr int kKindErrno[kKinds] = {EIO, EINTR, EAGAIN, ENOSPC, ENOMEM, 0};

// The kinds a random schedule draws from, per family (what the real call
// can return).
constexpr Kind kReadKinds[] = {kEio, kEintr, kEagain, kEnomem, kShort};
constexpr Kind kWriteKinds[] = {kEio, kEintr, kEagain, kEnospc, kShort};
constexpr Kind kOpenKinds[] = {kEio, kEintr, kEnomem, kEnospc};
constexpr Kind kStatKinds[] = {kEio, kEintr, kEnomem};
constexpr Kind kCloseKinds[] = {kEio, kEintr};

struct Rule {
  Family family = kNoFamily;
  char suffix[256] = "";
  int64_t offset = -1;  // -1: any
  int64_t nth = -1;     // -1: any
  Kind kind = kEio;
};

struct Schedule {
  bool active = false;
  char under[PATH_MAX] = "";
  bool random = false;
  uint64_t seed = 0;
  unsigned permille = 0;
  bool windowed = false;
  bool trace = false;
  bool per_occurrence = false;
  bool fail_nothrow_new = false;
  char report[PATH_MAX] = "";
  Rule rules[32];
  int rule_count = 0;
};

Schedule schedule;
std::atomic<bool> window_open{false};
std::atomic<uint64_t> injected[kFamilies][kKinds];
std::atomic<uint64_t> checked{0};
const std::atomic<uint64_t>* failed_allocations_reported = nullptr;  // set below

// Occurrences per identity: open addressing, guarded by a spin lock (no
// allocation: the interposers may run anywhere).
constexpr size_t kTableSize = 1 << 14;
struct OccurrenceEntry {
  uint64_t identity;
  uint64_t count;
};
OccurrenceEntry occurrences[kTableSize];
std::atomic_flag table_lock = ATOMIC_FLAG_INIT;

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t HashText(const char* text) {
  uint64_t hash = 1469598103934665603ULL;
  for (; *text != '\0'; ++text)
    hash = (hash ^ static_cast<unsigned char>(*text)) * 1099511628211ULL;
  return hash;
}

// The number of this occurrence of `identity` (1 for the first); counts it
// when `commit`.
uint64_t Occurrence(uint64_t identity, bool commit) {
  if (identity == 0) identity = 1;
  while (table_lock.test_and_set(std::memory_order_acquire)) {
  }
  uint64_t number = 1;
  for (size_t probe = 0; probe < kTableSize; ++probe) {
    OccurrenceEntry& entry = occurrences[(identity + probe) & (kTableSize - 1)];
    if (entry.identity == identity || entry.identity == 0) {
      entry.identity = identity;
      number = entry.count + 1;
      if (commit) entry.count = number;
      break;
    }
  }
  table_lock.clear(std::memory_order_release);
  return number;
}

Family FamilyOf(foreactor_call_type type) {
  switch (type) {
    case FOREACTOR_CALL_READ:
    case FOREACTOR_CALL_PREAD:
    case FOREACTOR_CALL_READV:
    case FOREACTOR_CALL_PREADV:
      return kRead;
    case FOREACTOR_CALL_WRITE:
    case FOREACTOR_CALL_PWRITE:
    case FOREACTOR_CALL_WRITEV:
    case FOREACTOR_CALL_PWRITEV:
      return kWrite;
    case FOREACTOR_CALL_OPEN:
    case FOREACTOR_CALL_OPENAT:
      return kOpen;
    case FOREACTOR_CALL_FSTAT:
    case FOREACTOR_CALL_FSTATAT:
    case FOREACTOR_CALL_STAT:
    case FOREACTOR_CALL_LSTAT:
    case FOREACTOR_CALL_STATX:
      return kStat;
    case FOREACTOR_CALL_CLOSE:
      return kClose;
    default:
      return kNoFamily;
  }
}

bool IsVector(foreactor_call_type type) {
  return type == FOREACTOR_CALL_READV || type == FOREACTOR_CALL_PREADV ||
         type == FOREACTOR_CALL_WRITEV || type == FOREACTOR_CALL_PWRITEV;
}

uint64_t TransferBytes(const foreactor_call& call) {
  if (!IsVector(call.type)) return call.length;
  uint64_t total = 0;
  for (int i = 0; i < call.iovcnt && call.iov != nullptr; ++i) total += call.iov[i].iov_len;
  return total;
}

// The path a descriptor names ("" when unknown).
void DescriptorPath(int fd, char* out, size_t size) {
  const int saved_errno = errno;
  char link[64];
  std::snprintf(link, sizeof(link), fd == AT_FDCWD ? "/proc/self/cwd" : "/proc/self/fd/%d", fd);
  const long length = syscall(SYS_readlinkat, AT_FDCWD, link, out, size - 1);
  out[length > 0 ? length : 0] = '\0';
  errno = saved_errno;
}

// The path the call is about, made absolute against `fd` or the cwd.
void CallPath(const foreactor_call& call, Family family, char* out, size_t size) {
  out[0] = '\0';
  const bool by_path = family == kOpen || (family == kStat && call.type != FOREACTOR_CALL_FSTAT);
  if (!by_path) {
    DescriptorPath(call.fd, out, size);
    return;
  }
  if (call.path == nullptr) return;
  if (call.path[0] == '/') {
    std::snprintf(out, size, "%s", call.path);
    return;
  }
  const bool at_cwd = call.type == FOREACTOR_CALL_OPEN || call.type == FOREACTOR_CALL_STAT ||
                      call.type == FOREACTOR_CALL_LSTAT;
  char base[PATH_MAX];
  DescriptorPath(at_cwd ? AT_FDCWD : call.fd, base, sizeof(base));
  // Truncation is harmless: both runs truncate the same way.
  size_t used = 0;
  for (const char* part :
       {static_cast<const char*>(base), call.path[0] != '\0' ? "/" : "", call.path}) {
    while (*part != '\0' && used + 1 < size) out[used++] = *part++;
  }
  out[used] = '\0';
}

bool IsPure(const foreactor_call& call, Family family) {
  if (family == kRead || family == kStat) return true;
  if (family == kOpen) return (call.flags & (O_ACCMODE | O_CREAT | O_TRUNC)) == O_RDONLY;
  return false;
}

bool EndsWith(const char* text, const char* suffix) {
  const size_t text_length = std::strlen(text);
  const size_t suffix_length = std::strlen(suffix);
  return suffix_length <= text_length &&
         std::strcmp(text + text_length - suffix_length, suffix) == 0;
}

// Chooses the kind for `call`; false for none.
bool Choose(const foreactor_call& call, Family family, bool commit, Kind* kind) {
  if (!schedule.active) return false;
  if (schedule.windowed && !window_open.load(std::memory_order_relaxed)) return false;
  char path[PATH_MAX];
  CallPath(call, family, path, sizeof(path));
  if (schedule.under[0] == '\0' ||
      std::strncmp(path, schedule.under, std::strlen(schedule.under)) != 0) {
    return false;
  }
  const bool has_offset = family == kRead || family == kWrite;
  const int64_t offset = has_offset ? call.offset : 0;
  const uint64_t identity = Mix(
      HashText(path) ^ Mix(static_cast<uint64_t>(family) << 56 ^ static_cast<uint64_t>(offset)));
  const uint64_t nth = Occurrence(identity, commit);
  if (commit) checked.fetch_add(1, std::memory_order_relaxed);
  if (commit && schedule.trace) {
    std::fprintf(stderr, "foreactor_faults: %s %s offset=%lld nth=%llu type=%d\n",
                 kFamilyNames[family], path, static_cast<long long>(offset),
                 static_cast<unsigned long long>(nth), static_cast<int>(call.type));
  }
  for (int i = 0; i < schedule.rule_count; ++i) {
    const Rule& rule = schedule.rules[i];
    if (rule.family != family || !EndsWith(path, rule.suffix)) continue;
    if (rule.offset >= 0 && (!has_offset || rule.offset != offset)) continue;
    if (rule.nth >= 0 && static_cast<uint64_t>(rule.nth) != nth) continue;
    *kind = rule.kind;
    return true;
  }
  if (!schedule.random) return false;
  const uint64_t draw = Mix(schedule.seed ^ identity ^
                            (schedule.per_occurrence && !IsPure(call, family) ? Mix(nth) : 0));
  if (draw % 1000 >= schedule.permille) return false;
  const Kind* kinds = kReadKinds;
  size_t count = 0;
  switch (family) {
    case kRead:
      kinds = kReadKinds;
      count = std::size(kReadKinds);
      break;
    case kWrite:
      kinds = kWriteKinds;
      count = std::size(kWriteKinds);
      break;
    case kOpen:
      kinds = kOpenKinds;
      count = (call.flags & O_CREAT) != 0 ? 4 : 3;
      break;
    case kStat:
      kinds = kStatKinds;
      count = std::size(kStatKinds);
      break;
    case kClose:
      kinds = kCloseKinds;
      count = std::size(kCloseKinds);
      break;
    default:
      return false;
  }
  *kind = kinds[(draw >> 32) % count];
  return true;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int foreactor_test_fault_decide(
    const foreactor_call* call, int commit, foreactor_fault_decision* decision) {
  decision->action = FOREACTOR_FAULT_NONE;
  decision->error = 0;
  decision->length = 0;
  const Family family = FamilyOf(call->type);
  if (family == kNoFamily) return 0;
  Kind kind;
  if (!Choose(*call, family, commit != 0, &kind)) return 0;
  if (kind == kShort && family != kRead && family != kWrite) kind = kEio;
  if (kind == kShort) {
    decision->action = FOREACTOR_FAULT_SHORTEN;
    decision->length = TransferBytes(*call) / 2;
  } else {
    decision->action = family == kClose ? FOREACTOR_FAULT_RUN_THEN_FAIL : FOREACTOR_FAULT_FAIL;
    decision->error = kKindErrno[kind];
  }
  if (commit != 0) injected[family][kind].fetch_add(1, std::memory_order_relaxed);
  return 1;
}

// Opens (1) or closes (0) the window of a `window` schedule.
__attribute__((visibility("default"))) void foreactor_test_faults_window(int open) {
  window_open.store(open != 0, std::memory_order_relaxed);
}

}  // extern "C"

namespace {

// ------------------------------------------------------------ configuration

bool ParseNumber(const char* text, int64_t* value) {
  if (std::strcmp(text, "*") == 0) {
    *value = -1;
    return true;
  }
  char* end = nullptr;
  *value = std::strtoll(text, &end, 10);
  return end != text && *end == '\0' && *value >= 0;
}

bool ParseRule(char* text, Rule* rule) {
  char* fields[5];
  for (int i = 0; i < 5; ++i) {
    fields[i] = text;
    char* colon = std::strchr(text, ':');
    if (i < 4) {
      if (colon == nullptr) return false;
      *colon = '\0';
      text = colon + 1;
    }
  }
  for (int family = 0; family < kFamilies; ++family) {
    if (std::strcmp(fields[0], kFamilyNames[family]) == 0)
      rule->family = static_cast<Family>(family);
  }
  int kind = 0;
  while (kind < kKinds && std::strcmp(fields[4], kKindNames[kind]) != 0) ++kind;
  if (rule->family == kNoFamily || kind == kKinds) return false;
  rule->kind = static_cast<Kind>(kind);
  std::snprintf(rule->suffix, sizeof(rule->suffix), "%s", fields[1]);
  return ParseNumber(fields[2], &rule->offset) && ParseNumber(fields[3], &rule->nth);
}

void Complain(const char* clause) {
  std::fprintf(stderr, "foreactor_faults: ignoring bad clause '%s'\n", clause);
}

void ParseSchedule(const char* text) {
  static char copy[8192];
  std::snprintf(copy, sizeof(copy), "%s", text);
  char* saved = nullptr;
  for (char* clause = strtok_r(copy, ";", &saved); clause != nullptr;
       clause = strtok_r(nullptr, ";", &saved)) {
    if (std::strncmp(clause, "under=", 6) == 0) {
      std::snprintf(schedule.under, sizeof(schedule.under), "%s", clause + 6);
    } else if (std::strncmp(clause, "random=", 7) == 0) {
      unsigned long long seed = 0;
      unsigned permille = 0;
      if (std::sscanf(clause + 7, "%llu/%u", &seed, &permille) != 2 || permille > 1000) {
        Complain(clause);
        continue;
      }
      schedule.random = true;
      schedule.seed = Mix(seed);
      schedule.permille = permille;
    } else if (std::strcmp(clause, "nothrow-new") == 0) {
      schedule.fail_nothrow_new = true;
    } else if (std::strcmp(clause, "per-occurrence") == 0) {
      schedule.per_occurrence = true;
    } else if (std::strcmp(clause, "trace") == 0) {
      schedule.trace = true;
    } else if (std::strcmp(clause, "window") == 0) {
      schedule.windowed = true;
    } else if (std::strncmp(clause, "report=", 7) == 0) {
      std::snprintf(schedule.report, sizeof(schedule.report), "%s", clause + 7);
    } else if (std::strncmp(clause, "rule=", 5) == 0 &&
               schedule.rule_count < static_cast<int>(std::size(schedule.rules))) {
      if (ParseRule(clause + 5, &schedule.rules[schedule.rule_count])) {
        ++schedule.rule_count;
      } else {
        Complain(clause);
      }
    } else {
      Complain(clause);
    }
  }
  schedule.active = schedule.under[0] != '\0';
  if (!schedule.active) std::fprintf(stderr, "foreactor_faults: no under=PREFIX: no faults\n");
}

// -------------------------------------------------------- real functions

template <typename Function>
Function* Next(const char* name) {
  return reinterpret_cast<Function*>(dlsym(RTLD_NEXT, name));
}

struct NextCalls {
  int (*open)(const char*, int, ...);
  int (*open64)(const char*, int, ...);
  int (*openat)(int, const char*, int, ...);
  int (*openat64)(int, const char*, int, ...);
  int (*close)(int);
  ssize_t (*read)(int, void*, size_t);
  ssize_t (*pread)(int, void*, size_t, off_t);
  ssize_t (*pread64)(int, void*, size_t, off_t);
  ssize_t (*write)(int, const void*, size_t);
  ssize_t (*pwrite)(int, const void*, size_t, off_t);
  ssize_t (*pwrite64)(int, const void*, size_t, off_t);
  ssize_t (*readv)(int, const struct iovec*, int);
  ssize_t (*preadv)(int, const struct iovec*, int, off_t);
  ssize_t (*preadv64)(int, const struct iovec*, int, off_t);
  ssize_t (*writev)(int, const struct iovec*, int);
  ssize_t (*pwritev)(int, const struct iovec*, int, off_t);
  ssize_t (*pwritev64)(int, const struct iovec*, int, off_t);
  int (*fstat)(int, struct stat*);
  int (*fstat64)(int, struct stat64*);
  int (*stat)(const char*, struct stat*);
  int (*stat64)(const char*, struct stat64*);
  int (*lstat)(const char*, struct stat*);
  int (*lstat64)(const char*, struct stat64*);
  int (*fstatat)(int, const char*, struct stat*, int);
  int (*fstatat64)(int, const char*, struct stat64*, int);
  int (*statx)(int, const char*, int, unsigned, struct statx*);
};
NextCalls next_calls;

#define FAULTS_RESOLVE(name) \
  next_calls.name = Next<std::remove_pointer_t<decltype(next_calls.name)>>(#name)

__attribute__((constructor)) void Initialize() {
  FAULTS_RESOLVE(open);
  FAULTS_RESOLVE(open64);
  FAULTS_RESOLVE(openat);
  FAULTS_RESOLVE(openat64);
  FAULTS_RESOLVE(close);
  FAULTS_RESOLVE(read);
  FAULTS_RESOLVE(pread);
  FAULTS_RESOLVE(pread64);
  FAULTS_RESOLVE(write);
  FAULTS_RESOLVE(pwrite);
  FAULTS_RESOLVE(pwrite64);
  FAULTS_RESOLVE(readv);
  FAULTS_RESOLVE(preadv);
  FAULTS_RESOLVE(preadv64);
  FAULTS_RESOLVE(writev);
  FAULTS_RESOLVE(pwritev);
  FAULTS_RESOLVE(pwritev64);
  FAULTS_RESOLVE(fstat);
  FAULTS_RESOLVE(fstat64);
  FAULTS_RESOLVE(stat);
  FAULTS_RESOLVE(stat64);
  FAULTS_RESOLVE(lstat);
  FAULTS_RESOLVE(lstat64);
  FAULTS_RESOLVE(fstatat);
  FAULTS_RESOLVE(fstatat64);
  FAULTS_RESOLVE(statx);
  const char* text = std::getenv("FOREACTOR_FAULTS");
  if (text != nullptr) ParseSchedule(text);
}

__attribute__((destructor)) void Report() {
  if (schedule.report[0] == '\0') return;
  char line[2048];
  int used = std::snprintf(line, sizeof(line), "checked=%llu",
                           static_cast<unsigned long long>(checked.load()));
  for (int family = 0; family < kFamilies; ++family) {
    for (int kind = 0; kind < kKinds; ++kind) {
      const uint64_t count = injected[family][kind].load();
      if (count == 0 || used >= static_cast<int>(sizeof(line)) - 64) continue;
      used += std::snprintf(line + used, sizeof(line) - static_cast<size_t>(used), " %s.%s=%llu",
                            kFamilyNames[family], kKindNames[kind],
                            static_cast<unsigned long long>(count));
    }
  }
  if (failed_allocations_reported != nullptr && *failed_allocations_reported != 0) {
    used +=
        std::snprintf(line + used, sizeof(line) - static_cast<size_t>(used), " nothrow_new=%llu",
                      static_cast<unsigned long long>(*failed_allocations_reported));
  }
  line[used++] = '\n';
  const int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, schedule.report,
                                          O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (fd < 0) return;
  syscall(SYS_write, fd, line, used);
  syscall(SYS_close, fd);
}

// ------------------------------------------------------------ interposers

ssize_t Fail(int error) {
  errno = error;
  return -1;
}

// The decision for a call being made now (counted).
bool DecideNow(const foreactor_call& call, foreactor_fault_decision* decision) {
  return foreactor_test_fault_decide(&call, 1, decision) != 0;
}

// The file position of `fd` (-1 for pipes), leaving errno alone.
int64_t Position(int fd) {
  const int saved_errno = errno;
  const int64_t position = syscall(SYS_lseek, fd, 0, SEEK_CUR);
  errno = saved_errno;
  return position;
}

foreactor_call Call(foreactor_call_type type, int fd) {
  foreactor_call call{};
  call.type = type;
  call.fd = fd;
  return call;
}

// A read or write of `length` bytes: `run(length)` makes the real call.
template <typename Run>
ssize_t Transfer(const foreactor_call& call, Run run) {
  foreactor_fault_decision decision;
  if (!DecideNow(call, &decision)) return run(call.length);
  if (decision.action == FOREACTOR_FAULT_FAIL) return Fail(decision.error);
  return run(decision.action == FOREACTOR_FAULT_SHORTEN ? decision.length : call.length);
}

// A vector transfer: `run(iov, iovcnt)` makes the real call.
template <typename Run>
ssize_t VectorTransfer(const foreactor_call& call, Run run) {
  foreactor_fault_decision decision;
  if (!DecideNow(call, &decision)) return run(call.iov, call.iovcnt);
  if (decision.action == FOREACTOR_FAULT_FAIL) return Fail(decision.error);
  if (decision.action != FOREACTOR_FAULT_SHORTEN || call.iovcnt > IOV_MAX || call.iovcnt < 0) {
    return run(call.iov, call.iovcnt);
  }
  struct iovec shortened[IOV_MAX];
  uint64_t left = decision.length;
  int count = 0;
  for (int i = 0; i < call.iovcnt && left > 0; ++i) {
    shortened[count] = call.iov[i];
    if (shortened[count].iov_len > left) shortened[count].iov_len = left;
    left -= shortened[count].iov_len;
    ++count;
  }
  return run(shortened, count);
}

// A call that returns 0 or -1 (open returns the fd): fails or runs.
template <typename Run>
int Simple(const foreactor_call& call, Run run) {
  foreactor_fault_decision decision;
  if (!DecideNow(call, &decision)) return run();
  if (decision.action == FOREACTOR_FAULT_FAIL) return static_cast<int>(Fail(decision.error));
  const int result = run();
  if (decision.action == FOREACTOR_FAULT_RUN_THEN_FAIL)
    return static_cast<int>(Fail(decision.error));
  return result;
}

mode_t ModeArgument(int flags, va_list arguments) {
  if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) return va_arg(arguments, mode_t);
  return 0;
}

foreactor_call OpenCall(foreactor_call_type type, int fd, const char* path, int flags) {
  foreactor_call call = Call(type, fd);
  call.path = path;
  call.flags = flags;
  return call;
}

foreactor_call Data(foreactor_call_type type, int fd, size_t length, int64_t offset) {
  foreactor_call call = Call(type, fd);
  call.length = length;
  call.offset = offset;
  return call;
}

foreactor_call Vector(foreactor_call_type type, int fd, const struct iovec* iov, int iovcnt,
                      int64_t offset) {
  foreactor_call call = Call(type, fd);
  call.iov = iov;
  call.iovcnt = iovcnt;
  call.offset = offset;
  return call;
}

foreactor_call StatCall(foreactor_call_type type, int fd, const char* path, int flags) {
  foreactor_call call = Call(type, fd);
  call.path = path;
  call.flags = flags;
  return call;
}

}  // namespace

#define FAULTS_EXPORT extern "C" __attribute__((visibility("default")))
#define FAULTS_EXPORT_CXX __attribute__((visibility("default")))

#define FAULTS_OPEN(name)                                               \
  FAULTS_EXPORT int name(const char* path, int flags, ...) {            \
    va_list arguments;                                                  \
    va_start(arguments, flags);                                         \
    const mode_t mode = ModeArgument(flags, arguments);                 \
    va_end(arguments);                                                  \
    return Simple(OpenCall(FOREACTOR_CALL_OPEN, AT_FDCWD, path, flags), \
                  [&] { return next_calls.name(path, flags, mode); });  \
  }
FAULTS_OPEN(open)
FAULTS_OPEN(open64)

#define FAULTS_OPENAT(name)                                                          \
  FAULTS_EXPORT int name(int directory_fd, const char* path, int flags, ...) {       \
    va_list arguments;                                                               \
    va_start(arguments, flags);                                                      \
    const mode_t mode = ModeArgument(flags, arguments);                              \
    va_end(arguments);                                                               \
    return Simple(OpenCall(FOREACTOR_CALL_OPENAT, directory_fd, path, flags),        \
                  [&] { return next_calls.name(directory_fd, path, flags, mode); }); \
  }
FAULTS_OPENAT(openat)
FAULTS_OPENAT(openat64)

FAULTS_EXPORT int close(int fd) {
  return Simple(Call(FOREACTOR_CALL_CLOSE, fd), [&] { return next_calls.close(fd); });
}

FAULTS_EXPORT ssize_t read(int fd, void* buffer, size_t length) {
  return Transfer(Data(FOREACTOR_CALL_READ, fd, length, Position(fd)),
                  [&](size_t bytes) { return next_calls.read(fd, buffer, bytes); });
}

FAULTS_EXPORT ssize_t write(int fd, const void* buffer, size_t length) {
  return Transfer(Data(FOREACTOR_CALL_WRITE, fd, length, Position(fd)),
                  [&](size_t bytes) { return next_calls.write(fd, buffer, bytes); });
}

#define FAULTS_PREAD(name)                                                                     \
  FAULTS_EXPORT ssize_t name(int fd, void* buffer, size_t length, off_t offset) {              \
    return Transfer(Data(FOREACTOR_CALL_PREAD, fd, length, offset),                            \
                    [&](size_t bytes) { return next_calls.name(fd, buffer, bytes, offset); }); \
  }
FAULTS_PREAD(pread)
FAULTS_PREAD(pread64)

#define FAULTS_PWRITE(name)                                                                    \
  FAULTS_EXPORT ssize_t name(int fd, const void* buffer, size_t length, off_t offset) {        \
    return Transfer(Data(FOREACTOR_CALL_PWRITE, fd, length, offset),                           \
                    [&](size_t bytes) { return next_calls.name(fd, buffer, bytes, offset); }); \
  }
FAULTS_PWRITE(pwrite)
FAULTS_PWRITE(pwrite64)

FAULTS_EXPORT ssize_t readv(int fd, const struct iovec* iov, int iovcnt) {
  return VectorTransfer(Vector(FOREACTOR_CALL_READV, fd, iov, iovcnt, Position(fd)),
                        [&](const struct iovec* v, int n) { return next_calls.readv(fd, v, n); });
}

FAULTS_EXPORT ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  return VectorTransfer(Vector(FOREACTOR_CALL_WRITEV, fd, iov, iovcnt, Position(fd)),
                        [&](const struct iovec* v, int n) { return next_calls.writev(fd, v, n); });
}

#define FAULTS_POSITIONAL_VECTOR(name, type)                                              \
  FAULTS_EXPORT ssize_t name(int fd, const struct iovec* iov, int iovcnt, off_t offset) { \
    return VectorTransfer(                                                                \
        Vector(type, fd, iov, iovcnt, offset),                                            \
        [&](const struct iovec* v, int n) { return next_calls.name(fd, v, n, offset); }); \
  }
FAULTS_POSITIONAL_VECTOR(preadv, FOREACTOR_CALL_PREADV)
FAULTS_POSITIONAL_VECTOR(preadv64, FOREACTOR_CALL_PREADV)
FAULTS_POSITIONAL_VECTOR(pwritev, FOREACTOR_CALL_PWRITEV)
FAULTS_POSITIONAL_VECTOR(pwritev64, FOREACTOR_CALL_PWRITEV)

#define FAULTS_FSTAT(name, stat_type)                             \
  FAULTS_EXPORT int name(int fd, stat_type* buffer) {             \
    return Simple(StatCall(FOREACTOR_CALL_FSTAT, fd, nullptr, 0), \
                  [&] { return next_calls.name(fd, buffer); });   \
  }
FAULTS_FSTAT(fstat, struct stat)
FAULTS_FSTAT(fstat64, struct stat64)

#define FAULTS_PATH_STAT(name, type, stat_type, flags)            \
  FAULTS_EXPORT int name(const char* path, stat_type* buffer) {   \
    return Simple(StatCall(type, AT_FDCWD, path, flags),          \
                  [&] { return next_calls.name(path, buffer); }); \
  }
FAULTS_PATH_STAT(stat, FOREACTOR_CALL_STAT, struct stat, 0)
FAULTS_PATH_STAT(stat64, FOREACTOR_CALL_STAT, struct stat64, 0)
FAULTS_PATH_STAT(lstat, FOREACTOR_CALL_LSTAT, struct stat, AT_SYMLINK_NOFOLLOW)
FAULTS_PATH_STAT(lstat64, FOREACTOR_CALL_LSTAT, struct stat64, AT_SYMLINK_NOFOLLOW)

#define FAULTS_FSTATAT(name, stat_type)                                                      \
  FAULTS_EXPORT int name(int directory_fd, const char* path, stat_type* buffer, int flags) { \
    return Simple(StatCall(FOREACTOR_CALL_FSTATAT, directory_fd, path, flags),               \
                  [&] { return next_calls.name(directory_fd, path, buffer, flags); });       \
  }
FAULTS_FSTATAT(fstatat, struct stat)
FAULTS_FSTATAT(fstatat64, struct stat64)

FAULTS_EXPORT int statx(int directory_fd, const char* path, int flags, unsigned int mask,
                        struct statx* buffer) {
  return Simple(StatCall(FOREACTOR_CALL_STATX, directory_fd, path, flags),
                [&] { return next_calls.statx(directory_fd, path, flags, mask, buffer); });
}

// ------------------------------------------------------- allocation faults

namespace {

std::atomic<uint64_t> failed_allocations{0};
[[maybe_unused]] const bool report_hooked =
    (failed_allocations_reported = &failed_allocations, true);

void* NothrowAllocate(std::size_t size) noexcept {
  if (schedule.fail_nothrow_new &&
      (!schedule.windowed || window_open.load(std::memory_order_relaxed))) {
    failed_allocations.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  return std::malloc(size == 0 ? 1 : size);
}

}  // namespace

// The plain operator delete of libstdc++ frees with free(): these pair with it.
FAULTS_EXPORT_CXX void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return NothrowAllocate(size);
}
FAULTS_EXPORT_CXX void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return NothrowAllocate(size);
}
