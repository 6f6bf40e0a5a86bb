// Tests of the graph model (graph.h): building, every validation rule, the
// loop analysis (checked by walking the graph with the per-edge counter
// actions), weak edges, DOT export, and the C API around it.

#include "graph/graph.h"

#include <cstdio>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "foreactor/foreactor.h"
#include "graph/graph_handle.h"

namespace foreactor {
namespace {

foreactor_readiness ArgumentsNotYet(const foreactor_visit*, foreactor_call*) {
  return FOREACTOR_NOT_YET;
}

void IgnoreResult(const foreactor_visit*, int64_t) {}

int ChoiceNotYet(const foreactor_visit*) { return FOREACTOR_CHOICE_NOT_YET; }

constexpr int kStart = FOREACTOR_START_NODE;
constexpr int kEnd = FOREACTOR_END_NODE;

// Shorthands for building test graphs with callbacks that are never called.
int Syscall(Graph& graph, const char* name, foreactor_call_type type = FOREACTOR_CALL_PREAD) {
  return graph.AddSyscall(name, type, ArgumentsNotYet, nullptr, nullptr);
}

int Branch(Graph& graph, const char* name) { return graph.AddBranch(name, ChoiceNotYet, nullptr); }

// Adds children in order; expects each to be accepted.
void Children(Graph& graph, int branch, std::initializer_list<int> children) {
  int index = 0;
  for (int child : children) ASSERT_EQ(graph.AddChild(branch, child, false), index++);
}

// The error Finish() reports, or "" when the graph is valid.
std::string FinishError(Graph& graph) {
  std::string error;
  if (graph.Finish(&error)) return "";
  return error.empty() ? "(invalid, but no message)" : error;
}

// Walks a finished graph from the start the way the runtime does: at each
// branch visit takes the next of `choices`; follows each edge by resetting
// the loops in `reset_loops` and advancing `closes_loop`.  Records every
// syscall and branch visit as "name[i,j]" with the node's per-loop iteration
// indices, outermost first.  Stops at the end, or when choices run out.
std::vector<std::string> Walk(const Graph& graph, const std::vector<int>& choices) {
  std::vector<std::string> visits;
  uint64_t iteration[FOREACTOR_MAX_LOOPS] = {};
  size_t next_choice = 0;
  int at = kStart;
  auto take = [&](const Edge& edge) {
    for (int loop = 0; loop < FOREACTOR_MAX_LOOPS; ++loop) {
      if (edge.reset_loops & (uint32_t{1} << loop)) iteration[loop] = 0;
    }
    if (edge.closes_loop >= 0) iteration[edge.closes_loop]++;
    at = edge.to;
  };
  for (int steps = 0; steps < 1000; ++steps) {
    const Node& node = graph.node(at);
    if (node.kind == NodeKind::kEnd) break;
    if (node.kind != NodeKind::kStart) {
      std::string visit = node.name + "[";
      for (size_t i = 0; i < node.loops.size(); ++i) {
        visit += (i == 0 ? "" : ",") + std::to_string(iteration[node.loops[i]]);
      }
      visits.push_back(visit + "]");
    }
    if (node.kind == NodeKind::kBranch) {
      if (next_choice == choices.size()) break;
      take(node.children.at(choices[next_choice++]));
    } else {
      take(node.next);
    }
  }
  return visits;
}

// ------------------------------------------------------------ construction

TEST(GraphTest, NewGraphHoldsStartAndEnd) {
  Graph graph("scan");
  EXPECT_EQ(graph.name(), "scan");
  ASSERT_EQ(graph.node_count(), 2);
  EXPECT_EQ(graph.node(kStart).kind, NodeKind::kStart);
  EXPECT_EQ(graph.node(kEnd).kind, NodeKind::kEnd);
  EXPECT_FALSE(graph.finished());
  EXPECT_FALSE(graph.valid());
}

TEST(GraphTest, StartStraightToEndIsValid) {
  Graph graph("empty");
  ASSERT_EQ(graph.SetNext(kStart, kEnd, false), 0);
  EXPECT_EQ(FinishError(graph), "");
  EXPECT_TRUE(graph.finished());
  EXPECT_TRUE(graph.valid());
  EXPECT_EQ(graph.loop_count(), 0);
  EXPECT_EQ(graph.syscall_count(), 0);
  EXPECT_EQ(graph.branch_count(), 0);
}

TEST(GraphTest, AddersReturnIdsAndKeepCallbacks) {
  Graph graph("g");
  int data = 0;
  const int open =
      graph.AddSyscall("open", FOREACTOR_CALL_OPEN, ArgumentsNotYet, IgnoreResult, &data);
  const int more = graph.AddBranch("more", ChoiceNotYet, &data);
  EXPECT_EQ(open, 2);
  EXPECT_EQ(more, 3);
  const Node& node = graph.node(open);
  EXPECT_EQ(node.kind, NodeKind::kSyscall);
  EXPECT_EQ(node.name, "open");
  EXPECT_EQ(node.call_type, FOREACTOR_CALL_OPEN);
  EXPECT_EQ(node.arguments, &ArgumentsNotYet);
  EXPECT_EQ(node.result, &IgnoreResult);
  EXPECT_EQ(node.node_data, &data);
  EXPECT_EQ(graph.node(more).kind, NodeKind::kBranch);
  EXPECT_EQ(graph.node(more).choice, &ChoiceNotYet);
  EXPECT_EQ(graph.node(more).node_data, &data);
}

TEST(GraphTest, DenseIndicesNumberSyscallsAndBranchesSeparately) {
  Graph graph("g");
  const int a = Syscall(graph, "a");
  const int b1 = Branch(graph, "b1");
  const int c = Syscall(graph, "c");
  const int b2 = Branch(graph, "b2");
  const int d = Syscall(graph, "d");
  graph.SetNext(kStart, a, false);
  graph.SetNext(a, b1, false);
  Children(graph, b1, {c, d});
  graph.SetNext(c, b2, false);
  Children(graph, b2, {d, kEnd});
  graph.SetNext(d, kEnd, false);
  ASSERT_EQ(FinishError(graph), "");
  EXPECT_EQ(graph.syscall_count(), 3);
  EXPECT_EQ(graph.branch_count(), 2);
  EXPECT_EQ(graph.node(a).dense_index, 0);
  EXPECT_EQ(graph.node(c).dense_index, 1);
  EXPECT_EQ(graph.node(d).dense_index, 2);
  EXPECT_EQ(graph.node(b1).dense_index, 0);
  EXPECT_EQ(graph.node(b2).dense_index, 1);
  EXPECT_EQ(graph.node(kStart).dense_index, -1);
  EXPECT_EQ(graph.node(kEnd).dense_index, -1);
  EXPECT_EQ(graph.loop_count(), 0);
  EXPECT_TRUE(graph.node(c).loops.empty());
}

TEST(GraphTest, IdsAreDistinctAndNeverReused) {
  foreactor_graph* first = foreactor_graph_create("a");
  ASSERT_NE(first, nullptr);
  const int first_id = first->graph.id();
  foreactor_graph_destroy(first);
  foreactor_graph* second = foreactor_graph_create("a");
  ASSERT_NE(second, nullptr);
  EXPECT_GT(second->graph.id(), first_id);
  foreactor_graph_destroy(second);
}

TEST(GraphTest, IdsAreDistinctAcrossThreads) {
  constexpr int kThreads = 4;
  constexpr int kGraphsPerThread = 200;
  std::vector<std::vector<int>> ids(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &ids] {
      for (int i = 0; i < kGraphsPerThread; ++i) ids[t].push_back(Graph("g").id());
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::set<int> all;
  for (const auto& list : ids) all.insert(list.begin(), list.end());
  EXPECT_EQ(all.size(), size_t{kThreads * kGraphsPerThread});
}

// -------------------------------------------------------- validation rules

TEST(GraphValidationTest, StartWithoutSuccessor) {
  Graph graph("scan");
  EXPECT_EQ(FinishError(graph), "graph 'scan': node 'start' (start): has no successor");
}

TEST(GraphValidationTest, SyscallWithoutSuccessor) {
  Graph graph("scan");
  const int read = Syscall(graph, "read_leaf");
  graph.SetNext(kStart, read, false);
  EXPECT_EQ(FinishError(graph), "graph 'scan': node 'read_leaf' (syscall pread): has no successor");
  EXPECT_FALSE(graph.valid());
  EXPECT_TRUE(graph.finished());
}

TEST(GraphValidationTest, SyscallWithoutArgumentsCallback) {
  Graph graph("scan");
  const int stat = graph.AddSyscall("stat_file", FOREACTOR_CALL_FSTATAT, nullptr, nullptr, nullptr);
  graph.SetNext(kStart, stat, false);
  graph.SetNext(stat, kEnd, false);
  EXPECT_EQ(FinishError(graph),
            "graph 'scan': node 'stat_file' (syscall fstatat): has no arguments callback");
}

TEST(GraphValidationTest, BranchWithoutChoiceCallback) {
  Graph graph("g");
  const int branch = graph.AddBranch("which", nullptr, nullptr);
  graph.SetNext(kStart, branch, false);
  graph.AddChild(branch, kEnd, false);
  EXPECT_EQ(FinishError(graph), "graph 'g': node 'which' (branch): has no choice callback");
}

TEST(GraphValidationTest, BranchWithoutChildren) {
  Graph graph("g");
  const int branch = Branch(graph, "which");
  graph.SetNext(kStart, branch, false);
  EXPECT_EQ(FinishError(graph), "graph 'g': node 'which' (branch): has no children");
}

TEST(GraphValidationTest, NodeNotReachableFromStart) {
  Graph graph("g");
  const int used = Syscall(graph, "used");
  const int orphan = Syscall(graph, "orphan", FOREACTOR_CALL_FSTAT);
  graph.SetNext(kStart, used, false);
  graph.SetNext(used, kEnd, false);
  graph.SetNext(orphan, kEnd, false);
  EXPECT_EQ(FinishError(graph),
            "graph 'g': node 'orphan' (syscall fstat): is not reachable from the start");
}

TEST(GraphValidationTest, EndNotReachableFromStart) {
  Graph graph("g");
  const int read = Syscall(graph, "read");
  const int again = Branch(graph, "again");
  graph.SetNext(kStart, read, false);
  graph.SetNext(read, again, false);
  Children(graph, again, {read});
  EXPECT_EQ(FinishError(graph), "graph 'g': node 'end' (end): is not reachable from the start");
}

TEST(GraphValidationTest, NodeThatCannotReachTheEnd) {
  Graph graph("g");
  const int split = Branch(graph, "split");
  const int spin = Syscall(graph, "spin");
  const int forever = Branch(graph, "forever");
  graph.SetNext(kStart, split, false);
  Children(graph, split, {kEnd, spin});
  graph.SetNext(spin, forever, false);
  Children(graph, forever, {spin});
  EXPECT_EQ(FinishError(graph), "graph 'g': node 'spin' (syscall pread): cannot reach the end");
}

TEST(GraphValidationTest, CycleClosedBySyscallNode) {
  // while (exit says 0) { a; b; }: the edge b -> exit closes the cycle, but
  // b is a syscall node.
  Graph graph("g");
  const int a = Syscall(graph, "a");
  const int b = Syscall(graph, "b", FOREACTOR_CALL_READ);
  const int exit = Branch(graph, "exit");
  graph.SetNext(kStart, exit, false);
  Children(graph, exit, {a, kEnd});
  graph.SetNext(a, b, false);
  graph.SetNext(b, exit, false);
  EXPECT_EQ(FinishError(graph),
            "graph 'g': node 'b' (syscall read): its edge to node 'exit' (branch) closes a cycle, "
            "but only a branch child may close a loop");
}

TEST(GraphValidationTest, LoopEnteredBesideItsHeader) {
  // The loop head -> tail -> head can also be entered at tail from side.
  Graph graph("g");
  const int fork = Branch(graph, "fork");
  const int head = Syscall(graph, "head");
  const int side = Syscall(graph, "side");
  const int tail = Branch(graph, "tail");
  graph.SetNext(kStart, fork, false);
  Children(graph, fork, {head, side});
  graph.SetNext(head, tail, false);
  graph.SetNext(side, tail, false);
  Children(graph, tail, {head, kEnd});
  EXPECT_EQ(FinishError(graph),
            "graph 'g': node 'side' (syscall pread): its edge to node 'tail' (branch) enters the "
            "loop headed by node 'head' (syscall pread) without passing its header");
}

TEST(GraphValidationTest, NestedLoopsMayShareAHeader) {
  // for (outer) { for (inner) { head } middle }: both loops start at head.
  Graph graph("g");
  const int head = Syscall(graph, "head");
  const int first = Branch(graph, "first");
  const int middle = Syscall(graph, "middle");
  const int second = Branch(graph, "second");
  graph.SetNext(kStart, head, false);
  graph.SetNext(head, first, false);
  Children(graph, first, {head, middle});
  graph.SetNext(middle, second, false);
  Children(graph, second, {kEnd, head});
  std::string error;
  ASSERT_TRUE(graph.Finish(&error)) << error;
  ASSERT_EQ(graph.loop_count(), 2);
  EXPECT_EQ(graph.node(head).loops, (std::vector<int>{0, 1}));
  EXPECT_EQ(graph.node(middle).loops, (std::vector<int>{0}));
  EXPECT_EQ(graph.loop(1).parent, 0);
  // Closing the outer loop starts the inner one afresh; closing the inner
  // one leaves the outer counter alone.
  const Edge& outer_back = graph.node(second).children[1];
  const Edge& inner_back = graph.node(first).children[0];
  EXPECT_EQ(outer_back.closes_loop, 0);
  EXPECT_EQ(outer_back.reset_loops, 1u << 1);
  EXPECT_EQ(inner_back.closes_loop, 1);
  EXPECT_EQ(inner_back.reset_loops, 0u);
}

TEST(GraphValidationTest, TwoLoopsWithOneHeaderAndOneBody) {
  Graph graph("g");
  const int head = Syscall(graph, "head");
  const int again = Branch(graph, "again");
  graph.SetNext(kStart, head, false);
  graph.SetNext(head, again, false);
  Children(graph, again, {head, head, kEnd});
  EXPECT_EQ(FinishError(graph),
            "graph 'g': node 'head' (syscall pread): heads two loops with the same body (closed by "
            "child 0 of node 'again' (branch) and child 1 of node 'again' (branch)), but loops "
            "sharing a header must nest");
}

TEST(GraphValidationTest, LoopWithoutSyscallNode) {
  Graph graph("g");
  const int read = Syscall(graph, "read");
  const int wait = Branch(graph, "wait");
  graph.SetNext(kStart, read, false);
  graph.SetNext(read, wait, false);
  Children(graph, wait, {wait, kEnd});
  EXPECT_EQ(FinishError(graph),
            "graph 'g': node 'wait' (branch): heads a loop that contains no syscall node");
}

// Builds `loops` do-while loops one after another: start -> r0 -> b0 -> r1 ...
void BuildSequentialLoops(Graph& graph, int loops) {
  int previous = kStart;
  for (int i = 0; i < loops; ++i) {
    const std::string suffix = std::to_string(i);
    const int read = Syscall(graph, ("r" + suffix).c_str());
    const int more = Branch(graph, ("b" + suffix).c_str());
    if (graph.node(previous).kind == NodeKind::kBranch) {
      graph.AddChild(previous, read, false);
    } else {
      graph.SetNext(previous, read, false);
    }
    graph.SetNext(read, more, false);
    graph.AddChild(more, read, false);
    previous = more;
  }
  graph.AddChild(previous, kEnd, false);
}

TEST(GraphValidationTest, AtMostMaxLoops) {
  Graph fits("fits");
  BuildSequentialLoops(fits, FOREACTOR_MAX_LOOPS);
  EXPECT_EQ(FinishError(fits), "");
  EXPECT_EQ(fits.loop_count(), FOREACTOR_MAX_LOOPS);

  Graph too_many("too_many");
  BuildSequentialLoops(too_many, FOREACTOR_MAX_LOOPS + 1);
  EXPECT_EQ(FinishError(too_many),
            "graph 'too_many': node 'r8' (syscall pread): heads loop 9, but a graph may have at "
            "most 8 loops");
}

TEST(GraphValidationTest, GraphNameMustBeAnIdentifier) {
  for (const char* name : {"", "bad-name", "with space", "dot.ted"}) {
    Graph graph(name);
    graph.SetNext(kStart, kEnd, false);
    EXPECT_EQ(FinishError(graph), std::string("graph '") + name +
                                      "': the graph name must be non-empty and made of letters, "
                                      "digits and '_'")
        << name;
  }
  Graph good("Scan_2");
  good.SetNext(kStart, kEnd, false);
  EXPECT_EQ(FinishError(good), "");
}

TEST(GraphValidationTest, UnnamedNodesAreNamedByTheirId) {
  Graph graph("g");
  const int read =
      graph.AddSyscall(nullptr, FOREACTOR_CALL_PREAD, ArgumentsNotYet, nullptr, nullptr);
  graph.SetNext(kStart, read, false);
  EXPECT_EQ(FinishError(graph), "graph 'g': node #2 (syscall pread): has no successor");
}

// ------------------------------------------------------------ builder misuse

TEST(GraphBuilderTest, SecondSuccessorIsRejectedAndReportedFirst) {
  Graph graph("g");
  const int a = Syscall(graph, "a");
  const int b = Syscall(graph, "b");
  EXPECT_EQ(graph.SetNext(kStart, a, false), 0);
  EXPECT_EQ(graph.SetNext(a, kEnd, false), 0);
  EXPECT_EQ(graph.SetNext(a, b, false), -1);
  EXPECT_EQ(graph.node(a).next.to, kEnd);          // the first successor stays
  EXPECT_EQ(graph.SetNext(kStart, b, false), -1);  // a second error; the first one is reported
  EXPECT_EQ(FinishError(graph),
            "graph 'g': node 'a' (syscall pread): already has a successor (node 'end' (end)), "
            "but a node may have only one");
}

TEST(GraphBuilderTest, SetNextOnlyFromStartOrSyscall) {
  {
    Graph graph("g");
    const int branch = Branch(graph, "which");
    EXPECT_EQ(graph.SetNext(branch, kEnd, false), -1);
    EXPECT_EQ(FinishError(graph),
              "graph 'g': node 'which' (branch): set_next is only for the start node and syscall "
              "nodes; a branch node takes children (add_child)");
  }
  {
    Graph graph("g");
    EXPECT_EQ(graph.SetNext(kEnd, kEnd, false), -1);
    EXPECT_EQ(FinishError(graph),
              "graph 'g': node 'end' (end): set_next is only for the start node and syscall nodes");
  }
}

TEST(GraphBuilderTest, AddChildOnlyOnBranch) {
  Graph graph("g");
  const int read = Syscall(graph, "read");
  EXPECT_EQ(graph.AddChild(read, kEnd, false), -1);
  EXPECT_EQ(FinishError(graph),
            "graph 'g': node 'read' (syscall pread): add_child is only for branch nodes; use "
            "set_next");
}

TEST(GraphBuilderTest, UnknownNodeIds) {
  {
    Graph graph("g");
    EXPECT_EQ(graph.SetNext(7, kEnd, false), -1);
    EXPECT_EQ(FinishError(graph), "graph 'g': node #7: does not exist (source of set_next)");
  }
  {
    Graph graph("g");
    EXPECT_EQ(graph.SetNext(kStart, -1, false), -1);
    EXPECT_EQ(FinishError(graph),
              "graph 'g': node 'start' (start): its successor node #-1 does not exist");
  }
  {
    Graph graph("g");
    EXPECT_EQ(graph.AddChild(9, kEnd, false), -1);
    EXPECT_EQ(FinishError(graph), "graph 'g': node #9: does not exist (branch of add_child)");
  }
  {
    Graph graph("g");
    const int branch = Branch(graph, "which");
    EXPECT_EQ(graph.AddChild(branch, 42, false), -1);
    EXPECT_EQ(FinishError(graph),
              "graph 'g': node 'which' (branch): its child node #42 does not exist");
  }
}

TEST(GraphBuilderTest, NoEdgeIntoTheStart) {
  Graph graph("g");
  const int read = Syscall(graph, "read");
  const int branch = Branch(graph, "which");
  EXPECT_EQ(graph.SetNext(read, kStart, false), -1);
  EXPECT_EQ(graph.AddChild(branch, kStart, false), -1);
  EXPECT_EQ(FinishError(graph),
            "graph 'g': node 'read' (syscall pread): no edge may lead to the start node");
}

TEST(GraphBuilderTest, InvalidCallType) {
  Graph graph("g");
  EXPECT_EQ(graph.AddSyscall("odd", FOREACTOR_CALL_TYPE_COUNT, ArgumentsNotYet, nullptr, nullptr),
            -1);
  EXPECT_EQ(graph.AddSyscall("odd", static_cast<foreactor_call_type>(31), ArgumentsNotYet, nullptr,
                             nullptr),
            -1);
  EXPECT_EQ(graph.node_count(), 2);
  EXPECT_EQ(FinishError(graph), "graph 'g': node 'odd': call type 18 is not a valid call type");
}

TEST(GraphBuilderTest, NothingChangesAfterFinish) {
  Graph graph("g");
  const int read = Syscall(graph, "read");
  graph.SetNext(kStart, read, false);
  graph.SetNext(read, kEnd, false);
  ASSERT_EQ(FinishError(graph), "");
  EXPECT_EQ(Syscall(graph, "late"), -1);
  EXPECT_EQ(Branch(graph, "late"), -1);
  EXPECT_EQ(graph.SetNext(read, read, false), -1);
  EXPECT_EQ(graph.AddChild(read, read, false), -1);
  EXPECT_EQ(graph.node_count(), 3);
  EXPECT_EQ(graph.node(read).next.to, kEnd);
  EXPECT_EQ(FinishError(graph), "");  // the first verdict stands
}

TEST(GraphBuilderTest, FinishAgainGivesTheFirstVerdict) {
  Graph graph("g");
  const int read = Syscall(graph, "read");
  graph.SetNext(kStart, read, false);
  const std::string first = FinishError(graph);
  EXPECT_EQ(first, "graph 'g': node 'read' (syscall pread): has no successor");
  EXPECT_EQ(graph.SetNext(read, kEnd, false), -1);  // too late to repair
  EXPECT_EQ(FinishError(graph), first);
  EXPECT_FALSE(graph.Finish(nullptr));  // a null error pointer is fine
}

// -------------------------------------------------------------------- loops

TEST(GraphLoopTest, DoWhileLoop) {
  Graph graph("scan");
  const int read = Syscall(graph, "read");
  const int more = Branch(graph, "more");
  graph.SetNext(kStart, read, false);
  graph.SetNext(read, more, false);
  Children(graph, more, {read, kEnd});
  ASSERT_EQ(FinishError(graph), "");
  ASSERT_EQ(graph.loop_count(), 1);
  EXPECT_EQ(graph.loop(0).header, read);
  EXPECT_EQ(graph.loop(0).branch, more);
  EXPECT_EQ(graph.loop(0).child, 0);
  EXPECT_EQ(graph.loop(0).parent, -1);
  EXPECT_EQ(graph.node(read).loops, std::vector<int>{0});
  EXPECT_EQ(graph.node(more).loops, std::vector<int>{0});
  EXPECT_TRUE(graph.node(kStart).loops.empty());
  EXPECT_TRUE(graph.node(kEnd).loops.empty());
  EXPECT_EQ(graph.node(more).children[0].closes_loop, 0);
  EXPECT_EQ(graph.node(more).children[0].reset_loops, 0u);
  EXPECT_EQ(graph.node(more).children[1].closes_loop, -1);
  EXPECT_EQ(graph.node(kStart).next.reset_loops, 1u);
  EXPECT_EQ(graph.node(read).next.reset_loops, 0u);
  EXPECT_EQ(Walk(graph, {0, 0, 1}), (std::vector<std::string>{"read[0]", "more[0]", "read[1]",
                                                              "more[1]", "read[2]", "more[2]"}));
}

// for each file: open; do { read } while (more); close; while (more files)
TEST(GraphLoopTest, NestedLoopsResetTheInnerCounter) {
  Graph graph("copy");
  const int open = Syscall(graph, "open", FOREACTOR_CALL_OPEN);
  const int read = Syscall(graph, "read");
  const int more_data = Branch(graph, "more_data");
  const int close = Syscall(graph, "close", FOREACTOR_CALL_CLOSE);
  const int more_files = Branch(graph, "more_files");
  graph.SetNext(kStart, open, false);
  graph.SetNext(open, read, false);
  graph.SetNext(read, more_data, false);
  Children(graph, more_data, {read, close});
  graph.SetNext(close, more_files, false);
  Children(graph, more_files, {open, kEnd});
  ASSERT_EQ(FinishError(graph), "");
  ASSERT_EQ(graph.loop_count(), 2);
  // Outer loops come first.
  EXPECT_EQ(graph.loop(0).header, open);
  EXPECT_EQ(graph.loop(0).parent, -1);
  EXPECT_EQ(graph.loop(1).header, read);
  EXPECT_EQ(graph.loop(1).parent, 0);
  EXPECT_EQ(graph.node(open).loops, std::vector<int>{0});
  EXPECT_EQ(graph.node(read).loops, (std::vector<int>{0, 1}));
  EXPECT_EQ(graph.node(more_data).loops, (std::vector<int>{0, 1}));
  EXPECT_EQ(graph.node(close).loops, std::vector<int>{0});
  EXPECT_EQ(graph.node(open).next.reset_loops, 2u);  // enters the inner loop afresh
  EXPECT_EQ(graph.node(more_files).children[0].closes_loop, 0);
  EXPECT_EQ(graph.node(more_data).children[0].closes_loop, 1);
  // Three reads of the first file, one of the second, two of the third.
  EXPECT_EQ(
      Walk(graph, {0, 0, 1, 0, 1, 0, 0, 1, 1}),
      (std::vector<std::string>{
          "open[0]",      "read[0,0]",      "more_data[0,0]", "read[0,1]",      "more_data[0,1]",
          "read[0,2]",    "more_data[0,2]", "close[0]",       "more_files[0]",  "open[1]",
          "read[1,0]",    "more_data[1,0]", "close[1]",       "more_files[1]",  "open[2]",
          "read[2,0]",    "more_data[2,0]", "read[2,1]",      "more_data[2,1]", "close[2]",
          "more_files[2]"}));
}

// Three levels, a loop headed by a branch node, and an edge that leaves
// the innermost loop straight to the outermost loop's closing branch.
TEST(GraphLoopTest, ThreeLevelsWithBranchHeaderAndBreak) {
  Graph graph("deep");
  const int dir = Syscall(graph, "dir", FOREACTOR_CALL_GETDENTS64);  // outer header
  const int entry = Branch(graph, "entry");                          // middle header (a branch)
  const int stat = Syscall(graph, "stat", FOREACTOR_CALL_FSTATAT);
  const int block = Syscall(graph, "block");  // inner header
  const int more_blocks = Branch(graph, "more_blocks");
  const int more_entries = Branch(graph, "more_entries");
  const int more_dirs = Branch(graph, "more_dirs");
  graph.SetNext(kStart, dir, false);
  graph.SetNext(dir, entry, false);
  Children(graph, entry, {stat, more_dirs});  // child 1: directory done
  graph.SetNext(stat, block, false);
  graph.SetNext(block, more_blocks, false);
  // 0: next block, 1: next entry, 2: stop reading this directory at once
  Children(graph, more_blocks, {block, more_entries, more_dirs});
  Children(graph, more_entries, {entry});
  Children(graph, more_dirs, {dir, kEnd});
  ASSERT_EQ(FinishError(graph), "");
  ASSERT_EQ(graph.loop_count(), 3);
  EXPECT_EQ(graph.loop(0).header, dir);
  EXPECT_EQ(graph.loop(1).header, entry);
  EXPECT_EQ(graph.loop(2).header, block);
  EXPECT_EQ(graph.loop(1).parent, 0);
  EXPECT_EQ(graph.loop(2).parent, 1);
  EXPECT_EQ(graph.node(block).loops, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(graph.node(more_dirs).loops, std::vector<int>{0});
  EXPECT_EQ(graph.node(more_blocks).children[2].closes_loop, -1);

  const std::vector<std::string> visits = Walk(graph, {
                                                          0,        // entry: an entry
                                                          0, 1, 0,  // two blocks, next entry
                                                          0,        // entry: an entry
                                                          2,  // one block, then stop this directory
                                                          0,  // next directory
                                                          0,  // entry: an entry
                                                          0, 0, 1,  // three blocks, next entry
                                                          0,
                                                          1,  // entry: directory done
                                                          1,  // no more directories
                                                      });
  EXPECT_EQ(visits, (std::vector<std::string>{"dir[0]",
                                              "entry[0,0]",
                                              "stat[0,0]",
                                              "block[0,0,0]",
                                              "more_blocks[0,0,0]",
                                              "block[0,0,1]",
                                              "more_blocks[0,0,1]",
                                              "more_entries[0,0]",
                                              "entry[0,1]",
                                              "stat[0,1]",
                                              "block[0,1,0]",
                                              "more_blocks[0,1,0]",
                                              "more_dirs[0]",
                                              "dir[1]",
                                              "entry[1,0]",
                                              "stat[1,0]",
                                              "block[1,0,0]",
                                              "more_blocks[1,0,0]",
                                              "block[1,0,1]",
                                              "more_blocks[1,0,1]",
                                              "block[1,0,2]",
                                              "more_blocks[1,0,2]",
                                              "more_entries[1,0]",
                                              "entry[1,1]",
                                              "more_dirs[1]"}));
}

TEST(GraphLoopTest, SiblingLoopsEachStartAtZero) {
  Graph graph("two");
  BuildSequentialLoops(graph, 2);
  ASSERT_EQ(FinishError(graph), "");
  ASSERT_EQ(graph.loop_count(), 2);
  EXPECT_EQ(graph.loop(0).parent, -1);
  EXPECT_EQ(graph.loop(1).parent, -1);
  EXPECT_EQ(Walk(graph, {0, 1, 0, 0, 1}),
            (std::vector<std::string>{"r0[0]", "b0[0]", "r0[1]", "b0[1]", "r1[0]", "b1[0]", "r1[1]",
                                      "b1[1]", "r1[2]", "b1[2]"}));
}

// A loop whose header is entered from two places outside it, and a loop
// exited from two places: the counter restarts on every entry.
TEST(GraphLoopTest, LoopEnteredFromTwoPlacesRestartsEachTime) {
  Graph graph("g");
  const int first = Branch(graph, "first");
  const int a = Syscall(graph, "a");
  const int b = Syscall(graph, "b");
  const int head = Syscall(graph, "head");
  const int tail = Branch(graph, "tail");
  const int again = Branch(graph, "again");
  graph.SetNext(kStart, first, false);
  Children(graph, first, {a, b});
  graph.SetNext(a, head, false);
  graph.SetNext(b, head, false);
  graph.SetNext(head, tail, false);
  Children(graph, tail, {head, again});
  Children(graph, again, {first, kEnd});
  ASSERT_EQ(FinishError(graph), "");
  ASSERT_EQ(graph.loop_count(), 2);
  EXPECT_EQ(graph.loop(0).header, first);
  EXPECT_EQ(graph.loop(1).header, head);
  EXPECT_EQ(graph.node(a).next.reset_loops, 2u);
  EXPECT_EQ(graph.node(b).next.reset_loops, 2u);
  EXPECT_EQ(Walk(graph, {0, 0, 1, 0, 1, 1, 1}),
            (std::vector<std::string>{"first[0]", "a[0]", "head[0,0]", "tail[0,0]", "head[0,1]",
                                      "tail[0,1]", "again[0]", "first[1]", "b[1]", "head[1,0]",
                                      "tail[1,0]", "again[1]"}));
}

// ------------------------------------------------------------- weak edges

TEST(GraphTest, WeakEdgesAreKept) {
  Graph graph("g");
  const int read = Syscall(graph, "read");
  const int more = Branch(graph, "more");
  graph.SetNext(kStart, read, false);
  graph.SetNext(read, more, true);
  graph.AddChild(more, read, false);
  graph.AddChild(more, kEnd, true);
  ASSERT_EQ(FinishError(graph), "");
  EXPECT_FALSE(graph.node(kStart).next.weak);
  EXPECT_TRUE(graph.node(read).next.weak);
  EXPECT_FALSE(graph.node(more).children[0].weak);
  EXPECT_TRUE(graph.node(more).children[1].weak);
}

// ------------------------------------------------------------ write-behind

TEST(GraphWriteBehindTest, WriteNodesMayDeclareIt) {
  Graph graph("load");
  const int pwrite = Syscall(graph, "pwrite", FOREACTOR_CALL_PWRITE);
  const int write = Syscall(graph, "write", FOREACTOR_CALL_WRITE);
  const int writev = Syscall(graph, "writev", FOREACTOR_CALL_WRITEV);
  const int pwritev = Syscall(graph, "pwritev", FOREACTOR_CALL_PWRITEV);
  graph.SetNext(kStart, pwrite, false);
  graph.SetNext(pwrite, write, false);
  graph.SetNext(write, writev, false);
  graph.SetNext(writev, pwritev, false);
  graph.SetNext(pwritev, kEnd, false);
  EXPECT_EQ(graph.SetWriteBehind(pwrite), 0);
  EXPECT_EQ(graph.SetWriteBehind(writev), 0);
  ASSERT_EQ(FinishError(graph), "");
  EXPECT_TRUE(graph.has_write_behind());
  EXPECT_TRUE(graph.node(pwrite).write_behind);
  EXPECT_FALSE(graph.node(write).write_behind);
  EXPECT_TRUE(graph.node(writev).write_behind);
  EXPECT_FALSE(graph.node(pwritev).write_behind);
}

TEST(GraphWriteBehindTest, AGraphWithoutItSaysSo) {
  Graph graph("scan");
  const int read = Syscall(graph, "read");
  graph.SetNext(kStart, read, false);
  graph.SetNext(read, kEnd, false);
  ASSERT_EQ(FinishError(graph), "");
  EXPECT_FALSE(graph.has_write_behind());
}

TEST(GraphWriteBehindTest, OnANodeThatWritesNothingItMakesTheGraphInvalid) {
  Graph graph("scan");
  const int read = Syscall(graph, "read_leaf");
  graph.SetNext(kStart, read, false);
  graph.SetNext(read, kEnd, false);
  EXPECT_EQ(graph.SetWriteBehind(read), -1);
  EXPECT_EQ(FinishError(graph),
            "graph 'scan': node 'read_leaf' (syscall pread): write-behind is only for write, "
            "pwrite, writev and pwritev nodes");
}

TEST(GraphWriteBehindTest, OnABranchOrAMissingNodeItMakesTheGraphInvalid) {
  Graph branch_graph("g");
  const int more = Branch(branch_graph, "more");
  EXPECT_EQ(branch_graph.SetWriteBehind(more), -1);
  EXPECT_NE(FinishError(branch_graph).find("write-behind is only for"), std::string::npos);
  Graph missing_graph("h");
  EXPECT_EQ(missing_graph.SetWriteBehind(42), -1);
  EXPECT_NE(FinishError(missing_graph).find("does not exist (node of set_write_behind)"),
            std::string::npos);
}

TEST(GraphWriteBehindTest, AFinishedGraphRefusesIt) {
  Graph graph("load");
  const int write = Syscall(graph, "write_leaf", FOREACTOR_CALL_PWRITE);
  graph.SetNext(kStart, write, false);
  graph.SetNext(write, kEnd, false);
  ASSERT_EQ(FinishError(graph), "");
  EXPECT_EQ(graph.SetWriteBehind(write), -1);
  EXPECT_FALSE(graph.node(write).write_behind);
  EXPECT_TRUE(graph.valid());
}

TEST(GraphWriteBehindTest, TheCApiDeclaresItAndTheDotPictureShowsIt) {
  foreactor_graph* graph = foreactor_graph_create("load");
  ASSERT_NE(graph, nullptr);
  const int write = foreactor_graph_add_syscall(graph, "write_leaf", FOREACTOR_CALL_PWRITE,
                                                ArgumentsNotYet, nullptr, nullptr);
  ASSERT_GE(write, 0);
  EXPECT_EQ(foreactor_graph_set_write_behind(graph, write), 0);
  EXPECT_EQ(foreactor_graph_set_write_behind(nullptr, write), -1);
  foreactor_graph_set_next(graph, kStart, write, 0);
  foreactor_graph_set_next(graph, write, kEnd, 0);
  ASSERT_EQ(foreactor_graph_finish(graph, nullptr, 0), 0);
  const std::string dot = graph->graph.Dot();
  EXPECT_NE(dot.find("[shape=box, label=\"write_leaf\\npwrite\", xlabel=\"write-behind\"];"),
            std::string::npos)
      << dot;
  foreactor_graph_destroy(graph);
}

// -------------------------------------------------------------------- DOT

std::string DotOf(const Graph& graph) { return graph.Dot(); }

TEST(GraphDotTest, DrawsNodesEdgesWeaknessAndLoops) {
  Graph graph("scan");
  const int read = Syscall(graph, "read_leaf");
  const int more = Branch(graph, "more");
  graph.SetNext(kStart, read, false);
  graph.SetNext(read, more, true);
  Children(graph, more, {read, kEnd});
  ASSERT_EQ(FinishError(graph), "");
  EXPECT_EQ(DotOf(graph),
            "digraph \"scan\" {\n"
            "  n0 [shape=circle, width=0.25, fixedsize=true, label=\"\", xlabel=\"start\"];\n"
            "  n1 [shape=circle, width=0.25, fixedsize=true, label=\"\", xlabel=\"end\", "
            "peripheries=2];\n"
            "  n2 [shape=box, label=\"read_leaf\\npread\"];\n"
            "  n3 [shape=diamond, label=\"more\"];\n"
            "  n0 -> n2;\n"
            "  n2 -> n3 [style=dashed];\n"
            "  n3 -> n2 [label=\"0: loop 0\"];\n"
            "  n3 -> n1 [label=\"1\"];\n"
            "}\n");
}

TEST(GraphDotTest, EscapesNamesAndLabelsLoopsByNumber) {
  Graph graph("copy");
  const int open = Syscall(graph, "open \"in\"", FOREACTOR_CALL_OPEN);
  const int read = Syscall(graph, "read\\x");
  const int more_data = Branch(graph, "more_data");
  const int more_files = Branch(graph, "more_files");
  graph.SetNext(kStart, open, false);
  graph.SetNext(open, read, false);
  graph.SetNext(read, more_data, false);
  Children(graph, more_data, {read, more_files});
  Children(graph, more_files, {kEnd, open});
  ASSERT_EQ(FinishError(graph), "");
  const std::string dot = DotOf(graph);
  EXPECT_NE(dot.find("n2 [shape=box, label=\"open \\\"in\\\"\\nopen\"];"), std::string::npos)
      << dot;
  EXPECT_NE(dot.find("n3 [shape=box, label=\"read\\\\x\\npread\"];"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n4 -> n3 [label=\"0: loop 1\"];"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n5 -> n2 [label=\"1: loop 0\"];"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n5 -> n1 [label=\"0\"];"), std::string::npos) << dot;
}

TEST(GraphDotTest, InvalidGraphIsDrawnWithoutLoops) {
  Graph graph("g");
  const int read = Syscall(graph, "read");
  graph.SetNext(kStart, read, false);
  ASSERT_NE(FinishError(graph), "");
  const std::string dot = DotOf(graph);
  EXPECT_NE(dot.find("n2 [shape=box, label=\"read\\npread\"];"), std::string::npos) << dot;
  EXPECT_EQ(dot.find("loop"), std::string::npos) << dot;
}

// ------------------------------------------------------------------ C API

// Reads everything written to `file` from its beginning.
std::string ReadAll(FILE* file) {
  std::rewind(file);
  std::string text;
  char buffer[256];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, got);
  return text;
}

TEST(GraphCApiTest, RoundTrip) {
  foreactor_graph* graph = foreactor_graph_create("scan");
  ASSERT_NE(graph, nullptr);
  EXPECT_STREQ(foreactor_graph_name(graph), "scan");
  int data = 7;
  const int read = foreactor_graph_add_syscall(graph, "read_leaf", FOREACTOR_CALL_PREAD,
                                               ArgumentsNotYet, IgnoreResult, &data);
  const int more = foreactor_graph_add_branch(graph, "more", ChoiceNotYet, &data);
  EXPECT_EQ(read, 2);
  EXPECT_EQ(more, 3);
  EXPECT_EQ(foreactor_graph_set_next(graph, FOREACTOR_START_NODE, read, 0), 0);
  EXPECT_EQ(foreactor_graph_set_next(graph, read, more, 1), 0);
  EXPECT_EQ(foreactor_graph_add_child(graph, more, read, 0), 0);
  EXPECT_EQ(foreactor_graph_add_child(graph, more, FOREACTOR_END_NODE, 0), 1);
  EXPECT_EQ(foreactor_graph_write_dot(graph, stdout), -1);  // not finished yet
  char error[256] = "untouched";
  EXPECT_EQ(foreactor_graph_finish(graph, error, sizeof error), 0);
  EXPECT_STREQ(error, "");
  EXPECT_TRUE(graph->graph.valid());
  EXPECT_EQ(graph->graph.node(read).node_data, &data);
  EXPECT_TRUE(graph->graph.node(read).next.weak);
  EXPECT_EQ(foreactor_graph_add_branch(graph, "late", ChoiceNotYet, nullptr), -1);

  FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(foreactor_graph_write_dot(graph, file), 0);
  EXPECT_EQ(ReadAll(file), DotOf(graph->graph));
  std::fclose(file);
  foreactor_graph_destroy(graph);
}

TEST(GraphCApiTest, FinishErrorText) {
  foreactor_graph* graph = foreactor_graph_create("scan");
  ASSERT_NE(graph, nullptr);
  const int read = foreactor_graph_add_syscall(graph, "read_leaf", FOREACTOR_CALL_PREAD,
                                               ArgumentsNotYet, nullptr, nullptr);
  foreactor_graph_set_next(graph, FOREACTOR_START_NODE, read, 0);
  const std::string expected = "graph 'scan': node 'read_leaf' (syscall pread): has no successor";
  char error[256];
  EXPECT_EQ(foreactor_graph_finish(graph, error, sizeof error), -1);
  EXPECT_EQ(std::string(error), expected);
  // Truncated to the buffer, always NUL-terminated; a second call repeats it.
  char small[11];
  std::memset(small, 'x', sizeof small);
  EXPECT_EQ(foreactor_graph_finish(graph, small, sizeof small), -1);
  EXPECT_EQ(std::string(small), expected.substr(0, 10));
  EXPECT_EQ(foreactor_graph_finish(graph, nullptr, 0), -1);
  // An invalid but finished graph can still be drawn.
  FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(foreactor_graph_write_dot(graph, file), 0);
  EXPECT_NE(ReadAll(file).find("read_leaf"), std::string::npos);
  std::fclose(file);
  foreactor_graph_destroy(graph);
}

TEST(GraphCApiTest, BuilderErrorsReturnMinusOneAndAreReported) {
  foreactor_graph* graph = foreactor_graph_create("g");
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(foreactor_graph_add_syscall(graph, "odd", static_cast<foreactor_call_type>(25),
                                        ArgumentsNotYet, nullptr, nullptr),
            -1);
  EXPECT_EQ(foreactor_graph_set_next(graph, FOREACTOR_END_NODE, FOREACTOR_END_NODE, 0), -1);
  EXPECT_EQ(foreactor_graph_add_child(graph, FOREACTOR_START_NODE, FOREACTOR_END_NODE, 0), -1);
  char error[256];
  EXPECT_EQ(foreactor_graph_finish(graph, error, sizeof error), -1);
  EXPECT_STREQ(error, "graph 'g': node 'odd': call type 25 is not a valid call type");
  foreactor_graph_destroy(graph);
}

int64_t CountNotYet(const foreactor_visit*) { return FOREACTOR_COUNT_NOT_YET; }

// start -> read -> more -> read | end, with a loop count on `more`; a
// second syscall of `body_type` in the loop when it is not -1.
int CountedLoop(Graph& graph, int body_type = -1) {
  const int read = Syscall(graph, "read");
  int last = read;
  if (body_type >= 0) {
    last = Syscall(graph, "other", static_cast<foreactor_call_type>(body_type));
    graph.SetNext(read, last, false);
  }
  const int more = Branch(graph, "more");
  graph.SetNext(kStart, read, false);
  graph.SetNext(last, more, false);
  Children(graph, more, {read, kEnd});
  EXPECT_EQ(graph.SetLoopCount(more, CountNotYet), 0);
  return more;
}

TEST(GraphLoopCountTest, ALoopOfPreadsAloneIsCountedWithItsReadsPerIteration) {
  Graph graph("g");
  const int more = CountedLoop(graph, FOREACTOR_CALL_PREAD);
  ASSERT_EQ(FinishError(graph), "");
  ASSERT_EQ(graph.loop_count(), 1);
  EXPECT_EQ(graph.node(more).counted_loop, 0);
  EXPECT_EQ(graph.node(more).loop_count, &CountNotYet);
  EXPECT_EQ(graph.loop(0).preads_per_iteration, 2u);
}

TEST(GraphLoopCountTest, ALoopWithOtherCallsHasNoReadsPerIteration) {
  Graph graph("g");
  const int more = CountedLoop(graph, FOREACTOR_CALL_FSTAT);
  ASSERT_EQ(FinishError(graph), "");
  EXPECT_EQ(graph.node(more).counted_loop, 0);
  EXPECT_EQ(graph.loop(0).preads_per_iteration, 0u);
}

TEST(GraphLoopCountTest, AnUncountedLoopIsStillMeasured) {
  Graph graph("g");
  const int read = Syscall(graph, "read");
  const int more = Branch(graph, "more");
  graph.SetNext(kStart, read, false);
  graph.SetNext(read, more, false);
  Children(graph, more, {read, kEnd});
  ASSERT_EQ(FinishError(graph), "");
  EXPECT_EQ(graph.node(more).counted_loop, -1);
  EXPECT_EQ(graph.loop(0).preads_per_iteration, 1u);
}

TEST(GraphLoopCountTest, ACountOnABranchThatClosesNoLoopIsRejected) {
  Graph graph("g");
  const int read = Syscall(graph, "read");
  const int which = Branch(graph, "which");
  graph.SetNext(kStart, which, false);
  Children(graph, which, {read, kEnd});
  graph.SetNext(read, kEnd, false);
  EXPECT_EQ(graph.SetLoopCount(which, CountNotYet), 0);
  EXPECT_EQ(FinishError(graph),
            "graph 'g': node 'which' (branch): has a loop count but closes no loop (a loop "
            "count needs a branch that closes exactly one)");
}

TEST(GraphLoopCountTest, ACountOnABranchThatClosesTwoLoopsIsRejected) {
  // start -> a -> b -> more -> a | b | end: `more` closes the loops headed
  // by a and by b.
  Graph graph("g");
  const int a = Syscall(graph, "a");
  const int b = Syscall(graph, "b");
  const int more = Branch(graph, "more");
  graph.SetNext(kStart, a, false);
  graph.SetNext(a, b, false);
  graph.SetNext(b, more, false);
  Children(graph, more, {a, b, kEnd});
  EXPECT_EQ(graph.SetLoopCount(more, CountNotYet), 0);
  EXPECT_EQ(FinishError(graph),
            "graph 'g': node 'more' (branch): has a loop count but closes 2 loops (a loop count "
            "needs a branch that closes exactly one)");
}

TEST(GraphLoopCountTest, ACountIsOnlyForBranchNodesAndNeedsACallback) {
  Graph graph("g");
  const int read = Syscall(graph, "read");
  EXPECT_EQ(graph.SetLoopCount(read, CountNotYet), -1);
  EXPECT_EQ(FinishError(graph),
            "graph 'g': node 'read' (syscall pread): a loop count is only for branch nodes");

  Graph null_count("h");
  const int more = Branch(null_count, "more");
  EXPECT_EQ(null_count.SetLoopCount(more, nullptr), -1);
  EXPECT_EQ(null_count.SetLoopCount(99, CountNotYet), -1);
  EXPECT_EQ(FinishError(null_count),
            "graph 'h': node 'more' (branch): its loop count callback is NULL");
}

TEST(GraphLoopCountTest, TheCApiSetsTheCount) {
  foreactor_graph* graph = foreactor_graph_create("g");
  ASSERT_NE(graph, nullptr);
  const int read = foreactor_graph_add_syscall(graph, "read", FOREACTOR_CALL_PREAD, ArgumentsNotYet,
                                               nullptr, nullptr);
  const int more = foreactor_graph_add_branch(graph, "more", ChoiceNotYet, nullptr);
  foreactor_graph_set_next(graph, FOREACTOR_START_NODE, read, 0);
  foreactor_graph_set_next(graph, read, more, 0);
  foreactor_graph_add_child(graph, more, read, 0);
  foreactor_graph_add_child(graph, more, FOREACTOR_END_NODE, 0);
  EXPECT_EQ(foreactor_graph_set_loop_count(nullptr, more, CountNotYet), -1);
  EXPECT_EQ(foreactor_graph_set_loop_count(graph, more, CountNotYet), 0);
  ASSERT_EQ(foreactor_graph_finish(graph, nullptr, 0), 0);
  EXPECT_EQ(graph->graph.node(more).counted_loop, 0);
  EXPECT_EQ(foreactor_graph_set_loop_count(graph, more, CountNotYet), -1);  // finished
  foreactor_graph_destroy(graph);
}

TEST(GraphCApiTest, NullArguments) {
  foreactor_graph* unnamed = foreactor_graph_create(nullptr);
  ASSERT_NE(unnamed, nullptr);
  EXPECT_STREQ(foreactor_graph_name(unnamed), "");
  foreactor_graph_set_next(unnamed, FOREACTOR_START_NODE, FOREACTOR_END_NODE, 0);
  EXPECT_EQ(foreactor_graph_finish(unnamed, nullptr, 0), -1);  // a name is required
  foreactor_graph_destroy(unnamed);

  foreactor_graph_destroy(nullptr);
  EXPECT_EQ(foreactor_graph_add_syscall(nullptr, "x", FOREACTOR_CALL_PREAD, ArgumentsNotYet,
                                        nullptr, nullptr),
            -1);
  EXPECT_EQ(foreactor_graph_add_branch(nullptr, "x", ChoiceNotYet, nullptr), -1);
  EXPECT_EQ(foreactor_graph_set_next(nullptr, 0, 1, 0), -1);
  EXPECT_EQ(foreactor_graph_add_child(nullptr, 0, 1, 0), -1);
  char error[64];
  EXPECT_EQ(foreactor_graph_finish(nullptr, error, sizeof error), -1);
  EXPECT_STREQ(error, "foreactor_graph_finish: the graph is NULL");
  EXPECT_EQ(foreactor_graph_write_dot(nullptr, stdout), -1);

  foreactor_graph* graph = foreactor_graph_create("g");
  ASSERT_NE(graph, nullptr);
  foreactor_graph_set_next(graph, FOREACTOR_START_NODE, FOREACTOR_END_NODE, 0);
  ASSERT_EQ(foreactor_graph_finish(graph, nullptr, 0), 0);
  EXPECT_EQ(foreactor_graph_write_dot(graph, nullptr), -1);
  foreactor_graph_destroy(graph);
}

}  // namespace
}  // namespace foreactor
