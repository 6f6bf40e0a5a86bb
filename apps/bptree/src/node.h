// Decoded nodes: a leaf or inner node page as vectors, for the code that
// changes nodes (insertion and splits).  Read paths use NodePageView on the
// page bytes instead and decode nothing.

#ifndef BPTREE_NODE_H_
#define BPTREE_NODE_H_

#include <cstdint>
#include <vector>

#include "page_format.h"
#include "status.h"

namespace bptree {

struct LeafNode {
  std::vector<uint64_t> keys;    // strictly increasing
  std::vector<uint64_t> values;  // values[i] belongs to keys[i]
  uint64_t right_sibling = kNoPage;

  // Fills *leaf from `page`.  Returns Corruption if the page is not a leaf,
  // holds more than `degree` keys, or its keys are not strictly increasing.
  static Status Decode(const Page& page, uint32_t degree, LeafNode* leaf);

  // Writes the whole page.  Requires keys.size() == values.size() <= kMaxDegree.
  void EncodeTo(Page* page) const;
};

struct InnerNode {
  std::vector<uint64_t> keys;      // strictly increasing separators
  std::vector<uint64_t> children;  // page numbers; children.size() == keys.size() + 1

  // Fills *node from `page`.  Returns Corruption if the page is not an inner
  // node, holds more than `degree` keys, its keys are not strictly
  // increasing, or a child is page 0.
  static Status Decode(const Page& page, uint32_t degree, InnerNode* node);

  // Writes the whole page.  Requires keys.size() <= kMaxDegree and
  // children.size() == keys.size() + 1.
  void EncodeTo(Page* page) const;
};

}  // namespace bptree

#endif  // BPTREE_NODE_H_
