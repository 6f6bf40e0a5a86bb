// statistics.cc: process-wide statistics totals and their JSON form.
//
// The totals live in one map from graph name to {engine names, counters},
// guarded by a mutex.  It is touched once per scope (when the scope ends)
// and once at exit, never on the per-call path.

#include "runtime/statistics.h"
#include "base/out_of_memory.h"
#include "runtime/raw_syscalls.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace foreactor {

struct GraphTotals {
  std::string engine;  // engine names seen, in order, separated by ','
  Statistics counters;
};

namespace {

// One counter: its JSON key and where it lives in Statistics.  Every field
// of Statistics appears here once; the JSON holds them in this order.
struct CounterField {
  const char* key;
  uint64_t Statistics::*field;
};

constexpr CounterField kCounterFields[] = {
    {"scopes", &Statistics::scopes},
    {"intercepted", &Statistics::intercepted},
    {"passed_through", &Statistics::passed_through},
    {"issued_early", &Statistics::issued_early},
    {"consumed", &Statistics::consumed},
    {"wasted", &Statistics::wasted},
    {"mispredicted", &Statistics::mispredicted},
    {"synchronous", &Statistics::synchronous},
    {"cancelled", &Statistics::cancelled},
    {"speculation_stopped", &Statistics::speculation_stopped},
    {"speculation_resumed", &Statistics::speculation_resumed},
    {"found_cached", &Statistics::found_cached},
    {"probes_waited", &Statistics::probes_waited},
    {"served_from_cache", &Statistics::served_from_cache},
    {"cache_mode_changes", &Statistics::cache_mode_changes},
    {"check_divergences", &Statistics::check_divergences},
    {"bytes_early", &Statistics::bytes_early},
    {"wait_nanoseconds", &Statistics::wait_nanoseconds},
    {"depth_changes", &Statistics::depth_changes},
    {"depth_windows", &Statistics::depth_windows},
    {"depth_window_sum", &Statistics::depth_window_sum},
    {"gate_trials", &Statistics::gate_trials},
    {"gate_trials_won", &Statistics::gate_trials_won},
    {"gate_retries", &Statistics::gate_retries},
    {"gate_stretches_without_waits", &Statistics::gate_stretches_without_waits},
    {"gate_plain_units", &Statistics::gate_plain_units},
    {"gate_scope_units", &Statistics::gate_scope_units},
    {"scopes_left_to_cache", &Statistics::scopes_left_to_cache},
    {"write_behind_requests", &Statistics::write_behind_requests},
    {"write_behind_bytes", &Statistics::write_behind_bytes},
    {"write_behind_errors", &Statistics::write_behind_errors},
    {"write_behind_wait_nanoseconds", &Statistics::write_behind_wait_nanoseconds},
    {"read_ahead_streams", &Statistics::read_ahead_streams},
    {"read_ahead_requests", &Statistics::read_ahead_requests},
    {"read_ahead_bytes", &Statistics::read_ahead_bytes},
    {"read_ahead_cached_regions", &Statistics::read_ahead_cached_regions},
    {"read_ahead_errors", &Statistics::read_ahead_errors},
    {"read_ahead_wait_nanoseconds", &Statistics::read_ahead_wait_nanoseconds},
    {"metadata_served", &Statistics::metadata_served},
    {"metadata_mode_changes", &Statistics::metadata_mode_changes},
    {"writes_served", &Statistics::writes_served},
    {"write_mode_changes", &Statistics::write_mode_changes},
    {"direct_reads", &Statistics::direct_reads},
    {"direct_read_requests", &Statistics::direct_read_requests},
    {"found_present", &Statistics::found_present},
    {"reads_started", &Statistics::reads_started},
    {"gate_stretches_lengthened", &Statistics::gate_stretches_lengthened},
    {"gate_streaming_stretches", &Statistics::gate_streaming_stretches},
    {"gate_stream_checks", &Statistics::gate_stream_checks},
    {"gate_stream_checks_lost", &Statistics::gate_stream_checks_lost},
    {"read_ahead_streams_ahead", &Statistics::read_ahead_streams_ahead},
    {"read_ahead_streams_in_order", &Statistics::read_ahead_streams_in_order},
    {"left_in_file_order", &Statistics::left_in_file_order},
    {"scopes_left_in_file_order", &Statistics::scopes_left_in_file_order},
    {"reads_started_in_plans", &Statistics::reads_started_in_plans},
    {"started_reads_polled", &Statistics::started_reads_polled},
    {"started_reads_asleep", &Statistics::started_reads_asleep},
};
static_assert(sizeof(Statistics) ==
                  sizeof(kCounterFields) / sizeof(kCounterFields[0]) * sizeof(uint64_t),
              "every counter of Statistics must be listed in kCounterFields");

struct StatisticsRegistry {
  std::mutex mutex;
  // std::less<> lets a lookup by string_view find a graph without
  // building a std::string.
  std::map<std::string, GraphTotals, std::less<>> graphs;
};

// The one registry.  Never destroyed: scopes on other threads and the
// exit-time writer may use it while static destructors run.  Constructing
// it does not allocate.
StatisticsRegistry& Registry() {
  alignas(StatisticsRegistry) static unsigned char storage[sizeof(StatisticsRegistry)];
  static StatisticsRegistry* registry = new (storage) StatisticsRegistry();
  return *registry;
}

// Adds `engine_name` to the comma-separated list `engines` unless present.
void NoteEngine(std::string_view engine_name, std::string* engines) {
  if (engine_name.empty()) return;
  std::string_view rest = *engines;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    if (rest.substr(0, comma) == engine_name) return;
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  if (!engines->empty()) *engines += ',';
  *engines += engine_name;
}

// Writes `text` as a JSON string, quotes included.  Bytes outside ASCII are
// written as \u00XX so the output is valid JSON whatever the bytes are.
bool WriteJsonString(FILE* out, std::string_view text) {
  if (std::fputc('"', out) == EOF) return false;
  for (char character : text) {
    unsigned char c = static_cast<unsigned char>(character);
    int status;
    switch (c) {
      case '"':
        status = std::fputs("\\\"", out);
        break;
      case '\\':
        status = std::fputs("\\\\", out);
        break;
      case '\n':
        status = std::fputs("\\n", out);
        break;
      case '\r':
        status = std::fputs("\\r", out);
        break;
      case '\t':
        status = std::fputs("\\t", out);
        break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          status = std::fprintf(out, "\\u%04x", static_cast<unsigned>(c));
        } else {
          status = std::fputc(c, out);
        }
    }
    if (status < 0) return false;
  }
  return std::fputc('"', out) != EOF;
}

bool WriteGraph(FILE* out, const std::string& name, const GraphTotals& totals) {
  if (std::fputs("    ", out) < 0 || !WriteJsonString(out, name) ||
      std::fputs(": {\n      \"engine\": ", out) < 0 || !WriteJsonString(out, totals.engine)) {
    return false;
  }
  for (const CounterField& counter : kCounterFields) {
    if (std::fprintf(out, ",\n      \"%s\": %" PRIu64, counter.key,
                     totals.counters.*counter.field) < 0) {
      return false;
    }
  }
  return std::fputs("\n    }", out) >= 0;
}

}  // namespace

void Statistics::Add(const Statistics& other) {
  // Every field is a uint64_t counter (kCounterFields' static_assert): add
  // them as one array, which the compiler vectorizes.
  using Counters = std::array<uint64_t, sizeof(Statistics) / sizeof(uint64_t)>;
  Counters sum = std::bit_cast<Counters>(*this);
  const Counters added = std::bit_cast<Counters>(other);
  for (size_t i = 0; i < sum.size(); ++i) sum[i] += added[i];
  *this = std::bit_cast<Statistics>(sum);
}

GraphTotals* GraphTotalsFor(const std::string& graph_name, std::string_view engine_name) {
  StatisticsRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  GraphTotals* totals = nullptr;
  // Out of memory: these counts are lost; the program is not disturbed.
  static_cast<void>(AllocationSucceeds([&] {
    auto found = registry.graphs.find(graph_name);
    if (found == registry.graphs.end()) {
      found = registry.graphs.emplace(graph_name, GraphTotals()).first;
    }
    NoteEngine(engine_name, &found->second.engine);
    totals = &found->second;  // std::map nodes never move
  }));
  return totals;
}

void AccumulateStatistics(GraphTotals* totals, const Statistics& delta) {
  if (totals == nullptr) return;
  StatisticsRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  totals->counters.Add(delta);
}

void AccumulateStatistics(const std::string& graph_name, std::string_view engine_name,
                          const Statistics& delta) {
  AccumulateStatistics(GraphTotalsFor(graph_name, engine_name), delta);
}

namespace {

struct StatisticsSection {
  std::atomic<const char*> name{nullptr};
  std::atomic<bool (*)(FILE*)> write{nullptr};
};
StatisticsSection sections[kMaxStatisticsSections];
std::atomic<void (*)()> folds[kMaxStatisticsFolds];
std::mutex sections_mutex;  // adding sections and folds

}  // namespace

void AddStatisticsSection(const char* name, bool (*write)(FILE* out)) {
  std::lock_guard<std::mutex> lock(sections_mutex);
  for (StatisticsSection& section : sections) {
    const char* existing = section.name.load(std::memory_order_acquire);
    if (existing != nullptr && std::strcmp(existing, name) == 0) return;
    if (existing == nullptr) {
      section.write.store(write, std::memory_order_relaxed);
      section.name.store(name, std::memory_order_release);
      return;
    }
  }
}

void AddStatisticsFold(void (*fold)()) {
  std::lock_guard<std::mutex> lock(sections_mutex);
  for (std::atomic<void (*)()>& slot : folds) {
    void (*existing)() = slot.load(std::memory_order_relaxed);
    if (existing == fold) return;
    if (existing == nullptr) {
      slot.store(fold, std::memory_order_release);
      return;
    }
  }
}

int WriteStatisticsJson(FILE* out) {
  if (out == nullptr) return -1;
  for (const std::atomic<void (*)()>& slot : folds) {
    void (*fold)() = slot.load(std::memory_order_acquire);
    if (fold != nullptr) fold();
  }
  // Copy the totals so that a slow `out` never holds up ending scopes.
  std::vector<std::pair<std::string, GraphTotals>> graphs;
  if (!AllocationSucceeds([&] {
        StatisticsRegistry& registry = Registry();
        std::lock_guard<std::mutex> lock(registry.mutex);
        graphs.assign(registry.graphs.begin(), registry.graphs.end());
      })) {
    return -1;
  }

  if (std::fputs("{\n  \"graphs\": {", out) < 0) return -1;
  bool first = true;
  for (const auto& [name, totals] : graphs) {
    if (std::fputs(first ? "\n" : ",\n", out) < 0 || !WriteGraph(out, name, totals)) return -1;
    first = false;
  }
  if (std::fputs(first ? "}" : "\n  }", out) < 0) return -1;
  for (const StatisticsSection& section : sections) {
    const char* name = section.name.load(std::memory_order_acquire);
    if (name == nullptr) break;
    if (std::fputs(",\n  ", out) < 0 || !WriteJsonString(out, name) || std::fputs(": ", out) < 0 ||
        !section.write.load(std::memory_order_relaxed)(out)) {
      return -1;
    }
  }
  if (std::fprintf(out, ",\n  \"pid\": %ld\n}\n", static_cast<long>(getpid())) < 0) return -1;
  return std::fflush(out) == 0 && !std::ferror(out) ? 0 : -1;
}

int WriteStatisticsFile(const char* path) {
  const int64_t opened = raw::Open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (opened < 0) return static_cast<int>(opened);
  const int fd = static_cast<int>(opened);
  FILE* out = fdopen(fd, "w");
  if (out == nullptr) {
    const int error = errno;
    raw::Close(fd);
    return -error;
  }
  errno = 0;
  int result = 0;
  if (WriteStatisticsJson(out) != 0 || std::fflush(out) != 0) result = errno != 0 ? -errno : -EIO;
  struct stat status;
  if (result == 0 && raw::Fstat(fd, &status) == 0 && S_ISREG(status.st_mode)) {
    // What is left of a longer document before goes.
    const off_t length = ftello(out);
    const int64_t cut = length < 0 ? -errno : raw::Ftruncate(fd, length);
    if (cut < 0) result = static_cast<int>(cut);
  }
  if (std::fclose(out) != 0 && result == 0) result = -errno;
  return result;
}

}  // namespace foreactor
