// private_memory.cc: the private memory pool (private_memory.h).
#include "base/private_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>

#include "base/fork.h"
#include "foreactor/foreactor.h"

namespace foreactor {
namespace {

constexpr size_t kSizeClasses = kLargestPooledBytes / kPrivateAlignment;
constexpr size_t kChunkBytes = size_t{1} << 20;
constexpr size_t kFirstChunkBytes = size_t{64} << 10;

// The first chunk is the library's own zero-filled data: a process's first
// records (a plugin's first scope) take no mapping of their own.  A fresh
// mapping there cost an mmap(2) and the page-table pages of a new region,
// about 3 us of a 150 us hot B+-tree scan's first scope on the development
// VM; pages of it never touched take no memory.
alignas(kPrivateAlignment) char first_chunk[kFirstChunkBytes];

struct FreeBlock {
  FreeBlock* next;
};

// Constant-initialised: the pool itself takes nothing from the heap.
struct Pool {
  std::mutex mutex;
  FreeBlock* free_lists[kSizeClasses] = {};  // [i]: blocks of (i + 1) * 16 bytes
  char* chunk_next = first_chunk;            // the unused rest of the newest chunk
  size_t chunk_left = kFirstChunkBytes;
  std::atomic<size_t> bytes_in_use{0};
};
constinit Pool pool;

size_t PageBytes() {
  static const size_t bytes = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return bytes;
}

size_t MappedBytes(size_t size) { return (size + PageBytes() - 1) / PageBytes() * PageBytes(); }

// What a block of `size` bytes takes: its pool step, or its mapping's pages.
size_t BlockBytes(size_t size) {
  const size_t rounded = (size + kPrivateAlignment - 1) / kPrivateAlignment * kPrivateAlignment;
  return rounded <= kLargestPooledBytes ? rounded : MappedBytes(size);
}

void* Map(size_t bytes) {
  void* mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return mapping == MAP_FAILED ? nullptr : mapping;
}

// A fork while another thread holds the lock would leave the child's pool
// locked for ever: the lock is taken around fork() instead.  The handlers
// are added when the library loads, before any thread can allocate: added
// at the first allocation, a fork racing it could copy them half added
// (private_memory_test's fork test hung its child in 27 of 150 runs under load).
// Without them (pthread_atfork out of memory) the pool still works; only a
// fork racing an allocation could leave the child's pool locked.
__attribute__((constructor)) void AddForkHandlersAtLoad() {
  (void)AddForkHandlers(HoldAcrossFork<pool.mutex>());
}

void* AllocatePooled(size_t rounded) {
  std::lock_guard lock(pool.mutex);
  FreeBlock*& free_list = pool.free_lists[rounded / kPrivateAlignment - 1];
  if (free_list != nullptr) {
    FreeBlock* block = free_list;
    free_list = block->next;
    return block;
  }
  if (pool.chunk_left < rounded) {
    // The old chunk's rest (less than kLargestPooledBytes) is left unused.
    void* chunk = Map(kChunkBytes);
    if (chunk == nullptr) return nullptr;
    pool.chunk_next = static_cast<char*>(chunk);
    pool.chunk_left = kChunkBytes;
  }
  void* block = pool.chunk_next;
  pool.chunk_next += rounded;
  pool.chunk_left -= rounded;
  return block;
}

}  // namespace

void* PrivateAllocate(size_t size) noexcept {
  if (size == 0 || size > SIZE_MAX / 2) return nullptr;
  const size_t bytes = BlockBytes(size);
  void* memory = bytes <= kLargestPooledBytes ? AllocatePooled(bytes) : Map(bytes);
  if (memory != nullptr) pool.bytes_in_use.fetch_add(bytes, std::memory_order_relaxed);
  return memory;
}

void PrivateFree(void* pointer, size_t size) noexcept {
  if (pointer == nullptr || size == 0) return;
  const size_t bytes = BlockBytes(size);
  if (bytes > kLargestPooledBytes) {
    munmap(pointer, bytes);
  } else {
    std::lock_guard lock(pool.mutex);
    FreeBlock*& free_list = pool.free_lists[bytes / kPrivateAlignment - 1];
    free_list = new (pointer) FreeBlock{free_list};
  }
  pool.bytes_in_use.fetch_sub(bytes, std::memory_order_relaxed);
}

size_t PrivateBytesInUse() noexcept { return pool.bytes_in_use.load(std::memory_order_relaxed); }

}  // namespace foreactor

extern "C" void* foreactor_private_allocate(size_t size) {
  return foreactor::PrivateAllocate(size);
}

extern "C" void foreactor_private_free(void* pointer, size_t size) {
  foreactor::PrivateFree(pointer, size);
}
