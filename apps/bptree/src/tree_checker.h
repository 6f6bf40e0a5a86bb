// TreeChecker: verifies every invariant of a tree on disk.  Internal to
// Tree::CheckInvariants.
//
// Checked: every node page lies in [1, page count) and is reached exactly
// once; nodes at level 1 are leaves and above are inner nodes; each node
// holds at most `degree` keys, in strictly increasing order, inside the
// range its parent gives it; inner nodes hold at least one key and leaves
// other than the root at least one pair; the leaves, left to right, form the
// sibling chain from the first leaf page to a last leaf whose sibling is 0;
// the leaf count, entry count and page count match the meta page.

#ifndef BPTREE_TREE_CHECKER_H_
#define BPTREE_TREE_CHECKER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "meta.h"
#include "pager.h"
#include "status.h"

namespace bptree {

class TreeChecker {
 public:
  TreeChecker(const Pager& pager, const TreeMeta& meta) : pager_(pager), meta_(meta) {}

  TreeChecker(const TreeChecker&) = delete;
  TreeChecker& operator=(const TreeChecker&) = delete;

  // Reads every node page; returns OK or Corruption naming the first
  // violation (or the I/O error that stopped the check).
  Status Run();

 private:
  // Checks the subtree at `page_number` on `level` (1 = leaves), whose keys
  // must lie in [low, high); a missing bound is unbounded.
  Status CheckSubtree(uint64_t page_number, uint32_t level, std::optional<uint64_t> low,
                      std::optional<uint64_t> high);
  Status CheckLeaf(uint64_t page_number, const Page& page, std::optional<uint64_t> low,
                   std::optional<uint64_t> high);

  const Pager& pager_;
  const TreeMeta& meta_;
  std::vector<bool> visited_;
  uint64_t node_pages_seen_ = 0;
  uint64_t leaves_seen_ = 0;
  uint64_t entries_seen_ = 0;
  uint64_t expected_next_leaf_ = kNoPage;
};

}  // namespace bptree

#endif  // BPTREE_TREE_CHECKER_H_
