// Structured random fuzzing of the configuration parser (settings.h).
//
// Each iteration builds a random environment: every tunable absent, valid,
// or mangled (signs, spaces, huge numbers, bytes above 0x7f, boundary
// values, cut-off words), sometimes twice, plus noise (unknown FOREACTOR_
// names, per-graph names, entries without '=', other variables).  A small
// model of the documented grammar says what must come out: every invalid
// value reported once and foreactor off; no valid value ever rejected; the
// parsed values those of the first occurrence.  The per-graph half does the
// same through SettingsForGraph with the real environment.
//
// 100,000 process-wide and 500 per-graph environments: about 1 s.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/settings.h"

namespace foreactor {
namespace {

enum class Grammar { kDepth, kEngine, kQueueSize, kWorkers, kZeroOrOne };

struct Tunable {
  const char* name;
  Grammar grammar;
};

constexpr Tunable kTunables[] = {
    {"DEPTH", Grammar::kDepth},
    {"ENGINE", Grammar::kEngine},
    {"QUEUE_SIZE", Grammar::kQueueSize},
    {"WORKERS", Grammar::kWorkers},
    {"IO_URING_ASYNC", Grammar::kZeroOrOne},
    {"PAGE_CACHE", Grammar::kZeroOrOne},
    {"CHECK", Grammar::kZeroOrOne},
};
constexpr size_t kTunableCount = sizeof(kTunables) / sizeof(kTunables[0]);

// The documented grammar: a decimal number in [minimum, maximum], digits
// only (leading zeros allowed), no sign, no spaces.
std::optional<uint64_t> Decimal(const std::string& value, uint64_t minimum, uint64_t maximum) {
  if (value.empty() || value.size() > 40) return std::nullopt;
  uint64_t number = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    number = number * 10 + static_cast<uint64_t>(c - '0');
    if (number > maximum) return std::nullopt;  // also stops overflow
  }
  if (number < minimum) return std::nullopt;
  return number;
}

bool Valid(Grammar grammar, const std::string& value) {
  switch (grammar) {
    case Grammar::kDepth:
      return value == "auto" || Decimal(value, 0, 1024).has_value();
    case Grammar::kEngine:
      return value == "io_uring" || value == "threads" || value == "sync";
    case Grammar::kQueueSize:
      return Decimal(value, 1, 32768).has_value();
    case Grammar::kWorkers:
      return Decimal(value, 1, 1024).has_value();
    case Grammar::kZeroOrOne:
      return value == "0" || value == "1";
  }
  return false;
}

class Generator {
 public:
  explicit Generator(uint64_t seed) : random_(seed) {}

  size_t Below(size_t bound) {
    return std::uniform_int_distribution<size_t>(0, bound - 1)(random_);
  }
  bool Chance(unsigned percent) { return Below(100) < percent; }

  std::string ValidValue(Grammar grammar) {
    switch (grammar) {
      case Grammar::kDepth:
        if (Chance(15)) return "auto";
        return Padded(Below(1025));
      case Grammar::kEngine: {
        static const char* const kinds[] = {"io_uring", "threads", "sync"};
        return kinds[Below(3)];
      }
      case Grammar::kQueueSize:
        return Padded(1 + Below(32768));
      case Grammar::kWorkers:
        return Padded(1 + Below(1024));
      case Grammar::kZeroOrOne:
        return Chance(50) ? "0" : "1";
    }
    return "";
  }

  // Anything at all, often close to a valid value.
  std::string MangledValue(Grammar grammar) {
    static const char* const near[] = {"",
                                       " ",
                                       "-1",
                                       "+1",
                                       " 1",
                                       "1 ",
                                       "0x10",
                                       "1e3",
                                       "1.5",
                                       "01a",
                                       "auto ",
                                       "Auto",
                                       "AUTO",
                                       "1025",
                                       "32769",
                                       "0",
                                       "4294967296",
                                       "4294967312",
                                       "18446744073709551617",
                                       "99999999999999999999999999999",
                                       "io_uring ",
                                       "IO_URING",
                                       "thread",
                                       "threads\n",
                                       "sync\t",
                                       "uring",
                                       "2",
                                       "00",
                                       "true",
                                       "yes",
                                       "on",
                                       "\xff",
                                       "\xc3\xa9",
                                       "1\x00",
                                       "=",
                                       "=1",
                                       "1=1",
                                       "%s%n",
                                       "-0"};
    std::string value;
    switch (Below(4)) {
      case 0:
        value = near[Below(sizeof(near) / sizeof(near[0]))];
        break;
      case 1: {  // random bytes
        const size_t length = Below(12);
        for (size_t i = 0; i < length; ++i) value += static_cast<char>(1 + Below(255));
        break;
      }
      case 2:
        value = ValidValue(grammar) + static_cast<char>(1 + Below(255));
        break;
      default: {  // a valid value with one byte changed or dropped
        value = ValidValue(grammar);
        if (!value.empty()) {
          const size_t at = Below(value.size());
          if (Chance(50))
            value.erase(at, 1);
          else
            value[at] = static_cast<char>(1 + Below(255));
        }
        break;
      }
    }
    return value;
  }

 private:
  std::string Padded(uint64_t number) {
    std::string text = std::to_string(number);
    if (Chance(10)) text.insert(0, std::string(1 + Below(3), '0'));
    return text;
  }

  std::mt19937_64 random_;
};

// A NULL-terminated environment array that owns its strings.
class Environment {
 public:
  void Add(std::string entry) { entries_.push_back(std::move(entry)); }
  void Shuffle(Generator& generator) {
    for (size_t i = entries_.size(); i > 1; --i)
      std::swap(entries_[i - 1], entries_[generator.Below(i)]);
  }
  const char* const* get() {
    pointers_.clear();
    for (const std::string& entry : entries_) pointers_.push_back(entry.c_str());
    pointers_.push_back(nullptr);
    return pointers_.data();
  }
  const std::vector<std::string>& entries() const { return entries_; }

 private:
  std::vector<std::string> entries_;
  std::vector<const char*> pointers_;
};

// What one tunable was set to (first occurrence), if at all.
struct Chosen {
  bool present = false;
  std::string value;
};

// Adds random noise that must change nothing.
void AddNoise(Generator& generator, Environment& environment) {
  static const char* const noise[] = {"FOREACTOR_DEPTHX=abc",
                                      "XFOREACTOR_DEPTH=abc",
                                      "FOREACTOR_DEPTH",
                                      "FOREACTOR_LIBRARY=/x.so",
                                      "FOREACTOR_ROOT=/src",
                                      "FOREACTOR_DEPTH_btree=abc",
                                      "FOREACTOR_ENGINE_g=7",
                                      "",
                                      "=",
                                      "PATH=/bin",
                                      "FOREACTOR_=1",
                                      "foreactor_depth=5",
                                      "FOREACTOR_QUEUE_SIZE_x=0",
                                      "FOREACTOR_WORKERS_=9"};
  const size_t count = generator.Below(4);
  for (size_t i = 0; i < count; ++i)
    environment.Add(noise[generator.Below(sizeof(noise) / sizeof(noise[0]))]);
}

// Checks that `settings` are what the grammar says for `chosen`.
void ExpectValues(const GraphSettings& settings, const Chosen (&chosen)[kTunableCount]) {
  for (size_t t = 0; t < kTunableCount; ++t) {
    if (!chosen[t].present) continue;
    const std::string& value = chosen[t].value;
    switch (t) {
      case 0:
        if (value == "auto") {
          EXPECT_TRUE(settings.automatic_depth);
        } else {
          EXPECT_FALSE(settings.automatic_depth) << value;
          EXPECT_EQ(settings.depth, *Decimal(value, 0, 1024)) << value;
        }
        break;
      case 1: {
        const EngineKind kind = value == "io_uring"  ? EngineKind::kIoUring
                                : value == "threads" ? EngineKind::kThreads
                                                     : EngineKind::kSync;
        EXPECT_EQ(settings.engine.kind, kind) << value;
        break;
      }
      case 2: {
        const uint64_t asked = *Decimal(value, 1, 32768);
        const unsigned size = settings.engine.queue_size;
        EXPECT_TRUE(size >= asked && size < 2 * asked && (size & (size - 1)) == 0) << value;
        break;
      }
      case 3:
        EXPECT_EQ(settings.engine.workers, *Decimal(value, 1, 1024)) << value;
        break;
      case 4:
        EXPECT_EQ(settings.engine.io_uring_async, value == "1");
        break;
      case 5:
        EXPECT_EQ(settings.page_cache_aware, value == "1");
        break;
      case 6:
        EXPECT_EQ(settings.check, value == "1");
        break;
    }
  }
}

// One random environment: tunables (valid, mangled or absent, sometimes
// repeated) with `suffix` ("" or "_graph"), noise, and the switch.
void Build(Generator& generator, const std::string& suffix, Environment& environment,
           Chosen (&chosen)[kTunableCount], size_t* invalid) {
  *invalid = 0;
  for (size_t t = 0; t < kTunableCount; ++t) {
    chosen[t] = Chosen();
    if (generator.Chance(40)) continue;
    const int copies = generator.Chance(10) ? 2 : 1;
    for (int copy = 0; copy < copies; ++copy) {
      const std::string value = generator.Chance(60) ? generator.ValidValue(kTunables[t].grammar)
                                                     : generator.MangledValue(kTunables[t].grammar);
      environment.Add(std::string("FOREACTOR_") + kTunables[t].name + suffix + "=" + value);
      if (copy == 0) {
        chosen[t].present = true;
        chosen[t].value = value;
        if (!Valid(kTunables[t].grammar, value)) ++*invalid;
      }
    }
  }
}

TEST(SettingsFuzzTest, ProcessSettingsFollowTheGrammar) {
  Generator generator(20261122);
  for (int iteration = 0; iteration < 100000; ++iteration) {
    Environment environment;
    Chosen chosen[kTunableCount];
    size_t invalid = 0;
    Build(generator, "", environment, chosen, &invalid);
    AddNoise(generator, environment);
    std::string on_switch = "1";
    if (generator.Chance(20)) {
      static const char* const switches[] = {"0", "", "2", "yes", " 1", "1 ", "01", "true", "\xff"};
      on_switch = switches[generator.Below(sizeof(switches) / sizeof(switches[0]))];
    }
    const bool switch_absent = generator.Chance(3);
    if (!switch_absent) environment.Add("FOREACTOR=" + on_switch);
    environment.Shuffle(generator);
    // The first FOREACTOR= entry decides: shuffling may not move a repeated
    // tunable's first copy, so recompute the first occurrences.
    for (size_t t = 0; t < kTunableCount; ++t) {
      const std::string prefix = std::string("FOREACTOR_") + kTunables[t].name + "=";
      chosen[t] = Chosen();
      for (const std::string& entry : environment.entries()) {
        if (entry.compare(0, prefix.size(), prefix) == 0) {
          chosen[t].present = true;
          chosen[t].value = entry.substr(prefix.size());
          break;
        }
      }
    }
    invalid = 0;
    for (size_t t = 0; t < kTunableCount; ++t) {
      if (chosen[t].present && !Valid(kTunables[t].grammar, chosen[t].value)) ++invalid;
    }

    const ProcessSettings settings = ParseSettings(environment.get());
    SCOPED_TRACE("iteration " + std::to_string(iteration));
    if (switch_absent || on_switch == "0") {
      EXPECT_FALSE(settings.enabled);
      EXPECT_TRUE(settings.problems.empty());
    } else if (on_switch != "1") {
      EXPECT_FALSE(settings.enabled);
      ASSERT_EQ(settings.problems.size(), 1u);
      EXPECT_NE(settings.problems[0].find("FOREACTOR="), std::string::npos) << settings.problems[0];
    } else {
      EXPECT_EQ(settings.problems.size(), invalid);
      EXPECT_EQ(settings.enabled, invalid == 0);
      EXPECT_EQ(settings.defaults.enabled, invalid == 0);
      for (size_t t = 0; t < kTunableCount; ++t) {
        if (!chosen[t].present || Valid(kTunables[t].grammar, chosen[t].value)) continue;
        const std::string name = std::string("FOREACTOR_") + kTunables[t].name + "=";
        bool named = false;
        for (const std::string& problem : settings.problems)
          named = named || problem.find(name) != std::string::npos;
        EXPECT_TRUE(named) << name << " not reported";
      }
      if (invalid == 0) ExpectValues(settings.defaults, chosen);
    }
    if (HasFatalFailure() || HasFailure()) return;  // one readable failure, not thousands
  }
}

TEST(SettingsFuzzTest, NullAndEmptyEnvironmentsAreOff) {
  EXPECT_FALSE(ParseSettings(nullptr).enabled);
  const char* const empty[] = {nullptr};
  EXPECT_FALSE(ParseSettings(empty).enabled);
}

// Per-graph values go through the process environment: set, reload, read.
TEST(SettingsFuzzTest, GraphSettingsFollowTheGrammar) {
  Generator generator(7);
  // Problems are printed on stderr: keep the test's output readable.
  const int saved_stderr = dup(STDERR_FILENO);
  const int null_fd = open("/dev/null", O_WRONLY);
  ASSERT_GE(null_fd, 0);
  dup2(null_fd, STDERR_FILENO);
  for (int iteration = 0; iteration < 500 && !HasFailure(); ++iteration) {
    Environment environment;
    Chosen chosen[kTunableCount];
    size_t invalid = 0;
    Build(generator, "_g", environment, chosen, &invalid);
    for (const Tunable& tunable : kTunables)
      unsetenv((std::string("FOREACTOR_") + tunable.name + "_g").c_str());
    setenv("FOREACTOR", "1", 1);
    // setenv keeps one value per name: use the first copy of each.
    for (size_t t = 0; t < kTunableCount; ++t) {
      if (chosen[t].present && chosen[t].value.find('\0') == std::string::npos) {
        setenv((std::string("FOREACTOR_") + kTunables[t].name + "_g").c_str(),
               chosen[t].value.c_str(), 1);
      }
    }
    ReloadSettingsForTesting();
    const GraphSettings graph = SettingsForGraph("g");
    SCOPED_TRACE("graph iteration " + std::to_string(iteration));
    EXPECT_EQ(graph.enabled, invalid == 0);
    if (invalid == 0) ExpectValues(graph, chosen);
  }
  for (const Tunable& tunable : kTunables)
    unsetenv((std::string("FOREACTOR_") + tunable.name + "_g").c_str());
  unsetenv("FOREACTOR");
  ReloadSettingsForTesting();
  dup2(saved_stderr, STDERR_FILENO);
  close(saved_stderr);
  close(null_fd);
}

}  // namespace
}  // namespace foreactor
