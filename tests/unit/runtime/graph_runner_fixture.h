// graph_runner_fixture.h: what the tests of GraphRunner (graph_runner*_test.cc)
// share: the interposer's part (ProgramCall), a pread loop graph and its
// plugin state, an fstatat loop and the program's checked stat, settings,
// and a fixture with a data file of kBlocks blocks and the deterministic
// fake engine.  Each test plays the part of the interposer: it offers a
// call, and runs it for real when the runtime declines, exactly as
// src/intercept does.
#ifndef FOREACTOR_TESTS_UNIT_RUNTIME_GRAPH_RUNNER_FIXTURE_H_
#define FOREACTOR_TESTS_UNIT_RUNTIME_GRAPH_RUNNER_FIXTURE_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine/test_files.h"
#include "graph/graph.h"
#include "gtest/gtest.h"
#include "runtime/fake_engine.h"
#include "runtime/graph_runner.h"
#include "runtime/program_calls.h"

namespace foreactor {

constexpr size_t kBlock = 4096;
constexpr int kBlocks = 64;

// What the interposer does with one program call.
inline int64_t ProgramCall(GraphRunner& scope, const foreactor_call& call, bool* served = nullptr) {
  InterceptedCall intercepted;
  intercepted.call = call;
  int64_t result = 0;
  if (scope.Offer(&intercepted, &result)) {
    if (served != nullptr) *served = true;
    return result;
  }
  if (served != nullptr) *served = false;
  result = RunDirectly(intercepted.call);
  if (intercepted.claimed_by != nullptr) scope.Complete(&intercepted, result);  // as CompleteCall()
  return result;
}

inline foreactor_call Pread(int fd, void* buffer, size_t length, int64_t offset) {
  foreactor_call call{};
  call.type = FOREACTOR_CALL_PREAD;
  call.fd = fd;
  call.buffer = buffer;
  call.length = length;
  call.offset = offset;
  return call;
}

// A read(2) of `length` bytes at the file position of `fd`.
inline foreactor_call Read(int fd, void* buffer, size_t length) {
  foreactor_call call{};
  call.type = FOREACTOR_CALL_READ;
  call.fd = fd;
  call.buffer = buffer;
  call.length = length;
  return call;
}

// Plugin state of the pread loop graph below.
struct LoopState {
  int fd = -1;
  std::vector<int64_t> offsets;
  size_t known = SIZE_MAX;  // arguments of visits >= known are "not yet"
  std::vector<std::vector<uint64_t>> result_visits;
  std::vector<int64_t> results;
};

inline foreactor_readiness LoopPreadArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<LoopState*>(visit->scope_state);
  uint64_t i = visit->iteration[0];
  if (i >= state->known) return FOREACTOR_NOT_YET;
  call->fd = state->fd;
  call->length = kBlock;
  call->offset = state->offsets[i];
  return FOREACTOR_READY;
}

inline void RecordResult(const foreactor_visit* visit, int64_t result) {
  auto* state = static_cast<LoopState*>(visit->scope_state);
  state->result_visits.emplace_back(visit->iteration, visit->iteration + visit->loop_count);
  state->results.push_back(result);
}

inline int LoopMore(const foreactor_visit* visit) {
  auto* state = static_cast<LoopState*>(visit->scope_state);
  return visit->iteration[0] + 1 < state->offsets.size() ? 0 : 1;
}

// start -> call -> branch "more" -> {call (loop), end}; `weak` marks the
// call -> branch edge weak.
inline std::unique_ptr<Graph> OneCallLoop(const char* name, foreactor_call_type type,
                                          foreactor_arguments_fn arguments,
                                          foreactor_result_fn result, foreactor_choice_fn more,
                                          bool weak) {
  auto graph = std::make_unique<Graph>(name);
  int call = graph->AddSyscall("call", type, arguments, result, nullptr);
  int branch = graph->AddBranch("more", more, nullptr);
  graph->SetNext(FOREACTOR_START_NODE, call, false);
  graph->SetNext(call, branch, weak);
  graph->AddChild(branch, call, false);
  graph->AddChild(branch, FOREACTOR_END_NODE, false);
  std::string error;
  EXPECT_TRUE(graph->Finish(&error)) << error;
  return graph;
}

// start -> `first` -> `second` -> branch `more` -> {`first` (loop), end}.
inline std::unique_ptr<Graph> TwoCallLoop(const char* name, foreactor_call_type first_type,
                                          foreactor_arguments_fn first_arguments,
                                          foreactor_call_type second_type,
                                          foreactor_arguments_fn second_arguments,
                                          foreactor_choice_fn more_choice) {
  auto graph = std::make_unique<Graph>(name);
  const int first = graph->AddSyscall("first", first_type, first_arguments, nullptr, nullptr);
  const int second = graph->AddSyscall("second", second_type, second_arguments, nullptr, nullptr);
  const int more = graph->AddBranch("more", more_choice, nullptr);
  graph->SetNext(FOREACTOR_START_NODE, first, false);
  graph->SetNext(first, second, false);
  graph->SetNext(second, more, false);
  graph->AddChild(more, first, false);
  graph->AddChild(more, FOREACTOR_END_NODE, false);
  std::string error;
  EXPECT_TRUE(graph->Finish(&error)) << error;
  return graph;
}

// The loop over LoopState::offsets.
inline std::unique_ptr<Graph> LoopGraph(foreactor_call_type type, foreactor_arguments_fn arguments,
                                        bool weak = false) {
  return OneCallLoop("loop", type, arguments, RecordResult, LoopMore, weak);
}

// fstatat loop over StatState::names, all relative to directory_fd.
struct StatState {
  int directory_fd = -1;
  std::vector<std::string> names;
};

inline foreactor_readiness StatArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<StatState*>(visit->scope_state);
  call->fd = state->directory_fd;
  call->path = state->names[visit->iteration[0]].c_str();
  call->flags = AT_SYMLINK_NOFOLLOW;
  return FOREACTOR_READY;
}

inline int StatMore(const foreactor_visit* visit) {
  auto* state = static_cast<StatState*>(visit->scope_state);
  return visit->iteration[0] + 1 < state->names.size() ? 0 : 1;
}

// The program's fstatat(directory_fd, name, _, AT_SYMLINK_NOFOLLOW) through
// `scope`: its result and struct stat must be byte-for-byte a plain
// fstatat's.  Returns the result.
inline int64_t CheckedProgramStat(GraphRunner& scope, int directory_fd, const std::string& name) {
  struct stat got, expected;
  std::memset(&got, 0xab, sizeof(got));
  std::memset(&expected, 0xab, sizeof(expected));
  foreactor_call call{};
  call.type = FOREACTOR_CALL_FSTATAT;
  call.fd = directory_fd;
  call.path = name.c_str();
  call.flags = AT_SYMLINK_NOFOLLOW;
  call.buffer = &got;
  const int64_t result = ProgramCall(scope, call);
  const int plain = ::fstatat(directory_fd, name.c_str(), &expected, AT_SYMLINK_NOFOLLOW);
  EXPECT_EQ(result, plain < 0 ? -errno : plain) << name;
  if (plain == 0) {
    EXPECT_EQ(std::memcmp(&got, &expected, sizeof(got)), 0) << name;
  }
  return result;
}

// Settings for the tests of the issuing machinery: the test files are
// always in the page cache, so page-cache awareness is off unless a test
// is about it, and the depth is exact (a bound would move with the time
// the calls take).
inline GraphSettings Depth(unsigned depth) {
  GraphSettings settings;
  settings.enabled = true;
  settings.automatic_depth = false;
  settings.exact_depth = true;
  settings.depth = depth;
  settings.page_cache_aware = false;
  return settings;
}

inline GraphSettings CacheAware(unsigned depth) {
  GraphSettings settings = Depth(depth);
  settings.page_cache_aware = true;
  return settings;
}

// Reads the peek head judged against the page cache: found there by its
// probe (after waiting or not), found coming in, or started with
// readahead(2).
inline uint64_t ReadsJudgedAhead(const Statistics& statistics) {
  return statistics.found_cached + statistics.probes_waited + statistics.found_present +
         statistics.reads_started;
}

// Blocks 0, 1, 2, ... `count` - 1.
inline std::vector<int64_t> FirstBlocks(size_t count) {
  std::vector<int64_t> blocks;
  for (size_t i = 0; i < count; ++i) blocks.push_back(static_cast<int64_t>(i % kBlocks));
  return blocks;
}

// Arguments of a read loop over the blocks in order, from the first: a
// read at the file position predicts the offset a plain read would use.
inline foreactor_readiness SequentialReadArguments(const foreactor_visit* visit,
                                                   foreactor_call* call) {
  auto* state = static_cast<LoopState*>(visit->scope_state);
  call->fd = state->fd;
  call->length = kBlock;
  call->offset = static_cast<int64_t>(visit->iteration[0] * kBlock);
  return FOREACTOR_READY;
}

class GraphRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    directory_ = temp_.path();
    data_path_ = temp_.Path("data");
    int fd = ::open(data_path_.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    std::vector<char> bytes(kBlock * kBlocks);
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = static_cast<char>((i * 131 + i / kBlock) & 0xff);
    ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    // Clean pages: a page under writeback makes an RWF_NOWAIT read fail now
    // and then, which would make the page-cache tests depend on timing.
    ASSERT_EQ(::fsync(fd), 0);
    ::close(fd);
    data_fd_ = ::open(data_path_.c_str(), O_RDONLY);
    ASSERT_GE(data_fd_, 0);
  }
  void TearDown() override { ::close(data_fd_); }

  LoopState ReadLoopState(std::vector<int64_t> blocks) {
    LoopState state;
    state.fd = data_fd_;
    for (int64_t block : blocks) state.offsets.push_back(block * static_cast<int64_t>(kBlock));
    return state;
  }

  testing::TempDir temp_;  // removed with everything the tests make in it
  std::string directory_;
  std::string data_path_;
  int data_fd_ = -1;
  testing::FakeEngine engine_;
};

}  // namespace foreactor

#endif  // FOREACTOR_TESTS_UNIT_RUNTIME_GRAPH_RUNNER_FIXTURE_H_
