#include "meta.h"

#include <cstring>

namespace bptree {

namespace {

constexpr size_t kMagicOffset = 0;
constexpr size_t kVersionOffset = 8;
constexpr size_t kPageSizeOffset = 12;
constexpr size_t kDegreeOffset = 16;
constexpr size_t kHeightOffset = 20;
constexpr size_t kRootPageOffset = 24;
constexpr size_t kPageCountOffset = 32;
constexpr size_t kEntryCountOffset = 40;
constexpr size_t kLeafCountOffset = 48;
constexpr size_t kFirstLeafPageOffset = 56;

bool IsNodePage(uint64_t page_number, uint64_t page_count) {
  return page_number != kNoPage && page_number < page_count;
}

}  // namespace

void TreeMeta::EncodeTo(Page* page) const {
  std::memset(page->bytes, 0, kPageSize);
  StoreU64(page->bytes + kMagicOffset, kMetaMagic);
  StoreU32(page->bytes + kVersionOffset, kFormatVersion);
  StoreU32(page->bytes + kPageSizeOffset, static_cast<uint32_t>(kPageSize));
  StoreU32(page->bytes + kDegreeOffset, degree);
  StoreU32(page->bytes + kHeightOffset, height);
  StoreU64(page->bytes + kRootPageOffset, root_page);
  StoreU64(page->bytes + kPageCountOffset, page_count);
  StoreU64(page->bytes + kEntryCountOffset, entry_count);
  StoreU64(page->bytes + kLeafCountOffset, leaf_count);
  StoreU64(page->bytes + kFirstLeafPageOffset, first_leaf_page);
}

Status TreeMeta::Decode(const Page& page, TreeMeta* meta) {
  if (LoadU64(page.bytes + kMagicOffset) != kMetaMagic) {
    return Status::Corruption("not a bptree file (bad magic in page 0)");
  }
  if (LoadU32(page.bytes + kVersionOffset) != kFormatVersion) {
    return Status::Corruption("unsupported bptree format version");
  }
  if (LoadU32(page.bytes + kPageSizeOffset) != kPageSize) {
    return Status::Corruption("page size in page 0 is not 8192");
  }
  TreeMeta decoded;
  decoded.degree = LoadU32(page.bytes + kDegreeOffset);
  decoded.height = LoadU32(page.bytes + kHeightOffset);
  decoded.root_page = LoadU64(page.bytes + kRootPageOffset);
  decoded.page_count = LoadU64(page.bytes + kPageCountOffset);
  decoded.entry_count = LoadU64(page.bytes + kEntryCountOffset);
  decoded.leaf_count = LoadU64(page.bytes + kLeafCountOffset);
  decoded.first_leaf_page = LoadU64(page.bytes + kFirstLeafPageOffset);
  if (decoded.degree < kMinDegree || decoded.degree > kMaxDegree) {
    return Status::Corruption("degree in page 0 is out of range");
  }
  if (decoded.height < 1 || decoded.height > kMaxHeight) {
    return Status::Corruption("height in page 0 is out of range");
  }
  if (decoded.page_count > MaxPageNumber() + 1) {
    return Status::Corruption("page count in page 0 is out of range");
  }
  if (!IsNodePage(decoded.root_page, decoded.page_count) ||
      !IsNodePage(decoded.first_leaf_page, decoded.page_count)) {
    return Status::Corruption("root or first leaf page in page 0 is out of range");
  }
  if (decoded.leaf_count == 0 || decoded.leaf_count >= decoded.page_count) {
    return Status::Corruption("leaf count in page 0 is out of range");
  }
  *meta = decoded;
  return Status::OK();
}

}  // namespace bptree
