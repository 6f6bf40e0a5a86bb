// plan_gate.h: whether a Get is worth planning, per thread.
//
// Planning a Get and running it in a scope costs more than it saves when
// at most one of its reads goes to the device (LevelDB's block cache and
// the page cache serve the others: nothing to overlap), or when the
// automatic depth is at 0.  The
// gate plans every Get while recent ones gained; after kQuietGets planned
// Gets in a row that did not, it lets Gets run plain and plans only one in
// `interval` to notice a change.  The interval doubles, up to kMaxInterval,
// while those samples gain nothing; one that gains opens the gate again.
// The gate serves the automatic depth: a fixed depth or check mode asks
// for every Get to be planned.
#ifndef FOREACTOR_APPS_LEVELDB_PLUGIN_PLAN_GATE_H_
#define FOREACTOR_APPS_LEVELDB_PLUGIN_PLAN_GATE_H_

#include <algorithm>
#include <cstdint>

namespace leveldb_plugin {

class PlanGate {
 public:
  static constexpr uint32_t kQuietGets = 8;
  static constexpr uint32_t kMaxInterval = 2048;

  // Whether to plan the next Get (false: run it plain, unplanned).
  bool ShouldPlan() {
    if (skip_ == 0) return true;
    --skip_;
    return false;
  }

  // The outcome of a planned Get: `early_calls` calls were handed to the
  // engine ahead of the program (with FOREACTOR_PAGE_CACHE=1, reads the page
  // cache did not hold; blocks in LevelDB's block cache are never planned).
  // Two or more overlap: the Get gained.
  void Record(uint64_t early_calls) {
    if (early_calls >= 2) {
      quiet_ = 0;
      interval_ = 1;
      return;
    }
    if (++quiet_ < kQuietGets) return;
    skip_ = interval_;
    interval_ = std::min(2 * interval_, kMaxInterval);
  }

 private:
  uint32_t skip_ = 0;      // Gets still to run unplanned
  uint32_t quiet_ = 0;     // planned Gets in a row that gained nothing
  uint32_t interval_ = 1;  // unplanned Gets after the next quiet sample
};

}  // namespace leveldb_plugin

#endif  // FOREACTOR_APPS_LEVELDB_PLUGIN_PLAN_GATE_H_
