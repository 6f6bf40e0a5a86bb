// The process's descriptor table, grown before the run so that every
// configuration opens its tables into a table of the same size.
//
// The kernel grows a descriptor table when a descriptor above its size is
// taken.  In a process with more than one thread that waits for an RCU
// grace period (milliseconds), and LevelDB opens its
// tables from the client thread: a run that opens more than 256 or 512
// tables pays it there, inside a Get.  libforeactor grows the table at its
// load, so a plain run alone would pay it.
#ifndef FOREACTOR_APPS_LEVELDB_DRIVER_DESCRIPTOR_TABLE_H_
#define FOREACTOR_APPS_LEVELDB_DRIVER_DESCRIPTOR_TABLE_H_

#include <cstdint>

namespace leveldb_driver {

// Grows the calling process's descriptor table to the size libforeactor's
// load gives it, by the library's own code (src/engine/high_descriptors.h,
// compiled into the plain driver too): the soft RLIMIT_NOFILE, capped at
// 65,536 entries.  Call it while the process has one thread.  Does nothing
// when the limit cannot be read or the number just below it is taken.
void GrowDescriptorTable();

// The entries of the process's descriptor table now ("FDSize" of
// /proc/self/status); 0 when it cannot be read.
uint64_t DescriptorTableSize();

}  // namespace leveldb_driver

#endif  // FOREACTOR_APPS_LEVELDB_DRIVER_DESCRIPTOR_TABLE_H_
