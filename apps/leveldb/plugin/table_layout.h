// table_layout.h: what the plugin knows of one LevelDB table file, read
// from the file itself with LevelDB's own format code (table/format.h,
// table/block.h, table/filter_block.h).
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
#include <vector>

namespace leveldb {
class Block;
class FilterBlockReader;
class FilterPolicy;
class LookupKey;
}  // namespace leveldb

namespace leveldb_plugin {

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
  ~TableLayout();

  // The data block read Table::InternalGet makes for `key`, or false when
  // it reads none: the key is past the last block, or the Bloom filter of
  // the block says it is absent.
  bool DataBlockFor(const leveldb::LookupKey& key, BlockRead* read) const;

  // The reads Table::Open makes, in order: footer, index block, and, with a
  // filter policy, the metaindex block and the filter block (if present).
  const std::vector<BlockRead>& open_reads() const { return open_reads_; }

 private:
  TableLayout() = default;

  std::vector<BlockRead> open_reads_;
  std::string index_contents_, filter_contents_;
  std::unique_ptr<leveldb::Block> index_;
  std::unique_ptr<leveldb::FilterBlockReader> filter_;  // null: no filter
};

}  // namespace leveldb_plugin

#endif  // FOREACTOR_APPS_LEVELDB_PLUGIN_TABLE_LAYOUT_H_
