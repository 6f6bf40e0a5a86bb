#include "table_layout.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include "db/dbformat.h"
#include "leveldb/comparator.h"
#include "leveldb/filter_policy.h"
#include "leveldb/iterator.h"
#include "port/port.h"
#include "table/block.h"
#include "table/filter_block.h"
#include "table/format.h"

namespace leveldb_plugin {
namespace {

// The pread ReadBlock() in table/format.cc makes: contents plus trailer.
BlockRead ReadOf(const leveldb::BlockHandle& handle) {
  return BlockRead{handle.offset(), handle.size() + leveldb::kBlockTrailerSize};
}

// Closes a descriptor when it goes out of scope.
struct FileDescriptor {
  explicit FileDescriptor(int descriptor) : fd(descriptor) {}
  ~FileDescriptor() {
    if (fd >= 0) close(fd);
  }
  const int fd;
};

// Reads `read` from the page cache only (RWF_NOWAIT): the plugin never
// makes the device work.  Sets *not_in_memory when the bytes are not cached.
bool ReadExactly(int fd, const BlockRead& read, std::string* out, bool* not_in_memory) {
  out->resize(read.length);
  for (size_t done = 0; done < read.length;) {
    struct iovec piece = {out->data() + done, read.length - done};
    const ssize_t n = preadv2(fd, &piece, 1, static_cast<off_t>(read.offset + done), RWF_NOWAIT);
    if (n < 0 && errno == EAGAIN) *not_in_memory = true;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// ReadBlock() of table/format.cc (one pread of contents + trailer) into
// `contents`, uncompressed.
bool ReadBlock(int fd, const leveldb::BlockHandle& handle, std::string* contents, bool* not_in_memory) {
  std::string raw;
  if (!ReadExactly(fd, ReadOf(handle), &raw, not_in_memory)) return false;
  const char type = raw[handle.size()];
  raw.resize(handle.size());
  size_t length = 0;
  if (type == leveldb::kNoCompression) {
    *contents = std::move(raw);
    return true;
  }
  return type == leveldb::kSnappyCompression &&
         leveldb::port::Snappy_GetUncompressedLength(raw.data(), raw.size(), &length) &&
         (contents->resize(length), leveldb::port::Snappy_Uncompress(raw.data(), raw.size(), contents->data()));
}

leveldb::BlockContents Contents(const std::string& bytes) {
  return leveldb::BlockContents{leveldb::Slice(bytes), /*cachable=*/false, /*heap_allocated=*/false};
}

}  // namespace

TableLayout::~TableLayout() = default;

std::unique_ptr<TableLayout> TableLayout::Load(const std::string& path, uint64_t file_size,
                                               const leveldb::FilterPolicy* policy,
                                               bool* not_in_memory) {
  *not_in_memory = false;
  if (file_size < leveldb::Footer::kEncodedLength) return nullptr;
  // openat, not open: the plugin's wrapper of open(2) keeps LevelDB's descriptors.
  FileDescriptor file(openat(AT_FDCWD, path.c_str(), O_RDONLY | O_CLOEXEC));
  const BlockRead footer_read{file_size - leveldb::Footer::kEncodedLength, leveldb::Footer::kEncodedLength};
  std::string bytes;
  leveldb::Footer footer;
  if (file.fd < 0 || !ReadExactly(file.fd, footer_read, &bytes, not_in_memory)) return nullptr;
  leveldb::Slice input(bytes);
  if (!footer.DecodeFrom(&input).ok()) return nullptr;
  auto layout = std::unique_ptr<TableLayout>(new TableLayout());
  layout->open_reads_ = {footer_read, ReadOf(footer.index_handle())};
  if (!ReadBlock(file.fd, footer.index_handle(), &layout->index_contents_, not_in_memory)) return nullptr;
  layout->index_ = std::make_unique<leveldb::Block>(Contents(layout->index_contents_));
  if (policy == nullptr) return layout;
  // Table::ReadMeta: the metaindex names the filter block of this policy.
  layout->open_reads_.push_back(ReadOf(footer.metaindex_handle()));
  if (!ReadBlock(file.fd, footer.metaindex_handle(), &bytes, not_in_memory)) {
    return *not_in_memory ? nullptr : std::move(layout);
  }
  leveldb::Block metaindex(Contents(bytes));
  std::unique_ptr<leveldb::Iterator> entry(metaindex.NewIterator(leveldb::BytewiseComparator()));
  const std::string filter_key = std::string("filter.") + policy->Name();
  entry->Seek(filter_key);
  leveldb::BlockHandle filter;
  input = entry->Valid() && entry->key() == filter_key ? entry->value() : leveldb::Slice();
  if (!filter.DecodeFrom(&input).ok()) return layout;
  layout->open_reads_.push_back(ReadOf(filter));
  if (ReadBlock(file.fd, filter, &layout->filter_contents_, not_in_memory)) {
    layout->filter_ = std::make_unique<leveldb::FilterBlockReader>(policy, layout->filter_contents_);
  }
  return *not_in_memory ? nullptr : std::move(layout);
}

bool TableLayout::DataBlockFor(const leveldb::LookupKey& key, BlockRead* read) const {
  // Table::InternalGet: the index entry Seek() finds, then the filter.
  static const auto* comparator = new leveldb::InternalKeyComparator(leveldb::BytewiseComparator());
  std::unique_ptr<leveldb::Iterator> entry(index_->NewIterator(comparator));
  entry->Seek(key.internal_key());
  leveldb::Slice value = entry->Valid() ? entry->value() : leveldb::Slice();
  leveldb::BlockHandle handle;
  if (!handle.DecodeFrom(&value).ok() ||
      (filter_ != nullptr && !filter_->KeyMayMatch(handle.offset(), key.user_key()))) {
    return false;
  }
  *read = ReadOf(handle);
  return true;
}

}  // namespace leveldb_plugin
