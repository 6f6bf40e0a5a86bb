// read_ahead_stream.h: a graph's scattered reads brought in as a few large
// reads of the regions they fall in, far ahead of the program (DESIGN §5).
//
// A scan whose pages lie scattered over a file (an insert-built B+-tree's
// leaves) reads one small page at a time; early reads put `depth` of them
// on the device at once, but a disk serves a few large requests much
// faster than many small ones.  Once the program's reads on one descriptor
// in a scope that the runner did not find in the page cache look scattered
// (kArmingReads reads, kArmingJumps of them not starting where the one
// before ended), the stream walks the graph ahead
// of the program (as the peek head does, asking the same arguments and
// branch callbacks, without slots) and gathers the byte ranges of the next
// kBatchVisits pread visits on that descriptor.  It groups them by aligned
// region of kRegionBytes; a region that the batch needs at least
// kMinRegionNeedBytes of is read whole as one request, with
// RequestOperation::kReadAhead (run off the program's thread, into a
// scratch buffer), regions needed first going first.  A region is read at
// most once per stream: a later batch that needs it again (its requests may
// still be in flight) leaves it out.  Reading the whole region, rather than
// from the first byte a batch needs to the last, is what makes that hold:
// on the insert-built B+-tree, whose leaves each batch finds in most
// regions, spans re-read the parts earlier batches had brought in, 115 MiB
// for a 69 MiB file.  The
// program's own reads, and the peek head's probes, then find the pages in
// the page cache.  Sparse regions are left to the peek head's early reads.
// It delivers nothing: its only trace is a warmer page cache and, where the
// mount updates it, the file's access time.
//
// The program's sequential reads do not start a stream: the kernel's own
// read-ahead already streams them, and measured on a bulk-loaded tree a
// second stream beside it made the cold scan slower.
//
// Started ahead of the program.  When a plugin says that the program is
// about to compute without system calls (foreactor_scope_look_ahead), a
// stream whose graph's next preads jump about (as the program's must to
// start one) starts at once, before the program's first read, instead of
// after kArmingReads of them: the insert-built B+-tree's scan sets up its
// result buffer between its inner walk and its leaf loop.  Such a stream
// hints its regions with readahead(2) (RequestOperation::kStartReadAhead)
// rather than reading them, up to kMaxInFlightAhead at once (nothing reaps
// them until the program's next call).
//
// In file order, ahead of the program.  When the graph's next preads run in
// file order instead (a bulk-loaded tree's leaves) and most are not cached,
// no read of the program's has started the kernel's read-ahead yet: the
// look-ahead starts an in-order stream, whose fill (cache_fill.h) reads the
// regions of the run, up to kInOrderFillVisits reads and
// CacheFill::kMaxRanges regions, from the program's set-up on:
//  - one region after the other through one open file description of its
//    own, so that the kernel's read-ahead on it streams them at the
//    device's pace, as for a program reading the file (on the program's
//    descriptor the fill's reads and the program's would shape one
//    read-ahead state: that made one scan in three about 1.4x as slow);
//  - copying nothing out (sendfile(2) to /dev/null), on a thread with a
//    descriptor table of its own: no descriptor of the program's moves, and
//    none of its record locks on the file goes (the chain of buffered
//    1 MiB reads on the chain engine it replaces held a descriptor in the
//    program's table, whose close at the scope's end released them);
//  - without asking cachestat(2) per region: regions the fill's read-ahead
//    brought in are passed in microseconds, and skipping them would break
//    the sequence that read-ahead follows;
//  - only for a run of at least a batch: a shorter one (a scan of a few
//    hundred leaves) the program's own read-ahead reads as fast, without a
//    fill's 1 MiB regions beyond what the program needs; the look-ahead
//    walks the run first, so a short one costs no start of a stream
//    (LeaveShortRunInOrder()), and a long one is walked twice;
//  - ahead of the program to its end: the program's reads of a region the
//    fill reads wait for it (WaitForFill()), so that none starts the
//    kernel's read-ahead on the program's descriptor beside the fill's.
//    (Before the waits, a chain of one batch that left the rest to the
//    program's read-ahead was faster than longer chains, which raced it;
//    and on the development VM the fill read a cold 44 MiB run in 22 ms
//    where 1 MiB buffered reads took 26-28 ms, the copies being the
//    reader's work: the scan of a bulk-loaded tree, 90% of its keys, went
//    from 0.92x to 0.82x of plain's time.)
// The scope follows the program's calls while its reads have not passed the
// fill's last region (follows_program()); then one whose reads are all
// found cached may leave its graph for the page cache.  The runner leaves
// the reads within the fill's regions (or the shorter run) to the program
// (ReadsInOrder()): no probe, readahead(2) or early read of one 8 KiB leaf
// breaks the read-ahead into small random reads (a cold scan of 64 leaves
// in file order took 7x plain's time so).
//
// Bounds and costs:
//  - at most kMaxInFlight requests (kMaxInFlightAhead) of at most kRegionBytes, one scratch
//    buffer of kRegionBytes, room for kBatchVisits ranges and a bit per
//    region for the first kTrackedRegions regions of the file per stream
//    (made at its first start and kept for the runner's life; regions
//    further on are not remembered, and are only checked with cachestat(2)
//    again);
//  - the walk is at most kBatchVisits visits on the descriptor ahead of the
//    program: the next batch is gathered when the regions of the last one
//    have all gone and the program has read half of it;
//  - reads found in the page cache never start a stream, and a file wholly
//    in the page cache when the reads start one gets none (one
//    cachestat(2) of the file, which takes milliseconds for a large cached
//    file: 3 ms for 1 GiB on the development VM); each region is checked with
//    cachestat(2) too and not read when cached; when a whole batch was, the
//    stream stops for the scope;
//  - the walk stops for the scope at an open or a close node (descriptor
//    numbers may change meaning after them), at the end node and where an
//    arguments callback answers never; it waits where one answers not-yet;
//  - O_DIRECT descriptors and anything but regular files get no stream;
//  - an in-order stream's fill holds a thread, with two descriptors in a
//    table of its own, from the look-ahead that starts it to the end of its
//    scope (or the program's close of the file it reads), where it is
//    stopped and joined.
//
// Descriptors.  A worker looks the descriptor up when it runs the read, so
// the program's close() of it in the scope waits for the stream's requests
// (BeforeClose), and every request has completed when the scope ends
// (EndScope cancels, then waits; an in-order stream's own descriptor is
// closed then).  A close the engine runs early for the
// graph, or a dup2() onto the number, may still race with a request: the
// read then fails or warms another file's pages, which costs time only.
//
// One per runner (graph and thread); used by the owning thread only.
#ifndef FOREACTOR_RUNTIME_READ_AHEAD_STREAM_H_
#define FOREACTOR_RUNTIME_READ_AHEAD_STREAM_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/engine.h"
#include "graph/graph.h"
#include "runtime/cache_fill.h"
#include "runtime/cursor.h"
#include "runtime/file_kind_cache.h"
#include "runtime/pread_walk.h"
#include "runtime/statistics.h"

namespace foreactor {

class ReadAheadStream {
 public:
  // Size and alignment of a region; the most one request reads.
  static constexpr uint64_t kRegionBytes = uint64_t{1} << 20;
  // Bytes of a region a batch must need for the region to be read whole;
  // and, on average, of every region its reads fall in, for any region to
  // be: reads spread evenly over a large file (random reads) leave a few
  // regions above the bar by chance alone, and a disk that serves 8 KiB
  // reads at depth as fast per byte as 1 MiB ones (one development VM's
  // virtio disk: 650 MB/s either way) reads each of those 16 times the
  // bytes needed (the demo's random reads ran 10% slower so).
  static constexpr uint64_t kMinRegionNeedBytes = uint64_t{64} << 10;
  // Requests of the stream in flight at once; a stream started by
  // LookAhead() may have kMaxInFlightAhead.
  static constexpr int kMaxInFlight = 8;
  static constexpr int kMaxInFlightAhead = 32;
  // Pread visits on the descriptor gathered per batch.
  static constexpr unsigned kBatchVisits = 2048;
  // Pread visits on the descriptor an in-order stream's fill may cover (at
  // most CacheFill::kMaxRanges regions of them).
  static constexpr unsigned kInOrderFillVisits = 8192;
  // The longest run in file order LeaveShortRun() walks: the runner's
  // page-cache mode leaves a scope after 256 reads served from the cache in
  // a row (PageCacheMode, at its first streak), so a longer cached run is
  // left so at little more cost than walking it here; a longer cold one is
  // asked of the page cache and left by LeaveShortRunInOrder().
  static constexpr unsigned kShortRunVisits = 256;
  // The program's reads on one descriptor, and how many of them started
  // elsewhere than where the one before ended, that start a stream.
  static constexpr unsigned kArmingReads = 16;
  static constexpr unsigned kArmingJumps = 8;
  // Regions at the start of a file whose reading is remembered (64 GiB).
  static constexpr int64_t kTrackedRegions = 65536;

  // What LookAhead() decides about leaving a short run (LeaveShortRun),
  // for a scope of `graph` in `scope_state` with no runner: true when the
  // preads from `from` are a short run that ends the scope
  // (RunFromEndsScope, on the first pread's descriptor), walked once.
  // `file_kinds` answers for the descriptor.
  static bool ShortRunEndsScope(const Graph& graph, void* scope_state, const Cursor& from,
                                uint64_t max_read_bytes, FileKindCache* file_kinds);

  // Every pointer and reference outlives this object; `statistics`
  // receives the read_ahead_* counters.  `engine` runs the requests of
  // streams of scattered reads (in-order streams have a fill of their own,
  // see the top).
  ReadAheadStream(const Graph& graph, Engine* engine, FileKindCache* file_kinds,
                  Statistics* statistics);
  // Waits for the requests in flight and stops the fill, unless abandoned.
  ~ReadAheadStream();

  ReadAheadStream(const ReadAheadStream&) = delete;
  ReadAheadStream& operator=(const ReadAheadStream&) = delete;

  // A scope of the graph starts; `scope_state` is what the callbacks get.
  void StartScope(void* scope_state);

  // The program's pread(fd, _, _, offset) at the frontier returned
  // `result`; `after` is the frontier once past that visit; `found_cached`:
  // the runner found its bytes in the page cache (a probe of the peek head,
  // or reads served from the cache).  Watches for the reads that start a
  // stream (those found cached do not count), and keeps a started one
  // ahead.
  void NoteProgramRead(int fd, int64_t offset, int64_t result, const Cursor& after,
                       bool found_cached);

  // The plugin learned the graph's next arguments outside a call, and the
  // program is about to work without reading (foreactor_scope_look_ahead):
  // while the stream only watches, starts it on the descriptor of the first
  // pread visit the graph gives from `from`, unless half or more of the
  // next kArmingReads preads on it are in the page cache: a stream of
  // hints when they jump kArmingJumps times, whatever the program's reads
  // looked like, an in-order stream otherwise (see the top).  Before
  // asking the page cache, a short run in file order that is all the scope
  // has left, none of its reads longer than `leave_reads_up_to` bytes, is
  // left to the program whether cached or not (LeaveShortRun); 0 leaves no
  // run so (the caller issues every read it can).  A started stream is
  // pumped.  Returns true when this call started a stream ahead of the
  // program or left a cold short run in file order to it
  // (LeaveShortRunInOrder): the next reads were found cold.
  bool LookAhead(const Cursor& from, uint64_t leave_reads_up_to);

  // The program is about to close `fd`: when the stream reads it, waits for
  // its requests and stops it for the scope.
  void BeforeClose(int fd);

  // The scope ends: cancels the requests in flight and waits for them.
  void EndScope();

  // True while the stream reads ahead, has requests in flight or a fill
  // started.
  bool busy() const { return phase_ == Phase::kStreaming || in_flight_ > 0 || fill_.started(); }

  // True when bytes [offset, offset + length) of `fd` lie in this scope's
  // run of reads in file order that an in-order stream found: within the
  // regions of its fill, or within the run when it was shorter than a
  // batch (see the top).  The runner leaves such reads to the program.
  bool ReadsInOrder(int fd, int64_t offset, uint64_t length) const {
    return fd == fd_ && offset >= in_order_start_ && offset < in_order_end_ &&
           length <= static_cast<uint64_t>(in_order_end_ - offset);
  }

  // True when this scope's last look-ahead found that a run in file order
  // is all the scope has left to do, and left it to the program: one of at
  // most kShortRunVisits reads, cached or not (LeaveShortRun), or a cold
  // one shorter than a batch (ReadsInOrder() answers for it).  From the
  // look-ahead, the graph's walk met preads of the run's descriptor alone,
  // none longer than `max_read_bytes`, and then the graph's end (not an
  // open, a close or a read that never comes).  The runner then has
  // nothing to follow in the scope.
  bool RunEndsScope(uint64_t max_read_bytes) const {
    return run_ends_scope_ && run_longest_read_ <= max_read_bytes;
  }

  // True while the stream needs to see the program's calls at the frontier:
  // it reads ahead of the program's reads (NoteProgramRead pumps it), has
  // requests in flight on the program's descriptor (BeforeClose), or a fill
  // the program's reads have not all passed (WaitForFill).
  bool follows_program() const {
    return phase_ == Phase::kStreaming || in_flight_ > 0 || fill_next_ < fill_count_;
  }

  // The program is about to read bytes [offset, offset + length) of `fd`
  // itself: when the fill of an in-order stream reads them, waits until it
  // has (the time counts in read_ahead_wait_nanoseconds), so that the
  // read finds them in the page cache and starts no read-ahead of the
  // kernel's on the program's descriptor beside the fill's.  Reads come in
  // file order: ranges of the fill a read ended in or passed are not waited
  // for again.
  void WaitForFill(int fd, int64_t offset, uint64_t length);

  // After fork() in the child: never touch the engine again.
  void Abandon() {
    abandoned_ = true;
    phase_ = Phase::kDone;
    fill_.Abandon();  // its thread runs in the parent only
    fill_count_ = 0;
  }

 private:
  enum class Phase { kWatching, kStreaming, kDone };
  using Step = PreadStep;
  using Range = ByteRange;
  using Run = PreadRun;
  // A needed range, with the order in which the program will need it.
  struct Need {
    Range range;
    uint32_t order = 0;
  };

  // How a stream was started (Arm).
  enum class Start {
    kByProgramReads,  // scattered reads of the program's: reads, at most kMaxInFlight
    kAheadScattered,  // a look-ahead at scattered reads: hints, at most kMaxInFlightAhead
    kAheadInOrder,    // a look-ahead at reads in file order: one fill (see the top)
  };
  // Starts the stream on `fd`, walking from `after`, as `start` says.
  // Returns false when it does not start: the file is not a regular one
  // read through the page cache, it is all cached, or memory is short.
  bool Arm(int fd, const Cursor& after, Start start);
  // A look-ahead at reads in file order on `fd`: when the graph's walk
  // from `from` ends before kBatchVisits preads on `fd`, the run gets no
  // fill (see the top) and no stream's start (Arm's check of the whole
  // file, its buffers): ReadsInOrder() answers for the run's bytes, the
  // stream is done for the scope, and the result is true.  False when
  // the walk waits, goes on past a batch, or the file takes no stream.
  bool LeaveShortRunInOrder(int fd, const Cursor& from);
  // A look-ahead whose first pread from `from` is on `fd`: when the preads
  // from there are a short run that ends the scope (RunFromEndsScope), the page
  // cache (for the pages in it) and the kernel's read-ahead on the
  // program's descriptor (for the others) serve the rest of the scope as
  // well as anything issued early would, so the page cache is not asked
  // which: RunEndsScope(max_read_bytes) says so, the stream is done for
  // the scope (no stream starts, none is counted), and the result is true.
  // False, and nothing changes, otherwise.
  bool LeaveShortRun(int fd, const Cursor& from, uint64_t max_read_bytes);
  // The rule of LeaveShortRun() and ShortRunEndsScope(): the walk from
  // `from` meets at most kShortRunVisits preads of `fd` (of the first
  // pread's descriptor when `fd` is negative), none longer than
  // `max_read_bytes`, then the graph's end, with no other call, on a
  // descriptor read through the page cache (RunIsRestOfScope), and its
  // first kArmingReads reads jump fewer than kArmingJumps times (as those
  // that start a stream in order).  `*run` holds what the walk found.
  static bool RunFromEndsScope(const Graph& graph, void* scope_state, FileKindCache* file_kinds,
                               int fd, const Cursor& from, uint64_t max_read_bytes, Run* run);
  // Starts the fill of the in-order stream's fill_ranges_; when it cannot
  // start, no range is left to the program (ReadsInOrder).
  void StartFill();
  // Stops the fill, if any, and forgets its ranges.
  void StopFill();
  // Gathers the next batch when it is time, and issues its regions while a
  // request slot is free; submits them as one batch.
  void Pump();
  // Walks up to kBatchVisits pread visits on the descriptor and turns them
  // into regions_ (in the order first needed), leaving out regions taken
  // before (batch_all_taken_ when that left none).  False when the walk
  // found nothing (it waits or has ended).
  bool GatherBatch();
  // One visit of the walk from `*cursor` (StepToNextPread, pread_walk.h).
  Step WalkStep(Cursor* cursor, Range* range, int* fd) {
    return StepToNextPread(graph_, scope_state_, cursor, range, fd);
  }
  // True when region `index` of the file was read or found cached since
  // the stream started; false for regions past kTrackedRegions.
  bool RegionTaken(int64_t index) const {
    return index < kTrackedRegions && ((taken_regions_[index / 64] >> (index % 64)) & 1) != 0;
  }
  void TakeRegion(int64_t index) {
    if (index < kTrackedRegions) taken_regions_[index / 64] |= uint64_t{1} << (index % 64);
  }
  // Hands `region` to the engine; false when no slot or the engine refuses.
  bool Issue(const Range& region);
  // Frees the slots of completed requests; with `poll`, asks the engine first.
  void Reap(bool poll);
  void Release(int slot);
  // Cancels every request in flight and waits for them.
  void CancelAndWait();

  const Graph& graph_;
  Engine* const engine_;
  FileKindCache* const file_kinds_;
  Statistics* const statistics_;
  void* scope_state_ = nullptr;
  Phase phase_ = Phase::kWatching;
  bool abandoned_ = false;

  // Watching: the program's reads on one descriptor in this scope.
  int watched_fd_ = -1;
  int64_t watched_end_ = -1;
  unsigned watched_reads_ = 0;
  unsigned watched_jumps_ = 0;

  // Streaming.
  int fd_ = -1;
  bool in_order_ = false;         // Start::kAheadInOrder
  Cursor cursor_;                 // the next visit the walk looks at
  bool walk_ended_ = false;       // the walk will find nothing more this scope
  uint64_t walked_reads_ = 0;     // pread visits on fd_ the walk passed since the start
  uint64_t program_reads_ = 0;    // the program's reads on fd_ since the start
  uint64_t batch_middle_ = 0;     // walked_reads_ value the program must reach for the next batch
  std::vector<Need> needs_;       // the batch's ranges (capacity kBatchVisits)
  std::vector<Need> regions_;     // regions to read, in reverse order of need
  unsigned batch_regions_ = 0;    // regions the batch made
  unsigned batch_cached_ = 0;     // of them, found cached
  bool batch_all_taken_ = false;  // the batch needed only regions taken before
  int64_t file_size_ = 0;         // fd_'s size when the stream started
  std::unique_ptr<uint64_t[]> taken_regions_;  // kTrackedRegions bits: RegionTaken()

  std::unique_ptr<char[]> scratch_;  // kRegionBytes; what the reads bring is never looked at
  // kMaxInFlightAhead, allocated with scratch_ by the first Arm (11 KiB: a
  // runner whose graph never streams does not touch them).
  std::unique_ptr<Request[]> requests_;
  bool slot_busy_[kMaxInFlightAhead] = {};
  int in_flight_ = 0;
  int max_in_flight_ = kMaxInFlight;  // of this stream (Arm)
  // An in-order stream's fill: its ranges in file order, and the first the
  // program's reads have not passed (WaitForFill).
  CacheFill fill_;
  CacheFill::Range fill_ranges_[CacheFill::kMaxRanges];
  int fill_count_ = 0;
  int fill_next_ = 0;
  // The bytes ReadsInOrder() answers for in this scope (none: both 0).
  int64_t in_order_start_ = 0;
  int64_t in_order_end_ = 0;
  // RunEndsScope(): the short run left is the rest of the scope, and the
  // length of its longest read.
  bool run_ends_scope_ = false;
  uint64_t run_longest_read_ = 0;
  unsigned refusals_in_a_row_ = 0;
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_READ_AHEAD_STREAM_H_
