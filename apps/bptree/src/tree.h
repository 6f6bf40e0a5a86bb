// Tree: a B+-tree of 64-bit keys and values stored in one file of 8 KiB
// pages (format in page_format.h and meta.h).
//
// Every node holds at most `degree` keys; a node that would get one more is
// split in two.  Leaves are linked left to right through their right-sibling
// page numbers.  Keys are unique: Put on a present key replaces its value.
//
// Leaves are never cached: every Get reads its leaf with pread, and every
// Scan reads its leaves through bptree_read_leaves (leaf_io.h).  Inner nodes
// go through a small LRU cache (Options::inner_cache_pages).  With
// Options::direct_io those reads bypass the kernel's page cache as well.
//
// Pages are allocated at the end of the file: a leaf split puts the right
// half on a new last page, so a tree grown by Puts in random key order has
// its leaves scattered over the file (the sibling chain jumps back and
// forth), unlike a bulk-loaded tree whose leaves lie in key order.
//
// Pages are never freed (there is no delete).  A Tree is not thread-safe,
// and one file must be open in at most one Tree at a time.  The file is
// closed when the Tree is destroyed.

#ifndef BPTREE_TREE_H_
#define BPTREE_TREE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "inner_page_cache.h"
#include "leaf_io.h"
#include "meta.h"
#include "node.h"
#include "pager.h"
#include "status.h"

namespace bptree {

class Tree {
 public:
  struct Options {
    // Inner node pages kept in memory; 0 disables the cache.
    size_t inner_cache_pages = 256;
    // Open the file with O_DIRECT (Pager::IoMode::kDirect): every leaf
    // read and write, and every inner page missing from the cache above,
    // goes to the device.  A property of this open, not of the file.
    bool direct_io = false;
  };

  // Creates an empty tree in `path`, replacing any file there.  Returns
  // InvalidArgument if `degree` is outside [kMinDegree, kMaxDegree].
  static Status Create(const std::string& path, uint32_t degree, const Options& options,
                       std::unique_ptr<Tree>* tree);

  // Opens the tree in `path`.  Returns NotFound if there is no such file,
  // Corruption if its meta page is invalid or the file is shorter than the
  // page count the meta page records.
  static Status Open(const std::string& path, const Options& options, std::unique_ptr<Tree>* tree);

  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;

  // Sets *value to the value of `key`, or returns NotFound.
  Status Get(uint64_t key, uint64_t* value);

  // Inserts `key` with `value`, or replaces the value of a present key.
  // Splits nodes as needed; the root splits into a new root.  Writes the
  // changed nodes and then the meta page.  On an I/O error the tree on
  // disk may be left inconsistent.
  Status Put(uint64_t key, uint64_t value);

  // Replaces *pairs with every pair whose key lies in [low, high], in key
  // order (nothing if low > high).  The scan first walks the inner levels to
  // gather the page numbers of all leaves that may hold such keys, in key
  // order, then calls bptree_read_leaves to read and filter those leaves.
  // When `leaf_loop_ms` is not null, sets it to the milliseconds that call
  // took: the part of the scan a foreaction graph of bptree_read_leaves can
  // speed up (the inner levels and the result buffer's set-up come before).
  Status Scan(uint64_t low, uint64_t high, std::vector<bptree_pair>* pairs,
              double* leaf_loop_ms = nullptr);

  // Checks every invariant of the tree on disk (bypassing the cache): node
  // types per level, key counts, key order and ranges, the leaf chain, and
  // the counts in the meta page.  Returns Corruption naming the first
  // violation.  Reads every page: for tests and the `stats` tool.
  Status CheckInvariants() const;

  // Flushes written pages to the device.
  Status Sync() { return pager_->Sync(); }

  const TreeMeta& meta() const { return meta_; }
  const std::string& path() const { return pager_->path(); }

 private:
  // One step of the way from the root to a leaf.
  struct PathStep {
    uint64_t inner_page;
    uint32_t child_index;
  };

  Tree(std::unique_ptr<Pager> pager, const TreeMeta& meta, const Options& options);

  // Reads an inner node page, through the cache, and checks its header and
  // key count.
  Status LoadInnerPage(uint64_t page_number, Page* page);
  // Encodes, writes and caches an inner node.
  Status StoreInnerNode(uint64_t page_number, const InnerNode& node);
  // Reads a leaf page and checks its header and key count.
  Status LoadLeafPage(uint64_t page_number, Page* page) const;
  // Returns Corruption unless `page_number` names a node page of this tree.
  Status CheckChildPage(uint64_t page_number) const;
  // Walks from the root to the leaf for `key`, recording the inner steps in
  // *path (root first) and setting *leaf_page.
  Status FindLeaf(uint64_t key, std::vector<PathStep>* path, uint64_t* leaf_page);
  // Appends to *leaves, in key order, the leaf children of inner node
  // `page_number` at `level` (2 = parent of leaves) and below whose ranges
  // meet [low, high].  `scratch` holds one page per level, indexed by level.
  Status GatherLeaves(uint64_t page_number, uint32_t level, uint64_t low, uint64_t high,
                      Page* scratch, std::vector<uint64_t>* leaves);
  // Hands out the next page number at the end of the file.
  uint64_t AllocatePage() { return meta_.page_count++; }
  Status WriteMeta();

  std::unique_ptr<Pager> pager_;
  TreeMeta meta_;
  InnerPageCache inner_cache_;
};

}  // namespace bptree

#endif  // BPTREE_TREE_H_
