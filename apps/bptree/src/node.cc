#include "node.h"

#include <cassert>
#include <string>

namespace bptree {

namespace {

// Checks what every node page must satisfy: type, key count, sorted keys.
Status CheckNodePage(const NodePageView& view, NodeType type, uint32_t degree) {
  const char* type_name = type == NodeType::kLeaf ? "leaf" : "inner node";
  if (!view.HasValidHeader(type)) {
    return Status::Corruption(std::string("page is not a well-formed ") + type_name);
  }
  if (view.key_count() > degree) {
    return Status::Corruption(std::string(type_name) + " holds " +
                              std::to_string(view.key_count()) + " keys, more than the degree " +
                              std::to_string(degree));
  }
  for (uint32_t i = 1; i < view.key_count(); ++i) {
    if (view.key(i - 1) >= view.key(i)) {
      return Status::Corruption(std::string(type_name) + " keys are not strictly increasing");
    }
  }
  return Status::OK();
}

}  // namespace

Status LeafNode::Decode(const Page& page, uint32_t degree, LeafNode* leaf) {
  NodePageView view(page);
  Status status = CheckNodePage(view, NodeType::kLeaf, degree);
  if (!status.ok()) return status;
  uint32_t count = view.key_count();
  leaf->keys.resize(count);
  leaf->values.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    leaf->keys[i] = view.key(i);
    leaf->values[i] = view.value(i);
  }
  leaf->right_sibling = view.right_sibling();
  return Status::OK();
}

void LeafNode::EncodeTo(Page* page) const {
  assert(keys.size() == values.size() && keys.size() <= kMaxDegree);
  NodePageWriter writer(page);
  writer.Reset(NodeType::kLeaf);
  uint32_t count = static_cast<uint32_t>(keys.size());
  writer.set_key_count(count);
  writer.set_right_sibling(right_sibling);
  for (uint32_t i = 0; i < count; ++i) {
    writer.set_key(i, keys[i]);
    writer.set_value(i, values[i]);
  }
}

Status InnerNode::Decode(const Page& page, uint32_t degree, InnerNode* node) {
  NodePageView view(page);
  Status status = CheckNodePage(view, NodeType::kInner, degree);
  if (!status.ok()) return status;
  uint32_t count = view.key_count();
  node->keys.resize(count);
  node->children.resize(size_t{count} + 1);
  for (uint32_t i = 0; i < count; ++i) node->keys[i] = view.key(i);
  for (uint32_t i = 0; i <= count; ++i) {
    node->children[i] = view.child(i);
    if (node->children[i] == kNoPage) return Status::Corruption("inner node has a child page 0");
  }
  return Status::OK();
}

void InnerNode::EncodeTo(Page* page) const {
  assert(keys.size() <= kMaxDegree && children.size() == keys.size() + 1);
  NodePageWriter writer(page);
  writer.Reset(NodeType::kInner);
  uint32_t count = static_cast<uint32_t>(keys.size());
  writer.set_key_count(count);
  for (uint32_t i = 0; i < count; ++i) writer.set_key(i, keys[i]);
  for (uint32_t i = 0; i <= count; ++i) writer.set_child(i, children[i]);
}

}  // namespace bptree
