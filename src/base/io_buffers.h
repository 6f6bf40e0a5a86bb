// io_buffers.h: page-aligned buffers that the device reads into, from
// mappings of foreactor's own backed by huge pages where the kernel gives
// them.
//
// A read past the page cache (O_DIRECT) reaches the device as one request
// per run of physically contiguous memory in its buffer, up to the queue's
// segment limit (a virtio disk: 254 segments).  A 1 MiB read into buffers
// of scattered 4 KiB pages is 256 segments, which the block layer splits
// into two or more requests, and how often depends on how fragmented the
// program's memory happens to be.  Measured on the development VM (1 GiB
// file, cold, 1 MiB reads at depth 4 through io_uring): 304 device
// requests and 608-745 ms from buffers in huge pages, 817-1,456 requests
// and 858-1,204 ms from the same reads into 4 KiB pages.
//
// Buffers of at least kSmallestHugeIoBufferBytes come from 2 MiB-aligned
// mappings advised MADV_HUGEPAGE, carved in power-of-two sizes (one free
// list per size), so buffers allocated one after another (a node's slots)
// lie side by side in one huge page; larger than kLargestPooledIoBufferBytes
// get a mapping each (advised too).  Smaller buffers are carved the same way
// from mappings without the advice: a 4 KiB buffer should not commit a
// 2 MiB page.  Where the kernel has no transparent huge pages (or they are off)
// the advice fails and the buffers are ordinary pages: only speed differs.
//
// Memory given back is kept for reuse, never unmapped (a runner's slots
// come and go with its threads).  A mutex guards the pool, taken around
// fork() so that a child allocates safely.  Meant for buffers kept across
// many calls (visit slots), not per call.
#ifndef FOREACTOR_BASE_IO_BUFFERS_H_
#define FOREACTOR_BASE_IO_BUFFERS_H_

#include <cstddef>

namespace foreactor {

inline constexpr size_t kIoBufferAlignment = 4096;
// Sizes from here up come from huge-page-advised mappings.
inline constexpr size_t kSmallestHugeIoBufferBytes = size_t{64} << 10;
// Sizes above this get a mapping each.
inline constexpr size_t kLargestPooledIoBufferBytes = size_t{2} << 20;

// Room for `size` bytes aligned to kIoBufferAlignment, or nullptr when
// `size` is 0 or no mapping can be made.  The contents are unspecified.
// Thread-safe.
void* AllocateIoBuffer(size_t size) noexcept;

// Gives back `buffer` (nullptr: nothing), which AllocateIoBuffer(`size`)
// returned.  Thread-safe.
void FreeIoBuffer(void* buffer, size_t size) noexcept;

// The bytes AllocateIoBuffer(`size`) actually reserves (its size class).
size_t IoBufferBytes(size_t size) noexcept;

}  // namespace foreactor

#endif  // FOREACTOR_BASE_IO_BUFFERS_H_
