// Tests of the statistics counters, their process-wide totals and the JSON
// they are written as.  The totals are process-wide and cannot be reset, so
// every test uses graph names of its own.

#include "runtime/statistics.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/raw_syscalls.h"
#include "runtime/statistics_json.h"

namespace foreactor {
namespace {

// A JSON value, enough of one to check what WriteStatisticsJson writes.
struct JsonValue {
  enum class Kind { kNumber, kString, kObject } kind = Kind::kNumber;
  unsigned long long number = 0;
  std::string text;
  std::map<std::string, JsonValue> members;
};

// A strict parser for the JSON subset the writer may use (objects, strings
// with every escape, non-negative integers).  Any deviation from JSON fails.
class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : text_(text) {}

  bool ParseDocument(JsonValue* value) {
    if (!ParseValue(value)) return false;
    SkipSpace();
    return position_ == text_.size();
  }

 private:
  void SkipSpace() {
    while (position_ < text_.size() && (text_[position_] == ' ' || text_[position_] == '\n' ||
                                        text_[position_] == '\t' || text_[position_] == '\r')) {
      ++position_;
    }
  }
  bool Consume(char expected) {
    SkipSpace();
    if (position_ < text_.size() && text_[position_] == expected) {
      ++position_;
      return true;
    }
    return false;
  }
  bool ParseValue(JsonValue* value) {
    SkipSpace();
    if (position_ >= text_.size()) return false;
    char c = text_[position_];
    if (c == '{') return ParseObject(value);
    if (c == '"') {
      value->kind = JsonValue::Kind::kString;
      return ParseString(&value->text);
    }
    value->kind = JsonValue::Kind::kNumber;
    return ParseNumber(&value->number);
  }
  bool ParseNumber(unsigned long long* number) {
    size_t start = position_;
    while (position_ < text_.size() && text_[position_] >= '0' && text_[position_] <= '9') {
      ++position_;
    }
    if (position_ == start) return false;
    if (text_[start] == '0' && position_ - start > 1) return false;  // no leading zeros in JSON
    *number = std::strtoull(text_.substr(start, position_ - start).c_str(), nullptr, 10);
    return true;
  }
  bool ParseString(std::string* out) {
    if (!Consume('"')) return false;
    while (position_ < text_.size()) {
      unsigned char c = static_cast<unsigned char>(text_[position_++]);
      if (c == '"') return true;
      if (c < 0x20) return false;  // raw control characters are not allowed
      if (c != '\\') {
        *out += static_cast<char>(c);
        continue;
      }
      if (position_ >= text_.size()) return false;
      char escape = text_[position_++];
      switch (escape) {
        case '"':
          *out += '"';
          break;
        case '\\':
          *out += '\\';
          break;
        case '/':
          *out += '/';
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'n':
          *out += '\n';
          break;
        case 'r':
          *out += '\r';
          break;
        case 't':
          *out += '\t';
          break;
        case 'u': {
          if (position_ + 4 > text_.size()) return false;
          unsigned code =
              static_cast<unsigned>(std::stoul(text_.substr(position_, 4), nullptr, 16));
          position_ += 4;
          if (code > 0xff) return false;  // the writer only escapes single bytes
          *out += static_cast<char>(code);
          break;
        }
        default:
          return false;
      }
    }
    return false;
  }
  bool ParseObject(JsonValue* value) {
    value->kind = JsonValue::Kind::kObject;
    if (!Consume('{')) return false;
    if (Consume('}')) return true;
    do {
      SkipSpace();
      std::string key;
      if (!ParseString(&key) || !Consume(':')) return false;
      if (value->members.count(key) != 0) return false;  // duplicate key
      if (!ParseValue(&value->members[key])) return false;
    } while (Consume(','));
    return Consume('}');
  }

  const std::string& text_;
  size_t position_ = 0;
};

JsonValue ParsedJson() {
  std::string text = StatisticsJsonText();
  JsonValue document;
  EXPECT_TRUE(JsonParser(text).ParseDocument(&document)) << "not valid JSON:\n" << text;
  return document;
}

// Statistics whose counters are all different: counter i holds base + i.
Statistics Distinct(uint64_t base) {
  Statistics statistics;
  uint64_t* counters[] = {&statistics.scopes,
                          &statistics.intercepted,
                          &statistics.passed_through,
                          &statistics.issued_early,
                          &statistics.consumed,
                          &statistics.wasted,
                          &statistics.mispredicted,
                          &statistics.synchronous,
                          &statistics.cancelled,
                          &statistics.speculation_stopped,
                          &statistics.speculation_resumed,
                          &statistics.found_cached,
                          &statistics.served_from_cache,
                          &statistics.cache_mode_changes,
                          &statistics.check_divergences,
                          &statistics.bytes_early,
                          &statistics.wait_nanoseconds,
                          &statistics.depth_changes,
                          &statistics.depth_windows,
                          &statistics.depth_window_sum,
                          &statistics.gate_trials,
                          &statistics.gate_trials_won,
                          &statistics.gate_retries,
                          &statistics.gate_stretches_without_waits,
                          &statistics.gate_plain_units,
                          &statistics.gate_scope_units,
                          &statistics.scopes_left_to_cache,
                          &statistics.write_behind_requests,
                          &statistics.write_behind_bytes,
                          &statistics.write_behind_errors,
                          &statistics.write_behind_wait_nanoseconds,
                          &statistics.read_ahead_streams,
                          &statistics.read_ahead_requests,
                          &statistics.read_ahead_bytes,
                          &statistics.read_ahead_cached_regions,
                          &statistics.read_ahead_errors,
                          &statistics.read_ahead_wait_nanoseconds,
                          &statistics.metadata_served,
                          &statistics.metadata_mode_changes,
                          &statistics.writes_served,
                          &statistics.write_mode_changes,
                          &statistics.probes_waited,
                          &statistics.direct_reads,
                          &statistics.direct_read_requests,
                          &statistics.found_present,
                          &statistics.reads_started,
                          &statistics.gate_stretches_lengthened,
                          &statistics.gate_streaming_stretches,
                          &statistics.gate_stream_checks,
                          &statistics.gate_stream_checks_lost,
                          &statistics.read_ahead_streams_ahead,
                          &statistics.read_ahead_streams_in_order,
                          &statistics.left_in_file_order,
                          &statistics.scopes_left_in_file_order,
                          &statistics.reads_started_in_plans,
                          &statistics.started_reads_polled,
                          &statistics.started_reads_asleep};
  uint64_t value = base;
  for (uint64_t* counter : counters) *counter = value++;
  return statistics;
}

const char* const kCounterKeys[] = {"scopes",
                                    "intercepted",
                                    "passed_through",
                                    "issued_early",
                                    "consumed",
                                    "wasted",
                                    "mispredicted",
                                    "synchronous",
                                    "cancelled",
                                    "speculation_stopped",
                                    "speculation_resumed",
                                    "found_cached",
                                    "served_from_cache",
                                    "cache_mode_changes",
                                    "check_divergences",
                                    "bytes_early",
                                    "wait_nanoseconds",
                                    "depth_changes",
                                    "depth_windows",
                                    "depth_window_sum",
                                    "gate_trials",
                                    "gate_trials_won",
                                    "gate_retries",
                                    "gate_stretches_without_waits",
                                    "gate_plain_units",
                                    "gate_scope_units",
                                    "scopes_left_to_cache",
                                    "write_behind_requests",
                                    "write_behind_bytes",
                                    "write_behind_errors",
                                    "write_behind_wait_nanoseconds",
                                    "read_ahead_streams",
                                    "read_ahead_requests",
                                    "read_ahead_bytes",
                                    "read_ahead_cached_regions",
                                    "read_ahead_errors",
                                    "read_ahead_wait_nanoseconds",
                                    "metadata_served",
                                    "metadata_mode_changes",
                                    "writes_served",
                                    "write_mode_changes",
                                    "probes_waited",
                                    "direct_reads",
                                    "direct_read_requests",
                                    "found_present",
                                    "reads_started",
                                    "gate_stretches_lengthened",
                                    "gate_streaming_stretches",
                                    "gate_stream_checks",
                                    "gate_stream_checks_lost",
                                    "read_ahead_streams_ahead",
                                    "read_ahead_streams_in_order",
                                    "left_in_file_order",
                                    "scopes_left_in_file_order",
                                    "reads_started_in_plans",
                                    "started_reads_polled",
                                    "started_reads_asleep"};

TEST(StatisticsTest, AddSumsEveryCounter) {
  Statistics total = Distinct(100);
  total.Add(Distinct(1000));
  Statistics expected_first = Distinct(100);
  Statistics expected_second = Distinct(1000);
  EXPECT_EQ(total.scopes, expected_first.scopes + expected_second.scopes);
  EXPECT_EQ(total.intercepted, 101u + 1001u);
  EXPECT_EQ(total.passed_through, 102u + 1002u);
  EXPECT_EQ(total.issued_early, 103u + 1003u);
  EXPECT_EQ(total.consumed, 104u + 1004u);
  EXPECT_EQ(total.wasted, 105u + 1005u);
  EXPECT_EQ(total.mispredicted, 106u + 1006u);
  EXPECT_EQ(total.synchronous, 107u + 1007u);
  EXPECT_EQ(total.cancelled, 108u + 1008u);
  EXPECT_EQ(total.speculation_stopped, 109u + 1009u);
  EXPECT_EQ(total.speculation_resumed, 110u + 1010u);
  EXPECT_EQ(total.found_cached, 111u + 1011u);
  EXPECT_EQ(total.served_from_cache, 112u + 1012u);
  EXPECT_EQ(total.cache_mode_changes, 113u + 1013u);
  EXPECT_EQ(total.check_divergences, 114u + 1014u);
  EXPECT_EQ(total.bytes_early, 115u + 1015u);
  EXPECT_EQ(total.wait_nanoseconds, 116u + 1016u);
  EXPECT_EQ(total.depth_changes, 117u + 1017u);
  EXPECT_EQ(total.depth_windows, 118u + 1018u);
  EXPECT_EQ(total.depth_window_sum, 119u + 1019u);
  EXPECT_EQ(total.gate_trials, 120u + 1020u);
  EXPECT_EQ(total.gate_trials_won, 121u + 1021u);
  EXPECT_EQ(total.gate_retries, 122u + 1022u);
  EXPECT_EQ(total.gate_stretches_without_waits, 123u + 1023u);
  EXPECT_EQ(total.gate_plain_units, 124u + 1024u);
  EXPECT_EQ(total.gate_scope_units, 125u + 1025u);
  EXPECT_EQ(total.scopes_left_to_cache, 126u + 1026u);
  EXPECT_EQ(total.write_behind_requests, 127u + 1027u);
  EXPECT_EQ(total.write_behind_bytes, 128u + 1028u);
  EXPECT_EQ(total.write_behind_errors, 129u + 1029u);
  EXPECT_EQ(total.write_behind_wait_nanoseconds, 130u + 1030u);
  EXPECT_EQ(total.read_ahead_streams, 131u + 1031u);
  EXPECT_EQ(total.read_ahead_requests, 132u + 1032u);
  EXPECT_EQ(total.read_ahead_bytes, 133u + 1033u);
  EXPECT_EQ(total.read_ahead_cached_regions, 134u + 1034u);
  EXPECT_EQ(total.read_ahead_errors, 135u + 1035u);
  EXPECT_EQ(total.read_ahead_wait_nanoseconds, 136u + 1036u);
  EXPECT_EQ(total.metadata_served, 137u + 1037u);
  EXPECT_EQ(total.metadata_mode_changes, 138u + 1038u);
  EXPECT_EQ(total.writes_served, 139u + 1039u);
  EXPECT_EQ(total.write_mode_changes, 140u + 1040u);
  EXPECT_EQ(total.probes_waited, 141u + 1041u);
  EXPECT_EQ(total.direct_reads, 142u + 1042u);
  EXPECT_EQ(total.direct_read_requests, 143u + 1043u);
  EXPECT_EQ(total.found_present, 144u + 1044u);
  EXPECT_EQ(total.reads_started, 145u + 1045u);
  EXPECT_EQ(total.gate_stretches_lengthened, 146u + 1046u);
  EXPECT_EQ(total.gate_streaming_stretches, 147u + 1047u);
  EXPECT_EQ(total.gate_stream_checks, 148u + 1048u);
  EXPECT_EQ(total.gate_stream_checks_lost, 149u + 1049u);
  EXPECT_EQ(total.read_ahead_streams_ahead, 150u + 1050u);
  EXPECT_EQ(total.read_ahead_streams_in_order, 151u + 1051u);
  EXPECT_EQ(total.left_in_file_order, 152u + 1052u);
  EXPECT_EQ(total.scopes_left_in_file_order, 153u + 1053u);
}

TEST(StatisticsTest, JsonHoldsEveryCounterOfEveryGraph) {
  AccumulateStatistics("json_every_counter", "io_uring", Distinct(1));
  AccumulateStatistics("json_every_counter", "io_uring", Distinct(10));
  JsonValue document = ParsedJson();

  ASSERT_EQ(document.kind, JsonValue::Kind::kObject);
  ASSERT_EQ(document.members.count("pid"), 1u);
  EXPECT_EQ(document.members["pid"].number, static_cast<unsigned long long>(getpid()));
  JsonValue& graphs = document.members["graphs"];
  ASSERT_EQ(graphs.kind, JsonValue::Kind::kObject);
  ASSERT_EQ(graphs.members.count("json_every_counter"), 1u);
  JsonValue& graph = graphs.members["json_every_counter"];
  ASSERT_EQ(graph.kind, JsonValue::Kind::kObject);
  EXPECT_EQ(graph.members["engine"].text, "io_uring");
  EXPECT_EQ(graph.members.size(), 1u + std::size(kCounterKeys));
  uint64_t expected = 1 + 10;
  for (const char* key : kCounterKeys) {
    SCOPED_TRACE(key);
    ASSERT_EQ(graph.members.count(key), 1u);
    EXPECT_EQ(graph.members[key].kind, JsonValue::Kind::kNumber);
    EXPECT_EQ(graph.members[key].number, expected);
    expected += 2;  // counter i is (1 + i) + (10 + i)
  }
}

TEST(StatisticsTest, KeepsGraphsApartAndNotesEveryEngine) {
  AccumulateStatistics("apart_one", "io_uring", Distinct(1));
  AccumulateStatistics("apart_two", "threads", Distinct(5));
  AccumulateStatistics("apart_two", "sync", Distinct(5));
  AccumulateStatistics("apart_two", "threads", Distinct(5));
  JsonValue document = ParsedJson();
  JsonValue& graphs = document.members["graphs"];
  EXPECT_EQ(graphs.members["apart_one"].members["scopes"].number, 1u);
  EXPECT_EQ(graphs.members["apart_one"].members["engine"].text, "io_uring");
  EXPECT_EQ(graphs.members["apart_two"].members["scopes"].number, 15u);
  EXPECT_EQ(graphs.members["apart_two"].members["engine"].text, "threads,sync");
}

TEST(StatisticsTest, TotalsFoundOnceStayValidAsOtherGraphsArrive) {
  GraphTotals* totals = GraphTotalsFor("found_once", "io_uring");
  ASSERT_NE(totals, nullptr);
  EXPECT_EQ(GraphTotalsFor("found_once", ""), totals);
  AccumulateStatistics(totals, Distinct(1));
  for (int i = 0; i < 200; ++i)
    AccumulateStatistics("found_once_other_" + std::to_string(i), "sync", Distinct(1));
  AccumulateStatistics(totals, Distinct(2));
  AccumulateStatistics(nullptr, Distinct(100));  // out of memory earlier: nothing happens
  JsonValue document = ParsedJson();
  JsonValue& graph = document.members["graphs"].members["found_once"];
  EXPECT_EQ(graph.members["scopes"].number, 3u);
  EXPECT_EQ(graph.members["gate_scope_units"].number, (1u + 25u) + (2u + 25u));  // the 26th counter
  EXPECT_EQ(graph.members["engine"].text, "io_uring");
}

// Counts kept outside the totals, moved in by a fold each time the
// statistics are written.
std::atomic<uint64_t> pending_fold_scopes{0};
void FoldPendingScopes() {
  Statistics delta;
  delta.scopes = pending_fold_scopes.exchange(0);
  if (delta.scopes > 0) AccumulateStatistics("folded", "threads", delta);
}

TEST(StatisticsTest, EveryFoldRunsOnceBeforeTheTotalsAreWritten) {
  AddStatisticsFold(&FoldPendingScopes);
  AddStatisticsFold(&FoldPendingScopes);  // kept once
  pending_fold_scopes = 3;
  EXPECT_EQ(ParsedJson().members["graphs"].members["folded"].members["scopes"].number, 3u);
  pending_fold_scopes = 4;
  EXPECT_EQ(ParsedJson().members["graphs"].members["folded"].members["scopes"].number, 7u);
  EXPECT_EQ(pending_fold_scopes.load(), 0u);
}

TEST(StatisticsTest, EscapesNamesSoTheJsonStaysValid) {
  const std::string odd_name = std::string("quote\"back\\slash\nnew\ttab\x01\xff") + "/end";
  const std::string odd_engine = "eng\"ine";
  AccumulateStatistics(odd_name, odd_engine, Distinct(3));
  JsonValue document = ParsedJson();
  JsonValue& graphs = document.members["graphs"];
  ASSERT_EQ(graphs.members.count(odd_name), 1u);
  EXPECT_EQ(graphs.members[odd_name].members["engine"].text, odd_engine);
  EXPECT_EQ(graphs.members[odd_name].members["scopes"].number, 3u);
}

TEST(StatisticsTest, ConcurrentAccumulationLosesNothing) {
  constexpr int kThreads = 4;
  constexpr int kAddsPerThread = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([] {
      Statistics one;
      one.scopes = 1;
      one.bytes_early = 4096;
      for (int i = 0; i < kAddsPerThread; ++i) AccumulateStatistics("concurrent", "threads", one);
    });
  }
  for (std::thread& thread : threads) thread.join();
  JsonValue document = ParsedJson();
  JsonValue& graph = document.members["graphs"].members["concurrent"];
  EXPECT_EQ(graph.members["scopes"].number, uint64_t{kThreads} * kAddsPerThread);
  EXPECT_EQ(graph.members["bytes_early"].number, uint64_t{kThreads} * kAddsPerThread * 4096);
}

TEST(StatisticsTest, ReportsAWriteError) {
  FILE* full = std::fopen("/dev/full", "w");
  if (full == nullptr) GTEST_SKIP() << "/dev/full is not available";
  AccumulateStatistics("write_error", "sync", Distinct(1));
  EXPECT_EQ(WriteStatisticsJson(full), -1);
  std::fclose(full);
  EXPECT_EQ(WriteStatisticsJson(nullptr), -1);
}

// The whole content of the file at `path`.
std::string FileContent(const std::string& path) {
  std::string content;
  FILE* in = std::fopen(path.c_str(), "r");
  if (in == nullptr) return content;
  char buffer[4096];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof(buffer), in)) > 0) content.append(buffer, got);
  std::fclose(in);
  return content;
}

// A file in /tmp of `bytes` bytes of 'z', written to the device; its path.
std::string MakeWrittenFile(size_t bytes) {
  char path[] = "/tmp/foreactor_statistics_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return "";
  const std::string data(bytes, 'z');
  const bool made =
      write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size()) && fsync(fd) == 0;
  close(fd);
  if (!made) {
    unlink(path);
    return "";
  }
  return path;
}

TEST(StatisticsTest, FileOverALongerOneHoldsExactlyTheDocument) {
  AccumulateStatistics("file_over_longer", "sync", Distinct(1));
  const std::string path = MakeWrittenFile(64 << 10);
  ASSERT_FALSE(path.empty());
  ASSERT_EQ(WriteStatisticsFile(path.c_str()), 0);
  const std::string content = FileContent(path);
  unlink(path.c_str());
  EXPECT_EQ(content, StatisticsJsonText());
  JsonValue document;
  EXPECT_TRUE(JsonParser(content).ParseDocument(&document));
}

TEST(StatisticsTest, FileIsCreatedWhenMissing) {
  AccumulateStatistics("file_created", "sync", Distinct(1));
  const std::string path = MakeWrittenFile(1);
  ASSERT_FALSE(path.empty());
  unlink(path.c_str());
  ASSERT_EQ(WriteStatisticsFile(path.c_str()), 0);
  const std::string content = FileContent(path);
  unlink(path.c_str());
  EXPECT_EQ(content, StatisticsJsonText());
}

// Written over in place, the file keeps its new pages dirty for the
// kernel's write-back to take in its time; emptied first (O_TRUNC), ext4
// would have flushed them as the file was closed.  (Tried a few times: a
// sync(2) elsewhere on the machine may write them back meanwhile.)
TEST(StatisticsTest, FileOverAnExistingOneIsNotFlushedAtClose) {
  AccumulateStatistics("file_not_flushed", "sync", Distinct(1));
  bool left_dirty = false;
  for (int attempt = 0; attempt < 3 && !left_dirty; ++attempt) {
    const std::string path = MakeWrittenFile(64 << 10);
    ASSERT_FALSE(path.empty());
    ASSERT_EQ(WriteStatisticsFile(path.c_str()), 0);
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    raw::CachestatCounts counts = {};
    const int64_t asked = raw::Cachestat(fd, 0, 64 << 10, &counts);
    close(fd);
    unlink(path.c_str());
    if (asked == -ENOSYS) GTEST_SKIP() << "the kernel has no cachestat(2)";
    ASSERT_EQ(asked, 0);
    left_dirty = counts.dirty > 0;
  }
  EXPECT_TRUE(left_dirty);
}

TEST(StatisticsTest, FileThatIsNotRegularIsWrittenAsItIs) {
  AccumulateStatistics("file_not_regular", "sync", Distinct(1));
  EXPECT_EQ(WriteStatisticsFile("/dev/null"), 0);
}

TEST(StatisticsTest, FileErrorsComeBackAsNegativeErrno) {
  AccumulateStatistics("file_errors", "sync", Distinct(1));
  EXPECT_EQ(WriteStatisticsFile("/nonexistent-foreactor-directory/statistics.json"), -ENOENT);
  if (access("/dev/full", W_OK) == 0) {
    EXPECT_EQ(WriteStatisticsFile("/dev/full"), -ENOSPC);
  }
}

}  // namespace
}  // namespace foreactor
