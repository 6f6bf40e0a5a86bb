#include "inner_page_cache.h"

#include <cstring>

namespace bptree {

bool InnerPageCache::Lookup(uint64_t page_number, Page* page) {
  auto found = index_.find(page_number);
  if (found == index_.end()) return false;
  entries_.splice(entries_.begin(), entries_, found->second);
  std::memcpy(page->bytes, found->second->page->bytes, kPageSize);
  return true;
}

void InnerPageCache::Insert(uint64_t page_number, const Page& page) {
  if (capacity_ == 0) return;
  auto found = index_.find(page_number);
  if (found != index_.end()) {
    entries_.splice(entries_.begin(), entries_, found->second);
  } else if (index_.size() < capacity_) {
    entries_.push_front(Entry{page_number, std::make_unique<Page>()});
    index_.emplace(page_number, entries_.begin());
  } else {
    // Reuse the least recently used entry and its page buffer.
    index_.erase(entries_.back().page_number);
    entries_.splice(entries_.begin(), entries_, std::prev(entries_.end()));
    entries_.front().page_number = page_number;
    index_.emplace(page_number, entries_.begin());
  }
  std::memcpy(entries_.front().page->bytes, page.bytes, kPageSize);
}

}  // namespace bptree
