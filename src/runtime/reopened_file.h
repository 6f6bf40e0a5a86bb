// reopened_file.h: a descriptor of the runtime's own on a file the program
// holds open.
//
// Reads the runtime makes beside the program sometimes need a descriptor of
// their own on the program's file: one opened O_DIRECT (direct_reads.h), or
// one whose read-ahead state is not the program's (read_ahead_stream.h: the
// kernel keeps read-ahead state per open file description, and a
// descriptor's reads shape it).  ReopenReadOnly() makes one without the
// program seeing it: the number it takes is in the high range that early
// opens are parked in (descriptor_parking.h), so the program's own opens get
// the numbers they would get without foreactor, and it closes on exec.
#ifndef FOREACTOR_RUNTIME_REOPENED_FILE_H_
#define FOREACTOR_RUNTIME_REOPENED_FILE_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>

namespace foreactor {

// Opens the file that the program's descriptor `fd` names once more,
// read-only, close-on-exec, with `flags` added (O_DIRECT, say) and with
// O_NOATIME when `fd` has it (reads on `fd` leave the access time alone:
// so do ours), through /proc/self/fd.  Returns the new descriptor, at a
// number in the high range, with `*status` its fstat; or -1 when any step
// fails, or when the file opened is not the one on `device` with `inode`
// (`fd` was closed and its number reused since the caller looked).
int ReopenReadOnly(int fd, uint64_t flags, dev_t device, ino_t inode, struct stat* status);

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_REOPENED_FILE_H_
