// leveldb_driver: builds a LevelDB image from a YCSB load trace, or replays
// a YCSB run trace against one with client threads, checking every Get and
// recording its latency.  Prints a JSON summary on stdout (or --json FILE).
//
//   leveldb_driver --db DIR --load TRACE [--value-size N] [--compact] [options]
//   leveldb_driver --db DIR --clone-from IMAGE --load TRACE --level0-tables N
//                  [--value-size N] [options]
//   leveldb_driver --db DIR --run TRACE [--clone-from IMAGE] [--threads N]
//                  [--ops N] [--compactions own|held] [--no-fill-cache]
//                  [--latency-by-level0] [options]
// options: --cache-mib N (block cache, default 8 = LevelDB's default)
//          --bloom-bits N (Bloom filter bits per key, default 0 = none)
//          --compression none|snappy (default none)
//          --write-buffer-kib N (default 4096 = LevelDB's default; the size
//            of a level-0 table)
//          --json FILE
// --level0-tables N: IMAGE's copy gets N level-0 tables of updates of the
//   load trace's keys above its levels (level0_tables.h).
// --compactions held: LevelDB's background work is held while the trace
//   runs (held_compactions_env.h); the trace must be read-only.  own (the
//   default): LevelDB compacts as it does by itself.
// --no-fill-cache: Gets run with ReadOptions::fill_cache = false (the blocks
//   they read do not enter the block cache).
// --latency-by-level0: the summary also gives the Gets grouped by the
//   number of level-0 tables as each started, with their summed latency
//   ("latency_by_level0"; replay.h says why).
// Every mode prints the files per level of the database as it leaves it;
// --load and --run also print the size of the process's descriptor table,
// which every mode grows at start (descriptor_table.h).
//
// Table files are read with pread, never mmap (support/no_mmap_reads.h).
// Exit status: 0 all Gets correct; 1 a Get mismatch or a failed Put;
// 2 usage error or the database cannot be opened, loaded or cloned.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "driver/db_shape.h"
#include "driver/descriptor_table.h"
#include "driver/held_compactions_env.h"
#include "driver/latency.h"
#include "driver/level0_tables.h"
#include "driver/replay.h"
#include "driver/trace.h"
#include "leveldb/cache.h"
#include "leveldb/db.h"
#include "leveldb/filter_policy.h"
#include "leveldb/options.h"
#include "support/no_mmap_reads.h"

namespace leveldb_driver {
namespace {

struct Arguments {
  std::string db;
  std::string load_trace;
  std::string run_trace;
  std::string clone_from;
  std::string json_path;
  int threads = 1;
  uint64_t ops = 0;
  uint32_t value_size = 0;
  uint64_t cache_mib = 8;
  uint64_t write_buffer_kib = 4096;
  int bloom_bits = 0;
  bool snappy = false;
  bool compact = false;
  int level0_tables = 0;
  bool hold_compactions = false;
  bool fill_cache = true;
  bool latency_by_level0 = false;
};

[[noreturn]] void Usage(const std::string& message) {
  std::fprintf(stderr,
               "leveldb_driver: %s\n"
               "usage: leveldb_driver --db DIR (--load TRACE [--value-size N] [--compact] |\n"
               "         --clone-from IMAGE --load TRACE --level0-tables N [--value-size N] |\n"
               "         --run TRACE [--clone-from IMAGE] [--threads N] [--ops N]\n"
               "         [--compactions own|held] [--no-fill-cache] [--latency-by-level0])\n"
               "         [--cache-mib N] [--bloom-bits N] [--compression none|snappy]\n"
               "         [--write-buffer-kib N] [--json FILE]\n",
               message.c_str());
  std::exit(2);
}

uint64_t ParseNumber(const std::string& option, const char* text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-') {
    Usage(option + " needs a non-negative number, not '" + text + "'");
  }
  return value;
}

Arguments ParseArguments(int argc, char** argv) {
  Arguments arguments;
  for (int i = 1; i < argc; ++i) {
    const std::string option = argv[i];
    if (option == "--compact") {
      arguments.compact = true;
      continue;
    }
    if (option == "--no-fill-cache") {
      arguments.fill_cache = false;
      continue;
    }
    if (option == "--latency-by-level0") {
      arguments.latency_by_level0 = true;
      continue;
    }
    if (i + 1 >= argc) Usage(option + " needs a value");
    const char* value = argv[++i];
    if (option == "--db")
      arguments.db = value;
    else if (option == "--load")
      arguments.load_trace = value;
    else if (option == "--run")
      arguments.run_trace = value;
    else if (option == "--clone-from")
      arguments.clone_from = value;
    else if (option == "--json")
      arguments.json_path = value;
    else if (option == "--threads")
      arguments.threads = static_cast<int>(ParseNumber(option, value));
    else if (option == "--ops")
      arguments.ops = ParseNumber(option, value);
    else if (option == "--value-size")
      arguments.value_size = static_cast<uint32_t>(ParseNumber(option, value));
    else if (option == "--cache-mib")
      arguments.cache_mib = ParseNumber(option, value);
    else if (option == "--write-buffer-kib")
      arguments.write_buffer_kib = ParseNumber(option, value);
    else if (option == "--bloom-bits")
      arguments.bloom_bits = static_cast<int>(ParseNumber(option, value));
    else if (option == "--level0-tables")
      arguments.level0_tables = static_cast<int>(ParseNumber(option, value));
    else if (option == "--compactions") {
      const std::string name = value;
      if (name != "own" && name != "held") Usage("--compactions is own or held");
      arguments.hold_compactions = name == "held";
    } else if (option == "--compression") {
      const std::string name = value;
      if (name != "none" && name != "snappy") Usage("--compression is none or snappy");
      arguments.snappy = name == "snappy";
    } else {
      Usage("unknown option " + option);
    }
  }
  if (arguments.db.empty()) Usage("--db is required");
  if (arguments.load_trace.empty() == arguments.run_trace.empty())
    Usage("give one of --load and --run");
  if (arguments.threads < 1 || arguments.threads > 256) Usage("--threads is 1..256");
  const bool stacking = arguments.level0_tables > 0;
  if (arguments.write_buffer_kib < 64 || arguments.write_buffer_kib > (1 << 20)) {
    Usage("--write-buffer-kib is 64..1048576");
  }
  if (arguments.level0_tables < 0 || arguments.level0_tables > 100)
    Usage("--level0-tables is 1..100");
  if (stacking && (arguments.load_trace.empty() || arguments.clone_from.empty())) {
    Usage("--level0-tables goes with --load and --clone-from");
  }
  if (!arguments.clone_from.empty() && arguments.run_trace.empty() && !stacking) {
    Usage("--clone-from goes with --run or --level0-tables");
  }
  if ((arguments.hold_compactions || !arguments.fill_cache || arguments.latency_by_level0) &&
      arguments.run_trace.empty()) {
    Usage("--compactions, --no-fill-cache and --latency-by-level0 go with --run");
  }
  return arguments;
}

// Makes `target` a copy of the (closed) database `image`: table files are
// hard links (LevelDB never changes a table file, it only deletes it), the
// other files are copied.  Replaces `target` if it is a database or empty.
bool CloneImage(const std::string& image, const std::string& target, std::string* error) {
  namespace fs = std::filesystem;
  std::error_code code;
  if (!fs::exists(fs::path(image) / "CURRENT", code)) {
    *error = image + " is not a LevelDB database (no CURRENT)";
    return false;
  }
  // Only a folder that is a LevelDB database (or empty) is replaced: a
  // mistyped --db must not delete anything else.
  if (fs::exists(target, code) && !fs::is_empty(target, code) &&
      !fs::exists(fs::path(target) / "CURRENT", code)) {
    *error = target + " exists and is not a LevelDB database: not replacing it";
    return false;
  }
  fs::remove_all(target, code);
  fs::create_directories(target, code);
  if (code) {
    *error = "cannot create " + target + ": " + code.message();
    return false;
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(image, code)) {
    const fs::path destination = fs::path(target) / entry.path().filename();
    const std::string extension = entry.path().extension().string();
    if (extension == ".ldb" || extension == ".sst") {
      fs::create_hard_link(entry.path(), destination, code);
    } else {
      fs::copy_file(entry.path(), destination, code);
    }
    if (code) {
      *error = "cannot clone " + entry.path().string() + ": " + code.message();
      return false;
    }
  }
  if (code) {
    *error = "cannot list " + image + ": " + code.message();
    return false;
  }
  return true;
}

// Waits until LevelDB has no size compaction left to do, so that the image
// has the shape LevelDB's own compactions give it.
void WaitForCompactions(leveldb::DB* db) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(30);
  while (!NoCompactionDue(ReadShape(db)) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JsonList(const std::vector<uint64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

// Writes `json` to `path` (empty: stdout); returns `exit_status`, or 2 when
// the file cannot be written.
int Print(const std::string& json, const std::string& path, int exit_status) {
  FILE* out = stdout;
  std::unique_ptr<FILE, int (*)(FILE*)> file(nullptr, std::fclose);
  if (!path.empty()) {
    file.reset(std::fopen(path.c_str(), "we"));
    if (!file) {
      std::fprintf(stderr, "leveldb_driver: cannot write %s\n", path.c_str());
      return 2;
    }
    out = file.get();
  }
  std::fputs(json.c_str(), out);
  return exit_status;
}

std::string ShapeJson(const DbShape& shape) {
  return ", \"files_per_level\": " + JsonList(shape.files) +
         ", \"bytes_per_level\": " + JsonList(shape.bytes);
}

// --level0-tables: the clone in arguments.db gets its level-0 tables.
int StackTables(const Arguments& arguments, const leveldb::Options& options,
                const std::vector<TraceOp>& ops) {
  const auto start = std::chrono::steady_clock::now();
  uint64_t updates = 0;
  DbShape shape;
  const leveldb::Status status = StackLevel0Tables(arguments.db, options, ops, arguments.value_size,
                                                   arguments.level0_tables, &updates, &shape);
  if (!status.ok()) {
    std::fprintf(stderr, "leveldb_driver: level-0 tables: %s\n", status.ToString().c_str());
    return 2;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Print("{\"mode\": \"level0_tables\", \"updates\": " + std::to_string(updates) +
                   ", \"seconds\": " + std::to_string(seconds) +
                   ", \"db\": " + JsonString(arguments.db) + ShapeJson(shape) + "}\n",
               arguments.json_path, 0);
}

int Main(int argc, char** argv) {
  const Arguments arguments = ParseArguments(argc, argv);
  leveldb_case_study::DisableMmapTableReads();  // before the first Env::Default()
  GrowDescriptorTable();                        // while this is the only thread

  const bool loading = !arguments.load_trace.empty();
  std::vector<TraceOp> ops;
  std::string error;
  if (!ReadTrace(loading ? arguments.load_trace : arguments.run_trace, arguments.ops, &ops,
                 &error)) {
    std::fprintf(stderr, "leveldb_driver: %s\n", error.c_str());
    return 2;
  }
  if (!arguments.clone_from.empty() && !CloneImage(arguments.clone_from, arguments.db, &error)) {
    std::fprintf(stderr, "leveldb_driver: %s\n", error.c_str());
    return 2;
  }

  std::unique_ptr<leveldb::Cache> cache(leveldb::NewLRUCache(arguments.cache_mib << 20));
  std::unique_ptr<const leveldb::FilterPolicy> filter(
      arguments.bloom_bits > 0 ? leveldb::NewBloomFilterPolicy(arguments.bloom_bits) : nullptr);
  leveldb::Options options;
  options.create_if_missing = loading && arguments.level0_tables == 0;
  options.error_if_exists = options.create_if_missing;
  options.block_cache = cache.get();
  options.filter_policy = filter.get();
  options.compression = arguments.snappy ? leveldb::kSnappyCompression : leveldb::kNoCompression;
  options.write_buffer_size = static_cast<size_t>(arguments.write_buffer_kib << 10);
  if (arguments.level0_tables > 0) return StackTables(arguments, options, ops);
  std::unique_ptr<HeldCompactionsEnv> held_env;
  if (arguments.hold_compactions) {
    for (const TraceOp& op : ops) {
      if (op.kind != OpKind::kRead) {
        std::fprintf(stderr,
                     "leveldb_driver: --compactions held needs a read-only trace (LevelDB "
                     "stops writes until its background work ran)\n");
        return 2;
      }
    }
    held_env = std::make_unique<HeldCompactionsEnv>(options.env);
    options.env = held_env.get();
  }
  leveldb::DB* raw_db = nullptr;
  leveldb::Status status = leveldb::DB::Open(options, arguments.db, &raw_db);
  if (!status.ok()) {
    std::fprintf(stderr, "leveldb_driver: open %s: %s\n", arguments.db.c_str(),
                 status.ToString().c_str());
    return 2;
  }
  HeldDatabase db(raw_db, DatabaseCloser{held_env.get()});

  std::string json = "{";
  int exit_status = 0;
  if (loading) {
    const auto start = std::chrono::steady_clock::now();
    status = Load(db.get(), ops, arguments.value_size, 1 << 20);
    if (!status.ok()) {
      std::fprintf(stderr, "leveldb_driver: load: %s\n", status.ToString().c_str());
      return 2;
    }
    if (arguments.compact) db->CompactRange(nullptr, nullptr);
    WaitForCompactions(db.get());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    json += "\"mode\": \"load\", \"records\": " + std::to_string(ops.size()) +
            ", \"seconds\": " + std::to_string(seconds);
  } else {
    leveldb::ReadOptions read_options;
    read_options.fill_cache = arguments.fill_cache;
    ReplayResult result =
        Replay(db.get(), ops, arguments.threads, read_options, arguments.latency_by_level0);
    const LatencySummary latency = Summarize(&result.get_latencies_ns);
    const uint64_t operations = result.gets + result.puts;
    json += "\"mode\": \"run\", \"threads\": " + std::to_string(arguments.threads) +
            ", \"operations\": " + std::to_string(operations) +
            ", \"gets\": " + std::to_string(result.gets) +
            ", \"found\": " + std::to_string(result.found) +
            ", \"not_found\": " + std::to_string(result.not_found) +
            ", \"puts\": " + std::to_string(result.puts) +
            ", \"put_errors\": " + std::to_string(result.put_errors) +
            ", \"mismatches\": " + std::to_string(result.mismatches) + ", \"mismatch_examples\": [";
    for (size_t i = 0; i < result.mismatch_examples.size(); ++i) {
      json += (i ? ", " : "") + JsonString(result.mismatch_examples[i]);
    }
    char numbers[512];
    std::snprintf(numbers, sizeof(numbers),
                  "], \"latency_us\": {\"average\": %.3f, \"p50\": %.3f, \"p99\": %.3f, "
                  "\"p999\": %.3f, \"max\": %.3f}, \"seconds\": %.6f, \"throughput_ops\": %.1f",
                  latency.average_us, latency.p50_us, latency.p99_us, latency.p999_us,
                  latency.max_us, result.seconds,
                  result.seconds > 0 ? static_cast<double>(operations) / result.seconds : 0.0);
    json += numbers;
    if (arguments.latency_by_level0) {
      json += ", \"latency_by_level0\": [";
      const char* separator = "";
      for (const auto& [tables, group] : result.by_level0) {
        std::snprintf(numbers, sizeof(numbers),
                      "%s{\"level0_tables\": %llu, \"gets\": %llu, \"total_us\": %.3f}", separator,
                      static_cast<unsigned long long>(tables),
                      static_cast<unsigned long long>(group.gets),
                      static_cast<double>(group.total_ns) / 1000.0);
        json += numbers;
        separator = ", ";
      }
      json += "]";
    }
    if (result.mismatches != 0 || result.put_errors != 0) exit_status = 1;
    for (const std::string& example : result.mismatch_examples) {
      std::fprintf(stderr, "leveldb_driver: mismatch: %s\n", example.c_str());
    }
  }
  const DbShape shape = ReadShape(db.get());
  json += ", \"db\": " + JsonString(arguments.db) +
          ", \"cache_mib\": " + std::to_string(arguments.cache_mib) +
          ", \"bloom_bits\": " + std::to_string(arguments.bloom_bits) +
          ", \"compression\": " + (arguments.snappy ? "\"snappy\"" : "\"none\"") +
          ", \"compactions\": " + (arguments.hold_compactions ? "\"held\"" : "\"own\"") +
          ", \"fill_cache\": " + (arguments.fill_cache ? "true" : "false") + ShapeJson(shape) +
          ", \"descriptor_table\": " + std::to_string(DescriptorTableSize()) + "}\n";
  db.reset();  // waits for LevelDB's background work, or runs the held work
  return Print(json, arguments.json_path, exit_status);
}

}  // namespace
}  // namespace leveldb_driver

int main(int argc, char** argv) { return leveldb_driver::Main(argc, argv); }
