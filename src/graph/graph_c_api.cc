// graph_c_api.cc: the foreactor_graph_* functions of foreactor.h.
//
// Each function is a thin shell around foreactor::Graph that keeps C++
// exceptions out of the C API: running out of memory gives NULL or -1, as
// the C contract says, and never unwinds into the caller.
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "foreactor/foreactor.h"
#include "graph/graph.h"
#include "graph/graph_handle.h"

namespace {

// Copies `message` into the caller's buffer, truncated and NUL-terminated.
void CopyMessage(const std::string& message, char* buffer, size_t buffer_size) {
  if (buffer == nullptr || buffer_size == 0) return;
  const size_t length = message.size() < buffer_size - 1 ? message.size() : buffer_size - 1;
  std::memcpy(buffer, message.data(), length);
  buffer[length] = '\0';
}

}  // namespace

extern "C" {

foreactor_graph* foreactor_graph_create(const char* name) {
  try {
    return new foreactor_graph(name != nullptr ? name : "");
  } catch (...) {
    return nullptr;
  }
}

void foreactor_graph_destroy(foreactor_graph* graph) { delete graph; }

int foreactor_graph_add_syscall(foreactor_graph* graph, const char* name, foreactor_call_type type,
                                foreactor_arguments_fn arguments, foreactor_result_fn result,
                                void* node_data) {
  if (graph == nullptr) return -1;
  try {
    return graph->graph.AddSyscall(name, type, arguments, result, node_data);
  } catch (...) {
    return -1;
  }
}

int foreactor_graph_add_branch(foreactor_graph* graph, const char* name, foreactor_choice_fn choice,
                               void* node_data) {
  if (graph == nullptr) return -1;
  try {
    return graph->graph.AddBranch(name, choice, node_data);
  } catch (...) {
    return -1;
  }
}

int foreactor_graph_set_next(foreactor_graph* graph, int from, int to, int weak) {
  if (graph == nullptr) return -1;
  try {
    return graph->graph.SetNext(from, to, weak != 0);
  } catch (...) {
    return -1;
  }
}

int foreactor_graph_add_child(foreactor_graph* graph, int branch, int to, int weak) {
  if (graph == nullptr) return -1;
  try {
    return graph->graph.AddChild(branch, to, weak != 0);
  } catch (...) {
    return -1;
  }
}

int foreactor_graph_set_write_behind(foreactor_graph* graph, int node) {
  if (graph == nullptr) return -1;
  try {
    return graph->graph.SetWriteBehind(node);
  } catch (...) {
    return -1;
  }
}

int foreactor_graph_set_loop_count(foreactor_graph* graph, int branch, foreactor_count_fn count) {
  if (graph == nullptr) return -1;
  try {
    return graph->graph.SetLoopCount(branch, count);
  } catch (...) {
    return -1;
  }
}

int foreactor_graph_follow_from_look_ahead(foreactor_graph* graph) {
  if (graph == nullptr) return -1;
  return graph->graph.SetFollowsFromLookAhead();
}

int foreactor_graph_finish(foreactor_graph* graph, char* error, size_t error_size) {
  if (graph == nullptr) {
    CopyMessage("foreactor_graph_finish: the graph is NULL", error, error_size);
    return -1;
  }
  try {
    std::string message;
    if (graph->graph.Finish(&message)) {
      CopyMessage("", error, error_size);
      return 0;
    }
    CopyMessage(message, error, error_size);
    return -1;
  } catch (...) {
    // Finish() has already recorded its verdict; only the copy failed.
    CopyMessage("out of memory", error, error_size);
    return graph->graph.valid() ? 0 : -1;
  }
}

int foreactor_graph_write_dot(const foreactor_graph* graph, FILE* out) {
  if (graph == nullptr || out == nullptr || !graph->graph.finished()) return -1;
  try {
    const std::string text = graph->graph.Dot();
    if (std::fwrite(text.data(), 1, text.size(), out) != text.size()) return -1;
    return std::fflush(out) == 0 ? 0 : -1;
  } catch (...) {
    return -1;
  }
}

const char* foreactor_graph_name(const foreactor_graph* graph) {
  if (graph == nullptr) return "";
  return graph->graph.name().c_str();
}

}  // extern "C"
