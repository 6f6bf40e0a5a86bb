// seccomp_exec.h: what the test programs that run a command under a
// seccomp filter share (forbid_io_uring, kill_on_new_calls).
#ifndef FOREACTOR_TESTS_INTEGRATION_PROGRAMS_SECCOMP_EXEC_H_
#define FOREACTOR_TESTS_INTEGRATION_PROGRAMS_SECCOMP_EXEC_H_

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

// The first statements of every filter: processes of other architectures
// (32-bit) are allowed everything; then the system call number is loaded.
#define SECCOMP_EXEC_X86_64_PROLOGUE                                       \
  BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)), \
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),        \
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                        \
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))

// Installs the `count` statements of `filter` (inherited across exec) and
// execs the command argv[1], argv[2], ...  Returns only on failure: 2 for
// a missing command or a filter that cannot be installed, 127 when the
// command cannot be run; `tool` names the program in its messages.
inline int InstallFilterAndExec(const char* tool, struct sock_filter* filter, size_t count,
                                int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s COMMAND [ARGUMENT...]\n", argv[0]);
    return 2;
  }
  struct sock_fprog program = {static_cast<unsigned short>(count), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    std::fprintf(stderr, "%s: cannot install the filter: %s\n", tool, std::strerror(errno));
    return 2;
  }
  execvp(argv[1], argv + 1);
  std::fprintf(stderr, "%s: cannot run %s: %s\n", tool, argv[1], std::strerror(errno));
  return 127;
}

#endif  // FOREACTOR_TESTS_INTEGRATION_PROGRAMS_SECCOMP_EXEC_H_
