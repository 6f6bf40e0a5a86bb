// observation.h: turning what a program observed into text, for the
// integration programs whose output is compared between runs with and
// without foreactor.  Everything a call can show is printed: return value,
// errno, every byte of the caller's buffer (as a hash), every stat field.
//
// Paths are printed relative to the roots given to PathNames, so that the
// same program run in two places prints the same text.
#ifndef FOREACTOR_TESTS_INTEGRATION_PROGRAMS_OBSERVATION_H_
#define FOREACTOR_TESTS_INTEGRATION_PROGRAMS_OBSERVATION_H_

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace observation {

// 64-bit FNV-1a of `length` bytes.
inline uint64_t Hash(const void* data, size_t length) {
  const unsigned char* bytes = static_cast<const unsigned char*>(data);
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < length; ++i) {
    hash ^= bytes[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

// printf into a std::string.
inline std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));
inline std::string Format(const char* format, ...) {
  char small[512];
  va_list arguments;
  va_start(arguments, format);
  int needed = std::vsnprintf(small, sizeof(small), format, arguments);
  va_end(arguments);
  if (needed < 0) return "<format error>";
  if (static_cast<size_t>(needed) < sizeof(small)) return std::string(small, needed);
  std::string large(static_cast<size_t>(needed) + 1, '\0');
  va_start(arguments, format);
  std::vsnprintf(large.data(), large.size(), format, arguments);
  va_end(arguments);
  large.resize(static_cast<size_t>(needed));
  return large;
}

// "ENOENT", or the number when glibc has no name for it.
inline std::string ErrnoName(int error) {
  const char* name = strerrorname_np(error);
  return name != nullptr ? std::string(name) : Format("errno%d", error);
}

// "= 42" or "= -1 ENOENT", plus errno after the call (which a successful
// call must leave alone).
inline std::string ReturnAndErrno(int64_t returned, int error) {
  if (returned < 0) return Format("= %" PRId64 " %s", returned, ErrnoName(error).c_str());
  return Format("= %" PRId64 " errno=%s", returned, ErrnoName(error).c_str());
}

inline std::string Timestamp(int64_t seconds, int64_t nanoseconds) {
  return Format("%" PRId64 ".%09" PRId64, seconds, nanoseconds);
}

// Every field of a struct stat, then a hash of all its bytes (padding and
// reserved words included: the caller sees them too).  With
// `stable_identity` false (objects made anew by each run: pipes, scratch
// files) identity and time fields are left out.
inline std::string DescribeStat(const struct stat& status, bool stable_identity = true) {
  std::string text = Format("mode=%o nlink=%ju uid=%u gid=%u size=%jd", status.st_mode,
                            static_cast<uintmax_t>(status.st_nlink), status.st_uid, status.st_gid,
                            static_cast<intmax_t>(status.st_size));
  if (!stable_identity) return text;
  text += Format(" dev=%ju ino=%ju rdev=%ju blksize=%jd blocks=%jd atime=%s mtime=%s ctime=%s",
                 static_cast<uintmax_t>(status.st_dev), static_cast<uintmax_t>(status.st_ino),
                 static_cast<uintmax_t>(status.st_rdev), static_cast<intmax_t>(status.st_blksize),
                 static_cast<intmax_t>(status.st_blocks),
                 Timestamp(status.st_atim.tv_sec, status.st_atim.tv_nsec).c_str(),
                 Timestamp(status.st_mtim.tv_sec, status.st_mtim.tv_nsec).c_str(),
                 Timestamp(status.st_ctim.tv_sec, status.st_ctim.tv_nsec).c_str());
  text += Format(" bytes=%016" PRIx64, Hash(&status, sizeof(status)));
  return text;
}

inline std::string DescribeStatxTimestamp(const struct statx_timestamp& time) {
  return Timestamp(time.tv_sec, time.tv_nsec);
}

// Every field of a struct statx, and a hash of all its bytes.
inline std::string DescribeStatx(const struct statx& status) {
  return Format("mask=%#x blksize=%u attributes=%#" PRIx64
                " nlink=%u uid=%u gid=%u mode=%o"
                " ino=%" PRIu64 " size=%" PRIu64 " blocks=%" PRIu64 " attributes_mask=%#" PRIx64
                " atime=%s btime=%s ctime=%s mtime=%s rdev=%u:%u dev=%u:%u bytes=%016" PRIx64,
                status.stx_mask, status.stx_blksize, static_cast<uint64_t>(status.stx_attributes),
                status.stx_nlink, status.stx_uid, status.stx_gid, status.stx_mode,
                static_cast<uint64_t>(status.stx_ino), static_cast<uint64_t>(status.stx_size),
                static_cast<uint64_t>(status.stx_blocks),
                static_cast<uint64_t>(status.stx_attributes_mask),
                DescribeStatxTimestamp(status.stx_atime).c_str(),
                DescribeStatxTimestamp(status.stx_btime).c_str(),
                DescribeStatxTimestamp(status.stx_ctime).c_str(),
                DescribeStatxTimestamp(status.stx_mtime).c_str(), status.stx_rdev_major,
                status.stx_rdev_minor, status.stx_dev_major, status.stx_dev_minor,
                Hash(&status, sizeof(status)));
}

// The records getdents64 put in `buffer` (`length` valid bytes), one per
// line, each indented by two spaces.
inline std::string DescribeDirents(const char* buffer, size_t length) {
  std::string text;
  size_t position = 0;
  while (position + offsetof(struct dirent64, d_name) <= length) {
    struct dirent64 header;
    std::memcpy(&header, buffer + position, offsetof(struct dirent64, d_name));
    if (header.d_reclen == 0 || position + header.d_reclen > length) {
      text += "  <malformed record>\n";
      break;
    }
    const char* name = buffer + position + offsetof(struct dirent64, d_name);
    text += Format("  ino=%ju off=%jd type=%u reclen=%u name=%.*s\n",
                   static_cast<uintmax_t>(header.d_ino), static_cast<intmax_t>(header.d_off),
                   header.d_type, header.d_reclen, static_cast<int>(strnlen(name, header.d_reclen)),
                   name);
    position += header.d_reclen;
  }
  return text;
}

// Replaces the given roots in paths by short names ("$F", "$S").
class PathNames {
 public:
  void Add(const std::string& root, const std::string& name) {
    roots_[count_] = root;
    names_[count_] = name;
    ++count_;
  }

  std::string Show(const char* path) const {
    if (path == nullptr) return "(null)";
    std::string text(path);
    for (int i = 0; i < count_; ++i) {
      if (!roots_[i].empty() && text.compare(0, roots_[i].size(), roots_[i]) == 0) {
        return names_[i] + text.substr(roots_[i].size());
      }
    }
    return text;
  }

 private:
  std::string roots_[4];
  std::string names_[4];
  int count_ = 0;
};

// Size and content hash of a file, read after the fact.
inline std::string DescribeFileContents(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "missing (" + ErrnoName(errno) + ")";
  uint64_t hash = 14695981039346656037ull;
  uint64_t size = 0;
  char buffer[65536];
  for (;;) {
    ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got <= 0) break;
    for (ssize_t i = 0; i < got; ++i) {
      hash ^= static_cast<unsigned char>(buffer[i]);
      hash *= 1099511628211ull;
    }
    size += static_cast<uint64_t>(got);
  }
  close(fd);
  return Format("size=%" PRIu64 " content=%016" PRIx64, size, hash);
}

// How many of this process's descriptors name something under `root`.
inline int OpenDescriptorsUnder(const std::string& root) {
  DIR* directory = opendir("/proc/self/fd");
  if (directory == nullptr) return -1;
  int count = 0;
  while (struct dirent* entry = readdir(directory)) {
    if (entry->d_name[0] == '.') continue;
    const std::string link = std::string("/proc/self/fd/") + entry->d_name;
    char target[PATH_MAX];
    ssize_t length = readlink(link.c_str(), target, sizeof(target) - 1);
    if (length <= 0) continue;
    target[length] = '\0';
    if (std::strncmp(target, root.c_str(), root.size()) == 0) ++count;
  }
  closedir(directory);
  return count;
}

}  // namespace observation

#endif  // FOREACTOR_TESTS_INTEGRATION_PROGRAMS_OBSERVATION_H_
