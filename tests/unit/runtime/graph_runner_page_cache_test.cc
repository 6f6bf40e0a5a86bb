// Tests of GraphRunner with data in the page cache (PageCacheMode decides):
// cached reads are kept without the engine, a run of them switches to
// serving reads at the frontier, a read that would block switches
// speculation back on, and file positions stay exact.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/graph_runner_fixture.h"
#include "runtime/pages_cached.h"

namespace foreactor {
namespace {

class GraphRunnerPageCacheTest : public GraphRunnerTest {};

// Drops block `block` of `path` from the page cache by writing the same
// bytes back with O_DIRECT, which invalidates the cached range (on file
// systems with large folios, the whole folio around it).
void EvictBlock(const std::string& path, int block) {
  int direct = ::open(path.c_str(), O_RDWR | O_DIRECT);
  ASSERT_GE(direct, 0);
  void* aligned = nullptr;
  ASSERT_EQ(posix_memalign(&aligned, kBlock, kBlock), 0);
  int plain = ::open(path.c_str(), O_RDONLY);
  // No read-ahead: reading an evicted block must not start reads of the
  // blocks after it that would land after their own eviction.
  ASSERT_EQ(::posix_fadvise(plain, 0, 0, POSIX_FADV_RANDOM), 0);
  ASSERT_EQ(::pread(plain, aligned, kBlock, block * kBlock), static_cast<ssize_t>(kBlock));
  ASSERT_EQ(::pwrite(direct, aligned, kBlock, block * kBlock), static_cast<ssize_t>(kBlock));
  ::close(plain);
  ::close(direct);
  free(aligned);
}

// True when block `block` of `path` is in the page cache or being read into
// it: cachestat(2) counts a page from the moment its read starts (mincore,
// the fallback before Linux 6.5, only once it has been read).  No I/O.
bool BlockIsCached(const std::string& path, int block) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return true;
  struct {
    uint64_t offset, length;
  } range = {static_cast<uint64_t>(block) * kBlock, kBlock};
  struct {
    uint64_t cache, dirty, writeback, evicted, recently_evicted;
  } status = {};
  constexpr long kCachestat = 451;  // the same number on every architecture
  if (::syscall(kCachestat, fd, &range, &status, 0) == 0) {
    ::close(fd);
    return status.cache > 0;
  }
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

foreactor_readiness LargeLoopPreadArguments(const foreactor_visit* visit, foreactor_call* call) {
  foreactor_readiness readiness = LoopPreadArguments(visit, call);
  call->length = 16 * kBlock;  // 64 KiB
  return readiness;
}

// `count` block numbers that step through the data file 7 blocks at a time,
// round and round.
std::vector<int64_t> ScatteredBlocks(int count) {
  std::vector<int64_t> blocks;
  for (int i = 0; i < count; ++i) blocks.push_back((i * 7) % kBlocks);
  return blocks;
}

// The program's pread of block-sized `offset` through `scope`: it must
// return the block, with the bytes a plain pread returns.
void ReadThroughScopeAndCompare(GraphRunner& scope, int fd, int64_t offset, size_t visit) {
  char got[kBlock], expected[kBlock];
  ASSERT_EQ(ProgramCall(scope, Pread(fd, got, kBlock, offset)), static_cast<int64_t>(kBlock));
  ASSERT_EQ(::pread(fd, expected, kBlock, offset), static_cast<ssize_t>(kBlock));
  EXPECT_EQ(std::memcmp(got, expected, kBlock), 0) << "visit " << visit;
}

// Enters `scope` with `state` and makes the program's pread of each of its
// offsets through it in turn, each compared with a plain pread.
void ReadEveryOffsetThroughScope(GraphRunner& scope, int fd, LoopState* state) {
  scope.Enter(state);
  for (size_t i = 0; i < state->offsets.size(); ++i) {
    ReadThroughScopeAndCompare(scope, fd, state->offsets[i], i);
  }
}

// Whether a read came from memory is timed (PageCacheMode::FromMemory): on
// a machine busy with other work (tests run two at a time) two cached reads
// in a row can be slow by chance, and a test that counts how reads were
// judged runs its scope up to kTimedAttempts times, until the counts come
// out as without preemption; every run checks what the reads return.
constexpr int kTimedAttempts = 3;

TEST_F(GraphRunnerPageCacheTest, LargeCachedReadsSwitchToServingFromTheCacheSooner) {
  // 64 KiB reads of cached data: the streak that switches to serving from
  // the cache counts data, so four hits (256 KiB) make it, not 32 (2 MiB
  // copied into early buffers before the program gets any).
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LargeLoopPreadArguments);
  auto read_all = [&] {
    GraphRunner scope(*graph, CacheAware(4), &engine_);
    LoopState state = ReadLoopState(std::vector<int64_t>(40, 0));
    scope.Enter(&state);
    std::vector<char> got(16 * kBlock), expected(16 * kBlock);
    EXPECT_EQ(::pread(data_fd_, expected.data(), expected.size(), 0),
              static_cast<ssize_t>(expected.size()));
    for (size_t i = 0; i < state.offsets.size(); ++i) {
      bool served = false;
      EXPECT_EQ(ProgramCall(scope, Pread(data_fd_, got.data(), got.size(), 0), &served),
                static_cast<int64_t>(got.size()));
      EXPECT_EQ(got, expected) << "visit " << i;
    }
    const Statistics statistics = scope.statistics();
    scope.Exit();
    return statistics;
  };
  auto as_without_preemption = [](const Statistics& statistics) {
    return statistics.cache_mode_changes == 1 && statistics.found_cached <= 4 &&
           statistics.found_cached + statistics.served_from_cache == 40;
  };
  Statistics statistics = read_all();
  for (int attempt = 1; attempt < kTimedAttempts && !as_without_preemption(statistics); ++attempt) {
    statistics = read_all();
  }
  EXPECT_EQ(engine_.prepared().size(), 0u);
  EXPECT_EQ(statistics.cache_mode_changes, 1u);
  EXPECT_LE(statistics.found_cached, 4u);
  EXPECT_EQ(statistics.found_cached + statistics.served_from_cache, 40u);
}

TEST_F(GraphRunnerPageCacheTest, CachedReadsAreServedWithoutTheEngine) {
  // The data file was just written: every block is in the page cache.
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, CacheAware(4), &engine_);
  const std::vector<int64_t> blocks = ScatteredBlocks(kBlocks);
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

TEST_F(GraphRunnerPageCacheTest, ReadsServedFromTheCacheKeepTheFilePosition) {
  auto graph = LoopGraph(FOREACTOR_CALL_READ, SequentialReadArguments);
  GraphRunner scope(*graph, CacheAware(2), &engine_);
  std::vector<int64_t> blocks(kBlocks);
  LoopState state = ReadLoopState(blocks);
  scope.Enter(&state);
  for (int i = 0; i < kBlocks; ++i) {
    char got[kBlock], expected[kBlock];
    const foreactor_call call = Read(data_fd_, got, kBlock);
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

TEST_F(GraphRunnerPageCacheTest, AScopeWhoseReadsAreAllCachedStopsFollowingTheGraph) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, CacheAware(4), &engine_);
  const std::vector<int64_t> blocks = ScatteredBlocks(1000);
  LoopState state = ReadLoopState(blocks);
  scope.Enter(&state);
  size_t followed = 0;
  for (; followed < blocks.size() && scope.speculating(); ++followed) {
    ReadThroughScopeAndCompare(scope, data_fd_, state.offsets[followed], followed);
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

// A clock that moves 1 ms each time it is read: every read timed with it
// looks as if it waited for the device.
uint64_t SlowClock() {
  static uint64_t now = 0;
  return now += 1000000;
}

TEST_F(GraphRunnerPageCacheTest, ReadsThatWaitForTheDeviceAreNotTakenAsCached) {
  // RWF_NOWAIT reads that return their bytes but take as long as a device
  // read (the kernel started the read and it finished within the call)
  // say the data is cold: the runner neither switches to serving reads
  // from the cache nor leaves the scope to it.  Without the timing, the
  // cached data file switched at once.  The reads it does not probe are
  // left to the program when cachestat(2) finds every page of them in the
  // page cache (the kernel has them or is reading them in), else started
  // with readahead(2) and left too.
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, CacheAware(4), &engine_);
  scope.SetReadClockForTests(&SlowClock);
  LoopState state = ReadLoopState(ScatteredBlocks(300));
  ReadEveryOffsetThroughScope(scope, data_fd_, &state);
  const Statistics& statistics = scope.statistics();
  EXPECT_EQ(statistics.cache_mode_changes, 0u);
  EXPECT_EQ(statistics.served_from_cache, 0u);
  EXPECT_EQ(statistics.scopes_left_to_cache, 0u);
  EXPECT_LE(statistics.found_cached, 1u) << "only a first slow read alone counts as a hit";
  EXPECT_GT(statistics.probes_waited, 0u);
  uint64_t cached = 0, pages = 0;
  if (CountCachedPages(data_fd_, 0, kBlock, &cached, &pages) == 0) {
    EXPECT_GT(statistics.found_present, 0u)
        << "after 16 misses in a row, reads not probed whose pages are cached are left";
  } else {  // no cachestat(2): nothing tells them from cold reads
    EXPECT_EQ(statistics.found_present, 0u);
    EXPECT_GT(statistics.reads_started, 0u)
        << "after 16 misses in a row, reads not probed are started and left";
  }
  EXPECT_EQ(engine_.prepared().size(), 0u) << "no read waits for cached pages on the engine";
  EXPECT_TRUE(scope.speculating());
  scope.Exit();
}

TEST_F(GraphRunnerPageCacheTest, ColdReadsAreStartedByTheKernelAndLeftToTheProgram) {
  // Reads of an evicted file that the peek head does not probe (after a
  // run of misses only some are) are started with readahead(2) on the
  // program's thread and left to the program, which reads them from the
  // page cache as they come in: the engine gets none of them, and every
  // read returns what a plain read returns.  Before, they were issued
  // early on the engine.
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphSettings settings = CacheAware(4);
  settings.read_ahead = false;  // no stream reading whole regions on the engine besides
  GraphRunner scope(*graph, settings, &engine_);
  // Random access: a read of one evicted block must not bring the others back.
  ASSERT_EQ(::posix_fadvise(data_fd_, 0, 0, POSIX_FADV_RANDOM), 0);
  if (!EvictBlocksForSure(data_path_, 0, kBlocks - 1)) GTEST_SKIP() << "cannot evict the file";
  LoopState state = ReadLoopState(ScatteredBlocks(kBlocks));  // each block once
  ReadEveryOffsetThroughScope(scope, data_fd_, &state);
  const Statistics& statistics = scope.statistics();
  EXPECT_GT(statistics.reads_started, 0u);
  EXPECT_EQ(statistics.issued_early, 0u);
  EXPECT_EQ(engine_.prepared().size(), 0u);
  EXPECT_EQ(statistics.mispredicted, 0u);
  EXPECT_EQ(ReadsJudgedAhead(statistics), static_cast<uint64_t>(kBlocks))
      << "every read: probed, found coming in, or started";
  scope.Exit();
}

// A cold run of preads in file order is the kernel's read-ahead's to
// stream: only the first read of each run goes through the peek head's
// probe (and readahead(2) when it missed); the reads that continue the run
// are left to the program, neither probed, started nor issued early.  (A
// probe of a cold page starts a read of that page alone, as for a random
// read: a cold scan of 64 leaves of 8 KiB in file order took 7x plain's
// time when each was probed.)  No read-ahead stream is needed for it.
// A probe with RWF_NOWAIT may still return a cold page (the kernel waited
// for the device, or the device answered as fast as memory); the run is
// then known to be cold from its next read on, which is probed too.
TEST_F(GraphRunnerPageCacheTest, AColdRunInFileOrderIsLeftToTheKernelsReadAhead) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphSettings settings = CacheAware(4);
  settings.read_ahead = false;
  GraphRunner scope(*graph, settings, &engine_);
  // No read-ahead of the kernel's: the second run's first block must still
  // be cold when the peek head gets to it.
  ASSERT_EQ(::posix_fadvise(data_fd_, 0, 0, POSIX_FADV_RANDOM), 0);
  if (!EvictBlocksForSure(data_path_, 0, kBlocks - 1)) GTEST_SKIP() << "cannot evict the file";
  // Two runs: blocks 0-31, then 33-63 (one block skipped).
  std::vector<int64_t> blocks;
  for (int block = 0; block < kBlocks; ++block) {
    if (block != 32) blocks.push_back(block);
  }
  LoopState state = ReadLoopState(blocks);
  ReadEveryOffsetThroughScope(scope, data_fd_, &state);
  const Statistics& statistics = scope.statistics();
  const uint64_t judged = ReadsJudgedAhead(statistics);
  const uint64_t probes_that_read = statistics.found_cached + statistics.probes_waited;
  EXPECT_EQ(statistics.left_in_file_order + judged, blocks.size()) << "every read: left or probed";
  EXPECT_GE(judged, 2u) << "each run's first read is probed";
  EXPECT_LE(judged - 2, probes_that_read)
      << "a read after a run's first is probed only after a probe that returned its page";
  EXPECT_GE(statistics.left_in_file_order, blocks.size() - 4) << "all but each run's first two";
  EXPECT_EQ(statistics.issued_early, 0u);
  EXPECT_EQ(engine_.prepared().size(), 0u);
  EXPECT_EQ(statistics.mispredicted, 0u);
  scope.Exit();
}

// Reads in file order larger than kMaxInOrderReadBytes are probed and
// started as any other: the kernel's read-ahead window holds few of them.
TEST_F(GraphRunnerPageCacheTest, LargeColdReadsInFileOrderAreStillStarted) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LargeLoopPreadArguments);  // 64 KiB each
  GraphSettings settings = CacheAware(4);
  settings.read_ahead = false;
  settings.direct_reads = false;
  GraphRunner scope(*graph, settings, &engine_);
  ASSERT_EQ(::posix_fadvise(data_fd_, 0, 0, POSIX_FADV_RANDOM), 0);
  if (!EvictBlocksForSure(data_path_, 0, kBlocks - 1)) GTEST_SKIP() << "cannot evict the file";
  LoopState state = ReadLoopState({0, 16, 32, 48});  // the whole file, in order
  scope.Enter(&state);
  std::vector<char> got(16 * kBlock), expected(16 * kBlock);
  for (size_t i = 0; i < state.offsets.size(); ++i) {
    ASSERT_EQ(ProgramCall(scope, Pread(data_fd_, got.data(), got.size(), state.offsets[i])),
              static_cast<int64_t>(got.size()));
    ASSERT_EQ(::pread(data_fd_, expected.data(), expected.size(), state.offsets[i]),
              static_cast<ssize_t>(expected.size()));
    EXPECT_EQ(got, expected) << "visit " << i;
  }
  const Statistics& statistics = scope.statistics();
  EXPECT_EQ(statistics.left_in_file_order, 0u);
  EXPECT_EQ(ReadsJudgedAhead(statistics), state.offsets.size());
  scope.Exit();
}

// A runner (not at an exact depth) starts with a trial of serving reads
// from the page cache at the frontier: cached reads are checked there, into
// the program's buffer, and nothing is probed ahead; after the streak
// needed it serves as usual.
TEST_F(GraphRunnerPageCacheTest, ARunnersFirstCachedReadsAreServedWithoutProbesAhead) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphSettings settings = CacheAware(16);
  settings.exact_depth = false;  // at most 16: an exact depth issues every call
  GraphRunner scope(*graph, settings, &engine_);
  LoopState state = ReadLoopState(ScatteredBlocks(kBlocks));  // just written: all cached
  ReadEveryOffsetThroughScope(scope, data_fd_, &state);
  const Statistics& statistics = scope.statistics();
  EXPECT_EQ(statistics.found_cached, 0u) << "no probe ahead";
  EXPECT_EQ(statistics.served_from_cache, static_cast<uint64_t>(kBlocks));
  EXPECT_EQ(statistics.cache_mode_changes, 1u) << "the trial found the streak";
  EXPECT_EQ(engine_.prepared().size(), 0u);
  scope.Exit();
}

// The fd of the loop's file, for an fstat in the loop.
foreactor_readiness LoopFileStatArguments(const foreactor_visit* visit, foreactor_call* call) {
  call->fd = static_cast<LoopState*>(visit->scope_state)->fd;
  return FOREACTOR_READY;
}

// A graph with calls besides its reads gets no trial: while it lasted, the
// peek head would start none of them early.
TEST_F(GraphRunnerPageCacheTest, AGraphWithOtherCallsThanReadsGetsNoTrial) {
  auto graph = TwoCallLoop("read_then_stat", FOREACTOR_CALL_PREAD, LoopPreadArguments,
                           FOREACTOR_CALL_FSTAT, LoopFileStatArguments, LoopMore);
  GraphSettings settings = CacheAware(16);
  settings.exact_depth = false;
  GraphRunner scope(*graph, settings, &engine_);
  LoopState state = ReadLoopState(ScatteredBlocks(kBlocks));  // all cached
  scope.Enter(&state);
  EXPECT_GT(scope.statistics().found_cached, 0u) << "the peek head probed ahead at once";
  EXPECT_EQ(scope.statistics().served_from_cache, 0u);
  scope.Exit();
}

// A cold read ends the trial, and the peek head walks the depth from there.
// A read of an evicted block can come back as fast as from memory (a
// virtual disk whose host caches it answers in about 20 us): the trial then
// takes it as cached, and the scope runs again.
TEST_F(GraphRunnerPageCacheTest, AColdReadEndsTheTrialAndThePeekHeadWalksTheDepth) {
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphSettings settings = CacheAware(16);
  settings.exact_depth = false;
  ASSERT_EQ(::posix_fadvise(data_fd_, 0, 0, POSIX_FADV_RANDOM), 0);
  const std::vector<int64_t> blocks = ScatteredBlocks(kBlocks);
  struct Outcome {
    uint64_t judged_before = 0;  // calls judged before the program's first read
    uint64_t served_first = 0;   // reads served from the cache by the first read
    uint64_t judged_first = 0;   // calls judged by the first read
  };
  auto read_all = [&](Outcome* outcome) {
    GraphRunner scope(*graph, settings, &engine_);
    if (!EvictBlocksForSure(data_path_, 0, kBlocks - 1)) return false;
    LoopState state = ReadLoopState(blocks);
    scope.Enter(&state);
    const Statistics& statistics = scope.statistics();
    auto judged = [&statistics] { return ReadsJudgedAhead(statistics) + statistics.issued_early; };
    outcome->judged_before = judged();
    ReadThroughScopeAndCompare(scope, data_fd_, state.offsets[0], 0);
    outcome->served_first = statistics.served_from_cache;
    outcome->judged_first = judged();
    for (size_t i = 1; i < blocks.size(); ++i) {
      ReadThroughScopeAndCompare(scope, data_fd_, state.offsets[i], i);
    }
    scope.Exit();
    return true;
  };
  Outcome outcome;
  if (!read_all(&outcome)) GTEST_SKIP() << "cannot evict the file";
  auto as_for_a_cold_read = [](const Outcome& outcome) {
    return outcome.judged_before == 0 && outcome.served_first == 0 && outcome.judged_first == 16;
  };
  for (int attempt = 1; attempt < kTimedAttempts && !as_for_a_cold_read(outcome); ++attempt) {
    if (!read_all(&outcome)) GTEST_SKIP() << "cannot evict the file";
  }
  EXPECT_EQ(outcome.judged_before, 0u) << "the trial: nothing ahead yet";
  EXPECT_EQ(outcome.served_first, 0u);
  EXPECT_EQ(outcome.judged_first, 16u) << "sixteen ahead once a read was cold";
}

// A run in file order whose reads are cached is probed read by read as
// before: the hits switch the runner to serving reads from the cache.
TEST_F(GraphRunnerPageCacheTest, ACachedRunInFileOrderIsStillServedFromTheCache) {
  // The data file was just written: every block is in the page cache.
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, CacheAware(4), &engine_);
  LoopState state = ReadLoopState(FirstBlocks(kBlocks));
  ReadEveryOffsetThroughScope(scope, data_fd_, &state);
  const Statistics& statistics = scope.statistics();
  EXPECT_EQ(statistics.left_in_file_order, 0u);
  EXPECT_EQ(statistics.found_cached + statistics.served_from_cache, static_cast<uint64_t>(kBlocks));
  EXPECT_GT(statistics.served_from_cache, 0u);
  EXPECT_EQ(engine_.prepared().size(), 0u);
  scope.Exit();
}

TEST_F(GraphRunnerPageCacheTest, ACheckedReadThatWaitsSwitchesSpeculationBackOn) {
  // Serving from the cache, then the checked reads start to take as long
  // as device reads: the second slow one in a row switches back.
  auto graph = LoopGraph(FOREACTOR_CALL_PREAD, LoopPreadArguments);
  GraphRunner scope(*graph, CacheAware(4), &engine_);
  const std::vector<int64_t> blocks = ScatteredBlocks(100);
  LoopState state = ReadLoopState(blocks);
  scope.Enter(&state);
  char buffer[kBlock];
  size_t i = 0;
  for (; i < 40; ++i) ProgramCall(scope, Pread(data_fd_, buffer, kBlock, state.offsets[i]));
  ASSERT_GT(scope.statistics().served_from_cache, 0u);
  ASSERT_EQ(scope.statistics().cache_mode_changes, 1u);
  scope.SetReadClockForTests(&SlowClock);
  // One checked read in 8: the second slow one is at most 16 reads on.
  for (; i < 60; ++i) ReadThroughScopeAndCompare(scope, data_fd_, state.offsets[i], i);
  EXPECT_EQ(scope.statistics().cache_mode_changes, 2u) << "to the cache and back";
  scope.Exit();
}

// While it lives, this process is in a blkio cgroup (v1) whose reads from
// the disk holding `path` are limited to kBytesPerSecond, so that a read
// of data not in memory cannot complete before the kernel looks again: on
// a fast virtual disk an RWF_NOWAIT read of an evicted block is often
// served, the read it starts having finished first.  reason() says why it
// could not be made (no blkio controller, not root, no block device).
class SlowDisk {
 public:
  static constexpr int kBytesPerSecond = 256 * 1024;

  explicit SlowDisk(const std::string& path) {
    struct stat status;
    if (::stat(path.c_str(), &status) != 0 || major(status.st_dev) == 0) {
      reason_ = "the test file is not on a block device";
      return;
    }
    std::string device = "/sys/dev/block/" + std::to_string(major(status.st_dev)) + ":" +
                         std::to_string(minor(status.st_dev));
    if (::access((device + "/partition").c_str(), F_OK) == 0) device += "/..";
    const std::string disk = ReadLine(device + "/dev");
    const std::string controller = "/sys/fs/cgroup/blkio";
    original_ = OwnBlkioGroup();
    if (disk.empty() || original_.empty() || ::access(controller.c_str(), W_OK) != 0) {
      reason_ = "no writable blkio cgroup controller";
      return;
    }
    group_ = controller + "/foreactor-unit-" + std::to_string(::getpid());
    if (::mkdir(group_.c_str(), 0755) != 0 ||
        !WriteLine(group_ + "/blkio.throttle.read_bps_device",
                   disk + " " + std::to_string(kBytesPerSecond)) ||
        !WriteLine(group_ + "/cgroup.procs", std::to_string(::getpid()))) {
      reason_ = "the blkio cgroup could not be made or entered";
      return;
    }
    active_ = true;
  }
  ~SlowDisk() {
    if (active_)
      WriteLine("/sys/fs/cgroup/blkio" + original_ + "/cgroup.procs", std::to_string(::getpid()));
    if (!group_.empty()) ::rmdir(group_.c_str());
  }
  SlowDisk(const SlowDisk&) = delete;
  SlowDisk& operator=(const SlowDisk&) = delete;

  bool active() const { return active_; }
  const std::string& reason() const { return reason_; }

 private:
  static std::string ReadLine(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
  }
  static bool WriteLine(const std::string& path, const std::string& line) {
    std::ofstream out(path);
    out << line << std::endl;
    return static_cast<bool>(out);
  }
  // This process's group in the blkio hierarchy ("/" for the root), from
  // /proc/self/cgroup; empty when there is none.
  static std::string OwnBlkioGroup() {
    std::ifstream in("/proc/self/cgroup");
    for (std::string line; std::getline(in, line);) {
      const size_t first = line.find(':');
      const size_t second = line.find(':', first + 1);
      if (first == std::string::npos || second == std::string::npos) continue;
      const std::string controllers = line.substr(first + 1, second - first - 1);
      if (controllers == "blkio" || controllers.find("blkio,") == 0 ||
          controllers.find(",blkio") != std::string::npos)
        return line.substr(second + 1);
    }
    return "";
  }

  bool active_ = false;
  std::string reason_;
  std::string group_;
  std::string original_;
};

TEST_F(GraphRunnerPageCacheTest, AReadThatWouldBlockSwitchesSpeculationBackOn) {
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
  // is checked with RWF_NOWAIT (one in 8) must fail.  The disk is slowed
  // down for that: otherwise the read RWF_NOWAIT starts may finish before
  // the kernel looks again, and the check passes.
  SlowDisk slow_disk(data_path_);
  if (!slow_disk.active()) GTEST_SKIP() << "cannot slow the disk down: " << slow_disk.reason();
  // Random access: a plain read of an evicted block must not bring the
  // others back by readahead before a checked read meets one.
  ASSERT_EQ(::posix_fadvise(data_fd_, 0, 0, POSIX_FADV_RANDOM), 0);
  ASSERT_TRUE(EvictBlocksForSure(data_path_, 36, kBlocks - 1));
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

TEST_F(GraphRunnerPageCacheTest, APartlyCachedFileDoesNotMakeTheCacheModeFlipOnEveryMiss) {
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

}  // namespace
}  // namespace foreactor
