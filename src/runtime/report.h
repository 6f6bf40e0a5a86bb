// report.h: messages from foreactor to the person running the program.
#ifndef FOREACTOR_RUNTIME_REPORT_H_
#define FOREACTOR_RUNTIME_REPORT_H_

#include <unistd.h>

#include <string>

namespace foreactor {

// Writes "foreactor: <message>\n" to stderr with one write(2), so that it is
// safe inside any host program and never interleaves with other output.
inline void Report(const std::string& message) {
  std::string line = "foreactor: " + message + "\n";
  ssize_t ignored = write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_REPORT_H_
