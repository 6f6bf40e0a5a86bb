// Tests of the private memory pool: sizes, alignment, reuse, large blocks,
// threads, and that the program's malloc heap never sees it.
#include "base/private_memory.h"

#include <dlfcn.h>
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <new>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "foreactor/foreactor.hpp"

namespace foreactor {
namespace {

TEST(PrivateMemoryTest, GivesAlignedWritableBlocksOfEverySize) {
  std::vector<std::pair<void*, size_t>> blocks;
  for (size_t size : {size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{100}, size_t{4096},
                      size_t{4097}, size_t{1} << 20, (size_t{1} << 20) + 3}) {
    void* block = PrivateAllocate(size);
    ASSERT_NE(block, nullptr) << size;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % kPrivateAlignment, 0u) << size;
    std::memset(block, 0xab, size);
    blocks.emplace_back(block, size);
  }
  for (auto [block, size] : blocks) PrivateFree(block, size);
}

// A process's first small blocks need no mapping of their own: they lie in
// the library's zero-filled data, which dladdr() finds inside a loaded
// object, where it finds no object for a fresh mmap(2).  (Each test runs in
// a process of its own: nothing was allocated here before.)
TEST(PrivateMemoryTest, FirstBlocksComeFromTheLibrarysOwnData) {
  void* block = PrivateAllocate(100);
  ASSERT_NE(block, nullptr);
  Dl_info info{};
  EXPECT_NE(dladdr(block, &info), 0) << "the first block is in a mapping of its own";
  PrivateFree(block, 100);
}

TEST(PrivateMemoryTest, ZeroBytesAndNullAreNothing) {
  EXPECT_EQ(PrivateAllocate(0), nullptr);
  PrivateFree(nullptr, 16);
  EXPECT_EQ(foreactor_private_allocate(0), nullptr);
  foreactor_private_free(nullptr, 16);
}

TEST(PrivateMemoryTest, BlocksInUseAreDistinctAndFreedOnesAreReused) {
  const size_t before = PrivateBytesInUse();
  std::set<void*> in_use;
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(in_use.insert(PrivateAllocate(48)).second);
  EXPECT_EQ(PrivateBytesInUse(), before + 1000 * 48);
  void* freed = *in_use.begin();
  PrivateFree(freed, 48);
  EXPECT_EQ(PrivateAllocate(40), freed);  // the same 48-byte step
  for (void* block : in_use) PrivateFree(block, 48);
  EXPECT_EQ(PrivateBytesInUse(), before);
}

TEST(PrivateMemoryTest, TheProgramsHeapDoesNotChange) {
  const size_t heap_before = mallinfo2().uordblks;
  void* blocks[300];
  for (int i = 0; i < 300; ++i) blocks[i] = PrivateAllocate(static_cast<size_t>(8 + i * 40));
  const size_t heap_during = mallinfo2().uordblks;
  for (int i = 0; i < 300; ++i) PrivateFree(blocks[i], static_cast<size_t>(8 + i * 40));
  EXPECT_EQ(heap_during, heap_before);
  EXPECT_EQ(mallinfo2().uordblks, heap_before);
}

// A record whose constructor may fail as a std::bad_alloc would.
struct Record {
  explicit Record(bool fail, int* alive) : alive(alive) {
    if (fail) throw std::bad_alloc();
    ++*alive;
  }
  ~Record() { --*alive; }
  int* alive;
  uint64_t words[5] = {};
};

TEST(PrivateMemoryTest, RuntimeRecordsAreMadeAndDestroyedThere) {
  const size_t heap_before = mallinfo2().uordblks;
  const size_t private_before = PrivateBytesInUse();
  int alive = 0;
  Record* record = NewPrivateOrNull<Record>(false, &alive);
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(alive, 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(record) % kPrivateAlignment, 0u);
  EXPECT_GE(PrivateBytesInUse(), private_before + sizeof(Record));
  EXPECT_EQ(mallinfo2().uordblks, heap_before);
  DeletePrivate(record);
  EXPECT_EQ(alive, 0);
  EXPECT_EQ(PrivateBytesInUse(), private_before);
  // A constructor that runs out of memory: null, and the block given back.
  EXPECT_EQ(NewPrivateOrNull<Record>(true, &alive), nullptr);
  EXPECT_EQ(alive, 0);
  EXPECT_EQ(PrivateBytesInUse(), private_before);
  DeletePrivate<Record>(nullptr);
}

TEST(PrivateMemoryTest, ThreadsAllocateAndFreeAtOnce) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      // Block i of this thread: 16 to 128 bytes.
      auto size_of = [t](size_t i) { return 16 * (1 + (i + static_cast<size_t>(t)) % 8); };
      std::vector<void*> blocks;
      for (size_t i = 0; i < 20000; ++i) {
        blocks.push_back(PrivateAllocate(size_of(i)));
        static_cast<char*>(blocks.back())[0] = static_cast<char>(t);
        if (i % 3 == 0) {
          PrivateFree(blocks.back(), size_of(i));
          blocks.back() = nullptr;
        }
      }
      for (size_t i = 0; i < blocks.size(); ++i) {
        if (blocks[i] == nullptr) continue;
        EXPECT_EQ(static_cast<char*>(blocks[i])[0], static_cast<char>(t));
        PrivateFree(blocks[i], size_of(i));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

// A fork while another thread allocates must not leave the child's pool
// locked: the child allocates at once (a hung child is killed by its alarm).
TEST(PrivateMemoryTest, AChildForkedWhileAnotherThreadAllocatesCanAllocate) {
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    while (!stop.load()) PrivateFree(PrivateAllocate(64), 64);
  });
  for (int i = 0; i < 50; ++i) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      alarm(5);
      void* block = PrivateAllocate(64);
      PrivateFree(block, 64);
      _exit(block != nullptr ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << "child " << i << " ended by signal " << WTERMSIG(status);
    ASSERT_EQ(WEXITSTATUS(status), 0);
  }
  stop = true;
  busy.join();
}

TEST(PrivateMemoryTest, ContainersAndObjectsOfThePluginHelpersLiveThere) {
  const size_t before = PrivateBytesInUse();
  const size_t heap_before = mallinfo2().uordblks;
  {
    PrivateUnorderedMap<uint64_t, PrivateVector<int>> map;
    for (uint64_t key = 0; key < 100; ++key) map[key].assign(10, static_cast<int>(key));
    PrivatePtr<std::pair<int, int>> pair = MakePrivate<std::pair<int, int>>(3, 4);
    EXPECT_EQ(pair->second, 4);
    EXPECT_EQ(map[42][9], 42);
    EXPECT_GT(PrivateBytesInUse(), before);
    EXPECT_EQ(mallinfo2().uordblks, heap_before);
  }
  EXPECT_EQ(PrivateBytesInUse(), before);
}

}  // namespace
}  // namespace foreactor
