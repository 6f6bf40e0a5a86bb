// Tests of foreactor's high descriptor range: its ceiling follows the
// descriptor limit up to the cap, and reserving it grows the descriptor
// table without leaving a descriptor behind.
#include "engine/high_descriptors.h"

#include <sys/resource.h>

#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "test_files.h"

namespace foreactor {
namespace {

using testing::OpenDescriptorCount;

// The descriptor table's size, from /proc/self/status ("FDSize:").
long DescriptorTableSize() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("FDSize:", 0) == 0) return std::stol(line.substr(7));
  }
  return -1;
}

class HighDescriptorsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved_), 0); }
  void TearDown() override { setrlimit(RLIMIT_NOFILE, &saved_); }
  struct rlimit saved_;
};

TEST_F(HighDescriptorsTest, CeilingIsTheLimitUpToTheCap) {
  struct rlimit limit = saved_;
  limit.rlim_cur = 1000;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
  EXPECT_EQ(HighDescriptorCeiling(), 1000);
  if (saved_.rlim_max == RLIM_INFINITY ||
      saved_.rlim_max > static_cast<rlim_t>(kHighDescriptorCap)) {
    limit.rlim_cur = saved_.rlim_max;
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
    EXPECT_EQ(HighDescriptorCeiling(), kHighDescriptorCap);
  }
}

TEST_F(HighDescriptorsTest, TheFloorLeavesTheProgramMostOfTheRange) {
  EXPECT_EQ(HighDescriptorFloor(65536), 65536 - 1024);
  EXPECT_EQ(HighDescriptorFloor(2048), 1024);
  EXPECT_EQ(HighDescriptorFloor(1024), 512);
  EXPECT_EQ(HighDescriptorFloor(256), 128);
  EXPECT_EQ(HighDescriptorFloor(255), -1) << "no room";
  EXPECT_EQ(HighDescriptorFloor(-1), -1) << "the limit could not be read";
}

TEST_F(HighDescriptorsTest, ReservingGrowsTheTableAndLeavesNothingOpen) {
  struct rlimit limit = saved_;
  limit.rlim_cur = saved_.rlim_max < 4096 ? saved_.rlim_max : 4096;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
  const long ceiling = HighDescriptorCeiling();
  const int open_before = OpenDescriptorCount();
  ReserveHighDescriptors();
  EXPECT_GE(DescriptorTableSize(), ceiling);
  EXPECT_EQ(OpenDescriptorCount(), open_before);
}

}  // namespace
}  // namespace foreactor
