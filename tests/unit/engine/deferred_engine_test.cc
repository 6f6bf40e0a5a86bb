// Tests of DeferredEngine: nothing is made before the first request, the
// first Prepare() makes the engine of the kind and reports it once, and
// every call goes to it from then on.
#include "engine/deferred_engine.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "engine/test_files.h"

namespace foreactor {
namespace {

struct Reports {
  int calls = 0;
  bool made = false;
  std::string fallback_reason;
};

void Record(void* context, EngineKind, const std::string& fallback_reason, bool made) {
  Reports* reports = static_cast<Reports*>(context);
  reports->calls++;
  reports->made = made;
  reports->fallback_reason = fallback_reason;
}

TEST(DeferredEngineTest, IoUringIsMadeAtTheFirstRequestOnly) {
  Reports reports;
  EngineOptions options;
  options.kind = EngineKind::kIoUring;
  const int before = testing::OpenDescriptorCount();
  DeferredEngine engine(options, &Record, &reports);
  EXPECT_EQ(engine.real(), nullptr);
  EXPECT_STREQ(engine.name(), "io_uring");
  EXPECT_TRUE(engine.Supports(FOREACTOR_CALL_PREAD));
  EXPECT_FALSE(engine.Supports(FOREACTOR_CALL_GETDENTS64)) << "as an io_uring engine answers";
  EXPECT_EQ(engine.Submit(), 0);
  engine.Poll();
  engine.Rest();
  EXPECT_EQ(testing::OpenDescriptorCount(), before) << "no ring before the first request";
  EXPECT_EQ(reports.calls, 0);

  const int fd = open("/dev/zero", O_RDONLY);
  ASSERT_GE(fd, 0);
  for (int round = 0; round < 2; ++round) {
    char buffer[8] = {'x'};
    Request request;
    testing::SetUpRead(&request, fd, buffer, sizeof(buffer), 0);
    ASSERT_TRUE(engine.Prepare(&request)) << "round " << round;
    ASSERT_EQ(engine.Submit(), 1);
    engine.Wait(&request);
    EXPECT_EQ(request.result, 8);
    EXPECT_EQ(buffer[0], 0);
  }
  ASSERT_NE(engine.real(), nullptr);
  EXPECT_EQ(reports.calls, 1) << "made once";
  EXPECT_TRUE(reports.made);
  EXPECT_STREQ(engine.name(), engine.real()->name());
  close(fd);
}

TEST(DeferredEngineTest, ThreadPoolSupportsEveryCallBeforeAndAfter) {
  Reports reports;
  EngineOptions options;
  options.kind = EngineKind::kThreads;
  DeferredEngine engine(options, &Record, &reports);
  EXPECT_STREQ(engine.name(), "threads");
  EXPECT_TRUE(engine.Supports(FOREACTOR_CALL_GETDENTS64));
  const int fd = open("/dev/zero", O_RDONLY);
  ASSERT_GE(fd, 0);
  char buffer[4] = {'x'};
  Request request;
  testing::SetUpRead(&request, fd, buffer, sizeof(buffer), 0);
  ASSERT_TRUE(engine.Prepare(&request));
  ASSERT_EQ(engine.Submit(), 1);
  engine.Wait(&request);
  EXPECT_EQ(request.result, 4);
  EXPECT_EQ(reports.calls, 1);
  EXPECT_TRUE(reports.made);
  EXPECT_TRUE(reports.fallback_reason.empty());
  EXPECT_TRUE(engine.Supports(FOREACTOR_CALL_GETDENTS64));
  close(fd);
}

// io_uring that cannot be set up falls back to the thread pool, which runs
// no open early: an open offered as the first request (Supports() said yes
// for io_uring) is refused, never run into the program's table.
TEST(DeferredEngineTest, AnOpenTheEngineMadeDoesNotSupportIsRefused) {
  Reports reports;
  EngineOptions options;
  options.kind = EngineKind::kIoUring;
  DeferredEngine engine(options, &Record, &reports);
  EXPECT_TRUE(engine.Supports(FOREACTOR_CALL_OPEN)) << "io_uring may run opens";
  // A descriptor limit under 256 leaves the ring no room: the thread pool.
  struct rlimit saved {};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  struct rlimit tight = saved;
  tight.rlim_cur = 64;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &tight), 0);
  const int before = testing::OpenDescriptorCount();
  Request request;
  request.call.type = FOREACTOR_CALL_OPEN;
  request.call.path = "/dev/null";
  request.call.flags = O_RDONLY;
  const bool prepared = engine.Prepare(&request);
  setrlimit(RLIMIT_NOFILE, &saved);
  EXPECT_FALSE(prepared);
  ASSERT_NE(engine.real(), nullptr);
  EXPECT_STREQ(engine.name(), "threads");
  EXPECT_FALSE(engine.Supports(FOREACTOR_CALL_OPEN));
  EXPECT_EQ(engine.Submit(), 0);
  EXPECT_EQ(testing::OpenDescriptorCount(), before) << "nothing opened";
}

}  // namespace
}  // namespace foreactor
