// Tests of GraphRunner's read-ahead streams (read_ahead_stream.h): a scan
// whose preads jump about a file gets the regions they fall in read as a few
// large requests, needed first going first, each region once; a look-ahead
// at reads in file order gets the run's regions read into the page cache by
// a fill of the stream's own; the program's sequential reads, cached
// files, reads found cached, sparse needs (of a region, or of a batch as
// a whole) and the settings get none; a close and the scope's end wait
// for them.  The program's results never change.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runtime/graph_runner_fixture.h"
#include "runtime/pages_cached.h"

namespace foreactor {
namespace {

constexpr int64_t kRegion = static_cast<int64_t>(ReadAheadStream::kRegionBytes);
constexpr int64_t kFileRegions = 8;
constexpr int64_t kFileBlocks = kFileRegions * kRegion / static_cast<int64_t>(kBlock);

// Every block of the file once, in file order.
std::vector<int64_t> SequentialOffsets() {
  std::vector<int64_t> offsets;
  for (int64_t block = 0; block < kFileBlocks; ++block) {
    offsets.push_back(block * static_cast<int64_t>(kBlock));
  }
  return offsets;
}

// Every block of the file once, in an order that jumps between regions:
// block (i * 257) mod kFileBlocks.
std::vector<int64_t> ScatteredOffsets() {
  std::vector<int64_t> offsets;
  for (int64_t i = 0; i < kFileBlocks; ++i) {
    offsets.push_back((i * 257) % kFileBlocks * static_cast<int64_t>(kBlock));
  }
  return offsets;
}

class GraphRunnerReadAheadTest : public GraphRunnerTest {
 protected:
  // A file of `regions` regions.  `written`: its bytes are written (and so
  // in the page cache); otherwise it is a hole, of which no page is cached
  // until something reads it.
  int MakeFile(const char* name, bool written, int64_t regions = kFileRegions) {
    const std::string path = temp_.Path(name);
    const int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    EXPECT_GE(fd, 0);
    if (written) {
      WriteFirstRegions(fd, regions);
    } else {
      EXPECT_EQ(::ftruncate(fd, regions * kRegion), 0);
    }
    return fd;
  }

  // Writes the first `regions` regions of the file `fd`, which are then in
  // the page cache, clean.
  void WriteFirstRegions(int fd, int64_t regions) {
    const std::vector<char> bytes(static_cast<size_t>(kRegion), 'r');
    for (int64_t region = 0; region < regions; ++region) {
      EXPECT_EQ(::pwrite(fd, bytes.data(), bytes.size(), region * kRegion),
                static_cast<ssize_t>(bytes.size()));
    }
    EXPECT_EQ(::fsync(fd), 0);
  }

  // The program's preads of `state.offsets` through `scope`, each checked
  // against a plain pread.  Stops after `count` reads (all by default).
  void RunReads(GraphRunner& scope, LoopState& state, size_t count = SIZE_MAX) {
    std::vector<char> got(kBlock), expected(kBlock);
    for (size_t i = 0; i < state.offsets.size() && i < count; ++i) {
      const int64_t result =
          ProgramCall(scope, Pread(state.fd, got.data(), kBlock, state.offsets[i]));
      ASSERT_EQ(result, ::pread(state.fd, expected.data(), kBlock, state.offsets[i]));
      ASSERT_EQ(got, expected) << "read " << i;
    }
  }

  // The read-ahead requests the engine was given, in order: reads, or
  // with `operation` kStartReadAhead, hints.
  std::vector<testing::FakeEngine::PreparedCall> ReadAheads(
      RequestOperation operation = RequestOperation::kReadAhead) const {
    std::vector<testing::FakeEngine::PreparedCall> reads;
    for (const auto& prepared : engine_.prepared()) {
      if (prepared.operation == operation) reads.push_back(prepared);
    }
    return reads;
  }

  // A look-ahead at the start of a scope of `state` starts no stream; the
  // program's reads then run unchanged.  Closes state.fd.
  void ExpectLookAheadStartsNoStream(LoopState& state) {
    GraphRunner scope(*graph_, Depth(4), &engine_);
    scope.Enter(&state);
    scope.LookAhead();
    EXPECT_EQ(scope.statistics().read_ahead_streams, 0u);
    EXPECT_TRUE(ReadAheads(RequestOperation::kStartReadAhead).empty());
    RunReads(scope, state);
    scope.Exit();
    ::close(state.fd);
  }

  // Enters `scope` and looks ahead as the B+-tree's scan plugin does: the
  // graph's reads are not known when the scope opens (no probe of them
  // starts the kernel's read-ahead), and are when it looks ahead.
  static void EnterThenLookAhead(GraphRunner& scope, LoopState& state) {
    state.known = 0;
    scope.Enter(&state);
    state.known = state.offsets.size();
    scope.LookAhead();
  }

  // No read of the program's through `scope` was probed, started with
  // readahead(2) or issued early.
  static void ExpectNoProbeNorEarlyRead(const GraphRunner& scope) {
    const Statistics& statistics = scope.statistics();
    EXPECT_EQ(statistics.found_cached + statistics.probes_waited, 0u) << "no probe";
    EXPECT_EQ(statistics.reads_started, 0u) << "no readahead(2) of single reads";
    EXPECT_EQ(statistics.issued_early, 0u);
  }

  // Every read of `state` that the program made through `scope` was left
  // to it: none probed, started with readahead(2) or issued early.
  static void ExpectEveryReadLeftToTheProgram(const GraphRunner& scope, const LoopState& state) {
    ExpectNoProbeNorEarlyRead(scope);
    EXPECT_EQ(scope.statistics().left_in_file_order, state.offsets.size());
  }

  // The program's pread loop over LoopState::offsets.
  std::unique_ptr<Graph> graph_ = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
};

TEST_F(GraphRunnerReadAheadTest, ScatteredReadsGetTheirRegionsReadNeededFirst) {
  LoopState state;
  state.fd = MakeFile("cold", /*written=*/false);
  state.offsets = ScatteredOffsets();
  GraphRunner scope(*graph_, Depth(4), &engine_);
  scope.Enter(&state);
  RunReads(scope, state, ReadAheadStream::kArmingReads);
  const auto reads = ReadAheads();
  ASSERT_EQ(reads.size(), static_cast<size_t>(kFileRegions)) << "one request per region";
  // The regions go in the order the program needs them: that of the reads
  // after the ones that started the stream.
  std::vector<int64_t> expected_regions;
  for (size_t i = ReadAheadStream::kArmingReads; i < state.offsets.size(); ++i) {
    const int64_t region = state.offsets[i] / kRegion;
    bool seen = false;
    for (int64_t earlier : expected_regions) seen = seen || earlier == region;
    if (!seen) expected_regions.push_back(region);
  }
  ASSERT_EQ(expected_regions.size(), reads.size());
  for (size_t i = 0; i < reads.size(); ++i) {
    EXPECT_EQ(reads[i].call.fd, state.fd);
    EXPECT_EQ(reads[i].call.offset / kRegion, expected_regions[i]) << "request " << i;
    EXPECT_LE(reads[i].call.offset + static_cast<int64_t>(reads[i].call.length),
              (expected_regions[i] + 1) * kRegion)
        << "a request stays in its region";
    EXPECT_GE(reads[i].call.length, ReadAheadStream::kMinRegionNeedBytes);
  }
  EXPECT_EQ(scope.statistics().read_ahead_streams, 1u);
  EXPECT_EQ(scope.statistics().read_ahead_requests, static_cast<uint64_t>(kFileRegions));
  RunReads(scope, state);  // the whole scan, results unchanged
  scope.Exit();
  for (const auto& read : ReadAheads()) EXPECT_TRUE(read.completed) << "none outlives the scope";
  ::close(state.fd);
}

TEST_F(GraphRunnerReadAheadTest, ARegionIsReadOnceWhateverPartsOfItLaterBatchesNeed) {
  // Twice as many blocks as a batch holds: the first half of every region,
  // jumping from region to region, then the second half of every region.
  // The first batch needs the first halves, the next one the second halves;
  // both need every region.
  constexpr int64_t kRegions = 2 * static_cast<int64_t>(ReadAheadStream::kBatchVisits) *
                               static_cast<int64_t>(kBlock) / kRegion;
  constexpr int64_t kHalf = kRegion / static_cast<int64_t>(kBlock) / 2;
  LoopState state;
  state.fd = MakeFile("cold", /*written=*/false, kRegions);
  for (int64_t half = 0; half < 2; ++half) {
    for (int64_t block = 0; block < kHalf; ++block) {
      for (int64_t region = 0; region < kRegions; ++region) {
        state.offsets.push_back(region * kRegion +
                                (half * kHalf + block) * static_cast<int64_t>(kBlock));
      }
    }
  }
  GraphRunner scope(*graph_, Depth(4), &engine_);
  scope.Enter(&state);
  std::vector<char> got(kBlock), expected(kBlock);
  for (int64_t offset : state.offsets) {
    ASSERT_EQ(ProgramCall(scope, Pread(state.fd, got.data(), kBlock, offset)),
              ::pread(state.fd, expected.data(), kBlock, offset));
    ASSERT_EQ(got, expected);
    engine_.CompleteAll();  // the early and read-ahead requests run, for real
  }
  EXPECT_EQ(scope.statistics().read_ahead_bytes, static_cast<uint64_t>(kRegions * kRegion));
  scope.Exit();
  std::vector<int> requests_per_region(static_cast<size_t>(kRegions), 0);
  for (const auto& read : ReadAheads()) {
    EXPECT_EQ(read.call.offset % kRegion, 0) << "a region is read whole";
    EXPECT_EQ(read.call.length, static_cast<size_t>(kRegion));
    requests_per_region[static_cast<size_t>(read.call.offset / kRegion)]++;
  }
  for (int64_t region = 0; region < kRegions; ++region) {
    EXPECT_EQ(requests_per_region[static_cast<size_t>(region)], 1) << "region " << region;
  }
  ::close(state.fd);
}

TEST_F(GraphRunnerReadAheadTest, SequentialReadsStartNoStream) {
  LoopState state;
  state.fd = MakeFile("cold", /*written=*/false);
  state.offsets = SequentialOffsets();
  GraphRunner scope(*graph_, Depth(4), &engine_);
  scope.Enter(&state);
  RunReads(scope, state);
  EXPECT_TRUE(ReadAheads().empty()) << "the kernel's read-ahead streams sequential reads";
  EXPECT_EQ(scope.statistics().read_ahead_streams, 0u);
  scope.Exit();
  ::close(state.fd);
}

// Every block of a file of `regions` regions once, in an order that jumps
// between regions: block (i * 257) mod blocks.
std::vector<int64_t> ScatteredOffsetsOver(int64_t regions) {
  const int64_t blocks = regions * kRegion / static_cast<int64_t>(kBlock);
  std::vector<int64_t> offsets;
  for (int64_t i = 0; i < blocks; ++i) {
    offsets.push_back((i * 257) % blocks * static_cast<int64_t>(kBlock));
  }
  return offsets;
}

// foreactor_scope_look_ahead(): before the program's first read, the
// regions of the graph's next preads, which jump about, are hinted at once,
// in the order they are needed, up to kMaxInFlightAhead; the program's
// reads then pump the stream on, and its results are unchanged.
TEST_F(GraphRunnerReadAheadTest, LookAheadHintsTheNextRegionsBeforeTheProgramReads) {
  constexpr int64_t kRegions = 2 * ReadAheadStream::kMaxInFlightAhead;
  LoopState state;
  state.fd = MakeFile("cold", /*written=*/false, kRegions);
  state.offsets = ScatteredOffsetsOver(kRegions);
  GraphRunner scope(*graph_, Depth(4), &engine_);
  scope.Enter(&state);
  ASSERT_TRUE(ReadAheads(RequestOperation::kStartReadAhead).empty());
  scope.LookAhead();
  const auto hints = ReadAheads(RequestOperation::kStartReadAhead);
  ASSERT_EQ(hints.size(), static_cast<size_t>(ReadAheadStream::kMaxInFlightAhead));
  std::vector<int64_t> needed_regions;  // in the order of first need
  for (int64_t offset : state.offsets) {
    const int64_t region = offset / kRegion;
    if (std::find(needed_regions.begin(), needed_regions.end(), region) == needed_regions.end())
      needed_regions.push_back(region);
  }
  for (size_t i = 0; i < hints.size(); ++i) {
    EXPECT_EQ(hints[i].call.fd, state.fd);
    EXPECT_EQ(hints[i].call.offset, needed_regions[i] * kRegion) << "hint " << i;
    EXPECT_EQ(hints[i].call.length, static_cast<size_t>(kRegion));
  }
  EXPECT_TRUE(ReadAheads().empty()) << "no buffered read-ahead reads";
  EXPECT_EQ(scope.statistics().read_ahead_streams, 1u);
  // The program's reads, while hints complete (as they do once their
  // device reads are started), pump the stream on.
  std::vector<char> got(kBlock), expected(kBlock);
  for (size_t i = 0; i < state.offsets.size(); ++i) {
    if (i % 64 == 0) engine_.CompleteAll();
    const int64_t result =
        ProgramCall(scope, Pread(state.fd, got.data(), kBlock, state.offsets[i]));
    ASSERT_EQ(result, ::pread(state.fd, expected.data(), kBlock, state.offsets[i]));
    ASSERT_EQ(got, expected) << "read " << i;
  }
  // No region is hinted twice.
  const auto all_hints = ReadAheads(RequestOperation::kStartReadAhead);
  EXPECT_EQ(all_hints.size(), static_cast<size_t>(kRegions));
  std::set<int64_t> regions;
  for (const auto& hint : all_hints) {
    EXPECT_TRUE(regions.insert(hint.call.offset / kRegion).second) << hint.call.offset;
  }
  scope.Exit();
  ::close(state.fd);
}

// Waits up to ten seconds for bytes [offset, offset + length) of `fd` to be
// in the page cache; true when they are.
bool EventuallyCached(int fd, uint64_t offset, uint64_t length) {
  for (int i = 0; i < 1000; ++i) {
    if (RangeCached(fd, offset, length)) return true;
    ::usleep(10000);
  }
  return false;
}

// A look-ahead at reads in file order that are not cached has the regions
// of the run read into the page cache before the program's first read, by
// a fill of the stream's own (cache_fill.h), not by the engine; the
// program's reads get what they would get, and the scope's end joins the
// fill's thread.
TEST_F(GraphRunnerReadAheadTest, LookAheadFillsTheNextRegionsInFileOrder) {
  LoopState state;
  state.fd = MakeFile("cold", /*written=*/false);
  state.offsets = SequentialOffsets();
  GraphRunner scope(*graph_, Depth(4), &engine_);
  scope.Enter(&state);
  scope.LookAhead();
  EXPECT_EQ(scope.statistics().read_ahead_streams, 1u);
  EXPECT_EQ(scope.statistics().read_ahead_streams_ahead, 1u);
  EXPECT_EQ(scope.statistics().read_ahead_streams_in_order, 1u);
  EXPECT_EQ(scope.statistics().read_ahead_requests, static_cast<uint64_t>(kFileRegions));
  EXPECT_EQ(scope.statistics().read_ahead_bytes, static_cast<uint64_t>(kFileRegions * kRegion));
  EXPECT_TRUE(ReadAheads().empty()) << "the fill is no engine's";
  // Before any read of the program's: only the fill reads the file.
  EXPECT_TRUE(EventuallyCached(state.fd, 0, static_cast<uint64_t>(kFileRegions * kRegion)));
  RunReads(scope, state);
  EXPECT_TRUE(ReadAheads().empty());
  EXPECT_TRUE(ReadAheads(RequestOperation::kStartReadAhead).empty());
  scope.Exit();
  EXPECT_TRUE(testing::NoThreadNamedWithin("foreactor-fill")) << "the scope's end joins the fill";
  ::close(state.fd);
}

// The reads within the chain's regions are left to the program: the peek
// head neither probes them (a probe of a cold page starts the kernel's
// read-ahead as for a random read), nor starts them with readahead(2), nor
// issues them early.
TEST_F(GraphRunnerReadAheadTest, ReadsInAnInOrderStreamsRegionsAreLeftToTheProgram) {
  LoopState state;
  state.fd = MakeFile("cold", /*written=*/false);
  state.offsets = SequentialOffsets();
  GraphRunner scope(*graph_, CacheAware(4), &engine_);
  EnterThenLookAhead(scope, state);
  ASSERT_EQ(scope.statistics().read_ahead_streams_in_order, 1u);
  RunReads(scope, state);
  ExpectEveryReadLeftToTheProgram(scope, state);
  for (const auto& prepared : engine_.prepared())
    EXPECT_EQ(prepared.operation, RequestOperation::kReadAhead) << "only the chain";
  scope.Exit();
  ::close(state.fd);
}

// A run in file order shorter than a batch gets no chain (the program's own
// read-ahead reads it as fast); its reads are left to the program all the
// same.  (Probed and started one by one, 64 leaves of a bulk-loaded tree
// took 7x plain's time.)  A run of at most kShortRunVisits reads that ends
// the scope is left before the page cache is asked anything, and counts
// no stream; a longer cold one counts a stream in file order.
TEST_F(GraphRunnerReadAheadTest, AShortRunInFileOrderIsLeftToTheProgramWithoutAChain) {
  for (const int64_t blocks : {int64_t{64}, int64_t{ReadAheadStream::kShortRunVisits + 1}}) {
    SCOPED_TRACE(blocks);
    LoopState state;
    state.fd = MakeFile("cold", /*written=*/false);
    for (int64_t block = 64; block < 64 + blocks; ++block)
      state.offsets.push_back(block * static_cast<int64_t>(kBlock));
    const int free_before = ::open("/dev/null", O_RDONLY);
    ::close(free_before);
    GraphRunner scope(*graph_, CacheAware(4), &engine_);
    EnterThenLookAhead(scope, state);
    const bool left_unasked = blocks <= ReadAheadStream::kShortRunVisits;
    EXPECT_EQ(scope.statistics().read_ahead_streams, left_unasked ? 0u : 1u);
    EXPECT_EQ(scope.statistics().read_ahead_streams_in_order, left_unasked ? 0u : 1u);
    EXPECT_TRUE(engine_.prepared().empty()) << "no chain, no early read";
    const int next = ::open("/dev/null", O_RDONLY);
    EXPECT_EQ(next, free_before) << "no descriptor of the stream's left open";
    ::close(next);
    // The run is all the graph has left: the scope follows it no more, and
    // the program's reads run as its own.
    EXPECT_FALSE(scope.speculating());
    EXPECT_EQ(scope.statistics().scopes_left_in_file_order, 1u);
    RunReads(scope, state);
    const Statistics& statistics = scope.statistics();
    EXPECT_EQ(statistics.intercepted, 0u);
    EXPECT_EQ(statistics.found_cached + statistics.probes_waited + statistics.reads_started, 0u);
    EXPECT_EQ(statistics.issued_early, 0u);
    EXPECT_TRUE(engine_.prepared().empty());
    scope.Exit();
    ::close(state.fd);
  }
}

// The same short run with an fstat of the file after each read: the run is
// not all the scope has left, so the scope goes on following its graph
// (its reads are still left to the program, one by one).
TEST_F(GraphRunnerReadAheadTest, AShortRunWithOtherCallsKeepsItsScope) {
  LoopState state;
  state.fd = MakeFile("cold", /*written=*/false);
  for (int64_t block = 64; block < 128; ++block)
    state.offsets.push_back(block * static_cast<int64_t>(kBlock));
  auto graph = TwoCallLoop(
      "read_then_fstat", FOREACTOR_CALL_PREAD, LoopPreadArguments, FOREACTOR_CALL_FSTAT,
      [](const foreactor_visit* visit, foreactor_call* call) {
        call->fd = static_cast<LoopState*>(visit->scope_state)->fd;
        return FOREACTOR_READY;
      },
      LoopMore);
  GraphRunner scope(*graph, CacheAware(4), &engine_);
  EnterThenLookAhead(scope, state);
  EXPECT_EQ(scope.statistics().read_ahead_streams_in_order, 1u);
  EXPECT_TRUE(scope.speculating());
  EXPECT_EQ(scope.statistics().scopes_left_in_file_order, 0u);
  std::vector<char> got(kBlock), expected(kBlock);
  struct stat status;
  for (int64_t offset : state.offsets) {
    ASSERT_EQ(ProgramCall(scope, Pread(state.fd, got.data(), kBlock, offset)),
              ::pread(state.fd, expected.data(), kBlock, offset));
    ASSERT_EQ(got, expected);
    foreactor_call fstat_call{};
    fstat_call.type = FOREACTOR_CALL_FSTAT;
    fstat_call.fd = state.fd;
    fstat_call.buffer = &status;
    ASSERT_EQ(ProgramCall(scope, fstat_call), 0);
  }
  EXPECT_EQ(scope.statistics().left_in_file_order, state.offsets.size());
  scope.Exit();
  ::close(state.fd);
}

// A short run in file order whose pages are in the page cache, and which
// is all the scope has left: the cache serves it, and the scope stops
// following its graph at the look-ahead.  A run longer than
// kShortRunVisits is followed (the page-cache mode may leave it later).
TEST_F(GraphRunnerReadAheadTest, AShortCachedRunEndsItsScopeALongOneDoesNot) {
  for (const int64_t blocks : {int64_t{64}, int64_t{ReadAheadStream::kShortRunVisits + 1}}) {
    SCOPED_TRACE(blocks);
    LoopState state;
    state.fd = MakeFile("hot", /*written=*/true);
    for (int64_t block = 0; block < blocks; ++block)
      state.offsets.push_back(block * static_cast<int64_t>(kBlock));
    GraphRunner scope(*graph_, CacheAware(4), &engine_);
    EnterThenLookAhead(scope, state);
    const bool short_run = blocks <= ReadAheadStream::kShortRunVisits;
    EXPECT_EQ(scope.speculating(), !short_run);
    EXPECT_EQ(scope.statistics().scopes_left_in_file_order, short_run ? 1u : 0u);
    EXPECT_EQ(scope.statistics().read_ahead_streams, 0u);
    RunReads(scope, state);
    EXPECT_EQ(scope.statistics().intercepted, short_run ? 0u : state.offsets.size());
    EXPECT_EQ(scope.statistics().issued_early, 0u);
    scope.Exit();
    ::close(state.fd);
  }
}

// With page-cache awareness off every read is to be issued: a short run
// in file order, cached or cold, keeps its scope.
TEST_F(GraphRunnerReadAheadTest, WithoutPageCacheAwarenessNoRunEndsItsScope) {
  for (const bool written : {true, false}) {
    SCOPED_TRACE(written ? "cached" : "cold");
    LoopState state;
    state.fd = MakeFile("run", written);
    for (int64_t block = 64; block < 128; ++block)
      state.offsets.push_back(block * static_cast<int64_t>(kBlock));
    GraphRunner scope(*graph_, Depth(4), &engine_);
    EnterThenLookAhead(scope, state);
    EXPECT_TRUE(scope.speculating());
    EXPECT_EQ(scope.statistics().scopes_left_in_file_order, 0u);
    scope.Exit();
    ::close(state.fd);
  }
}

// The fill is neither the early calls' engine's work nor the chain
// engine's (the thread pool under io_uring).
TEST_F(GraphRunnerReadAheadTest, AnInOrderStreamsFillUsesNoEngine) {
  LoopState state;
  state.fd = MakeFile("cold", /*written=*/false);
  state.offsets = SequentialOffsets();
  testing::FakeEngine chain_engine;
  GraphRunner scope(*graph_, Depth(4), &engine_, &chain_engine);
  scope.Enter(&state);
  scope.LookAhead();
  ASSERT_EQ(scope.statistics().read_ahead_streams_in_order, 1u);
  RunReads(scope, state);
  scope.Exit();
  EXPECT_TRUE(ReadAheads().empty());
  EXPECT_TRUE(chain_engine.prepared().empty());
  ::close(state.fd);
}

// The program holds a record lock on the file it scans: the stream's
// reading of it leaves the lock held.  (The stream's descriptor was once
// opened in the program's table and closed at the scope's end, and the
// close of any descriptor of a file releases the process's record locks
// on it.)
TEST_F(GraphRunnerReadAheadTest, AnInOrderStreamLeavesTheProgramsRecordLocksAlone) {
  LoopState state;
  state.fd = MakeFile("locked", /*written=*/false);
  state.offsets = SequentialOffsets();
  ASSERT_TRUE(testing::LockWholeFile(state.fd));
  GraphRunner scope(*graph_, Depth(4), &engine_);
  scope.Enter(&state);
  scope.LookAhead();
  ASSERT_EQ(scope.statistics().read_ahead_streams_in_order, 1u);
  RunReads(scope, state);
  scope.Exit();
  EXPECT_TRUE(testing::WriteLockHeld(temp_.Path("locked"))) << "the program's record lock went";
  ::close(state.fd);
}

// The stream's descriptor takes a number the program would not take next:
// the program's next open gets the number it would have got.
TEST_F(GraphRunnerReadAheadTest, AnInOrderStreamsDescriptorLeavesTheProgramsNumbersAlone) {
  LoopState state;
  state.fd = MakeFile("cold", /*written=*/false);
  state.offsets = SequentialOffsets();
  const int free_before = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(free_before, 0);
  ::close(free_before);
  GraphRunner scope(*graph_, Depth(4), &engine_);
  scope.Enter(&state);
  scope.LookAhead();
  ASSERT_EQ(scope.statistics().read_ahead_streams_in_order, 1u);
  const int next = ::open("/dev/null", O_RDONLY);
  EXPECT_EQ(next, free_before);
  ::close(next);
  RunReads(scope, state);
  scope.Exit();
  ::close(state.fd);
}

// The program's reads wait for the fill of the regions they fall in: the
// scope follows the program's calls until its reads have passed the fill's
// last region (with page-cache awareness, a scope whose reads are served
// from the cache may leave its graph after that, not before).  The fill
// covers at most kInOrderFillVisits reads.
TEST_F(GraphRunnerReadAheadTest, TheScopeFollowsTheProgramWhileItsFillIsAhead) {
  constexpr int64_t kRegions = 4 * kFileRegions;
  static_assert(kRegions * kRegion / static_cast<int64_t>(kBlock) ==
                ReadAheadStream::kInOrderFillVisits);
  LoopState state;
  state.fd = MakeFile("cold", /*written=*/false, kRegions);
  for (int64_t block = 0; block < kRegions * kRegion / static_cast<int64_t>(kBlock); ++block)
    state.offsets.push_back(block * static_cast<int64_t>(kBlock));
  GraphRunner scope(*graph_, CacheAware(4), &engine_);
  EnterThenLookAhead(scope, state);
  ASSERT_EQ(scope.statistics().read_ahead_streams_in_order, 1u);
  EXPECT_EQ(scope.statistics().read_ahead_requests, static_cast<uint64_t>(kRegions));
  const size_t before_last_region = state.offsets.size() - kRegion / kBlock;
  RunReads(scope, state, before_last_region);
  EXPECT_TRUE(scope.speculating());
  EXPECT_EQ(scope.statistics().scopes_left_to_cache, 0u);
  EXPECT_GE(scope.statistics().left_in_file_order, before_last_region);
  ExpectNoProbeNorEarlyRead(scope);
  scope.Exit();
  EXPECT_TRUE(engine_.prepared().empty());
  ::close(state.fd);
}

// A runner's page-cache trial (reads served at the frontier, the peek head
// resting) ends when a look-ahead starts a stream: the next reads are cold,
// and the peek head starts them while the program computes.
TEST_F(GraphRunnerReadAheadTest, ALookAheadThatStartsAStreamEndsTheCacheTrial) {
  LoopState state;
  state.fd = MakeFile("cold", /*written=*/false);
  state.offsets = ScatteredOffsets();
  GraphSettings settings = CacheAware(16);
  settings.exact_depth = false;  // the trial is for depths that are bounds
  GraphRunner scope(*graph_, settings, &engine_);
  EnterThenLookAhead(scope, state);
  const Statistics& statistics = scope.statistics();
  ASSERT_EQ(statistics.read_ahead_streams_ahead, 1u);
  EXPECT_GT(ReadsJudgedAhead(statistics) + statistics.issued_early, 0u)
      << "the peek head walked ahead before the program's first read";
  RunReads(scope, state);
  scope.Exit();
  ::close(state.fd);
}

// Until the graph gives the next pread's arguments, a look-ahead starts
// nothing; once it does, the next look-ahead starts the stream.
TEST_F(GraphRunnerReadAheadTest, LookAheadWaitsForTheArguments) {
  LoopState state;
  state.fd = MakeFile("cold", /*written=*/false);
  state.offsets = ScatteredOffsets();
  state.known = 0;
  GraphRunner scope(*graph_, Depth(4), &engine_);
  scope.Enter(&state);
  scope.LookAhead();
  EXPECT_EQ(scope.statistics().read_ahead_streams, 0u);
  EXPECT_TRUE(engine_.prepared().empty());
  state.known = state.offsets.size();
  scope.LookAhead();
  EXPECT_EQ(scope.statistics().read_ahead_streams, 1u);
  EXPECT_FALSE(ReadAheads(RequestOperation::kStartReadAhead).empty());
  RunReads(scope, state);
  scope.Exit();
  ::close(state.fd);
}

// A file wholly in the page cache gets no stream from a look-ahead either.
TEST_F(GraphRunnerReadAheadTest, LookAheadOnACachedFileStartsNoStream) {
  LoopState state;
  state.fd = MakeFile("hot", /*written=*/true);
  state.offsets = ScatteredOffsets();
  ExpectLookAheadStartsNoStream(state);
}

// Nor when most of the next reads are in the page cache: the scan is most
// likely hot, and the look-ahead does not pay for a check of the whole
// file.  Reads found cold later still start a stream as they go.  One
// cached read among cold ones does not stop it.
TEST_F(GraphRunnerReadAheadTest, LookAheadStartsNoStreamWhenMostNextReadsAreCached) {
  for (const size_t cached_reads : {size_t{1}, size_t{ReadAheadStream::kArmingReads / 2}}) {
    LoopState state;
    state.fd = MakeFile("cold", /*written=*/false);
    state.offsets = ScatteredOffsets();
    std::vector<char> block(kBlock);
    for (size_t i = 0; i < cached_reads; ++i) {  // now cached: those blocks
      ASSERT_EQ(::pread(state.fd, block.data(), kBlock, state.offsets[i]),
                static_cast<ssize_t>(kBlock));
    }
    GraphRunner scope(*graph_, Depth(4), &engine_);
    scope.Enter(&state);
    scope.LookAhead();
    const bool started_ahead = scope.statistics().read_ahead_streams_ahead == 1;
    EXPECT_EQ(started_ahead, cached_reads == 1) << cached_reads << " of the next reads cached";
    RunReads(scope, state);
    EXPECT_EQ(scope.statistics().read_ahead_streams, 1u) << "started ahead or by cold reads";
    scope.Exit();
    ::close(state.fd);
  }
}

TEST_F(GraphRunnerReadAheadTest, ACachedFileIsNotReadAgain) {
  LoopState state;
  state.fd = MakeFile("hot", /*written=*/true);
  state.offsets = ScatteredOffsets();
  GraphRunner scope(*graph_, Depth(4), &engine_);
  scope.Enter(&state);
  RunReads(scope, state);
  EXPECT_TRUE(ReadAheads().empty());
  EXPECT_EQ(scope.statistics().read_ahead_streams, 0u) << "one look at the file decides";
  scope.Exit();
  ::close(state.fd);
}

TEST_F(GraphRunnerReadAheadTest, RegionsFoundCachedAreNotRead) {
  LoopState state;
  state.fd = MakeFile("half", /*written=*/false);
  // The first half of the file in the page cache, written: the stream
  // starts, reads the other half's regions, and skips the cached ones.
  WriteFirstRegions(state.fd, kFileRegions / 2);
  state.offsets = ScatteredOffsets();
  GraphRunner scope(*graph_, Depth(4), &engine_);
  scope.Enter(&state);
  RunReads(scope, state);
  EXPECT_EQ(scope.statistics().read_ahead_streams, 1u);
  EXPECT_EQ(scope.statistics().read_ahead_cached_regions, static_cast<uint64_t>(kFileRegions / 2));
  EXPECT_EQ(ReadAheads().size(), static_cast<size_t>(kFileRegions / 2));
  for (const auto& read : ReadAheads()) EXPECT_GE(read.call.offset, kFileRegions / 2 * kRegion);
  scope.Exit();
  ::close(state.fd);
}

TEST_F(GraphRunnerReadAheadTest, ReadsFoundInThePageCacheStartNoStream) {
  LoopState state;
  state.fd = MakeFile("half", /*written=*/false);
  // The first half of the file cached, and the scan jumps about in it
  // alone: the peek head's probes find every read cached, so no stream
  // starts (the file as a whole is not cached, so only that decides).
  WriteFirstRegions(state.fd, kFileRegions / 2);
  for (int64_t i = 0; i < kFileBlocks / 2; ++i) {
    state.offsets.push_back((i * 257) % (kFileBlocks / 2) * static_cast<int64_t>(kBlock));
  }
  GraphRunner scope(*graph_, CacheAware(4), &engine_);
  scope.Enter(&state);
  RunReads(scope, state);
  EXPECT_GT(scope.statistics().found_cached, 0u);
  EXPECT_EQ(scope.statistics().read_ahead_streams, 0u);
  EXPECT_TRUE(ReadAheads().empty());
  scope.Exit();
  ::close(state.fd);
}

TEST_F(GraphRunnerReadAheadTest, NeedsTooSparseForRegionsAreLeftToThePeekHead) {
  LoopState state;
  constexpr int64_t kRegions = 64;
  state.fd = MakeFile("sparse", /*written=*/false, kRegions);
  // One block per region, in an order that jumps about.
  for (int64_t i = 0; i < kRegions; ++i) state.offsets.push_back((i * 17) % kRegions * kRegion);
  GraphRunner scope(*graph_, Depth(4), &engine_);
  scope.Enter(&state);
  RunReads(scope, state);
  EXPECT_TRUE(ReadAheads().empty());
  scope.Exit();
  ::close(state.fd);
}

TEST_F(GraphRunnerReadAheadTest, ReadsSpreadThinlyGetNoRegionWhereChanceBunchesSome) {
  LoopState state;
  constexpr int64_t kRegions = 64;
  state.fd = MakeFile("thin", /*written=*/false, kRegions);
  // One block per region, in an order that jumps about, and in the middle
  // the blocks of one region that its need alone would have it read whole:
  // the batch as a whole needs far less than kMinRegionNeedBytes a region.
  constexpr int64_t kBunched = 3;
  constexpr int64_t kBunchBlocks =
      static_cast<int64_t>(ReadAheadStream::kMinRegionNeedBytes / kBlock) + 1;
  for (int64_t i = 0; i < kRegions; ++i) {
    state.offsets.push_back((i * 17) % kRegions * kRegion);
    if (i == 2 * static_cast<int64_t>(ReadAheadStream::kArmingReads)) {
      for (int64_t block = 1; block <= kBunchBlocks; ++block) {
        state.offsets.push_back(kBunched * kRegion + block * static_cast<int64_t>(kBlock));
      }
    }
  }
  GraphRunner scope(*graph_, Depth(4), &engine_);
  scope.Enter(&state);
  RunReads(scope, state);
  EXPECT_EQ(scope.statistics().read_ahead_streams, 1u);
  EXPECT_TRUE(ReadAheads().empty()) << "the bunched region is not read whole";
  scope.Exit();
  ::close(state.fd);
}

TEST_F(GraphRunnerReadAheadTest, TheProgramsCloseWaitsForTheStream) {
  LoopState state;
  state.fd = MakeFile("cold", /*written=*/false);
  state.offsets = ScatteredOffsets();
  GraphRunner scope(*graph_, Depth(4), &engine_);
  scope.Enter(&state);
  RunReads(scope, state, ReadAheadStream::kArmingReads + 1);
  ASSERT_FALSE(ReadAheads().empty());
  for (const auto& read : ReadAheads()) ASSERT_FALSE(read.completed) << "the fake runs nothing";
  foreactor_call close_call{};
  close_call.type = FOREACTOR_CALL_CLOSE;
  close_call.fd = state.fd;
  // A call outside the graph: the stream's requests are done before it runs.
  InterceptedCall intercepted;
  intercepted.call = close_call;
  int64_t result = 0;
  EXPECT_FALSE(scope.Offer(&intercepted, &result));
  for (const auto& read : ReadAheads()) EXPECT_TRUE(read.completed);
  EXPECT_EQ(::close(state.fd), 0);
  scope.Exit();
}

TEST_F(GraphRunnerReadAheadTest, TheSettingCheckModeAndDepthZeroTurnItOff) {
  GraphSettings off = Depth(4);
  off.read_ahead = false;
  GraphSettings check = Depth(4);
  check.check = true;
  for (const GraphSettings& settings : {off, check, Depth(0)}) {
    LoopState state;
    state.fd = MakeFile("cold", /*written=*/false);
    state.offsets = ScatteredOffsets();
    GraphRunner scope(*graph_, settings, &engine_);
    scope.Enter(&state);
    RunReads(scope, state);
    EXPECT_EQ(scope.statistics().read_ahead_streams, 0u);
    scope.Exit();
    ::close(state.fd);
  }
  EXPECT_TRUE(ReadAheads().empty());
}

}  // namespace
}  // namespace foreactor
