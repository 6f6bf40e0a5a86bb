// io_buffers.cc: the I/O buffer pool (io_buffers.h).
#include "base/io_buffers.h"

#include <sys/mman.h>

#include <bit>
#include <cstdint>
#include <mutex>
#include <new>

#include "base/fork.h"

namespace foreactor {
namespace {

constexpr size_t kHugePageBytes = size_t{2} << 20;
// Size classes: 4 KiB << i for i in [0, kClasses).
constexpr int kClasses =
    std::countr_zero(kLargestPooledIoBufferBytes) - std::countr_zero(kIoBufferAlignment) + 1;

struct FreeBuffer {
  FreeBuffer* next;
};

// Constant-initialised: the pool itself takes nothing from the heap.
struct Pool {
  std::mutex mutex;
  FreeBuffer* free_lists[kClasses] = {};
  char* chunk_next[kClasses] = {};  // the unused rest of each class's newest chunk
  size_t chunk_left[kClasses] = {};
};
constinit Pool pool;

__attribute__((constructor)) void AddIoBufferForkHandlersAtLoad() {
  (void)AddForkHandlers(HoldAcrossFork<pool.mutex>());
}

// `bytes` (a multiple of kHugePageBytes) of fresh memory aligned to
// kHugePageBytes, advised MADV_HUGEPAGE when `huge`; nullptr when no
// mapping can be made.  The advice may fail (no transparent huge pages):
// the memory is then ordinary pages.
char* MapAligned(size_t bytes, bool huge) {
  // Over-map by one huge page and trim both ends to the alignment.
  const size_t mapped = bytes + kHugePageBytes;
  void* mapping = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(mapping);
  const uintptr_t aligned = (start + kHugePageBytes - 1) & ~(uintptr_t{kHugePageBytes} - 1);
  if (aligned > start) munmap(mapping, aligned - start);
  const uintptr_t end = start + mapped;
  if (end > aligned + bytes)
    munmap(reinterpret_cast<void*>(aligned + bytes), end - aligned - bytes);
  char* memory = reinterpret_cast<char*>(aligned);
  if (huge) (void)madvise(memory, bytes, MADV_HUGEPAGE);
  return memory;
}

int ClassOf(size_t bytes) { return std::countr_zero(bytes) - std::countr_zero(kIoBufferAlignment); }

}  // namespace

size_t IoBufferBytes(size_t size) noexcept {
  if (size <= kIoBufferAlignment) return kIoBufferAlignment;
  if (size > kLargestPooledIoBufferBytes) {
    return (size + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  }
  return std::bit_ceil(size);
}

void* AllocateIoBuffer(size_t size) noexcept {
  if (size == 0 || size > SIZE_MAX / 4) return nullptr;
  const size_t bytes = IoBufferBytes(size);
  if (bytes > kLargestPooledIoBufferBytes) return MapAligned(bytes, /*huge=*/true);
  const int size_class = ClassOf(bytes);
  std::lock_guard lock(pool.mutex);
  FreeBuffer*& free_list = pool.free_lists[size_class];
  if (free_list != nullptr) {
    FreeBuffer* buffer = free_list;
    free_list = buffer->next;
    return buffer;
  }
  if (pool.chunk_left[size_class] < bytes) {
    char* chunk = MapAligned(kHugePageBytes, bytes >= kSmallestHugeIoBufferBytes);
    if (chunk == nullptr) return nullptr;
    pool.chunk_next[size_class] = chunk;
    pool.chunk_left[size_class] = kHugePageBytes;
  }
  char* buffer = pool.chunk_next[size_class];
  pool.chunk_next[size_class] += bytes;
  pool.chunk_left[size_class] -= bytes;
  return buffer;
}

void FreeIoBuffer(void* buffer, size_t size) noexcept {
  if (buffer == nullptr || size == 0) return;
  const size_t bytes = IoBufferBytes(size);
  if (bytes > kLargestPooledIoBufferBytes) {
    munmap(buffer, bytes);
    return;
  }
  std::lock_guard lock(pool.mutex);
  FreeBuffer*& free_list = pool.free_lists[ClassOf(bytes)];
  free_list = new (buffer) FreeBuffer{free_list};
}

}  // namespace foreactor
