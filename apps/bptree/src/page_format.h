// The on-disk format of a bptree file, and accessors for node pages.
//
// FILE
//   One file holds the whole tree as an array of pages of kPageSize (8 KiB)
//   bytes: page N occupies bytes [N * kPageSize, (N + 1) * kPageSize).
//   Page 0 is the meta page (layout in meta.h).  Every other page in use is
//   a node page, a leaf or an inner node.  Page number 0 never names a node,
//   so 0 also means "no page".  Integers are stored in little-endian byte
//   order (the code requires a little-endian host).
//
// NODE PAGE
//   offset  size       field
//   0       2          type: 1 = leaf, 2 = inner node
//   2       2          reserved, 0
//   4       4          key count n, 0 <= n <= degree <= kMaxDegree
//   8       8          leaf: page number of the right sibling leaf, 0 for
//                      the rightmost leaf; inner node: 0
//   16      8          reserved, 0
//   24      8 * 510    keys[0 .. n), strictly increasing; unused slots 0
//   4104    8 * 511    leaf: values[0 .. n), values[i] belongs to keys[i]
//                      (510 slots used at most, the last 8 bytes stay 0);
//                      inner node: children[0 .. n], page numbers
//
//   An inner node with keys k[0 .. n) and children c[0 .. n] sends a key x
//   to c[i] where i is the number of keys <= x: c[i] holds exactly the keys
//   in [k[i-1], k[i]) of its parent's range.  A separator equals the
//   smallest key of the subtree on its right when it was made.
//
//   The degree of a tree (the most keys a node may hold; a node that would
//   get one more splits) is chosen when the tree is created, between
//   kMinDegree and kMaxDegree.  kMaxDegree = 510 is the largest that fits:
//   an inner node then takes 24 + 510 * 8 + 511 * 8 = 8192 bytes and a leaf
//   24 + 510 * 16 = 8184 bytes.

#ifndef BPTREE_PAGE_FORMAT_H_
#define BPTREE_PAGE_FORMAT_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace bptree {

static_assert(std::endian::native == std::endian::little,
              "the bptree file format is little-endian");

inline constexpr size_t kPageSize = 8192;
inline constexpr uint32_t kMinDegree = 3;
inline constexpr uint32_t kMaxDegree = 510;

inline constexpr size_t kNodeTypeOffset = 0;
inline constexpr size_t kKeyCountOffset = 4;
inline constexpr size_t kRightSiblingOffset = 8;
inline constexpr size_t kNodeHeaderSize = 24;
inline constexpr size_t kKeysOffset = kNodeHeaderSize;
inline constexpr size_t kSlotsOffset = kKeysOffset + 8 * kMaxDegree;  // values or children
static_assert(kSlotsOffset + 8 * (kMaxDegree + 1) == kPageSize,
              "an inner node of the largest degree fills a page exactly");

inline constexpr uint64_t kNoPage = 0;

enum class NodeType : uint16_t { kLeaf = 1, kInner = 2 };

// The alignment of every page buffer: O_DIRECT (Pager::IoMode::kDirect)
// needs buffers aligned to the device's logical block size; a memory page
// (4 KiB) satisfies every common device.
inline constexpr size_t kPageAlignment = 4096;

// One page in memory, aligned for direct I/O wherever it lives (stack,
// new[], members).
struct alignas(kPageAlignment) Page {
  uint8_t bytes[kPageSize];
};
static_assert(sizeof(Page) == kPageSize);

// Byte offset of page `page_number` in the file.  Callers check that the
// page number is below MaxPageNumber() first.
inline constexpr uint64_t PageOffset(uint64_t page_number) { return page_number * kPageSize; }
// The largest page number whose page still lies within a 63-bit file offset.
inline constexpr uint64_t MaxPageNumber() { return (UINT64_C(1) << 63) / kPageSize - 1; }

inline uint64_t LoadU64(const uint8_t* at) {
  uint64_t value;
  std::memcpy(&value, at, sizeof(value));
  return value;
}
inline uint32_t LoadU32(const uint8_t* at) {
  uint32_t value;
  std::memcpy(&value, at, sizeof(value));
  return value;
}
inline uint16_t LoadU16(const uint8_t* at) {
  uint16_t value;
  std::memcpy(&value, at, sizeof(value));
  return value;
}
inline void StoreU64(uint8_t* at, uint64_t value) { std::memcpy(at, &value, sizeof(value)); }
inline void StoreU32(uint8_t* at, uint32_t value) { std::memcpy(at, &value, sizeof(value)); }
inline void StoreU16(uint8_t* at, uint16_t value) { std::memcpy(at, &value, sizeof(value)); }

// Read-only view of a node page.  It does not own the bytes, which must stay
// alive and unchanged while the view is used.  The accessors do not check
// bounds: call HasValidHeader() before trusting key_count().
class NodePageView {
 public:
  explicit NodePageView(const uint8_t* bytes) : bytes_(bytes) {}
  explicit NodePageView(const Page& page) : bytes_(page.bytes) {}

  uint16_t type_code() const { return LoadU16(bytes_ + kNodeTypeOffset); }
  bool is_leaf() const { return type_code() == static_cast<uint16_t>(NodeType::kLeaf); }
  bool is_inner() const { return type_code() == static_cast<uint16_t>(NodeType::kInner); }
  uint32_t key_count() const { return LoadU32(bytes_ + kKeyCountOffset); }
  uint64_t right_sibling() const { return LoadU64(bytes_ + kRightSiblingOffset); }

  // Requires index < key_count().
  uint64_t key(uint32_t index) const { return LoadU64(bytes_ + kKeysOffset + 8 * size_t{index}); }
  // Leaf only; requires index < key_count().
  uint64_t value(uint32_t index) const {
    return LoadU64(bytes_ + kSlotsOffset + 8 * size_t{index});
  }
  // Inner node only; requires index <= key_count().
  uint64_t child(uint32_t index) const {
    return LoadU64(bytes_ + kSlotsOffset + 8 * size_t{index});
  }

  // True if the page is a node of type `expected` whose key count is at most
  // kMaxDegree.  Says nothing about the keys themselves.
  bool HasValidHeader(NodeType expected) const {
    return type_code() == static_cast<uint16_t>(expected) && key_count() <= kMaxDegree;
  }

  // The first index i with key(i) >= `key`, or key_count() if none.
  // Requires a valid header.
  uint32_t LowerBound(uint64_t key) const {
    uint32_t low = 0, high = key_count();
    while (low < high) {
      uint32_t middle = low + (high - low) / 2;
      if (this->key(middle) < key) {
        low = middle + 1;
      } else {
        high = middle;
      }
    }
    return low;
  }

  // The first index i with key(i) > `key`, or key_count() if none.  For an
  // inner node this is the index of the child whose range holds `key`.
  // Requires a valid header.
  uint32_t UpperBound(uint64_t key) const {
    uint32_t low = 0, high = key_count();
    while (low < high) {
      uint32_t middle = low + (high - low) / 2;
      if (this->key(middle) <= key) {
        low = middle + 1;
      } else {
        high = middle;
      }
    }
    return low;
  }

 private:
  const uint8_t* bytes_;
};

// Writes the fields of a node page.  It does not own the bytes.
class NodePageWriter {
 public:
  explicit NodePageWriter(uint8_t* bytes) : bytes_(bytes) {}
  explicit NodePageWriter(Page* page) : bytes_(page->bytes) {}

  // Zeroes the page and writes a header for an empty node of `type`.
  void Reset(NodeType type) {
    std::memset(bytes_, 0, kPageSize);
    StoreU16(bytes_ + kNodeTypeOffset, static_cast<uint16_t>(type));
  }
  void set_key_count(uint32_t count) { StoreU32(bytes_ + kKeyCountOffset, count); }
  void set_right_sibling(uint64_t page_number) {
    StoreU64(bytes_ + kRightSiblingOffset, page_number);
  }
  // Requires index < kMaxDegree.
  void set_key(uint32_t index, uint64_t key) {
    StoreU64(bytes_ + kKeysOffset + 8 * size_t{index}, key);
  }
  // Leaf; requires index < kMaxDegree.
  void set_value(uint32_t index, uint64_t value) {
    StoreU64(bytes_ + kSlotsOffset + 8 * size_t{index}, value);
  }
  // Inner node; requires index <= kMaxDegree.
  void set_child(uint32_t index, uint64_t page_number) {
    StoreU64(bytes_ + kSlotsOffset + 8 * size_t{index}, page_number);
  }

 private:
  uint8_t* bytes_;
};

}  // namespace bptree

#endif  // BPTREE_PAGE_FORMAT_H_
