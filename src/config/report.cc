#include "config/report.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace foreactor {

void WriteToStderr(std::string_view text) {
  int saved_errno = errno;
  while (!text.empty()) {
    long written = syscall(SYS_write, STDERR_FILENO, text.data(), text.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) break;
    text.remove_prefix(static_cast<size_t>(written));
  }
  errno = saved_errno;
}

void Report(const std::string& message) { WriteToStderr("foreactor: " + message + "\n"); }

}  // namespace foreactor
