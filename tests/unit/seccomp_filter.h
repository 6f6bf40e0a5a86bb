// seccomp_filter.h: a seccomp filter on the calling process, for the unit
// tests that run a forked child under one.
#ifndef FOREACTOR_TESTS_UNIT_SECCOMP_FILTER_H_
#define FOREACTOR_TESTS_UNIT_SECCOMP_FILTER_H_

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>

namespace foreactor {

// Installs the `count` statements of `filter` on the calling process (and
// sets no_new_privs, which an unprivileged process needs for it).  Returns
// false where the kernel or the container refuses: a test then skips.
inline bool InstallSeccompFilter(struct sock_filter* filter, size_t count) {
  struct sock_fprog program = {static_cast<unsigned short>(count), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

}  // namespace foreactor

#endif  // FOREACTOR_TESTS_UNIT_SECCOMP_FILTER_H_
