// The serial loop of leaf reads of a range scan, alone in this file so that
// a link-time wrap (--wrap=bptree_read_leaves) can redirect the tree's call.

#include <errno.h>
#include <unistd.h>

#include "leaf_io.h"
#include "page_format.h"

static_assert(BPTREE_PAGE_SIZE == bptree::kPageSize);

namespace {

// Reads one whole page; returns false with errno set on failure.
bool ReadWholePage(int fd, uint64_t page_number, bptree::Page* page) {
  if (page_number > bptree::MaxPageNumber()) {
    errno = EINVAL;
    return false;
  }
  const off_t offset = static_cast<off_t>(bptree::PageOffset(page_number));
  size_t done = 0;
  while (done < bptree::kPageSize) {
    ssize_t result =
        pread(fd, page->bytes + done, bptree::kPageSize - done, offset + static_cast<off_t>(done));
    if (result < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (result == 0) {
      errno = EBADMSG;
      return false;
    }
    done += static_cast<size_t>(result);
  }
  return true;
}

}  // namespace

extern "C" int64_t bptree_read_leaves(int fd, const uint64_t* leaf_pages, size_t leaf_count,
                                      uint64_t low, uint64_t high, bptree_pair* out,
                                      size_t out_capacity) {
  bptree::Page page;
  size_t stored = 0;
  for (size_t i = 0; i < leaf_count; ++i) {
    if (!ReadWholePage(fd, leaf_pages[i], &page)) return -1;
    bptree::NodePageView leaf(page);
    if (!leaf.HasValidHeader(bptree::NodeType::kLeaf)) {
      errno = EBADMSG;
      return -1;
    }
    const uint32_t count = leaf.key_count();
    for (uint32_t slot = leaf.LowerBound(low); slot < count; ++slot) {
      const uint64_t key = leaf.key(slot);
      if (key > high) break;
      if (stored == out_capacity) {
        errno = ENOBUFS;
        return -1;
      }
      out[stored].key = key;
      out[stored].value = leaf.value(slot);
      ++stored;
    }
  }
  return static_cast<int64_t>(stored);
}
