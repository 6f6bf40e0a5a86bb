#include "bulk_loader.h"

#include <cerrno>

#include "node.h"
#include "page_format.h"

namespace bptree {

bool VectorPairSource::Next(uint64_t* key, uint64_t* value) {
  if (position_ == pairs_.size()) return false;
  *key = pairs_[position_].key;
  *value = pairs_[position_].value;
  ++position_;
  return true;
}

BulkLoader::BulkLoader(Pager* pager, const Options& options) : pager_(pager), options_(options) {
  meta_.degree = options.degree;
  meta_.page_count = 1;  // the meta page
}

Status BulkLoader::Load(const std::string& path, const Options& options, SortedPairSource* source,
                        TreeMeta* meta) {
  if (options.degree < kMinDegree || options.degree > kMaxDegree) {
    return Status::InvalidArgument("degree " + std::to_string(options.degree) + " is outside [" +
                                   std::to_string(kMinDegree) + ", " + std::to_string(kMaxDegree) +
                                   "]");
  }
  if (options.leaves_per_batch == 0) return Status::InvalidArgument("leaves_per_batch is 0");

  std::unique_ptr<Pager> pager;
  const Pager::IoMode io_mode =
      options.direct_io ? Pager::IoMode::kDirect : Pager::IoMode::kBuffered;
  Status status = Pager::Open(path, Pager::OpenMode::kCreateOrTruncate, io_mode, &pager);
  if (!status.ok()) return status;

  BulkLoader loader(pager.get(), options);
  status = loader.WriteLeafLevel(source);
  if (!status.ok()) return status;
  status = loader.BuildInnerLevels();
  if (!status.ok()) return status;
  status = loader.WriteMeta();
  if (!status.ok()) return status;
  if (meta != nullptr) *meta = loader.meta_;
  return Status::OK();
}

Status BulkLoader::WriteLeafLevel(SortedPairSource* source) {
  const uint32_t degree = options_.degree;
  std::unique_ptr<Page[]> batch(new Page[options_.leaves_per_batch]);
  size_t leaves_in_batch = 0;
  uint64_t batch_first_page = meta_.page_count;

  uint64_t key = 0, value = 0;
  bool have_pair = source->Next(&key, &value);
  bool have_previous_key = false;
  uint64_t previous_key = 0;

  // An empty stream still makes one (empty) leaf, the root.
  bool need_empty_leaf = !have_pair;
  while (have_pair || need_empty_leaf) {
    need_empty_leaf = false;
    const uint64_t page_number = batch_first_page + leaves_in_batch;
    NodePageWriter leaf(&batch[leaves_in_batch]);
    leaf.Reset(NodeType::kLeaf);
    uint32_t count = 0;
    const uint64_t first_key = key;
    while (have_pair && count < degree) {
      if (have_previous_key && key <= previous_key) {
        return Status::InvalidArgument("bulk load keys are not strictly increasing (key " +
                                       std::to_string(key) + " after " +
                                       std::to_string(previous_key) + ")");
      }
      leaf.set_key(count, key);
      leaf.set_value(count, value);
      ++count;
      previous_key = key;
      have_previous_key = true;
      have_pair = source->Next(&key, &value);
    }
    leaf.set_key_count(count);
    leaf.set_right_sibling(have_pair ? page_number + 1 : kNoPage);
    level_.push_back(ChildRef{first_key, page_number});
    meta_.entry_count += count;
    ++leaves_in_batch;

    if (leaves_in_batch == options_.leaves_per_batch || !have_pair) {
      if (options_.direct_io) {
        // Direct writes that extend the file run one at a time; writes
        // into allocated space need not.
        Status status = pager_->Preallocate(batch_first_page, leaves_in_batch);
        if (!status.ok()) return status;
      }
      if (bptree_write_leaves(pager_->fd(), batch_first_page, batch.get(), leaves_in_batch) != 0) {
        return Status::IOError("write leaves of " + pager_->path(), errno);
      }
      batch_first_page += leaves_in_batch;
      leaves_in_batch = 0;
    }
  }
  meta_.page_count = batch_first_page;
  meta_.leaf_count = level_.size();
  meta_.first_leaf_page = level_.front().page_number;
  meta_.height = 1;
  return Status::OK();
}

Status BulkLoader::BuildInnerLevels() {
  const size_t max_children = size_t{options_.degree} + 1;
  Page page;
  while (level_.size() > 1) {
    // As few nodes as possible, with the children spread evenly over them.
    const size_t children = level_.size();
    const size_t nodes = (children + max_children - 1) / max_children;
    const size_t base = children / nodes;
    const size_t extra = children % nodes;

    std::vector<ChildRef> parents;
    parents.reserve(nodes);
    size_t next_child = 0;
    for (size_t node_index = 0; node_index < nodes; ++node_index) {
      const size_t child_count = base + (node_index < extra ? 1 : 0);
      NodePageWriter writer(&page);
      writer.Reset(NodeType::kInner);
      writer.set_key_count(static_cast<uint32_t>(child_count - 1));
      for (size_t i = 0; i < child_count; ++i) {
        const ChildRef& child = level_[next_child + i];
        writer.set_child(static_cast<uint32_t>(i), child.page_number);
        if (i > 0) writer.set_key(static_cast<uint32_t>(i - 1), child.first_key);
      }
      const uint64_t page_number = meta_.page_count++;
      Status status = pager_->WritePage(page_number, page);
      if (!status.ok()) return status;
      parents.push_back(ChildRef{level_[next_child].first_key, page_number});
      next_child += child_count;
    }
    level_ = std::move(parents);
    ++meta_.height;
  }
  meta_.root_page = level_.front().page_number;
  return Status::OK();
}

Status BulkLoader::WriteMeta() {
  Page page;
  meta_.EncodeTo(&page);
  return pager_->WritePage(0, page);
}

}  // namespace bptree
