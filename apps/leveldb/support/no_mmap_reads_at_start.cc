// Linked into LevelDB's test programs (foreactor variants): switches
// memory-mapped table reads off before main(), before any test creates the
// default Env, since the tests' sources stay as LevelDB ships them.
#include "support/no_mmap_reads.h"

namespace {

struct DisableAtStart {
  DisableAtStart() { leveldb_case_study::DisableMmapTableReads(); }
};

const DisableAtStart disable_at_start;

}  // namespace
