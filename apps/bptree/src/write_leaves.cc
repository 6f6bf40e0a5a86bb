// The serial loop of leaf writes of a bulk load, alone in this file so that
// a link-time wrap (--wrap=bptree_write_leaves) can redirect the loader's
// call.

#include <errno.h>
#include <unistd.h>

#include <cstdint>

#include "leaf_io.h"
#include "page_format.h"

static_assert(BPTREE_PAGE_SIZE == bptree::kPageSize);

extern "C" int bptree_write_leaves(int fd, uint64_t first_page, const void* pages,
                                   size_t page_count) {
  const auto* bytes = static_cast<const uint8_t*>(pages);
  for (size_t i = 0; i < page_count; ++i) {
    const uint64_t page_number = first_page + i;
    if (page_number < first_page || page_number > bptree::MaxPageNumber()) {
      errno = EINVAL;
      return -1;
    }
    const uint8_t* page = bytes + i * bptree::kPageSize;
    const off_t offset = static_cast<off_t>(bptree::PageOffset(page_number));
    size_t done = 0;
    while (done < bptree::kPageSize) {
      ssize_t result =
          pwrite(fd, page + done, bptree::kPageSize - done, offset + static_cast<off_t>(done));
      if (result < 0) {
        if (errno == EINTR) continue;
        return -1;
      }
      if (result == 0) {
        errno = EIO;
        return -1;
      }
      done += static_cast<size_t>(result);
    }
  }
  return 0;
}
