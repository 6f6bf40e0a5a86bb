// leaf_planner.h: the leaf pages of a range scan, learned from the inner
// pages the scan reads, before the tree has gathered them itself.
//
// Tree::Scan gathers its candidate leaves by a depth-first walk of the inner
// levels (Tree::GatherLeaves): it loads the root and, for each child whose
// key range meets [low, high] (indices UpperBound(low) to UpperBound(high)),
// in order, loads that child, down to the level whose children are leaves.
// A LeafPlanner follows the same walk from the pages the program reads, one
// by one, and so knows the whole list of leaves the moment the last inner
// page has been read, while the host has yet to set up its result buffer.
//
// It only predicts: the scan plugin's graph uses the list to read ahead,
// and the list the tree hands to bptree_read_leaves() replaces it.  A page
// read out of the walk's order (a page the tree found in its inner page
// cache was skipped, or the tree changed) makes the plan fail for the scan.
#ifndef BPTREE_PLUGINS_LEAF_PLANNER_H_
#define BPTREE_PLUGINS_LEAF_PLANNER_H_

#include <cstdint>
#include <vector>

#include "foreactor/foreactor.hpp"
#include "page_format.h"

namespace bptree_plugin {

class LeafPlanner {
 public:
  using PageList = std::vector<uint64_t, foreactor::PrivateAllocator<uint64_t>>;

  // A scan of [low, high] of a tree whose root is page `root` with `height`
  // levels (1: the root is a leaf, and the plan is complete at once).
  LeafPlanner(uint64_t root, uint32_t height, uint64_t low, uint64_t high) noexcept;

  // The program read inner page `page_number` of the scan, with contents
  // `page`.  Returns true when this read completed the plan.
  bool InnerPageRead(uint64_t page_number, const bptree::Page& page) noexcept;

  // Every inner page of the walk was read in order: leaves() is the list.
  bool complete() const { return !failed_ && pending_.empty(); }
  bool failed() const { return failed_; }
  // The leaves in scan order (complete() or not: those known so far).
  const PageList& leaves() const { return leaves_; }

 private:
  struct Pending {
    uint64_t page;
    uint32_t level;  // of the page: 2 holds leaves as children
  };

  uint64_t low_;
  uint64_t high_;
  bool failed_ = false;
  std::vector<Pending, foreactor::PrivateAllocator<Pending>> pending_;  // next page on top
  PageList leaves_;
};

}  // namespace bptree_plugin

#endif  // BPTREE_PLUGINS_LEAF_PLANNER_H_
