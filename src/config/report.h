// report.h: messages from foreactor to the person running the program.
#ifndef FOREACTOR_CONFIG_REPORT_H_
#define FOREACTOR_CONFIG_REPORT_H_

#include <string>
#include <string_view>

namespace foreactor {

// Writes `text` to stderr with as few write(2) calls as the kernel allows
// (one for any message of ordinary size), retrying after EINTR.  Bypasses
// the libc wrappers so that foreactor's own interposers never see it;
// preserves errno.  Safe inside any host program.
void WriteToStderr(std::string_view text);

// Writes "foreactor: <message>\n" to stderr as one message.
void Report(const std::string& message);

}  // namespace foreactor

#endif  // FOREACTOR_CONFIG_REPORT_H_
