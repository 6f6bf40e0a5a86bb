// settings.h: foreactor's configuration, read once from the environment.
//
// Variables (DESIGN §7):
//   FOREACTOR=1                    switch foreactor on (anything else but unset/0 is invalid)
//   FOREACTOR_DEPTH=N|auto         peek depth, 0..1024 (0: no early issue), or auto (the
//                                  default): chosen per graph and thread while the program
//                                  runs, from 0 to kAutomaticDepthMaximum (depth_controller.h)
//   FOREACTOR_DEPTH_<graph>=N|auto depth for one graph, overriding the default
//   FOREACTOR_ENGINE=io_uring|threads|sync       (also FOREACTOR_ENGINE_<graph>)
//   FOREACTOR_QUEUE_SIZE=N         io_uring queue entries, 1..32768, rounded up to a power of two
//   FOREACTOR_WORKERS=N            thread pool workers (and io-wq bound), 1..1024
//   FOREACTOR_IO_URING_ASYNC=0|1   IOSQE_ASYNC on every io_uring request
//   FOREACTOR_PAGE_CACHE=0|1       serve reads found in the page cache without the engine
//                                  (default 1)
//   FOREACTOR_CHECK=0|1            check mode: issue nothing early; report where the program
//                                  leaves the graph (also FOREACTOR_CHECK_<graph>)
//   FOREACTOR_WRITE_BEHIND=0|1     start write-back of the writes of nodes that declare
//                                  write-behind early (default 1; also
//                                  FOREACTOR_WRITE_BEHIND_<graph>); an invalid value turns
//                                  write-behind off, nothing else
//   FOREACTOR_READ_AHEAD=0|1       read the regions a scan's scattered preads fall in ahead,
//                                  as large reads off the program's thread (default 1; also
//                                  FOREACTOR_READ_AHEAD_<graph>); an invalid value turns
//                                  read-ahead streams off, nothing else
//   FOREACTOR_DIRECT_READS=0|1     issue early reads of cold ranges past the page cache
//                                  (runtime/direct_reads.h; default 1; also
//                                  FOREACTOR_DIRECT_READS_<graph>); an invalid value turns
//                                  direct reads off, nothing else
//   FOREACTOR_POLL_US=N            microseconds the program's read of a range a plugin
//                                  started (foreactor_scope_read_started) asks the page
//                                  cache for it before sleeping in pread(2), 0..10000
//                                  (default 300; 0: sleep at once; also
//                                  FOREACTOR_POLL_US_<graph>); an invalid value turns
//                                  polling off, nothing else
//   FOREACTOR_STATS=PATH           write statistics JSON there at exit
//   FOREACTOR_WALK_AHEAD=0|1       walk directory trees ahead of the program (src/walk/)
//   FOREACTOR_WALK_AHEAD_WORKERS=N walk-ahead threads, 1..64 (default 8)
//   FOREACTOR_WALK_AHEAD_DISTANCE=N  directories walk-ahead may read ahead of the program,
//                                  1..1000000 (default 1024)
//
// An invalid value is reported once on stderr, and the setting it belongs to
// is treated as off: an invalid default turns foreactor off for every graph,
// an invalid per-graph value turns that graph off.
//
// A program running with elevated privileges (setuid, setgid, file
// capabilities: the kernel's AT_SECURE) never runs foreactor: the
// environment of such a program belongs to a less trusted user.
#ifndef FOREACTOR_CONFIG_SETTINGS_H_
#define FOREACTOR_CONFIG_SETTINGS_H_

#include <atomic>
#include <string>
#include <vector>

#include "base/engine_options.h"

namespace foreactor {

// The largest depth FOREACTOR_DEPTH=auto chooses.  256 reads of 8 KiB are
// the 2 MiB the visits ahead may move (GraphRunner::kMaxBytesAhead); the
// B+-tree's direct scans gain up to there (bench/results/bptree.json).
constexpr unsigned kAutomaticDepthMaximum = 256;

// FOREACTOR_POLL_US's default and largest value.  The default covers a
// random 4 KiB read of a cloud virtual disk twice over.
constexpr unsigned kDefaultPollMicroseconds = 300;
constexpr unsigned kMaxPollMicroseconds = 10000;

struct GraphSettings {
  bool enabled = false;  // false: scopes of this graph never speculate
  bool automatic_depth =
      true;  // FOREACTOR_DEPTH=auto: `depth` is the most the controller may choose
  unsigned depth = kAutomaticDepthMaximum;  // syscall visits the peek head may run ahead
  // FOREACTOR_EXACT_DEPTH=1: a fixed depth is kept whatever it costs, and
  // every scope a plugin asks for runs (tests, experiments).  Otherwise a
  // fixed depth is the most the runtime issues ahead, where it pays.
  bool exact_depth = false;
  bool page_cache_aware = true;  // probe reads with RWF_NOWAIT before issuing them
  bool check = false;            // check mode: compare every call with the graph, issue nothing
  bool write_behind = true;      // honour the graph's write-behind nodes (runtime/write_behind.h)
  bool read_ahead = true;    // read-ahead streams for scattered scans (runtime/read_ahead_stream.h)
  bool direct_reads = true;  // early reads of cold ranges past the page cache (direct_reads.h)
  // How long the program's read of a range a plugin started polls the page
  // cache before it sleeps (runtime/polled_read.h); 0: it sleeps at once.
  unsigned poll_microseconds = kDefaultPollMicroseconds;
  EngineOptions engine;
};

// Walk-ahead (src/walk/walk_ahead.h): process-wide, not per graph.  An
// invalid value turns walk-ahead off and leaves the rest of foreactor on.
struct WalkAheadSettings {
  bool enabled = false;      // FOREACTOR_WALK_AHEAD=1 (and FOREACTOR=1)
  bool refused = false;      // FOREACTOR_WALK_AHEAD=0 or an invalid value: a plugin's
                             // request (foreactor_walk_ahead) cannot turn it on
  unsigned workers = 8;      // threads that walk, sharing one private descriptor table
  unsigned distance = 1024;  // directories read ahead of the program's, at most
};

struct ProcessSettings {
  bool enabled = false;  // FOREACTOR=1 and no invalid process-wide value
  GraphSettings defaults;
  std::string stats_path;  // empty: no statistics file
  WalkAheadSettings walk_ahead;
  std::vector<std::string> problems;  // one message per invalid value, already reported
  bool privileged = false;  // AT_SECURE: foreactor stays off whatever the environment says
};

// Parses `environment` (a NULL-terminated array of "NAME=value" strings, as
// `environ`) into settings.  Pure function: reports nothing.  Exposed for
// tests and for the fuzz target.
ProcessSettings ParseSettings(const char* const* environment);

// The settings of this process, parsed from `environ` on first use; the
// first use also prints each problem once to stderr ("foreactor: ...").
const ProcessSettings& Settings();

// Settings().enabled, read without a call once the settings are loaded:
// for questions asked once per unit of work, such as the scope gate's,
// where foreactor being off must cost almost nothing.
namespace internal {
extern std::atomic<int> enabled_known;  // -1 until loaded, then 0 or 1
}  // namespace internal
inline bool Enabled() {
  const int known = internal::enabled_known.load(std::memory_order_relaxed);
  return known >= 0 ? known != 0 : Settings().enabled;
}

// The settings for graph `graph_name`: the defaults, overridden by the
// per-graph variables.  Invalid per-graph values are reported once and
// leave the graph disabled.  Reads the environment; call once per graph.
GraphSettings SettingsForGraph(const std::string& graph_name);

// Re-reads the environment (tests only).
void ReloadSettingsForTesting();

}  // namespace foreactor

#endif  // FOREACTOR_CONFIG_SETTINGS_H_
