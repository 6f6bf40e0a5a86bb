// Tests of the settings parser (ParseSettings) and of the process-wide
// settings (Settings, SettingsForGraph) read from the real environment.

#include "config/settings.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

extern char** environ;

namespace foreactor {
namespace {

// The depth the defaults carry: the most FOREACTOR_DEPTH=auto may choose.
constexpr unsigned kDefaultDepth = kAutomaticDepthMaximum;

// A NULL-terminated environment array built from strings.
class FakeEnvironment {
 public:
  FakeEnvironment(std::initializer_list<std::string> entries) : entries_(entries) { Rebuild(); }
  explicit FakeEnvironment(std::vector<std::string> entries) : entries_(std::move(entries)) {
    Rebuild();
  }
  const char* const* get() const { return pointers_.data(); }

 private:
  void Rebuild() {
    for (const std::string& entry : entries_) pointers_.push_back(entry.c_str());
    pointers_.push_back(nullptr);
  }
  std::vector<std::string> entries_;
  std::vector<const char*> pointers_;
};

ProcessSettings Parse(std::initializer_list<std::string> entries) {
  FakeEnvironment environment(entries);
  return ParseSettings(environment.get());
}

std::string JoinProblems(const ProcessSettings& settings) {
  std::string joined;
  for (const std::string& problem : settings.problems) joined += problem + "\n";
  return joined;
}

// ------------------------------------------------------------ valid values

struct ValidCase {
  std::vector<std::string> environment;
  bool enabled;
  unsigned depth;
  EngineKind engine;
  unsigned queue_size;
  unsigned workers;
  bool io_uring_async;
  std::string stats_path;
};

TEST(ParseSettingsTest, AcceptsValidValues) {
  const EngineKind uring = EngineKind::kIoUring;
  const std::vector<ValidCase> cases = {
      // Off: no problem, nothing checked.
      {{}, false, kDefaultDepth, uring, 256, 0, false, ""},
      {{"FOREACTOR=0"}, false, kDefaultDepth, uring, 256, 0, false, ""},
      {{"FOREACTOR=0", "FOREACTOR_DEPTH=abc", "FOREACTOR_ENGINE=x"},
       false,
       kDefaultDepth,
       uring,
       256,
       0,
       false,
       ""},
      // On, with the documented defaults.
      {{"FOREACTOR=1"}, true, kDefaultDepth, uring, 256, 0, false, ""},
      {{"FOREACTOR=1", "FOREACTOR_DEPTH=0"}, true, 0, uring, 256, 0, false, ""},
      {{"FOREACTOR=1", "FOREACTOR_DEPTH=1"}, true, 1, uring, 256, 0, false, ""},
      {{"FOREACTOR=1", "FOREACTOR_DEPTH=1024"}, true, 1024, uring, 256, 0, false, ""},
      {{"FOREACTOR=1", "FOREACTOR_DEPTH=008"}, true, 8, uring, 256, 0, false, ""},
      {{"FOREACTOR=1", "FOREACTOR_DEPTH=auto"}, true, kDefaultDepth, uring, 256, 0, false, ""},
      {{"FOREACTOR=1", "FOREACTOR_ENGINE=io_uring"}, true, kDefaultDepth, uring, 256, 0, false, ""},
      {{"FOREACTOR=1", "FOREACTOR_ENGINE=threads"},
       true,
       kDefaultDepth,
       EngineKind::kThreads,
       256,
       0,
       false,
       ""},
      {{"FOREACTOR=1", "FOREACTOR_ENGINE=sync"},
       true,
       kDefaultDepth,
       EngineKind::kSync,
       256,
       0,
       false,
       ""},
      {{"FOREACTOR=1", "FOREACTOR_QUEUE_SIZE=1"}, true, kDefaultDepth, uring, 1, 0, false, ""},
      {{"FOREACTOR=1", "FOREACTOR_QUEUE_SIZE=3"}, true, kDefaultDepth, uring, 4, 0, false, ""},
      {{"FOREACTOR=1", "FOREACTOR_QUEUE_SIZE=1000"},
       true,
       kDefaultDepth,
       uring,
       1024,
       0,
       false,
       ""},
      {{"FOREACTOR=1", "FOREACTOR_QUEUE_SIZE=32768"},
       true,
       kDefaultDepth,
       uring,
       32768,
       0,
       false,
       ""},
      {{"FOREACTOR=1", "FOREACTOR_WORKERS=1"}, true, kDefaultDepth, uring, 256, 1, false, ""},
      {{"FOREACTOR=1", "FOREACTOR_WORKERS=1024"}, true, kDefaultDepth, uring, 256, 1024, false, ""},
      {{"FOREACTOR=1", "FOREACTOR_IO_URING_ASYNC=1"}, true, kDefaultDepth, uring, 256, 0, true, ""},
      {{"FOREACTOR=1", "FOREACTOR_IO_URING_ASYNC=0"},
       true,
       kDefaultDepth,
       uring,
       256,
       0,
       false,
       ""},
      {{"FOREACTOR=1", "FOREACTOR_STATS=/tmp/stats.json"},
       true,
       kDefaultDepth,
       uring,
       256,
       0,
       false,
       "/tmp/stats.json"},
      {{"FOREACTOR=1", "FOREACTOR_STATS="}, true, kDefaultDepth, uring, 256, 0, false, ""},
      // Everything at once, in any order.
      {{"FOREACTOR_WORKERS=4", "FOREACTOR_ENGINE=threads", "FOREACTOR=1", "FOREACTOR_DEPTH=32",
        "FOREACTOR_QUEUE_SIZE=64", "FOREACTOR_IO_URING_ASYNC=1", "FOREACTOR_STATS=s.json"},
       true,
       32,
       EngineKind::kThreads,
       64,
       4,
       true,
       "s.json"},
      // The first occurrence of a name counts, as with getenv.
      {{"FOREACTOR=1", "FOREACTOR_DEPTH=4", "FOREACTOR_DEPTH=abc"},
       true,
       4,
       uring,
       256,
       0,
       false,
       ""},
      // Look-alike and unrelated names are ignored; so are entries without '='.
      {{"FOREACTOR=1", "FOREACTOR_DEPTHX=abc", "XFOREACTOR_DEPTH=abc", "FOREACTOR_DEPTH",
        "FOREACTOR_LIBRARY=/x.so", "FOREACTOR_ROOT=/src"},
       true,
       kDefaultDepth,
       uring,
       256,
       0,
       false,
       ""},
      // Per-graph variables do not touch the defaults and are checked per graph.
      {{"FOREACTOR=1", "FOREACTOR_DEPTH_btree=abc", "FOREACTOR_ENGINE_btree=7"},
       true,
       kDefaultDepth,
       uring,
       256,
       0,
       false,
       ""},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const ValidCase& expected = cases[i];
    FakeEnvironment environment(expected.environment);
    ProcessSettings settings = ParseSettings(environment.get());
    SCOPED_TRACE("case " + std::to_string(i));
    EXPECT_TRUE(settings.problems.empty()) << JoinProblems(settings);
    EXPECT_EQ(settings.enabled, expected.enabled);
    EXPECT_EQ(settings.defaults.enabled, expected.enabled);
    EXPECT_EQ(settings.defaults.depth, expected.depth);
    EXPECT_EQ(settings.defaults.engine.kind, expected.engine);
    EXPECT_EQ(settings.defaults.engine.queue_size, expected.queue_size);
    EXPECT_EQ(settings.defaults.engine.workers, expected.workers);
    EXPECT_EQ(settings.defaults.engine.io_uring_async, expected.io_uring_async);
    EXPECT_EQ(settings.stats_path, expected.stats_path);
  }
}

// The depth is automatic unless a number is given; "auto" goes back to it.
TEST(ParseSettingsTest, DepthIsAutomaticUnlessANumberIsGiven) {
  EXPECT_TRUE(Parse({"FOREACTOR=1"}).defaults.automatic_depth);
  EXPECT_TRUE(Parse({"FOREACTOR=1", "FOREACTOR_DEPTH=auto"}).defaults.automatic_depth);
  EXPECT_EQ(Parse({"FOREACTOR=1"}).defaults.depth, kDefaultDepth);
  ProcessSettings fixed = Parse({"FOREACTOR=1", "FOREACTOR_DEPTH=16"});
  EXPECT_FALSE(fixed.defaults.automatic_depth);
  EXPECT_EQ(fixed.defaults.depth, 16u);
  EXPECT_FALSE(Parse({"FOREACTOR=1", "FOREACTOR_DEPTH=0"}).defaults.automatic_depth);
  // Only the exact word: anything else is reported and turns foreactor off.
  for (const char* bad : {"Auto", "AUTO", "auto ", "automatic", "auto1"}) {
    ProcessSettings settings = Parse({"FOREACTOR=1", std::string("FOREACTOR_DEPTH=") + bad});
    EXPECT_FALSE(settings.enabled) << bad;
    ASSERT_EQ(settings.problems.size(), 1u) << bad;
    EXPECT_NE(settings.problems[0].find("a number from 0 to 1024 or auto"), std::string::npos);
  }
}

// A fixed depth is a bound unless FOREACTOR_EXACT_DEPTH=1 (0 or 1 only).
TEST(ParseSettingsTest, ExactDepthIsOffUnlessAskedFor) {
  EXPECT_FALSE(Parse({"FOREACTOR=1", "FOREACTOR_DEPTH=16"}).defaults.exact_depth);
  EXPECT_TRUE(
      Parse({"FOREACTOR=1", "FOREACTOR_DEPTH=16", "FOREACTOR_EXACT_DEPTH=1"}).defaults.exact_depth);
  EXPECT_FALSE(Parse({"FOREACTOR=1", "FOREACTOR_EXACT_DEPTH=0"}).defaults.exact_depth);
  ProcessSettings bad = Parse({"FOREACTOR=1", "FOREACTOR_EXACT_DEPTH=yes"});
  EXPECT_FALSE(bad.enabled);
  ASSERT_EQ(bad.problems.size(), 1u);
  EXPECT_NE(bad.problems[0].find("FOREACTOR_EXACT_DEPTH=\"yes\" is not 0 or 1"), std::string::npos)
      << bad.problems[0];
}

// ---------------------------------------------------------- invalid values

struct InvalidCase {
  std::string variable;  // set to `value`, together with FOREACTOR=1 unless it is FOREACTOR
  std::string value;
  std::string allowed;  // what the message must say is allowed
};

TEST(ParseSettingsTest, RejectsEveryKindOfInvalidValue) {
  const std::string depth_range = "a number from 0 to 1024 or auto";
  const std::string engines = "one of io_uring, threads, sync";
  const std::string queue_range = "a number from 1 to 32768";
  const std::string worker_range = "a number from 1 to 1024";
  const std::vector<InvalidCase> cases = {
      {"FOREACTOR", "yes", "1 (on) or 0 (off)"},
      {"FOREACTOR", "", "1 (on) or 0 (off)"},
      {"FOREACTOR", "2", "1 (on) or 0 (off)"},
      {"FOREACTOR", " 1", "1 (on) or 0 (off)"},
      {"FOREACTOR", "01", "1 (on) or 0 (off)"},
      {"FOREACTOR_DEPTH", "abc", depth_range},
      {"FOREACTOR_DEPTH", "", depth_range},
      {"FOREACTOR_DEPTH", "-1", depth_range},
      {"FOREACTOR_DEPTH", "+1", depth_range},
      {"FOREACTOR_DEPTH", " 1", depth_range},
      {"FOREACTOR_DEPTH", "1 ", depth_range},
      {"FOREACTOR_DEPTH", "8abc", depth_range},
      {"FOREACTOR_DEPTH", "1025", depth_range},
      {"FOREACTOR_DEPTH", "4294967312", depth_range},  // 2^32 + 16: must not wrap to 16
      {"FOREACTOR_DEPTH", "99999999999999999999999999", depth_range},
      {"FOREACTOR_DEPTH", "0x10", depth_range},
      {"FOREACTOR_DEPTH", "1.5", depth_range},
      {"FOREACTOR_DEPTH", "1e3", depth_range},
      {"FOREACTOR_ENGINE", "", engines},
      {"FOREACTOR_ENGINE", "IO_URING", engines},
      {"FOREACTOR_ENGINE", "uring", engines},
      {"FOREACTOR_ENGINE", "io_uring ", engines},
      {"FOREACTOR_ENGINE", "thread", engines},
      {"FOREACTOR_QUEUE_SIZE", "0", queue_range},
      {"FOREACTOR_QUEUE_SIZE", "32769", queue_range},
      {"FOREACTOR_QUEUE_SIZE", "big", queue_range},
      {"FOREACTOR_WORKERS", "0", worker_range},
      {"FOREACTOR_WORKERS", "1025", worker_range},
      {"FOREACTOR_WORKERS", "-4", worker_range},
      {"FOREACTOR_IO_URING_ASYNC", "2", "0 or 1"},
      {"FOREACTOR_IO_URING_ASYNC", "yes", "0 or 1"},
      {"FOREACTOR_IO_URING_ASYNC", "", "0 or 1"},
  };
  for (const InvalidCase& invalid : cases) {
    SCOPED_TRACE(invalid.variable + "=\"" + invalid.value + "\"");
    std::vector<std::string> entries = {invalid.variable + "=" + invalid.value};
    if (invalid.variable != "FOREACTOR") entries.push_back("FOREACTOR=1");
    FakeEnvironment environment(entries);
    ProcessSettings settings = ParseSettings(environment.get());
    EXPECT_FALSE(settings.enabled);
    EXPECT_FALSE(settings.defaults.enabled);
    ASSERT_EQ(settings.problems.size(), 1u) << JoinProblems(settings);
    EXPECT_EQ(settings.problems[0], invalid.variable + "=\"" + invalid.value + "\" is not " +
                                        invalid.allowed + "; foreactor is off");
  }
}

TEST(ParseSettingsTest, WriteBehindIsOnUnlessTurnedOff) {
  EXPECT_TRUE(Parse({"FOREACTOR=1"}).defaults.write_behind);
  EXPECT_TRUE(Parse({"FOREACTOR=1", "FOREACTOR_WRITE_BEHIND=1"}).defaults.write_behind);
  ProcessSettings off = Parse({"FOREACTOR=1", "FOREACTOR_WRITE_BEHIND=0"});
  EXPECT_FALSE(off.defaults.write_behind);
  EXPECT_TRUE(off.enabled);
  EXPECT_TRUE(off.problems.empty()) << JoinProblems(off);
}

TEST(ParseSettingsTest, AnInvalidWriteBehindTurnsOnlyWriteBehindOff) {
  for (const char* bad : {"yes", "", "2", "on", " 1"}) {
    SCOPED_TRACE(bad);
    ProcessSettings settings = Parse({"FOREACTOR=1", std::string("FOREACTOR_WRITE_BEHIND=") + bad});
    EXPECT_TRUE(settings.enabled);
    EXPECT_TRUE(settings.defaults.enabled);
    EXPECT_FALSE(settings.defaults.write_behind);
    ASSERT_EQ(settings.problems.size(), 1u) << JoinProblems(settings);
    EXPECT_EQ(settings.problems[0], std::string("FOREACTOR_WRITE_BEHIND=\"") + bad +
                                        "\" is not 1 (on) or 0 (off); write-behind is off");
  }
}

TEST(ParseSettingsTest, ReadAheadIsOnByDefaultAndTakesZeroOrOne) {
  EXPECT_TRUE(Parse({"FOREACTOR=1"}).defaults.read_ahead);
  EXPECT_TRUE(Parse({"FOREACTOR=1", "FOREACTOR_READ_AHEAD=1"}).defaults.read_ahead);
  ProcessSettings off = Parse({"FOREACTOR=1", "FOREACTOR_READ_AHEAD=0"});
  EXPECT_FALSE(off.defaults.read_ahead);
  EXPECT_TRUE(off.problems.empty()) << JoinProblems(off);
}

TEST(ParseSettingsTest, AnInvalidReadAheadTurnsOnlyReadAheadOff) {
  for (const char* bad : {"yes", "", "2"}) {
    SCOPED_TRACE(bad);
    ProcessSettings settings = Parse({"FOREACTOR=1", std::string("FOREACTOR_READ_AHEAD=") + bad});
    EXPECT_TRUE(settings.enabled);
    EXPECT_TRUE(settings.defaults.enabled);
    EXPECT_FALSE(settings.defaults.read_ahead);
    EXPECT_TRUE(settings.defaults.write_behind);
    ASSERT_EQ(settings.problems.size(), 1u) << JoinProblems(settings);
    EXPECT_EQ(settings.problems[0], std::string("FOREACTOR_READ_AHEAD=\"") + bad +
                                        "\" is not 1 (on) or 0 (off); read-ahead streams are off");
  }
}

TEST(ParseSettingsTest, DirectReadsAreOnByDefaultAndTakeZeroOrOne) {
  EXPECT_TRUE(Parse({"FOREACTOR=1"}).defaults.direct_reads);
  ProcessSettings off = Parse({"FOREACTOR=1", "FOREACTOR_DIRECT_READS=0"});
  EXPECT_FALSE(off.defaults.direct_reads);
  EXPECT_TRUE(off.problems.empty()) << JoinProblems(off);
}

TEST(ParseSettingsTest, ThePollBudgetIsAMicrosecondCountUpToTenThousand) {
  EXPECT_EQ(Parse({"FOREACTOR=1"}).defaults.poll_microseconds, kDefaultPollMicroseconds);
  EXPECT_EQ(Parse({"FOREACTOR=1", "FOREACTOR_POLL_US=0"}).defaults.poll_microseconds, 0u);
  EXPECT_EQ(Parse({"FOREACTOR=1", "FOREACTOR_POLL_US=10000"}).defaults.poll_microseconds,
            kMaxPollMicroseconds);
  for (const char* bad : {"10001", "-5", "1e3", "", "auto"}) {
    ProcessSettings settings = Parse({"FOREACTOR=1", std::string("FOREACTOR_POLL_US=") + bad});
    EXPECT_TRUE(settings.enabled) << bad;
    EXPECT_EQ(settings.defaults.poll_microseconds, 0u) << bad << ": polling is off";
    ASSERT_EQ(settings.problems.size(), 1u) << JoinProblems(settings);
    EXPECT_EQ(settings.problems[0], std::string("FOREACTOR_POLL_US=\"") + bad +
                                        "\" is not a number from 0 to 10000; started reads are "
                                        "waited for asleep");
  }
}

TEST(ParseSettingsTest, AnInvalidDirectReadsTurnsOnlyDirectReadsOff) {
  ProcessSettings settings = Parse({"FOREACTOR=1", "FOREACTOR_DIRECT_READS=on"});
  EXPECT_TRUE(settings.enabled);
  EXPECT_FALSE(settings.defaults.direct_reads);
  EXPECT_TRUE(settings.defaults.read_ahead);
  ASSERT_EQ(settings.problems.size(), 1u) << JoinProblems(settings);
  EXPECT_EQ(settings.problems[0],
            "FOREACTOR_DIRECT_READS=\"on\" is not 1 (on) or 0 (off); direct reads are off");
}

TEST(ParseSettingsTest, ProblemMessageMatchesTheDocumentedForm) {
  ProcessSettings settings = Parse({"FOREACTOR=1", "FOREACTOR_DEPTH=abc"});
  ASSERT_EQ(settings.problems.size(), 1u);
  EXPECT_EQ(settings.problems[0],
            "FOREACTOR_DEPTH=\"abc\" is not a number from 0 to 1024 or auto; foreactor is off");
}

TEST(ParseSettingsTest, ReportsEveryInvalidValue) {
  ProcessSettings settings = Parse({"FOREACTOR=1", "FOREACTOR_DEPTH=x", "FOREACTOR_ENGINE=y",
                                    "FOREACTOR_WORKERS=0", "FOREACTOR_QUEUE_SIZE=8"});
  EXPECT_FALSE(settings.enabled);
  ASSERT_EQ(settings.problems.size(), 3u) << JoinProblems(settings);
  EXPECT_NE(settings.problems[0].find("FOREACTOR_DEPTH"), std::string::npos);
  EXPECT_NE(settings.problems[1].find("FOREACTOR_ENGINE"), std::string::npos);
  EXPECT_NE(settings.problems[2].find("FOREACTOR_WORKERS"), std::string::npos);
}

TEST(ParseSettingsTest, KeepsTheStatisticsPathWhenAValueIsInvalid) {
  ProcessSettings settings = Parse({"FOREACTOR=1", "FOREACTOR_DEPTH=x", "FOREACTOR_STATS=s.json"});
  EXPECT_FALSE(settings.enabled);
  EXPECT_EQ(settings.stats_path, "s.json");
}

TEST(ParseSettingsTest, QuotesUnprintableAndLongValuesSafely) {
  ProcessSettings settings = Parse({"FOREACTOR=1", "FOREACTOR_ENGINE=\x1b[31m\"red\\\xff"});
  ASSERT_EQ(settings.problems.size(), 1u);
  EXPECT_EQ(settings.problems[0],
            "FOREACTOR_ENGINE=\"\\x1b[31m\\\"red\\\\\\xff\" is not one of io_uring, threads, sync;"
            " foreactor is off");

  settings = Parse({"FOREACTOR=1", "FOREACTOR_DEPTH=" + std::string(1000, '7')});
  ASSERT_EQ(settings.problems.size(), 1u);
  EXPECT_NE(settings.problems[0].find("\"" + std::string(64, '7') + "...\""), std::string::npos)
      << settings.problems[0];
  EXPECT_LT(settings.problems[0].size(), 200u);
}

TEST(ParseSettingsTest, WalkAheadIsOffUnlessAskedFor) {
  ProcessSettings unset = Parse({"FOREACTOR=1"});
  EXPECT_FALSE(unset.walk_ahead.enabled);
  EXPECT_FALSE(unset.walk_ahead.refused);  // a plugin may still ask for it
  EXPECT_EQ(unset.walk_ahead.workers, 8u);
  EXPECT_EQ(unset.walk_ahead.distance, 1024u);
  ProcessSettings off = Parse({"FOREACTOR=1", "FOREACTOR_WALK_AHEAD=0"});
  EXPECT_FALSE(off.walk_ahead.enabled);
  EXPECT_TRUE(off.walk_ahead.refused);
  ProcessSettings on =
      Parse({"FOREACTOR=1", "FOREACTOR_WALK_AHEAD=1", "FOREACTOR_WALK_AHEAD_WORKERS=64",
             "FOREACTOR_WALK_AHEAD_DISTANCE=1000000"});
  EXPECT_TRUE(on.walk_ahead.enabled);
  EXPECT_EQ(on.walk_ahead.workers, 64u);
  EXPECT_EQ(on.walk_ahead.distance, 1000000u);
  EXPECT_TRUE(on.problems.empty()) << JoinProblems(on);
  // Without FOREACTOR=1 nothing is on, and nothing is checked.
  ProcessSettings foreactor_off =
      Parse({"FOREACTOR_WALK_AHEAD=1", "FOREACTOR_WALK_AHEAD_WORKERS=x"});
  EXPECT_FALSE(foreactor_off.walk_ahead.enabled);
  EXPECT_TRUE(foreactor_off.problems.empty());
}

TEST(ParseSettingsTest, AnInvalidWalkAheadValueTurnsOnlyWalkAheadOff) {
  for (const std::string& bad :
       {std::string("FOREACTOR_WALK_AHEAD=yes"), std::string("FOREACTOR_WALK_AHEAD_WORKERS=0"),
        std::string("FOREACTOR_WALK_AHEAD_WORKERS=65"),
        std::string("FOREACTOR_WALK_AHEAD_DISTANCE=0"),
        std::string("FOREACTOR_WALK_AHEAD_DISTANCE=1000001"),
        std::string("FOREACTOR_WALK_AHEAD_DISTANCE=-5")}) {
    // The first of two equal names counts: `bad` comes first.
    ProcessSettings settings = Parse({"FOREACTOR=1", bad, "FOREACTOR_WALK_AHEAD=1"});
    EXPECT_TRUE(settings.enabled) << bad;
    EXPECT_FALSE(settings.walk_ahead.enabled) << bad;
    EXPECT_TRUE(settings.walk_ahead.refused) << bad;
    ASSERT_EQ(settings.problems.size(), 1u) << bad;
    EXPECT_NE(settings.problems[0].find("walk-ahead is off"), std::string::npos) << bad;
  }
  ProcessSettings invalid_default =
      Parse({"FOREACTOR=1", "FOREACTOR_WALK_AHEAD=1", "FOREACTOR_DEPTH=x"});
  EXPECT_FALSE(invalid_default.walk_ahead.enabled);
}

TEST(ParseSettingsTest, AcceptsANullEnvironment) {
  ProcessSettings settings = ParseSettings(nullptr);
  EXPECT_FALSE(settings.enabled);
  EXPECT_TRUE(settings.problems.empty());
}

// ------------------------------------------------------------------ fuzzing

// Reference answer for a decimal value in [minimum, maximum], written
// independently of the parser.
bool IsDecimalInRange(const std::string& text, unsigned minimum, unsigned maximum,
                      unsigned* value) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
  size_t first_nonzero = text.find_first_not_of('0');
  std::string significant = first_nonzero == std::string::npos ? "0" : text.substr(first_nonzero);
  if (significant.size() > 9) return false;  // above every maximum used here
  unsigned long number = std::stoul(significant);
  if (number < minimum || number > maximum) return false;
  *value = static_cast<unsigned>(number);
  return true;
}

std::string RandomValue(std::mt19937* random) {
  static const std::vector<std::string> kInteresting = {
      "0",     "1",     "16",       "1024",       "1025",
      "32768", "32769", "io_uring", "threads",    "sync",
      "",      "auto",  "-1",       "4294967296", "00000000000000000000000000012"};
  std::uniform_int_distribution<int> pick(0, 9);
  if (pick(*random) == 0) {
    return kInteresting[std::uniform_int_distribution<size_t>(0, kInteresting.size() - 1)(*random)];
  }
  std::uniform_int_distribution<int> length(0, 12);
  std::uniform_int_distribution<int> any_byte(1, 255);
  std::uniform_int_distribution<int> digit('0', '9');
  bool mostly_digits = pick(*random) < 6;
  std::string value;
  for (int n = length(*random); n > 0; --n) {
    bool take_digit = mostly_digits && pick(*random) != 0;
    value += static_cast<char>(take_digit ? digit(*random) : any_byte(*random));
  }
  return value;
}

TEST(ParseSettingsFuzzTest, RandomValuesGiveValidSettingsOrAProblem) {
  std::mt19937 random(20240611);
  const std::vector<std::string> names = {
      "FOREACTOR_DEPTH",          "FOREACTOR_QUEUE_SIZE", "FOREACTOR_WORKERS", "FOREACTOR_ENGINE",
      "FOREACTOR_IO_URING_ASYNC", "FOREACTOR_STATS",      "FOREACTOR_DEPTH_g", "FOREACTOR_OTHER"};
  int enabled_runs = 0;
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::uniform_int_distribution<size_t> pick_name(0, names.size() - 1);
    const std::string& name = names[pick_name(random)];
    std::string value = RandomValue(&random);
    ProcessSettings settings = Parse({"FOREACTOR=1", name + "=" + value});
    SCOPED_TRACE(name + "=" + value);

    // Exactly one of: valid settings, or a problem.
    ASSERT_EQ(settings.enabled, settings.problems.empty());
    ASSERT_EQ(settings.enabled, settings.defaults.enabled);
    ASSERT_LE(settings.problems.size(), 1u);
    if (!settings.enabled) {
      ASSERT_NE(settings.problems[0].find(name + "=\""), std::string::npos);
      ASSERT_NE(settings.problems[0].find("foreactor is off"), std::string::npos);
      for (char c : settings.problems[0]) {
        ASSERT_TRUE(c >= 0x20 && c < 0x7f) << "unprintable byte in message";
      }
    }
    enabled_runs += settings.enabled;

    // And the right one, compared with an independent reference.
    unsigned number = 0;
    if (name == "FOREACTOR_DEPTH") {
      const bool automatic = value == "auto";
      bool valid = automatic || IsDecimalInRange(value, 0, 1024, &number);
      ASSERT_EQ(settings.enabled, valid);
      if (valid) {
        ASSERT_EQ(settings.defaults.automatic_depth, automatic);
        ASSERT_EQ(settings.defaults.depth, automatic ? kDefaultDepth : number);
      }
    } else if (name == "FOREACTOR_QUEUE_SIZE") {
      bool valid = IsDecimalInRange(value, 1, 32768, &number);
      ASSERT_EQ(settings.enabled, valid);
      if (valid) {
        unsigned size = settings.defaults.engine.queue_size;
        ASSERT_GE(size, number);
        ASSERT_LT(size / 2, number);
        ASSERT_EQ(size & (size - 1), 0u);
      }
    } else if (name == "FOREACTOR_WORKERS") {
      bool valid = IsDecimalInRange(value, 1, 1024, &number);
      ASSERT_EQ(settings.enabled, valid);
      if (valid) {
        ASSERT_EQ(settings.defaults.engine.workers, number);
      }
    } else if (name == "FOREACTOR_ENGINE") {
      ASSERT_EQ(settings.enabled, value == "io_uring" || value == "threads" || value == "sync");
    } else if (name == "FOREACTOR_IO_URING_ASYNC") {
      ASSERT_EQ(settings.enabled, value == "0" || value == "1");
    } else {
      ASSERT_TRUE(settings.enabled);
    }
  }
  EXPECT_GT(enabled_runs, 1000);  // the generator reaches valid values too
}

TEST(ParseSettingsFuzzTest, RandomEnvironmentsNeverCrash) {
  std::mt19937 random(7);
  std::uniform_int_distribution<int> count(0, 8);
  std::uniform_int_distribution<int> any_byte(1, 255);
  std::uniform_int_distribution<int> length(0, 40);
  for (int iteration = 0; iteration < 5000; ++iteration) {
    std::vector<std::string> entries;
    for (int n = count(random); n > 0; --n) {
      std::string entry = iteration % 2 == 0 ? "FOREACTOR" : "";
      for (int k = length(random); k > 0; --k) entry += static_cast<char>(any_byte(random));
      entries.push_back(entry);
    }
    FakeEnvironment environment(entries);
    ProcessSettings settings = ParseSettings(environment.get());
    ASSERT_FALSE(settings.enabled && !settings.problems.empty());
    ASSERT_LE(settings.defaults.depth, 1024u);
  }
}

// ---------------------------------------------- process and graph settings

// Runs each test with no FOREACTOR* variable in the environment, and
// leaves none behind.
class ProcessSettingsTest : public ::testing::Test {
 protected:
  void SetUp() override { ClearForeactorVariables(); }
  void TearDown() override {
    ClearForeactorVariables();
    ReloadSettingsForTesting();
  }

  static void ClearForeactorVariables() {
    std::vector<std::string> names;
    for (char** entry = environ; *entry != nullptr; ++entry) {
      std::string text(*entry);
      if (text.rfind("FOREACTOR", 0) == 0) names.push_back(text.substr(0, text.find('=')));
    }
    for (const std::string& name : names) unsetenv(name.c_str());
  }

  static void Set(const char* name, const char* value) { ASSERT_EQ(setenv(name, value, 1), 0); }
};

TEST_F(ProcessSettingsTest, OffWhenUnset) {
  ReloadSettingsForTesting();
  EXPECT_FALSE(Settings().enabled);
  EXPECT_FALSE(SettingsForGraph("btree").enabled);
}

TEST_F(ProcessSettingsTest, ReadsTheEnvironment) {
  Set("FOREACTOR", "1");
  Set("FOREACTOR_DEPTH", "4");
  Set("FOREACTOR_STATS", "/tmp/s.json");
  ReloadSettingsForTesting();
  EXPECT_TRUE(Settings().enabled);
  EXPECT_EQ(Settings().defaults.depth, 4u);
  EXPECT_EQ(Settings().stats_path, "/tmp/s.json");
}

// A graph's variables are those whose name ends in "_" and the graph's
// name: a graph whose name ends another graph's keeps the defaults.
TEST_F(ProcessSettingsTest, AGraphWhoseNameEndsAnothersKeepsTheDefaults) {
  Set("FOREACTOR", "1");
  Set("FOREACTOR_DEPTH", "4");
  Set("FOREACTOR_DEPTH_btree", "32");
  Set("FOREACTOR_DEPTH_bptree_scan", "16");
  ReloadSettingsForTesting();
  EXPECT_EQ(SettingsForGraph("btree").depth, 32u);
  EXPECT_EQ(SettingsForGraph("tree").depth, 4u);
  EXPECT_EQ(SettingsForGraph("bptree_scan").depth, 16u);
  EXPECT_EQ(SettingsForGraph("scan").depth, 4u);
  EXPECT_EQ(SettingsForGraph("ptree_scan").depth, 4u);
}

TEST_F(ProcessSettingsTest, PerGraphValuesOverrideTheDefaults) {
  Set("FOREACTOR", "1");
  Set("FOREACTOR_DEPTH", "4");
  Set("FOREACTOR_WORKERS", "3");
  Set("FOREACTOR_DEPTH_btree", "32");
  Set("FOREACTOR_ENGINE_btree", "threads");
  Set("FOREACTOR_QUEUE_SIZE_btree", "100");
  Set("FOREACTOR_IO_URING_ASYNC_btree", "1");
  Set("FOREACTOR_DEPTH_du", "0");
  ReloadSettingsForTesting();

  GraphSettings btree = SettingsForGraph("btree");
  EXPECT_TRUE(btree.enabled);
  EXPECT_EQ(btree.depth, 32u);
  EXPECT_EQ(btree.engine.kind, EngineKind::kThreads);
  EXPECT_EQ(btree.engine.queue_size, 128u);
  EXPECT_EQ(btree.engine.workers, 3u);  // from the default
  EXPECT_TRUE(btree.engine.io_uring_async);

  GraphSettings du = SettingsForGraph("du");
  EXPECT_TRUE(du.enabled);
  EXPECT_EQ(du.depth, 0u);
  EXPECT_EQ(du.engine.kind, EngineKind::kIoUring);

  GraphSettings other = SettingsForGraph("other");
  EXPECT_TRUE(other.enabled);
  EXPECT_EQ(other.depth, 4u);
  EXPECT_EQ(other.engine.queue_size, 256u);
  EXPECT_FALSE(other.engine.io_uring_async);

  // Names are matched exactly: "btree" settings are not "Btree" or "btree2" settings.
  EXPECT_EQ(SettingsForGraph("Btree").depth, 4u);
  EXPECT_EQ(SettingsForGraph("btree2").depth, 4u);
}

TEST_F(ProcessSettingsTest, WriteBehindIsSetPerGraphAndAnInvalidValueTurnsOnlyItOff) {
  Set("FOREACTOR", "1");
  Set("FOREACTOR_WRITE_BEHIND", "0");
  Set("FOREACTOR_WRITE_BEHIND_load", "1");
  Set("FOREACTOR_WRITE_BEHIND_copy", "maybe");
  ReloadSettingsForTesting();
  EXPECT_FALSE(SettingsForGraph("other").write_behind);
  EXPECT_TRUE(SettingsForGraph("load").write_behind);
  GraphSettings copy = SettingsForGraph("copy");
  EXPECT_TRUE(copy.enabled) << "the graph itself stays on";
  EXPECT_FALSE(copy.write_behind);
}

TEST_F(ProcessSettingsTest, DirectReadsAreSetPerGraph) {
  Set("FOREACTOR", "1");
  Set("FOREACTOR_DIRECT_READS_copy", "0");
  ReloadSettingsForTesting();
  EXPECT_TRUE(SettingsForGraph("other").direct_reads);
  EXPECT_FALSE(SettingsForGraph("copy").direct_reads);
}

TEST_F(ProcessSettingsTest, ThePollBudgetIsSetPerGraph) {
  Set("FOREACTOR", "1");
  Set("FOREACTOR_POLL_US_leveldb_get", "50");
  Set("FOREACTOR_POLL_US_copy", "-1");
  ReloadSettingsForTesting();
  EXPECT_EQ(SettingsForGraph("other").poll_microseconds, kDefaultPollMicroseconds);
  EXPECT_EQ(SettingsForGraph("leveldb_get").poll_microseconds, 50u);
  GraphSettings copy = SettingsForGraph("copy");
  EXPECT_TRUE(copy.enabled) << "an invalid budget turns polling off, not the graph";
  EXPECT_EQ(copy.poll_microseconds, 0u);
}

TEST_F(ProcessSettingsTest, InvalidPerGraphValueTurnsOnlyThatGraphOff) {
  Set("FOREACTOR", "1");
  Set("FOREACTOR_DEPTH_bad", "lots");
  Set("FOREACTOR_ENGINE_worse", "io_uring2");
  ReloadSettingsForTesting();
  EXPECT_TRUE(Settings().enabled);
  EXPECT_FALSE(SettingsForGraph("bad").enabled);
  EXPECT_FALSE(SettingsForGraph("worse").enabled);
  EXPECT_TRUE(SettingsForGraph("good").enabled);
}

TEST_F(ProcessSettingsTest, InvalidDefaultTurnsEveryGraphOff) {
  Set("FOREACTOR", "1");
  Set("FOREACTOR_ENGINE", "fast");
  Set("FOREACTOR_DEPTH_btree", "8");
  ReloadSettingsForTesting();
  EXPECT_FALSE(Settings().enabled);
  EXPECT_FALSE(SettingsForGraph("btree").enabled);
}

TEST_F(ProcessSettingsTest, InvalidGraphNameTurnsTheGraphOff) {
  Set("FOREACTOR", "1");
  ReloadSettingsForTesting();
  EXPECT_FALSE(SettingsForGraph("").enabled);
  EXPECT_FALSE(SettingsForGraph("a-b").enabled);
  EXPECT_FALSE(SettingsForGraph("a b").enabled);
  EXPECT_TRUE(SettingsForGraph("Graph_2").enabled);
}

TEST_F(ProcessSettingsTest, EnvironmentIsReadOnceUntilReloaded) {
  Set("FOREACTOR", "1");
  Set("FOREACTOR_DEPTH_btree", "8");
  ReloadSettingsForTesting();
  Set("FOREACTOR_DEPTH_btree", "9");
  Set("FOREACTOR_DEPTH", "2");
  EXPECT_EQ(Settings().defaults.depth, kDefaultDepth);
  EXPECT_EQ(SettingsForGraph("btree").depth, 8u);
  ReloadSettingsForTesting();
  EXPECT_EQ(Settings().defaults.depth, 2u);
  EXPECT_EQ(SettingsForGraph("btree").depth, 9u);
}

TEST_F(ProcessSettingsTest, ThreadsSeeTheSameSettings) {
  Set("FOREACTOR", "1");
  Set("FOREACTOR_DEPTH", "5");
  Set("FOREACTOR_DEPTH_g", "7");
  ReloadSettingsForTesting();
  constexpr int kThreads = 4;
  unsigned defaults[kThreads] = {};
  unsigned graph[kThreads] = {};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        defaults[t] = Settings().defaults.depth;
        graph[t] = SettingsForGraph("g").depth;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(defaults[t], 5u);
    EXPECT_EQ(graph[t], 7u);
  }
}

// Captures what is written to file descriptor 2 while it lives.
class StderrCapture {
 public:
  StderrCapture() {
    std::fflush(stderr);
    char path[] = "/tmp/foreactor_settings_test_XXXXXX";
    file_ = mkstemp(path);
    unlink(path);
    saved_ = dup(STDERR_FILENO);
    dup2(file_, STDERR_FILENO);
  }
  ~StderrCapture() {
    Restore();
    close(file_);
  }
  std::string Text() {
    Restore();
    std::string text;
    char buffer[4096];
    ssize_t got;
    off_t offset = 0;
    while ((got = pread(file_, buffer, sizeof buffer, offset)) > 0) {
      text.append(buffer, static_cast<size_t>(got));
      offset += got;
    }
    return text;
  }

 private:
  void Restore() {
    if (saved_ >= 0) {
      dup2(saved_, STDERR_FILENO);
      close(saved_);
      saved_ = -1;
    }
  }
  int file_ = -1;
  int saved_ = -1;
};

size_t CountOccurrences(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

TEST_F(ProcessSettingsTest, ReportsEachProblemOnceOnStderr) {
  Set("FOREACTOR", "1");
  Set("FOREACTOR_DEPTH_bad", "abc");
  StderrCapture capture;
  ReloadSettingsForTesting();
  Settings();
  Settings();
  SettingsForGraph("bad");
  SettingsForGraph("bad");
  std::string text = capture.Text();
  EXPECT_EQ(CountOccurrences(text,
                             "foreactor: FOREACTOR_DEPTH_bad=\"abc\" is not a number from 0 "
                             "to 1024 or auto; graph bad is off\n"),
            1u)
      << text;
}

TEST_F(ProcessSettingsTest, ReportsAnInvalidDefaultOnceWithThePrefix) {
  Set("FOREACTOR", "1");
  Set("FOREACTOR_DEPTH", "abc");
  StderrCapture capture;
  ReloadSettingsForTesting();
  Settings();
  SettingsForGraph("g");
  std::string text = capture.Text();
  EXPECT_EQ(text,
            "foreactor: FOREACTOR_DEPTH=\"abc\" is not a number from 0 to 1024 "
            "or auto; foreactor is off\n");
  ASSERT_EQ(Settings().problems.size(), 1u);
}

TEST_F(ProcessSettingsTest, SaysNothingWhenAllIsValidOrOff) {
  StderrCapture capture;
  ReloadSettingsForTesting();  // off
  Set("FOREACTOR", "1");
  Set("FOREACTOR_DEPTH", "3");
  ReloadSettingsForTesting();  // valid
  SettingsForGraph("g");
  EXPECT_EQ(capture.Text(), "");
}

}  // namespace
}  // namespace foreactor
