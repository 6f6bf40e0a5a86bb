// seccomp_fail: runs a command in which chosen system calls always fail
// with a chosen errno, as when the kernel refuses them (a seccomp policy,
// io_uring_enter out of resources, no thread can be created).
//
// Usage: seccomp_fail NAME=ERRNO[,NAME=ERRNO...] COMMAND [ARGUMENT...]
//   NAME:  io_uring_setup io_uring_enter io_uring_register clone clone3
//   ERRNO: EPERM EAGAIN EBUSY ENOMEM ENOSYS EINTR
// Installs a seccomp filter (inherited across exec) and execs COMMAND.
// Exit status 2: bad usage or the filter cannot be installed.
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Named {
  const char* name;
  int value;
};

constexpr Named kCalls[] = {
    {"io_uring_setup", __NR_io_uring_setup},
    {"io_uring_enter", __NR_io_uring_enter},
    {"io_uring_register", __NR_io_uring_register},
    {"clone", __NR_clone},
    {"clone3", __NR_clone3},
};
constexpr Named kErrors[] = {{"EPERM", EPERM},   {"EAGAIN", EAGAIN}, {"EBUSY", EBUSY},
                             {"ENOMEM", ENOMEM}, {"ENOSYS", ENOSYS}, {"EINTR", EINTR}};

// The value named `name` in `table`, or -1.
template <size_t N>
int Lookup(const Named (&table)[N], const std::string& name) {
  for (const Named& entry : table) {
    if (name == entry.name) return entry.value;
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s NAME=ERRNO[,NAME=ERRNO...] COMMAND [ARGUMENT...]\n", argv[0]);
    return 2;
  }
  std::vector<struct sock_filter> filter = {
      // Other architectures: allow everything.
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
  };
  std::string list = argv[1];
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(start, end - start);
    const size_t equals = item.find('=');
    const int call = equals == std::string::npos ? -1 : Lookup(kCalls, item.substr(0, equals));
    const int error = equals == std::string::npos ? -1 : Lookup(kErrors, item.substr(equals + 1));
    if (call < 0 || error < 0) {
      std::fprintf(stderr, "seccomp_fail: bad item '%s'\n", item.c_str());
      return 2;
    }
    // if (nr == call) return ERRNO(error);
    filter.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(call), 0, 1));
    filter.push_back(BPF_STMT(
        BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (static_cast<unsigned>(error) & SECCOMP_RET_DATA)));
    start = end + 1;
  }
  filter.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  struct sock_fprog program = {static_cast<unsigned short>(filter.size()), filter.data()};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    std::fprintf(stderr, "seccomp_fail: cannot install the filter: %s\n", std::strerror(errno));
    return 2;
  }
  execvp(argv[2], argv + 2);
  std::fprintf(stderr, "seccomp_fail: cannot run %s: %s\n", argv[2], std::strerror(errno));
  return 127;
}
