// Tests of GraphRunner on files opened with O_DIRECT: never taken for page
// cache hits, and direct I/O the kernel refuses fails as it would plain.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "runtime/graph_runner_fixture.h"

namespace foreactor {
namespace {

class GraphRunnerDirectIoTest : public GraphRunnerTest {};

// A buffer of `size` bytes aligned to a page, freed with the test.
struct AlignedBuffer {
  explicit AlignedBuffer(size_t size) { EXPECT_EQ(posix_memalign(&data, kBlock, size), 0); }
  ~AlignedBuffer() { free(data); }
  char* bytes() const { return static_cast<char*>(data); }
  void* data = nullptr;
};

TEST_F(GraphRunnerDirectIoTest, DirectReadsAreNeverTakenForPageCacheHits) {
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

TEST_F(GraphRunnerDirectIoTest, MisalignedDirectReadFailsAsItWouldPlain) {
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

TEST_F(GraphRunnerDirectIoTest, MisalignedDirectOffsetIsNotIssuedEarly) {
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
