// InnerPageCache: a small least-recently-used cache of inner node pages.
//
// Only inner nodes are cached; leaves are always read from the file.  The
// cache holds copies: the owner keeps it coherent by inserting every inner
// page it writes.  A capacity of 0 disables caching.

#ifndef BPTREE_INNER_PAGE_CACHE_H_
#define BPTREE_INNER_PAGE_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <unordered_map>

#include "page_format.h"

namespace bptree {

class InnerPageCache {
 public:
  explicit InnerPageCache(size_t capacity_in_pages) : capacity_(capacity_in_pages) {}

  InnerPageCache(const InnerPageCache&) = delete;
  InnerPageCache& operator=(const InnerPageCache&) = delete;

  // Copies the cached page `page_number` into *page and returns true, or
  // returns false if it is not cached.  A hit makes the page most recent.
  bool Lookup(uint64_t page_number, Page* page);

  // Caches a copy of `page` as page `page_number`, replacing an older copy
  // and evicting the least recently used page when full.
  void Insert(uint64_t page_number, const Page& page);

  size_t size() const { return index_.size(); }
  size_t capacity() const { return capacity_; }

 private:
  struct Entry {
    uint64_t page_number;
    std::unique_ptr<Page> page;
  };
  using EntryList = std::list<Entry>;  // most recently used first

  const size_t capacity_;
  EntryList entries_;
  std::unordered_map<uint64_t, EntryList::iterator> index_;
};

}  // namespace bptree

#endif  // BPTREE_INNER_PAGE_CACHE_H_
