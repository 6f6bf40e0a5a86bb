#include "tree_checker.h"

#include <string>

#include "node.h"

namespace bptree {

namespace {

std::string PageName(uint64_t page_number) { return "page " + std::to_string(page_number); }

bool InRange(uint64_t key, std::optional<uint64_t> low, std::optional<uint64_t> high) {
  return (!low || key >= *low) && (!high || key < *high);
}

}  // namespace

Status TreeChecker::Run() {
  visited_.assign(meta_.page_count, false);
  node_pages_seen_ = leaves_seen_ = entries_seen_ = 0;
  expected_next_leaf_ = meta_.first_leaf_page;

  Status status = CheckSubtree(meta_.root_page, meta_.height, std::nullopt, std::nullopt);
  if (!status.ok()) return status;
  if (expected_next_leaf_ != kNoPage) {
    return Status::Corruption("the last leaf has right sibling " + PageName(expected_next_leaf_));
  }
  if (leaves_seen_ != meta_.leaf_count) {
    return Status::Corruption("found " + std::to_string(leaves_seen_) + " leaves, meta page says " +
                              std::to_string(meta_.leaf_count));
  }
  if (entries_seen_ != meta_.entry_count) {
    return Status::Corruption("found " + std::to_string(entries_seen_) + " pairs, meta page says " +
                              std::to_string(meta_.entry_count));
  }
  if (node_pages_seen_ + 1 != meta_.page_count) {
    return Status::Corruption("found " + std::to_string(node_pages_seen_) +
                              " node pages, meta page says " + std::to_string(meta_.page_count) +
                              " pages in all");
  }
  return Status::OK();
}

Status TreeChecker::CheckSubtree(uint64_t page_number, uint32_t level, std::optional<uint64_t> low,
                                 std::optional<uint64_t> high) {
  if (page_number == kNoPage || page_number >= meta_.page_count) {
    return Status::Corruption(PageName(page_number) + " is outside the tree");
  }
  if (visited_[page_number]) {
    return Status::Corruption(PageName(page_number) + " is reached twice");
  }
  visited_[page_number] = true;
  ++node_pages_seen_;

  Page page;
  Status status = pager_.ReadPage(page_number, &page);
  if (!status.ok()) return status;
  if (level == 1) return CheckLeaf(page_number, page, low, high);

  InnerNode node;
  status = InnerNode::Decode(page, meta_.degree, &node);
  if (!status.ok()) return Status::Corruption(PageName(page_number) + ": " + status.ToString());
  if (node.keys.empty())
    return Status::Corruption(PageName(page_number) + ": inner node without keys");
  for (uint64_t key : node.keys) {
    if (!InRange(key, low, high)) {
      return Status::Corruption(PageName(page_number) + ": separator outside the node's range");
    }
  }
  for (size_t i = 0; i < node.children.size(); ++i) {
    std::optional<uint64_t> child_low = i == 0 ? low : std::optional<uint64_t>(node.keys[i - 1]);
    std::optional<uint64_t> child_high =
        i == node.keys.size() ? high : std::optional<uint64_t>(node.keys[i]);
    status = CheckSubtree(node.children[i], level - 1, child_low, child_high);
    if (!status.ok()) return status;
  }
  return Status::OK();
}

Status TreeChecker::CheckLeaf(uint64_t page_number, const Page& page, std::optional<uint64_t> low,
                              std::optional<uint64_t> high) {
  LeafNode leaf;
  Status status = LeafNode::Decode(page, meta_.degree, &leaf);
  if (!status.ok()) return Status::Corruption(PageName(page_number) + ": " + status.ToString());
  if (leaf.keys.empty() && meta_.height > 1) {
    return Status::Corruption(PageName(page_number) + ": empty leaf below the root");
  }
  for (uint64_t key : leaf.keys) {
    if (!InRange(key, low, high)) {
      return Status::Corruption(PageName(page_number) + ": key outside the leaf's range");
    }
  }
  if (page_number != expected_next_leaf_) {
    return Status::Corruption("leaf chain reaches " + PageName(expected_next_leaf_) +
                              " where the tree has leaf " + PageName(page_number));
  }
  expected_next_leaf_ = leaf.right_sibling;
  ++leaves_seen_;
  entries_seen_ += leaf.keys.size();
  return Status::OK();
}

}  // namespace bptree
