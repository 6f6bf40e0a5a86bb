// statistics_json.h: the statistics JSON that WriteStatisticsJson() writes,
// as text, for the runtime's unit tests that check what it holds.
#ifndef FOREACTOR_TESTS_UNIT_RUNTIME_STATISTICS_JSON_H_
#define FOREACTOR_TESTS_UNIT_RUNTIME_STATISTICS_JSON_H_

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

}  // namespace foreactor

#endif  // FOREACTOR_TESTS_UNIT_RUNTIME_STATISTICS_JSON_H_
