// cursor.h: a position in a graph plus the iteration index of every loop.
#ifndef FOREACTOR_RUNTIME_CURSOR_H_
#define FOREACTOR_RUNTIME_CURSOR_H_

#include <cstdint>
#include <cstring>

#include "graph/graph.h"

namespace foreactor {

struct Cursor {
  int node = FOREACTOR_START_NODE;
  uint64_t iteration[FOREACTOR_MAX_LOOPS] = {};

  // Follows `edge`: resets the counters of the loops it enters afresh and
  // advances the counter of the loop it closes (see Edge in graph.h).
  void Take(const Edge& edge) {
    for (uint32_t mask = edge.reset_loops; mask != 0; mask &= mask - 1) {
      iteration[__builtin_ctz(mask)] = 0;
    }
    if (edge.closes_loop >= 0) iteration[edge.closes_loop]++;
    node = edge.to;
  }

  // Fills `out` with the counters of the loops enclosing `node`, outermost
  // first, as foreactor_visit::iteration expects.  Returns how many.
  unsigned GatherIterations(const Node& node_info, uint64_t* out) const {
    unsigned count = 0;
    for (int loop : node_info.loops) out[count++] = iteration[loop];
    return count;
  }
};

// The visit of the node at `cursor`, as the plugin's callbacks receive it:
// its loop counters are written to `iteration_storage`
// (FOREACTOR_MAX_LOOPS entries), which must outlive the visit.
inline foreactor_visit VisitAt(const Graph& graph, const Cursor& cursor, void* scope_state,
                               uint64_t* iteration_storage) {
  const Node& node = graph.node(cursor.node);
  foreactor_visit visit;
  visit.scope_state = scope_state;
  visit.node_data = node.node_data;
  visit.iteration = iteration_storage;
  visit.loop_count = cursor.GatherIterations(node, iteration_storage);
  return visit;
}

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_CURSOR_H_
