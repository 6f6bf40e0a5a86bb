// out_of_memory.h: the one way foreactor's code meets running out of memory.
//
// An allocation failure never reaches the host program (DESIGN §2 rule 4,
// "fail open"): code that allocates through operator new, directly or in a
// standard container or string, runs through one of the functions below,
// and on failure its caller takes its documented way without the memory
// (this scope or graph runs without speculation, a message or a count is
// lost).  Nothing else in src/ catches std::bad_alloc or writes
// new (std::nothrow), with one exception: the shells of the C API
// (src/graph/graph_c_api.cc) stop every exception at the boundary with
// catch (...), as the C contract demands.  (Buffers from malloc-style calls
// report failure by null, as they always do.)
#ifndef FOREACTOR_BASE_OUT_OF_MEMORY_H_
#define FOREACTOR_BASE_OUT_OF_MEMORY_H_

#include <cstddef>
#include <new>
#include <utility>

namespace foreactor {

// Runs `work()`; returns true when it finished, false when it ran out of
// memory (std::bad_alloc), leaving whatever `work` had done by then.
template <typename Work>
[[nodiscard]] bool AllocationSucceeds(Work&& work) noexcept {
  try {
    std::forward<Work>(work)();
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

// `new T(arguments...)`, or null when out of memory, in operator new or in
// T's constructor.  The caller owns the object.
template <typename T, typename... Arguments>
[[nodiscard]] T* NewOrNull(Arguments&&... arguments) noexcept {
  T* made = nullptr;
  static_cast<void>(
      AllocationSucceeds([&] { made = new T(std::forward<Arguments>(arguments)...); }));
  return made;
}

// `new T[count]` (default-initialised), or null when out of memory.
template <typename T>
[[nodiscard]] T* NewArrayOrNull(std::size_t count) noexcept {
  T* made = nullptr;
  static_cast<void>(AllocationSucceeds([&] { made = new T[count]; }));
  return made;
}

}  // namespace foreactor

#endif  // FOREACTOR_BASE_OUT_OF_MEMORY_H_
