// test_files.h: temporary files, and the process's open descriptors, for
// the unit tests.
#ifndef FOREACTOR_TESTS_UNIT_ENGINE_TEST_FILES_H_
#define FOREACTOR_TESTS_UNIT_ENGINE_TEST_FILES_H_

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/request.h"

namespace foreactor::testing {

// The byte at `offset` of every pattern file: not periodic in 4 KiB.
inline char PatternByte(uint64_t offset) {
  return static_cast<char>((offset * 7 + offset / 251) & 0xff);
}

// A directory under $TMPDIR (or /tmp), removed with its content.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/foreactor-engine.XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    if (!path_.empty()) RemoveTree(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  std::string Path(const std::string& name) const { return path_ + "/" + name; }

  // Creates `name` holding `size` pattern bytes.  Returns false on error.
  bool WritePatternFile(const std::string& name, uint64_t size) const {
    const int fd = open(Path(name).c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0) return false;
    std::vector<char> bytes(size);
    for (uint64_t i = 0; i < size; ++i) bytes[i] = PatternByte(i);
    const bool ok = write(fd, bytes.data(), size) == static_cast<ssize_t>(size);
    close(fd);
    return ok;
  }

  // Reads the whole file `name` (empty when missing).
  std::string ReadAll(const std::string& name) const {
    std::string content;
    const int fd = open(Path(name).c_str(), O_RDONLY);
    if (fd < 0) return content;
    char buffer[65536];
    ssize_t got;
    while ((got = read(fd, buffer, sizeof(buffer))) > 0) {
      content.append(buffer, static_cast<size_t>(got));
    }
    close(fd);
    return content;
  }

 private:
  static void RemoveTree(const std::string& path) {
    DIR* dir = opendir(path.c_str());
    if (dir != nullptr) {
      while (struct dirent* entry = readdir(dir)) {
        const std::string name = entry->d_name;
        if (name == "." || name == "..") continue;
        const std::string child = path + "/" + name;
        struct stat info;
        if (lstat(child.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
          RemoveTree(child);
        } else {
          unlink(child.c_str());
        }
      }
      closedir(dir);
    }
    rmdir(path.c_str());
  }

  std::string path_;
};

// The result of a direct libc call in the engines' convention.
inline int64_t Direct(long result) { return result == -1 ? -static_cast<int64_t>(errno) : result; }

// Makes `request` idle again for reuse (the runtime's job in real life).
inline void ResetRequest(Request* request) {
  request->result = 0;
  request->linked_next = nullptr;
  request->state.store(RequestState::kIdle);
}

// Makes `request` an idle call of `type` with every argument zero.
inline void SetUpCall(Request* request, foreactor_call_type type) {
  ResetRequest(request);
  std::memset(&request->call, 0, sizeof(request->call));
  request->call.type = type;
}

// Makes `request` an idle pread of `length` bytes at `offset` of `fd`.
inline void SetUpRead(Request* request, int fd, void* buffer, size_t length, int64_t offset) {
  SetUpCall(request, FOREACTOR_CALL_PREAD);
  request->call.fd = fd;
  request->call.buffer = buffer;
  request->call.length = length;
  request->call.offset = offset;
}

// How many descriptors the process has open (entries of /proc/self/fd,
// counting the one that lists them); -1 when it cannot be listed.
inline int OpenDescriptorCount() {
  DIR* directory = opendir("/proc/self/fd");
  if (directory == nullptr) return -1;
  int count = 0;
  while (readdir(directory) != nullptr) count++;
  closedir(directory);
  return count;
}

// The names in directory `path`, sorted (/proc/self/fd: the descriptors
// open, the listing's own among them; /proc/self/task: the threads).
inline std::vector<std::string> DirectoryEntries(const char* path) {
  std::vector<std::string> names;
  DIR* directory = opendir(path);
  if (directory == nullptr) return names;
  while (const dirent* entry = readdir(directory)) names.emplace_back(entry->d_name);
  closedir(directory);
  std::sort(names.begin(), names.end());
  return names;
}

// The ids of the process's threads named `name` (/proc/self/task/*/comm),
// in the directory's order.
inline std::vector<pid_t> ThreadIdsNamed(const std::string& name) {
  std::vector<pid_t> ids;
  for (const std::string& task : DirectoryEntries("/proc/self/task")) {
    if (task == "." || task == "..") continue;
    char comm[64] = {};
    const int fd = open(("/proc/self/task/" + task + "/comm").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // the thread ended
    const ssize_t length = read(fd, comm, sizeof(comm) - 1);
    close(fd);
    if (length > 0 && std::string(comm, static_cast<size_t>(length)) == name + "\n") {
      ids.push_back(static_cast<pid_t>(std::stol(task)));
    }
  }
  return ids;
}

// How many threads of the process are named `name`.
inline int ThreadsNamed(const std::string& name) {
  return static_cast<int>(ThreadIdsNamed(name).size());
}

// True once no thread of the process is named `name`, waiting up to
// `timeout_ms` for it (a loaded machine may run the thread late).  A thread
// that pthread_join() has returned for may still be listed in
// /proc/self/task for a moment: the kernel wakes the joiner when the thread
// clears its id, before it reaps the task.
inline bool NoThreadNamedWithin(const std::string& name, int timeout_ms = 30000) {
  for (int waited = 0;; waited += 5) {
    if (ThreadsNamed(name) == 0) return true;
    if (waited >= timeout_ms) return false;
    usleep(5000);
  }
}

// Takes a write record lock (fcntl F_SETLK) on all of the file `fd` names;
// true when taken.
inline bool LockWholeFile(int fd) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  return fcntl(fd, F_SETLK, &lock) == 0;
}

// True when a record lock of this process's holds the file at `path`.  A
// child process asks (F_GETLK reports the lock of another process that
// conflicts): a probe in this process would have to close a descriptor of
// the file, which releases this process's record locks on it.
inline bool WriteLockHeld(const std::string& path) {
  const pid_t owner = getpid();
  const pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    const int probe_fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    struct flock probe {};
    probe.l_type = F_WRLCK;
    probe.l_whence = SEEK_SET;
    const bool held = probe_fd >= 0 && fcntl(probe_fd, F_GETLK, &probe) == 0 &&
                      probe.l_type == F_WRLCK && probe.l_pid == owner;
    _exit(held ? 0 : 1);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace foreactor::testing

#endif  // FOREACTOR_TESTS_UNIT_ENGINE_TEST_FILES_H_
