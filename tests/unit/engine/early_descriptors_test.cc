// Early opens on io_uring: the descriptor stays in the ring's own table
// until it is installed, takes the lowest free number then, with the
// close-on-exec flag the open asked for, and neither installing nor
// releasing touches the process's record locks (Engine::
// InstallEarlyDescriptor).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/io_uring_engine.h"
#include "test_files.h"

namespace foreactor {
namespace {

class EarlyDescriptorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    engine_ = IoUringEngine::Create(EngineOptions{}, &error);
    ASSERT_NE(engine_, nullptr) << error;
    if (!engine_->Supports(FOREACTOR_CALL_OPEN)) {
      GTEST_SKIP() << "this kernel cannot install a fixed file (Linux 6.8): no early opens";
    }
    path_ = directory_.path() + "/file";
    const int fd = ::open(path_.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "data", 4), 4);
    ::close(fd);
  }

  // Runs an open of the test file through the engine; returns its result.
  int64_t OpenEarly(int flags) {
    Request request;
    request.call.type = FOREACTOR_CALL_OPEN;
    request.call.path = path_.c_str();
    request.call.flags = static_cast<uint64_t>(flags);
    EXPECT_TRUE(engine_->Prepare(&request));
    EXPECT_EQ(engine_->Submit(), 1);
    engine_->Wait(&request);
    return request.result;
  }

  // The number a plain open would take now.
  static int LowestFree() {
    const int probe = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    ::close(probe);
    return probe;
  }

  testing::TempDir directory_;
  std::string path_;
  std::unique_ptr<IoUringEngine> engine_;
};

TEST_F(EarlyDescriptorsTest, AnEarlyOpenTakesNoNumberUntilInstalled) {
  const int lowest = LowestFree();
  const int before = testing::OpenDescriptorCount();
  const int64_t early = OpenEarly(O_RDONLY | O_CLOEXEC);
  ASSERT_GE(early, 0);
  EXPECT_EQ(testing::OpenDescriptorCount(), before) << "nothing new in the program's table";
  EXPECT_EQ(LowestFree(), lowest);

  foreactor_call open{};
  open.type = FOREACTOR_CALL_OPEN;
  open.flags = O_RDONLY | O_CLOEXEC;
  const int64_t installed = engine_->InstallEarlyDescriptor(early, open);
  ASSERT_EQ(installed, lowest) << "the number the program's own open would take";
  char bytes[4] = {};
  EXPECT_EQ(::pread(static_cast<int>(installed), bytes, 4, 0), 4);
  EXPECT_EQ(std::string(bytes, 4), "data");
  EXPECT_EQ(fcntl(static_cast<int>(installed), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  ::close(static_cast<int>(installed));
}

TEST_F(EarlyDescriptorsTest, CloseOnExecIsAsTheOpenAsked) {
  const int64_t early = OpenEarly(O_RDONLY);
  ASSERT_GE(early, 0);
  foreactor_call open{};
  open.type = FOREACTOR_CALL_OPEN;
  open.flags = O_RDONLY;
  const int64_t installed = engine_->InstallEarlyDescriptor(early, open);
  ASSERT_GE(installed, 0);
  EXPECT_EQ(fcntl(static_cast<int>(installed), F_GETFD) & FD_CLOEXEC, 0);
  ::close(static_cast<int>(installed));
}

TEST_F(EarlyDescriptorsTest, AFailedOpenFailsAsThePlainOne) {
  const std::string missing = directory_.path() + "/missing";
  Request request;
  request.call.type = FOREACTOR_CALL_OPEN;
  request.call.path = missing.c_str();
  request.call.flags = O_RDONLY | O_CLOEXEC;
  ASSERT_TRUE(engine_->Prepare(&request));
  ASSERT_EQ(engine_->Submit(), 1);
  engine_->Wait(&request);
  EXPECT_EQ(request.result, -ENOENT);
}

// The program holds a record lock on the file; early opens of it, some
// installed and some released, leave the lock where it is (closing any
// descriptor of the file in the process's table would release it).
TEST_F(EarlyDescriptorsTest, InstallingAndReleasingKeepTheProcesssRecordLocks) {
  const int locker = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(locker, 0);
  ASSERT_TRUE(testing::LockWholeFile(locker));
  std::vector<int64_t> early;
  for (int i = 0; i < 4; ++i) early.push_back(OpenEarly(O_RDONLY | O_CLOEXEC));
  for (int64_t handle : early) ASSERT_GE(handle, 0);
  foreactor_call open{};
  open.type = FOREACTOR_CALL_OPEN;
  open.flags = O_RDONLY | O_CLOEXEC;
  std::vector<int> installed;
  for (int i = 0; i < 2; ++i) {
    const int64_t fd = engine_->InstallEarlyDescriptor(early[i], open);
    ASSERT_GE(fd, 0);
    installed.push_back(static_cast<int>(fd));
  }
  engine_->ReleaseEarlyDescriptor(early[2]);
  engine_->ReleaseEarlyDescriptor(early[3]);
  EXPECT_TRUE(testing::WriteLockHeld(path_)) << "the process's record lock was released";
  for (int fd : installed) ::close(fd);
  ::close(locker);
}

// With no number free in the program's table, installing fails as the
// program's open would (EMFILE) and gives the slot up: the runtime then
// lets the program make the open itself.
TEST_F(EarlyDescriptorsTest, InstallingIntoAFullTableFailsAndReleasesTheSlot) {
  const int64_t early = OpenEarly(O_RDONLY | O_CLOEXEC);
  ASSERT_GE(early, 0);
  struct rlimit saved {};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  struct rlimit tight = saved;
  tight.rlim_cur = static_cast<rlim_t>(LowestFree() + 8);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &tight), 0);
  std::vector<int> fillers;
  for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) fillers.push_back(fd);
  foreactor_call open{};
  open.type = FOREACTOR_CALL_OPEN;
  open.flags = O_RDONLY | O_CLOEXEC;
  const int64_t installed = engine_->InstallEarlyDescriptor(early, open);
  for (int fd : fillers) ::close(fd);
  setrlimit(RLIMIT_NOFILE, &saved);
  EXPECT_EQ(installed, -EMFILE);
  const int before = testing::OpenDescriptorCount();
  engine_->Rest();
  EXPECT_EQ(testing::OpenDescriptorCount(), before - 1) << "no slot held: the ring rested";
}

// Released slots are free again: more opens than the table has slots, one
// after another, all succeed.
TEST_F(EarlyDescriptorsTest, ReleasedSlotsAreTakenAgain) {
  for (int i = 0; i < 2000; ++i) {
    const int64_t early = OpenEarly(O_RDONLY | O_CLOEXEC);
    ASSERT_GE(early, 0) << "open " << i;
    engine_->ReleaseEarlyDescriptor(early);
  }
}

// A ring holding an early descriptor does not rest (its table would go with
// it); once the descriptor is released it does.
TEST_F(EarlyDescriptorsTest, TheRingDoesNotRestWhileItHoldsAnEarlyDescriptor) {
  const int64_t early = OpenEarly(O_RDONLY | O_CLOEXEC);
  ASSERT_GE(early, 0);
  const int before = testing::OpenDescriptorCount();
  engine_->Rest();
  EXPECT_EQ(testing::OpenDescriptorCount(), before) << "the ring stayed";
  foreactor_call open{};
  open.type = FOREACTOR_CALL_OPEN;
  open.flags = O_RDONLY | O_CLOEXEC;
  const int64_t installed = engine_->InstallEarlyDescriptor(early, open);
  ASSERT_GE(installed, 0);
  ::close(static_cast<int>(installed));
  engine_->Rest();
  EXPECT_EQ(testing::OpenDescriptorCount(), before - 1) << "the ring's descriptor closed";
}

}  // namespace
}  // namespace foreactor
