#include "runtime/direct_reads.h"

#include <fcntl.h>
#include <sys/statfs.h>

#include <algorithm>

#include "runtime/pages_cached.h"
#include "runtime/raw_syscalls.h"
#include "runtime/reopened_file.h"

namespace foreactor {

bool TakesDirectReads(long filesystem_type) {
  switch (static_cast<unsigned long>(filesystem_type) & 0xffffffffUL) {
    case 0xEF53:      // ext2, ext3, ext4
    case 0x58465342:  // xfs
    case 0x9123683E:  // btrfs
    case 0xF2F52010:  // f2fs
      return true;
    default:
      return false;
  }
}

namespace {

bool Aligned(uint64_t value, uint32_t alignment) { return value % alignment == 0; }

}  // namespace

int DirectReads::DescriptorFor(int fd, const FileKindCache::Kind& kind, uint64_t offset,
                               uint64_t length, const void* buffer) {
  if (!kind.known || !kind.regular || kind.direct || length < kMinLength) return -1;
  Entry* entry = EntryFor(fd, kind);
  if (entry == nullptr || entry->descriptor < 0) return -1;
  if (!Aligned(offset, entry->offset_align) || !Aligned(length, entry->offset_align) ||
      !Aligned(reinterpret_cast<uintptr_t>(buffer), entry->memory_align)) {
    return -1;
  }
  RangePages range;
  if (CountRangePages(fd, offset, length, &range) != 0) return -1;
  if (range.cached != 0 && (range.unwritten != 0 || !StreamingPastCache(fd, *entry, offset))) {
    return -1;
  }
  return entry->descriptor;
}

bool DirectReads::StreamingPastCache(int fd, Entry& entry, uint64_t offset) {
  if (offset >= entry.size) return false;
  if (entry.stream_estimated && offset >= entry.stream_offset &&
      offset - entry.stream_offset < kStreamRecheckBytes) {
    return entry.streaming;
  }
  const uint64_t span = std::min(kStreamSpan, entry.size - offset);
  // A span no longer than the samples together is asked whole.
  const bool sampled = span > kStreamSamples * kStreamSampleBytes;
  const unsigned samples = sampled ? kStreamSamples : 1;
  const uint64_t sample_bytes = sampled ? kStreamSampleBytes : span;
  uint64_t cached = 0, pages = 0;
  for (unsigned sample = 0; sample < samples; ++sample) {
    RangePages ahead;
    if (CountRangePages(fd, offset + sample * (span / samples), sample_bytes, &ahead) != 0) {
      return false;
    }
    cached += ahead.cached;
    pages += ahead.pages;
  }
  entry.stream_estimated = true;
  entry.streaming = 2 * cached < pages;
  entry.stream_offset = offset;
  return entry.streaming;
}

DirectReads::Entry* DirectReads::EntryFor(int fd, const FileKindCache::Kind& kind) {
  for (Entry& entry : entries_) {
    if (entry.used && entry.device == kind.device && entry.inode == kind.inode) return &entry;
  }
  for (Entry& entry : entries_) {
    if (entry.used) continue;
    entry.used = true;
    entry.device = kind.device;
    entry.inode = kind.inode;
    Open(fd, entry);
    return &entry;
  }
  return nullptr;
}

void DirectReads::Open(int fd, Entry& entry) {
  struct statfs filesystem {};
  if (raw::Fstatfs(fd, &filesystem) != 0 || !TakesDirectReads(filesystem.f_type)) return;
  if (FileLocked(fd)) return;  // a descriptor of ours could not be closed (see the top)
  struct stat status {};
  const int descriptor = ReopenReadOnly(fd, O_DIRECT, entry.device, entry.inode, &status);
  if (descriptor < 0) return;
  // The kernel must say how direct reads of the file are aligned.
  if (!DirectIoAlignment(descriptor, &entry.memory_align, &entry.offset_align)) {
    CloseOrKeep(descriptor);
    return;
  }
  entry.descriptor = descriptor;
  entry.size = static_cast<uint64_t>(status.st_size);
}

void DirectReads::CloseAll() {
  int still_kept = 0;
  for (int i = 0; i < kept_count_; ++i) {
    if (!CloseUnlessLocked(kept_[i])) kept_[still_kept++] = kept_[i];
  }
  kept_count_ = still_kept;
  for (Entry& entry : entries_) {
    if (entry.descriptor >= 0) CloseOrKeep(entry.descriptor);
    entry = Entry{};
  }
}

void DirectReads::CloseOrKeep(int descriptor) {
  if (!CloseUnlessLocked(descriptor) && kept_count_ < kEntries) kept_[kept_count_++] = descriptor;
}

int DirectReads::open_descriptors() const {
  int open = kept_count_;
  for (const Entry& entry : entries_) open += entry.descriptor >= 0 ? 1 : 0;
  return open;
}

}  // namespace foreactor
