#include "pager.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace bptree {

namespace {

std::string PageContext(const char* action, uint64_t page_number, const std::string& path) {
  return std::string(action) + " page " + std::to_string(page_number) + " of " + path;
}

}  // namespace

Status Pager::Open(const std::string& path, OpenMode mode, IoMode io_mode,
                   std::unique_ptr<Pager>* pager) {
  int flags = O_RDWR | O_CLOEXEC;
  if (mode == OpenMode::kCreateOrTruncate) flags |= O_CREAT | O_TRUNC;
  if (io_mode == IoMode::kDirect) flags |= O_DIRECT;
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) {
    int error = errno;
    if (error == ENOENT && mode == OpenMode::kOpenExisting) return Status::NotFound(path);
    return Status::IOError(
        std::string("open ") + path + (io_mode == IoMode::kDirect ? " with O_DIRECT" : ""), error);
  }
  pager->reset(new Pager(fd, path, io_mode));
  return Status::OK();
}

Pager::~Pager() { ::close(fd_); }

Status Pager::ReadPage(uint64_t page_number, Page* page) const {
  if (page_number > MaxPageNumber()) return Status::InvalidArgument("page number out of range");
  size_t done = 0;
  while (done < kPageSize) {
    ssize_t result = ::pread(fd_, page->bytes + done, kPageSize - done,
                             static_cast<off_t>(PageOffset(page_number) + done));
    if (result < 0) {
      if (errno == EINTR) continue;
      return Status::IOError(PageContext("read", page_number, path_), errno);
    }
    if (result == 0) {
      return Status::Corruption(PageContext("end of file in", page_number, path_));
    }
    done += static_cast<size_t>(result);
  }
  return Status::OK();
}

Status Pager::WritePage(uint64_t page_number, const Page& page) {
  if (page_number > MaxPageNumber()) return Status::InvalidArgument("page number out of range");
  size_t done = 0;
  while (done < kPageSize) {
    ssize_t result = ::pwrite(fd_, page.bytes + done, kPageSize - done,
                              static_cast<off_t>(PageOffset(page_number) + done));
    if (result < 0) {
      if (errno == EINTR) continue;
      return Status::IOError(PageContext("write", page_number, path_), errno);
    }
    if (result == 0) return Status::IOError(PageContext("write", page_number, path_), EIO);
    done += static_cast<size_t>(result);
  }
  return Status::OK();
}

Status Pager::SizeInPages(uint64_t* pages) const {
  struct stat info;
  if (::fstat(fd_, &info) != 0) return Status::IOError("fstat " + path_, errno);
  *pages = static_cast<uint64_t>(info.st_size) / kPageSize;
  return Status::OK();
}

Status Pager::Preallocate(uint64_t first_page, uint64_t page_count) {
  if (page_count == 0) return Status::OK();
  const uint64_t last_page = first_page + page_count - 1;
  if (last_page < first_page || last_page > MaxPageNumber()) {
    return Status::InvalidArgument("page number out of range");
  }
  int result = -1;
  do {
    result = ::fallocate(fd_, 0, static_cast<off_t>(PageOffset(first_page)),
                         static_cast<off_t>(page_count * kPageSize));
  } while (result != 0 && errno == EINTR);
  if (result != 0 && errno != EOPNOTSUPP) {
    return Status::IOError(PageContext("preallocate", first_page, path_), errno);
  }
  return Status::OK();
}

Status Pager::Sync() {
  if (::fdatasync(fd_) != 0) return Status::IOError("fdatasync " + path_, errno);
  return Status::OK();
}

}  // namespace bptree
