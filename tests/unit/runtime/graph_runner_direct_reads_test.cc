// Tests of GraphRunner's direct reads (direct_reads.h): the early reads of a
// cold file's read loop run on a descriptor of the runner's own opened
// O_DIRECT, the program gets the file's bytes and file positions, the page
// cache stays without them, and the descriptor is closed when the scope
// ends; with the setting off, or the range cached, they stay on the
// program's descriptor.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <set>
#include <vector>

#include "runtime/coalesced_reads.h"
#include "runtime/direct_reads.h"
#include "runtime/graph_runner_fixture.h"
#include "runtime/pages_cached.h"

namespace foreactor {
namespace {

constexpr uint64_t kChunk = 128 << 10;
constexpr int kChunks = 16;
// A depth at which reads of kChunk bytes, one per pass of their loop, may
// go direct.
constexpr unsigned kDirectDepth = GraphRunner::kMinDirectReadBytesAhead / kChunk;

// READ of kChunk bytes at the file position, chunk after chunk.
foreactor_readiness ChunkReadArguments(const foreactor_visit* visit, foreactor_call* call) {
  auto* state = static_cast<LoopState*>(visit->scope_state);
  call->fd = state->fd;
  call->length = kChunk;
  call->offset = static_cast<int64_t>(visit->iteration[0] * kChunk);
  return FOREACTOR_READY;
}

class GraphRunnerDirectReadsTest : public GraphRunnerTest {
 protected:
  void SetUp() override {
    GraphRunnerTest::SetUp();
    UseColdFile(kChunks);
  }
  void TearDown() override {
    if (fd_ >= 0) ::close(fd_);
    GraphRunnerTest::TearDown();
  }

  // Makes the loop read `chunks` chunks of a file of pattern bytes, none of
  // it in the page cache (skips the test without cachestat(2)).
  void UseColdFile(int chunks) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    ASSERT_TRUE(temp_.WritePatternFile("big", kChunk * chunks));
    fd_ = ::open(temp_.Path("big").c_str(), O_RDONLY);
    ASSERT_GE(fd_, 0);
    ::fdatasync(fd_);
    ::posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
    uint64_t cached = 1, pages = 0;
    if (CountCachedPages(fd_, 0, kChunk * chunks, &cached, &pages) != 0) {
      GTEST_SKIP() << "the kernel has no cachestat(2)";
    }
    ASSERT_EQ(cached, 0u);
    state_.fd = fd_;
    state_.offsets.assign(chunks, 0);  // the loop's length
  }

  // The program reads the whole file through `scope`, checking every
  // chunk's bytes and the file position after it.
  void ReadAll(GraphRunner& scope) {
    std::vector<char> got(kChunk);
    for (int i = 0; i < kChunks; ++i) {
      ASSERT_EQ(ProgramCall(scope, Read(fd_, got.data(), kChunk)), static_cast<int64_t>(kChunk));
      ASSERT_EQ(::lseek(fd_, 0, SEEK_CUR), static_cast<off_t>((i + 1) * kChunk));
      for (uint64_t byte = 0; byte < kChunk; byte += 509) {
        ASSERT_EQ(got[byte], testing::PatternByte(i * kChunk + byte))
            << "chunk " << i << " byte " << byte;
      }
      engine_.CompleteAll();
    }
  }

  // True when the test file lies on a file system direct reads are used on.
  bool OnDirectReadFilesystem() const {
    struct statfs filesystem {};
    return ::fstatfs(fd_, &filesystem) == 0 && TakesDirectReads(filesystem.f_type);
  }

  // The program reads the whole file in one scope under `settings`;
  // returns the scope's statistics (taken before Exit() folds them into the
  // graph's totals).
  Statistics ReadAllInOneScope(const GraphSettings& settings) {
    GraphRunner scope(*graph_, settings, &engine_);
    scope.Enter(&state_);
    ReadAll(scope);
    const Statistics statistics = scope.statistics();
    scope.Exit();
    return statistics;
  }

  // No read of a scope with these `statistics` went direct: the reads the
  // engine was given, if any, ran on the program's descriptor.  (A chunk
  // whose probe missed has its pages coming in, started by the probe or
  // the kernel's read-ahead, and is left to the program: found_present; a
  // chunk not probed may be started with readahead(2) and left too:
  // reads_started.)
  void ExpectEarlyReadsOnTheProgramsDescriptor(const Statistics& statistics) const {
    EXPECT_EQ(statistics.direct_reads, 0u);
    for (int descriptor : ReadDescriptors()) EXPECT_EQ(descriptor, fd_);
  }

  // The one descriptor the engine was given early reads on so far, which
  // is the runner's own, not the program's; -1 (and a failure) otherwise.
  int TheRunnersDirectDescriptor() const {
    const std::set<int> descriptors = ReadDescriptors();
    EXPECT_EQ(descriptors.size(), 1u);
    if (descriptors.size() != 1) return -1;
    const int direct = *descriptors.begin();
    EXPECT_NE(direct, fd_);
    return direct != fd_ ? direct : -1;
  }

  // The descriptors the engine was given reads on.
  std::set<int> ReadDescriptors() const {
    std::set<int> descriptors;
    for (const auto& prepared : engine_.prepared()) {
      const foreactor_call_type type = prepared.call.type;
      if (type == FOREACTOR_CALL_PREAD || type == FOREACTOR_CALL_PREADV) {
        descriptors.insert(prepared.call.fd);
      }
    }
    return descriptors;
  }

  std::unique_ptr<Graph> graph_ = LoopGraph(FOREACTOR_CALL_READ, ChunkReadArguments);
  LoopState state_;
  int fd_ = -1;
};

TEST_F(GraphRunnerDirectReadsTest, AColdFilesEarlyReadsGoPastThePageCache) {
  if (!OnDirectReadFilesystem()) GTEST_SKIP() << "TMPDIR's file system takes no direct reads";
  GraphRunner scope(*graph_, CacheAware(kDirectDepth), &engine_);
  scope.Enter(&state_);
  const int direct = TheRunnersDirectDescriptor();
  ASSERT_GE(direct, 0);
  EXPECT_NE(::fcntl(direct, F_GETFL) & O_DIRECT, 0);
  ReadAll(scope);
  EXPECT_EQ(ReadDescriptors(), std::set<int>{direct}) << "every early read on the same descriptor";
  EXPECT_GE(scope.statistics().direct_reads, static_cast<uint64_t>(kChunks - 1));
  EXPECT_EQ(scope.statistics().found_cached, 0u) << "no probe of a range read direct";
  uint64_t cached = 1, pages = 0;
  ASSERT_EQ(CountCachedPages(fd_, kChunk, kChunk * (kChunks - 1), &cached, &pages), 0);
  EXPECT_EQ(cached, 0u) << "the page cache never held the chunks read early";
  scope.Exit();
  errno = 0;
  EXPECT_EQ(::fcntl(direct, F_GETFD), -1) << "the scope's end closes the descriptor";
  EXPECT_EQ(errno, EBADF);
}

// The program holds a record lock on the file: its early reads stay on the
// program's descriptor, for a descriptor of the runner's could not be
// closed at the scope's end without releasing the lock; the lock holds.
TEST_F(GraphRunnerDirectReadsTest, ALockedFileGetsNoDescriptorOfTheRunners) {
  if (!OnDirectReadFilesystem()) GTEST_SKIP() << "TMPDIR's file system takes no direct reads";
  const int locker = ::open(temp_.Path("big").c_str(), O_RDWR);
  ASSERT_GE(locker, 0);
  ASSERT_TRUE(testing::LockWholeFile(locker));
  ExpectEarlyReadsOnTheProgramsDescriptor(ReadAllInOneScope(CacheAware(kDirectDepth)));
  EXPECT_TRUE(testing::WriteLockHeld(temp_.Path("big"))) << "the program's record lock went";
  ::close(locker);
}

// A lock the program takes while the runner's descriptor is open keeps that
// descriptor open past the scope's end (its close would release the lock);
// the end of a later scope, the file unlocked, closes it.
TEST_F(GraphRunnerDirectReadsTest, ALockTakenInTheScopeKeepsTheRunnersDescriptorTillUnlocked) {
  if (!OnDirectReadFilesystem()) GTEST_SKIP() << "TMPDIR's file system takes no direct reads";
  GraphRunner scope(*graph_, CacheAware(kDirectDepth), &engine_);
  scope.Enter(&state_);
  const int direct = TheRunnersDirectDescriptor();
  ASSERT_GE(direct, 0);
  const int locker = ::open(temp_.Path("big").c_str(), O_RDWR);
  ASSERT_GE(locker, 0);
  ASSERT_TRUE(testing::LockWholeFile(locker));
  ReadAll(scope);
  scope.Exit();
  EXPECT_TRUE(testing::WriteLockHeld(temp_.Path("big"))) << "the program's record lock went";
  EXPECT_NE(::fcntl(direct, F_GETFD), -1) << "kept open while the file is locked";
  ::close(locker);  // the program's own close: its lock goes
  scope.Enter(&state_);
  engine_.CompleteAll();
  scope.Exit();
  errno = 0;
  EXPECT_EQ(::fcntl(direct, F_GETFD), -1) << "closed at a scope's end once unlocked";
  EXPECT_EQ(errno, EBADF);
}

// Adjacent chunks read direct reach the engine as vectored reads of
// CoalescedReads::kGroupBytes into the chunks' slots (coalesced_reads.h).
TEST_F(GraphRunnerDirectReadsTest, AdjacentDirectReadsGoAsFewerLargerRequests) {
  if (!OnDirectReadFilesystem()) GTEST_SKIP() << "TMPDIR's file system takes no direct reads";
  GraphRunner scope(*graph_, CacheAware(kDirectDepth), &engine_);
  scope.Enter(&state_);
  ReadAll(scope);
  const Statistics statistics = scope.statistics();
  scope.Exit();
  constexpr uint64_t kPerGroup = CoalescedReads::kGroupBytes / kChunk;
  static_assert(kChunks % kPerGroup == 0);
  size_t groups = 0;
  for (const auto& prepared : engine_.prepared()) {
    ASSERT_EQ(prepared.call.type, FOREACTOR_CALL_PREADV);
    EXPECT_EQ(prepared.call.length, CoalescedReads::kGroupBytes);
    EXPECT_EQ(prepared.call.offset, static_cast<int64_t>(groups * CoalescedReads::kGroupBytes));
    groups++;
  }
  EXPECT_EQ(groups, kChunks / kPerGroup);
  EXPECT_EQ(statistics.direct_reads, static_cast<uint64_t>(kChunks));
  EXPECT_EQ(statistics.direct_read_requests, groups);
  EXPECT_EQ(statistics.consumed, static_cast<uint64_t>(kChunks));
}

// The scope ends before the program reads: two full groups wait at the
// engine and a third is still open.  Its members complete together,
// without the engine; none of them is handed to the engine's Cancel()
// (which before the fix got every member after the first).
TEST_F(GraphRunnerDirectReadsTest, EndingTheScopeCompletesAnOpenGroupWithoutTheEngine) {
  if (!OnDirectReadFilesystem()) GTEST_SKIP() << "TMPDIR's file system takes no direct reads";
  constexpr uint64_t kPerGroup = CoalescedReads::kGroupBytes / kChunk;
  UseColdFile(2 * kPerGroup + kPerGroup / 2);
  GraphRunner scope(*graph_, CacheAware(kDirectDepth), &engine_);
  scope.Enter(&state_);
  ASSERT_EQ(engine_.prepared().size(), 2u) << "two full groups sent, the third open";
  scope.Exit();
  EXPECT_EQ(engine_.cancel_count(), 2u) << "each sent group cancelled once";
}

// An engine that runs no vectored read still gets the direct reads, one
// request each (before the fix, each group it refused left its reads to
// the program).
TEST_F(GraphRunnerDirectReadsTest, WithoutVectoredReadsDirectReadsGoOneByOne) {
  if (!OnDirectReadFilesystem()) GTEST_SKIP() << "TMPDIR's file system takes no direct reads";
  engine_.SetSupports(FOREACTOR_CALL_PREADV, false);
  GraphRunner scope(*graph_, CacheAware(kDirectDepth), &engine_);
  scope.Enter(&state_);
  ReadAll(scope);
  const Statistics statistics = scope.statistics();
  scope.Exit();
  EXPECT_EQ(statistics.direct_reads, static_cast<uint64_t>(kChunks));
  EXPECT_EQ(statistics.direct_read_requests, static_cast<uint64_t>(kChunks));
  EXPECT_EQ(statistics.consumed, static_cast<uint64_t>(kChunks));
}

// The file ends inside a group: the chunk it cuts short, and those after
// it, are the program's own reads, which meet the end of the file.
TEST_F(GraphRunnerDirectReadsTest, AFileEndingInsideAGroupGivesTheProgramItsShortRead) {
  if (!OnDirectReadFilesystem()) GTEST_SKIP() << "TMPDIR's file system takes no direct reads";
  constexpr uint64_t kSize = kChunk * (kChunks - 3) + kChunk / 2;
  ::close(fd_);
  fd_ = ::open(temp_.Path("big").c_str(), O_RDWR);
  ASSERT_EQ(::ftruncate(fd_, kSize), 0);
  ::fdatasync(fd_);
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
  state_.fd = fd_;
  GraphRunner scope(*graph_, CacheAware(kDirectDepth), &engine_);
  scope.Enter(&state_);
  std::vector<char> got(kChunk);
  for (int i = 0; i < kChunks; ++i) {
    const uint64_t start = i * kChunk;
    const uint64_t expected = start >= kSize ? 0 : std::min<uint64_t>(kChunk, kSize - start);
    ASSERT_EQ(ProgramCall(scope, Read(fd_, got.data(), kChunk)), static_cast<int64_t>(expected))
        << "chunk " << i;
    for (uint64_t byte = 0; byte < expected; byte += 509) {
      ASSERT_EQ(got[byte], testing::PatternByte(start + byte)) << "chunk " << i;
    }
    engine_.CompleteAll();
  }
  EXPECT_EQ(scope.statistics().consumed, static_cast<uint64_t>(kChunks - 3)) << "the whole chunks";
  scope.Exit();
}

TEST_F(GraphRunnerDirectReadsTest, WithDirectReadsOffEarlyReadsStayOnTheProgramsDescriptor) {
  GraphSettings settings = CacheAware(kDirectDepth);
  settings.direct_reads = false;
  ExpectEarlyReadsOnTheProgramsDescriptor(ReadAllInOneScope(settings));
}

TEST_F(GraphRunnerDirectReadsTest, ACachedFileIsReadFromThePageCache) {
  std::vector<char> bytes(kChunk * kChunks);
  ASSERT_EQ(::pread(fd_, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  EXPECT_EQ(ReadAllInOneScope(CacheAware(kDirectDepth)).direct_reads, 0u);
  for (int descriptor : ReadDescriptors()) EXPECT_EQ(descriptor, fd_);
}

// The runner says when its scopes stream a file past the page cache (the
// scope gate keeps such scopes), and stops saying so once the reads of the
// next scope are found cached.
TEST_F(GraphRunnerDirectReadsTest, ARunnerReadingDirectSaysItStreamsUntilItsReadsAreCached) {
  if (!OnDirectReadFilesystem()) GTEST_SKIP() << "TMPDIR's file system takes no direct reads";
  GraphRunner scope(*graph_, CacheAware(kDirectDepth), &engine_);
  EXPECT_FALSE(scope.streaming_past_cache());
  scope.Enter(&state_);
  EXPECT_TRUE(scope.streaming_past_cache());
  ReadAll(scope);
  scope.Exit();
  EXPECT_TRUE(scope.streaming_past_cache()) << "the last scope's reads went direct";

  std::vector<char> bytes(kChunk * kChunks);
  ASSERT_EQ(::pread(fd_, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  ASSERT_EQ(::lseek(fd_, 0, SEEK_SET), 0);
  scope.Enter(&state_);
  ReadAll(scope);
  scope.Exit();
  EXPECT_FALSE(scope.streaming_past_cache());
}

// Too few bytes ahead for the device to be busy with direct reads alone:
// the kernel's read-ahead does better beside early reads through the cache.
TEST_F(GraphRunnerDirectReadsTest, AtASmallDepthEarlyReadsStayOnTheProgramsDescriptor) {
  ExpectEarlyReadsOnTheProgramsDescriptor(ReadAllInOneScope(CacheAware(kDirectDepth / 2)));
}

// READ of kChunk bytes, then fstat of the file, chunk after chunk: a loop
// whose reads have every other visit of the depth, as a copy's.
foreactor_readiness FileStatArguments(const foreactor_visit* visit, foreactor_call* call) {
  call->fd = static_cast<LoopState*>(visit->scope_state)->fd;
  return FOREACTOR_READY;
}

std::unique_ptr<Graph> ReadThenStatGraph() {
  return TwoCallLoop("read_then_stat", FOREACTOR_CALL_READ, ChunkReadArguments,
                     FOREACTOR_CALL_FSTAT, FileStatArguments, LoopMore);
}

// The program reads the test file chunk by chunk through `scope`, with an
// fstat after each chunk; returns the scope's statistics.
Statistics ReadAndStatAll(GraphRunner& scope, LoopState* state, int fd) {
  std::vector<char> got(kChunk);
  struct stat status {};
  scope.Enter(state);
  for (int i = 0; i < kChunks; ++i) {
    EXPECT_EQ(ProgramCall(scope, Read(fd, got.data(), kChunk)), static_cast<int64_t>(kChunk));
    foreactor_call fstat_call{};
    fstat_call.type = FOREACTOR_CALL_FSTAT;
    fstat_call.fd = fd;
    fstat_call.buffer = &status;
    EXPECT_EQ(ProgramCall(scope, fstat_call), 0);
  }
  const Statistics statistics = scope.statistics();
  scope.Exit();
  return statistics;
}

// Reads that share their loop's visits with another call have a share of
// the depth only: at the depth that sends a lone read loop direct they
// stay on the program's descriptor (a copy at exact depth 64 had 4 MiB of
// reads ahead, counted as 8, and ran 1.16x of stock), at twice it they go
// direct.
TEST_F(GraphRunnerDirectReadsTest, OnlyTheReadsShareOfTheDepthCountsForDirectReads) {
  if (!OnDirectReadFilesystem()) GTEST_SKIP() << "TMPDIR's file system takes no direct reads";
  auto graph = ReadThenStatGraph();
  {
    GraphRunner scope(*graph, CacheAware(kDirectDepth), &engine_);
    const Statistics statistics = ReadAndStatAll(scope, &state_, fd_);
    EXPECT_EQ(statistics.intercepted, 2u * kChunks);
    ExpectEarlyReadsOnTheProgramsDescriptor(statistics);
  }
  UseColdFile(kChunks);
  engine_.CompleteAll();
  GraphRunner scope(*graph, CacheAware(2 * kDirectDepth), &engine_);
  EXPECT_GE(ReadAndStatAll(scope, &state_, fd_).direct_reads, 1u);
}

// A direct read the kernel refuses (as it might for reasons of its own,
// such as alignment) is not the program's answer: the program's read runs
// as its own call and returns the file's bytes.
TEST_F(GraphRunnerDirectReadsTest, AFailedDirectReadIsNotTheProgramsResult) {
  if (!OnDirectReadFilesystem()) GTEST_SKIP() << "TMPDIR's file system takes no direct reads";
  engine_.SetResultForCall(0, -EINVAL);
  engine_.SetResultForCall(1, -EIO);
  GraphRunner scope(*graph_, CacheAware(kDirectDepth), &engine_);
  scope.Enter(&state_);
  ASSERT_NE(*ReadDescriptors().begin(), fd_);
  ReadAll(scope);  // every chunk's bytes, the first two read by the program itself
  EXPECT_GE(scope.statistics().synchronous, 2u);
  EXPECT_GE(scope.statistics().direct_reads, static_cast<uint64_t>(kChunks - 1));
  scope.Exit();
}

// A read pair: node "first" reads chunk 2i, node "second" chunk 2i + 1, both
// with pread(2); from iteration kLinkedFrom on, the first call is linked to
// the second.  Until then each is a head of its own and read direct.
constexpr uint64_t kPairChunk = 1 << 20;
// Two reads per pass: each node's reads have half the depth.
constexpr unsigned kPairDepth = 2 * GraphRunner::kMinDirectReadBytesAhead / kPairChunk;
// The first visit of "second" in a slot of its ring that held a direct read.
constexpr uint64_t kLinkedFrom = kPairDepth + 1;
constexpr uint64_t kPairIterations = kLinkedFrom + 2;

int64_t PairOffset(uint64_t iteration, int member) {
  return static_cast<int64_t>((2 * iteration + member) * kPairChunk);
}

foreactor_readiness FirstOfPairArguments(const foreactor_visit* visit, foreactor_call* call) {
  call->fd = static_cast<LoopState*>(visit->scope_state)->fd;
  call->length = kPairChunk;
  call->offset = PairOffset(visit->iteration[0], 0);
  call->link_next = visit->iteration[0] >= kLinkedFrom ? 1 : 0;
  return FOREACTOR_READY;
}

foreactor_readiness SecondOfPairArguments(const foreactor_visit* visit, foreactor_call* call) {
  call->fd = static_cast<LoopState*>(visit->scope_state)->fd;
  call->length = kPairChunk;
  call->offset = PairOffset(visit->iteration[0], 1);
  return FOREACTOR_READY;
}

int MorePairs(const foreactor_visit* visit) {
  return visit->iteration[0] + 1 < kPairIterations ? 0 : 1;
}

std::unique_ptr<Graph> ReadPairGraph() {
  return TwoCallLoop("pairs", FOREACTOR_CALL_PREAD, FirstOfPairArguments, FOREACTOR_CALL_PREAD,
                     SecondOfPairArguments, MorePairs);
}

// A read linked after another runs on the program's descriptor, so its
// result, a failure too, is the program's answer, even in a slot whose
// visit before was a direct read (a bug: the slot's old direct-read flag
// made the runner throw such a failure away and run the read again).
TEST_F(GraphRunnerDirectReadsTest, ALinkedReadsFailureIsTheProgramsResult) {
  if (!OnDirectReadFilesystem()) GTEST_SKIP() << "TMPDIR's file system takes no direct reads";
  ASSERT_TRUE(temp_.WritePatternFile("pairs", 2 * kPairChunk * kPairIterations));
  LoopState state;
  state.fd = ::open(temp_.Path("pairs").c_str(), O_RDONLY);
  ASSERT_GE(state.fd, 0);
  ::fdatasync(state.fd);
  ::posix_fadvise(state.fd, 0, 0, POSIX_FADV_DONTNEED);
  auto graph = ReadPairGraph();
  GraphRunner scope(*graph, CacheAware(kPairDepth), &engine_);
  scope.Enter(&state);
  const int64_t failing_offset = PairOffset(kLinkedFrom, 1);
  bool scripted = false;
  std::vector<char> buffer(kPairChunk);
  for (uint64_t i = 0; i < kPairIterations; ++i) {
    for (int member = 0; member < 2; ++member) {
      // The linked read fails with EIO once it is prepared.
      for (size_t index = 0; !scripted && index < engine_.prepared().size(); ++index) {
        const auto& prepared = engine_.prepared()[index];
        if (prepared.call.offset == failing_offset) {
          ASSERT_EQ(prepared.call.fd, state.fd) << "a linked read is not read direct";
          engine_.SetResultForCall(index, -EIO);
          scripted = true;
        }
      }
      const int64_t offset = PairOffset(i, member);
      bool served = false;
      const int64_t got =
          ProgramCall(scope, Pread(state.fd, buffer.data(), kPairChunk, offset), &served);
      if (offset == failing_offset) {
        ASSERT_TRUE(scripted) << "the linked read was issued early";
        EXPECT_TRUE(served) << "the linked read's early result is the program's";
        EXPECT_EQ(got, -EIO);
      } else {
        EXPECT_EQ(got, static_cast<int64_t>(kPairChunk)) << "offset " << offset;
      }
    }
  }
  EXPECT_GE(scope.statistics().direct_reads, kPairDepth) << "the heads before the links";
  scope.Exit();
  ::close(state.fd);
}

}  // namespace
}  // namespace foreactor
