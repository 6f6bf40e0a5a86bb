// version_listing.h: the table files of one LevelDB Version, and the ones a
// lookup visits.
//
// The listing is the text of Version::DebugString(), the function behind
// the public property "leveldb.sstables": per level, each file's number,
// size and smallest/largest internal keys (user keys escaped as \xHH where
// not printable).
#ifndef FOREACTOR_APPS_LEVELDB_PLUGIN_VERSION_LISTING_H_
#define FOREACTOR_APPS_LEVELDB_PLUGIN_VERSION_LISTING_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "table_layout.h"

namespace leveldb_plugin {

struct TableFile {
  uint64_t number = 0;
  uint64_t size = 0;
  std::string smallest_user_key, largest_user_key;
  uint64_t smallest_tag = 0, largest_tag = 0;
};

class VersionListing {
 public:
  static constexpr int kLevels = 7;  // config::kNumLevels

  // Parses a listing.  False when the text is not in the expected form (a
  // key LevelDB could not decode, an unknown line): then use no listing.
  bool Parse(std::string_view text);

  // Appends the files Version::ForEachOverlapping visits for `key`, in its
  // order: level-0 files whose user-key range holds the key, newest
  // (highest number) first, then per deeper level the first file whose
  // largest key is >= `key`, unless its smallest user key is greater.
  void Candidates(const InternalKey& key, std::vector<const TableFile*>* out) const;

  // Some file of the listing, or null when it has none.
  const TableFile* AnyFile() const;

  // Whether file `number` is in the listing.
  bool Contains(uint64_t number) const;

 private:
  std::vector<TableFile> levels_[kLevels];
};

}  // namespace leveldb_plugin

#endif  // FOREACTOR_APPS_LEVELDB_PLUGIN_VERSION_LISTING_H_
