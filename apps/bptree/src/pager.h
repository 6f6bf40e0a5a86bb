// Pager: the file of a tree and page-sized I/O on it.
//
// Pages are read with pread(2) and written with pwrite(2) at offset
// page_number * kPageSize; there is no mmap, no O_DIRECT and no cache here.
// The Pager owns the file descriptor and closes it when destroyed.  It does
// not know which pages are in use: that is the tree's meta data.
//
// Thread safety: ReadPage may run concurrently with other reads; writes
// need external synchronization with everything else.

#ifndef BPTREE_PAGER_H_
#define BPTREE_PAGER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "page_format.h"
#include "status.h"

namespace bptree {

class Pager {
 public:
  enum class OpenMode {
    kCreateOrTruncate,  // create the file, or empty an existing one
    kOpenExisting,      // the file must exist
  };

  // Opens `path` for reading and writing.  Returns NotFound if the file
  // does not exist in kOpenExisting mode, IOError for other failures.
  static Status Open(const std::string& path, OpenMode mode, std::unique_ptr<Pager>* pager);

  Pager(const Pager&) = delete;
  Pager& operator=(const Pager&) = delete;
  ~Pager();

  // The descriptor, for the leaf loops of leaf_io.h; owned by the Pager.
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  // Reads page `page_number` into *page.  Returns Corruption if the page
  // lies (partly) beyond the end of the file, InvalidArgument if the page
  // number is above MaxPageNumber(), IOError if pread fails.
  Status ReadPage(uint64_t page_number, Page* page) const;

  // Writes `page` as page `page_number`, extending the file if needed.
  // Returns InvalidArgument if the page number is above MaxPageNumber(),
  // IOError if pwrite fails.
  Status WritePage(uint64_t page_number, const Page& page);

  // The file size in whole pages (a partial last page does not count).
  Status SizeInPages(uint64_t* pages) const;

  // Flushes written pages to the device (fdatasync).
  Status Sync();

 private:
  Pager(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  const int fd_;
  const std::string path_;
};

}  // namespace bptree

#endif  // BPTREE_PAGER_H_
