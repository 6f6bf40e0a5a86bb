#include "driver/descriptor_table.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace leveldb_driver {

namespace {
constexpr uint64_t kLargestTable = 65536;  // libforeactor's cap
}

uint64_t DescriptorTableTarget() {
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > kLargestTable) return kLargestTable;
  return limit.rlim_cur;
}

void GrowDescriptorTable() {
  const uint64_t target = DescriptorTableTarget();
  if (target == 0) return;
  const int any = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (any < 0) return;
  const int last = fcntl(any, F_DUPFD_CLOEXEC, static_cast<int>(target - 1));
  if (last >= 0) close(last);
  close(any);
}

uint64_t DescriptorTableSize() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("FDSize:", 0) == 0) return std::strtoull(line.c_str() + 7, nullptr, 10);
  }
  return 0;
}

}  // namespace leveldb_driver
