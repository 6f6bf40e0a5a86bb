// Switching off LevelDB's memory-mapped reads of table files.
//
// LevelDB 1.23's POSIX Env maps up to 1000 read-only table files with mmap
// (on 64-bit hosts) and reads them with memcpy; only files beyond that limit
// are read with pread.  foreactor can only issue system calls ahead, so the
// case study reads every table with pread, which LevelDB does when the limit
// is 0.  LevelDB ships the switch as util/env_posix_test_helper.h
// (EnvPosixTestHelper::SetReadOnlyMMapLimit), whose setters are private to
// the class it befriends, leveldb::EnvPosixTest.  no_mmap_reads.cc defines
// that class, in this program only, as a gateway; LevelDB's
// files are not touched.  (util/env_posix_test.cc defines a class of the
// same name: never link the two into one program.)
#ifndef FOREACTOR_APPS_LEVELDB_SUPPORT_NO_MMAP_READS_H_
#define FOREACTOR_APPS_LEVELDB_SUPPORT_NO_MMAP_READS_H_

namespace leveldb_case_study {

// Makes the POSIX Env read every table file with pread.  Must be called
// before the first leveldb::Env::Default() (the Env reads the limit when it
// is created); later calls have no effect.  Never fails.
void DisableMmapTableReads();

// Makes the POSIX Env keep no table file open: every read opens the file,
// reads it with pread and closes it (what LevelDB does once its limit of
// read-only descriptors is reached).  For tests of that case; the same
// rules as DisableMmapTableReads.
void CloseTableFilesAfterEachRead();

}  // namespace leveldb_case_study

#endif  // FOREACTOR_APPS_LEVELDB_SUPPORT_NO_MMAP_READS_H_
