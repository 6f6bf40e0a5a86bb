// pages_cached.cc: foreactor_pages_cached(), the public question "how much
// of this range is in the page cache?" (include/foreactor/foreactor.h).
#include <unistd.h>

#include <cstdint>

#include "config/settings.h"
#include "foreactor/foreactor.h"
#include "runtime/raw_syscalls.h"

extern "C" int foreactor_pages_cached(int fd, uint64_t offset, uint64_t length, uint64_t* cached,
                                      uint64_t* pages) {
  static const uint64_t kPageBytes = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  // With page-cache awareness off, and in check mode (which compares every
  // call with the graph), plugins plan as if nothing were cached.
  const foreactor::GraphSettings& settings = foreactor::Settings().defaults;
  if (!settings.page_cache_aware || settings.check) return -1;
  // (cachestat reads a length of 0 as "to the end of the file".)
  if (length == 0 || offset > UINT64_MAX - length) return -1;
  foreactor::raw::CachestatCounts counts = {};
  if (foreactor::raw::Cachestat(fd, offset, length, &counts) < 0) return -1;
  const uint64_t first_page = offset / kPageBytes;
  const uint64_t last_page = (offset + length - 1) / kPageBytes;
  if (cached != nullptr) *cached = counts.cached;
  if (pages != nullptr) *pages = last_page - first_page + 1;
  return 0;
}
