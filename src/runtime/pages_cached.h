// pages_cached.h: how much of a file's byte range the page cache holds,
// asked with cachestat(2) (Linux 6.5 and later).  The runtime's own question;
// plugins ask foreactor_pages_cached() (include/foreactor/foreactor.h),
// which answers with this unless settings say to plan as if nothing were
// cached.
#ifndef FOREACTOR_RUNTIME_PAGES_CACHED_H_
#define FOREACTOR_RUNTIME_PAGES_CACHED_H_

#include <cstdint>

namespace foreactor {

// Counts the pages of bytes [offset, offset + length) of `fd` that the page
// cache holds (`*cached`) and the pages the range touches (`*pages`).
// Returns 0, or -errno: -EINVAL for an empty or overflowing range, what
// cachestat(2) fails with otherwise (-ENOSYS before Linux 6.5).
int CountCachedPages(int fd, uint64_t offset, uint64_t length, uint64_t* cached, uint64_t* pages);

// What cachestat(2) says of a byte range: the pages it touches, those the
// page cache holds, and those of them dirty or under write-back.
struct RangePages {
  uint64_t pages = 0;
  uint64_t cached = 0;
  uint64_t unwritten = 0;  // dirty or under write-back
};

// Fills `*counts` for bytes [offset, offset + length) of `fd`.  Returns 0,
// or -errno as CountCachedPages() does.
int CountRangePages(int fd, uint64_t offset, uint64_t length, RangePages* counts);

// True when every page of that range is in the page cache; false also when
// it cannot be told.
bool RangeCached(int fd, uint64_t offset, uint64_t length);

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_PAGES_CACHED_H_
