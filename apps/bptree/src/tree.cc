#include "tree.h"

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "tree_checker.h"

namespace bptree {

namespace {

std::string PageName(uint64_t page_number) { return "page " + std::to_string(page_number); }

Pager::IoMode IoModeOf(const Tree::Options& options) {
  return options.direct_io ? Pager::IoMode::kDirect : Pager::IoMode::kBuffered;
}

}  // namespace

Tree::Tree(std::unique_ptr<Pager> pager, const TreeMeta& meta, const Options& options)
    : pager_(std::move(pager)), meta_(meta), inner_cache_(options.inner_cache_pages) {}

Status Tree::Create(const std::string& path, uint32_t degree, const Options& options,
                    std::unique_ptr<Tree>* tree) {
  if (degree < kMinDegree || degree > kMaxDegree) {
    return Status::InvalidArgument("degree " + std::to_string(degree) + " is outside [" +
                                   std::to_string(kMinDegree) + ", " + std::to_string(kMaxDegree) +
                                   "]");
  }
  std::unique_ptr<Pager> pager;
  Status status = Pager::Open(path, Pager::OpenMode::kCreateOrTruncate, IoModeOf(options), &pager);
  if (!status.ok()) return status;

  TreeMeta meta;
  meta.degree = degree;
  meta.height = 1;
  meta.root_page = 1;
  meta.page_count = 2;
  meta.entry_count = 0;
  meta.leaf_count = 1;
  meta.first_leaf_page = 1;

  Page page;
  LeafNode().EncodeTo(&page);
  status = pager->WritePage(meta.root_page, page);
  if (!status.ok()) return status;
  meta.EncodeTo(&page);
  status = pager->WritePage(0, page);
  if (!status.ok()) return status;

  tree->reset(new Tree(std::move(pager), meta, options));
  return Status::OK();
}

Status Tree::Open(const std::string& path, const Options& options, std::unique_ptr<Tree>* tree) {
  std::unique_ptr<Pager> pager;
  Status status = Pager::Open(path, Pager::OpenMode::kOpenExisting, IoModeOf(options), &pager);
  if (!status.ok()) return status;

  uint64_t file_pages = 0;
  status = pager->SizeInPages(&file_pages);
  if (!status.ok()) return status;
  if (file_pages == 0) return Status::Corruption(path + " is not a bptree file (no meta page)");

  Page page;
  status = pager->ReadPage(0, &page);
  if (!status.ok()) return status;
  TreeMeta meta;
  status = TreeMeta::Decode(page, &meta);
  if (!status.ok()) return status;
  if (file_pages < meta.page_count) {
    return Status::Corruption(path + " is shorter than the page count in its meta page");
  }
  tree->reset(new Tree(std::move(pager), meta, options));
  return Status::OK();
}

Status Tree::CheckChildPage(uint64_t page_number) const {
  if (page_number == kNoPage || page_number >= meta_.page_count) {
    return Status::Corruption("child " + PageName(page_number) + " is outside the tree");
  }
  return Status::OK();
}

Status Tree::LoadInnerPage(uint64_t page_number, Page* page) {
  if (inner_cache_.Lookup(page_number, page)) return Status::OK();
  Status status = pager_->ReadPage(page_number, page);
  if (!status.ok()) return status;
  NodePageView view(*page);
  if (!view.HasValidHeader(NodeType::kInner) || view.key_count() > meta_.degree) {
    return Status::Corruption(PageName(page_number) + " is not a valid inner node");
  }
  inner_cache_.Insert(page_number, *page);
  return Status::OK();
}

Status Tree::StoreInnerNode(uint64_t page_number, const InnerNode& node) {
  Page page;
  node.EncodeTo(&page);
  Status status = pager_->WritePage(page_number, page);
  if (!status.ok()) return status;
  inner_cache_.Insert(page_number, page);
  return Status::OK();
}

Status Tree::LoadLeafPage(uint64_t page_number, Page* page) const {
  Status status = pager_->ReadPage(page_number, page);
  if (!status.ok()) return status;
  NodePageView view(*page);
  if (!view.HasValidHeader(NodeType::kLeaf) || view.key_count() > meta_.degree) {
    return Status::Corruption(PageName(page_number) + " is not a valid leaf");
  }
  return Status::OK();
}

Status Tree::WriteMeta() {
  Page page;
  meta_.EncodeTo(&page);
  return pager_->WritePage(0, page);
}

Status Tree::FindLeaf(uint64_t key, std::vector<PathStep>* path, uint64_t* leaf_page) {
  uint64_t page_number = meta_.root_page;
  Page page;
  for (uint32_t level = meta_.height; level > 1; --level) {
    Status status = LoadInnerPage(page_number, &page);
    if (!status.ok()) return status;
    NodePageView view(page);
    const uint32_t child_index = view.UpperBound(key);
    if (path != nullptr) path->push_back(PathStep{page_number, child_index});
    page_number = view.child(child_index);
    status = CheckChildPage(page_number);
    if (!status.ok()) return status;
  }
  *leaf_page = page_number;
  return Status::OK();
}

Status Tree::Get(uint64_t key, uint64_t* value) {
  uint64_t leaf_page = kNoPage;
  Status status = FindLeaf(key, nullptr, &leaf_page);
  if (!status.ok()) return status;
  Page page;
  status = LoadLeafPage(leaf_page, &page);
  if (!status.ok()) return status;
  NodePageView leaf(page);
  const uint32_t slot = leaf.LowerBound(key);
  if (slot == leaf.key_count() || leaf.key(slot) != key) {
    return Status::NotFound("key " + std::to_string(key));
  }
  *value = leaf.value(slot);
  return Status::OK();
}

Status Tree::Put(uint64_t key, uint64_t value) {
  std::vector<PathStep> path;
  uint64_t leaf_page = kNoPage;
  Status status = FindLeaf(key, &path, &leaf_page);
  if (!status.ok()) return status;

  Page page;
  status = pager_->ReadPage(leaf_page, &page);
  if (!status.ok()) return status;
  LeafNode leaf;
  status = LeafNode::Decode(page, meta_.degree, &leaf);
  if (!status.ok()) return Status::Corruption(PageName(leaf_page) + ": " + status.ToString());

  const auto position = std::lower_bound(leaf.keys.begin(), leaf.keys.end(), key);
  const size_t slot = static_cast<size_t>(position - leaf.keys.begin());
  if (position != leaf.keys.end() && *position == key) {
    leaf.values[slot] = value;
    leaf.EncodeTo(&page);
    return pager_->WritePage(leaf_page, page);
  }
  leaf.keys.insert(position, key);
  leaf.values.insert(leaf.values.begin() + static_cast<std::ptrdiff_t>(slot), value);
  meta_.entry_count++;

  if (leaf.keys.size() <= meta_.degree) {
    leaf.EncodeTo(&page);
    status = pager_->WritePage(leaf_page, page);
    if (!status.ok()) return status;
    return WriteMeta();
  }

  // Split the leaf: the left half stays in place, the right half moves to a
  // new page linked in after it.
  const auto left_size = static_cast<std::ptrdiff_t>((leaf.keys.size() + 1) / 2);
  LeafNode right;
  right.keys.assign(leaf.keys.begin() + left_size, leaf.keys.end());
  right.values.assign(leaf.values.begin() + left_size, leaf.values.end());
  leaf.keys.resize(static_cast<size_t>(left_size));
  leaf.values.resize(static_cast<size_t>(left_size));
  const uint64_t right_page = AllocatePage();
  right.right_sibling = leaf.right_sibling;
  leaf.right_sibling = right_page;
  meta_.leaf_count++;
  right.EncodeTo(&page);
  status = pager_->WritePage(right_page, page);
  if (!status.ok()) return status;
  leaf.EncodeTo(&page);
  status = pager_->WritePage(leaf_page, page);
  if (!status.ok()) return status;

  // Insert (separator, new_child) into the parents, splitting them as needed.
  uint64_t separator = right.keys.front();
  uint64_t new_child = right_page;
  while (!path.empty()) {
    const PathStep step = path.back();
    path.pop_back();
    status = LoadInnerPage(step.inner_page, &page);
    if (!status.ok()) return status;
    InnerNode node;
    status = InnerNode::Decode(page, meta_.degree, &node);
    if (!status.ok())
      return Status::Corruption(PageName(step.inner_page) + ": " + status.ToString());
    node.keys.insert(node.keys.begin() + step.child_index, separator);
    node.children.insert(node.children.begin() + step.child_index + 1, new_child);
    if (node.keys.size() <= meta_.degree) {
      status = StoreInnerNode(step.inner_page, node);
      if (!status.ok()) return status;
      return WriteMeta();
    }
    // Split the inner node: its middle key moves up as the new separator.
    const auto middle = static_cast<std::ptrdiff_t>(node.keys.size() / 2);
    InnerNode right_node;
    right_node.keys.assign(node.keys.begin() + middle + 1, node.keys.end());
    right_node.children.assign(node.children.begin() + middle + 1, node.children.end());
    separator = node.keys[static_cast<size_t>(middle)];
    node.keys.resize(static_cast<size_t>(middle));
    node.children.resize(static_cast<size_t>(middle) + 1);
    new_child = AllocatePage();
    status = StoreInnerNode(new_child, right_node);
    if (!status.ok()) return status;
    status = StoreInnerNode(step.inner_page, node);
    if (!status.ok()) return status;
  }

  // The root split: a new root above the two halves.
  InnerNode root;
  root.keys.push_back(separator);
  root.children.push_back(meta_.root_page);
  root.children.push_back(new_child);
  const uint64_t root_page = AllocatePage();
  status = StoreInnerNode(root_page, root);
  if (!status.ok()) return status;
  meta_.root_page = root_page;
  meta_.height++;
  return WriteMeta();
}

Status Tree::GatherLeaves(uint64_t page_number, uint32_t level, uint64_t low, uint64_t high,
                          Page* scratch, std::vector<uint64_t>* leaves) {
  Page* page = &scratch[level];
  Status status = LoadInnerPage(page_number, page);
  if (!status.ok()) return status;
  NodePageView view(*page);
  const uint32_t first = view.UpperBound(low);
  const uint32_t last = view.UpperBound(high);
  for (uint32_t index = first; index <= last; ++index) {
    const uint64_t child = view.child(index);
    status = CheckChildPage(child);
    if (!status.ok()) return status;
    if (level == 2) {
      leaves->push_back(child);
    } else {
      status = GatherLeaves(child, level - 1, low, high, scratch, leaves);
      if (!status.ok()) return status;
    }
  }
  return Status::OK();
}

Status Tree::Scan(uint64_t low, uint64_t high, std::vector<bptree_pair>* pairs,
                  double* leaf_loop_ms) {
  if (leaf_loop_ms != nullptr) *leaf_loop_ms = 0;
  pairs->clear();
  if (low > high) return Status::OK();

  // Phase 1: the page numbers of every candidate leaf, from the inner levels.
  std::vector<uint64_t> leaves;
  if (meta_.height == 1) {
    leaves.push_back(meta_.root_page);
  } else {
    std::unique_ptr<Page[]> scratch(new Page[meta_.height + 1]);
    Status status = GatherLeaves(meta_.root_page, meta_.height, low, high, scratch.get(), &leaves);
    if (!status.ok()) return status;
  }

  // Phase 2: the serial loop of leaf reads.
  const uint64_t leaf_capacity = uint64_t{leaves.size()} * meta_.degree;
  const size_t capacity = static_cast<size_t>(std::min(leaf_capacity, meta_.entry_count));
  pairs->resize(capacity);
  const auto loop_start = std::chrono::steady_clock::now();
  const int64_t stored = bptree_read_leaves(pager_->fd(), leaves.data(), leaves.size(), low, high,
                                            pairs->data(), capacity);
  if (leaf_loop_ms != nullptr) {
    *leaf_loop_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - loop_start)
            .count();
  }
  if (stored < 0) {
    const int error = errno;
    pairs->clear();
    if (error == EBADMSG) return Status::Corruption("a leaf page of the scan is malformed");
    if (error == ENOBUFS) return Status::Corruption("the leaves hold more pairs than the tree");
    return Status::IOError("scan the leaves of " + path(), error);
  }
  pairs->resize(static_cast<size_t>(stored));
  return Status::OK();
}

Status Tree::CheckInvariants() const { return TreeChecker(*pager_, meta_).Run(); }

}  // namespace bptree
