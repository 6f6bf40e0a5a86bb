// visit_slot.h: the storage of one in-flight visit of a syscall node.
//
// Each syscall node of a running graph owns a ring of slots (SlotRing);
// visit number k of the node lives in slot k % the ring's length.  A slot's
// memory (data buffer, path copy) is kept across visits and scopes, so the
// hot path allocates only when a visit needs a larger buffer than any before
// it.
#ifndef FOREACTOR_RUNTIME_VISIT_SLOT_H_
#define FOREACTOR_RUNTIME_VISIT_SLOT_H_

#include <limits.h>

#include <cstdint>
#include <memory>
#include <new>

#include "base/io_buffers.h"
#include "engine/request.h"

namespace foreactor {

// A page-aligned byte buffer that only grows, from the I/O buffer pool
// (base/io_buffers.h): the device may read into it directly.
class GrowingBuffer {
 public:
  GrowingBuffer() = default;
  GrowingBuffer(const GrowingBuffer&) = delete;
  GrowingBuffer& operator=(const GrowingBuffer&) = delete;
  ~GrowingBuffer() { FreeIoBuffer(data_, capacity_); }

  // Makes room for `size` bytes, its pages faulted in; returns false when
  // out of memory (the old contents are then kept).  Contents are not
  // preserved on growth.
  bool Reserve(size_t size) {
    if (size <= capacity_) return true;
    const size_t bytes = IoBufferBytes(size);
    void* fresh = AllocateIoBuffer(bytes);
    if (fresh == nullptr) return false;
    // Fault every page in now: reads into the buffer are timed
    // (PageCacheMode::FromMemory), and first touches inside a copy from the
    // page cache (32 of them for 128 KiB) can make it as slow as a read
    // from the device.
    volatile char* pages = static_cast<char*>(fresh);
    for (size_t page = 0; page < bytes; page += kIoBufferAlignment) pages[page] = 0;
    FreeIoBuffer(data_, capacity_);
    data_ = static_cast<char*>(fresh);
    capacity_ = bytes;
    return true;
  }
  char* data() const { return data_; }

 private:
  char* data_ = nullptr;
  size_t capacity_ = 0;
};

enum class SlotState : unsigned char {
  kEmpty,   // no visit here
  kPassed,  // the peek head passed this visit with known arguments, not issued
  kIssued,  // handed to the engine; `request` is in flight or completed
  kCached,  // read at once from the page cache; `request` holds the completed result
  kHeld,    // a write fed by a linked read, held by the write pipeline (write_pipeline.h)
};

struct VisitSlot {
  SlotState state = SlotState::kEmpty;
  foreactor_call predicted{};      // the plugin's arguments; `path` points into path_storage
  Request request;                 // what the engine runs
  int64_t directory_position = 0;  // getdents64: the directory offset before the early call
  bool has_access = false;         // this visit holds an entry in the pending-access queue
  bool unconfirmed_guess = false;  // counted in the scope's guesses ahead (see GraphRunner)
  // kCached by a probe that returned the bytes but waited for the device
  // (PageCacheMode::FromMemory): the data was cold, though it is here now.
  bool probe_waited = false;
  // Issued on a descriptor of the runner's own opened O_DIRECT
  // (direct_reads.h): a failure says nothing of the program's own read.
  bool direct_read = false;
  // The group of coalesced reads this visit's read rides on
  // (coalesced_reads.h), or -1: its request is then with no engine.
  int read_group = -1;
  uint64_t bytes_ahead = 0;  // counted in the scope's bytes ahead while passed by the peek head
  GrowingBuffer data;        // read destination / write source
  std::unique_ptr<char[]> path_storage;  // PATH_MAX bytes, for path-taking nodes
};

// The slots of one syscall node: up to `capacity` of them (the largest
// depth the node's runner may choose, plus one), of which the first length()
// are used.  Room is taken kChunkSlots slots at a time as the ring grows,
// and slots never move: a workload whose depth stays low never takes room
// for the others (with the automatic depth, capacity 257: 125 KiB a node
// and thread, most of it never used), and a slot's memory is touched only
// once the ring grows to it (a short scan of cached data otherwise faulted
// in every slot, and each slot's buffer, as its visits went round the ring).
//
// GrowTo() changes which slot a visit lives in, so the owner calls it only
// when no visit of the node lives in a slot (nothing between the frontier
// and the peek head).  The ring never shrinks.
class SlotRing {
 public:
  static constexpr unsigned kChunkSlots = 16;

  SlotRing() = default;
  SlotRing(const SlotRing&) = delete;
  SlotRing& operator=(const SlotRing&) = delete;
  SlotRing(SlotRing&& other) noexcept
      : chunks_(std::move(other.chunks_)), capacity_(other.capacity_), length_(other.length_) {
    other.capacity_ = other.length_ = 0;
  }
  ~SlotRing() {
    for (unsigned index = 0; index < length_; ++index) Slot(index).~VisitSlot();
  }

  // Sets the most slots the ring may grow to, `capacity` (>= 1), and makes
  // the first.  Called once; throws std::bad_alloc when out of memory.
  void Allocate(unsigned capacity) {
    chunks_.reset(new Chunk[(capacity + kChunkSlots - 1) / kChunkSlots]);
    capacity_ = capacity;
    if (GrowTo(1) == 0) throw std::bad_alloc();
  }

  // Uses the first min(`length`, capacity()) slots from now on, making those
  // not made before.  Returns the length now in use: less than asked when
  // memory ran out (the ring is then as it was, or longer).
  unsigned GrowTo(unsigned length) {
    if (length > capacity_) length = capacity_;
    for (; length_ < length; ++length_) {
      Chunk& chunk = chunks_[length_ / kChunkSlots];
      if (chunk == nullptr) {
        // Room only: a slot's memory is touched when the slot is made.
        // (The plain operator new: its alignment is enough, and a
        // process's first scope does not resolve the aligned one's symbols.)
        static_assert(alignof(VisitSlot) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
        chunk.reset(
            static_cast<VisitSlot*>(::operator new(sizeof(VisitSlot) * kChunkSlots, std::nothrow)));
        if (chunk == nullptr) break;
      }
      new (&Slot(length_)) VisitSlot();
    }
    return length_;
  }

  // The slot of the node's visit number `visit`.
  VisitSlot& At(uint64_t visit) { return Slot(static_cast<unsigned>(visit % length_)); }

  unsigned length() const { return length_; }

 private:
  struct FreeRoom {
    void operator()(VisitSlot* room) const { ::operator delete(room); }
  };
  using Chunk = std::unique_ptr<VisitSlot, FreeRoom>;  // room for kChunkSlots slots

  VisitSlot& Slot(unsigned index) {
    return chunks_[index / kChunkSlots].get()[index % kChunkSlots];
  }

  // Room for capacity_ slots in chunks, made as the ring grows; the first
  // length_ slots constructed.
  std::unique_ptr<Chunk[]> chunks_;
  unsigned capacity_ = 0;
  unsigned length_ = 0;
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_VISIT_SLOT_H_
