// Tests of the C++ plugin API (foreactor.hpp): graphs built with the typed
// builder, their structure and DOT picture, the callbacks as the C runtime
// calls them (State, iteration indices, exceptions kept out), the call
// helpers, error reporting, and the RAII scope.

// The internal graph model first: foreactor.hpp puts a class template named
// Graph beside it, after which the internal one is only reached through
// the handle.
#include "graph/graph_handle.h"

#include "foreactor/foreactor.hpp"

#include "config/settings.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

struct ScanState {
  int fd;
  const uint64_t* pages;
  size_t count;
  std::vector<int64_t> results;
};

// The plugin of the API's own example, with a result callback.
foreactor::plugin::Graph<ScanState> BuildScanGraph() {
  foreactor::GraphBuilder<ScanState> b("bptree_scan");
  auto read = b.Syscall(
      "read_leaf", FOREACTOR_CALL_PREAD,
      [](ScanState& s, const foreactor::Visit& v, foreactor_call& c) {
        c = foreactor::Pread(s.fd, 8192, static_cast<int64_t>(s.pages[v.iteration(0)] * 8192));
        return FOREACTOR_READY;
      },
      [](ScanState& s, const foreactor::Visit&, int64_t result) { s.results.push_back(result); });
  auto more = b.Branch("more", [](ScanState& s, const foreactor::Visit& v) {
    return v.iteration(0) + 1 < s.count ? 0 : 1;
  });
  b.start().Then(read).Then(more);
  more.Children({read, b.end()});
  return b.Build();
}

// The internal model behind a C++ graph.
const foreactor::Node& NodeOf(const foreactor::plugin::Graph<ScanState>& graph, int id) {
  return graph.handle()->graph.node(id);
}

// Calls a node's callbacks the way the runtime does.
class FakeRuntime {
 public:
  FakeRuntime(const foreactor::Node& node, ScanState* state, std::vector<uint64_t> iteration)
      : node_(node), iteration_(std::move(iteration)) {
    visit_.scope_state = state;
    visit_.node_data = node.node_data;
    visit_.iteration = iteration_.data();
    visit_.loop_count = static_cast<unsigned>(iteration_.size());
  }

  foreactor_readiness Arguments(foreactor_call* call) {
    *call = foreactor_call{};
    call->type = node_.call_type;
    return node_.arguments(&visit_, call);
  }
  void Result(int64_t result) { node_.result(&visit_, result); }
  int Choice() { return node_.choice(&visit_); }
  int64_t LoopCount() { return node_.loop_count(&visit_); }

 private:
  const foreactor::Node& node_;
  std::vector<uint64_t> iteration_;
  foreactor_visit visit_{};
};

TEST(CppApiTest, ScanGraphIsValidWithOneLoop) {
  const auto graph = BuildScanGraph();
  ASSERT_TRUE(graph.valid()) << graph.error();
  EXPECT_EQ(graph.error(), "");
  EXPECT_EQ(graph.name(), "bptree_scan");
  ASSERT_NE(graph.handle(), nullptr);
  const auto& model = graph.handle()->graph;  // the internal foreactor::Graph
  ASSERT_EQ(model.node_count(), 4);
  EXPECT_EQ(model.node(2).name, "read_leaf");
  EXPECT_EQ(model.node(2).call_type, FOREACTOR_CALL_PREAD);
  EXPECT_NE(model.node(2).result, nullptr);
  EXPECT_EQ(model.node(3).kind, foreactor::NodeKind::kBranch);
  ASSERT_EQ(model.loop_count(), 1);
  EXPECT_EQ(model.loop(0).header, 2);
  EXPECT_EQ(model.loop(0).branch, 3);
  EXPECT_EQ(model.node(FOREACTOR_START_NODE).next.to, 2);
  EXPECT_EQ(model.node(2).next.to, 3);
  ASSERT_EQ(model.node(3).children.size(), 2u);
  EXPECT_EQ(model.node(3).children[1].to, FOREACTOR_END_NODE);
}

TEST(CppApiTest, DotOfTheScanGraph) {
  const auto graph = BuildScanGraph();
  const std::string dot = graph.dot();
  EXPECT_EQ(dot.rfind("digraph \"bptree_scan\" {\n", 0), 0u) << dot;
  EXPECT_NE(dot.find("n2 [shape=box, label=\"read_leaf\\npread\"];"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n3 [shape=diamond, label=\"more\"];"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n3 -> n2 [label=\"0: loop 0\"];"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n3 -> n1 [label=\"1\"];"), std::string::npos) << dot;
}

TEST(CppApiTest, CallbacksSeeStateAndIteration) {
  const auto graph = BuildScanGraph();
  ASSERT_TRUE(graph.valid());
  const uint64_t pages[] = {5, 9, 2};
  ScanState state{42, pages, 3, {}};

  FakeRuntime read(NodeOf(graph, 2), &state, {1});
  foreactor_call call;
  ASSERT_EQ(read.Arguments(&call), FOREACTOR_READY);
  EXPECT_EQ(call.type, FOREACTOR_CALL_PREAD);
  EXPECT_EQ(call.fd, 42);
  EXPECT_EQ(call.length, 8192u);
  EXPECT_EQ(call.offset, 9 * 8192);
  read.Result(8192);
  read.Result(-5);
  EXPECT_EQ(state.results, (std::vector<int64_t>{8192, -5}));

  FakeRuntime first(NodeOf(graph, 3), &state, {0});
  FakeRuntime last(NodeOf(graph, 3), &state, {2});
  EXPECT_EQ(first.Choice(), 0);
  EXPECT_EQ(last.Choice(), 1);
}

TEST(CppApiTest, CapturingLambdasAndNoResultCallback) {
  int calls = 0;
  foreactor::GraphBuilder<ScanState> b("capturing");
  auto stat = b.Syscall("stat", FOREACTOR_CALL_FSTAT,
                        [&calls](ScanState& s, const foreactor::Visit&, foreactor_call& c) {
                          ++calls;
                          c = foreactor::Fstat(s.fd);
                          return FOREACTOR_READY;
                        });
  b.start().Then(stat).Then(b.end());
  const auto graph = b.Build();
  ASSERT_TRUE(graph.valid()) << graph.error();
  EXPECT_EQ(NodeOf(graph, stat.id()).result, nullptr);
  ScanState state{7, nullptr, 0, {}};
  FakeRuntime runtime(NodeOf(graph, stat.id()), &state, {});
  foreactor_call call;
  EXPECT_EQ(runtime.Arguments(&call), FOREACTOR_READY);
  EXPECT_EQ(call.fd, 7);
  EXPECT_EQ(calls, 1);
}

TEST(CppApiTest, NoExceptionReachesTheRuntime) {
  foreactor::GraphBuilder<ScanState> b("throwing");
  auto read = b.Syscall(
      "read", FOREACTOR_CALL_PREAD,
      [](ScanState&, const foreactor::Visit&, foreactor_call&) -> foreactor_readiness {
        throw std::runtime_error("arguments");
      },
      [](ScanState&, const foreactor::Visit&, int64_t) { throw std::runtime_error("result"); });
  auto more = b.Branch("more", [](ScanState&, const foreactor::Visit&) -> int {
    throw std::runtime_error("choice");
  });
  b.start().Then(read).Then(more);
  more.Children({read, b.end()});
  const auto graph = b.Build();
  ASSERT_TRUE(graph.valid()) << graph.error();
  ScanState state{0, nullptr, 0, {}};
  FakeRuntime read_runtime(NodeOf(graph, read.id()), &state, {0});
  foreactor_call call;
  EXPECT_EQ(read_runtime.Arguments(&call), FOREACTOR_NOT_YET);
  EXPECT_NO_THROW(read_runtime.Result(1));
  FakeRuntime more_runtime(NodeOf(graph, more.id()), &state, {0});
  EXPECT_EQ(more_runtime.Choice(), FOREACTOR_CHOICE_NOT_YET);
}

TEST(CppApiTest, WrongAnswersBecomeNotYet) {
  foreactor::GraphBuilder<ScanState> b("wrong");
  // Says READY with a call of another type than the node's.
  auto read = b.Syscall("read", FOREACTOR_CALL_PREAD,
                        [](ScanState& s, const foreactor::Visit&, foreactor_call& c) {
                          c = foreactor::Read(s.fd, 10, 0);
                          return FOREACTOR_READY;
                        });
  // Says NEVER: passed through unchanged.
  auto stat = b.Syscall(
      "stat", FOREACTOR_CALL_FSTAT,
      [](ScanState&, const foreactor::Visit&, foreactor_call&) { return FOREACTOR_NEVER; });
  // Names a child the branch does not have.
  auto more = b.Branch("more", [](ScanState&, const foreactor::Visit&) { return 2; });
  b.start().Then(read).Then(stat).Then(more);
  more.Children({read, b.end()});
  const auto graph = b.Build();
  ASSERT_TRUE(graph.valid()) << graph.error();
  ScanState state{3, nullptr, 0, {}};
  foreactor_call call;
  EXPECT_EQ(FakeRuntime(NodeOf(graph, read.id()), &state, {0}).Arguments(&call), FOREACTOR_NOT_YET);
  EXPECT_EQ(FakeRuntime(NodeOf(graph, stat.id()), &state, {0}).Arguments(&call), FOREACTOR_NEVER);
  EXPECT_EQ(FakeRuntime(NodeOf(graph, more.id()), &state, {0}).Choice(), FOREACTOR_CHOICE_NOT_YET);
}

// A branch with a loop count: the count reaches the C graph, sees the
// State, and a negative or throwing count reads as not known yet.
TEST(CppApiTest, ABranchWithALoopCount) {
  foreactor::GraphBuilder<ScanState> b("counted");
  auto read = b.Syscall("read", FOREACTOR_CALL_PREAD,
                        [](ScanState& s, const foreactor::Visit& v, foreactor_call& c) {
                          c = foreactor::Pread(s.fd, 8192, static_cast<int64_t>(v.iteration(0)));
                          return FOREACTOR_READY;
                        });
  auto more = b.Branch(
      "more",
      [](ScanState& s, const foreactor::Visit& v) { return v.iteration(0) + 1 < s.count ? 0 : 1; },
      [](ScanState& s, const foreactor::Visit&) -> int64_t {
        if (s.fd < 0) throw std::runtime_error("count");
        return s.fd == 0 ? -5 : static_cast<int64_t>(s.count);
      });
  b.start().Then(read).Then(more);
  more.Children({read, b.end()});
  const auto graph = b.Build();
  ASSERT_TRUE(graph.valid()) << graph.error();
  EXPECT_EQ(NodeOf(graph, more.id()).counted_loop, 0);
  ScanState state{3, nullptr, 42, {}};
  EXPECT_EQ(FakeRuntime(NodeOf(graph, more.id()), &state, {7}).LoopCount(), 42);
  state.fd = 0;
  EXPECT_EQ(FakeRuntime(NodeOf(graph, more.id()), &state, {7}).LoopCount(),
            FOREACTOR_COUNT_NOT_YET);
  state.fd = -1;
  EXPECT_EQ(FakeRuntime(NodeOf(graph, more.id()), &state, {7}).LoopCount(),
            FOREACTOR_COUNT_NOT_YET);
  // The choice is the branch's own, as without a count.
  state.fd = 3;
  EXPECT_EQ(FakeRuntime(NodeOf(graph, more.id()), &state, {41}).Choice(), 1);
}

TEST(CppApiTest, ALoopCountOnABranchThatClosesNoLoopIsReportedWithItsNode) {
  foreactor::GraphBuilder<ScanState> b("count_no_loop");
  auto read = b.Syscall(
      "read", FOREACTOR_CALL_PREAD,
      [](ScanState&, const foreactor::Visit&, foreactor_call&) { return FOREACTOR_NOT_YET; });
  auto which = b.Branch(
      "which", [](ScanState&, const foreactor::Visit&) { return 0; },
      [](ScanState&, const foreactor::Visit&) { return int64_t{1}; });
  b.start().Then(which);
  which.Children({read, b.end()});
  read.Then(b.end());
  const auto graph = b.Build();
  EXPECT_FALSE(graph.valid());
  EXPECT_EQ(graph.error(),
            "graph 'count_no_loop': node 'which' (branch): has a loop count but closes no loop (a "
            "loop count needs a branch that closes exactly one)");
}

TEST(CppApiTest, WeakEdges) {
  foreactor::GraphBuilder<ScanState> b("weak");
  auto arguments = [](ScanState&, const foreactor::Visit&, foreactor_call&) {
    return FOREACTOR_NOT_YET;
  };
  auto read = b.Syscall("read", FOREACTOR_CALL_PREAD, arguments);
  auto write = b.Syscall("write", FOREACTOR_CALL_PWRITE, arguments);
  auto more = b.Branch("more", [](ScanState&, const foreactor::Visit&) { return 0; });
  b.start().Then(read).Then(write, foreactor::kWeak).Then(more);
  more.Children({read, {b.end(), foreactor::kWeak}});
  const auto graph = b.Build();
  ASSERT_TRUE(graph.valid()) << graph.error();
  EXPECT_FALSE(NodeOf(graph, FOREACTOR_START_NODE).next.weak);
  EXPECT_TRUE(NodeOf(graph, read.id()).next.weak);
  EXPECT_FALSE(NodeOf(graph, write.id()).next.weak);
  EXPECT_FALSE(NodeOf(graph, more.id()).children[0].weak);
  EXPECT_TRUE(NodeOf(graph, more.id()).children[1].weak);
  const std::string dot = graph.dot();
  EXPECT_NE(dot.find("n2 -> n3 [style=dashed];"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n4 -> n1 [label=\"1\", style=dashed];"), std::string::npos) << dot;
}

TEST(CppApiTest, AWriteNodeDeclaresWriteBehind) {
  foreactor::GraphBuilder<ScanState> b("load");
  auto arguments = [](ScanState&, const foreactor::Visit&, foreactor_call&) {
    return FOREACTOR_NOT_YET;
  };
  auto write = b.Syscall("write_leaf", FOREACTOR_CALL_PWRITE, arguments);
  auto more = b.Branch("more", [](ScanState&, const foreactor::Visit&) { return 0; });
  write.WriteBehind();
  b.start().Then(write).Then(more);
  more.Children({write, b.end()});
  const auto graph = b.Build();
  ASSERT_TRUE(graph.valid()) << graph.error();
  EXPECT_TRUE(NodeOf(graph, write.id()).write_behind);
}

TEST(CppApiTest, WriteBehindOnAReadIsReportedWithItsNode) {
  testing::internal::CaptureStderr();
  foreactor::GraphBuilder<ScanState> b("scan");
  auto read = b.Syscall(
      "read_leaf", FOREACTOR_CALL_PREAD,
      [](ScanState&, const foreactor::Visit&, foreactor_call&) { return FOREACTOR_NOT_YET; });
  b.start().Then(read.WriteBehind()).Then(b.end());
  const auto graph = b.Build();
  testing::internal::GetCapturedStderr();
  EXPECT_FALSE(graph.valid());
  EXPECT_EQ(graph.error(),
            "graph 'scan': node 'read_leaf' (syscall pread): write-behind is only for write, "
            "pwrite, writev and pwritev nodes");
}

TEST(CppApiTest, InvalidGraphIsReportedOnceAndScopesDoNothing) {
  testing::internal::CaptureStderr();
  foreactor::GraphBuilder<ScanState> b("broken");
  auto read = b.Syscall(
      "read", FOREACTOR_CALL_PREAD,
      [](ScanState&, const foreactor::Visit&, foreactor_call&) { return FOREACTOR_NOT_YET; });
  b.start().Then(read);  // read has no successor
  const auto graph = b.Build();
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(graph.valid());
  EXPECT_EQ(graph.error(), "graph 'broken': node 'read' (syscall pread): has no successor");
  EXPECT_EQ(printed, "foreactor: graph 'broken': node 'read' (syscall pread): has no successor\n");
  // Still drawable, for debugging.
  EXPECT_NE(graph.dot().find("read"), std::string::npos);
  ScanState state{0, nullptr, 0, {}};
  testing::internal::CaptureStderr();
  { foreactor::Scope scope(graph, state); }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(CppApiTest, CApiRulesAreReportedWithTheirNodes) {
  testing::internal::CaptureStderr();
  foreactor::GraphBuilder<ScanState> b("rules");
  auto more = b.Branch("more", [](ScanState&, const foreactor::Visit&) { return 0; });
  b.start().Then(more);
  more.Then(b.end());  // a branch node takes children, not a successor
  more.Children({b.end()});
  const auto graph = b.Build();
  testing::internal::GetCapturedStderr();
  EXPECT_FALSE(graph.valid());
  EXPECT_EQ(graph.error(),
            "graph 'rules': node 'more' (branch): set_next is only for the start node and syscall "
            "nodes; a branch node takes children (add_child)");
}

TEST(CppApiTest, NodesOfAnotherGraphOrNeverAddedAreErrors) {
  testing::internal::CaptureStderr();
  foreactor::GraphBuilder<ScanState> other("other");
  auto foreign = other.Branch("foreign", [](ScanState&, const foreactor::Visit&) { return 0; });
  foreactor::GraphBuilder<ScanState> b("mixed");
  auto read = b.Syscall(
      "read", FOREACTOR_CALL_PREAD,
      [](ScanState&, const foreactor::Visit&, foreactor_call&) { return FOREACTOR_NOT_YET; });
  b.start().Then(read).Then(foreign);
  const auto mixed = b.Build();

  foreactor::GraphBuilder<ScanState> lonely("lonely");
  foreactor::NodeRef never_added;
  lonely.start().Then(never_added);
  const auto unbuilt = lonely.Build();
  testing::internal::GetCapturedStderr();

  EXPECT_FALSE(mixed.valid());
  EXPECT_EQ(mixed.error(), "graph 'mixed': node 'read': its edge leads to a node of another graph");
  EXPECT_FALSE(unbuilt.valid());
  EXPECT_EQ(unbuilt.error(),
            "graph 'lonely': node 'start': its edge leads to a node that was never added");
}

TEST(CppApiTest, EmptyCallbacksAreReported) {
  testing::internal::CaptureStderr();
  foreactor::GraphBuilder<ScanState> b("empty_callbacks");
  auto read =
      b.Syscall("read", FOREACTOR_CALL_PREAD, foreactor::GraphBuilder<ScanState>::ArgumentsFn());
  b.start().Then(read).Then(b.end());
  const auto graph = b.Build();
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(graph.error(),
            "graph 'empty_callbacks': node 'read' (syscall pread): has no arguments callback");
}

TEST(CppApiTest, BuildTwiceGivesAnInvalidGraph) {
  foreactor::GraphBuilder<ScanState> b("twice");
  b.start().Then(b.end());
  const auto first = b.Build();
  EXPECT_TRUE(first.valid()) << first.error();
  testing::internal::CaptureStderr();
  const auto second = b.Build();
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "foreactor: GraphBuilder::Build() called twice\n");
  EXPECT_FALSE(second.valid());
  EXPECT_EQ(second.handle(), nullptr);
  EXPECT_EQ(second.dot(), "");
}

TEST(CppApiTest, MovedGraphKeepsItsCallbacks) {
  auto original = BuildScanGraph();
  foreactor_graph* handle = original.handle();
  foreactor::plugin::Graph<ScanState> moved(std::move(original));
  EXPECT_EQ(moved.handle(), handle);
  EXPECT_TRUE(moved.valid());
  // The moved-from graph is empty.
  EXPECT_EQ(original.handle(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_FALSE(original.valid());
  const uint64_t pages[] = {3};
  ScanState state{1, pages, 1, {}};
  foreactor_call call;
  EXPECT_EQ(FakeRuntime(NodeOf(moved, 2), &state, {0}).Arguments(&call), FOREACTOR_READY);
  EXPECT_EQ(call.offset, 3 * 8192);
}

// FOREACTOR set to `value` (unset when null) for the life of this object,
// the settings reloaded both ways.
class ForeactorSetting {
 public:
  explicit ForeactorSetting(const char* value) { Set(value); }
  ~ForeactorSetting() { Set(nullptr); }
  ForeactorSetting(const ForeactorSetting&) = delete;
  ForeactorSetting& operator=(const ForeactorSetting&) = delete;

 private:
  static void Set(const char* value) {
    if (value == nullptr) {
      unsetenv("FOREACTOR");
    } else {
      setenv("FOREACTOR", value, 1);
    }
    foreactor::ReloadSettingsForTesting();
  }
};

// Leaves two nested scopes, the inner one by an exception, with foreactor
// on.  The runtime reports (once per process) a scope exit that does not
// match its innermost open scope: leaving the outer scope with the inner
// one still open would be reported, and an extra exit afterwards must be
// reported because both scopes are closed.
TEST(CppApiTest, ScopesAreLeftOnException) {
  const ForeactorSetting on("1");
  auto outer_graph = BuildScanGraph();
  foreactor::GraphBuilder<ScanState> b("inner");
  b.start().Then(b.end());
  auto inner_graph = b.Build();
  ASSERT_TRUE(outer_graph.valid());
  ASSERT_TRUE(inner_graph.valid());
  const uint64_t pages[] = {0};
  ScanState state{-1, pages, 1, {}};  // usable though the scope speculates
  testing::internal::CaptureStderr();
  {
    foreactor::Scope outer(outer_graph, state);
    try {
      foreactor::Scope inner(inner_graph, state);
      throw std::runtime_error("the function failed");
    } catch (const std::runtime_error&) {
    }
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  testing::internal::CaptureStderr();
  foreactor_scope_exit(inner_graph.handle());
  EXPECT_NE(testing::internal::GetCapturedStderr().find("does not match the innermost open scope"),
            std::string::npos);
}

// With foreactor off for the process, scopes are not tracked at all (a new
// process builds no thread state for them): an exit without its enter
// changes nothing and reports nothing.
TEST(CppApiTest, ForeactorOffTracksNoScope) {
  const ForeactorSetting off("0");
  foreactor::GraphBuilder<ScanState> b("untracked");
  b.start().Then(b.end());
  auto graph = b.Build();
  ASSERT_TRUE(graph.valid());
  const uint64_t pages[] = {0};
  ScanState state{-1, pages, 1, {}};
  testing::internal::CaptureStderr();
  { foreactor::Scope scope(graph, state); }
  foreactor_scope_exit(graph.handle());
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  foreactor_scope_outcome outcome{};
  EXPECT_EQ(foreactor_last_scope_outcome(graph.handle(), &outcome), 0);
}

TEST(CppApiTest, VisitIterationOutOfRangeIsZero) {
  const uint64_t iteration[] = {4, 6};
  foreactor_visit raw{};
  raw.iteration = iteration;
  raw.loop_count = 2;
  const foreactor::Visit visit(raw);
  EXPECT_EQ(visit.loop_count(), 2u);
  EXPECT_EQ(visit.iteration(0), 4u);
  EXPECT_EQ(visit.iteration(1), 6u);
  EXPECT_EQ(visit.iteration(2), 0u);
}

TEST(CppApiTest, CallHelpers) {
  foreactor_call c = foreactor::Open("/a", O_RDONLY);
  EXPECT_EQ(c.type, FOREACTOR_CALL_OPEN);
  EXPECT_STREQ(c.path, "/a");
  EXPECT_EQ(c.flags, O_RDONLY);
  EXPECT_EQ(c.fd, -1);

  c = foreactor::Openat(3, "b", O_WRONLY | O_CREAT, 0644);
  EXPECT_EQ(c.type, FOREACTOR_CALL_OPENAT);
  EXPECT_EQ(c.fd, 3);
  EXPECT_EQ(c.flags, O_WRONLY | O_CREAT);
  EXPECT_EQ(c.mode, 0644u);

  c = foreactor::Close(4);
  EXPECT_EQ(c.type, FOREACTOR_CALL_CLOSE);
  EXPECT_EQ(c.fd, 4);

  c = foreactor::Read(5, 100, 200);
  EXPECT_EQ(c.type, FOREACTOR_CALL_READ);
  EXPECT_EQ(c.length, 100u);
  EXPECT_EQ(c.offset, 200);
  EXPECT_EQ(c.buffer, nullptr);

  const char bytes[] = "data";
  c = foreactor::Write(6, bytes, 4, 8);
  EXPECT_EQ(c.type, FOREACTOR_CALL_WRITE);
  EXPECT_EQ(c.buffer, bytes);
  EXPECT_EQ(c.length, 4u);
  EXPECT_EQ(c.offset, 8);

  c = foreactor::Pwrite(6, bytes, 3, 9);
  EXPECT_EQ(c.type, FOREACTOR_CALL_PWRITE);
  EXPECT_EQ(c.offset, 9);

  c = foreactor::Lseek(7, 10, SEEK_END);
  EXPECT_EQ(c.type, FOREACTOR_CALL_LSEEK);
  EXPECT_EQ(c.offset, 10);
  EXPECT_EQ(c.whence, SEEK_END);

  c = foreactor::Fstatat(AT_FDCWD, "x", AT_SYMLINK_NOFOLLOW);
  EXPECT_EQ(c.type, FOREACTOR_CALL_FSTATAT);
  EXPECT_EQ(c.fd, AT_FDCWD);
  EXPECT_EQ(c.flags, AT_SYMLINK_NOFOLLOW);

  EXPECT_EQ(foreactor::Stat("s").type, FOREACTOR_CALL_STAT);
  EXPECT_EQ(foreactor::Lstat("l").type, FOREACTOR_CALL_LSTAT);

  c = foreactor::Statx(AT_FDCWD, "y", 0, STATX_SIZE);
  EXPECT_EQ(c.type, FOREACTOR_CALL_STATX);
  EXPECT_EQ(c.mode, unsigned{STATX_SIZE});

  c = foreactor::Getdents64(8, 32768);
  EXPECT_EQ(c.type, FOREACTOR_CALL_GETDENTS64);
  EXPECT_EQ(c.length, 32768u);

  EXPECT_EQ(foreactor::Readv(9, 300, 0).type, FOREACTOR_CALL_READV);
  c = foreactor::Preadv(9, 300, 40);
  EXPECT_EQ(c.type, FOREACTOR_CALL_PREADV);
  EXPECT_EQ(c.length, 300u);

  char first[3] = {};
  char second[5] = {};
  const struct iovec iov[] = {{first, sizeof first}, {second, sizeof second}};
  c = foreactor::Pwritev(10, iov, 2, 50);
  EXPECT_EQ(c.type, FOREACTOR_CALL_PWRITEV);
  EXPECT_EQ(c.iov, iov);
  EXPECT_EQ(c.iovcnt, 2);
  EXPECT_EQ(c.length, 8u);
  EXPECT_EQ(foreactor::Writev(10, iov, 2, 0).type, FOREACTOR_CALL_WRITEV);

  EXPECT_EQ(foreactor::Pread(1, 2, 3).link_next, 0);
  c = foreactor::Linked(foreactor::Pread(1, 2, 3));
  EXPECT_EQ(c.link_next, 1);
  EXPECT_EQ(c.type, FOREACTOR_CALL_PREAD);
  EXPECT_EQ(c.offset, 3);
}

}  // namespace
