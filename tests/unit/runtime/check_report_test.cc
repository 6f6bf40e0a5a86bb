// Tests of CheckReport: one line per scope, naming the graph, the node,
// its type and the loop iterations of the visit.
#include "runtime/check_report.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>

namespace foreactor {
namespace {

foreactor_readiness NeverArguments(const foreactor_visit*, foreactor_call*) {
  return FOREACTOR_NEVER;
}
int NoChoice(const foreactor_visit*) { return FOREACTOR_CHOICE_NOT_YET; }

// start -> "call" (pread) -> branch "more" -> {call (loop), end}
std::unique_ptr<Graph> LoopGraph() {
  auto graph = std::make_unique<Graph>("loop");
  int call = graph->AddSyscall("call", FOREACTOR_CALL_PREAD, &NeverArguments, nullptr, nullptr);
  int branch = graph->AddBranch("more", &NoChoice, nullptr);
  graph->SetNext(FOREACTOR_START_NODE, call, false);
  graph->SetNext(call, branch, false);
  graph->AddChild(branch, call, false);
  graph->AddChild(branch, FOREACTOR_END_NODE, false);
  std::string error;
  EXPECT_TRUE(graph->Finish(&error)) << error;
  return graph;
}

// The cursor at the call's visit in loop iteration `iteration`.
Cursor AtIteration(const Graph& graph, int node, uint64_t iteration) {
  Cursor at;
  at.node = node;
  for (int loop : graph.node(node).loops) at.iteration[loop] = iteration;
  return at;
}

int NodeNamed(const Graph& graph, const std::string& name) {
  for (int id = 0; id < graph.node_count(); ++id) {
    if (graph.node(id).name == name) return id;
  }
  return -1;
}

TEST(CheckReportTest, AVisitIsDescribedByNodeTypeAndIteration) {
  auto graph = LoopGraph();
  const int call = NodeNamed(*graph, "call");
  const int branch = NodeNamed(*graph, "more");
  EXPECT_EQ(CheckReport::DescribeVisit(*graph, call, AtIteration(*graph, call, 2)),
            "node 'call' (pread) at iteration [2]");
  EXPECT_EQ(CheckReport::DescribeVisit(*graph, branch, AtIteration(*graph, branch, 0)),
            "node 'more' (branch) at iteration [0]");
}

TEST(CheckReportTest, OnlyTheFirstDivergenceOfAScopeIsReported) {
  auto graph = LoopGraph();
  const int call = NodeNamed(*graph, "call");
  CheckReport report(*graph);
  report.StartScope();
  testing::internal::CaptureStderr();
  report.Divergence(call, AtIteration(*graph, call, 1), "first", "a hint");
  report.Divergence(call, AtIteration(*graph, call, 2), "second", "another hint");
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "foreactor: check: graph 'loop', node 'call' (pread) at iteration [1]: first; "
            "hint: a hint\n");
  report.StartScope();
  testing::internal::CaptureStderr();
  report.Divergence(call, AtIteration(*graph, call, 0), "next scope", "hint");
  EXPECT_NE(testing::internal::GetCapturedStderr().find("next scope"), std::string::npos);
}

}  // namespace
}  // namespace foreactor
