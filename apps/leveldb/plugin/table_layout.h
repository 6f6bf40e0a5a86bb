// table_layout.h: what the plugin knows of one LevelDB table file, read
// from the file itself (LevelDB's documented table format, doc/table_format.md).
//
// A TableLayout answers, for a lookup key, which data block LevelDB's
// Table::InternalGet will read (the index block maps keys to block
// handles), whether the table's Bloom filter rules the key out first, and
// which reads LevelDB makes when its table cache opens the file.
#ifndef FOREACTOR_APPS_LEVELDB_PLUGIN_TABLE_LAYOUT_H_
#define FOREACTOR_APPS_LEVELDB_PLUGIN_TABLE_LAYOUT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace leveldb {
class FilterPolicy;
}

namespace leveldb_plugin {

// An internal key: a user key and its tag (sequence << 8 | value type).
struct InternalKey {
  std::string_view user_key;
  uint64_t tag = 0;
};

// LevelDB's internal key order: user keys bytewise ascending, then tags
// descending (newer entries first).  Negative, zero or positive.
int CompareInternalKeys(const InternalKey& a, const InternalKey& b);

// Splits an encoded internal key (user key + 8-byte little-endian tag).
// A key shorter than 8 bytes gets tag 0.
InternalKey DecodeInternalKey(std::string_view encoded);

// One pread LevelDB makes: `length` bytes at `offset`.
struct BlockRead {
  uint64_t offset = 0;
  uint64_t length = 0;
};

class TableLayout {
 public:
  // Reads the footer, index block and (when `policy` is not null) the
  // metaindex and filter blocks of the table at `path`, whose size is
  // `file_size`, through a descriptor of its own and from the page cache
  // only (it never makes the device read).  `policy` is the database's
  // filter policy; it must outlive the layout.  Returns null when a block
  // is not in the page cache (*not_in_memory: try again once LevelDB read
  // it), or the file cannot be read or is not a table LevelDB 1.23 wrote.
  static std::unique_ptr<TableLayout> Load(const std::string& path, uint64_t file_size,
                                           const leveldb::FilterPolicy* policy,
                                           bool* not_in_memory);

  // The data block read Table::InternalGet makes for `key`, or false when
  // it reads none: the key is past the last block, or the Bloom filter of
  // the block says it is absent.
  bool DataBlockFor(const InternalKey& key, BlockRead* read) const;

  // The reads Table::Open makes, in order: footer, index block, and, with a
  // filter policy, the metaindex block and the filter block (if present).
  const std::vector<BlockRead>& open_reads() const { return open_reads_; }

 private:
  struct IndexEntry {
    uint32_t key_offset;  // in index_keys_: encoded internal key, >= every key of the block
    uint32_t key_length;
    BlockRead block;      // the block's pread (contents plus 5-byte trailer)
  };

  bool FilterMayMatch(uint64_t block_offset, std::string_view user_key) const;

  std::vector<IndexEntry> index_;
  std::string index_keys_;  // every index key, back to back (one allocation, not one per key)
  std::vector<BlockRead> open_reads_;
  const leveldb::FilterPolicy* policy_ = nullptr;
  std::string filter_;  // the filter block, empty when there is none
};

}  // namespace leveldb_plugin

#endif  // FOREACTOR_APPS_LEVELDB_PLUGIN_TABLE_LAYOUT_H_
