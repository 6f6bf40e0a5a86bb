#include "driver/latency.h"

#include <algorithm>
#include <cmath>

namespace leveldb_driver {

namespace {

double Percentile(const std::vector<uint64_t>& sorted, double percent) {
  const auto rank =
      static_cast<size_t>(std::ceil(percent / 100.0 * static_cast<double>(sorted.size())));
  const size_t index = rank == 0 ? 0 : rank - 1;
  return static_cast<double>(sorted[std::min(index, sorted.size() - 1)]) / 1000.0;
}

}  // namespace

LatencySummary Summarize(std::vector<uint64_t>* nanoseconds) {
  LatencySummary summary;
  if (nanoseconds->empty()) return summary;
  std::sort(nanoseconds->begin(), nanoseconds->end());
  long double total = 0;
  for (uint64_t value : *nanoseconds) total += value;
  summary.count = nanoseconds->size();
  summary.average_us = static_cast<double>(total / nanoseconds->size() / 1000.0L);
  summary.p50_us = Percentile(*nanoseconds, 50);
  summary.p99_us = Percentile(*nanoseconds, 99);
  summary.p999_us = Percentile(*nanoseconds, 99.9);
  summary.max_us = static_cast<double>(nanoseconds->back()) / 1000.0;
  return summary;
}

}  // namespace leveldb_driver
