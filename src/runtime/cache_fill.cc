// cache_fill.cc: CacheFill (cache_fill.h).
#include "runtime/cache_fill.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "base/quiet_thread.h"
#include "runtime/raw_syscalls.h"
#include "runtime/reopened_file.h"

namespace foreactor {

CacheFill::~CacheFill() { Stop(); }

bool CacheFill::Start(int fd, dev_t device, ino_t inode, bool no_access_time, const Range* ranges,
                      int count) {
  Stop();
  if (fd < 0 || ranges == nullptr || count < 1 || count > kMaxRanges) return false;
  for (int i = 0; i < count; ++i) {
    if (ranges[i].offset < 0 || ranges[i].length == 0) return false;
  }
  fd_ = fd;
  process_ = getpid();
  starter_ = gettid();
  device_ = device;
  inode_ = inode;
  no_access_time_ = no_access_time;
  std::copy_n(ranges, count, ranges_);
  count_ = count;
  stop_.store(false, std::memory_order_relaxed);
  ranges_read_.store(0, std::memory_order_relaxed);
  progress_.store(0, std::memory_order_relaxed);
  // (The thread's start publishes everything above to it.)
  if (StartQuietThread(&CacheFill::ThreadMain, this, kStackBytes, /*detached=*/false, &thread_) !=
      0) {
    progress_.store(kEnded, std::memory_order_relaxed);
    return false;
  }
  joinable_ = true;
  return true;
}

void CacheFill::WaitFor(int index) const {
  int progress = progress_.load(std::memory_order_acquire);
  while (progress <= index) {
    progress_.wait(progress, std::memory_order_acquire);
    progress = progress_.load(std::memory_order_acquire);
  }
}

void CacheFill::Stop() {
  if (!joinable_) return;
  stop_.store(true, std::memory_order_relaxed);
  pthread_join(thread_, nullptr);
  joinable_ = false;
}

void CacheFill::Abandon() {
  joinable_ = false;
  progress_.store(kEnded, std::memory_order_relaxed);
}

void* CacheFill::ThreadMain(void* fill) {
  static_cast<CacheFill*>(fill)->Run();
  return nullptr;
}

void CacheFill::Run() {
  prctl(PR_SET_NAME, "foreactor-fill", 0, 0, 0);
  if (!TakeEmptyDescriptorTable()) {
    End();
    return;
  }
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/task/%d/fd/%d", static_cast<int>(process_),
                static_cast<int>(starter_), fd_);
  const uint64_t flags = O_RDONLY | O_CLOEXEC | (no_access_time_ ? O_NOATIME : 0);
  const int file = OpenSameRegularFile(path, flags, device_, inode_);
  const int sink =
      file >= 0 ? static_cast<int>(raw::Openat2(AT_FDCWD, "/dev/null", O_WRONLY | O_CLOEXEC, 0))
                : -1;
  char* buffer = nullptr;
  for (int i = 0; file >= 0 && i < count_; ++i) {
    if (stop_.load(std::memory_order_relaxed) || !ReadRange(file, sink, ranges_[i], &buffer)) {
      break;
    }
    ranges_read_.store(i + 1, std::memory_order_release);
    progress_.store(i + 1, std::memory_order_release);
    progress_.notify_all();
  }
  if (buffer != nullptr) munmap(buffer, kFallbackBytes);
  if (sink >= 0) raw::Close(sink);
  if (file >= 0) raw::Close(file);
  End();
}

bool CacheFill::ReadRange(int file, int sink, const Range& range, char** buffer) {
  uint64_t done = 0;
  bool sendfile_refused = sink < 0;
  while (done < range.length) {
    const int64_t offset = range.offset + static_cast<int64_t>(done);
    const size_t length = static_cast<size_t>(range.length - done);
    int64_t moved = -EINVAL;
    if (!sendfile_refused) {
      moved = raw::Sendfile(sink, file, offset, length);
      if (moved == -EINVAL || moved == -ENOSYS) sendfile_refused = true;
    }
    if (sendfile_refused) {
      if (*buffer == nullptr) {
        void* mapping = mmap(nullptr, kFallbackBytes, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mapping == MAP_FAILED) return false;
        *buffer = static_cast<char*>(mapping);
      }
      moved = raw::ReadAt(file, *buffer, std::min(length, kFallbackBytes), offset);
    }
    if (moved == -EINTR) continue;
    if (moved < 0) return false;
    if (moved == 0) return true;  // the file ends here
    done += static_cast<uint64_t>(moved);
    if (stop_.load(std::memory_order_relaxed)) return true;
  }
  return true;
}

void CacheFill::End() {
  progress_.store(kEnded, std::memory_order_release);
  progress_.notify_all();
}

}  // namespace foreactor
