// statistics.h: per-graph counters, gathered per thread without atomics on
// the hot path and folded into the graph's process-wide totals when a scope
// ends.
#ifndef FOREACTOR_RUNTIME_STATISTICS_H_
#define FOREACTOR_RUNTIME_STATISTICS_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace foreactor {

struct Statistics {
  uint64_t scopes = 0;               // scopes entered
  uint64_t intercepted = 0;          // calls that belonged to the graph (matched a node)
  uint64_t passed_through = 0;       // calls seen in a scope that did not belong to the graph
  uint64_t issued_early = 0;         // requests handed to the engine ahead of the program
  uint64_t consumed = 0;             // early results the program received
  uint64_t wasted = 0;               // early results never used (scope left, divergence)
  uint64_t mispredicted = 0;         // early results thrown away because the call differed
  uint64_t synchronous = 0;          // graph calls run synchronously at the frontier
  uint64_t cancelled = 0;            // early requests cancelled at scope exit or divergence
  uint64_t speculation_stopped = 0;  // times mispredictions in a row suspended speculation
  uint64_t speculation_resumed = 0;  // times a run of correct predictions resumed it
  uint64_t found_cached = 0;         // reads the peek head found in the page cache and read at once
  uint64_t probes_waited = 0;       // reads the peek head's RWF_NOWAIT probe returned after waiting
  uint64_t served_from_cache = 0;   // reads served at the frontier straight from the page cache
  uint64_t cache_mode_changes = 0;  // switches between speculating and serving from the cache
  uint64_t check_divergences = 0;   // check mode: places where the program left the graph
  uint64_t bytes_early = 0;         // bytes transferred by consumed early reads and writes
  uint64_t wait_nanoseconds = 0;    // time the program waited for early results
  uint64_t depth_changes = 0;       // FOREACTOR_DEPTH=auto: moves of the controller's home depth
  uint64_t depth_windows = 0;       // measurement windows the controller completed
  uint64_t depth_window_sum = 0;    // sum of the depth of each window (mean = sum / windows)
  uint64_t gate_trials = 0;         // scope gate: trial stretches run with a scope
  uint64_t gate_trials_won = 0;     // scope gate: trials faster than their plain stretch
  uint64_t gate_retries = 0;        // scope gate: idle rests ended by asking the runtime to retry
  uint64_t gate_stretches_without_waits = 0;  // scope gate: plain stretches with no wait: no trial
  uint64_t gate_plain_units = 0;              // scope gate: units it ran without a scope
  uint64_t gate_scope_units = 0;              // scope gate: units it ran with a scope
  uint64_t scopes_left_to_cache = 0;   // scopes that stopped following the graph, all reads cached
  uint64_t write_behind_requests = 0;  // write-back hints handed to the engine (write_behind.h)
  uint64_t write_behind_bytes = 0;     // bytes those hints covered
  uint64_t write_behind_errors = 0;    // hints that failed (ignored: nothing the program sees)
  uint64_t write_behind_wait_nanoseconds = 0;  // time the program waited for hints (close, exit)
  uint64_t read_ahead_streams = 0;             // read-ahead streams started (read_ahead_stream.h)
  uint64_t read_ahead_requests = 0;            // their reads handed to the engine
  uint64_t read_ahead_bytes = 0;               // bytes those reads covered
  uint64_t read_ahead_cached_regions = 0;      // regions found cached, not read
  uint64_t read_ahead_errors = 0;              // their reads that failed (ignored)
  uint64_t read_ahead_wait_nanoseconds = 0;  // time the program waited for them (close, scope end)
  uint64_t metadata_served = 0;        // stats made at the frontier while stats were found cached
  uint64_t metadata_mode_changes = 0;  // switches between issuing stats early and leaving them
  uint64_t writes_served = 0;       // buffered writes made at the frontier while writes were quick
  uint64_t write_mode_changes = 0;  // switches between issuing writes early and leaving them
  uint64_t direct_reads = 0;        // early reads of cold ranges issued past the page cache
  uint64_t direct_read_requests = 0;  // device requests they went in (coalesced_reads.h)
  uint64_t found_present = 0;  // reads left to the program: their pages in the cache or coming in
  uint64_t reads_started = 0;  // cold reads left to the program after readahead(2) started them
  uint64_t gate_stretches_lengthened = 0;  // scope gate: trials too close to call
  uint64_t gate_streaming_stretches = 0;   // scope gate: stretches kept for a stream past the cache
  uint64_t gate_stream_checks = 0;         // scope gate: such streams timed against plain once
  uint64_t gate_stream_checks_lost = 0;    // of them, those where kept ran 10% slower or more
  uint64_t read_ahead_streams_ahead = 0;   // read-ahead streams started ahead of the program
  uint64_t read_ahead_streams_in_order = 0;  // of them, in file order (read_ahead_stream.h)
  uint64_t left_in_file_order = 0;  // cold reads in file order left to the kernel's read-ahead
  uint64_t scopes_left_in_file_order = 0;  // scopes whose rest was such a run: not followed
  uint64_t reads_started_in_plans = 0;     // cold reads a plugin started while planning a unit
  uint64_t started_reads_polled = 0;  // program's reads of started ranges a page cache poll served
  uint64_t started_reads_asleep = 0;  // of those reads, the rest: pread(2) waited for them

  void Add(const Statistics& other);
};

// The process-wide totals of one graph.  Made by GraphTotalsFor() and never
// destroyed, so a pointer to them stays valid for the life of the process.
struct GraphTotals;

// The totals of graph `graph_name`, made on first use, with `engine_name`
// noted among the engines it ran on (unless empty).  Null when out of
// memory.  Thread-safe; takes the registry's lock and looks the name up:
// call it once per owner, not per scope.
GraphTotals* GraphTotalsFor(const std::string& graph_name, std::string_view engine_name);

// Folds `delta` into `totals` (thread-safe; one uncontended lock, no
// lookup).  `totals` null: nothing happens.
void AccumulateStatistics(GraphTotals* totals, const Statistics& delta);

// Both of the above, for an occasional fold.
void AccumulateStatistics(const std::string& graph_name, std::string_view engine_name,
                          const Statistics& delta);

// Adds a section to the statistics file, beside "graphs": `write` prints
// one JSON value (an object) and returns false on a write error.  For
// process-wide capabilities that are not graphs (walk-ahead).  At most
// kMaxStatisticsSections sections; a name added twice keeps its first
// writer.  Thread-safe.
inline constexpr int kMaxStatisticsSections = 4;
void AddStatisticsSection(const char* name, bool (*write)(FILE* out));

// Adds `fold`, which moves counts a layer keeps outside the totals (so as
// to count with no lock and no lookup) into them with
// AccumulateStatistics(): WriteStatisticsJson() calls every fold first.  At
// most kMaxStatisticsFolds; one added twice is kept once.  Thread-safe.
inline constexpr int kMaxStatisticsFolds = 2;
void AddStatisticsFold(void (*fold)());

// Writes every graph's totals as JSON (after the folds): {"graphs": {"name": {...counters...}},
// then each added section as "name": value, then "pid": N}.
int WriteStatisticsJson(FILE* out);

// Writes that JSON to the file at `path` (created with mode 0666 less the
// umask when missing), replacing what it held.  A regular file is written
// over from its start and then cut to the new length, never emptied
// first: a file ext4 sees emptied and written again is flushed to the
// device when it is closed (its auto_da_alloc), which took 0.2-0.9 ms at a
// process's exit on the development VM.  Other files (a FIFO, /dev/null,
// a terminal) are written as they are.  Returns 0, or -errno.
int WriteStatisticsFile(const char* path);

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_STATISTICS_H_
