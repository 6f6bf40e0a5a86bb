#include "runtime/check_report.h"

#include <cstdint>

#include "base/call_types.h"
#include "config/report.h"

namespace foreactor {

void CheckReport::Divergence(int node, const Cursor& at, const std::string& what,
                             const std::string& hint) {
  if (reported_) return;
  reported_ = true;
  Report("check: graph '" + graph_.name() + "', " + DescribeVisit(graph_, node, at) + ": " + what +
         "; hint: " + hint);
}

std::string CheckReport::DescribeVisit(const Graph& graph, int node, const Cursor& at) {
  const Node& info = graph.node(node);
  std::string text = "node '" + info.name + "' (" +
                     (info.kind == NodeKind::kBranch ? std::string("branch")
                                                     : std::string(InfoOf(info.call_type).name)) +
                     ")";
  uint64_t iteration[FOREACTOR_MAX_LOOPS];
  unsigned loops = at.GatherIterations(info, iteration);
  if (loops > 0) {
    text += " at iteration [";
    for (unsigned i = 0; i < loops; ++i) text += (i > 0 ? ", " : "") + std::to_string(iteration[i]);
    text += "]";
  }
  return text;
}

}  // namespace foreactor
