// graph.h: a foreaction graph, its validation and its DOT picture.
//
// A Graph is built node by node (AddSyscall, AddBranch, SetNext, AddChild),
// then Finish() validates it and computes what the runtime needs: the loops,
// which loops enclose each node, and per edge which loop counters it resets
// and which it advances.  A finished graph is immutable.
#ifndef FOREACTOR_GRAPH_GRAPH_H_
#define FOREACTOR_GRAPH_GRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "foreactor/foreactor.h"

namespace foreactor {

enum class NodeKind : unsigned char { kStart, kEnd, kSyscall, kBranch };

// A directed edge.  Following it means: set the iteration counter of every
// loop in `reset_loops` to 0 (loops being entered afresh), then, if
// `closes_loop` >= 0, add one to that loop's counter (the back edge of that
// loop).
struct Edge {
  int to = -1;
  bool weak = false;
  int closes_loop = -1;      // set by Finish()
  uint32_t reset_loops = 0;  // bit i: loop i; set by Finish()
};

struct Node {
  NodeKind kind = NodeKind::kSyscall;
  std::string name;
  foreactor_call_type call_type = FOREACTOR_CALL_PREAD;  // syscall nodes
  foreactor_arguments_fn arguments = nullptr;            // syscall nodes
  foreactor_result_fn result = nullptr;                  // syscall nodes, optional
  foreactor_choice_fn choice = nullptr;                  // branch nodes
  // Branch nodes, optional: foreactor_graph_set_loop_count.
  foreactor_count_fn loop_count = nullptr;
  bool write_behind = false;  // write-family syscall nodes: foreactor_graph_set_write_behind
  void* node_data = nullptr;
  Edge next;                   // start and syscall nodes
  std::vector<Edge> children;  // branch nodes

  // Set by Finish():
  std::vector<int> loops;  // enclosing loops, outermost first
  int dense_index = -1;    // index among nodes of the same kind (syscall or branch)
  int counted_loop = -1;   // branch nodes with a loop count: the loop they close
};

// A loop is closed by one back edge: child `child` of branch node `branch`
// pointing at `header`.  Its body is every node from which `branch` can be
// reached without passing through `header`, plus `header`.
struct Loop {
  int header = -1;
  int branch = -1;
  int child = -1;
  int parent = -1;  // innermost enclosing loop, or -1
  // When every node of the body but `branch` is a pread node, so that each
  // iteration is the same run of preads: how many; otherwise 0.
  unsigned preads_per_iteration = 0;
};

class Graph {
 public:
  explicit Graph(std::string name);

  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Builders: see foreactor.h for their contracts.  Errors (bad node id,
  // second successor, adding after Finish) return -1 and are remembered;
  // Finish() then fails with the first of them.
  int AddSyscall(const char* name, foreactor_call_type type, foreactor_arguments_fn arguments,
                 foreactor_result_fn result, void* node_data);
  int AddBranch(const char* name, foreactor_choice_fn choice, void* node_data);
  int SetNext(int from, int to, bool weak);
  int AddChild(int branch, int to, bool weak);
  int SetWriteBehind(int node);
  int SetLoopCount(int branch, foreactor_count_fn count);
  int SetFollowsFromLookAhead();

  // Validates and freezes the graph.  Returns true when valid; otherwise
  // false with `*error` naming the graph, the node and the rule, e.g.
  //   graph 'scan': node 'read_leaf' (syscall pread): has no successor
  // Rules checked: the start node has a successor; every syscall node has
  // one successor and an arguments callback; every branch node has a choice
  // callback and at least one child; every node is reachable from the
  // start; the end is reachable from every node; every cycle is closed by a
  // branch child (a back edge from a syscall or start node is an error); a
  // loop is entered only through its header; no two loops share a header;
  // every loop contains a syscall node; at most FOREACTOR_MAX_LOOPS loops;
  // a branch with a loop count closes exactly one loop.
  // Calling Finish() again returns the first verdict.
  bool Finish(std::string* error);

  bool finished() const { return finished_; }
  bool valid() const { return valid_; }
  const std::string& name() const { return name_; }

  // The graph in Graphviz DOT form: syscall nodes as boxes labelled with
  // name and type, branch nodes as diamonds, weak edges dashed, back edges
  // labelled with their loop; a node that declares write-behind carries
  // the outside label "write-behind".
  std::string Dot() const;

  int node_count() const { return static_cast<int>(nodes_.size()); }
  const Node& node(int id) const { return nodes_[id]; }
  int loop_count() const { return static_cast<int>(loops_.size()); }
  const Loop& loop(int id) const { return loops_[id]; }
  int syscall_count() const { return syscall_count_; }
  int branch_count() const { return branch_count_; }
  // True when some syscall node declares write-behind.
  bool has_write_behind() const { return has_write_behind_; }
  // True when the graph's scopes follow the program from the plugin's
  // first look-ahead on (foreactor_graph_follow_from_look_ahead).
  bool follows_from_look_ahead() const { return follows_from_look_ahead_; }
  // True when some node that reads data is followed directly by a node that
  // writes data (a copy loop, whose writes a write pipeline may run).
  bool copies_data() const;

  // Process-wide dense id of this graph, assigned at construction; the
  // runtime uses it to index per-thread instance tables without hashing.
  int id() const { return id_; }

 private:
  bool Fail(std::string message);
  // Sets Loop::preads_per_iteration and Node::counted_loop once the loops
  // are known; false (the error recorded) for a loop count on a branch
  // that does not close exactly one loop.
  bool AnnotateLoopCounts();
  // True when `to` may be the target of an edge from `from` (it exists and
  // is not the start node); otherwise records the error, naming the edge's
  // `role` ("successor", "child"), and returns false.
  bool CheckEdgeTarget(int from, int to, const char* role);
  std::string Describe(int node) const;

  std::string name_;
  std::vector<Node> nodes_;
  std::vector<Loop> loops_;
  std::string first_error_;
  int syscall_count_ = 0;
  int branch_count_ = 0;
  int id_ = -1;
  bool has_write_behind_ = false;
  bool follows_from_look_ahead_ = false;
  bool finished_ = false;
  bool valid_ = false;
};

}  // namespace foreactor

#endif  // FOREACTOR_GRAPH_GRAPH_H_
