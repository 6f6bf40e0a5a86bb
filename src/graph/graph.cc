// graph.cc: building, validating and drawing a foreaction graph.
//
// Finish() works in three stages, each of which may reject the graph:
//   1. local rules, node by node (successors, callbacks, children);
//   2. reachability: every node from the start, the end from every node;
//   3. loops: a depth-first search from the start finds the back edges (an
//      edge to a node still on the search stack); each back edge must be a
//      branch child and closes one natural loop, whose body is its header
//      plus every node that reaches the closing branch without passing the
//      header.  Each body must be entered only through its header, and two
//      bodies must nest or be disjoint.
// Only when all of them pass are the loops, the per-node loop lists and the
// per-edge counter actions written into the graph.
#include "graph/graph.h"

#include <algorithm>
#include <atomic>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "base/call_types.h"
#include "base/out_of_memory.h"

namespace foreactor {
namespace {

std::atomic<int> next_graph_id{0};

// True for names made of letters, digits and '_' (at least one character).
bool IsValidGraphName(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    const bool digit = c >= '0' && c <= '9';
    if (!letter && !digit && c != '_') return false;
  }
  return true;
}

// "node 'read_leaf' (syscall pread)", "node #7 (branch)", "node #12".
std::string DescribeNode(const std::vector<Node>& nodes, int id) {
  if (id < 0 || id >= static_cast<int>(nodes.size())) return "node #" + std::to_string(id);
  const Node& node = nodes[id];
  std::string text = node.name.empty() ? "node #" + std::to_string(id) : "node '" + node.name + "'";
  switch (node.kind) {
    case NodeKind::kStart:
      return text + " (start)";
    case NodeKind::kEnd:
      return text + " (end)";
    case NodeKind::kSyscall:
      return text + " (syscall " + InfoOf(node.call_type).name + ")";
    case NodeKind::kBranch:
      return text + " (branch)";
  }
  return text;
}

// Remembers that a builder ran out of memory.  Never throws: if even the
// message cannot be built, a short one that needs no allocation is kept.
void RememberOutOfMemory(const std::string& graph_name, std::string* first_error) noexcept {
  if (!first_error->empty()) return;
  if (!AllocationSucceeds([&] {
        *first_error = "graph '" + graph_name + "': out of memory while building the graph";
      })) {
    *first_error = "out of memory";  // fits the string's inline storage
  }
}

// Runs one step of building the graph and returns its answer, or -1 after
// remembering that the builder ran out of memory.
template <typename Step>
int RunBuildStep(const std::string& graph_name, std::string* first_error, Step&& step) noexcept {
  int answer = -1;
  if (!AllocationSucceeds([&] { answer = step(); })) RememberOutOfMemory(graph_name, first_error);
  return answer;
}

// One outgoing edge of a node, as the analysis sees it.
struct OutEdge {
  int to;
  int child;  // child index for branch nodes, -1 for the successor of start/syscall nodes
};

// One incoming edge of a node.
struct InEdge {
  int from;
  int child;
};

// What the loop analysis finds about one loop.
struct LoopFacts {
  Loop loop;
  int header_preorder = 0;  // position of the header in the search; sorts outer loops first
  std::vector<bool> body;   // indexed by node id
  int body_size = 0;
};

// Checks a graph's structure and finds its loops.  Reads the nodes only;
// every method returns false with `error()` set (without the "graph 'x': "
// prefix) at the first rule broken.
class GraphAnalysis {
 public:
  explicit GraphAnalysis(const std::vector<Node>& nodes) : nodes_(nodes) {
    const int count = static_cast<int>(nodes.size());
    successors_.resize(count);
    predecessors_.resize(count);
    for (int id = 0; id < count; ++id) {
      const Node& node = nodes[id];
      if (node.kind == NodeKind::kStart || node.kind == NodeKind::kSyscall) {
        if (node.next.to >= 0) AddEdge(id, node.next.to, -1);
      } else if (node.kind == NodeKind::kBranch) {
        for (int child = 0; child < static_cast<int>(node.children.size()); ++child) {
          AddEdge(id, node.children[child].to, child);
        }
      }
    }
  }

  const std::string& error() const { return error_; }

  // Successors, callbacks and children, node by node in id order.
  bool CheckLocalRules() {
    for (int id = 0; id < static_cast<int>(nodes_.size()); ++id) {
      const Node& node = nodes_[id];
      switch (node.kind) {
        case NodeKind::kStart:
          if (node.next.to < 0) return FailAt(id, "has no successor");
          break;
        case NodeKind::kEnd:
          break;
        case NodeKind::kSyscall:
          if (node.arguments == nullptr) return FailAt(id, "has no arguments callback");
          if (node.next.to < 0) return FailAt(id, "has no successor");
          break;
        case NodeKind::kBranch:
          if (node.choice == nullptr) return FailAt(id, "has no choice callback");
          if (node.children.empty()) return FailAt(id, "has no children");
          break;
      }
    }
    return true;
  }

  // Every node is reachable from the start, and the end from every node.
  bool CheckReachability() {
    const std::vector<bool> from_start = Reach(FOREACTOR_START_NODE, /*forward=*/true);
    for (int id = 0; id < static_cast<int>(nodes_.size()); ++id) {
      if (!from_start[id]) return FailAt(id, "is not reachable from the start");
    }
    const std::vector<bool> to_end = Reach(FOREACTOR_END_NODE, /*forward=*/false);
    for (int id = 0; id < static_cast<int>(nodes_.size()); ++id) {
      if (!to_end[id]) return FailAt(id, "cannot reach the end");
    }
    return true;
  }

  // Finds and checks the loops.  Requires the two checks above to have
  // passed.  On success `loops()` holds them, outer loops before the loops
  // they enclose, with `parent` set.
  bool FindLoops() {
    if (!FindBackEdges()) return false;
    for (LoopFacts& facts : loops_) {
      if (!ComputeBody(&facts)) return false;
    }
    // Outer loops first: by header in search order, and for loops sharing a
    // header (a nested loop whose body starts at its outer loop's first
    // node), the larger body first.
    std::stable_sort(loops_.begin(), loops_.end(), [](const LoopFacts& a, const LoopFacts& b) {
      if (a.header_preorder != b.header_preorder) return a.header_preorder < b.header_preorder;
      return a.body_size > b.body_size;
    });
    if (!CheckSharedHeadersNest()) return false;
    for (const LoopFacts& facts : loops_) {
      if (!CheckHasSyscall(facts)) return false;
    }
    if (!CheckNesting()) return false;
    if (static_cast<int>(loops_.size()) > FOREACTOR_MAX_LOOPS) {
      return FailAt(loops_[FOREACTOR_MAX_LOOPS].loop.header,
                    "heads loop " + std::to_string(FOREACTOR_MAX_LOOPS + 1) +
                        ", but a graph may have at most " + std::to_string(FOREACTOR_MAX_LOOPS) +
                        " loops");
    }
    AssignParents();
    return true;
  }

  const std::vector<LoopFacts>& loops() const { return loops_; }

 private:
  void AddEdge(int from, int to, int child) {
    successors_[from].push_back(OutEdge{to, child});
    predecessors_[to].push_back(InEdge{from, child});
  }

  bool FailAt(int id, const std::string& rule) {
    error_ = DescribeNode(nodes_, id) + ": " + rule;
    return false;
  }

  std::vector<bool> Reach(int origin, bool forward) const {
    std::vector<bool> seen(nodes_.size(), false);
    std::vector<int> pending{origin};
    seen[origin] = true;
    while (!pending.empty()) {
      const int id = pending.back();
      pending.pop_back();
      auto visit = [&](int other) {
        if (!seen[other]) {
          seen[other] = true;
          pending.push_back(other);
        }
      };
      if (forward) {
        for (const OutEdge& edge : successors_[id]) visit(edge.to);
      } else {
        for (const InEdge& edge : predecessors_[id]) visit(edge.from);
      }
    }
    return seen;
  }

  // Depth-first search from the start, children in index order.  Every
  // edge to a node still on the stack is a back edge and starts a loop.
  bool FindBackEdges() {
    enum class Mark : unsigned char { kNew, kOnStack, kDone };
    std::vector<Mark> marks(nodes_.size(), Mark::kNew);
    preorder_.assign(nodes_.size(), -1);
    struct Frame {
      int node;
      size_t next_edge;
    };
    std::vector<Frame> stack{{FOREACTOR_START_NODE, 0}};
    marks[FOREACTOR_START_NODE] = Mark::kOnStack;
    int order = 0;
    preorder_[FOREACTOR_START_NODE] = order++;
    while (!stack.empty()) {
      Frame& frame = stack.back();
      if (frame.next_edge == successors_[frame.node].size()) {
        marks[frame.node] = Mark::kDone;
        stack.pop_back();
        continue;
      }
      const OutEdge edge = successors_[frame.node][frame.next_edge++];
      const int from = frame.node;
      if (marks[edge.to] == Mark::kNew) {
        marks[edge.to] = Mark::kOnStack;
        preorder_[edge.to] = order++;
        stack.push_back(Frame{edge.to, 0});  // invalidates `frame`
      } else if (marks[edge.to] == Mark::kOnStack) {
        if (nodes_[from].kind != NodeKind::kBranch) {
          return FailAt(from, "its edge to " + DescribeNode(nodes_, edge.to) +
                                  " closes a cycle, but only a branch child may close a loop");
        }
        LoopFacts facts;
        facts.loop.header = edge.to;
        facts.loop.branch = from;
        facts.loop.child = edge.child;
        loops_.push_back(std::move(facts));
      }
    }
    for (LoopFacts& facts : loops_) facts.header_preorder = preorder_[facts.loop.header];
    // A header comes before every node of its loop in the search, so this
    // puts each loop before the loops nested in it.
    std::stable_sort(loops_.begin(), loops_.end(), [](const LoopFacts& a, const LoopFacts& b) {
      return a.header_preorder < b.header_preorder;
    });
    return true;
  }

  // Two loops may share a header only when one body strictly contains the
  // other (for rows { for columns { read } }): the counters then tell the
  // loops apart.  Equal bodies would be one loop closed twice.
  bool CheckSharedHeadersNest() {
    for (size_t i = 1; i < loops_.size(); ++i) {
      const LoopFacts& first = loops_[i - 1];
      const LoopFacts& second = loops_[i];
      if (first.loop.header == second.loop.header && first.body == second.body) {
        return FailAt(first.loop.header, "heads two loops with the same body (closed by child " +
                                             std::to_string(first.loop.child) + " of " +
                                             DescribeNode(nodes_, first.loop.branch) +
                                             " and child " + std::to_string(second.loop.child) +
                                             " of " + DescribeNode(nodes_, second.loop.branch) +
                                             "), but loops sharing a header must nest");
      }
    }
    return true;
  }

  // Body: the header plus every node reaching the closing branch without
  // passing the header.  Then checks that the body is entered only through
  // the header (the header dominates the body).
  bool ComputeBody(LoopFacts* facts) {
    const int header = facts->loop.header;
    const int branch = facts->loop.branch;
    facts->body.assign(nodes_.size(), false);
    facts->body[header] = true;
    std::vector<int> pending;
    if (!facts->body[branch]) {
      facts->body[branch] = true;
      pending.push_back(branch);
    }
    while (!pending.empty()) {
      const int id = pending.back();
      pending.pop_back();
      for (const InEdge& edge : predecessors_[id]) {
        if (!facts->body[edge.from]) {
          facts->body[edge.from] = true;
          pending.push_back(edge.from);
        }
      }
    }
    facts->body_size = static_cast<int>(std::count(facts->body.begin(), facts->body.end(), true));
    // The body is closed under predecessors everywhere but at the header, so
    // the loop can be entered elsewhere exactly when the start is in it.
    if (!facts->body[FOREACTOR_START_NODE]) return true;
    // Name the edge where a path from the start joins the part of the body
    // that the header reaches.
    std::vector<bool> after_header(nodes_.size(), false);
    after_header[header] = true;
    pending.push_back(header);
    while (!pending.empty()) {
      const int id = pending.back();
      pending.pop_back();
      for (const OutEdge& edge : successors_[id]) {
        if (facts->body[edge.to] && !after_header[edge.to]) {
          after_header[edge.to] = true;
          pending.push_back(edge.to);
        }
      }
    }
    const std::string loop_name = "the loop headed by " + DescribeNode(nodes_, header);
    for (int id = 0; id < static_cast<int>(nodes_.size()); ++id) {
      if (!facts->body[id] || after_header[id]) continue;
      for (const OutEdge& edge : successors_[id]) {
        if (after_header[edge.to] && edge.to != header) {
          return FailAt(id, "its edge to " + DescribeNode(nodes_, edge.to) + " enters " +
                                loop_name + " without passing its header");
        }
      }
    }
    return FailAt(branch, "its child " + std::to_string(facts->loop.child) + " closes " +
                              loop_name + ", which can be entered without passing its header");
  }

  bool CheckHasSyscall(const LoopFacts& facts) {
    for (int id = 0; id < static_cast<int>(nodes_.size()); ++id) {
      if (facts.body[id] && nodes_[id].kind == NodeKind::kSyscall) return true;
    }
    return FailAt(facts.loop.header, "heads a loop that contains no syscall node");
  }

  static bool Contains(const LoopFacts& outer, const LoopFacts& inner) {
    for (size_t id = 0; id < inner.body.size(); ++id) {
      if (inner.body[id] && !outer.body[id]) return false;
    }
    return true;
  }

  static bool Overlap(const LoopFacts& a, const LoopFacts& b) {
    for (size_t id = 0; id < a.body.size(); ++id) {
      if (a.body[id] && b.body[id]) return true;
    }
    return false;
  }

  // Implied by the checks above (loops with distinct headers that dominate
  // their bodies nest or are disjoint); kept as a guard for the runtime,
  // whose per-loop counters rely on it.
  bool CheckNesting() {
    for (size_t i = 0; i < loops_.size(); ++i) {
      for (size_t j = i + 1; j < loops_.size(); ++j) {
        const LoopFacts& a = loops_[i];
        const LoopFacts& b = loops_[j];
        if (Overlap(a, b) && !Contains(a, b) && !Contains(b, a)) {
          return FailAt(b.loop.header, "heads a loop that overlaps the loop headed by " +
                                           DescribeNode(nodes_, a.loop.header) +
                                           " without nesting in it");
        }
      }
    }
    return true;
  }

  // The parent of a loop is the smallest other loop containing it.
  void AssignParents() {
    for (size_t i = 0; i < loops_.size(); ++i) {
      int parent = -1;
      for (size_t j = 0; j < loops_.size(); ++j) {
        if (i == j || !Contains(loops_[j], loops_[i])) continue;
        if (parent < 0 || loops_[j].body_size < loops_[parent].body_size) {
          parent = static_cast<int>(j);
        }
      }
      loops_[i].loop.parent = parent;
    }
  }

  const std::vector<Node>& nodes_;
  std::vector<std::vector<OutEdge>> successors_;
  std::vector<std::vector<InEdge>> predecessors_;
  std::vector<int> preorder_;
  std::vector<LoopFacts> loops_;
  std::string error_;
};

// Depth of a loop: 0 for an outermost loop.
int LoopDepth(const std::vector<Loop>& loops, int loop) {
  int depth = 0;
  for (int parent = loops[loop].parent; parent >= 0; parent = loops[parent].parent) ++depth;
  return depth;
}

// Sets what the runtime needs about loops on every node and edge:
// Node::loops (outermost first), Edge::closes_loop and Edge::reset_loops
// (the loops the edge enters afresh: loops of the target that the source is
// not in, or whose header the edge reaches without closing the loop).
void AnnotateLoops(const std::vector<LoopFacts>& facts, const std::vector<Loop>& loops,
                   std::vector<Node>* nodes) {
  const int loop_count = static_cast<int>(loops.size());
  auto annotate = [&](int from, int child, Edge* edge) {
    edge->closes_loop = -1;
    edge->reset_loops = 0;
    for (int loop = 0; loop < loop_count; ++loop) {
      if (loops[loop].branch == from && loops[loop].child == child) edge->closes_loop = loop;
    }
    for (int loop = 0; loop < loop_count; ++loop) {
      // A loop starts afresh when the edge enters its body from outside, or
      // when the edge closes an outer loop with the same header.
      const int closed = edge->closes_loop;
      const bool outer_closes_onto_header = closed >= 0 && closed != loop &&
                                            loops[closed].header == loops[loop].header &&
                                            facts[closed].body_size > facts[loop].body_size;
      if (facts[loop].body[edge->to] && (!facts[loop].body[from] || outer_closes_onto_header)) {
        edge->reset_loops |= uint32_t{1} << loop;
      }
    }
  };
  for (int id = 0; id < static_cast<int>(nodes->size()); ++id) {
    Node& node = (*nodes)[id];
    node.loops.clear();
    for (int loop = 0; loop < loop_count; ++loop) {
      if (facts[loop].body[id]) node.loops.push_back(loop);
    }
    std::stable_sort(node.loops.begin(), node.loops.end(),
                     [&loops](int a, int b) { return LoopDepth(loops, a) < LoopDepth(loops, b); });
    if (node.kind == NodeKind::kStart || node.kind == NodeKind::kSyscall) {
      annotate(id, -1, &node.next);
    } else if (node.kind == NodeKind::kBranch) {
      for (int child = 0; child < static_cast<int>(node.children.size()); ++child) {
        annotate(id, child, &node.children[child]);
      }
    }
  }
}

// Appends `text` to `out` as the inside of a DOT double-quoted string.
void AppendDotString(std::string& out, const std::string& text) {
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

}  // namespace

Graph::Graph(std::string name)
    : name_(std::move(name)), id_(next_graph_id.fetch_add(1, std::memory_order_relaxed)) {
  nodes_.resize(2);
  nodes_[FOREACTOR_START_NODE].kind = NodeKind::kStart;
  nodes_[FOREACTOR_START_NODE].name = "start";
  nodes_[FOREACTOR_END_NODE].kind = NodeKind::kEnd;
  nodes_[FOREACTOR_END_NODE].name = "end";
}

bool Graph::Fail(std::string message) {
  if (first_error_.empty()) first_error_ = "graph '" + name_ + "': " + message;
  return false;
}

std::string Graph::Describe(int node) const { return DescribeNode(nodes_, node); }

int Graph::AddSyscall(const char* name, foreactor_call_type type, foreactor_arguments_fn arguments,
                      foreactor_result_fn result, void* node_data) {
  if (finished_) return -1;
  return RunBuildStep(name_, &first_error_, [&]() -> int {
    const std::string node_name = name != nullptr ? name : "";
    if (!IsValidCallType(type)) {
      Fail("node '" + node_name + "': call type " + std::to_string(static_cast<int>(type)) +
           " is not a valid call type");
      return -1;
    }
    Node node;
    node.kind = NodeKind::kSyscall;
    node.name = node_name;
    node.call_type = type;
    node.arguments = arguments;
    node.result = result;
    node.node_data = node_data;
    nodes_.push_back(std::move(node));
    return static_cast<int>(nodes_.size()) - 1;
  });
}

int Graph::AddBranch(const char* name, foreactor_choice_fn choice, void* node_data) {
  if (finished_) return -1;
  return RunBuildStep(name_, &first_error_, [&]() -> int {
    Node node;
    node.kind = NodeKind::kBranch;
    node.name = name != nullptr ? name : "";
    node.choice = choice;
    node.node_data = node_data;
    nodes_.push_back(std::move(node));
    return static_cast<int>(nodes_.size()) - 1;
  });
}

int Graph::SetNext(int from, int to, bool weak) {
  if (finished_) return -1;
  return RunBuildStep(name_, &first_error_, [&]() -> int {
    if (from < 0 || from >= node_count()) {
      Fail(Describe(from) + ": does not exist (source of set_next)");
      return -1;
    }
    Node& source = nodes_[from];
    if (source.kind != NodeKind::kStart && source.kind != NodeKind::kSyscall) {
      Fail(Describe(from) + ": set_next is only for the start node and syscall nodes" +
           (source.kind == NodeKind::kBranch ? "; a branch node takes children (add_child)" : ""));
      return -1;
    }
    if (!CheckEdgeTarget(from, to, "successor")) return -1;
    if (source.next.to >= 0) {
      Fail(Describe(from) + ": already has a successor (" + Describe(source.next.to) +
           "), but a node may have only one");
      return -1;
    }
    source.next.to = to;
    source.next.weak = weak;
    return 0;
  });
}

bool Graph::CheckEdgeTarget(int from, int to, const char* role) {
  if (to < 0 || to >= node_count()) {
    return Fail(Describe(from) + ": its " + role + " " + Describe(to) + " does not exist");
  }
  if (to == FOREACTOR_START_NODE) {
    return Fail(Describe(from) + ": no edge may lead to the start node");
  }
  return true;
}

int Graph::AddChild(int branch, int to, bool weak) {
  if (finished_) return -1;
  return RunBuildStep(name_, &first_error_, [&]() -> int {
    if (branch < 0 || branch >= node_count()) {
      Fail(Describe(branch) + ": does not exist (branch of add_child)");
      return -1;
    }
    Node& source = nodes_[branch];
    if (source.kind != NodeKind::kBranch) {
      Fail(Describe(branch) + ": add_child is only for branch nodes" +
           (source.kind == NodeKind::kEnd ? "" : "; use set_next"));
      return -1;
    }
    if (!CheckEdgeTarget(branch, to, "child")) return -1;
    Edge edge;
    edge.to = to;
    edge.weak = weak;
    source.children.push_back(edge);
    return static_cast<int>(source.children.size()) - 1;
  });
}

int Graph::SetWriteBehind(int node) {
  if (finished_) return -1;
  return RunBuildStep(name_, &first_error_, [&]() -> int {
    if (node < 0 || node >= node_count()) {
      Fail(Describe(node) + ": does not exist (node of set_write_behind)");
      return -1;
    }
    Node& target = nodes_[node];
    if (target.kind != NodeKind::kSyscall || !InfoOf(target.call_type).writes_data) {
      Fail(Describe(node) + ": write-behind is only for write, pwrite, writev and pwritev nodes");
      return -1;
    }
    target.write_behind = true;
    has_write_behind_ = true;
    return 0;
  });
}

int Graph::SetLoopCount(int branch, foreactor_count_fn count) {
  if (finished_) return -1;
  return RunBuildStep(name_, &first_error_, [&]() -> int {
    if (branch < 0 || branch >= node_count()) {
      Fail(Describe(branch) + ": does not exist (node of set_loop_count)");
      return -1;
    }
    Node& target = nodes_[branch];
    if (target.kind != NodeKind::kBranch) {
      Fail(Describe(branch) + ": a loop count is only for branch nodes");
      return -1;
    }
    if (count == nullptr) {
      Fail(Describe(branch) + ": its loop count callback is NULL");
      return -1;
    }
    target.loop_count = count;
    return 0;
  });
}

bool Graph::AnnotateLoopCounts() {
  for (int loop = 0; loop < loop_count(); ++loop) {
    Loop& facts = loops_[loop];
    unsigned preads = 0;
    bool only_preads = true;
    for (int id = 0; id < node_count() && only_preads; ++id) {
      const Node& node = nodes_[id];
      if (id == facts.branch ||
          std::find(node.loops.begin(), node.loops.end(), loop) == node.loops.end()) {
        continue;
      }
      only_preads = node.kind == NodeKind::kSyscall && node.call_type == FOREACTOR_CALL_PREAD;
      preads++;
    }
    facts.preads_per_iteration = only_preads ? preads : 0;
  }
  for (int id = 0; id < node_count(); ++id) {
    Node& node = nodes_[id];
    if (node.loop_count == nullptr) continue;
    int closed = 0;
    for (int loop = 0; loop < loop_count(); ++loop) {
      if (loops_[loop].branch != id) continue;
      closed++;
      node.counted_loop = loop;
    }
    if (closed != 1) {
      return Fail(Describe(id) + ": has a loop count but closes " +
                  (closed == 0 ? std::string("no loop") : std::to_string(closed) + " loops") +
                  " (a loop count needs a branch that closes exactly one)");
    }
  }
  return true;
}

int Graph::SetFollowsFromLookAhead() {
  if (finished_) return -1;
  follows_from_look_ahead_ = true;
  return 0;
}

bool Graph::copies_data() const {
  for (const Node& node : nodes_) {
    if (node.kind != NodeKind::kSyscall || !InfoOf(node.call_type).reads_data) continue;
    if (node.next.to < 0 || node.next.to >= node_count()) continue;
    const Node& next = nodes_[node.next.to];
    if (next.kind == NodeKind::kSyscall && InfoOf(next.call_type).writes_data) return true;
  }
  return false;
}

bool Graph::Finish(std::string* error) {
  if (!finished_) {
    finished_ = true;
    const bool finished = AllocationSucceeds([&] {
      if (!first_error_.empty()) {
        valid_ = false;
      } else if (!IsValidGraphName(name_)) {
        valid_ = Fail("the graph name must be non-empty and made of letters, digits and '_'");
      } else {
        GraphAnalysis analysis(nodes_);
        if (analysis.CheckLocalRules() && analysis.CheckReachability() && analysis.FindLoops()) {
          for (const LoopFacts& facts : analysis.loops()) loops_.push_back(facts.loop);
          AnnotateLoops(analysis.loops(), loops_, &nodes_);
          for (Node& node : nodes_) {
            if (node.kind == NodeKind::kSyscall) node.dense_index = syscall_count_++;
            if (node.kind == NodeKind::kBranch) node.dense_index = branch_count_++;
          }
          valid_ = AnnotateLoopCounts();
        } else {
          valid_ = Fail(analysis.error());
        }
      }
    });
    if (!finished) {
      valid_ = false;
      RememberOutOfMemory(name_, &first_error_);
    }
  }
  if (!valid_ && error != nullptr) *error = first_error_;
  return valid_;
}

std::string Graph::Dot() const {
  std::string out = "digraph \"";
  AppendDotString(out, name_);
  out += "\" {\n";
  for (int id = 0; id < node_count(); ++id) {
    const Node& node = nodes_[id];
    out += "  n" + std::to_string(id) + " [";
    switch (node.kind) {
      case NodeKind::kStart:
      case NodeKind::kEnd:
        out += "shape=circle, width=0.25, fixedsize=true, label=\"\", xlabel=\"";
        AppendDotString(out, node.name);
        out += "\"";
        if (node.kind == NodeKind::kEnd) out += ", peripheries=2";
        break;
      case NodeKind::kSyscall:
        out += "shape=box, label=\"";
        AppendDotString(out, node.name);
        out += "\\n";
        out += InfoOf(node.call_type).name;
        out += "\"";
        // Beside the box, so that the label stays "name\ntype" for readers
        // of the picture (tools/foreactor_cli/structure.py).
        if (node.write_behind) out += ", xlabel=\"write-behind\"";
        break;
      case NodeKind::kBranch:
        out += "shape=diamond, label=\"";
        AppendDotString(out, node.name);
        out += "\"";
        break;
    }
    out += "];\n";
  }
  auto append_edge = [&out](int from, const Edge& edge, int child) {
    if (edge.to < 0) return;
    out += "  n" + std::to_string(from) + " -> n" + std::to_string(edge.to);
    std::string label;
    if (child >= 0) label = std::to_string(child);
    if (edge.closes_loop >= 0) {
      label += (label.empty() ? "loop " : ": loop ") + std::to_string(edge.closes_loop);
    }
    std::vector<std::string> attributes;
    if (!label.empty()) attributes.push_back("label=\"" + label + "\"");
    if (edge.weak) attributes.push_back("style=dashed");
    if (!attributes.empty()) {
      out += " [";
      for (size_t i = 0; i < attributes.size(); ++i) out += (i == 0 ? "" : ", ") + attributes[i];
      out += "]";
    }
    out += ";\n";
  };
  for (int id = 0; id < node_count(); ++id) {
    const Node& node = nodes_[id];
    if (node.kind == NodeKind::kStart || node.kind == NodeKind::kSyscall) {
      append_edge(id, node.next, -1);
    } else if (node.kind == NodeKind::kBranch) {
      for (int child = 0; child < static_cast<int>(node.children.size()); ++child) {
        append_edge(id, node.children[child], child);
      }
    }
  }
  out += "}\n";
  return out;
}

}  // namespace foreactor
