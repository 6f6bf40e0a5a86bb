// kill_on_new_calls: runs a command under a seccomp filter that kills the
// process when it calls openat2(2) or close_range(2), as a strict sandbox
// that knows only older system calls may.
//
// Usage: kill_on_new_calls COMMAND [ARGUMENT...]
// Installs the filter (inherited across exec) and execs COMMAND.
#include <sys/syscall.h>

#include "seccomp_exec.h"

int main(int argc, char** argv) {
  struct sock_filter filter[] = {
      SECCOMP_EXEC_X86_64_PROLOGUE,
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_close_range, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
  };
  return InstallFilterAndExec("kill_on_new_calls", filter, sizeof(filter) / sizeof(filter[0]), argc,
                              argv);
}
