// Tests of the out-of-memory idiom: a failed allocation becomes false or
// null, never an exception, whether operator new or a constructor fails.
#include "base/out_of_memory.h"

#include <memory>
#include <new>
#include <vector>

#include <gtest/gtest.h>

namespace foreactor {
namespace {

struct FailsToConstruct {
  FailsToConstruct() { throw std::bad_alloc(); }
};

struct Counted {
  explicit Counted(int value) : value(value) {}
  int value;
};

TEST(OutOfMemoryTest, WorkThatFinishesSucceeds) {
  std::vector<int> numbers;
  EXPECT_TRUE(AllocationSucceeds([&] { numbers.assign(100, 7); }));
  EXPECT_EQ(numbers.size(), 100u);
}

// (Failures are thrown by hand: an impossible allocation would stop a
// sanitizer build instead of throwing.)
TEST(OutOfMemoryTest, WorkThatRunsOutOfMemoryReportsFalseAndKeepsWhatItDid) {
  std::vector<int> numbers;
  EXPECT_FALSE(AllocationSucceeds([&] {
    numbers.push_back(1);
    throw std::bad_alloc();
  }));
  EXPECT_EQ(numbers.size(), 1u);
}

TEST(OutOfMemoryTest, NewOrNullMakesTheObjectWithItsArguments) {
  std::unique_ptr<Counted> made(NewOrNull<Counted>(42));
  ASSERT_NE(made, nullptr);
  EXPECT_EQ(made->value, 42);
}

TEST(OutOfMemoryTest, NewOrNullGivesNullWhenTheConstructorRunsOutOfMemory) {
  EXPECT_EQ(NewOrNull<FailsToConstruct>(), nullptr);
}

TEST(OutOfMemoryTest, NewArrayOrNullGivesAnArrayOrNull) {
  std::unique_ptr<char[]> small(NewArrayOrNull<char>(16));
  EXPECT_NE(small, nullptr);
  EXPECT_EQ(NewArrayOrNull<FailsToConstruct>(2), nullptr);
}

}  // namespace
}  // namespace foreactor
