// reopened_file.h: a descriptor of the runtime's own on a file the program
// holds open.
//
// Reads the runtime makes beside the program sometimes need a descriptor of
// their own on the program's file: one opened O_DIRECT (direct_reads.h), or
// one whose read-ahead state is not the program's (read_ahead_stream.h: the
// kernel keeps read-ahead state per open file description, and a
// descriptor's reads shape it).  ReopenReadOnly() makes one without the
// program seeing it: the number it takes is in foreactor's high range
// (engine/high_descriptors.h), so the program's own opens get
// the numbers they would get without foreactor, and it closes on exec.
//
// Such a descriptor is in the program's descriptor table, and the close of
// any descriptor of a file in that table releases every record lock
// (fcntl(2) F_SETLK) the process holds on the file: it is closed only with
// CloseUnlessLocked(), and a file locked when a descriptor would be made
// gets none (FileLocked()).  Threads of foreactor's own with a table of
// their own open files again by path with OpenSameRegularFile().
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

// Opens `path` with `flags` and returns the descriptor when it names the
// regular file on `device` with `inode` (the file the caller looked at
// before); otherwise closes what it opened and returns -1.  For a thread
// whose descriptor table is its own (TakeEmptyDescriptorTable(),
// base/quiet_thread.h): that close, in the program's table, could release
// the program's record locks on the file found instead.
int OpenSameRegularFile(const char* path, uint64_t flags, dev_t device, ino_t inode);

// True when a lock is held on some byte of the file `fd` names (a record
// lock of this process's or another's, or an open file description lock),
// and when the kernel cannot tell.  Asked with an open file description
// lock probe (F_OFD_GETLK), which the process's own record locks conflict
// with.
bool FileLocked(int fd);

// Closes `fd`, a descriptor of the runtime's own, unless FileLocked(fd)
// (its close would release the process's record locks on the file).
// Returns true when it was closed.
bool CloseUnlessLocked(int fd);

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_REOPENED_FILE_H_
