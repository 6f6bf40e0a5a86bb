// settings.cc: strict parsing of foreactor's environment variables.
//
// Rules beyond those stated in settings.h:
//  - Numbers are plain decimal digits: no sign, no spaces, no "0x", no
//    trailing junk.  Leading zeros are allowed ("008" is 8).
//  - When a name appears twice in the environment, the first one counts (as
//    with getenv).
//  - While FOREACTOR is unset or "0", the other variables are not checked:
//    a program that did not ask for foreactor never hears from it.
//  - Depth 0 keeps a graph enabled: its scopes run every call synchronously
//    and still count them, which is the baseline mode.
//  - Every tunable may be given per graph: FOREACTOR_<TUNABLE>_<graph>, for
//    DEPTH, EXACT_DEPTH, ENGINE, QUEUE_SIZE, WORKERS, IO_URING_ASYNC, PAGE_CACHE,
//    CHECK, WRITE_BEHIND, READ_AHEAD, DIRECT_READS and POLL_US.
//  - An invalid WRITE_BEHIND turns only write-behind off (for the graph it
//    names, or for every graph), not foreactor: it is a feature of its own.
//  - SettingsForGraph() reads the copy of the FOREACTOR_* variables taken
//    when the settings were first loaded, so a host program that edits its
//    environment later (setenv from another thread) can neither race with
//    nor change foreactor's configuration.

#include "config/settings.h"

#include <sys/auxv.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/out_of_memory.h"
#include "config/report.h"

extern char** environ;

namespace foreactor {

namespace internal {
std::atomic<int> enabled_known{-1};
}  // namespace internal

namespace {

constexpr std::string_view kSwitchVariable = "FOREACTOR";
constexpr std::string_view kStatsVariable = "FOREACTOR_STATS";
constexpr std::string_view kVariablePrefix = "FOREACTOR_";
constexpr std::string_view kWalkAheadVariable = "FOREACTOR_WALK_AHEAD";
constexpr std::string_view kWalkAheadWorkersVariable = "FOREACTOR_WALK_AHEAD_WORKERS";
constexpr std::string_view kWalkAheadDistanceVariable = "FOREACTOR_WALK_AHEAD_DISTANCE";

constexpr unsigned kMaxDepth = 1024;
constexpr unsigned kMinQueueSize = 1;
constexpr unsigned kMaxQueueSize = 32768;
constexpr unsigned kMinWorkers = 1;
constexpr unsigned kMaxWorkers = 1024;
constexpr unsigned kMaxWalkAheadWorkers = 64;
constexpr unsigned kMaxWalkAheadDistance = 1000000;

// Longest part of a bad value quoted back in a message.
constexpr size_t kMaxQuotedValueBytes = 64;

// ------------------------------------------------------------ environment

// The value of variable `name` in `environment` (first occurrence), or
// nullopt when it is not set.  Entries without '=' are ignored.
std::optional<std::string_view> FindVariable(const char* const* environment,
                                             std::string_view name) {
  if (environment == nullptr) return std::nullopt;
  for (const char* const* entry = environment; *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    if (text.size() > name.size() && text.compare(0, name.size(), name) == 0 &&
        text[name.size()] == '=') {
      return text.substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

// ------------------------------------------------------- value primitives

// Parses `text` as a decimal number within [minimum, maximum].  Returns
// false for anything else (empty, sign, junk, overflow, out of range).
bool ParseBoundedDecimal(std::string_view text, unsigned minimum, unsigned maximum,
                         unsigned* value) {
  if (text.empty()) return false;
  unsigned long long number = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    number = number * 10 + static_cast<unsigned>(c - '0');
    if (number > maximum) return false;  // also stops any overflow
  }
  if (number < minimum) return false;
  *value = static_cast<unsigned>(number);
  return true;
}

bool ParseEngineKind(std::string_view text, EngineKind* kind) {
  if (text == "io_uring") {
    *kind = EngineKind::kIoUring;
  } else if (text == "threads") {
    *kind = EngineKind::kThreads;
  } else if (text == "sync") {
    *kind = EngineKind::kSync;
  } else {
    return false;
  }
  return true;
}

bool ParseZeroOrOne(std::string_view text, bool* value) {
  if (text == "0") {
    *value = false;
  } else if (text == "1") {
    *value = true;
  } else {
    return false;
  }
  return true;
}

// Smallest power of two >= `value`; `value` is at most kMaxQueueSize.
unsigned RoundUpToPowerOfTwo(unsigned value) {
  unsigned power = 1;
  while (power < value) power <<= 1;
  return power;
}

bool IsValidGraphName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    bool digit = c >= '0' && c <= '9';
    if (!letter && !digit && c != '_') return false;
  }
  return true;
}

// `value` in double quotes, safe to print on a terminal: '"', '\\' and
// bytes outside printable ASCII are escaped, and long values are cut.
std::string Quote(std::string_view value) {
  static constexpr char kHexDigits[] = "0123456789abcdef";
  std::string quoted = "\"";
  size_t shown = value.size() < kMaxQuotedValueBytes ? value.size() : kMaxQuotedValueBytes;
  for (size_t i = 0; i < shown; ++i) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      quoted += "\\x";
      quoted += kHexDigits[c >> 4];
      quoted += kHexDigits[c & 0xf];
    } else {
      quoted += static_cast<char>(c);
    }
  }
  if (shown < value.size()) quoted += "...";
  quoted += '"';
  return quoted;
}

// "FOREACTOR_DEPTH_btree=\"abc\" is not a number from 0 to 1024; graph btree is off"
std::string Problem(std::string_view variable, std::string_view value, std::string_view allowed,
                    std::string_view consequence) {
  std::string message(variable);
  message += '=';
  message += Quote(value);
  message += " is not ";
  message += allowed;
  message += "; ";
  message += consequence;
  return message;
}

// ---------------------------------------------------------------- tunables

// Which setting a tunable variable sets.
enum class TunableId {
  kDepth,
  kExactDepth,
  kEngine,
  kQueueSize,
  kWorkers,
  kIoUringAsync,
  kPageCache,
  kCheck,
  kWriteBehind,
  kReadAhead,
  kDirectReads,
  kPollMicroseconds
};

struct Tunable {
  TunableId id;
  std::string_view name;     // after "FOREACTOR_": "DEPTH"
  unsigned minimum;          // numbers only
  unsigned maximum;          // numbers only
  std::string_view allowed;  // the "is not ..." part of a problem message
  // Non-empty for a feature of its own: an invalid value turns only that
  // feature off (TurnOff), and the message ends with this instead.
  std::string_view own_consequence;
};

constexpr Tunable kTunables[] = {
    {TunableId::kDepth, "DEPTH", 0, kMaxDepth, "a number from 0 to 1024 or auto", ""},
    {TunableId::kExactDepth, "EXACT_DEPTH", 0, 1, "0 or 1", ""},
    {TunableId::kEngine, "ENGINE", 0, 0, "one of io_uring, threads, sync", ""},
    {TunableId::kQueueSize, "QUEUE_SIZE", kMinQueueSize, kMaxQueueSize, "a number from 1 to 32768",
     ""},
    {TunableId::kWorkers, "WORKERS", kMinWorkers, kMaxWorkers, "a number from 1 to 1024", ""},
    {TunableId::kIoUringAsync, "IO_URING_ASYNC", 0, 1, "0 or 1", ""},
    {TunableId::kPageCache, "PAGE_CACHE", 0, 1, "0 or 1", ""},
    {TunableId::kCheck, "CHECK", 0, 1, "0 or 1", ""},
    {TunableId::kWriteBehind, "WRITE_BEHIND", 0, 1, "1 (on) or 0 (off)", "write-behind is off"},
    {TunableId::kReadAhead, "READ_AHEAD", 0, 1, "1 (on) or 0 (off)", "read-ahead streams are off"},
    {TunableId::kDirectReads, "DIRECT_READS", 0, 1, "1 (on) or 0 (off)", "direct reads are off"},
    {TunableId::kPollMicroseconds, "POLL_US", 0, kMaxPollMicroseconds, "a number from 0 to 10000",
     "started reads are waited for asleep"},
};

// Turns off the feature of a tunable with an own_consequence.
void TurnOff(const Tunable& tunable, GraphSettings* settings) {
  if (tunable.id == TunableId::kWriteBehind) settings->write_behind = false;
  if (tunable.id == TunableId::kReadAhead) settings->read_ahead = false;
  if (tunable.id == TunableId::kDirectReads) settings->direct_reads = false;
  if (tunable.id == TunableId::kPollMicroseconds) settings->poll_microseconds = 0;
}

// Stores `value` for `tunable` into `settings`.  Returns false when the
// value is not one the tunable takes; `settings` is then unchanged.
bool ApplyTunable(const Tunable& tunable, std::string_view value, GraphSettings* settings) {
  unsigned number = 0;
  switch (tunable.id) {
    case TunableId::kDepth:
      if (value == "auto") {
        settings->automatic_depth = true;
        settings->depth = kAutomaticDepthMaximum;
        return true;
      }
      if (!ParseBoundedDecimal(value, tunable.minimum, tunable.maximum, &number)) return false;
      settings->automatic_depth = false;
      settings->depth = number;
      return true;
    case TunableId::kExactDepth:
      return ParseZeroOrOne(value, &settings->exact_depth);
    case TunableId::kEngine:
      return ParseEngineKind(value, &settings->engine.kind);
    case TunableId::kQueueSize:
      if (!ParseBoundedDecimal(value, tunable.minimum, tunable.maximum, &number)) return false;
      settings->engine.queue_size = RoundUpToPowerOfTwo(number);
      return true;
    case TunableId::kWorkers:
      if (!ParseBoundedDecimal(value, tunable.minimum, tunable.maximum, &number)) return false;
      settings->engine.workers = number;
      return true;
    case TunableId::kIoUringAsync:
      return ParseZeroOrOne(value, &settings->engine.io_uring_async);
    case TunableId::kPageCache:
      return ParseZeroOrOne(value, &settings->page_cache_aware);
    case TunableId::kCheck:
      return ParseZeroOrOne(value, &settings->check);
    case TunableId::kWriteBehind:
      return ParseZeroOrOne(value, &settings->write_behind);
    case TunableId::kReadAhead:
      return ParseZeroOrOne(value, &settings->read_ahead);
    case TunableId::kDirectReads:
      return ParseZeroOrOne(value, &settings->direct_reads);
    case TunableId::kPollMicroseconds:
      return ParseBoundedDecimal(value, tunable.minimum, tunable.maximum,
                                 &settings->poll_microseconds);
  }
  return false;
}

// Reads every tunable named "FOREACTOR_<TUNABLE><suffix>" from
// `environment` into `settings`.  Appends one problem per invalid value
// (ending with `consequence`) and returns false when there was any.
bool ReadTunables(const char* const* environment, std::string_view suffix,
                  std::string_view consequence, GraphSettings* settings,
                  std::vector<std::string>* problems) {
  bool all_valid = true;
  for (const Tunable& tunable : kTunables) {
    std::string variable(kVariablePrefix);
    variable += tunable.name;
    variable += suffix;
    std::optional<std::string_view> value = FindVariable(environment, variable);
    if (!value) continue;
    if (ApplyTunable(tunable, *value, settings)) continue;
    if (!tunable.own_consequence.empty()) {
      TurnOff(tunable, settings);
      std::string own(tunable.own_consequence);
      if (!suffix.empty()) {
        own += " for graph ";
        own += suffix.substr(1);
      }
      problems->push_back(Problem(variable, *value, tunable.allowed, own));
      continue;
    }
    problems->push_back(Problem(variable, *value, tunable.allowed, consequence));
    all_valid = false;
  }
  return all_valid;
}

// Reads the FOREACTOR_WALK_AHEAD* variables into `settings`.  Any invalid
// one leaves walk-ahead off (and only walk-ahead), with one problem each.
void ReadWalkAheadSettings(const char* const* environment, WalkAheadSettings* settings,
                           std::vector<std::string>* problems) {
  constexpr std::string_view kConsequence = "walk-ahead is off";
  bool valid = true;
  if (std::optional<std::string_view> value = FindVariable(environment, kWalkAheadVariable)) {
    if (!ParseZeroOrOne(*value, &settings->enabled)) {
      problems->push_back(Problem(kWalkAheadVariable, *value, "1 (on) or 0 (off)", kConsequence));
      valid = false;
    } else if (!settings->enabled) {
      settings->refused = true;
    }
  }
  if (std::optional<std::string_view> value =
          FindVariable(environment, kWalkAheadWorkersVariable)) {
    if (!ParseBoundedDecimal(*value, 1, kMaxWalkAheadWorkers, &settings->workers)) {
      problems->push_back(
          Problem(kWalkAheadWorkersVariable, *value, "a number from 1 to 64", kConsequence));
      valid = false;
    }
  }
  if (std::optional<std::string_view> value =
          FindVariable(environment, kWalkAheadDistanceVariable)) {
    if (!ParseBoundedDecimal(*value, 1, kMaxWalkAheadDistance, &settings->distance)) {
      problems->push_back(
          Problem(kWalkAheadDistanceVariable, *value, "a number from 1 to 1000000", kConsequence));
      valid = false;
    }
  }
  if (!valid) {
    settings->enabled = false;
    settings->refused = true;
  }
}

// --------------------------------------------------------- process state

// Prints those of `problems` not printed before, as one write.  Caller
// holds the state mutex.
void ReportNew(const std::vector<std::string>& problems, std::vector<std::string>* reported) {
  std::string text;
  for (const std::string& problem : problems) {
    bool seen = false;
    for (const std::string& old : *reported) seen = seen || old == problem;
    if (seen) continue;
    reported->push_back(problem);
    text += "foreactor: ";
    text += problem;
    text += '\n';
  }
  if (!text.empty()) WriteToStderr(text);
}

struct SettingsState {
  std::mutex mutex;
  std::atomic<bool> loaded{false};
  ProcessSettings settings;                 // written under `mutex` before `loaded`
  std::vector<std::string> variables;       // copy of the FOREACTOR_* entries of environ
  std::vector<const char*> variable_array;  // `variables` as a NULL-terminated array
  std::vector<std::string> reported;        // problems already printed
};

// The name of `variable` ("NAME=value").  A loop, not find(): find() calls
// memchr, which the library otherwise never calls, and binding it lazily
// costs a process's first scope about half a microsecond.
std::string_view VariableName(std::string_view variable) {
  size_t length = 0;
  while (length < variable.size() && variable[length] != '=') ++length;
  return variable.substr(0, length);
}

// True when the name of one of `variables` ("NAME=value") ends in "_" and
// `graph_name`: only such a variable can set one of the graph's tunables.
bool AnyVariableNamesGraph(const std::vector<std::string>& variables, std::string_view graph_name) {
  for (const std::string& variable : variables) {
    const std::string_view name = VariableName(variable);
    if (name.size() > graph_name.size() && name.ends_with(graph_name) &&
        name[name.size() - graph_name.size() - 1] == '_') {
      return true;
    }
  }
  return false;
}

// The one state object.  Never destroyed: other threads and exit handlers
// may still ask for settings while static destructors run.  Constructing
// it does not allocate.
SettingsState& State() {
  alignas(SettingsState) static unsigned char storage[sizeof(SettingsState)];
  static SettingsState* state = new (storage) SettingsState();
  return *state;
}

// Copies the FOREACTOR_* entries of environ and parses them.  Caller holds
// the state mutex.  On out of memory, leaves foreactor off.
void LoadLocked(SettingsState* state) {
  state->variables.clear();
  state->variable_array.clear();
  state->settings = ProcessSettings();
  const bool loaded = AllocationSucceeds([&] {
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
      if (std::string_view(*entry).starts_with(kSwitchVariable)) state->variables.push_back(*entry);
    }
    for (const std::string& variable : state->variables) {
      state->variable_array.push_back(variable.c_str());
    }
    state->variable_array.push_back(nullptr);
    state->settings = ParseSettings(state->variable_array.data());
    if (getauxval(AT_SECURE) != 0 && state->settings.enabled) {
      // Privileged: the environment may come from an unprivileged user.
      state->settings = ProcessSettings();
      state->settings.privileged = true;
      state->settings.problems.push_back(
          "the program runs with elevated privileges (setuid, setgid or capabilities); "
          "foreactor is off");
    }
    ReportNew(state->settings.problems, &state->reported);
  });
  if (!loaded) {
    state->settings = ProcessSettings();
    state->variables.clear();
    state->variable_array.clear();
    WriteToStderr("foreactor: out of memory while reading the settings; foreactor is off\n");
  }
  internal::enabled_known.store(state->settings.enabled ? 1 : 0, std::memory_order_relaxed);
}

}  // namespace

// ------------------------------------------------------------- public API

ProcessSettings ParseSettings(const char* const* environment) {
  ProcessSettings settings;
  const bool parsed = AllocationSucceeds([&] {
    std::optional<std::string_view> on_switch = FindVariable(environment, kSwitchVariable);
    if (!on_switch || *on_switch == "0") return;  // off, and nothing to check
    // Statistics are wanted even when the configuration turns out invalid:
    // they are where the user looks to see why nothing ran early.
    if (std::optional<std::string_view> stats = FindVariable(environment, kStatsVariable)) {
      settings.stats_path = std::string(*stats);
    }
    if (*on_switch != "1") {
      settings.problems.push_back(
          Problem(kSwitchVariable, *on_switch, "1 (on) or 0 (off)", "foreactor is off"));
      return;
    }

    bool all_valid =
        ReadTunables(environment, "", "foreactor is off", &settings.defaults, &settings.problems);
    settings.enabled = all_valid;
    settings.defaults.enabled = all_valid;
    ReadWalkAheadSettings(environment, &settings.walk_ahead, &settings.problems);
    if (!all_valid) {
      settings.walk_ahead.enabled = false;
      settings.walk_ahead.refused = true;
    }
  });
  if (parsed) return settings;
  ProcessSettings off;
  // No room even for the message: off, silently.
  static_cast<void>(AllocationSucceeds([&] {
    off.problems.push_back("out of memory while reading the settings; foreactor is off");
  }));
  return off;
}

const ProcessSettings& Settings() {
  SettingsState& state = State();
  if (!state.loaded.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(state.mutex);
    if (!state.loaded.load(std::memory_order_relaxed)) {
      LoadLocked(&state);
      state.loaded.store(true, std::memory_order_release);
    }
  }
  return state.settings;
}

GraphSettings SettingsForGraph(const std::string& graph_name) {
  const ProcessSettings& process = Settings();
  GraphSettings graph = process.defaults;
  if (!process.enabled) {
    graph.enabled = false;
    return graph;
  }
  SettingsState& state = State();
  std::lock_guard<std::mutex> lock(state.mutex);
  // The common case, decided with no allocation (a process's first scope
  // pays for this): no variable names the graph, whose settings are the
  // process's.
  if (IsValidGraphName(graph_name) && !AnyVariableNamesGraph(state.variables, graph_name)) {
    return graph;
  }
  const bool read = AllocationSucceeds([&] {
    std::vector<std::string> problems;
    std::string consequence = "graph " + graph_name + " is off";
    if (!IsValidGraphName(graph_name)) {
      problems.push_back("graph name " + Quote(graph_name) +
                         " may hold only letters, digits and '_'; graph is off");
      graph.enabled = false;
    } else {
      const char* const* variables =
          state.variable_array.empty() ? nullptr : state.variable_array.data();
      if (!ReadTunables(variables, "_" + graph_name, consequence, &graph, &problems)) {
        graph.enabled = false;
      }
    }
    ReportNew(problems, &state.reported);
  });
  if (!read) {
    graph.enabled = false;
    WriteToStderr("foreactor: out of memory while reading a graph's settings; graph is off\n");
  }
  return graph;
}

void ReloadSettingsForTesting() {
  SettingsState& state = State();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.reported.clear();
  LoadLocked(&state);
  state.loaded.store(true, std::memory_order_release);
}

}  // namespace foreactor
