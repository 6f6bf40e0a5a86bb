// syscall_log.h: the I/O system calls the recorder logs, as JSON objects.
#ifndef FOREACTOR_TOOLS_TRACE_SYSCALL_LOG_H_
#define FOREACTOR_TOOLS_TRACE_SYSCALL_LOG_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace foreactor_trace {

// True for the x86-64 system call numbers the recorder logs: open, openat,
// close, read, pread64, write, pwrite64, readv, writev, preadv(2),
// pwritev(2), lseek, stat, lstat, fstat, newfstatat, statx, getdents64.
bool IsLoggedSyscall(uint64_t number);

// The opening of a JSON object describing a logged call of thread `tid` at
// system call entry, e.g. {"call":"openat","dirfd":-100,"path":"/x","flags":0,"mode":0
// (without the closing brace; the result is appended at exit).  Paths are
// read from the tracee's memory; the position of read, write, readv and
// writev is the file offset in /proc/TID/fdinfo at entry.
std::string DescribeEntry(pid_t tid, uint64_t number, const uint64_t arguments[6]);

// `text` as a JSON string literal (quotes included); bytes that are not
// printable ASCII are escaped as \u00XX.
std::string JsonString(const std::string& text);

}  // namespace foreactor_trace

#endif  // FOREACTOR_TOOLS_TRACE_SYSCALL_LOG_H_
