// private_memory.h: memory from mappings of foreactor's own, never from the
// host program's malloc (and the public foreactor_private_allocate() and
// foreactor_private_free() of include/foreactor/foreactor.h).
//
// Records that live while the program runs (a plugin's per-table state),
// allocated from the program's heap between its own allocations, change
// which chunks its allocator keeps ready: glibc's per-thread caches then
// overflow into its fast bins, and the program's later large allocations
// consolidate them, each time.  The program is slower with foreactor idle.
// Memory from here leaves the program's heap as the plain program leaves
// it (DESIGN §2, "free when idle").
//
// Sizes up to kLargestPooledBytes come from a first 64 KiB chunk in the
// library's zero-filled data and then from 1 MiB mappings, carved in
// 16-byte steps and reused through one free list per size; larger ones get
// a mapping each.  A mutex guards the pool (held across fork(): a child
// allocates safely).  For records made rarely, not per call.
#ifndef FOREACTOR_BASE_PRIVATE_MEMORY_H_
#define FOREACTOR_BASE_PRIVATE_MEMORY_H_

#include <cstddef>
#include <new>
#include <utility>

namespace foreactor {

inline constexpr size_t kPrivateAlignment = 16;
inline constexpr size_t kLargestPooledBytes = 4096;

// `size` bytes aligned to kPrivateAlignment, or nullptr when `size` is 0 or
// no mapping can be made.  Thread-safe.
void* PrivateAllocate(size_t size) noexcept;

// Gives back `pointer` (nullptr: nothing), which PrivateAllocate(`size`)
// returned.  Thread-safe.
void PrivateFree(void* pointer, size_t size) noexcept;

// Bytes handed out and not given back (rounded up to the pool's steps and
// to pages): for tests and statistics.
size_t PrivateBytesInUse() noexcept;

// `new T(arguments...)` in private memory, for the runtime's own records
// that live while the program runs; null when no memory can be had or T's
// constructor throws std::bad_alloc.  Give it back with DeletePrivate().
template <typename T, typename... Arguments>
[[nodiscard]] T* NewPrivateOrNull(Arguments&&... arguments) noexcept {
  static_assert(alignof(T) <= kPrivateAlignment);
  void* memory = PrivateAllocate(sizeof(T));
  if (memory == nullptr) return nullptr;
  try {
    return new (memory) T(std::forward<Arguments>(arguments)...);
  } catch (const std::bad_alloc&) {
    PrivateFree(memory, sizeof(T));
    return nullptr;
  }
}

// Destroys `object` (null: nothing), which NewPrivateOrNull<T>() made, and
// gives its memory back.
template <typename T>
void DeletePrivate(T* object) noexcept {
  if (object == nullptr) return;
  object->~T();
  PrivateFree(object, sizeof(T));
}

}  // namespace foreactor

#endif  // FOREACTOR_BASE_PRIVATE_MEMORY_H_
