#include "support/no_mmap_reads.h"

#include "util/env_posix_test_helper.h"

namespace leveldb {

// The class LevelDB's helper names as its friend (see no_mmap_reads.h).
class EnvPosixTest {
 public:
  static void SetReadOnlyMMapLimit(int limit) { EnvPosixTestHelper::SetReadOnlyMMapLimit(limit); }
  static void SetReadOnlyFDLimit(int limit) { EnvPosixTestHelper::SetReadOnlyFDLimit(limit); }
};

}  // namespace leveldb

namespace leveldb_case_study {

void DisableMmapTableReads() { leveldb::EnvPosixTest::SetReadOnlyMMapLimit(0); }

void CloseTableFilesAfterEachRead() { leveldb::EnvPosixTest::SetReadOnlyFDLimit(0); }

}  // namespace leveldb_case_study
