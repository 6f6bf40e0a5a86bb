#include "driver/replay.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "driver/values.h"
#include "leveldb/write_batch.h"

namespace leveldb_driver {

namespace {

using Clock = std::chrono::steady_clock;

// What the replay knows of one key.
struct KeyState {
  // The last version this replay wrote and finished writing; 1 for a key the
  // trace does not insert (loaded), 0 for an inserted key not yet written.
  std::atomic<uint32_t> lower_bound{0};
  uint32_t last_written = 0;  // guarded by the key's stripe of write locks
};

// The trace's keys, indexed once before the clients start.
class KeyTable {
 public:
  explicit KeyTable(const std::vector<TraceOp>& ops) : op_key_(ops.size()), states_(ops.size()) {
    index_.reserve(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      auto [it, inserted] = index_.try_emplace(ops[i].key, i);
      if (inserted) states_[i].lower_bound.store(ops[i].kind == OpKind::kInsert ? 0 : 1);
      op_key_[i] = it->second;
    }
  }
  // The key state of operation `op_index`.
  KeyState& StateOf(size_t op_index) { return states_[op_key_[op_index]]; }
  std::mutex& WriteLockOf(size_t op_index) { return locks_[op_key_[op_index] % kStripes]; }

 private:
  static constexpr size_t kStripes = 256;
  std::unordered_map<std::string_view, size_t> index_;
  std::vector<size_t> op_key_;  // operation index -> index of its key's state
  std::vector<KeyState> states_;
  std::mutex locks_[kStripes];
};

struct ClientResult {
  uint64_t gets = 0, found = 0, not_found = 0, puts = 0, put_errors = 0, mismatches = 0;
  std::vector<std::string> examples;
  std::vector<uint64_t> latencies;
  std::vector<uint64_t> level0_tables;  // with by_level0: per Get, as latencies
};

// The number of level-0 tables `db` has now.
uint64_t Level0Tables(leveldb::DB* db) {
  std::string text;
  return db->GetProperty("leveldb.num-files-at-level0", &text)
             ? std::strtoull(text.c_str(), nullptr, 10)
             : 0;
}

void RecordMismatch(ClientResult* result, std::string description) {
  ++result->mismatches;
  if (result->examples.size() < 5) result->examples.push_back(std::move(description));
}

void RunClient(leveldb::DB* db, const std::vector<TraceOp>& ops,
               const leveldb::ReadOptions& read_options, bool by_level0, KeyTable* keys,
               std::atomic<size_t>* cursor, ClientResult* result) {
  std::string value;
  const leveldb::WriteOptions write_options;
  for (size_t i; (i = cursor->fetch_add(1, std::memory_order_relaxed)) < ops.size();) {
    const TraceOp& op = ops[i];
    KeyState& state = keys->StateOf(i);
    if (op.kind != OpKind::kRead) {
      std::lock_guard<std::mutex> lock(keys->WriteLockOf(i));
      const uint32_t version = std::max<uint32_t>(state.last_written, 1) + 1;
      MakeValue(op.key, version, op.value_length, &value);
      ++result->puts;
      if (db->Put(write_options, op.key, value).ok()) {
        state.last_written = version;
        state.lower_bound.store(version, std::memory_order_release);
      } else {
        ++result->put_errors;
      }
      continue;
    }
    const uint32_t lower_bound = state.lower_bound.load(std::memory_order_acquire);
    if (by_level0) result->level0_tables.push_back(Level0Tables(db));
    const auto start = Clock::now();
    const leveldb::Status status = db->Get(read_options, op.key, &value);
    const auto end = Clock::now();
    result->latencies.push_back(static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count()));
    ++result->gets;
    uint32_t version = 0;
    if (status.ok()) {
      ++result->found;
      if (!CheckValue(op.key, value, &version)) {
        RecordMismatch(result, "op " + std::to_string(i) + " Get(" + op.key + "): value of " +
                                   std::to_string(value.size()) + " bytes is not this key's");
      } else if (version < lower_bound) {
        RecordMismatch(result, "op " + std::to_string(i) + " Get(" + op.key + "): version " +
                                   std::to_string(version) + ", expected at least " +
                                   std::to_string(lower_bound));
      }
    } else if (status.IsNotFound()) {
      ++result->not_found;
      if (lower_bound != 0) {
        RecordMismatch(result, "op " + std::to_string(i) + " Get(" + op.key + "): NotFound");
      }
    } else {
      RecordMismatch(result,
                     "op " + std::to_string(i) + " Get(" + op.key + "): " + status.ToString());
    }
  }
}

}  // namespace

ReplayResult Replay(leveldb::DB* db, const std::vector<TraceOp>& ops, int threads,
                    const leveldb::ReadOptions& read_options, bool by_level0) {
  auto keys = std::make_unique<KeyTable>(ops);
  std::atomic<size_t> cursor{0};
  std::vector<ClientResult> results(static_cast<size_t>(threads < 1 ? 1 : threads));
  for (ClientResult& result : results) {
    result.latencies.reserve(ops.size() / results.size() + 16);
    if (by_level0) result.level0_tables.reserve(ops.size() / results.size() + 16);
  }
  const auto start = Clock::now();
  {
    std::vector<std::jthread> clients;
    for (ClientResult& result : results) {
      clients.emplace_back(RunClient, db, std::cref(ops), std::cref(read_options), by_level0,
                           keys.get(), &cursor, &result);
    }
  }
  ReplayResult total;
  total.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (ClientResult& result : results) {
    total.gets += result.gets;
    total.found += result.found;
    total.not_found += result.not_found;
    total.puts += result.puts;
    total.put_errors += result.put_errors;
    total.mismatches += result.mismatches;
    for (std::string& example : result.examples)
      total.mismatch_examples.push_back(std::move(example));
    total.get_latencies_ns.insert(total.get_latencies_ns.end(), result.latencies.begin(),
                                  result.latencies.end());
    for (size_t get = 0; get < result.level0_tables.size(); ++get) {
      ReplayResult::Level0Gets& group = total.by_level0[result.level0_tables[get]];
      ++group.gets;
      group.total_ns += result.latencies[get];
    }
  }
  return total;
}

leveldb::Status Load(leveldb::DB* db, const std::vector<TraceOp>& ops, uint32_t value_size,
                     size_t batch_bytes) {
  leveldb::WriteBatch batch;
  std::string value;
  const leveldb::WriteOptions write_options;
  for (const TraceOp& op : ops) {
    if (op.kind == OpKind::kRead) continue;
    MakeValue(op.key, 1, value_size != 0 ? value_size : op.value_length, &value);
    batch.Put(op.key, value);
    if (batch.ApproximateSize() >= batch_bytes) {
      leveldb::Status status = db->Write(write_options, &batch);
      if (!status.ok()) return status;
      batch.Clear();
    }
  }
  return db->Write(write_options, &batch);
}

}  // namespace leveldb_driver
