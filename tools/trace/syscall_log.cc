#include "syscall_log.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <vector>

namespace foreactor_trace {
namespace {

constexpr size_t kMaxPath = 4096;

// Up to `length` bytes of the tracee's memory at `address`; fewer when a
// page is not readable.
std::string ReadMemory(pid_t tid, uint64_t address, size_t length) {
  std::string bytes(length, '\0');
  const iovec local{bytes.data(), length};
  const iovec remote{reinterpret_cast<void*>(address), length};
  const ssize_t got = process_vm_readv(tid, &local, 1, &remote, 1, 0);
  bytes.resize(got > 0 ? static_cast<size_t>(got) : 0);
  return bytes;
}

// A NUL-terminated string of the tracee, read page by page so that a string
// ending just before an unmapped page is still read.
std::string ReadString(pid_t tid, uint64_t address) {
  std::string text;
  while (text.size() < kMaxPath) {
    const size_t to_page_end = 4096 - (address % 4096);
    const std::string chunk = ReadMemory(tid, address, to_page_end);
    if (chunk.empty()) break;
    const size_t end = chunk.find('\0');
    text += chunk.substr(0, end);
    if (end != std::string::npos) break;
    address += chunk.size();
  }
  return text;
}

// The file offset of `fd` in thread `tid` ("pos:" of /proc/TID/fdinfo/FD), or -1.
int64_t FilePosition(pid_t tid, uint64_t fd) {
  std::ifstream info("/proc/" + std::to_string(tid) + "/fdinfo/" +
                     std::to_string(static_cast<int>(fd)));
  std::string key;
  long long value = -1;
  while (info >> key) {
    if (key == "pos:" && info >> value) return value;
  }
  return -1;
}

// The total length of an iovec array of the tracee, or -1 when unreadable.
int64_t VectorLength(pid_t tid, uint64_t address, uint64_t count) {
  if (count > 1024) return -1;
  const std::string bytes = ReadMemory(tid, address, count * sizeof(iovec));
  if (bytes.size() != count * sizeof(iovec)) return -1;
  int64_t total = 0;
  for (uint64_t i = 0; i < count; ++i) {
    iovec entry;
    bytes.copy(reinterpret_cast<char*>(&entry), sizeof entry, i * sizeof entry);
    total += static_cast<int64_t>(entry.iov_len);
  }
  return total;
}

// Builds {"call":"NAME","key":value,... one field at a time.
class Fields {
 public:
  explicit Fields(const char* call) { text_ = "{\"call\":\"" + std::string(call) + "\""; }
  Fields& Int(const char* key, int64_t value) {
    text_ += ",\"" + std::string(key) + "\":" + std::to_string(value);
    return *this;
  }
  Fields& Fd(const char* key, uint64_t value) { return Int(key, static_cast<int>(value)); }
  Fields& Path(pid_t tid, uint64_t address) {
    text_ +=
        ",\"path\":" + (address == 0 ? std::string("null") : JsonString(ReadString(tid, address)));
    return *this;
  }
  std::string text() const { return text_; }

 private:
  std::string text_;
};

int64_t Signed(uint64_t value) { return static_cast<int64_t>(value); }

}  // namespace

bool IsLoggedSyscall(uint64_t number) {
  switch (number) {
    case SYS_open:
    case SYS_openat:
    case SYS_close:
    case SYS_read:
    case SYS_pread64:
    case SYS_write:
    case SYS_pwrite64:
    case SYS_readv:
    case SYS_writev:
    case SYS_preadv:
    case SYS_pwritev:
    case SYS_preadv2:
    case SYS_pwritev2:
    case SYS_lseek:
    case SYS_stat:
    case SYS_lstat:
    case SYS_fstat:
    case SYS_newfstatat:
    case SYS_statx:
    case SYS_getdents64:
      return true;
    default:
      return false;
  }
}

std::string DescribeEntry(pid_t tid, uint64_t number, const uint64_t a[6]) {
  switch (number) {
    case SYS_open:
      return Fields("open")
          .Path(tid, a[0])
          .Int("flags", Signed(a[1]))
          .Int("mode", Signed(a[2]))
          .text();
    case SYS_openat:
      return Fields("openat")
          .Fd("dirfd", a[0])
          .Path(tid, a[1])
          .Int("flags", Signed(a[2]))
          .Int("mode", Signed(a[3]))
          .text();
    case SYS_close:
      return Fields("close").Fd("fd", a[0]).text();
    case SYS_read:
    case SYS_write:
      return Fields(number == SYS_read ? "read" : "write")
          .Fd("fd", a[0])
          .Int("count", Signed(a[2]))
          .Int("position", FilePosition(tid, a[0]))
          .text();
    case SYS_pread64:
    case SYS_pwrite64:
      return Fields(number == SYS_pread64 ? "pread" : "pwrite")
          .Fd("fd", a[0])
          .Int("count", Signed(a[2]))
          .Int("offset", Signed(a[3]))
          .text();
    case SYS_readv:
    case SYS_writev:
      return Fields(number == SYS_readv ? "readv" : "writev")
          .Fd("fd", a[0])
          .Int("count", VectorLength(tid, a[1], a[2]))
          .Int("iovcnt", Signed(a[2]))
          .Int("position", FilePosition(tid, a[0]))
          .text();
    case SYS_preadv:
    case SYS_preadv2:
    case SYS_pwritev:
    case SYS_pwritev2: {
      const bool read = number == SYS_preadv || number == SYS_preadv2;
      return Fields(read ? "preadv" : "pwritev")
          .Fd("fd", a[0])
          .Int("count", VectorLength(tid, a[1], a[2]))
          .Int("iovcnt", Signed(a[2]))
          .Int("offset", Signed(a[3]))
          .text();
    }
    case SYS_lseek:
      return Fields("lseek")
          .Fd("fd", a[0])
          .Int("offset", Signed(a[1]))
          .Int("whence", Signed(a[2]))
          .text();
    case SYS_stat:
      return Fields("stat").Path(tid, a[0]).text();
    case SYS_lstat:
      return Fields("lstat").Path(tid, a[0]).text();
    case SYS_fstat:
      return Fields("fstat").Fd("fd", a[0]).text();
    case SYS_newfstatat:
      return Fields("fstatat").Fd("dirfd", a[0]).Path(tid, a[1]).Int("flags", Signed(a[3])).text();
    case SYS_statx:
      return Fields("statx")
          .Fd("dirfd", a[0])
          .Path(tid, a[1])
          .Int("flags", Signed(a[2]))
          .Int("mask", Signed(a[3]))
          .text();
    case SYS_getdents64:
      return Fields("getdents64").Fd("fd", a[0]).Int("count", Signed(a[2])).text();
    default:
      return Fields("other").Int("number", Signed(number)).text();
  }
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char escaped[8];
      snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    }
  }
  return out + "\"";
}

}  // namespace foreactor_trace
