// BulkLoader: builds a tree bottom-up from pairs in increasing key order.
//
// The leaves are filled in memory, `degree` pairs each (the last leaf may
// hold fewer), in batches of Options::leaves_per_batch pages; each batch is
// written by bptree_write_leaves (leaf_io.h), one pwrite per leaf, to
// consecutive pages from page 1 on.  With Options::direct_io each batch's
// pages are first allocated (Pager::Preallocate), so that the leaf writes
// do not extend the file one page at a time.  Then the inner levels are built above
// them, each level's children spread evenly over as few nodes as the degree
// allows, and the meta page is written last.

#ifndef BPTREE_BULK_LOADER_H_
#define BPTREE_BULK_LOADER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "leaf_io.h"
#include "meta.h"
#include "pager.h"
#include "status.h"

namespace bptree {

// A stream of pairs in strictly increasing key order.
class SortedPairSource {
 public:
  virtual ~SortedPairSource() = default;
  // Sets the next pair and returns true, or returns false at the end.
  virtual bool Next(uint64_t* key, uint64_t* value) = 0;
};

// Streams the pairs of a vector, which must outlive the source.
class VectorPairSource : public SortedPairSource {
 public:
  explicit VectorPairSource(const std::vector<bptree_pair>& pairs) : pairs_(pairs) {}
  bool Next(uint64_t* key, uint64_t* value) override;

 private:
  const std::vector<bptree_pair>& pairs_;
  size_t position_ = 0;
};

class BulkLoader {
 public:
  struct Options {
    uint32_t degree = 64;
    // Leaf pages held in memory and handed to one bptree_write_leaves call.
    size_t leaves_per_batch = 1024;
    // Write with O_DIRECT (Pager::IoMode::kDirect): each leaf pwrite waits
    // for the device instead of copying into the kernel's page cache.
    // The file is the same byte for byte either way.
    bool direct_io = false;
  };

  // Creates a tree in `path` (replacing any file there) holding every pair
  // of `source`, and sets *meta to its meta page if meta is not null.
  // Returns InvalidArgument if the degree is outside [kMinDegree,
  // kMaxDegree], leaves_per_batch is 0, or the keys are not strictly
  // increasing; IOError if a write fails.  After a failure the file holds no
  // valid tree.
  static Status Load(const std::string& path, const Options& options, SortedPairSource* source,
                     TreeMeta* meta = nullptr);

 private:
  // The smallest key below a page, and the page.
  struct ChildRef {
    uint64_t first_key;
    uint64_t page_number;
  };

  BulkLoader(Pager* pager, const Options& options);

  Status WriteLeafLevel(SortedPairSource* source);
  Status BuildInnerLevels();
  Status WriteMeta();

  Pager* const pager_;
  const Options options_;
  TreeMeta meta_;
  std::vector<ChildRef> level_;  // the nodes of the level built last, in key order
};

}  // namespace bptree

#endif  // BPTREE_BULK_LOADER_H_
