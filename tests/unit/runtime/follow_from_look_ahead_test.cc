// Tests of graphs followed from the plugin's first look-ahead
// (foreactor_graph_follow_from_look_ahead, GraphBuilder::FollowFromLookAhead):
// the program's calls before the look-ahead pass untouched; a scope whose
// rest is a short run of preads in file order is left at the look-ahead
// with no runner made; any other scope is followed from there as from its
// entry; a scope with no look-ahead is counted and nothing more; an exact
// depth follows every scope from its entry.  Results never change.
#include "foreactor/foreactor.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/settings.h"
#include "runtime/interception.h"
#include "runtime/lettered_file.h"
#include "runtime/program_calls.h"
#include "runtime/statistics_json.h"

namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kBlocks = 16;

struct ScanState {
  int fd;
  bool known;      // the branch before the loop waits until the plugin knows
  bool scattered;  // the blocks in a scattered order instead of file order
};

// The offset of the block read at visit `visit`.
int64_t BlockOffset(const ScanState& state, uint64_t visit) {
  // Scattered: 0, 8, 1, 9, ... 7, 15 (every read jumps, enough of them for
  // the runtime not to take the run as one in file order).
  const uint64_t block = state.scattered ? (visit % 2) * (kBlocks / 2) + visit / 2 : visit;
  return static_cast<int64_t>(block * kBlock);
}

// start -> known? -> read_block (visit i: BlockOffset) -> more? -> read_block | end
foreactor::plugin::Graph<ScanState> BuildScan(const char* name) {
  foreactor::GraphBuilder<ScanState> builder(name);
  builder.FollowFromLookAhead();
  auto known = builder.Branch("known", [](ScanState& state, const foreactor::Visit&) {
    return state.known ? 0 : FOREACTOR_CHOICE_NOT_YET;
  });
  auto read = builder.Syscall(
      "read_block", FOREACTOR_CALL_PREAD,
      [](ScanState& state, const foreactor::Visit& visit, foreactor_call& call) {
        call = foreactor::Pread(state.fd, kBlock, BlockOffset(state, visit.iteration(0)));
        return FOREACTOR_READY;
      });
  auto more = builder.Branch("more", [](ScanState&, const foreactor::Visit& visit) {
    return visit.iteration(0) + 1 < kBlocks ? 0 : 1;
  });
  builder.start().Then(known, foreactor::kWeak);
  known.Children({read});
  read.Then(more, foreactor::kWeak);
  more.Children({read, builder.end()});
  return builder.Build();
}

// A scan of `blocks` blocks in file order whose loop says its count
// (foreactor_graph_set_loop_count); counts the arguments callback's calls.
struct CountedScanState {
  int fd;
  uint64_t blocks;
  unsigned arguments_asked = 0;
  int64_t count_error = 0;  // added to the count the loop says (a wrong count)
};

// start -> read_block (block i) -> more? (count: blocks) -> read_block | end
foreactor::plugin::Graph<CountedScanState> BuildCountedScan(const char* name) {
  foreactor::GraphBuilder<CountedScanState> builder(name);
  builder.FollowFromLookAhead();
  auto read = builder.Syscall(
      "read_block", FOREACTOR_CALL_PREAD,
      [](CountedScanState& state, const foreactor::Visit& visit, foreactor_call& call) {
        state.arguments_asked++;
        call =
            foreactor::Pread(state.fd, kBlock, static_cast<int64_t>(visit.iteration(0) * kBlock));
        return FOREACTOR_READY;
      });
  auto more = builder.Branch(
      "more",
      [](CountedScanState& state, const foreactor::Visit& visit) {
        return visit.iteration(0) + 1 < state.blocks ? 0 : 1;
      },
      [](CountedScanState& state, const foreactor::Visit&) {
        return static_cast<int64_t>(state.blocks) + state.count_error;
      });
  builder.start().Then(read, foreactor::kWeak);
  read.Then(more, foreactor::kWeak);
  more.Children({read, builder.end()});
  return builder.Build();
}

class FollowFromLookAheadTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("FOREACTOR", "1", 1);
    setenv("FOREACTOR_ENGINE", "threads", 1);
    setenv("FOREACTOR_DEPTH", "auto", 1);
    setenv("FOREACTOR_EXACT_DEPTH_follow_exact", "1", 1);
    setenv("FOREACTOR_DEPTH_follow_exact", "8", 1);
    foreactor::ReloadSettingsForTesting();
  }
  static void TearDownTestSuite() {
    unsetenv("FOREACTOR");
    unsetenv("FOREACTOR_ENGINE");
    unsetenv("FOREACTOR_DEPTH");
    unsetenv("FOREACTOR_EXACT_DEPTH_follow_exact");
    unsetenv("FOREACTOR_DEPTH_follow_exact");
    foreactor::ReloadSettingsForTesting();
  }
  void SetUp() override {
    fd_ = foreactor::MakeLetteredFile(kBlocks, kBlock);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override { close(fd_); }

  // The program reads the blocks in the graph's order through the open
  // scopes; each read must return its block's bytes.
  void ProgramReadsEveryBlock(const ScanState& state) {
    for (uint64_t visit = 0; visit < kBlocks; ++visit) {
      std::vector<char> buffer(kBlock);
      const int64_t offset = BlockOffset(state, visit);
      foreactor_call call = foreactor::Pread(fd_, kBlock, offset);
      call.buffer = buffer.data();
      ASSERT_EQ(foreactor::ProgramCallThroughScopes(call), static_cast<int64_t>(kBlock));
      const char expected = foreactor::BlockLetter(static_cast<uint64_t>(offset) / kBlock);
      EXPECT_EQ(buffer, std::vector<char>(kBlock, expected));
    }
  }

  // The program reads `state`'s blocks in order through the open scopes;
  // each read must return its block's bytes.
  void ProgramReadsCountedScan(int fd, const CountedScanState& state) {
    std::vector<char> buffer(kBlock);
    for (uint64_t block = 0; block < state.blocks; ++block) {
      foreactor_call call = foreactor::Pread(fd, kBlock, static_cast<int64_t>(block * kBlock));
      call.buffer = buffer.data();
      ASSERT_EQ(foreactor::ProgramCallThroughScopes(call), static_cast<int64_t>(kBlock));
      EXPECT_EQ(buffer, std::vector<char>(kBlock, foreactor::BlockLetter(block)));
    }
  }

  // A read of the file's first block, as the program's own call.
  void ProgramReadsOtherData() {
    std::vector<char> buffer(kBlock);
    foreactor_call call = foreactor::Pread(fd_, kBlock, 0);
    call.buffer = buffer.data();
    ASSERT_EQ(foreactor::ProgramCallThroughScopes(call), static_cast<int64_t>(kBlock));
  }

  int fd_ = -1;
};

TEST_F(FollowFromLookAheadTest, AShortRunInFileOrderIsLeftWithNothingSetUp) {
  static const auto graph = BuildScan("follow_short");
  ScanState state{fd_, false, false};
  {
    foreactor::Scope scope(graph, state);
    // Before the look-ahead the scope follows nothing: the interposers'
    // idle path.
    EXPECT_FALSE(foreactor::ThreadHasSpeculatingScope());
    ProgramReadsOtherData();
    state.known = true;
    graph.LookAhead();
    EXPECT_FALSE(foreactor::ThreadHasSpeculatingScope());
    ProgramReadsEveryBlock(state);
  }
  EXPECT_EQ(foreactor::StatisticsCounter("follow_short", "scopes"), 1u);
  EXPECT_EQ(foreactor::StatisticsCounter("follow_short", "scopes_left_in_file_order"), 1u);
  EXPECT_EQ(foreactor::StatisticsCounter("follow_short", "intercepted"), 0u);
  EXPECT_EQ(foreactor::StatisticsCounter("follow_short", "passed_through"), 0u);
  // No runner was made: no scope's outcome to report.
  foreactor_scope_outcome outcome{};
  EXPECT_EQ(foreactor_last_scope_outcome(graph.handle(), &outcome), 0);
}

// What decides is whether the descriptor was opened with O_DIRECT, not its
// file type: a short run in file order on a character device is left as
// one on a regular file is (nothing issued early would serve it better).
TEST_F(FollowFromLookAheadTest, AShortRunOnADescriptorOtherThanAFileIsLeftToo) {
  static const auto graph = BuildScan("follow_device");
  const int zero = open("/dev/zero", O_RDONLY);
  ASSERT_GE(zero, 0);
  ScanState state{zero, false, false};
  {
    foreactor::Scope scope(graph, state);
    state.known = true;
    graph.LookAhead();
    EXPECT_FALSE(foreactor::ThreadHasSpeculatingScope());
    for (uint64_t visit = 0; visit < kBlocks; ++visit) {
      std::vector<char> buffer(kBlock, 'x');
      foreactor_call call = foreactor::Pread(zero, kBlock, BlockOffset(state, visit));
      call.buffer = buffer.data();
      ASSERT_EQ(foreactor::ProgramCallThroughScopes(call), static_cast<int64_t>(kBlock));
      EXPECT_EQ(buffer, std::vector<char>(kBlock, 0));
    }
  }
  close(zero);
  EXPECT_EQ(foreactor::StatisticsCounter("follow_device", "scopes_left_in_file_order"), 1u);
  EXPECT_EQ(foreactor::StatisticsCounter("follow_device", "intercepted"), 0u);
}

// O_DIRECT reads never find the page cache: a short run in file order on
// such a descriptor is followed from the look-ahead, not left.
TEST_F(FollowFromLookAheadTest, AShortRunOpenedForDirectIoIsFollowed) {
  static const auto graph = BuildScan("follow_direct");
  const std::string path = "/proc/self/fd/" + std::to_string(fd_);
  const int direct = open(path.c_str(), O_RDONLY | O_DIRECT);
  if (direct < 0) GTEST_SKIP() << "the file system of /tmp refuses O_DIRECT";
  ScanState state{direct, false, false};
  {
    foreactor::Scope scope(graph, state);
    state.known = true;
    graph.LookAhead();
    EXPECT_TRUE(foreactor::ThreadHasSpeculatingScope());
    for (uint64_t visit = 0; visit < kBlocks; ++visit) {
      std::unique_ptr<char, decltype(&std::free)> buffer(
          static_cast<char*>(std::aligned_alloc(kBlock, kBlock)), &std::free);
      ASSERT_NE(buffer, nullptr);
      const int64_t offset = BlockOffset(state, visit);
      foreactor_call call = foreactor::Pread(direct, kBlock, offset);
      call.buffer = buffer.get();
      ASSERT_EQ(foreactor::ProgramCallThroughScopes(call), static_cast<int64_t>(kBlock));
      const char expected = foreactor::BlockLetter(static_cast<uint64_t>(offset) / kBlock);
      EXPECT_EQ(std::string(buffer.get(), kBlock), std::string(kBlock, expected));
    }
  }
  close(direct);
  EXPECT_EQ(foreactor::StatisticsCounter("follow_direct", "scopes_left_in_file_order"), 0u);
  EXPECT_EQ(foreactor::StatisticsCounter("follow_direct", "intercepted"), kBlocks);
}

TEST_F(FollowFromLookAheadTest, AScatteredRunIsFollowedFromTheLookAhead) {
  static const auto graph = BuildScan("follow_scattered");
  ScanState state{fd_, false, true};
  {
    foreactor::Scope scope(graph, state);
    ProgramReadsOtherData();  // before the look-ahead: not the graph's
    state.known = true;
    graph.LookAhead();
    EXPECT_TRUE(foreactor::ThreadHasSpeculatingScope());
    ProgramReadsEveryBlock(state);
  }
  EXPECT_FALSE(foreactor::ThreadHasSpeculatingScope());
  EXPECT_EQ(foreactor::StatisticsCounter("follow_scattered", "scopes"), 1u);
  EXPECT_EQ(foreactor::StatisticsCounter("follow_scattered", "scopes_left_in_file_order"), 0u);
  // Every block read matched the graph, from its start.
  EXPECT_EQ(foreactor::StatisticsCounter("follow_scattered", "intercepted"), kBlocks);
  EXPECT_EQ(foreactor::StatisticsCounter("follow_scattered", "passed_through"), 0u);
}

// With the loop's count, the look-ahead learns that a 64-block run is short
// from its first 16 reads and its last, not from all 64.
TEST_F(FollowFromLookAheadTest, ACountedShortRunIsLeftAfterItsFirstReadsAndItsLast) {
  static const auto graph = BuildCountedScan("follow_counted_short");
  const int fd = foreactor::MakeLetteredFile(64, kBlock);
  ASSERT_GE(fd, 0);
  CountedScanState state{fd, 64};
  {
    foreactor::Scope scope(graph, state);
    graph.LookAhead();
    EXPECT_FALSE(foreactor::ThreadHasSpeculatingScope());
    EXPECT_EQ(state.arguments_asked, 17u);
    ProgramReadsCountedScan(fd, state);
  }
  close(fd);
  EXPECT_EQ(foreactor::StatisticsCounter("follow_counted_short", "scopes_left_in_file_order"), 1u);
  EXPECT_EQ(foreactor::StatisticsCounter("follow_counted_short", "intercepted"), 0u);
}

// A counted run longer than a short one is followed, as it is uncounted.
TEST_F(FollowFromLookAheadTest, ACountedLongRunIsFollowed) {
  static const auto graph = BuildCountedScan("follow_counted_long");
  const int fd = foreactor::MakeLetteredFile(400, kBlock);
  ASSERT_GE(fd, 0);
  CountedScanState state{fd, 400};
  {
    foreactor::Scope scope(graph, state);
    graph.LookAhead();
    EXPECT_TRUE(foreactor::ThreadHasSpeculatingScope());
    ProgramReadsCountedScan(fd, state);
  }
  close(fd);
  EXPECT_EQ(foreactor::StatisticsCounter("follow_counted_long", "scopes_left_in_file_order"), 0u);
  // (Followed until its reads, all found in the page cache, made the
  // runner leave the rest to the program.)
  EXPECT_GT(foreactor::StatisticsCounter("follow_counted_long", "intercepted"), 0u);
}

// A wrong count changes what the look-ahead decides, never what the
// program reads: a short run that says it is long is followed, a long
// one that says it is short is walked on by its branch's choices.
TEST_F(FollowFromLookAheadTest, AWrongCountChangesNoResult) {
  static const auto graph = BuildCountedScan("follow_counted_wrong");
  const int fd = foreactor::MakeLetteredFile(400, kBlock);
  ASSERT_GE(fd, 0);
  struct Case {
    uint64_t blocks;
    int64_t count_error;
  };
  for (const Case& wrong : {Case{40, 24}, Case{40, 300}, Case{300, -260}, Case{64, -40}}) {
    CountedScanState state{fd, wrong.blocks, 0, wrong.count_error};
    {
      foreactor::Scope scope(graph, state);
      graph.LookAhead();
      ProgramReadsCountedScan(fd, state);
    }
    EXPECT_FALSE(foreactor::ThreadHasSpeculatingScope());
  }
  close(fd);
  EXPECT_EQ(foreactor::StatisticsCounter("follow_counted_wrong", "scopes"), 4u);
}

TEST_F(FollowFromLookAheadTest, AScopeWithNoLookAheadIsCountedAndNothingMore) {
  static const auto graph = BuildScan("follow_never");
  ScanState state{fd_, false, false};
  {
    foreactor::Scope scope(graph, state);
    ProgramReadsOtherData();
    EXPECT_FALSE(foreactor::ThreadHasSpeculatingScope());
  }
  EXPECT_EQ(foreactor::StatisticsCounter("follow_never", "scopes"), 1u);
  EXPECT_EQ(foreactor::StatisticsCounter("follow_never", "intercepted"), 0u);
}

TEST_F(FollowFromLookAheadTest, AnExactDepthFollowsTheScopeFromItsEntry) {
  static const auto graph = BuildScan("follow_exact");
  ScanState state{fd_, false, false};
  {
    foreactor::Scope scope(graph, state);
    EXPECT_TRUE(foreactor::ThreadHasSpeculatingScope());
    ProgramReadsOtherData();  // passes the waiting frontier
    state.known = true;
    graph.LookAhead();
    ProgramReadsEveryBlock(state);
  }
  EXPECT_EQ(foreactor::StatisticsCounter("follow_exact", "scopes"), 1u);
  // The runner saw the program's first read (not the graph's) pass.
  EXPECT_EQ(foreactor::StatisticsCounter("follow_exact", "passed_through"), 1u);
}

}  // namespace
