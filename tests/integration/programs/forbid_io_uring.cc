// forbid_io_uring: runs a command in which io_uring_setup(2) fails with
// EPERM, as under a container runtime's seccomp policy.
//
// Usage: forbid_io_uring COMMAND [ARGUMENT...]
// Installs a seccomp filter (inherited across exec) and execs COMMAND.
#include <sys/syscall.h>

#include "seccomp_exec.h"

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

int main(int argc, char** argv) {
  struct sock_filter filter[] = {
      SECCOMP_EXEC_X86_64_PROLOGUE,
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup | __X32_SYSCALL_BIT, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
  };
  return InstallFilterAndExec("forbid_io_uring", filter, sizeof(filter) / sizeof(filter[0]), argc,
                              argv);
}
