// Tests of DescriptorParking: where early descriptors wait, what a program
// is given for one, and the order of opens.
#include "runtime/descriptor_parking.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>

#include <gtest/gtest.h>

#include "engine/high_descriptors.h"

namespace foreactor {
namespace {

foreactor_call Open(const char* path, int flags) {
  foreactor_call call{};
  call.type = FOREACTOR_CALL_OPEN;
  call.path = path;
  call.flags = flags;
  return call;
}

bool IsOpenDescriptor(int fd) { return fcntl(fd, F_GETFD) >= 0; }

// Lowers the soft descriptor limit for the length of a test.
class SoftDescriptorLimit {
 public:
  explicit SoftDescriptorLimit(rlim_t soft) {
    EXPECT_EQ(getrlimit(RLIMIT_NOFILE, &saved_), 0);
    struct rlimit lowered = saved_;
    lowered.rlim_cur = soft;
    EXPECT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);
  }
  ~SoftDescriptorLimit() { setrlimit(RLIMIT_NOFILE, &saved_); }

 private:
  struct rlimit saved_ {};
};

TEST(DescriptorParkingTest, TheFloorLeavesTheProgramMostOfTheRange) {
  EXPECT_EQ(DescriptorParking::FloorBelow(65536), 65536 - 1024);
  EXPECT_EQ(DescriptorParking::FloorBelow(2048), 1024);
  EXPECT_EQ(DescriptorParking::FloorBelow(1024), 512);
  EXPECT_EQ(DescriptorParking::FloorBelow(256), 128);
  EXPECT_EQ(DescriptorParking::FloorBelow(255), -1) << "no room: opens are not issued early";
  EXPECT_EQ(DescriptorParking::FloorBelow(-1), -1) << "the limit could not be read";
}

TEST(DescriptorParkingTest, ParkingMovesAnEarlyDescriptorToTheFloorOrAbove) {
  DescriptorParking parking;
  parking.StartScope();
  ASSERT_TRUE(parking.HasRoom());
  const foreactor_call open = Open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int early = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(early, 0);
  const int64_t parked = parking.Park(early, open);
  EXPECT_GE(parked, DescriptorParking::FloorBelow(HighDescriptorCeiling()));
  EXPECT_FALSE(IsOpenDescriptor(early)) << "the low number is free again";
  ASSERT_TRUE(IsOpenDescriptor(static_cast<int>(parked)));
  EXPECT_EQ(fcntl(static_cast<int>(parked), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC)
      << "close-on-exec as the open asked";
  EXPECT_EQ(parking.Park(parked, open), parked) << "a parked descriptor stays where it is";
  ::close(static_cast<int>(parked));
}

TEST(DescriptorParkingTest, AFailedOpenIsLeftAsItIs) {
  DescriptorParking parking;
  parking.StartScope();
  EXPECT_EQ(parking.Park(-ENOENT, Open("/nonexistent", O_RDONLY)), -ENOENT);
}

TEST(DescriptorParkingTest, ALimitBelowTheRangeLeavesNoRoom) {
  DescriptorParking parking;
  SoftDescriptorLimit limit(128);
  parking.StartScope();
  EXPECT_FALSE(parking.HasRoom()) << "opens are not issued early";
}

TEST(DescriptorParkingTest, WhenNoNumberIsFreeAboveTheFloorAPureOpenIsGivenUp) {
  DescriptorParking parking;
  parking.StartScope();
  ASSERT_TRUE(parking.HasRoom());
  // The limit drops below the floor of this scope: no number up there.
  SoftDescriptorLimit limit(128);
  const int pure = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(pure, 0);
  EXPECT_EQ(parking.Park(pure, Open("/dev/null", O_RDONLY)), -ECANCELED);
  EXPECT_FALSE(IsOpenDescriptor(pure)) << "the program makes the open itself";
  const int creating = ::open("/dev/null", O_WRONLY | O_CREAT, 0600);
  ASSERT_GE(creating, 0);
  EXPECT_EQ(parking.Park(creating, Open("/dev/null", O_WRONLY | O_CREAT)), creating)
      << "an open with side effects keeps its number";
  EXPECT_TRUE(IsOpenDescriptor(creating));
  ::close(creating);
}

TEST(DescriptorParkingTest, TheFloorIsLookedUpOncePerScope) {
  DescriptorParking parking;
  parking.StartScope();
  ASSERT_TRUE(parking.HasRoom());
  {
    SoftDescriptorLimit limit(128);
    EXPECT_TRUE(parking.HasRoom()) << "still the floor of this scope";
    parking.StartScope();
    EXPECT_FALSE(parking.HasRoom());
  }
  parking.StartScope();
  EXPECT_TRUE(parking.HasRoom());
}

TEST(DescriptorParkingTest, DeliveryGivesTheLowestFreeNumber) {
  DescriptorParking parking;
  parking.StartScope();
  const foreactor_call open = Open("/dev/null", O_RDONLY | O_CLOEXEC);
  // The number a plain open would give now.
  const int plain = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(plain, 0);
  ::close(plain);
  const int64_t parked = parking.Park(::open("/dev/null", O_RDONLY | O_CLOEXEC), open);
  ASSERT_GT(parked, plain);
  const int64_t delivered = DescriptorParking::Deliver(static_cast<int>(parked), open);
  EXPECT_EQ(delivered, plain);
  EXPECT_FALSE(IsOpenDescriptor(static_cast<int>(parked)));
  EXPECT_EQ(fcntl(plain, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  // Already the lowest free number: kept, and the probe closed again.
  EXPECT_EQ(DescriptorParking::Deliver(plain, open), plain);
  const int next = ::open("/dev/null", O_RDONLY);
  EXPECT_EQ(next, plain + 1) << "the number tried above is free again";
  ::close(next);
  ::close(plain);
}

TEST(DescriptorParkingTest, AnOpenWaitsFromBeingPassedUnissuedUntilReached) {
  DescriptorParking parking;
  parking.StartScope();
  EXPECT_FALSE(parking.OpenWaits());
  parking.OpenPassedUnissued();
  parking.OpenPassedUnissued();
  EXPECT_TRUE(parking.OpenWaits());
  parking.UnissuedOpenReached();
  EXPECT_TRUE(parking.OpenWaits());
  parking.UnissuedOpenReached();
  EXPECT_FALSE(parking.OpenWaits());
  parking.UnissuedOpenReached();
  EXPECT_FALSE(parking.OpenWaits()) << "never below none";
  parking.OpenPassedUnissued();
  parking.ForgetUnissuedOpens();
  EXPECT_FALSE(parking.OpenWaits()) << "drained";
  parking.OpenPassedUnissued();
  parking.StartScope();
  EXPECT_FALSE(parking.OpenWaits()) << "a new scope";
}

}  // namespace
}  // namespace foreactor
