// Unit tests of the pre-issuing runtime (GraphRunner), driven by the
// deterministic fake engine on real temporary files.  Each test plays the
// part of the interposer: it offers a call, and runs it for real when the
// runtime declines, exactly as src/intercept does.
#include "runtime/graph_runner.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "engine/test_files.h"
#include "graph/graph.h"
#include "gtest/gtest.h"
#include "runtime/fake_engine.h"
#include "runtime/program_calls.h"

namespace foreactor {
namespace {

constexpr size_t kBlock = 4096;
constexpr int kBlocks = 64;

// What the interposer does with one program call.
int64_t ProgramCall(GraphRunner& scope, const foreactor_call& call, bool* served = nullptr) {
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

foreactor_call Pread(int fd, void* buffer, size_t length, int64_t offset) {
  foreactor_call call{};
  call.type = FOREACTOR_CALL_PREAD;
  call.fd = fd;
  call.buffer = buffer;
  call.length = length;
  call.offset = offset;
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

foreactor_readiness LoopPreadArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<LoopState*>(visit->scope_state);
  uint64_t i = visit->iteration[0];
  if (i >= state->known) return FOREACTOR_NOT_YET;
  call->fd = state->fd;
  call->length = kBlock;
  call->offset = state->offsets[i];
  return FOREACTOR_READY;
}

void RecordResult(const foreactor_visit* visit, int64_t result) {
  auto* state = static_cast<LoopState*>(visit->scope_state);
  state->result_visits.emplace_back(visit->iteration, visit->iteration + visit->loop_count);
  state->results.push_back(result);
}

int LoopMore(const foreactor_visit* visit) {
  auto* state = static_cast<LoopState*>(visit->scope_state);
  return visit->iteration[0] + 1 < state->offsets.size() ? 0 : 1;
}

// start -> call -> branch "more" -> {call (loop), end}; `weak` marks the
// call -> branch edge weak.
std::unique_ptr<Graph> OneCallLoop(const char* name, foreactor_call_type type,
                                   foreactor_arguments_fn arguments, foreactor_result_fn result,
                                   foreactor_choice_fn more, bool weak) {
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

// The loop over LoopState::offsets.
std::unique_ptr<Graph> LoopGraph(foreactor_call_type type, foreactor_arguments_fn arguments,
                                 bool weak = false) {
  return OneCallLoop("loop", type, arguments, RecordResult, LoopMore, weak);
}

// Settings for the tests of the issuing machinery: the test files are
// always in the page cache, so page-cache awareness is off unless a test
// is about it.
GraphSettings Depth(unsigned depth) {
  GraphSettings settings;
  settings.enabled = true;
  settings.automatic_depth = false;
  settings.depth = depth;
  settings.page_cache_aware = false;
  return settings;
}

GraphSettings CacheAware(unsigned depth) {
  GraphSettings settings = Depth(depth);
  settings.page_cache_aware = true;
  return settings;
}

// Drops block `block` of `path` from the page cache by writing the same
// bytes back with O_DIRECT, which invalidates the cached range (on file
// systems with large folios, the whole folio around it).
void EvictBlock(const std::string& path, int block) {
  int direct = ::open(path.c_str(), O_RDWR | O_DIRECT);
  ASSERT_GE(direct, 0);
  void* aligned = nullptr;
  ASSERT_EQ(posix_memalign(&aligned, kBlock, kBlock), 0);
  int plain = ::open(path.c_str(), O_RDONLY);
  ASSERT_EQ(::pread(plain, aligned, kBlock, block * kBlock), static_cast<ssize_t>(kBlock));
  ASSERT_EQ(::pwrite(direct, aligned, kBlock, block * kBlock), static_cast<ssize_t>(kBlock));
  ::close(plain);
  ::close(direct);
  free(aligned);
}

// True when block `block` of `path` is in the page cache (mincore: no I/O).
bool BlockIsCached(const std::string& path, int block) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return true;
  void* map = mmap(nullptr, kBlock, PROT_READ, MAP_SHARED, fd, block * kBlock);
  ::close(fd);
  if (map == MAP_FAILED) return true;
  unsigned char resident = 1;
  const bool known = mincore(map, kBlock, &resident) == 0;
  munmap(map, kBlock);
  return !known || (resident & 1) != 0;
}

// EvictBlock on blocks [first, last] until the page cache really lacks all
// of them: readahead started by earlier reads (EvictBlock's own included)
// may bring some back.  Returns false if they kept coming back.
bool EvictBlocksForSure(const std::string& path, int first, int last) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    for (int block = first; block <= last; ++block) EvictBlock(path, block);
    usleep(10 * 1000);
    bool any_cached = false;
    for (int block = first; block <= last; ++block)
      any_cached = any_cached || BlockIsCached(path, block);
    if (!any_cached) return true;
  }
  return false;
}

class GraphRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/foreactor-runtime-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    directory_ = pattern;
    data_path_ = directory_ + "/data";
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
  void TearDown() override {
    ::close(data_fd_);
    std::string command = "rm -rf " + directory_;
    ASSERT_EQ(system(command.c_str()), 0);
  }

  LoopState ReadLoopState(std::vector<int64_t> blocks) {
    LoopState state;
    state.fd = data_fd_;
    for (int64_t block : blocks) state.offsets.push_back(block * static_cast<int64_t>(kBlock));
    return state;
  }

  // One scope of `scope` (a pread loop graph) in which the program reads 4
  // blocks, each one byte off the predicted offset: 4 mispredictions in a
  // row suspend speculation.
  void SuspendWithFourWrongReads(GraphRunner& scope) {
    LoopState state = ReadLoopState({0, 1, 2, 3, 4, 5, 6, 7});
    scope.Enter(&state);
    char buffer[kBlock];
    for (size_t i = 0; i < 4; ++i)
      ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[i] + 1));
    scope.Exit();
  }

  std::string directory_;
  std::string data_path_;
  int data_fd_ = -1;
  testing::FakeEngine engine_;
};

TEST_F(GraphRunnerTest, PreadLoopIsIssuedAheadAndServedWithExactBytes) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  ASSERT_TRUE(scope.ok());
  LoopState state = ReadLoopState({7, 3, 60, 12, 0, 33, 5, 41, 9, 2});
  scope.Enter(&state);
  EXPECT_EQ(engine_.prepared().size(), 4u) << "depth 4 issues four visits at scope entry";

  for (size_t i = 0; i < state.offsets.size(); ++i) {
    char got[kBlock];
    char expected[kBlock];
    bool served = false;
    int64_t result = ProgramCall(scope, Pread(data_fd_, got, kBlock, state.offsets[i]), &served);
    ASSERT_EQ(::pread(data_fd_, expected, kBlock, state.offsets[i]), static_cast<ssize_t>(kBlock));
    EXPECT_TRUE(served) << "visit " << i;
    ASSERT_EQ(result, static_cast<int64_t>(kBlock));
    EXPECT_EQ(std::memcmp(got, expected, kBlock), 0) << "visit " << i;
  }
  EXPECT_EQ(scope.statistics().issued_early, 10u);
  EXPECT_EQ(scope.statistics().consumed, 10u);
  EXPECT_EQ(scope.statistics().mispredicted, 0u);
  ASSERT_EQ(state.results.size(), 10u);
  for (size_t i = 0; i < state.results.size(); ++i) {
    EXPECT_EQ(state.result_visits[i], std::vector<uint64_t>{i})
        << "result callbacks in program order";
  }
  scope.Exit();
}

// Reads of a quarter of the byte budget and one byte more: four fill it.
foreactor_readiness LargePreadArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<LoopState*>(visit->scope_state);
  call->fd = state->fd;
  call->length = GraphRunner::kMaxBytesAhead / 4 + 1;
  call->offset = state->offsets[visit->iteration[0]];
  return FOREACTOR_READY;
}

TEST_F(GraphRunnerTest, VisitsAheadMoveAtMostTheByteBudget) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LargePreadArguments);
  GraphRunner scope(*graph, Depth(32), &engine_);
  ASSERT_TRUE(scope.ok());
  LoopState state = ReadLoopState({0, 1, 2, 3, 4, 5, 6, 7});
  scope.Enter(&state);
  EXPECT_EQ(engine_.prepared().size(), 4u) << "the fourth read crosses the budget, and still goes";

  const size_t length = GraphRunner::kMaxBytesAhead / 4 + 1;
  std::vector<char> got(length), expected(length);
  for (size_t i = 0; i < state.offsets.size(); ++i) {
    bool served = false;
    int64_t result =
        ProgramCall(scope, Pread(data_fd_, got.data(), length, state.offsets[i]), &served);
    EXPECT_TRUE(served) << "visit " << i;
    const ssize_t plain = ::pread(data_fd_, expected.data(), length, state.offsets[i]);
    ASSERT_EQ(result, plain) << "visit " << i;
    EXPECT_EQ(std::memcmp(got.data(), expected.data(), static_cast<size_t>(plain)), 0)
        << "visit " << i;
    if (i == 0) {
      EXPECT_EQ(engine_.prepared().size(), 5u) << "one read consumed, one more ahead";
    }
  }
  EXPECT_EQ(scope.statistics().issued_early, 8u);
  EXPECT_EQ(scope.statistics().consumed, 8u);
  scope.Exit();
}

TEST_F(GraphRunnerTest, NotYetArgumentsStopThePeekHeadUntilKnown) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(8), &engine_);
  LoopState state = ReadLoopState({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  state.known = 2;
  scope.Enter(&state);
  EXPECT_EQ(engine_.prepared().size(), 2u);
  state.known = SIZE_MAX;
  char buffer[kBlock];
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[0]));
  // Served visit 0; the walk resumed and filled up to depth 8 again.
  EXPECT_EQ(engine_.prepared().size(), 9u);
  for (size_t i = 1; i < state.offsets.size(); ++i) {
    ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[i])),
              static_cast<int64_t>(kBlock));
  }
  EXPECT_EQ(scope.statistics().consumed, 10u);
  scope.Exit();
}

TEST_F(GraphRunnerTest, WrongOffsetIsAMispredictionThatStillReturnsTheRightBytes) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  LoopState state = ReadLoopState({1, 2, 3, 4, 5, 6});
  scope.Enter(&state);
  for (size_t i = 0; i < state.offsets.size(); ++i) {
    int64_t offset = (i == 2) ? 50 * static_cast<int64_t>(kBlock) : state.offsets[i];
    char got[kBlock], expected[kBlock];
    bool served = true;
    ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, got, kBlock, offset), &served),
              static_cast<int64_t>(kBlock));
    ASSERT_EQ(::pread(data_fd_, expected, kBlock, offset), static_cast<ssize_t>(kBlock));
    EXPECT_EQ(std::memcmp(got, expected, kBlock), 0);
    EXPECT_EQ(served, i != 2);
  }
  EXPECT_EQ(scope.statistics().mispredicted, 1u);
  EXPECT_EQ(scope.statistics().consumed, 5u);
  EXPECT_TRUE(scope.speculating());
  scope.Exit();
}

// Blocks 0, 1, 2, ... `count` - 1.
std::vector<int64_t> FirstBlocks(size_t count) {
  std::vector<int64_t> blocks;
  for (size_t i = 0; i < count; ++i) blocks.push_back(static_cast<int64_t>(i % kBlocks));
  return blocks;
}

TEST_F(GraphRunnerTest, RepeatedMispredictionsSuspendSpeculationUntilPredictionsAreRightAgain) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  LoopState state = ReadLoopState(FirstBlocks(40));
  scope.Enter(&state);
  char buffer[kBlock];
  size_t next = 0;
  for (; next < 4; ++next) {
    ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[next] + 1));
  }
  EXPECT_TRUE(scope.suspended());
  EXPECT_EQ(scope.statistics().speculation_stopped, 1u);
  const size_t prepared = engine_.prepared().size();
  // The frontier still follows the program: 15 correct calls leave it
  // suspended, the 16th resumes speculation, which issues at once.
  for (; next < 4 + 15; ++next) {
    bool served = true;
    int64_t result =
        ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[next]), &served);
    EXPECT_FALSE(served) << "a suspended scope issues nothing early";
    EXPECT_EQ(result, static_cast<int64_t>(kBlock));
  }
  EXPECT_TRUE(scope.suspended());
  EXPECT_EQ(engine_.prepared().size(), prepared);
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[next++]));
  EXPECT_FALSE(scope.suspended());
  EXPECT_EQ(scope.statistics().speculation_resumed, 1u);
  EXPECT_GT(engine_.prepared().size(), prepared);
  bool served = false;
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[next++]), &served);
  EXPECT_TRUE(served) << "after resuming, the next call is served early";
  scope.Exit();
}

TEST_F(GraphRunnerTest, SuspensionCarriesIntoTheNextScope) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  SuspendWithFourWrongReads(scope);
  const size_t prepared = engine_.prepared().size();
  LoopState again = ReadLoopState(FirstBlocks(8));
  scope.Enter(&again);
  EXPECT_TRUE(scope.suspended());
  EXPECT_EQ(engine_.prepared().size(), prepared)
      << "a suspended graph issues nothing at scope entry";
  scope.Exit();
}

TEST_F(GraphRunnerTest, ARetryBetweenScopesLiftsTheSuspension) {
  // The scope gate opens no scope while a graph is suspended, so no run of
  // correct predictions can lift it; the gate's retry does.
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  SuspendWithFourWrongReads(scope);
  ASSERT_TRUE(scope.suspended());
  scope.RetrySpeculation();
  EXPECT_FALSE(scope.suspended());
  EXPECT_EQ(scope.statistics().speculation_resumed, 1u);
  const size_t prepared = engine_.prepared().size();
  LoopState again = ReadLoopState(FirstBlocks(8));
  scope.Enter(&again);
  EXPECT_GT(engine_.prepared().size(), prepared) << "the retried graph issues at scope entry";
  char buffer[kBlock];
  bool served = false;
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, again.offsets[0]), &served);
  EXPECT_TRUE(served);
  scope.Exit();
}

TEST_F(GraphRunnerTest, SuspensionSoonAfterResumingAsksForALongerRun) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  LoopState state = ReadLoopState(FirstBlocks(200));
  scope.Enter(&state);
  char buffer[kBlock];
  size_t next = 0;
  auto wrong = [&] {
    ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[next++] + 1));
  };
  auto right = [&] { ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[next++])); };
  for (int i = 0; i < 4; ++i) wrong();
  ASSERT_TRUE(scope.suspended());
  for (int i = 0; i < 16; ++i) right();
  ASSERT_FALSE(scope.suspended());
  // Wrong again at once: the early reads ahead are mispredictions.
  for (int i = 0; i < 4; ++i) wrong();
  ASSERT_TRUE(scope.suspended());
  EXPECT_EQ(scope.statistics().speculation_stopped, 2u);
  for (int i = 0; i < 16; ++i) right();
  EXPECT_TRUE(scope.suspended()) << "the second suspension needs 32 correct calls";
  for (int i = 0; i < 16; ++i) right();
  EXPECT_FALSE(scope.suspended());
  EXPECT_EQ(scope.statistics().speculation_resumed, 2u);
  scope.Exit();
}

TEST_F(GraphRunnerTest, CallsOnOtherDescriptorsPassThroughUntouched) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  LoopState state = ReadLoopState({1, 2, 3});
  scope.Enter(&state);
  int other = ::open(data_path_.c_str(), O_RDONLY);
  char buffer[kBlock];
  InterceptedCall intercepted;
  intercepted.call = Pread(other, buffer, kBlock, 0);
  int64_t result;
  EXPECT_FALSE(scope.Offer(&intercepted, &result));
  EXPECT_EQ(intercepted.claimed_by, nullptr);
  for (size_t i = 0; i < 3; ++i) {
    bool served = false;
    ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[i]), &served);
    EXPECT_TRUE(served);
  }
  EXPECT_EQ(scope.statistics().passed_through, 1u);
  ::close(other);
  scope.Exit();
}

// pwrite loop: a write beyond a weak edge is never issued early.
struct WriteState {
  int fd = -1;
  std::vector<int64_t> offsets;
  std::vector<char> bytes;
  std::vector<int64_t> results;
};

foreactor_readiness LoopPwriteArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<WriteState*>(visit->scope_state);
  call->fd = state->fd;
  call->buffer = state->bytes.data();
  call->length = state->bytes.size();
  call->offset = state->offsets[visit->iteration[0]];
  return FOREACTOR_READY;
}

int WriteMore(const foreactor_visit* visit) {
  auto* state = static_cast<WriteState*>(visit->scope_state);
  return visit->iteration[0] + 1 < state->offsets.size() ? 0 : 1;
}

std::unique_ptr<Graph> WriteLoopGraph(bool weak) {
  return OneCallLoop("writes", FOREACTOR_CALL_PWRITE, LoopPwriteArguments, nullptr, WriteMore,
                     weak);
}

// A write(2) made outside the graph changes only the bytes at the file
// position: early writes further on in the same file stay valid (before,
// the whole file counted as changed, and the early writes ahead were thrown
// away after they had run, to run again when the program made them).
TEST_F(GraphRunnerTest, WriteAtTheFilePositionKeepsEarlyWritesElsewhere) {
  std::string path = directory_ + "/out";
  WriteState state;
  state.fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
  state.offsets = {4096, 8192, 12288, 16384};
  state.bytes.assign(kBlock, 'w');
  auto graph = WriteLoopGraph(/*weak=*/false);
  GraphRunner scope(*graph, Depth(8), &engine_);
  scope.Enter(&state);
  ASSERT_EQ(engine_.prepared().size(), 4u);
  std::vector<char> header(kBlock, 'h');
  foreactor_call foreign{};
  foreign.type = FOREACTOR_CALL_WRITE;  // at the file position, 0: block 0
  foreign.fd = state.fd;
  foreign.buffer = header.data();
  foreign.length = kBlock;
  EXPECT_EQ(ProgramCall(scope, foreign), static_cast<int64_t>(kBlock));
  EXPECT_EQ(scope.statistics().wasted, 0u);
  for (int64_t offset : state.offsets) {
    bool served = false;
    EXPECT_EQ(ProgramCall(
                  scope,
                  [&] {
                    foreactor_call call{};
                    call.type = FOREACTOR_CALL_PWRITE;
                    call.fd = state.fd;
                    call.buffer = state.bytes.data();
                    call.length = kBlock;
                    call.offset = offset;
                    return call;
                  }(),
                  &served),
              static_cast<int64_t>(kBlock));
    EXPECT_TRUE(served) << "offset " << offset;
  }
  EXPECT_EQ(scope.statistics().wasted, 0u);
  scope.Exit();
  ::close(state.fd);
}

TEST_F(GraphRunnerTest, WritesBeyondAWeakEdgeWaitUntilCertain) {
  std::string path = directory_ + "/out";
  WriteState state;
  state.fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
  state.offsets = {0, 4096, 8192, 12288};
  state.bytes.assign(kBlock, 'w');
  auto graph = WriteLoopGraph(/*weak=*/true);
  GraphRunner scope(*graph, Depth(8), &engine_);
  scope.Enter(&state);
  EXPECT_EQ(engine_.prepared().size(), 1u) << "only the write at the frontier is certain";
  foreactor_call call{};
  call.type = FOREACTOR_CALL_PWRITE;
  call.fd = state.fd;
  call.buffer = state.bytes.data();
  call.length = kBlock;
  call.offset = 0;
  ProgramCall(scope, call);
  // The program may return on the weak edge after this write: the next
  // write is not certain until the program makes another graph call.
  EXPECT_EQ(engine_.prepared().size(), 1u);
  scope.Exit();  // ... and it does return there
  struct stat status;
  ASSERT_EQ(::fstat(state.fd, &status), 0);
  EXPECT_EQ(status.st_size, static_cast<off_t>(kBlock)) << "no write the program did not make";
  ::close(state.fd);
}

// read (weak) -> write -> more? -> read | end, three times: the program
// may return after any read.
struct ReadThenWriteState {
  LoopState reads;
  WriteState writes;
};

void BuildReadThenWriteGraph(Graph& graph) {
  auto read_arguments = [](const foreactor_visit* visit, foreactor_call* call) {
    auto* s = static_cast<ReadThenWriteState*>(visit->scope_state);
    call->fd = s->reads.fd;
    call->length = kBlock;
    call->offset = s->reads.offsets[visit->iteration[0]];
    return FOREACTOR_READY;
  };
  auto write_arguments = [](const foreactor_visit* visit, foreactor_call* call) {
    auto* s = static_cast<ReadThenWriteState*>(visit->scope_state);
    call->fd = s->writes.fd;
    call->buffer = s->writes.bytes.data();
    call->length = kBlock;
    call->offset = s->writes.offsets[visit->iteration[0]];
    return FOREACTOR_READY;
  };
  auto more = [](const foreactor_visit* visit) { return visit->iteration[0] + 1 < 3 ? 0 : 1; };
  int read = graph.AddSyscall("read", FOREACTOR_CALL_PREAD, read_arguments, nullptr, nullptr);
  int write = graph.AddSyscall("write", FOREACTOR_CALL_PWRITE, write_arguments, nullptr, nullptr);
  int branch = graph.AddBranch("more", more, nullptr);
  graph.SetNext(FOREACTOR_START_NODE, read, false);
  graph.SetNext(read, write, /*weak=*/true);
  graph.SetNext(write, branch, false);
  graph.AddChild(branch, read, false);
  graph.AddChild(branch, FOREACTOR_END_NODE, false);
  std::string error;
  ASSERT_TRUE(graph.Finish(&error)) << error;
}

TEST_F(GraphRunnerTest, AWriteAfterAWeakEdgeIsHeldBackButTheReadsAfterItAreIssued) {
  // The write after each read's weak edge is not certain until the program
  // made a call after that edge: it is held back for the program to make,
  // while the reads after it are still issued on a guess.  Returning after
  // the first read leaves the file untouched.
  std::string path = directory_ + "/out";
  ReadThenWriteState state;
  state.reads = ReadLoopState({1, 2, 3});
  state.writes.fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
  state.writes.offsets = {0, 4096, 8192};
  state.writes.bytes.assign(kBlock, 'w');
  Graph graph("read_then_write");
  BuildReadThenWriteGraph(graph);
  GraphRunner scope(graph, Depth(8), &engine_);
  scope.Enter(&state);
  std::vector<int64_t> early_read_offsets;
  for (const auto& prepared : engine_.prepared()) {
    if (prepared.call.type == FOREACTOR_CALL_PREAD)
      early_read_offsets.push_back(prepared.call.offset);
  }
  EXPECT_EQ(early_read_offsets,
            (std::vector<int64_t>{state.reads.offsets[0], state.reads.offsets[1],
                                  state.reads.offsets[2]}));
  char buffer[kBlock];
  bool served = false;
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.reads.offsets[0]), &served);
  EXPECT_TRUE(served);
  for (const auto& prepared : engine_.prepared()) {
    EXPECT_NE(prepared.call.type, FOREACTOR_CALL_PWRITE) << "the program may still return here";
  }
  scope.Exit();  // it returns on the weak edge
  struct stat status;
  ASSERT_EQ(::fstat(state.writes.fd, &status), 0);
  EXPECT_EQ(status.st_size, 0) << "no write the program did not make";
  ::close(state.writes.fd);
}

TEST_F(GraphRunnerTest, WritesWithoutWeakEdgesAreIssuedToDepth) {
  std::string path = directory_ + "/out";
  WriteState state;
  state.fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
  state.offsets = {0, 4096, 8192, 12288};
  state.bytes.assign(kBlock, 'w');
  auto graph = WriteLoopGraph(/*weak=*/false);
  GraphRunner scope(*graph, Depth(8), &engine_);
  scope.Enter(&state);
  EXPECT_EQ(engine_.prepared().size(), 4u);
  for (int64_t offset : state.offsets) {
    foreactor_call call{};
    call.type = FOREACTOR_CALL_PWRITE;
    call.fd = state.fd;
    call.buffer = state.bytes.data();
    call.length = kBlock;
    call.offset = offset;
    bool served = false;
    EXPECT_EQ(ProgramCall(scope, call, &served), static_cast<int64_t>(kBlock));
    EXPECT_TRUE(served);
  }
  scope.Exit();
  struct stat status;
  ASSERT_EQ(::fstat(state.fd, &status), 0);
  EXPECT_EQ(status.st_size, 4 * static_cast<off_t>(kBlock));
  ::close(state.fd);
}

TEST_F(GraphRunnerTest, PureReadsCrossWeakEdges) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments, /*weak=*/true);
  GraphRunner scope(*graph, Depth(4), &engine_);
  LoopState state = ReadLoopState({1, 2, 3, 4, 5, 6});
  scope.Enter(&state);
  EXPECT_EQ(engine_.prepared().size(), 4u);
  char buffer[kBlock];
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[0]));
  scope.Exit();  // early return on the weak edge
  EXPECT_EQ(scope.statistics().issued_early, 0u) << "statistics were folded into the totals";
}

TEST_F(GraphRunnerTest, OverlappingWritesToOneFileStayInOrder) {
  std::string path = directory_ + "/out";
  WriteState state;
  state.fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
  state.offsets = {0, 100, 4096};  // the first two overlap
  state.bytes.assign(kBlock, 'w');
  auto graph = WriteLoopGraph(/*weak=*/false);
  GraphRunner scope(*graph, Depth(8), &engine_);
  scope.Enter(&state);
  EXPECT_EQ(engine_.prepared().size(), 1u) << "the second write overlaps the first: it waits";
  scope.Exit();
  ::close(state.fd);
}

// A copy loop: read a chunk (linked), write it; the write uses the bytes
// the early read produced.
struct CopyState {
  int source = -1;
  int destination = -1;
  int chunks = 0;
};

foreactor_readiness CopyReadArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<CopyState*>(visit->scope_state);
  call->fd = state->source;
  call->length = kBlock;
  call->offset = static_cast<int64_t>(visit->iteration[0] * kBlock);
  call->link_next = 1;
  return FOREACTOR_READY;
}

foreactor_readiness CopyWriteArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<CopyState*>(visit->scope_state);
  call->fd = state->destination;
  call->buffer = nullptr;  // the linked read's bytes
  call->length = kBlock;
  call->offset = static_cast<int64_t>(visit->iteration[0] * kBlock);
  return FOREACTOR_READY;
}

int CopyMore(const foreactor_visit* visit) {
  auto* state = static_cast<CopyState*>(visit->scope_state);
  return visit->iteration[0] + 1 < static_cast<uint64_t>(state->chunks) ? 0 : 1;
}

TEST_F(GraphRunnerTest, LinkedReadAndWriteCopyTheFileExactly) {
  Graph graph("copy");
  int read = graph.AddSyscall("read", FOREACTOR_CALL_PREAD, CopyReadArguments, nullptr, nullptr);
  int write =
      graph.AddSyscall("write", FOREACTOR_CALL_PWRITE, CopyWriteArguments, nullptr, nullptr);
  int more = graph.AddBranch("more", CopyMore, nullptr);
  graph.SetNext(FOREACTOR_START_NODE, read, false);
  graph.SetNext(read, write, false);
  graph.SetNext(write, more, false);
  graph.AddChild(more, read, false);
  graph.AddChild(more, FOREACTOR_END_NODE, false);
  std::string error;
  ASSERT_TRUE(graph.Finish(&error)) << error;

  std::string copy_path = directory_ + "/copy";
  CopyState state;
  state.source = data_fd_;
  state.destination = ::open(copy_path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
  state.chunks = 8;
  GraphRunner scope(graph, Depth(6), &engine_);
  scope.Enter(&state);
  ASSERT_GE(engine_.prepared().size(), 2u);
  EXPECT_EQ(engine_.prepared()[0].request->linked_next, engine_.prepared()[1].request);
  for (int i = 0; i < state.chunks; ++i) {
    char buffer[kBlock];
    bool served_read = false, served_write = false;
    ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, buffer, kBlock, i * kBlock), &served_read),
              static_cast<int64_t>(kBlock));
    foreactor_call call{};
    call.type = FOREACTOR_CALL_PWRITE;
    call.fd = state.destination;
    call.buffer = buffer;
    call.length = kBlock;
    call.offset = i * static_cast<int64_t>(kBlock);
    ASSERT_EQ(ProgramCall(scope, call, &served_write), static_cast<int64_t>(kBlock));
    EXPECT_TRUE(served_read && served_write) << "chunk " << i;
  }
  scope.Exit();
  std::vector<char> original(kBlock * 8), copied(kBlock * 8);
  ASSERT_EQ(::pread(data_fd_, original.data(), original.size(), 0),
            static_cast<ssize_t>(original.size()));
  ASSERT_EQ(::pread(state.destination, copied.data(), copied.size(), 0),
            static_cast<ssize_t>(copied.size()));
  EXPECT_EQ(original, copied);
  EXPECT_EQ(scope.statistics().mispredicted, 0u);
  ::close(state.destination);
}

// Nested loops: outer over rows, inner over columns; arguments use both.
struct GridState {
  int fd = -1;
  uint64_t rows = 3;
  uint64_t columns = 4;
  std::vector<std::vector<uint64_t>> visits;
};

foreactor_readiness GridArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<GridState*>(visit->scope_state);
  EXPECT_EQ(visit->loop_count, 2u);
  call->fd = state->fd;
  call->length = kBlock;
  call->offset =
      static_cast<int64_t>((visit->iteration[0] * state->columns + visit->iteration[1]) * kBlock);
  return FOREACTOR_READY;
}

void GridResult(const foreactor_visit* visit, int64_t) {
  auto* state = static_cast<GridState*>(visit->scope_state);
  state->visits.emplace_back(visit->iteration, visit->iteration + visit->loop_count);
}

int GridNextColumn(const foreactor_visit* visit) {
  auto* state = static_cast<GridState*>(visit->scope_state);
  return visit->iteration[1] + 1 < state->columns ? 0 : 1;
}

int GridNextRow(const foreactor_visit* visit) {
  auto* state = static_cast<GridState*>(visit->scope_state);
  return visit->iteration[0] + 1 < state->rows ? 0 : 1;
}

TEST_F(GraphRunnerTest, NestedLoopsGiveEachVisitItsIterationIndices) {
  Graph graph("grid");
  int read = graph.AddSyscall("read", FOREACTOR_CALL_PREAD, GridArguments, GridResult, nullptr);
  int column = graph.AddBranch("next_column", GridNextColumn, nullptr);
  int row = graph.AddBranch("next_row", GridNextRow, nullptr);
  graph.SetNext(FOREACTOR_START_NODE, read, false);
  graph.SetNext(read, column, false);
  graph.AddChild(column, read, false);
  graph.AddChild(column, row, false);
  graph.AddChild(row, read, false);
  graph.AddChild(row, FOREACTOR_END_NODE, false);
  std::string error;
  ASSERT_TRUE(graph.Finish(&error)) << error;
  ASSERT_EQ(graph.loop_count(), 2);

  GraphRunner scope(graph, Depth(5), &engine_);
  GridState state;
  state.fd = data_fd_;
  scope.Enter(&state);
  for (uint64_t r = 0; r < state.rows; ++r) {
    for (uint64_t c = 0; c < state.columns; ++c) {
      char buffer[kBlock];
      bool served = false;
      int64_t offset = static_cast<int64_t>((r * state.columns + c) * kBlock);
      ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, buffer, kBlock, offset), &served),
                static_cast<int64_t>(kBlock));
      EXPECT_TRUE(served) << r << "," << c;
    }
  }
  ASSERT_EQ(state.visits.size(), 12u);
  for (uint64_t i = 0; i < 12; ++i) {
    EXPECT_EQ(state.visits[i], (std::vector<uint64_t>{i / 4, i % 4}));
  }
  scope.Exit();
}

// A branch whose answer changes between the peek head's question and the
// frontier's: everything ahead is thrown away and the results stay right.
struct FlipState {
  LoopState loop;
  bool flip_after_peek = false;
  bool peeked = false;
};

int FlippingMore(const foreactor_visit* visit) {
  auto* state = static_cast<FlipState*>(visit->scope_state);
  if (visit->iteration[0] == 1) {
    if (!state->peeked) {
      state->peeked = true;
      return 0;  // the peek head is told: go around again
    }
    return 1;  // the program leaves the loop
  }
  return visit->iteration[0] + 1 < state->loop.offsets.size() ? 0 : 1;
}

foreactor_readiness FlipArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<FlipState*>(visit->scope_state);
  call->fd = state->loop.fd;
  call->length = kBlock;
  call->offset = state->loop.offsets[visit->iteration[0]];
  return FOREACTOR_READY;
}

TEST_F(GraphRunnerTest, BranchDivergenceDrainsEverythingAhead) {
  auto graph =
      OneCallLoop("flip", FOREACTOR_CALL_PREAD, FlipArguments, nullptr, FlippingMore, false);
  GraphRunner scope(*graph, Depth(4), &engine_);
  FlipState state;
  state.loop = ReadLoopState({1, 2, 3, 4, 5});
  scope.Enter(&state);
  char buffer[kBlock];
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.loop.offsets[0]));
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.loop.offsets[1]));
  // The program now leaves the loop; a later unrelated pread passes through.
  InterceptedCall intercepted;
  intercepted.call = Pread(data_fd_, buffer, kBlock, 0);
  int64_t result;
  EXPECT_FALSE(scope.Offer(&intercepted, &result));
  EXPECT_EQ(scope.statistics().mispredicted, 1u);
  EXPECT_GE(scope.statistics().wasted + scope.statistics().cancelled, 1u);
  scope.Exit();
}

// open loop: early opens that the program never reaches are closed, and
// the descriptors the program gets are the ones a plain open gives.
struct OpenState {
  std::vector<std::string> paths;
};

foreactor_readiness OpenArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<OpenState*>(visit->scope_state);
  call->path = state->paths[visit->iteration[0]].c_str();
  call->flags = O_RDONLY | O_CLOEXEC;
  return FOREACTOR_READY;
}

int OpenMore(const foreactor_visit* visit) {
  auto* state = static_cast<OpenState*>(visit->scope_state);
  return visit->iteration[0] + 1 < state->paths.size() ? 0 : 1;
}

// Both edges weak: an open loop that may stop anywhere.
std::unique_ptr<Graph> OpenLoopGraph() {
  return OneCallLoop("opens", FOREACTOR_CALL_OPEN, OpenArguments, nullptr, OpenMore, true);
}

foreactor_call OpenCall(const std::string& path) {
  foreactor_call call{};
  call.type = FOREACTOR_CALL_OPEN;
  call.path = path.c_str();
  call.flags = O_RDONLY | O_CLOEXEC;
  return call;
}

TEST_F(GraphRunnerTest, EarlyOpensNeverReachedAreClosedAtScopeExit) {
  OpenState state;
  for (int i = 0; i < 6; ++i) state.paths.push_back(data_path_);
  auto graph = OpenLoopGraph();
  GraphRunner scope(*graph, Depth(4), &engine_);
  const int before = testing::OpenDescriptorCount();
  scope.Enter(&state);
  bool served = false;
  int64_t fd = ProgramCall(scope, OpenCall(state.paths[0]), &served);
  EXPECT_TRUE(served);
  ASSERT_GE(fd, 0);
  engine_.CompleteAll();
  scope.Exit();  // the program returned early
  ::close(static_cast<int>(fd));
  EXPECT_EQ(testing::OpenDescriptorCount(), before);
  EXPECT_GE(scope.statistics().wasted, 0u);
}

TEST_F(GraphRunnerTest, EarlyOpenGivesTheDescriptorAPlainOpenWould) {
  OpenState state;
  for (int i = 0; i < 4; ++i) state.paths.push_back(data_path_);
  // Plain run: the numbers a program would get.
  std::vector<int> plain;
  for (const std::string& path : state.paths)
    plain.push_back(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  for (int fd : plain) ::close(fd);

  auto graph = OpenLoopGraph();
  GraphRunner scope(*graph, Depth(4), &engine_);
  scope.Enter(&state);
  engine_.CompleteAll();  // early opens done before the program asks
  std::vector<int> got;
  for (const std::string& path : state.paths)
    got.push_back(static_cast<int>(ProgramCall(scope, OpenCall(path))));
  scope.Exit();
  for (int fd : got) ::close(fd);
  EXPECT_EQ(got, plain);
}

// read loop with an implicit offset: served from early preads, and the file
// position ends where plain reads would leave it.
foreactor_readiness SequentialReadArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<LoopState*>(visit->scope_state);
  call->fd = state->fd;
  call->length = kBlock;
  call->offset = static_cast<int64_t>(visit->iteration[0] * kBlock);
  return FOREACTOR_READY;
}

TEST_F(GraphRunnerTest, ReadWithImplicitOffsetKeepsTheFilePositionExact) {
  auto graph = LoopGraph(FOREACTOR_CALL_READ, SequentialReadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  LoopState state = ReadLoopState({0, 1, 2, 3, 4, 5});
  scope.Enter(&state);
  for (int i = 0; i < 6; ++i) {
    char got[kBlock], expected[kBlock];
    foreactor_call call{};
    call.type = FOREACTOR_CALL_READ;
    call.fd = data_fd_;
    call.buffer = got;
    call.length = kBlock;
    bool served = false;
    ASSERT_EQ(ProgramCall(scope, call, &served), static_cast<int64_t>(kBlock));
    EXPECT_TRUE(served);
    EXPECT_EQ(::lseek(data_fd_, 0, SEEK_CUR), static_cast<off_t>((i + 1) * kBlock));
    ASSERT_EQ(::pread(data_fd_, expected, kBlock, i * kBlock), static_cast<ssize_t>(kBlock));
    EXPECT_EQ(std::memcmp(got, expected, kBlock), 0);
  }
  scope.Exit();
}

TEST_F(GraphRunnerTest, EngineCancelledRequestRunsSynchronously) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  LoopState state = ReadLoopState({1, 2, 3});
  engine_.SetResultForCall(1, -ECANCELED);
  scope.Enter(&state);
  for (size_t i = 0; i < 3; ++i) {
    char got[kBlock], expected[kBlock];
    bool served = false;
    ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, got, kBlock, state.offsets[i]), &served),
              static_cast<int64_t>(kBlock));
    ASSERT_EQ(::pread(data_fd_, expected, kBlock, state.offsets[i]), static_cast<ssize_t>(kBlock));
    EXPECT_EQ(std::memcmp(got, expected, kBlock), 0);
    EXPECT_EQ(served, i != 1);
  }
  scope.Exit();
}

foreactor_readiness LargeLoopPreadArguments(const foreactor_visit* visit, foreactor_call* call) {
  foreactor_readiness readiness = LoopPreadArguments(visit, call);
  call->length = 16 * kBlock;  // 64 KiB
  return readiness;
}

TEST_F(GraphRunnerTest, LargeCachedReadsSwitchToServingFromTheCacheSooner) {
  // 64 KiB reads of cached data: the streak that switches to serving from
  // the cache counts data, so four hits (256 KiB) make it, not 32 (2 MiB
  // copied into early buffers before the program gets any).
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LargeLoopPreadArguments);
  GraphRunner scope(*graph, CacheAware(4), &engine_);
  LoopState state = ReadLoopState(std::vector<int64_t>(40, 0));
  scope.Enter(&state);
  std::vector<char> got(16 * kBlock), expected(16 * kBlock);
  ASSERT_EQ(::pread(data_fd_, expected.data(), expected.size(), 0),
            static_cast<ssize_t>(expected.size()));
  for (size_t i = 0; i < state.offsets.size(); ++i) {
    bool served = false;
    ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, got.data(), got.size(), 0), &served),
              static_cast<int64_t>(got.size()));
    EXPECT_EQ(got, expected) << "visit " << i;
  }
  const Statistics& statistics = scope.statistics();
  EXPECT_EQ(engine_.prepared().size(), 0u);
  EXPECT_EQ(statistics.cache_mode_changes, 1u);
  EXPECT_LE(statistics.found_cached, 4u);
  EXPECT_EQ(statistics.found_cached + statistics.served_from_cache, 40u);
  scope.Exit();
}

TEST_F(GraphRunnerTest, CachedReadsAreServedWithoutTheEngine) {
  // The data file was just written: every block is in the page cache.
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, CacheAware(4), &engine_);
  std::vector<int64_t> blocks;
  for (int i = 0; i < kBlocks; ++i) blocks.push_back((i * 7) % kBlocks);
  LoopState state = ReadLoopState(blocks);
  scope.Enter(&state);
  for (size_t i = 0; i < state.offsets.size(); ++i) {
    char got[kBlock], expected[kBlock];
    bool served = false;
    ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, got, kBlock, state.offsets[i]), &served),
              static_cast<int64_t>(kBlock));
    ASSERT_EQ(::pread(data_fd_, expected, kBlock, state.offsets[i]), static_cast<ssize_t>(kBlock));
    EXPECT_EQ(std::memcmp(got, expected, kBlock), 0) << "visit " << i;
    EXPECT_TRUE(served) << "visit " << i;
  }
  const Statistics& statistics = scope.statistics();
  EXPECT_EQ(engine_.prepared().size(), 0u) << "nothing in the page cache goes to the engine";
  EXPECT_EQ(statistics.found_cached + statistics.served_from_cache, static_cast<uint64_t>(kBlocks));
  EXPECT_GT(statistics.served_from_cache, 0u) << "a run of hits switches to serving from the cache";
  EXPECT_EQ(statistics.cache_mode_changes, 1u);
  EXPECT_EQ(state.results.size(), static_cast<size_t>(kBlocks)) << "result callbacks still run";
  scope.Exit();
}

TEST_F(GraphRunnerTest, ReadsServedFromTheCacheKeepTheFilePosition) {
  auto graph = LoopGraph(FOREACTOR_CALL_READ, SequentialReadArguments);
  GraphRunner scope(*graph, CacheAware(2), &engine_);
  std::vector<int64_t> blocks(kBlocks);
  LoopState state = ReadLoopState(blocks);
  scope.Enter(&state);
  for (int i = 0; i < kBlocks; ++i) {
    char got[kBlock], expected[kBlock];
    foreactor_call call{};
    call.type = FOREACTOR_CALL_READ;
    call.fd = data_fd_;
    call.buffer = got;
    call.length = kBlock;
    ASSERT_EQ(ProgramCall(scope, call), static_cast<int64_t>(kBlock));
    ASSERT_EQ(::lseek(data_fd_, 0, SEEK_CUR), static_cast<off_t>((i + 1) * kBlock));
    ASSERT_EQ(::pread(data_fd_, expected, kBlock, i * kBlock), static_cast<ssize_t>(kBlock));
    EXPECT_EQ(std::memcmp(got, expected, kBlock), 0) << "block " << i;
  }
  // Reading on at the end of the file returns 0 from the cache path too.
  char extra[kBlock];
  EXPECT_EQ(::read(data_fd_, extra, kBlock), 0);
  EXPECT_GT(scope.statistics().served_from_cache, 0u);
  scope.Exit();
}

TEST_F(GraphRunnerTest, AScopeWhoseReadsAreAllCachedStopsFollowingTheGraph) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, CacheAware(4), &engine_);
  std::vector<int64_t> blocks;
  for (int i = 0; i < 1000; ++i) blocks.push_back((i * 7) % kBlocks);
  LoopState state = ReadLoopState(blocks);
  scope.Enter(&state);
  size_t followed = 0;
  for (; followed < blocks.size() && scope.speculating(); ++followed) {
    char got[kBlock], expected[kBlock];
    ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, got, kBlock, state.offsets[followed])),
              static_cast<int64_t>(kBlock));
    ASSERT_EQ(::pread(data_fd_, expected, kBlock, state.offsets[followed]),
              static_cast<ssize_t>(kBlock));
    EXPECT_EQ(std::memcmp(got, expected, kBlock), 0) << "visit " << followed;
  }
  // After 256 reads served from the cache in a row, the rest of the scope
  // passes through (OfferCall skips a scope that is not speculating).
  EXPECT_GE(followed, 256u);
  EXPECT_LT(followed, blocks.size());
  EXPECT_EQ(scope.statistics().scopes_left_to_cache, 1u);
  scope.Exit();
  // The next scope follows the graph again.
  LoopState again = ReadLoopState({1, 2, 3});
  scope.Enter(&again);
  EXPECT_TRUE(scope.speculating());
  scope.Exit();
}

TEST_F(GraphRunnerTest, AReadThatWouldBlockSwitchesSpeculationBackOn) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, CacheAware(4), &engine_);
  std::vector<int64_t> blocks(kBlocks, 0);
  for (int i = 0; i < kBlocks; ++i) blocks[i] = i;
  LoopState state = ReadLoopState(blocks);
  scope.Enter(&state);
  char buffer[kBlock];
  for (int i = 0; i < 36; ++i)
    ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[i]));
  ASSERT_GT(scope.statistics().served_from_cache, 0u);
  // Evict the blocks still to come: the next read served from memory that
  // is checked with RWF_NOWAIT (one in 8) must fail.  (The peek head may
  // have read one of them before the switch.)
  ASSERT_TRUE(EvictBlocksForSure(data_path_, 36, kBlocks - 1));
  // Random access: a plain read of an evicted block must not bring the
  // others back by readahead before a checked read meets one.
  ASSERT_EQ(::posix_fadvise(data_fd_, 0, 0, POSIX_FADV_RANDOM), 0);
  for (int i = 36; i < kBlocks; ++i) {
    char expected[kBlock];
    ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[i])),
              static_cast<int64_t>(kBlock));
    ASSERT_EQ(::pread(data_fd_, expected, kBlock, state.offsets[i]), static_cast<ssize_t>(kBlock));
    EXPECT_EQ(std::memcmp(buffer, expected, kBlock), 0);
  }
  EXPECT_EQ(scope.statistics().cache_mode_changes, 2u) << "to the cache and back";
  scope.Exit();
}

TEST_F(GraphRunnerTest, APartlyCachedFileDoesNotMakeTheCacheModeFlipOnEveryMiss) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, CacheAware(4), &engine_);
  constexpr int kPasses = 8;
  std::vector<int64_t> blocks;
  for (int pass = 0; pass < kPasses; ++pass) {
    for (int i = 0; i < kBlocks; ++i) blocks.push_back(i);
  }
  LoopState state = ReadLoopState(blocks);
  scope.Enter(&state);
  char buffer[kBlock];
  for (size_t i = 0; i < state.offsets.size(); ++i) {
    // Each pass finds block 39 (and whatever shares its folio) evicted again.
    if (i % kBlocks == 39 - 4) EvictBlock(data_path_, 39);
    ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[i])),
              static_cast<int64_t>(kBlock));
  }
  // Without back-off every pass switches to the cache and back (about two
  // changes a pass, 16 in all); with it, each quick return doubles the run
  // of hits needed, and after a few passes none holds such a run.  How much
  // one eviction drops (a folio, readahead) varies, hence the range.
  EXPECT_GE(scope.statistics().cache_mode_changes, 1u);
  EXPECT_LE(scope.statistics().cache_mode_changes, 6u);
  scope.Exit();
}

TEST_F(GraphRunnerTest, ScopesCanBeEnteredAgainAndStartFresh) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(2), &engine_);
  for (int round = 0; round < 3; ++round) {
    LoopState state = ReadLoopState({4, 8, 15, 16, 23, 42});
    scope.Enter(&state);
    char buffer[kBlock];
    for (size_t i = 0; i < state.offsets.size(); ++i) {
      bool served = false;
      ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[i]), &served);
      EXPECT_TRUE(served);
    }
    EXPECT_EQ(state.result_visits.size(), state.offsets.size());
    scope.Exit();
  }
}

// fstatat loop: the struct stat the program gets is byte-for-byte the one
// fstatat gives.
struct StatState {
  int directory_fd = -1;
  std::vector<std::string> names;
};

foreactor_readiness StatArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<StatState*>(visit->scope_state);
  call->fd = state->directory_fd;
  call->path = state->names[visit->iteration[0]].c_str();
  call->flags = AT_SYMLINK_NOFOLLOW;
  return FOREACTOR_READY;
}

int StatMore(const foreactor_visit* visit) {
  auto* state = static_cast<StatState*>(visit->scope_state);
  return visit->iteration[0] + 1 < state->names.size() ? 0 : 1;
}

TEST_F(GraphRunnerTest, FstatatResultsAreExact) {
  ASSERT_EQ(::symlink("data", (directory_ + "/link").c_str()), 0);
  ASSERT_EQ(::mkdir((directory_ + "/sub").c_str(), 0755), 0);
  StatState state;
  state.directory_fd = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY);
  state.names = {"data", "link", "sub", "missing", "data"};
  auto graph =
      OneCallLoop("stats", FOREACTOR_CALL_FSTATAT, StatArguments, nullptr, StatMore, false);
  GraphRunner scope(*graph, Depth(8), &engine_);
  scope.Enter(&state);
  for (const std::string& name : state.names) {
    struct stat got, expected;
    std::memset(&got, 0xab, sizeof(got));
    std::memset(&expected, 0xab, sizeof(expected));
    foreactor_call call{};
    call.type = FOREACTOR_CALL_FSTATAT;
    call.fd = state.directory_fd;
    call.path = name.c_str();
    call.flags = AT_SYMLINK_NOFOLLOW;
    call.buffer = &got;
    int64_t result = ProgramCall(scope, call);
    int plain = ::fstatat(state.directory_fd, name.c_str(), &expected, AT_SYMLINK_NOFOLLOW);
    EXPECT_EQ(result, plain < 0 ? -errno : plain) << name;
    if (plain == 0) {
      EXPECT_EQ(std::memcmp(&got, &expected, sizeof(got)), 0) << name;
    }
  }
  EXPECT_EQ(scope.statistics().consumed, 5u);
  scope.Exit();
  ::close(state.directory_fd);
}

}  // namespace
}  // namespace foreactor

namespace foreactor {
namespace {

GraphSettings CheckMode(unsigned depth) {
  GraphSettings settings = Depth(depth);
  settings.check = true;
  return settings;
}

TEST_F(GraphRunnerTest, CheckModeNamesTheNodeTheVisitAndBothCalls) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, CheckMode(4), &engine_);
  LoopState state = ReadLoopState({1, 2, 3, 4});
  ::testing::internal::CaptureStderr();
  scope.Enter(&state);
  char buffer[kBlock];
  for (size_t i = 0; i < 4; ++i) {
    int64_t offset = i == 2 ? 9 * static_cast<int64_t>(kBlock) : state.offsets[i];
    ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, buffer, kBlock, offset)),
              static_cast<int64_t>(kBlock));
  }
  scope.Exit();
  std::string report = ::testing::internal::GetCapturedStderr();
  const std::string fd = std::to_string(data_fd_);
  EXPECT_NE(report.find("foreactor: check: graph 'loop', node 'call' (pread) at iteration [2]: "
                        "the program called pread(fd=" +
                        fd +
                        ", length=4096, offset=36864), "
                        "the graph predicted pread(fd=" +
                        fd + ", length=4096, offset=12288); hint: "),
            std::string::npos)
      << report;
  EXPECT_EQ(engine_.prepared().size(), 0u) << "check mode issues nothing early";
  EXPECT_EQ(state.results.size(), 4u);
}

TEST_F(GraphRunnerTest, CheckModeReportsAReturnWithoutAWeakEdge) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments, /*weak=*/false);
  GraphRunner scope(*graph, CheckMode(4), &engine_);
  LoopState state = ReadLoopState({1, 2, 3});
  ::testing::internal::CaptureStderr();
  scope.Enter(&state);
  char buffer[kBlock];
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[0]));
  scope.Exit();
  std::string report = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(report.find("node 'call' (pread) at iteration [1]: the function returned, but no weak "
                        "edge leads here"),
            std::string::npos)
      << report;
}

TEST_F(GraphRunnerTest, CheckModeIsSilentWhenTheGraphIsRight) {
  auto weak_graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments, /*weak=*/true);
  GraphRunner scope(*weak_graph, CheckMode(4), &engine_);
  LoopState state = ReadLoopState({5, 6, 7});
  ::testing::internal::CaptureStderr();
  scope.Enter(&state);
  char buffer[kBlock];
  for (int64_t offset : state.offsets) ProgramCall(scope, Pread(data_fd_, buffer, kBlock, offset));
  scope.Exit();
  scope.Enter(&state);
  ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[0]));
  scope.Exit();  // an early return over a weak edge is allowed
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

// ------------------------------------------------------------ direct I/O

// A buffer of `size` bytes aligned to a page, freed with the test.
struct AlignedBuffer {
  explicit AlignedBuffer(size_t size) { EXPECT_EQ(posix_memalign(&data, kBlock, size), 0); }
  ~AlignedBuffer() { free(data); }
  char* bytes() const { return static_cast<char*>(data); }
  void* data = nullptr;
};

TEST_F(GraphRunnerTest, DirectReadsAreNeverTakenForPageCacheHits) {
  // RWF_NOWAIT on an O_DIRECT descriptor reads from the device: a probe
  // would always "hit" and nothing would be issued early.
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, CacheAware(4), &engine_);
  const int direct = ::open(data_path_.c_str(), O_RDONLY | O_DIRECT);
  ASSERT_GE(direct, 0);
  LoopState state = ReadLoopState(FirstBlocks(48));
  state.fd = direct;
  AlignedBuffer buffer(kBlock);
  scope.Enter(&state);
  for (size_t i = 0; i < state.offsets.size(); ++i) {
    bool served = false;
    EXPECT_EQ(ProgramCall(scope, Pread(direct, buffer.bytes(), kBlock, state.offsets[i]), &served),
              static_cast<int64_t>(kBlock));
    EXPECT_TRUE(served) << "visit " << i;
  }
  EXPECT_EQ(scope.statistics().found_cached, 0u);
  EXPECT_EQ(scope.statistics().served_from_cache, 0u);
  EXPECT_EQ(scope.statistics().issued_early, state.offsets.size());
  scope.Exit();
  ::close(direct);
}

TEST_F(GraphRunnerTest, MisalignedDirectReadFailsAsItWouldPlain) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  const int direct = ::open(data_path_.c_str(), O_RDONLY | O_DIRECT);
  ASSERT_GE(direct, 0);
  LoopState state = ReadLoopState({0, 1, 2, 3});
  state.fd = direct;
  AlignedBuffer buffer(2 * kBlock);
  char* misaligned = buffer.bytes() + 1;
  const int64_t plain = ::pread(direct, misaligned, kBlock, 0) < 0 ? -errno : 0;
  ASSERT_EQ(plain, -EINVAL) << "the kernel accepts a misaligned O_DIRECT buffer here";
  scope.Enter(&state);
  for (size_t i = 0; i < state.offsets.size(); ++i) {
    EXPECT_EQ(ProgramCall(scope, Pread(direct, misaligned, kBlock, state.offsets[i])), -EINVAL)
        << "visit " << i;
  }
  scope.Exit();
  ::close(direct);
}

TEST_F(GraphRunnerTest, MisalignedDirectOffsetIsNotIssuedEarly) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, Depth(4), &engine_);
  const int direct = ::open(data_path_.c_str(), O_RDONLY | O_DIRECT);
  ASSERT_GE(direct, 0);
  LoopState state = ReadLoopState({0, 1, 2});
  state.fd = direct;
  for (int64_t& offset : state.offsets) offset += 100;
  AlignedBuffer buffer(kBlock);
  scope.Enter(&state);
  EXPECT_EQ(scope.statistics().issued_early, 0u);
  for (size_t i = 0; i < state.offsets.size(); ++i) {
    EXPECT_EQ(ProgramCall(scope, Pread(direct, buffer.bytes(), kBlock, state.offsets[i])), -EINVAL);
  }
  EXPECT_EQ(scope.statistics().issued_early, 0u);
  scope.Exit();
  ::close(direct);
}

}  // namespace
}  // namespace foreactor
