// TreeMeta: what page 0 of a bptree file records about the whole tree.
//
// META PAGE (page 0), little-endian
//   offset  size  field
//   0       8     magic, kMetaMagic ("BPTREE" 0x00 0x01 as bytes)
//   8       4     format version, kFormatVersion
//   12      4     page size, kPageSize
//   16      4     degree
//   20      4     height: levels of nodes, 1 when the root is a leaf
//   24      8     root page
//   32      8     page count: pages in use, meta page included; the next
//                 page to allocate
//   40      8     entry count: key/value pairs in the tree
//   48      8     leaf count
//   56      8     first leaf page (the leftmost leaf)
//   64      ...   0
//
// The meta page on disk describes the tree on disk after every successful
// operation (create, put, bulk load).  A bulk load writes it last, so a file
// whose load failed has no valid meta page and does not open.

#ifndef BPTREE_META_H_
#define BPTREE_META_H_

#include <cstdint>

#include "page_format.h"
#include "status.h"

namespace bptree {

inline constexpr uint64_t kMetaMagic = 0x0100'4545'5254'5042;  // "BPTREE\0\1"
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint32_t kMaxHeight = 64;

struct TreeMeta {
  uint32_t degree = 0;
  uint32_t height = 0;
  uint64_t root_page = kNoPage;
  uint64_t page_count = 0;
  uint64_t entry_count = 0;
  uint64_t leaf_count = 0;
  uint64_t first_leaf_page = kNoPage;

  // Writes the whole meta page.
  void EncodeTo(Page* page) const;

  // Fills *meta from `page`.  Returns Corruption if the magic, version or
  // page size differ, or a field is out of range: degree outside
  // [kMinDegree, kMaxDegree], height outside [1, kMaxHeight], a page number
  // outside [1, page count), page count above MaxPageNumber() + 1, or a leaf
  // count of 0 or of page count or more.
  static Status Decode(const Page& page, TreeMeta* meta);
};

}  // namespace bptree

#endif  // BPTREE_META_H_
