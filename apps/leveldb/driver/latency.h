// Summary of a set of latencies.
#ifndef FOREACTOR_APPS_LEVELDB_DRIVER_LATENCY_H_
#define FOREACTOR_APPS_LEVELDB_DRIVER_LATENCY_H_

#include <cstdint>
#include <vector>

namespace leveldb_driver {

struct LatencySummary {
  uint64_t count = 0;
  double average_us = 0;
  double p50_us = 0;
  double p99_us = 0;
  double p999_us = 0;
  double max_us = 0;
};

// Summarizes latencies given in nanoseconds; sorts `nanoseconds` in place.
// Percentiles are nearest-rank (the smallest value with at least p% of the
// values at or below it).  All fields are 0 when there is no latency.
LatencySummary Summarize(std::vector<uint64_t>* nanoseconds);

}  // namespace leveldb_driver

#endif  // FOREACTOR_APPS_LEVELDB_DRIVER_LATENCY_H_
