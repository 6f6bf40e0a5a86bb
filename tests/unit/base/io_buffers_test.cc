// Tests of the I/O buffer pool: sizes and alignment, buffers of one size
// side by side, reuse, buffers larger than a huge page, and the huge-page
// advice on the mappings of large buffers.
#include "base/io_buffers.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace foreactor {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

uintptr_t Address(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer); }

TEST(IoBuffersTest, GivesAlignedWritableBuffersOfEverySize) {
  std::vector<std::pair<void*, size_t>> buffers;
  for (size_t size : {size_t{1}, size_t{4096}, size_t{4097}, size_t{65536}, size_t{131072},
                      size_t{200000}, size_t{1} << 20, kHugePage, kHugePage + 1, size_t{5} << 20}) {
    void* buffer = AllocateIoBuffer(size);
    ASSERT_NE(buffer, nullptr) << size;
    EXPECT_EQ(Address(buffer) % kIoBufferAlignment, 0u) << size;
    EXPECT_GE(IoBufferBytes(size), size);
    std::memset(buffer, 0xab, IoBufferBytes(size));
    buffers.emplace_back(buffer, size);
  }
  for (auto [buffer, size] : buffers) FreeIoBuffer(buffer, size);
}

TEST(IoBuffersTest, SizesRoundUpToPowersOfTwoUpToAHugePage) {
  EXPECT_EQ(IoBufferBytes(1), 4096u);
  EXPECT_EQ(IoBufferBytes(4097), 8192u);
  EXPECT_EQ(IoBufferBytes(131072), 131072u);
  EXPECT_EQ(IoBufferBytes(131073), 262144u);
  EXPECT_EQ(IoBufferBytes(kHugePage), kHugePage);
  EXPECT_EQ(IoBufferBytes(kHugePage + 1), 2 * kHugePage);
}

TEST(IoBuffersTest, ZeroBytesAndNullAreNothing) {
  EXPECT_EQ(AllocateIoBuffer(0), nullptr);
  FreeIoBuffer(nullptr, 4096);
}

// A node's slots, allocated one after another, share huge pages: a request
// gathering adjacent slots' buffers is a few runs of contiguous memory.
TEST(IoBuffersTest, BuffersOfOneSizeLieSideBySideInAHugePage) {
  constexpr size_t kBytes = size_t{128} << 10;
  constexpr size_t kCount = kHugePage / kBytes;
  // Start a fresh chunk: take what is left of the current one.
  std::vector<void*> buffers;
  for (;;) {
    void* buffer = AllocateIoBuffer(kBytes);
    ASSERT_NE(buffer, nullptr);
    buffers.push_back(buffer);
    if (Address(buffer) % kHugePage == 0) break;
  }
  const uintptr_t first = Address(buffers.back());
  for (size_t index = 1; index < kCount; ++index) {
    void* buffer = AllocateIoBuffer(kBytes);
    buffers.push_back(buffer);
    EXPECT_EQ(Address(buffer), first + index * kBytes) << index;
  }
  for (void* buffer : buffers) FreeIoBuffer(buffer, kBytes);
}

TEST(IoBuffersTest, FreedBuffersAreReusedAndBuffersInUseDistinct) {
  constexpr size_t kBytes = size_t{64} << 10;
  std::set<void*> in_use;
  for (int index = 0; index < 100; ++index) {
    EXPECT_TRUE(in_use.insert(AllocateIoBuffer(kBytes)).second);
  }
  void* freed = *in_use.begin();
  FreeIoBuffer(freed, kBytes);
  EXPECT_EQ(AllocateIoBuffer(kBytes), freed);
  for (void* buffer : in_use) FreeIoBuffer(buffer, kBytes);
}

TEST(IoBuffersTest, LargerThanAHugePageIsAlignedToOne) {
  const size_t size = (size_t{3} << 20) + 5;
  void* buffer = AllocateIoBuffer(size);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(Address(buffer) % kHugePage, 0u);
  std::memset(buffer, 1, size);
  FreeIoBuffer(buffer, size);
}

// The kernel's verdict on the mapping holding `address`: the THPeligible
// line of /proc/self/smaps (-1 when absent).
int HugePageEligible(uintptr_t address) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t start = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &start, &end) == 2) {  // a mapping's first line
      inside = start <= address && address < end;
      continue;
    }
    int eligible = 0;
    if (inside && std::sscanf(line.c_str(), "THPeligible: %d", &eligible) == 1) return eligible;
  }
  return -1;
}

TEST(IoBuffersTest, LargeBuffersAreAdvisedToUseHugePages) {
  std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string enabled;
  std::getline(setting, enabled);
  if (enabled.find("[never]") != std::string::npos || enabled.empty()) {
    GTEST_SKIP() << "transparent huge pages are off here";
  }
  constexpr size_t kBytes = size_t{128} << 10;
  void* buffer = AllocateIoBuffer(kBytes);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(HugePageEligible(Address(buffer)), 1);
  FreeIoBuffer(buffer, kBytes);
}

}  // namespace
}  // namespace foreactor
