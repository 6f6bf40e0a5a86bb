// direct_reads.h: early reads of cold ranges sent past the page cache, on
// descriptors of the runner's own opened with O_DIRECT (DESIGN §5).
//
// A program that copies or streams a large file it has not read before
// (cp's read/write loop) spends its core on the page cache: the kernel's
// read-ahead allocates and fills pages, every read copies out of them.  An
// early read into a visit slot's own buffer needs none of that when the
// range is cold: the device writes the bytes straight into the slot, and
// the program's call copies them out once, as from the page cache.  With
// the write pipeline beside it the program's thread does little more than
// that copy, and the device sees the reads at the graph's depth.
//
// DescriptorFor() answers, for one early PREAD about to be issued, the
// descriptor to issue it on: one of ours, opened O_DIRECT on the same file
// (ReopenReadOnly(), reopened_file.h), or -1 to leave it on the program's
// descriptor.  It answers
// -1 unless all of these hold:
//  - the file is a regular file on a local block-device file system known
//    to take direct reads (ext2/3/4, XFS, btrfs, F2FS), not opened
//    O_DIRECT by the program (those reads are direct already);
//  - the read is at least kMinLength bytes, and its offset, length and
//    buffer meet the file's direct I/O alignment (statx STATX_DIOALIGN);
//  - no page of the range is in the page cache (cachestat(2)): a cached
//    page is served faster from memory, and a dirty one would make the
//    kernel write it back before reading.  Except in a stream past the
//    cache: a range whose cached pages are all clean is read direct too
//    while less than half of the kStreamSpan bytes from its offset on (up
//    to the file's size when its descriptor was opened) is cached.  Those
//    pages are the kernel's read-ahead of the program's own buffered reads
//    (a stretch the scope gate ran plain, a window at a depth too shallow
//    for direct reads).  Read through the page cache they would keep the
//    read-ahead going: a buffered read of the page that marks a read-ahead
//    window, on any descriptor of the file, starts the next window, so
//    every later range would be found cached and none cold.  Read direct,
//    the read-ahead ends with that window, which the device reads twice.
//    How much of those bytes is cached is estimated from kStreamSamples
//    spans of kStreamSampleBytes spread over them, and the answer holds
//    for the file's next kStreamRecheckBytes: one cachestat(2) of the
//    whole span took 90 us here, more than a hot 128 KiB chunk's copy,
//    and asked for every read of a hot copy it made every trial of the
//    scope gate lose (a hot 2 GiB cp at depth auto ran at 1.05x stock's
//    time, against 0.72x at depth 64, which never asked).
// What a direct read returns is what a buffered read returns at that point:
// the kernel writes back dirty pages of the range before reading past the
// cache, and clean pages hold what the disk holds.  It leaves the page
// cache without the range, as the program's reads served from the slots
// do; a later reader of the same range reads it from the device.
//
// Descriptors are kept per file (device and inode), not per program
// descriptor number, so a number the program closes and reuses can never
// send a read to the wrong file.  A file whose reopening failed is not
// tried again until CloseAll().  At most kEntries files are kept, and none
// is closed before CloseAll(), so that no descriptor closes under a request
// in flight: reads of further files stay on the program's descriptors.
// The runner calls CloseAll() at each scope's end, once every early request
// completed: no descriptor of ours outlives the scope (while one is open it
// keeps its file's inode alive, as the program's own descriptor does),
// except on a file locked then.  The descriptors are in the program's
// table, whose close of any descriptor of a file releases the process's
// record locks on it (reopened_file.h): a file locked when its descriptor
// would be made gets none (its reads stay on the program's descriptor), and
// a descriptor whose file is locked at CloseAll() is kept, and closed by
// the first CloseAll() that finds the file unlocked (up to kEntries of
// them; more stay open for the process's life).
//
// One per runner; used by the owning thread only.
#ifndef FOREACTOR_RUNTIME_DIRECT_READS_H_
#define FOREACTOR_RUNTIME_DIRECT_READS_H_

#include <sys/types.h>

#include <cstdint>

#include "runtime/file_kind_cache.h"

namespace foreactor {

// True for the file systems (statfs f_type) on block devices whose direct
// reads return what buffered reads return: ext2/3/4, XFS, btrfs, F2FS.
bool TakesDirectReads(long filesystem_type);

class DirectReads {
 public:
  // The shortest read sent direct: below it the device's time per request
  // outweighs the copies saved.
  static constexpr uint64_t kMinLength = uint64_t{64} << 10;
  // Files with a descriptor (or a failed reopening) at once.
  static constexpr int kEntries = 8;
  // How far ahead of a partly cached range the stream rule looks: four of
  // the kernel's largest read-ahead windows here (8 MiB read_ahead_kb,
  // doubled by POSIX_FADV_SEQUENTIAL).
  static constexpr uint64_t kStreamSpan = uint64_t{64} << 20;
  // The stream rule's estimate (see the top): samples of the span, and how
  // far the file's reads go on an estimate before it is made again.
  static constexpr unsigned kStreamSamples = 8;
  static constexpr uint64_t kStreamSampleBytes = uint64_t{64} << 10;
  static constexpr uint64_t kStreamRecheckBytes = uint64_t{2} << 20;

  DirectReads() = default;
  ~DirectReads() { CloseAll(); }
  DirectReads(const DirectReads&) = delete;
  DirectReads& operator=(const DirectReads&) = delete;

  // The descriptor on which to issue an early pread of `length` bytes at
  // `offset` into `buffer`, predicted on the program's descriptor `fd`
  // whose kind is `kind`: one of ours as described above, or -1 for `fd`
  // itself.  Opens the file's descriptor on first use.
  int DescriptorFor(int fd, const FileKindCache::Kind& kind, uint64_t offset, uint64_t length,
                    const void* buffer);

  // Closes every descriptor whose file is not locked (the others are kept,
  // see the top) and forgets every file.  No request may be in flight on
  // any of them.
  void CloseAll();

  // Descriptors open now, kept ones included (tests).
  int open_descriptors() const;

 private:
  struct Entry {
    bool used = false;
    dev_t device = 0;
    ino_t inode = 0;
    int descriptor = -1;  // -1: reopening failed or direct reads refused
    uint32_t memory_align = 0;
    uint32_t offset_align = 0;
    uint64_t size = 0;  // the file's size when its descriptor was opened
    // The last estimate of the stream rule, made at stream_offset.
    bool stream_estimated = false;
    bool streaming = false;
    uint64_t stream_offset = 0;
  };
  // True when bytes [offset, offset + kStreamSpan) of the file, clipped to
  // `entry`'s size, are estimated less than half in the page cache: the
  // estimate `entry` holds when made at most kStreamRecheckBytes before
  // `offset`, else a new one, kept in `entry`.
  static bool StreamingPastCache(int fd, Entry& entry, uint64_t offset);
  // The entry of `kind`'s file, made (and its descriptor opened from
  // `fd`) when absent; nullptr when every entry holds another file.
  Entry* EntryFor(int fd, const FileKindCache::Kind& kind);
  // Fills `entry` with a direct descriptor of the file `fd` names, or
  // leaves its descriptor at -1.
  void Open(int fd, Entry& entry);
  // Closes `descriptor`, one of ours, unless its file is locked: then keeps
  // it for a later CloseAll() (see the top).
  void CloseOrKeep(int descriptor);

  Entry entries_[kEntries];
  // Descriptors CloseAll() kept open: their file was locked.
  int kept_[kEntries] = {};
  int kept_count_ = 0;
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_DIRECT_READS_H_
