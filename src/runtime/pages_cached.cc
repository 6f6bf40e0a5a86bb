// pages_cached.cc: how much of a byte range the page cache holds
// (pages_cached.h), and the public foreactor_pages_cached()
// (include/foreactor/foreactor.h).
#include "runtime/pages_cached.h"

#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "config/settings.h"
#include "foreactor/foreactor.h"
#include "runtime/raw_syscalls.h"

namespace foreactor {

int CountRangePages(int fd, uint64_t offset, uint64_t length, RangePages* counts) {
  static const uint64_t kPageBytes = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  // (cachestat reads a length of 0 as "to the end of the file".)
  if (length == 0 || offset > UINT64_MAX - length) return -EINVAL;
  raw::CachestatCounts kernel_counts = {};
  const int64_t result = raw::Cachestat(fd, offset, length, &kernel_counts);
  if (result < 0) return static_cast<int>(result);
  counts->pages = (offset + length - 1) / kPageBytes - offset / kPageBytes + 1;
  counts->cached = kernel_counts.cached;
  counts->unwritten = kernel_counts.dirty + kernel_counts.writeback;
  return 0;
}

int CountCachedPages(int fd, uint64_t offset, uint64_t length, uint64_t* cached, uint64_t* pages) {
  RangePages counts;
  const int result = CountRangePages(fd, offset, length, &counts);
  if (result != 0) return result;
  *cached = counts.cached;
  *pages = counts.pages;
  return 0;
}

bool RangeCached(int fd, uint64_t offset, uint64_t length) {
  uint64_t cached = 0, pages = 0;
  return CountCachedPages(fd, offset, length, &cached, &pages) == 0 && cached >= pages;
}

}  // namespace foreactor

extern "C" int foreactor_pages_cached(int fd, uint64_t offset, uint64_t length, uint64_t* cached,
                                      uint64_t* pages) {
  // With page-cache awareness off, and in check mode (which compares every
  // call with the graph), plugins plan as if nothing were cached.
  const foreactor::GraphSettings& settings = foreactor::Settings().defaults;
  if (!settings.page_cache_aware || settings.check) return -1;
  uint64_t counted_cached = 0, counted_pages = 0;
  if (foreactor::CountCachedPages(fd, offset, length, &counted_cached, &counted_pages) < 0) {
    return -1;
  }
  if (cached != nullptr) *cached = counted_cached;
  if (pages != nullptr) *pages = counted_pages;
  return 0;
}
