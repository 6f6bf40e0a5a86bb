// Tests of GraphRunner with calls that have side effects: writes are issued
// early only when certain (IssueRules) and in an order that cannot change
// what any call sees (PendingAccesses), a write outside the graph discards
// only the early results it changes, and linked reads and writes copy
// exactly.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/graph_runner_fixture.h"

namespace foreactor {
namespace {

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

class GraphRunnerSideEffectsTest : public GraphRunnerTest {
 protected:
  // Writes of one block of 'w' at `offsets` of a new file "out".
  WriteState OutputWrites(std::vector<int64_t> offsets) {
    WriteState state;
    state.fd = ::open((directory_ + "/out").c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    state.offsets = std::move(offsets);
    state.bytes.assign(kBlock, 'w');
    return state;
  }
};

// A write(2) made outside the graph changes only the bytes at the file
// position: early writes further on in the same file stay valid (before,
// the whole file counted as changed, and the early writes ahead were thrown
// away after they had run, to run again when the program made them).
TEST_F(GraphRunnerSideEffectsTest, WriteAtTheFilePositionKeepsEarlyWritesElsewhere) {
  WriteState state = OutputWrites({4096, 8192, 12288, 16384});
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

TEST_F(GraphRunnerSideEffectsTest, WritesBeyondAWeakEdgeWaitUntilCertain) {
  WriteState state = OutputWrites({0, 4096, 8192, 12288});
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

TEST_F(GraphRunnerSideEffectsTest, AWriteAfterAWeakEdgeIsHeldBackButTheReadsAfterItAreIssued) {
  // The write after each read's weak edge is not certain until the program
  // made a call after that edge: it is held back for the program to make,
  // while the reads after it are still issued on a guess.  Returning after
  // the first read leaves the file untouched.
  ReadThenWriteState state;
  state.reads = ReadLoopState({1, 2, 3});
  state.writes = OutputWrites({0, 4096, 8192});
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

TEST_F(GraphRunnerSideEffectsTest, WritesWithoutWeakEdgesAreIssuedToDepth) {
  WriteState state = OutputWrites({0, 4096, 8192, 12288});
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

TEST_F(GraphRunnerSideEffectsTest, PureReadsCrossWeakEdges) {
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

TEST_F(GraphRunnerSideEffectsTest, OverlappingWritesToOneFileStayInOrder) {
  WriteState state = OutputWrites({0, 100, 4096});  // the first two overlap
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

std::unique_ptr<Graph> CopyGraph() {
  auto graph = std::make_unique<Graph>("copy");
  int read = graph->AddSyscall("read", FOREACTOR_CALL_PREAD, CopyReadArguments, nullptr, nullptr);
  int write =
      graph->AddSyscall("write", FOREACTOR_CALL_PWRITE, CopyWriteArguments, nullptr, nullptr);
  int more = graph->AddBranch("more", CopyMore, nullptr);
  graph->SetNext(FOREACTOR_START_NODE, read, false);
  graph->SetNext(read, write, false);
  graph->SetNext(write, more, false);
  graph->AddChild(more, read, false);
  graph->AddChild(more, FOREACTOR_END_NODE, false);
  std::string error;
  EXPECT_TRUE(graph->Finish(&error)) << error;
  return graph;
}

// The program's copy loop: chunk i read into `buffer`, then written.
// Returns the write's result.
int64_t CopyChunk(GraphRunner& scope, const CopyState& state, int i, bool* served_read,
                  bool* served_write, int64_t* read_result = nullptr) {
  char buffer[kBlock];
  const int64_t got = ProgramCall(
      scope, Pread(state.source, buffer, kBlock, i * static_cast<int64_t>(kBlock)), served_read);
  if (read_result != nullptr) *read_result = got;
  foreactor_call call{};
  call.type = FOREACTOR_CALL_PWRITE;
  call.fd = state.destination;
  call.buffer = buffer;
  call.length = got > 0 ? static_cast<size_t>(got) : 0;
  call.offset = i * static_cast<int64_t>(kBlock);
  return ProgramCall(scope, call, served_write);
}

// A copy of the first `chunks` blocks of `source` into a new file "copy"
// of `directory`.
CopyState DataFileCopy(int source, const std::string& directory, int chunks) {
  CopyState state;
  state.source = source;
  state.destination = ::open((directory + "/copy").c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
  state.chunks = chunks;
  return state;
}

// Expects the copy's destination to hold the first blocks of `source`.
void ExpectCopied(int source, const CopyState& state) {
  const size_t length = kBlock * static_cast<size_t>(state.chunks);
  std::vector<char> original(length), copied(length);
  ASSERT_EQ(::pread(source, original.data(), length, 0), static_cast<ssize_t>(length));
  ASSERT_EQ(::pread(state.destination, copied.data(), length, 0), static_cast<ssize_t>(length));
  EXPECT_EQ(original, copied);
}

// A copy graph runs a write pipeline at a fixed depth and with the
// automatic depth, not in check mode; a graph that copies nothing runs
// none.
TEST_F(GraphRunnerSideEffectsTest, WritePipelinesRunAtEveryDepthOutsideCheckMode) {
  auto copy = CopyGraph();
  GraphSettings automatic = Depth(16);
  automatic.automatic_depth = true;
  automatic.exact_depth = false;
  EXPECT_TRUE(WritePipelineWanted(*copy, Depth(16)));
  EXPECT_TRUE(WritePipelineWanted(*copy, automatic));
  GraphSettings check = Depth(16);
  check.check = true;
  EXPECT_FALSE(WritePipelineWanted(*copy, check));
  auto reads = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  EXPECT_FALSE(WritePipelineWanted(*reads, automatic));
}

// The write pipeline: each write goes to the engine only once its read
// completed, as an ordered request, in program order; the copy is exact and
// every call is served early.
TEST_F(GraphRunnerSideEffectsTest, LinkedReadAndWriteCopyTheFileExactly) {
  auto graph = CopyGraph();
  CopyState state = DataFileCopy(data_fd_, directory_, 8);
  GraphRunner scope(*graph, Depth(6), &engine_);
  scope.Enter(&state);
  ASSERT_GE(engine_.prepared().size(), 2u);
  for (const auto& prepared : engine_.prepared()) {
    EXPECT_EQ(prepared.call.type, FOREACTOR_CALL_PREAD) << "no write before its read completed";
    EXPECT_EQ(prepared.request->linked_next, nullptr);
  }
  engine_.CompleteAll();  // every read ahead completes: their writes can go
  for (int i = 0; i < state.chunks; ++i) {
    bool served_read = false, served_write = false;
    ASSERT_EQ(CopyChunk(scope, state, i, &served_read, &served_write),
              static_cast<int64_t>(kBlock));
    EXPECT_TRUE(served_read && served_write) << "chunk " << i;
  }
  scope.Exit();
  int64_t next_write_offset = 0;
  for (const auto& prepared : engine_.prepared()) {
    if (prepared.call.type != FOREACTOR_CALL_PWRITE) continue;
    EXPECT_EQ(prepared.call.offset, next_write_offset) << "writes are sent in program order";
    EXPECT_TRUE(prepared.ordered);
    next_write_offset += kBlock;
  }
  EXPECT_EQ(next_write_offset, static_cast<int64_t>(8 * kBlock));
  ExpectCopied(data_fd_, state);
  EXPECT_EQ(scope.statistics().mispredicted, 0u);
  ::close(state.destination);
}

// Given a write engine of its own, the pipeline sends its writes there and
// the runner waits for them there; the reads stay on the graph's engine.
TEST_F(GraphRunnerSideEffectsTest, PipelinedWritesGoToTheWriteEngine) {
  auto graph = CopyGraph();
  CopyState state = DataFileCopy(data_fd_, directory_, 6);
  testing::FakeEngine write_engine;
  GraphRunner scope(*graph, Depth(6), &engine_, &write_engine);
  scope.Enter(&state);
  for (int i = 0; i < state.chunks; ++i) {
    bool served_read = false, served_write = false;
    ASSERT_EQ(CopyChunk(scope, state, i, &served_read, &served_write),
              static_cast<int64_t>(kBlock));
    EXPECT_TRUE(served_read && served_write) << "chunk " << i;
  }
  scope.Exit();
  for (const auto& prepared : engine_.prepared()) {
    EXPECT_EQ(prepared.call.type, FOREACTOR_CALL_PREAD);
  }
  ASSERT_EQ(write_engine.prepared().size(), static_cast<size_t>(state.chunks));
  for (const auto& prepared : write_engine.prepared()) {
    EXPECT_EQ(prepared.call.type, FOREACTOR_CALL_PWRITE);
    EXPECT_TRUE(prepared.ordered);
  }
  ExpectCopied(data_fd_, state);
  ::close(state.destination);
}

// A write that fails stops the pipeline: nothing is written after it, and
// the program's own calls get what plain calls get.
TEST_F(GraphRunnerSideEffectsTest, AFailedPipelinedWriteStopsThePipeline) {
  auto graph = CopyGraph();
  std::string copy_path = directory_ + "/copy";
  ::close(::open(copy_path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644));
  CopyState state;
  state.source = data_fd_;
  state.destination = ::open(copy_path.c_str(), O_RDONLY);  // every write fails: EBADF
  state.chunks = 6;
  GraphRunner scope(*graph, Depth(6), &engine_);
  scope.Enter(&state);
  for (int i = 0; i < state.chunks; ++i) {
    bool served_read = false, served_write = false;
    EXPECT_EQ(CopyChunk(scope, state, i, &served_read, &served_write), -EBADF) << "chunk " << i;
  }
  scope.Exit();
  size_t writes = 0;
  for (const auto& prepared : engine_.prepared()) {
    if (prepared.call.type == FOREACTOR_CALL_PWRITE) writes++;
  }
  EXPECT_EQ(writes, 1u) << "no write is sent after one that failed";
  ::close(state.destination);
}

// A read that falls short (the file ended early) never feeds its write:
// the program writes the short chunk itself, and the copy is exact.
TEST_F(GraphRunnerSideEffectsTest, AShortReadLeavesItsWriteToTheProgram) {
  auto graph = CopyGraph();
  std::string source_path = directory_ + "/short";
  std::vector<char> bytes(kBlock * 3 + kBlock / 2, 's');
  int source = ::open(source_path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
  ASSERT_EQ(::write(source, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  std::string copy_path = directory_ + "/copy";
  CopyState state;
  state.source = source;
  state.destination = ::open(copy_path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
  state.chunks = 4;  // the graph expects 4 full chunks; the last is half
  GraphRunner scope(*graph, Depth(8), &engine_);
  scope.Enter(&state);
  engine_.CompleteAll();
  for (int i = 0; i < state.chunks; ++i) {
    bool served_read = false, served_write = false;
    int64_t got = 0;
    const int64_t wrote = CopyChunk(scope, state, i, &served_read, &served_write, &got);
    EXPECT_EQ(wrote, got);
    EXPECT_EQ(served_write, i < 3) << "chunk " << i;
  }
  scope.Exit();
  for (const auto& prepared : engine_.prepared()) {
    if (prepared.call.type == FOREACTOR_CALL_PWRITE) {
      EXPECT_LT(prepared.call.offset, static_cast<int64_t>(3 * kBlock));
    }
  }
  std::vector<char> copied(bytes.size() + 1);
  EXPECT_EQ(::pread(state.destination, copied.data(), copied.size(), 0),
            static_cast<ssize_t>(bytes.size()));
  copied.resize(bytes.size());
  EXPECT_EQ(copied, bytes);
  ::close(state.destination);
  ::close(source);
}

// A read linked to a read, then a copy: per iteration i the program reads
// blocks 2i ("index", linked) and 2i + 1 ("block", linked), and writes the
// second to block i of the copy.  The graph copies data, so it has a write
// pipeline; the pipeline takes only writes.
foreactor_readiness IndexReadArguments(const foreactor_visit* visit, foreactor_call* call) {
  call->fd = static_cast<CopyState*>(visit->scope_state)->source;
  call->length = kBlock;
  call->offset = static_cast<int64_t>(2 * visit->iteration[0] * kBlock);
  call->link_next = 1;
  return FOREACTOR_READY;
}

foreactor_readiness BlockReadArguments(const foreactor_visit* visit, foreactor_call* call) {
  call->fd = static_cast<CopyState*>(visit->scope_state)->source;
  call->length = kBlock;
  call->offset = static_cast<int64_t>((2 * visit->iteration[0] + 1) * kBlock);
  call->link_next = 1;
  return FOREACTOR_READY;
}

std::unique_ptr<Graph> IndexedCopyGraph() {
  auto graph = std::make_unique<Graph>("indexed_copy");
  int index =
      graph->AddSyscall("index", FOREACTOR_CALL_PREAD, IndexReadArguments, nullptr, nullptr);
  int block =
      graph->AddSyscall("block", FOREACTOR_CALL_PREAD, BlockReadArguments, nullptr, nullptr);
  int write =
      graph->AddSyscall("write", FOREACTOR_CALL_PWRITE, CopyWriteArguments, nullptr, nullptr);
  int more = graph->AddBranch("more", CopyMore, nullptr);
  graph->SetNext(FOREACTOR_START_NODE, index, false);
  graph->SetNext(index, block, false);
  graph->SetNext(block, write, false);
  graph->SetNext(write, more, false);
  graph->AddChild(more, index, false);
  graph->AddChild(more, FOREACTOR_END_NODE, false);
  std::string error;
  EXPECT_TRUE(graph->Finish(&error)) << error;
  return graph;
}

// A read linked after a read has a buffer of its own and runs linked to
// its head on the graph's engine.  (A bug: any call with no buffer after a
// linked read was taken for a write of the read's bytes, so the pipeline
// sent the second read into the first one's buffer, and the program got
// the second block's bytes for the first.)
TEST_F(GraphRunnerSideEffectsTest, AReadLinkedAfterAReadReadsIntoItsOwnBuffer) {
  auto graph = IndexedCopyGraph();
  CopyState state = DataFileCopy(data_fd_, directory_, 8);
  GraphRunner scope(*graph, Depth(6), &engine_);
  scope.Enter(&state);
  std::vector<char> expected(kBlock), index(kBlock), block(kBlock);
  for (int i = 0; i < state.chunks; ++i) {
    engine_.CompleteAll();  // the reads ahead complete before the program reaches them
    const int64_t index_offset = 2 * i * static_cast<int64_t>(kBlock);
    const int64_t block_offset = index_offset + static_cast<int64_t>(kBlock);
    bool served = false;
    ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, index.data(), kBlock, index_offset), &served),
              static_cast<int64_t>(kBlock));
    ASSERT_EQ(::pread(data_fd_, expected.data(), kBlock, index_offset),
              static_cast<ssize_t>(kBlock));
    EXPECT_EQ(index, expected) << "iteration " << i;
    EXPECT_TRUE(served) << "iteration " << i;
    ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, block.data(), kBlock, block_offset), &served),
              static_cast<int64_t>(kBlock));
    ASSERT_EQ(::pread(data_fd_, expected.data(), kBlock, block_offset),
              static_cast<ssize_t>(kBlock));
    EXPECT_EQ(block, expected) << "iteration " << i;
    EXPECT_TRUE(served) << "iteration " << i;
    foreactor_call write{};
    write.type = FOREACTOR_CALL_PWRITE;
    write.fd = state.destination;
    write.buffer = block.data();
    write.length = kBlock;
    write.offset = i * static_cast<int64_t>(kBlock);
    ASSERT_EQ(ProgramCall(scope, write), static_cast<int64_t>(kBlock));
  }
  scope.Exit();
  bool linked = false;
  for (const auto& prepared : engine_.prepared()) {
    EXPECT_FALSE(prepared.ordered) << "nothing went to the pipeline's ordered lane";
    if (prepared.call.type == FOREACTOR_CALL_PREAD && prepared.request->linked_next != nullptr) {
      linked = true;
    }
  }
  EXPECT_TRUE(linked) << "the block reads ran linked to the index reads";
  ::close(state.destination);
}

}  // namespace
}  // namespace foreactor
