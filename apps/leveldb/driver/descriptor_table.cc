#include "driver/descriptor_table.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "engine/high_descriptors.h"

namespace leveldb_driver {

void GrowDescriptorTable() { foreactor::ReserveHighDescriptors(); }

uint64_t DescriptorTableSize() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("FDSize:", 0) == 0) return std::strtoull(line.c_str() + 7, nullptr, 10);
  }
  return 0;
}

}  // namespace leveldb_driver
