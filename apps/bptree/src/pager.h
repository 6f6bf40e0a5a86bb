// Pager: the file of a tree and page-sized I/O on it.
//
// Pages are read with pread(2) and written with pwrite(2) at offset
// page_number * kPageSize; there is no mmap and no cache here.  In
// IoMode::kDirect the file is opened with O_DIRECT: every page read and
// write goes to the device, bypassing the kernel's page cache (offsets and
// lengths are whole pages, and Page buffers are kPageAlignment-aligned, as
// O_DIRECT requires).
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

  enum class IoMode {
    kBuffered,  // through the kernel's page cache
    kDirect,    // O_DIRECT: no kernel page cache
  };

  // Opens `path` for reading and writing.  Returns NotFound if the file
  // does not exist in kOpenExisting mode, IOError for other failures (in
  // kDirect mode also when the file system refuses O_DIRECT, EINVAL).
  static Status Open(const std::string& path, OpenMode mode, IoMode io_mode,
                     std::unique_ptr<Pager>* pager);
  // The same in IoMode::kBuffered.
  static Status Open(const std::string& path, OpenMode mode, std::unique_ptr<Pager>* pager) {
    return Open(path, mode, IoMode::kBuffered, pager);
  }

  Pager(const Pager&) = delete;
  Pager& operator=(const Pager&) = delete;
  ~Pager();

  // The descriptor, for the leaf loops of leaf_io.h; owned by the Pager.
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  IoMode io_mode() const { return io_mode_; }

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

  // Allocates disk space for pages [first_page, first_page + page_count)
  // (fallocate(2), mode 0: the file grows to cover them, new bytes read as
  // zeros).  Writing such pages later is an overwrite of allocated blocks,
  // which file systems can run in parallel under O_DIRECT, where writes
  // that extend the file are serialized.  A file system without fallocate
  // (EOPNOTSUPP) is not an error: nothing is done.  Returns IOError for
  // other failures (e.g. ENOSPC), InvalidArgument for an out-of-range page.
  Status Preallocate(uint64_t first_page, uint64_t page_count);

  // Flushes written pages to the device (fdatasync).
  Status Sync();

 private:
  Pager(int fd, std::string path, IoMode io_mode)
      : fd_(fd), path_(std::move(path)), io_mode_(io_mode) {}

  const int fd_;
  const std::string path_;
  const IoMode io_mode_;
};

}  // namespace bptree

#endif  // BPTREE_PAGER_H_
