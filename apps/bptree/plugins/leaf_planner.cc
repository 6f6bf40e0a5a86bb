#include "leaf_planner.h"

#include <algorithm>
#include <new>

namespace bptree_plugin {

LeafPlanner::LeafPlanner(uint64_t root, uint32_t height, uint64_t low, uint64_t high) noexcept
    : low_(low), high_(high) {
  try {
    if (height <= 1) {
      leaves_.push_back(root);
    } else {
      pending_.push_back(Pending{root, height});
    }
  } catch (const std::bad_alloc&) {
    failed_ = true;
  }
}

bool LeafPlanner::InnerPageRead(uint64_t page_number, const bptree::Page& page) noexcept {
  if (failed_ || pending_.empty()) return false;
  if (pending_.back().page != page_number) {
    failed_ = true;  // out of the walk's order
    return false;
  }
  const uint32_t level = pending_.back().level;
  pending_.pop_back();
  const bptree::NodePageView view(page);
  if (!view.HasValidHeader(bptree::NodeType::kInner)) {
    failed_ = true;  // the tree reports the corruption itself
    return false;
  }
  const uint32_t first = view.UpperBound(low_);
  const uint32_t last = view.UpperBound(high_);
  try {
    if (level == 2) {
      // One allocation for the page's leaves, not one per doubling, and
      // at least twice the room when the list must grow: reserving only
      // what this page needs would copy the whole list at every page (a
      // full scan's 12,800 leaves, once per inner page).
      const size_t needed = leaves_.size() + (last - first + 1);
      if (needed > leaves_.capacity()) leaves_.reserve(std::max(needed, 2 * leaves_.capacity()));
      for (uint32_t index = first; index <= last; ++index) leaves_.push_back(view.child(index));
    } else {
      // Children are walked in order: the first goes on top.
      for (uint32_t index = last + 1; index-- > first;)
        pending_.push_back(Pending{view.child(index), level - 1});
    }
  } catch (const std::bad_alloc&) {
    failed_ = true;
    return false;
  }
  return pending_.empty();
}

}  // namespace bptree_plugin
