// graph_handle.h: what a foreactor_graph* of the C API points to.
//
// The handle owns the graph model.  The graph module's C functions
// (graph_c_api.cc) build and finish it; the runtime's scope functions reach
// the model through `graph` and only ever read it, and only once it is
// finished (a finished Graph is immutable).
#ifndef FOREACTOR_GRAPH_GRAPH_HANDLE_H_
#define FOREACTOR_GRAPH_GRAPH_HANDLE_H_

#include <string>
#include <utility>

#include "foreactor/foreactor.h"
#include "graph/graph.h"

struct foreactor_graph {
  explicit foreactor_graph(std::string name) : graph(std::move(name)) {}

  foreactor_graph(const foreactor_graph&) = delete;
  foreactor_graph& operator=(const foreactor_graph&) = delete;

  foreactor::Graph graph;
};

#endif  // FOREACTOR_GRAPH_GRAPH_HANDLE_H_
