// foreactor.hpp: the C++ API for plugins, header-only, on top of foreactor.h.
//
// A plugin for a function that reads `count` pages in a loop:
//
//   struct ScanState { int fd; const uint64_t* pages; size_t count; };
//
//   static foreactor::Graph<ScanState> scan_graph = [] {
//     foreactor::GraphBuilder<ScanState> b("bptree_scan");
//     auto read = b.Syscall("read_leaf", FOREACTOR_CALL_PREAD,
//         [](ScanState& s, const foreactor::Visit& v, foreactor_call& call) {
//           call = foreactor::Pread(s.fd, 8192, s.pages[v.iteration(0)] * 8192);
//           return FOREACTOR_READY;
//         });
//     auto more = b.Branch("more", [](ScanState& s, const foreactor::Visit& v) {
//       return v.iteration(0) + 1 < s.count ? 0 : 1;
//     });
//     b.start().Then(read).Then(more);
//     more.Children({read, b.end()});
//     return b.Build();
//   }();
//
//   void Scan(int fd, const uint64_t* pages, size_t count) {
//     ScanState state{fd, pages, count};
//     foreactor::Scope scope(scan_graph, state);
//     ... the function's own work, unchanged ...
//   }
//
// Contracts:
//  - Callbacks are any callables (lambdas may capture).  The Graph owns them;
//    the C runtime reaches them through `node_data`, and the State through
//    `scope_state`.  Callbacks see the State by reference and the visit's
//    per-loop iteration indices through Visit.
//  - No exception leaves a callback into the C runtime: an arguments
//    callback that throws answers FOREACTOR_NOT_YET, a choice callback that
//    throws FOREACTOR_CHOICE_NOT_YET, a loop count callback that throws
//    FOREACTOR_COUNT_NOT_YET, and an exception from a result callback is
//    ignored.  So do an arguments callback that says READY with
//    a call of another type than its node's, and a choice callback that
//    names a child the branch does not have: foreactor then stops looking
//    ahead there, and the program's own calls run as usual.
//  - The builder never throws.  Any error (a rule of the graph broken, a
//    node of another builder, out of memory) makes Build() return an invalid
//    graph, prints the message once to stderr, and scopes of an invalid
//    graph do nothing.
//  - A Graph must outlive every scope of it; build it once (a static, as
//    above) and use it from any number of threads.
#ifndef FOREACTOR_FOREACTOR_HPP_
#define FOREACTOR_FOREACTOR_HPP_

#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "foreactor/foreactor.h"

namespace foreactor {
// The C++ API lives in an inline namespace of its own so that its names
// never collide with foreactor's internal ones at link time.
inline namespace plugin {

// Whether an edge is weak: the function may return there (docs/DESIGN.md §4).
enum EdgeKind : int { kStrong = 0, kWeak = 1 };

// One execution of a node, as a callback sees it.
class Visit {
 public:
  explicit Visit(const foreactor_visit& visit) noexcept : visit_(visit) {}

  // How many loops enclose the node.
  unsigned loop_count() const noexcept { return visit_.loop_count; }

  // How many times the `loop`-th enclosing loop (0: outermost) has gone
  // around before this visit.  0 when `loop` >= loop_count().
  uint64_t iteration(unsigned loop) const noexcept {
    return loop < visit_.loop_count ? visit_.iteration[loop] : 0;
  }

  const foreactor_visit& raw() const noexcept { return visit_; }

 private:
  const foreactor_visit& visit_;
};

// ------------------------------------------------------------ call helpers
//
// Each returns the foreactor_call an arguments callback hands back for one
// call type; fields the type does not use are zero (fd -1 when unused).
// Read-like calls take no buffer: foreactor reads into buffers of its own.
// Write-like calls take the bytes to write, which must stay valid and
// unchanged until the program makes the call.

inline foreactor_call Call(foreactor_call_type type) noexcept {
  foreactor_call call{};
  call.type = type;
  call.fd = -1;
  return call;
}

inline foreactor_call Open(const char* path, int flags, unsigned mode = 0) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_OPEN);
  call.path = path;
  call.flags = flags;
  call.mode = mode;
  return call;
}

inline foreactor_call Openat(int dirfd, const char* path, int flags, unsigned mode = 0) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_OPENAT);
  call.fd = dirfd;
  call.path = path;
  call.flags = flags;
  call.mode = mode;
  return call;
}

inline foreactor_call Close(int fd) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_CLOSE);
  call.fd = fd;
  return call;
}

// read(fd, _, length) made when the file position is `position`.
inline foreactor_call Read(int fd, size_t length, int64_t position) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_READ);
  call.fd = fd;
  call.length = length;
  call.offset = position;
  return call;
}

inline foreactor_call Pread(int fd, size_t length, int64_t offset) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_PREAD);
  call.fd = fd;
  call.length = length;
  call.offset = offset;
  return call;
}

// write(fd, data, length) made when the file position is `position`.
// `data` may be null after a read whose arguments are Linked(): it then
// writes the bytes that read produced.
inline foreactor_call Write(int fd, const void* data, size_t length, int64_t position) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_WRITE);
  call.fd = fd;
  call.buffer = const_cast<void*>(data);
  call.length = length;
  call.offset = position;
  return call;
}

inline foreactor_call Pwrite(int fd, const void* data, size_t length, int64_t offset) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_PWRITE);
  call.fd = fd;
  call.buffer = const_cast<void*>(data);
  call.length = length;
  call.offset = offset;
  return call;
}

inline foreactor_call Lseek(int fd, int64_t offset, int whence) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_LSEEK);
  call.fd = fd;
  call.offset = offset;
  call.whence = whence;
  return call;
}

inline foreactor_call Fstat(int fd) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_FSTAT);
  call.fd = fd;
  return call;
}

inline foreactor_call Fstatat(int dirfd, const char* path, int flags = 0) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_FSTATAT);
  call.fd = dirfd;
  call.path = path;
  call.flags = flags;
  return call;
}

inline foreactor_call Stat(const char* path) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_STAT);
  call.path = path;
  return call;
}

inline foreactor_call Lstat(const char* path) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_LSTAT);
  call.path = path;
  return call;
}

inline foreactor_call Statx(int dirfd, const char* path, int flags, unsigned mask) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_STATX);
  call.fd = dirfd;
  call.path = path;
  call.flags = flags;
  call.mode = mask;
  return call;
}

inline foreactor_call Getdents64(int fd, size_t length) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_GETDENTS64);
  call.fd = fd;
  call.length = length;
  return call;
}

// readv(fd, _, _) of `total_length` bytes made when the file position is
// `position`: only the total length matters for an early read.
inline foreactor_call Readv(int fd, size_t total_length, int64_t position) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_READV);
  call.fd = fd;
  call.length = total_length;
  call.offset = position;
  return call;
}

inline foreactor_call Preadv(int fd, size_t total_length, int64_t offset) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_PREADV);
  call.fd = fd;
  call.length = total_length;
  call.offset = offset;
  return call;
}

namespace detail {
inline size_t TotalLength(const struct iovec* iov, int iovcnt) noexcept {
  size_t total = 0;
  for (int i = 0; i < iovcnt; ++i) total += iov[i].iov_len;
  return total;
}
}  // namespace detail

// writev(fd, iov, iovcnt) made when the file position is `position`.
inline foreactor_call Writev(int fd, const struct iovec* iov, int iovcnt,
                             int64_t position) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_WRITEV);
  call.fd = fd;
  call.iov = iov;
  call.iovcnt = iovcnt;
  call.length = detail::TotalLength(iov, iovcnt);
  call.offset = position;
  return call;
}

inline foreactor_call Pwritev(int fd, const struct iovec* iov, int iovcnt,
                              int64_t offset) noexcept {
  foreactor_call call = Call(FOREACTOR_CALL_PWRITEV);
  call.fd = fd;
  call.iov = iov;
  call.iovcnt = iovcnt;
  call.length = detail::TotalLength(iov, iovcnt);
  call.offset = offset;
  return call;
}

// `call`, asking that it and the next syscall node's call run in order as
// one unit (a read feeding a write).
inline foreactor_call Linked(foreactor_call call) noexcept {
  call.link_next = 1;
  return call;
}

// ------------------------------------------------------------------ graphs

template <class State>
class GraphBuilder;

namespace detail {

// What a builder and its node references share: the C graph under
// construction, the node names, and the first error the C++ side found
// (rules of the C API are checked, and reported, by the C graph itself).
struct BuildState {
  foreactor_graph* graph = nullptr;
  std::string name;
  std::vector<std::string> node_names{"start", "end"};  // indexed by node id
  std::string error;
  bool out_of_memory = false;

  // Keeps the first error, naming node `node`.  Never throws.
  void Fail(int node, const char* rule) noexcept {
    if (!error.empty() || out_of_memory) return;
    try {
      const bool named = node >= 0 && node < static_cast<int>(node_names.size());
      error = "graph '" + name + "': " +
              (named ? "node '" + node_names[static_cast<size_t>(node)] + "'"
                     : "node #" + std::to_string(node)) +
              ": " + rule;
    } catch (...) {
      out_of_memory = true;
    }
  }
};

// Per branch node, what the choice trampoline checks answers against.
struct BranchShape {
  int child_count = 0;
};

}  // namespace detail

struct ChildEdge;

// A reference to a node of a graph being built.  Cheap to copy; usable
// until its GraphBuilder is built or destroyed.  Edge methods never throw:
// the C graph remembers a rejected edge, and Build() reports it.
class NodeRef {
 public:
  NodeRef() = default;

  // The node's id in the C graph (-1 for a node that could not be added).
  int id() const noexcept { return id_; }

  // Makes `next` the successor of this start or syscall node.  Returns
  // `next`, so that a straight path reads b.start().Then(open).Then(read).
  NodeRef Then(NodeRef next, EdgeKind kind = kStrong) const noexcept {
    if (SameGraph(next)) {
      foreactor_graph_set_next(state_->graph, id_, next.id_, kind == kWeak ? 1 : 0);
    }
    return next;
  }

  // Appends children to this branch node, in order (child index 0 first).
  // A child may be weak: more.Children({read, {b.end(), foreactor::kWeak}}).
  const NodeRef& Children(std::initializer_list<ChildEdge> children) const noexcept;

  // Declares write-behind on this write-family syscall node: its writes
  // form output the program will make durable, and the runtime may start
  // their write-back early (contract: foreactor_graph_set_write_behind).
  // Returns this node.
  const NodeRef& WriteBehind() const noexcept {
    // The C graph keeps any error (a node of another type, one never
    // added), and Build() reports it.
    if (state_ != nullptr && state_->graph != nullptr) {
      foreactor_graph_set_write_behind(state_->graph, id_);
    }
    return *this;
  }

 private:
  template <class State>
  friend class GraphBuilder;

  NodeRef(detail::BuildState* state, int id, detail::BranchShape* branch) noexcept
      : state_(state), id_(id), branch_(branch) {}

  // True when both ends belong to the same builder, whose graph exists;
  // records an error when they do not.
  bool SameGraph(const NodeRef& other) const noexcept {
    if (state_ == nullptr) {
      if (other.state_ != nullptr) {
        other.state_->Fail(other.id_, "an edge reaches it from a node that was never added");
      }
      return false;
    }
    if (other.state_ != state_) {
      state_->Fail(id_, other.state_ == nullptr ? "its edge leads to a node that was never added"
                                                : "its edge leads to a node of another graph");
      return false;
    }
    return state_->graph != nullptr;
  }

  detail::BuildState* state_ = nullptr;
  int id_ = -1;
  detail::BranchShape* branch_ = nullptr;
};

// One child edge of a branch node: a node, strong unless said otherwise.
struct ChildEdge {
  ChildEdge(NodeRef child, EdgeKind child_kind = kStrong) noexcept  // implicit on purpose
      : node(child), kind(child_kind) {}
  NodeRef node;
  EdgeKind kind;
};

inline const NodeRef& NodeRef::Children(std::initializer_list<ChildEdge> children) const noexcept {
  for (const ChildEdge& child : children) {
    if (!SameGraph(child.node)) continue;
    const int index =
        foreactor_graph_add_child(state_->graph, id_, child.node.id_, child.kind == kWeak ? 1 : 0);
    if (index >= 0 && branch_ != nullptr) branch_->child_count = index + 1;
  }
  return *this;
}

// A built graph whose callbacks see a `State&`.  Movable, not copyable.
template <class State>
class Graph {
 public:
  Graph(Graph&& other) noexcept
      : graph_(std::exchange(other.graph_, nullptr)),
        callbacks_(std::move(other.callbacks_)),
        name_(std::move(other.name_)),
        error_(std::move(other.error_)),
        valid_(std::exchange(other.valid_, false)) {}

  Graph& operator=(Graph&& other) noexcept {
    if (this != &other) {
      Destroy();
      graph_ = std::exchange(other.graph_, nullptr);
      callbacks_ = std::move(other.callbacks_);
      name_ = std::move(other.name_);
      error_ = std::move(other.error_);
      valid_ = std::exchange(other.valid_, false);
    }
    return *this;
  }

  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() { Destroy(); }

  // True when the graph passed validation: its scopes may speculate.
  bool valid() const noexcept { return valid_; }

  // Why the graph is invalid ("" when it is valid).
  const std::string& error() const noexcept { return error_; }

  const std::string& name() const noexcept { return name_; }

  // The graph in Graphviz DOT form, or "" when it cannot be written.
  std::string dot() const {
    if (graph_ == nullptr) return "";
    char* text = nullptr;
    size_t size = 0;
    FILE* out = open_memstream(&text, &size);
    if (out == nullptr) return "";
    const int written = foreactor_graph_write_dot(graph_, out);
    const bool closed = fclose(out) == 0;
    std::string result;
    if (written == 0 && closed && text != nullptr) result.assign(text, size);
    free(text);
    return result;
  }

  // The C graph, for the functions of foreactor.h; null only when the
  // builder ran out of memory.
  foreactor_graph* handle() const noexcept { return graph_; }
  // foreactor_scope_speculation() for this graph on the calling thread.
  foreactor_speculation ScopeSpeculation() const noexcept {
    return foreactor_scope_speculation(graph_);
  }
  // foreactor_scope_start_read() for this graph: true when the device
  // reads of the cold range were started.
  bool StartRead(int fd, uint64_t offset, uint64_t length) const noexcept {
    return foreactor_scope_start_read(graph_, fd, offset, length) == 0;
  }
  // foreactor_scope_read_started() for this graph: pread(2)'s result for a
  // range this thread started (StartRead), polling the page cache for it
  // before sleeping.
  ssize_t ReadStarted(int fd, void* buffer, size_t length, int64_t offset) const noexcept {
    return foreactor_scope_read_started(graph_, fd, buffer, length, offset);
  }
  // foreactor_scope_starts_reads() for this graph: true when StartRead()
  // starts reads on this thread.
  bool StartsReads() const noexcept { return foreactor_scope_starts_reads(graph_) != 0; }
  // foreactor_scope_look_ahead() for this graph: what the callbacks
  // answered not-yet may be known now; the open scope walks ahead at once.
  void LookAhead() const noexcept { foreactor_scope_look_ahead(graph_); }
  // foreactor_scope_gate() for this graph: whether the next unit runs with a scope.
  bool ScopeGate() const noexcept { return foreactor_scope_gate(graph_) != 0; }
  // foreactor_scope_gate_units() for this graph: the answer for the next
  // unit, which holds for `*units` units from it.
  bool ScopeGate(uint32_t* units) const noexcept {
    return foreactor_scope_gate_units(graph_, units) != 0;
  }
  // foreactor_scope_gate_measuring() for this graph: whether time excluded
  // from the units of the gate's last answer counts.
  bool ScopeGateMeasuring() const noexcept { return foreactor_scope_gate_measuring(graph_) != 0; }

 private:
  friend class GraphBuilder<State>;

  Graph(foreactor_graph* graph, std::vector<std::shared_ptr<void>> callbacks, std::string name,
        std::string error, bool valid) noexcept
      : graph_(graph),
        callbacks_(std::move(callbacks)),
        name_(std::move(name)),
        error_(std::move(error)),
        valid_(valid) {}

  void Destroy() noexcept {
    if (graph_ != nullptr) foreactor_graph_destroy(graph_);
    graph_ = nullptr;
  }

  foreactor_graph* graph_ = nullptr;
  std::vector<std::shared_ptr<void>> callbacks_;  // what every node's node_data points to
  std::string name_;
  std::string error_;
  bool valid_ = false;
};

// Builds one Graph<State>.  Not thread-safe.  Every method is noexcept:
// errors, out of memory included, surface in Build().
template <class State>
class GraphBuilder {
 public:
  using ArgumentsFn = std::function<foreactor_readiness(State&, const Visit&, foreactor_call&)>;
  using ResultFn = std::function<void(State&, const Visit&, int64_t)>;
  using ChoiceFn = std::function<int(State&, const Visit&)>;
  using CountFn = std::function<int64_t(State&, const Visit&)>;

  // `name`: letters, digits and '_'; it names the graph in configuration
  // variables and statistics.
  explicit GraphBuilder(const char* name) noexcept {
    try {
      state_ = std::make_unique<detail::BuildState>();
      state_->name = name != nullptr ? name : "";
    } catch (...) {
      state_.reset();
      return;
    }
    state_->graph = foreactor_graph_create(name);
    if (state_->graph == nullptr) state_->out_of_memory = true;
  }

  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;

  ~GraphBuilder() {
    if (state_ != nullptr && state_->graph != nullptr) foreactor_graph_destroy(state_->graph);
  }

  NodeRef start() noexcept { return NodeRef(state_.get(), FOREACTOR_START_NODE, nullptr); }
  NodeRef end() noexcept { return NodeRef(state_.get(), FOREACTOR_END_NODE, nullptr); }

  // The graph's scopes follow the program from the plugin's first
  // Graph::LookAhead() in each scope on (contract:
  // foreactor_graph_follow_from_look_ahead).
  void FollowFromLookAhead() noexcept {
    if (state_ != nullptr && state_->graph != nullptr)
      foreactor_graph_follow_from_look_ahead(state_->graph);
  }

  // Adds a syscall node of `type`.  `arguments` is called as
  //   foreactor_readiness(State&, const foreactor::Visit&, foreactor_call&)
  // and fills the call for a visit (contract: foreactor_arguments_fn).  The
  // optional `result` is called as void(State&, const Visit&, int64_t) with
  // each visit's result (return value or -errno) once the program has it.
  template <class Arguments, class Result = std::nullptr_t>
  NodeRef Syscall(const char* name, foreactor_call_type type, Arguments&& arguments,
                  Result&& result = nullptr) noexcept {
    static_assert(std::is_constructible_v<ArgumentsFn, Arguments&&>,
                  "the arguments callback must be callable as "
                  "foreactor_readiness(State&, const foreactor::Visit&, foreactor_call&)");
    static_assert(std::is_constructible_v<ResultFn, Result&&>,
                  "the result callback must be callable as "
                  "void(State&, const foreactor::Visit&, int64_t)");
    if (!Usable()) return NodeRef();
    try {
      auto callbacks = std::make_shared<SyscallCallbacks>();
      callbacks->arguments = ArgumentsFn(std::forward<Arguments>(arguments));
      callbacks->result = ResultFn(std::forward<Result>(result));
      callbacks->type = type;
      SyscallCallbacks* data = callbacks.get();
      callbacks_.push_back(std::move(callbacks));
      const int id = foreactor_graph_add_syscall(state_->graph, name, type,
                                                 data->arguments ? &ArgumentsTrampoline : nullptr,
                                                 data->result ? &ResultTrampoline : nullptr, data);
      if (id >= 0) RememberName(id, name);
      return NodeRef(state_.get(), id, nullptr);
    } catch (...) {
      state_->out_of_memory = true;
      return NodeRef();
    }
  }

  // Adds a branch node.  `choice` is called as int(State&, const Visit&)
  // and names the child taken at a visit, or FOREACTOR_CHOICE_NOT_YET
  // (contract: foreactor_choice_fn).
  template <class Choice>
  NodeRef Branch(const char* name, Choice&& choice) noexcept {
    static_assert(std::is_constructible_v<ChoiceFn, Choice&&>,
                  "the choice callback must be callable as int(State&, const foreactor::Visit&)");
    if (!Usable()) return NodeRef();
    try {
      auto callbacks = std::make_shared<BranchCallbacks>();
      callbacks->choice = ChoiceFn(std::forward<Choice>(choice));
      BranchCallbacks* data = callbacks.get();
      callbacks_.push_back(std::move(callbacks));
      const int id = foreactor_graph_add_branch(state_->graph, name,
                                                data->choice ? &ChoiceTrampoline : nullptr, data);
      if (id >= 0) RememberName(id, name);
      return NodeRef(state_.get(), id, &data->shape);
    } catch (...) {
      state_->out_of_memory = true;
      return NodeRef();
    }
  }

  // Adds a branch node that closes a loop whose length the plugin knows:
  // `count` is called as int64_t(State&, const Visit&) and gives how many
  // iterations the loop runs in all, or FOREACTOR_COUNT_NOT_YET (contract:
  // foreactor_graph_set_loop_count; the visit's last counter is the
  // iteration the branch ends).  A scan of `n` pages:
  //   b.Branch("more", [](S& s, const Visit& v) { return v.iteration(0) + 1 < s.n ? 0 : 1; },
  //            [](S& s, const Visit&) { return static_cast<int64_t>(s.n); });
  template <class Choice, class Count>
  NodeRef Branch(const char* name, Choice&& choice, Count&& count) noexcept {
    static_assert(std::is_constructible_v<CountFn, Count&&>,
                  "the loop count callback must be callable as "
                  "int64_t(State&, const foreactor::Visit&)");
    NodeRef node = Branch(name, std::forward<Choice>(choice));
    if (node.id() < 0 || !Usable()) return node;
    try {
      auto* data = static_cast<BranchCallbacks*>(callbacks_.back().get());
      data->count = CountFn(std::forward<Count>(count));
      // The C graph keeps any error (a NULL count), and Build() reports it.
      foreactor_graph_set_loop_count(state_->graph, node.id(),
                                     data->count ? &CountTrampoline : nullptr);
    } catch (...) {
      state_->out_of_memory = true;
    }
    return node;
  }

  // Validates the graph and hands it over; the builder is spent afterwards
  // (a second Build() gives an invalid graph).  When the graph is invalid,
  // prints why to stderr ("foreactor: graph '...': ...") and returns it
  // invalid: its scopes do nothing.
  Graph<State> Build() noexcept {
    foreactor_graph* graph = nullptr;
    std::string name;
    std::string error;
    bool valid = false;
    if (state_ != nullptr) {
      graph = std::exchange(state_->graph, nullptr);
      name.swap(state_->name);
      char message[1024] = "";
      // A graph the C++ side rejected is finished too, so it can be drawn.
      const bool finished =
          graph != nullptr && foreactor_graph_finish(graph, message, sizeof message) == 0;
      try {
        if (state_->out_of_memory || graph == nullptr) {
          error = "graph '" + name + "': out of memory while building the graph";
        } else if (!state_->error.empty()) {
          error.swap(state_->error);
        } else if (!finished) {
          error = message;
        } else {
          valid = true;
        }
      } catch (...) {
        error.clear();
      }
      state_.reset();
    }
    if (!valid) {
      const char* reason = !error.empty() ? error.c_str()
                           : built_       ? "GraphBuilder::Build() called twice"
                                          : "out of memory while building a graph";
      fprintf(stderr, "foreactor: %s\n", reason);
    }
    built_ = true;
    return Graph<State>(graph, std::move(callbacks_), std::move(name), std::move(error), valid);
  }

 private:
  struct SyscallCallbacks {
    ArgumentsFn arguments;
    ResultFn result;
    foreactor_call_type type = FOREACTOR_CALL_PREAD;
  };
  struct BranchCallbacks {
    ChoiceFn choice;
    CountFn count;  // empty unless the branch has a loop count
    detail::BranchShape shape;
  };

  bool Usable() const noexcept { return state_ != nullptr && state_->graph != nullptr; }

  void RememberName(int id, const char* name) {
    state_->node_names.resize(static_cast<size_t>(id) + 1);
    state_->node_names[static_cast<size_t>(id)] = name != nullptr ? name : "";
  }

  // The C callbacks: find the callable through node_data and the State
  // through scope_state; let no exception through.
  static foreactor_readiness ArgumentsTrampoline(const foreactor_visit* visit,
                                                 foreactor_call* call) noexcept {
    try {
      auto* callbacks = static_cast<SyscallCallbacks*>(visit->node_data);
      State& state = *static_cast<State*>(visit->scope_state);
      const foreactor_readiness readiness = callbacks->arguments(state, Visit(*visit), *call);
      switch (readiness) {
        case FOREACTOR_READY:
          return call->type == callbacks->type ? FOREACTOR_READY : FOREACTOR_NOT_YET;
        case FOREACTOR_NEVER:
          return FOREACTOR_NEVER;
        default:
          return FOREACTOR_NOT_YET;
      }
    } catch (...) {
      return FOREACTOR_NOT_YET;
    }
  }

  static void ResultTrampoline(const foreactor_visit* visit, int64_t result) noexcept {
    try {
      auto* callbacks = static_cast<SyscallCallbacks*>(visit->node_data);
      State& state = *static_cast<State*>(visit->scope_state);
      callbacks->result(state, Visit(*visit), result);
    } catch (...) {
      // A result callback cannot fail the program's call; ignore.
    }
  }

  static int ChoiceTrampoline(const foreactor_visit* visit) noexcept {
    try {
      auto* callbacks = static_cast<BranchCallbacks*>(visit->node_data);
      State& state = *static_cast<State*>(visit->scope_state);
      const int choice = callbacks->choice(state, Visit(*visit));
      if (choice < 0 || choice >= callbacks->shape.child_count) return FOREACTOR_CHOICE_NOT_YET;
      return choice;
    } catch (...) {
      return FOREACTOR_CHOICE_NOT_YET;
    }
  }

  static int64_t CountTrampoline(const foreactor_visit* visit) noexcept {
    try {
      auto* callbacks = static_cast<BranchCallbacks*>(visit->node_data);
      State& state = *static_cast<State*>(visit->scope_state);
      const int64_t count = callbacks->count(state, Visit(*visit));
      return count >= 0 ? count : FOREACTOR_COUNT_NOT_YET;
    } catch (...) {
      return FOREACTOR_COUNT_NOT_YET;
    }
  }

  std::unique_ptr<detail::BuildState> state_;
  std::vector<std::shared_ptr<void>> callbacks_;
  bool built_ = false;
};

// One invocation of the function a graph describes, on this thread: enters
// a scope of `graph` with `state` on construction and leaves it on
// destruction, however the block is left (return, exception).  `state`
// must outlive the scope.  Does nothing for an invalid graph.
class Scope {
 public:
  template <class State>
  Scope(const Graph<State>& graph, State& state) noexcept
      : graph_(graph.valid() ? graph.handle() : nullptr) {
    if (graph_ != nullptr) foreactor_scope_enter(graph_, static_cast<void*>(&state));
  }

  ~Scope() {
    if (graph_ != nullptr) foreactor_scope_exit(graph_);
  }

  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  foreactor_graph* graph_;
};

// A standard allocator over foreactor_private_allocate (foreactor.h): for
// the containers a plugin keeps while the program runs (its map of open
// tables), so that they leave the program's heap as the plain program
// leaves it.  allocate() throws std::bad_alloc when no memory can be had.
template <typename T>
class PrivateAllocator {
 public:
  static_assert(alignof(T) <= 16, "foreactor_private_allocate aligns to 16 bytes");
  using value_type = T;

  PrivateAllocator() noexcept = default;
  template <typename U>
  PrivateAllocator(const PrivateAllocator<U>&) noexcept {}

  T* allocate(size_t count) {
    if (count > SIZE_MAX / sizeof(T)) throw std::bad_array_new_length();
    void* memory = foreactor_private_allocate(count * sizeof(T));
    if (memory == nullptr) throw std::bad_alloc();
    return static_cast<T*>(memory);
  }
  void deallocate(T* pointer, size_t count) noexcept {
    foreactor_private_free(pointer, count * sizeof(T));
  }

  template <typename U>
  bool operator==(const PrivateAllocator<U>&) const noexcept {
    return true;
  }
};

// Containers in private memory.
template <typename T>
using PrivateVector = std::vector<T, PrivateAllocator<T>>;
template <typename Key, typename Value>
using PrivateUnorderedMap = std::unordered_map<Key, Value, std::hash<Key>, std::equal_to<Key>,
                                               PrivateAllocator<std::pair<const Key, Value>>>;

// Destroys and frees an object MakePrivate made.
template <typename T>
struct PrivateDelete {
  void operator()(T* object) const noexcept {
    object->~T();
    PrivateAllocator<T>().deallocate(object, 1);
  }
};
template <typename T>
using PrivatePtr = std::unique_ptr<T, PrivateDelete<T>>;

// std::make_unique in private memory: a T made from `arguments`.  Throws
// std::bad_alloc when no memory can be had, or what T's constructor throws.
template <typename T, typename... Arguments>
PrivatePtr<T> MakePrivate(Arguments&&... arguments) {
  T* memory = PrivateAllocator<T>().allocate(1);
  try {
    return PrivatePtr<T>(new (memory) T(std::forward<Arguments>(arguments)...));
  } catch (...) {
    PrivateAllocator<T>().deallocate(memory, 1);
    throw;
  }
}

namespace detail {

// A table of keys each remembered for a bounded count of recalls, for the
// plugin helpers below: kEntries words, one per key, at the entry the top
// bits of the key's 64-bit hash pick; another key hashed to the same entry
// replaces it.  Thread-safe: relaxed atomic words, so threads racing on one
// entry may lose a remembering or a count.  Constant-initialized.
template <unsigned kEntryBits>
class RecallTable {
 public:
  static constexpr size_t kEntries = size_t{1} << kEntryBits;

  constexpr RecallTable() = default;
  RecallTable(const RecallTable&) = delete;
  RecallTable& operator=(const RecallTable&) = delete;

  // True when `hash` is remembered and was recalled fewer than `recalls`
  // times since (at most 255): counts this recall.
  bool Recall(uint64_t hash, int recalls) noexcept {
    std::atomic<uint64_t>& entry = EntryOf(hash);
    const uint64_t remembered = entry.load(std::memory_order_relaxed);
    if ((remembered & ~kCountMask) != TagOf(hash) ||
        (remembered & kCountMask) >= static_cast<uint64_t>(recalls))
      return false;
    entry.store(remembered + 1, std::memory_order_relaxed);
    return true;
  }

  // Remembers `hash`, with no recall counted.
  void Remember(uint64_t hash) noexcept {
    EntryOf(hash).store(TagOf(hash), std::memory_order_relaxed);
  }

  // Forgets `hash`, if its entry holds it.
  void Forget(uint64_t hash) noexcept {
    std::atomic<uint64_t>& entry = EntryOf(hash);
    if ((entry.load(std::memory_order_relaxed) & ~kCountMask) == TagOf(hash))
      entry.store(0, std::memory_order_relaxed);
  }

 private:
  static constexpr uint64_t kCountMask = 0xff;

  std::atomic<uint64_t>& EntryOf(uint64_t hash) noexcept {
    return entries_[hash >> (64 - kEntryBits)];
  }
  // An entry: the key's tag in the high bits (never 0, so a zero entry
  // remembers nothing), its recalls since remembered in the low 8.
  static uint64_t TagOf(uint64_t hash) noexcept { return (hash | (kCountMask + 1)) & ~kCountMask; }

  std::atomic<uint64_t> entries_[kEntries] = {};
};

// A 64-bit mix of `value` (each input bit moves about half of the output's).
constexpr uint64_t MixBits(uint64_t value) noexcept {
  value ^= value >> 31;
  value *= 0xbf58476d1ce4e5b9u;
  value ^= value >> 29;
  value *= 0x94d049bb133111ebu;
  return value ^ (value >> 32);
}

}  // namespace detail

// Runs `action`, dropping any exception it throws.  For plugin code that
// runs inside the host program's functions: a host built without
// exceptions (LevelDB) cannot unwind through them, and what a plugin can
// fail at (memory for a plan) only loses a prediction.
template <class Action>
void NoThrow(Action&& action) noexcept {
  try {
    action();
  } catch (...) {
  }
}

// Reads bytes [offset, offset + length) of `fd` into `buffer` as far as the
// page cache holds them, without waiting for the device (preadv2(2) with
// RWF_NOWAIT), for a plugin that plans a unit late: at the unit's first read
// that would wait (LevelDB's Gets).  Returns what preadv2(2) returned.
// `length` bytes, or 0 (end of file, or a length of 0), is the read's
// answer as pread(2) would give it (`*would_wait` false).  Otherwise the
// plugin makes the read itself, and `*would_wait` says why: true when part
// of the range is not cached (EAGAIN, or fewer bytes, which may also mean
// the end of the file: the pread then gives the same answer), false when
// the kernel cannot tell (a file system that refuses RWF_NOWAIT, a bad
// descriptor: the pread then reports the error as it would have).  A range
// not cached is started by the kernel all the same (its pages are read in
// while the plugin plans).  errno is left as it was.
inline ssize_t ReadFromPageCache(int fd, void* buffer, size_t length, off_t offset,
                                 bool* would_wait) noexcept {
  const int saved_errno = errno;
  iovec vector = {buffer, length};
  const ssize_t bytes = preadv2(fd, &vector, 1, offset, RWF_NOWAIT);
  *would_wait =
      (bytes > 0 && static_cast<size_t>(bytes) < length) || (bytes < 0 && errno == EAGAIN);
  errno = saved_errno;
  return bytes;
}

// Whether the ranges a plugin plans to read are in the page cache, for
// plugins that plan a unit's reads before its scope (LevelDB's table
// reads): a read the page cache holds has no device time to overlap, and
// planned, the runtime would only probe it and find it there.  Leave such
// reads out of the plan; the program makes them from memory.
//
// InCache(fd, offset, length) is true when the page cache holds every page
// of the range.  The first asking of a range asks the kernel
// (foreactor_pages_cached: one system call, no data copied); a range found
// held is remembered, and the next kAnswersPerCheck askings of the same
// range answer true without a system call; then the kernel is asked again.
// The answer is per range, not per file: in a file most of whose reads are
// served from memory, a block that is not is still planned (a rule per file
// that left out a file's reads after a run of hits sent those blocks to the
// device one after another, and they made the tail of LevelDB's Gets).
//
// A range evicted while remembered is answered true for at most
// kAnswersPerCheck more askings: its read then runs as the program makes
// it, as without foreactor.  kEntries ranges are remembered, one word each,
// at the entry a hash of (fd, offset, length) picks; another range hashed to
// the same entry replaces it (a system call more, no other cost).  A
// descriptor number reused for another file is told apart only by the
// kernel's next answer.  False whenever the kernel cannot tell, with
// page-cache awareness off (FOREACTOR_PAGE_CACHE=0) and in check mode, so
// that every read is then planned (nothing is remembered).
//
// Thread-safe: relaxed atomic words, so threads racing on one entry may
// ask the kernel twice or skip a count.  Not copyable; constant-initialized
// (kEntries words), so a plugin can keep one for all its files as a global.
class RangesInCache {
 public:
  static constexpr int kAnswersPerCheck = 8;
  static constexpr unsigned kEntryBits = 12;
  static constexpr size_t kEntries = size_t{1} << kEntryBits;

  constexpr RangesInCache() = default;
  RangesInCache(const RangesInCache&) = delete;
  RangesInCache& operator=(const RangesInCache&) = delete;

  bool InCache(int fd, uint64_t offset, uint64_t length) noexcept {
    const uint64_t hash =
        detail::MixBits(offset * 0x9e3779b97f4a7c15u ^ length * 0xc2b2ae3d27d4eb4fu ^
                        static_cast<uint64_t>(static_cast<uint32_t>(fd)));
    if (held_.Recall(hash, kAnswersPerCheck)) return true;
    uint64_t cached = 0, pages = 0;
    const bool held =
        foreactor_pages_cached(fd, offset, length, &cached, &pages) == 0 && cached == pages;
    if (held) {
      held_.Remember(hash);
    } else {
      held_.Forget(hash);
    }
    return held;
  }

 private:
  detail::RecallTable<kEntryBits> held_;
};

}  // namespace plugin
}  // namespace foreactor

#endif  // FOREACTOR_FOREACTOR_HPP_
