// statistics_json.h: the statistics JSON that WriteStatisticsJson() writes,
// as text, for the runtime's unit tests that check what it holds.
#ifndef FOREACTOR_TESTS_UNIT_RUNTIME_STATISTICS_JSON_H_
#define FOREACTOR_TESTS_UNIT_RUNTIME_STATISTICS_JSON_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "runtime/statistics.h"

namespace foreactor {

// Everything WriteStatisticsJson() writes now; a failure to write it fails
// the calling test (and leaves the text empty or cut short).
inline std::string StatisticsJsonText() {
  char* buffer = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&buffer, &size);
  EXPECT_NE(out, nullptr);
  if (out == nullptr) return "";
  EXPECT_EQ(WriteStatisticsJson(out), 0);
  std::fclose(out);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

// The value of counter `key` of graph `graph` in the statistics JSON: 0
// when the graph has no statistics yet, UINT64_MAX when the key is missing.
inline uint64_t StatisticsCounter(const std::string& graph, const std::string& key) {
  const std::string json = StatisticsJsonText();
  const size_t graph_at = json.find("\"" + graph + "\"");
  if (graph_at == std::string::npos) return 0;
  const size_t at = json.find("\"" + key + "\": ", graph_at);
  if (at == std::string::npos) return UINT64_MAX;
  return std::stoull(json.substr(at + key.size() + 4));
}

}  // namespace foreactor

#endif  // FOREACTOR_TESTS_UNIT_RUNTIME_STATISTICS_JSON_H_
