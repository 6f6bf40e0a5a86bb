// check_report.h: what check mode (FOREACTOR_CHECK=1, GraphSettings::check)
// tells the user.
//
// In check mode nothing is issued early; the runner compares every call
// that belongs to the graph with the visit the graph predicts.  The first
// place in each scope where the program leaves the graph is reported on
// stderr as one line: "foreactor: check: graph 'NAME', node 'NODE' (TYPE)
// [at iteration [i, j]]: WHAT; hint: HINT".  Later places in the same
// scope are only counted by the runner (statistics: check_divergences).
// One per runner; not thread-safe.
#ifndef FOREACTOR_RUNTIME_CHECK_REPORT_H_
#define FOREACTOR_RUNTIME_CHECK_REPORT_H_

#include <string>

#include "graph/graph.h"
#include "runtime/cursor.h"

namespace foreactor {

class CheckReport {
 public:
  // `graph` must outlive the report.
  explicit CheckReport(const Graph& graph) : graph_(graph) {}

  // A scope starts: its first divergence will be reported.
  void StartScope() { reported_ = false; }

  // The program left the graph at the visit of `node` that `at` names:
  // reports it when it is the scope's first.
  void Divergence(int node, const Cursor& at, const std::string& what, const std::string& hint);

  // "node 'NAME' (TYPE)", with " at iteration [i, j]" inside loops.
  static std::string DescribeVisit(const Graph& graph, int node, const Cursor& at);

 private:
  const Graph& graph_;
  bool reported_ = false;
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_CHECK_REPORT_H_
