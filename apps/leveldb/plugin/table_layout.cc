#include "table_layout.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cstring>

#include "leveldb/filter_policy.h"
#include "leveldb/slice.h"

#if __has_include(<snappy.h>)
#include <snappy.h>
#define LEVELDB_PLUGIN_HAVE_SNAPPY 1
#endif

namespace leveldb_plugin {
namespace {

constexpr uint64_t kFooterLength = 48;  // two padded block handles + magic
constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr uint64_t kBlockTrailer = 5;   // compression type + crc32c

uint64_t DecodeFixed(const char* p, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(p[i]);
  return value;
}

// Reads a varint at the front of `*input` and drops it; false when malformed.
bool TakeVarint(std::string_view* input, uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift <= 63 && !input->empty(); shift += 7) {
    const auto byte = static_cast<unsigned char>(input->front());
    input->remove_prefix(1);
    *value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) return true;
  }
  return false;
}

bool TakeBlockHandle(std::string_view* input, BlockRead* read) {
  uint64_t offset, size;
  if (!TakeVarint(input, &offset) || !TakeVarint(input, &size)) return false;
  *read = BlockRead{offset, size + kBlockTrailer};
  return true;
}

// Closes a descriptor when it goes out of scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Reads `read` from the page cache only (RWF_NOWAIT): the plugin never
// makes the device work.  Sets *not_in_memory when the bytes are not cached.
bool ReadExactly(int fd, const BlockRead& read, std::string* out, bool* not_in_memory) {
  out->resize(read.length);
  size_t done = 0;
  while (done < read.length) {
    struct iovec piece = {out->data() + done, read.length - done};
    const ssize_t n = preadv2(fd, &piece, 1, static_cast<off_t>(read.offset + done), RWF_NOWAIT);
    if (n < 0 && errno == EAGAIN) *not_in_memory = true;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Reads a block the way ReadBlock() in table/format.cc does (one pread of
// contents + trailer) and yields its uncompressed contents.
bool ReadBlockContents(int fd, const BlockRead& read, std::string* contents, bool* not_in_memory) {
  std::string raw;
  if (read.length < kBlockTrailer || !ReadExactly(fd, read, &raw, not_in_memory)) return false;
  const size_t size = read.length - kBlockTrailer;
  if (raw[size] == 0) {  // kNoCompression
    raw.resize(size);
    *contents = std::move(raw);
    return true;
  }
#ifdef LEVELDB_PLUGIN_HAVE_SNAPPY
  size_t length = 0;
  if (raw[size] == 1 && snappy::GetUncompressedLength(raw.data(), size, &length)) {
    contents->resize(length);
    return snappy::RawUncompress(raw.data(), size, contents->data());
  }
#endif
  return false;
}

// Calls `entry(key, value)` for each entry of a block (prefix-compressed
// keys, restart array at the end).  False when the block is malformed.
template <class Entry>
bool ForEachBlockEntry(std::string_view block, Entry&& entry) {
  if (block.size() < 4) return false;
  const uint64_t restarts = DecodeFixed(block.data() + block.size() - 4, 4);
  if (restarts > (block.size() - 4) / 4) return false;
  std::string_view input = block.substr(0, block.size() - 4 - 4 * restarts);
  std::string key;
  while (!input.empty()) {
    uint64_t shared, unshared, value_length;
    if (!TakeVarint(&input, &shared) || !TakeVarint(&input, &unshared) ||
        !TakeVarint(&input, &value_length) || shared > key.size() ||
        unshared + value_length > input.size()) {
      return false;
    }
    key.resize(shared);
    key.append(input.substr(0, unshared));
    entry(key, input.substr(unshared, value_length));
    input.remove_prefix(unshared + value_length);
  }
  return true;
}

}  // namespace

InternalKey DecodeInternalKey(std::string_view encoded) {
  if (encoded.size() < 8) return InternalKey{encoded, 0};
  return InternalKey{encoded.substr(0, encoded.size() - 8),
                     DecodeFixed(encoded.data() + encoded.size() - 8, 8)};
}

int CompareInternalKeys(const InternalKey& a, const InternalKey& b) {
  const int order = a.user_key.compare(b.user_key);  // bytewise, as memcmp
  if (order != 0) return order;
  return a.tag > b.tag ? -1 : (a.tag < b.tag ? 1 : 0);
}

std::unique_ptr<TableLayout> TableLayout::Load(const std::string& path, uint64_t file_size,
                                               const leveldb::FilterPolicy* policy,
                                               bool* not_in_memory) {
  *not_in_memory = false;
  if (file_size < kFooterLength) return nullptr;
  FileDescriptor file(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  std::string footer;
  const BlockRead footer_read{file_size - kFooterLength, kFooterLength};
  if (file.get() < 0 || !ReadExactly(file.get(), footer_read, &footer, not_in_memory) ||
      DecodeFixed(footer.data() + kFooterLength - 8, 8) != kTableMagic) {
    return nullptr;
  }
  std::string_view handles(footer);
  BlockRead metaindex_read, index_read;
  if (!TakeBlockHandle(&handles, &metaindex_read) || !TakeBlockHandle(&handles, &index_read)) {
    return nullptr;
  }
  auto layout = std::unique_ptr<TableLayout>(new TableLayout());
  layout->policy_ = policy;
  layout->open_reads_ = {footer_read, index_read};
  std::string index;
  bool bad_handle = false;
  const bool parsed =
      ReadBlockContents(file.get(), index_read, &index, not_in_memory) &&
      ForEachBlockEntry(index, [&](const std::string& key, std::string_view value) {
        BlockRead block;
        bad_handle = bad_handle || !TakeBlockHandle(&value, &block);
        layout->index_.push_back({static_cast<uint32_t>(layout->index_keys_.size()),
                                  static_cast<uint32_t>(key.size()), block});
        layout->index_keys_.append(key);
      });
  if (!parsed || bad_handle) return nullptr;
  if (policy == nullptr) return layout;
  // Table::ReadMeta: the metaindex names the filter block of this policy.
  layout->open_reads_.push_back(metaindex_read);
  std::string metaindex;
  const std::string filter_key = std::string("filter.") + policy->Name();
  BlockRead filter_read{0, 0};
  if (ReadBlockContents(file.get(), metaindex_read, &metaindex, not_in_memory)) {
    ForEachBlockEntry(metaindex, [&](const std::string& key, std::string_view value) {
      if (key == filter_key) TakeBlockHandle(&value, &filter_read);
    });
  }
  if (*not_in_memory) return nullptr;
  if (filter_read.length > 0) {
    layout->open_reads_.push_back(filter_read);
    if (!ReadBlockContents(file.get(), filter_read, &layout->filter_, not_in_memory)) {
      layout->filter_.clear();
    }
  }
  return *not_in_memory ? nullptr : std::move(layout);
}

bool TableLayout::DataBlockFor(const InternalKey& key, BlockRead* read) const {
  // Block::Iter::Seek: the first index entry whose key is >= `key`.
  auto entry = std::lower_bound(index_.begin(), index_.end(), key,
                                [this](const IndexEntry& e, const InternalKey& k) {
                                  const std::string_view encoded(index_keys_.data() + e.key_offset, e.key_length);
                                  return CompareInternalKeys(DecodeInternalKey(encoded), k) < 0;
                                });
  if (entry == index_.end()) return false;
  if (policy_ != nullptr && !filter_.empty() && !FilterMayMatch(entry->block.offset, key.user_key)) {
    return false;
  }
  *read = entry->block;
  return true;
}

// FilterBlockReader::KeyMayMatch (table/filter_block.cc) on our copy of the
// filter block; the policy sees the user key, as LevelDB's internal filter
// policy passes it on.
bool TableLayout::FilterMayMatch(uint64_t block_offset, std::string_view user_key) const {
  const size_t n = filter_.size();
  if (n < 5) return true;
  const unsigned base_lg = static_cast<unsigned char>(filter_[n - 1]);
  const uint64_t array_start = DecodeFixed(filter_.data() + n - 5, 4);
  if (array_start > n - 5) return true;
  const uint64_t filters = (n - 5 - array_start) / 4;
  const uint64_t index = base_lg < 64 ? block_offset >> base_lg : 0;
  if (index >= filters) return true;
  const uint64_t start = DecodeFixed(filter_.data() + array_start + index * 4, 4);
  const uint64_t limit = DecodeFixed(filter_.data() + array_start + index * 4 + 4, 4);
  if (start <= limit && limit <= array_start) {
    return policy_->KeyMayMatch(leveldb::Slice(user_key.data(), user_key.size()),
                                leveldb::Slice(filter_.data() + start, limit - start));
  }
  return start != limit;  // an empty filter matches no key; errors match all
}

}  // namespace leveldb_plugin
