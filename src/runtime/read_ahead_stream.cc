#include "runtime/read_ahead_stream.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "base/call_types.h"
#include "base/out_of_memory.h"
#include "runtime/monotonic_clock.h"
#include "runtime/pages_cached.h"
#include "runtime/raw_syscalls.h"

namespace foreactor {
namespace {

// Consecutive refusals of the engine (a full queue, or an engine that runs
// nothing off the program's thread) that stop the stream for the scope.
constexpr unsigned kRefusalsToStop = 8;

// The size of the file `fd` names, or -1 when fstat fails.
int64_t FileSize(int fd) {
  struct stat status;
  return raw::Fstat(fd, &status) == 0 ? static_cast<int64_t>(status.st_size) : -1;
}

}  // namespace

ReadAheadStream::ReadAheadStream(const Graph& graph, Engine* engine, FileKindCache* file_kinds,
                                 Statistics* statistics)
    : graph_(graph), engine_(engine), file_kinds_(file_kinds), statistics_(statistics) {}

ReadAheadStream::~ReadAheadStream() {
  if (!abandoned_) CancelAndWait();
}

void ReadAheadStream::StartScope(void* scope_state) {
  in_order_start_ = in_order_end_ = 0;
  run_ends_scope_ = false;
  run_longest_read_ = 0;
  scope_state_ = scope_state;
  phase_ = abandoned_ ? Phase::kDone : Phase::kWatching;
  watched_fd_ = -1;
  watched_end_ = -1;
  watched_reads_ = 0;
  watched_jumps_ = 0;
}

void ReadAheadStream::EndScope() {
  if (abandoned_) return;
  CancelAndWait();
  phase_ = Phase::kDone;
  scope_state_ = nullptr;
}

void ReadAheadStream::BeforeClose(int fd) {
  if (abandoned_ || fd != fd_ || !busy()) return;
  CancelAndWait();
  phase_ = Phase::kDone;
}

void ReadAheadStream::NoteProgramRead(int fd, int64_t offset, int64_t result, const Cursor& after,
                                      bool found_cached) {
  if (phase_ == Phase::kDone || result <= 0 || offset < 0) return;
  if (phase_ == Phase::kWatching) {
    if (fd != watched_fd_) {
      watched_fd_ = fd;
      watched_reads_ = 0;
      watched_jumps_ = 0;
    } else if (offset != watched_end_ && !found_cached) {
      watched_jumps_++;
    }
    if (!found_cached) watched_reads_++;
    watched_end_ = offset + result;
    if (watched_reads_ >= kArmingReads && watched_jumps_ >= kArmingJumps)
      Arm(fd, after, Start::kByProgramReads);
    return;
  }
  if (fd == fd_) program_reads_++;
  Pump();
}

bool ReadAheadStream::RunFromEndsScope(const Graph& graph, void* scope_state,
                                       FileKindCache* file_kinds, int fd, const Cursor& from,
                                       uint64_t max_read_bytes, Run* run) {
  return RunIsRestOfScope(graph, scope_state, file_kinds, fd, from, kShortRunVisits, kArmingReads,
                          max_read_bytes, run) &&
         run->early_jumps < kArmingJumps;
}

bool ReadAheadStream::ShortRunEndsScope(const Graph& graph, void* scope_state, const Cursor& from,
                                        uint64_t max_read_bytes, FileKindCache* file_kinds) {
  Run run;
  return RunFromEndsScope(graph, scope_state, file_kinds, -1, from, max_read_bytes, &run);
}

bool ReadAheadStream::LookAhead(const Cursor& from, uint64_t leave_reads_up_to) {
  if (phase_ == Phase::kStreaming) {
    Pump();
    return false;
  }
  if (phase_ != Phase::kWatching) return false;
  // The next kArmingReads pread visits on the descriptor of the first one:
  // a stream of hints when they jump as the program's reads must
  // (kArmingJumps), an in-order stream otherwise.
  Range walked[kArmingReads];
  FirstPreads first;
  if (!WalkFirstPreads(graph_, scope_state_, from, kArmingReads, 4 * kBatchVisits, walked,
                       &first)) {
    return false;  // not known yet: a later look-ahead tries again
  }
  if (first.fd < 0) return false;
  const int stream_fd = first.fd;
  const unsigned reads = first.reads, jumps = first.jumps;
  // A short run in file order that ends the scope is left to the program
  // cached or cold: one cachestat(2) fewer (2.5-4 us of a hot 64-leaf
  // scan's first scope, 155 us in all, on the development VM).
  if (leave_reads_up_to > 0 && LeaveShortRun(stream_fd, from, leave_reads_up_to)) return false;
  // Most of those reads in the page cache say the scan is most likely hot:
  // then no stream (whose start checks the whole file, which takes a while
  // for a large cached file); if the reads turn out cold, they start one as
  // they go.  (One cached page says little: the kernel's read-ahead of the
  // scan's inner pages may have brought in a leaf beside them.)
  // Reads that follow each other without a gap are asked of the page cache
  // as one span: half its pages cached counts as half the reads (one
  // cachestat(2) instead of one a read, about 0.3 us each here).
  bool mostly_cached = false;
  uint64_t cached_pages = 0, span_pages = 0;
  if (jumps == 0 && CountCachedPages(stream_fd, static_cast<uint64_t>(walked[0].start),
                                     static_cast<uint64_t>(walked[reads - 1].end - walked[0].start),
                                     &cached_pages, &span_pages) == 0) {
    mostly_cached = 2 * cached_pages >= span_pages;
  } else {
    unsigned cached = 0;
    for (unsigned i = 0; i < reads; ++i) {
      if (RangeCached(stream_fd, static_cast<uint64_t>(walked[i].start),
                      static_cast<uint64_t>(walked[i].end - walked[i].start))) {
        cached++;
      }
    }
    mostly_cached = 2 * cached >= reads;
  }
  if (mostly_cached) return false;
  if (jumps < kArmingJumps && LeaveShortRunInOrder(stream_fd, from)) return true;
  return Arm(stream_fd, from,
             jumps >= kArmingJumps ? Start::kAheadScattered : Start::kAheadInOrder);
}

bool ReadAheadStream::LeaveShortRunInOrder(int fd, const Cursor& from) {
  const FileKindCache::Kind kind = file_kinds_->Lookup(fd);
  if (!kind.regular || kind.direct) return false;  // Arm() starts no stream either
  Run run;
  if (!WalkPreadRun(graph_, scope_state_, fd, from, kBatchVisits, 0, CountedLoops::kVisitEach,
                    &run)) {
    return false;
  }
  fd_ = fd;
  in_order_start_ = run.start;
  in_order_end_ = run.end;
  run_ends_scope_ = run.rest_of_scope;
  run_longest_read_ = run.longest_read;
  phase_ = Phase::kDone;
  statistics_->read_ahead_streams++;
  statistics_->read_ahead_streams_ahead++;
  statistics_->read_ahead_streams_in_order++;
  return true;
}

bool ReadAheadStream::LeaveShortRun(int fd, const Cursor& from, uint64_t max_read_bytes) {
  Run run;
  if (!RunFromEndsScope(graph_, scope_state_, file_kinds_, fd, from, max_read_bytes, &run)) {
    return false;
  }
  run_ends_scope_ = true;
  run_longest_read_ = run.longest_read;
  phase_ = Phase::kDone;
  return true;
}

bool ReadAheadStream::Arm(int fd, const Cursor& after, Start start) {
  const FileKindCache::Kind kind = file_kinds_->Lookup(fd);
  const int64_t size = kind.regular && !kind.direct ? FileSize(fd) : -1;
  // A file wholly in the page cache needs no walk.
  if (size <= 0 || RangeCached(fd, 0, static_cast<uint64_t>(size))) {
    phase_ = Phase::kDone;
    return false;
  }
  in_order_ = start == Start::kAheadInOrder;
  if (scratch_ == nullptr) {
    const bool made = AllocationSucceeds([&] {
      needs_.reserve(kInOrderFillVisits);
      regions_.reserve(kInOrderFillVisits);
    });
    scratch_.reset(NewArrayOrNull<char>(kRegionBytes));
    taken_regions_.reset(NewArrayOrNull<uint64_t>(kTrackedRegions / 64));
    requests_.reset(NewArrayOrNull<Request>(kMaxInFlightAhead));
    if (!made || scratch_ == nullptr || taken_regions_ == nullptr || requests_ == nullptr) {
      scratch_.reset();
      taken_regions_.reset();
      requests_.reset();
      phase_ = Phase::kDone;
      return false;
    }
    // (Their operation is set below.)
    for (int slot = 0; slot < kMaxInFlightAhead; ++slot)
      requests_[slot].call.type = FOREACTOR_CALL_PREAD;
  }
  std::fill_n(taken_regions_.get(), kTrackedRegions / 64, uint64_t{0});
  file_size_ = size;
  fd_ = fd;
  cursor_ = after;
  walk_ended_ = false;
  walked_reads_ = 0;
  program_reads_ = 0;
  batch_middle_ = 0;
  regions_.clear();
  batch_regions_ = 0;
  batch_cached_ = 0;
  batch_all_taken_ = false;
  refusals_in_a_row_ = 0;
  fill_count_ = 0;
  max_in_flight_ = start == Start::kByProgramReads ? kMaxInFlight : kMaxInFlightAhead;
  // A look-ahead at scattered reads hints their regions
  // (RequestOperation::kStartReadAhead says why); a scattered scan's reads,
  // and an in-order look-ahead (see the top), read them.
  const RequestOperation operation = start == Start::kAheadScattered
                                         ? RequestOperation::kStartReadAhead
                                         : RequestOperation::kReadAhead;
  for (int slot = 0; slot < kMaxInFlightAhead; ++slot) requests_[slot].operation = operation;
  phase_ = Phase::kStreaming;
  statistics_->read_ahead_streams++;
  if (start != Start::kByProgramReads) statistics_->read_ahead_streams_ahead++;
  if (in_order_) statistics_->read_ahead_streams_in_order++;
  Pump();
  return true;
}

void ReadAheadStream::Pump() {
  if (phase_ != Phase::kStreaming) return;
  Reap(false);
  if (in_flight_ >= max_in_flight_) Reap(true);
  bool prepared = false;
  while (in_flight_ < max_in_flight_) {
    if (regions_.empty()) {
      // Every region of the batch went, or was found cached.
      if (batch_regions_ > 0 && batch_cached_ == batch_regions_) {
        phase_ = Phase::kDone;  // the file is hot
        break;
      }
      if (walk_ended_ || program_reads_ < batch_middle_) break;
      if (!GatherBatch()) break;
      if (in_order_ && walk_ended_ && needs_.size() < kBatchVisits) {
        // A run in file order shorter than a batch: the program's own
        // read-ahead reads it as fast as a fill (see the top).  Its reads
        // are left to the program all the same.
        in_order_start_ = needs_.front().range.start;
        for (const Need& need : needs_) in_order_end_ = std::max(in_order_end_, need.range.end);
        regions_.clear();
        phase_ = Phase::kDone;
        break;
      }
      if (regions_.empty()) {
        // Unless its regions were all taken before, the batch is too sparse
        // for regions: the peek head's reads are best.
        if (!batch_all_taken_) phase_ = Phase::kDone;
        break;
      }
    }
    if (in_order_ && fill_count_ == CacheFill::kMaxRanges) break;
    const Need region = regions_.back();
    regions_.pop_back();
    const int64_t index = region.range.start / static_cast<int64_t>(kRegionBytes);
    if (!in_order_ && RangeCached(fd_, static_cast<uint64_t>(region.range.start),
                                  static_cast<uint64_t>(region.range.end - region.range.start))) {
      statistics_->read_ahead_cached_regions++;
      batch_cached_++;
      TakeRegion(index);
      continue;
    }
    if (in_order_) {
      fill_ranges_[fill_count_++] = {region.range.start,
                                     static_cast<uint64_t>(region.range.end - region.range.start)};
      TakeRegion(index);
      prepared = true;
      continue;
    }
    if (!Issue(region.range)) {
      regions_.push_back(region);  // (within the reserved capacity)
      if (++refusals_in_a_row_ >= kRefusalsToStop) phase_ = Phase::kDone;
      break;
    }
    TakeRegion(index);
    refusals_in_a_row_ = 0;
    prepared = true;
  }
  if (in_order_) {
    // One fill, ahead of the program to the end of its run or of
    // CacheFill::kMaxRanges regions (see the top).
    phase_ = Phase::kDone;
    if (prepared) StartFill();
    return;
  }
  if (prepared) engine_->Submit();  // a failure completes the requests with -ECANCELED
}

void ReadAheadStream::StartFill() {
  const FileKindCache::Kind kind = file_kinds_->Lookup(fd_);
  const int64_t program_flags = raw::Fcntl(fd_, F_GETFL, 0);
  const bool no_access_time = program_flags >= 0 && (program_flags & O_NOATIME) != 0;
  if (!kind.known || program_flags < 0 ||
      !fill_.Start(fd_, kind.device, kind.inode, no_access_time, fill_ranges_, fill_count_)) {
    fill_count_ = 0;  // (and no range is left to the program)
    return;
  }
  fill_next_ = 0;
  in_order_start_ = fill_ranges_[0].offset;
  const CacheFill::Range& last = fill_ranges_[fill_count_ - 1];
  in_order_end_ = last.offset + static_cast<int64_t>(last.length);
  statistics_->read_ahead_requests += static_cast<uint64_t>(fill_count_);
  for (int i = 0; i < fill_count_; ++i) statistics_->read_ahead_bytes += fill_ranges_[i].length;
}

void ReadAheadStream::WaitForFill(int fd, int64_t offset, uint64_t length) {
  if (fd != fd_ || offset < 0 || fill_next_ >= fill_count_) return;
  const int64_t end = offset + static_cast<int64_t>(length);
  // The fill's ranges are in file order, and so are the program's reads.
  int last = fill_next_;
  while (last < fill_count_ &&
         fill_ranges_[last].offset + static_cast<int64_t>(fill_ranges_[last].length) < end) {
    ++last;
  }
  if (last == fill_count_) {
    last--;  // the read ends past the fill: wait for all of it
  } else if (fill_ranges_[last].offset >= end) {
    return;  // before the fill's next range
  }
  const uint64_t start = MonotonicNanoseconds();
  fill_.WaitFor(last);
  statistics_->read_ahead_wait_nanoseconds += MonotonicNanoseconds() - start;
  // Ranges the program's read ended in or passed are behind it.
  fill_next_ = fill_ranges_[last].offset + static_cast<int64_t>(fill_ranges_[last].length) <= end
                   ? last + 1
                   : last;
}

void ReadAheadStream::StopFill() {
  fill_.Stop();
  fill_count_ = 0;
  fill_next_ = 0;
}

bool ReadAheadStream::GatherBatch() {
  needs_.clear();
  uint32_t order = 0;
  unsigned passed = 0;
  // An in-order stream's fill covers more than a batch (see the top).
  const unsigned limit = in_order_ ? kInOrderFillVisits : kBatchVisits;
  while (!walk_ended_ && needs_.size() < limit && passed < 4 * limit) {
    Range range;
    int fd = -1;
    const Step step = WalkStep(&cursor_, &range, &fd);
    if (step == Step::kWait) break;
    if (step == Step::kStop) {
      walk_ended_ = true;
      break;
    }
    if (step == Step::kPassed || fd != fd_) {
      ++passed;
      continue;
    }
    walked_reads_++;
    needs_.push_back(Need{range, order++});  // within the reserved capacity
  }
  if (needs_.empty()) return false;
  // The program must have read half of this batch before the next one.
  batch_middle_ = walked_reads_ - needs_.size() / 2;
  std::sort(needs_.begin(), needs_.end(),
            [](const Need& a, const Need& b) { return a.range.start < b.range.start; });
  regions_.clear();
  batch_cached_ = 0;
  bool needs_only_taken_regions = false;
  uint64_t batch_needed = 0;
  uint64_t regions_touched = 0;
  size_t first = 0;
  while (first < needs_.size()) {
    const int64_t region = needs_[first].range.start / static_cast<int64_t>(kRegionBytes);
    uint64_t needed = 0;
    uint32_t order = needs_[first].order;
    size_t next = first;
    for (; next < needs_.size() &&
           needs_[next].range.start / static_cast<int64_t>(kRegionBytes) == region;
         ++next) {
      needed += static_cast<uint64_t>(needs_[next].range.end - needs_[next].range.start);
      order = std::min(order, needs_[next].order);
    }
    first = next;
    batch_needed += needed;
    regions_touched++;
    if (needed < kMinRegionNeedBytes) continue;
    if (RegionTaken(region)) {
      needs_only_taken_regions = true;
      continue;
    }
    const int64_t start = region * static_cast<int64_t>(kRegionBytes);
    const int64_t end = std::min(start + static_cast<int64_t>(kRegionBytes), file_size_);
    if (end > start)
      regions_.push_back(Need{Range{start, end}, order});  // within the reserved capacity
  }
  // Too sparse as a whole: no region is worth reading (see kMinRegionNeedBytes).
  if (batch_needed < regions_touched * kMinRegionNeedBytes) {
    regions_.clear();
    needs_only_taken_regions = false;
  }
  batch_all_taken_ = regions_.empty() && needs_only_taken_regions;
  // Needed first goes first: regions_ is popped from the back.
  std::sort(regions_.begin(), regions_.end(),
            [](const Need& a, const Need& b) { return a.order > b.order; });
  batch_regions_ = static_cast<unsigned>(regions_.size());
  return true;
}

bool ReadAheadStream::Issue(const Range& region) {
  int slot = 0;
  while (slot < max_in_flight_ && slot_busy_[slot]) ++slot;
  if (slot == max_in_flight_) return false;
  Request& request = requests_[slot];
  request.call.fd = fd_;
  request.call.buffer = scratch_.get();
  request.call.length = static_cast<size_t>(region.end - region.start);
  request.call.offset = region.start;
  request.linked_next = nullptr;
  if (!engine_->Prepare(&request)) return false;
  slot_busy_[slot] = true;
  in_flight_++;
  statistics_->read_ahead_requests++;
  statistics_->read_ahead_bytes += request.call.length;
  return true;
}

void ReadAheadStream::Reap(bool poll) {
  if (in_flight_ == 0) return;
  if (poll) engine_->Poll();
  for (int slot = 0; slot < kMaxInFlightAhead; ++slot) {
    if (slot_busy_[slot] &&
        requests_[slot].state.load(std::memory_order_acquire) == RequestState::kCompleted) {
      Release(slot);
    }
  }
}

void ReadAheadStream::Release(int slot) {
  Request& request = requests_[slot];
  if (request.result < 0 && request.result != -ECANCELED) statistics_->read_ahead_errors++;
  request.state.store(RequestState::kIdle, std::memory_order_relaxed);
  slot_busy_[slot] = false;
  in_flight_--;
}

void ReadAheadStream::CancelAndWait() {
  StopFill();
  if (in_flight_ == 0) return;
  for (int slot = 0; slot < kMaxInFlightAhead; ++slot) {
    if (slot_busy_[slot]) engine_->Cancel(&requests_[slot]);
  }
  const uint64_t start = MonotonicNanoseconds();
  for (int slot = 0; slot < kMaxInFlightAhead; ++slot) {
    if (!slot_busy_[slot]) continue;
    engine_->Wait(&requests_[slot]);
    Release(slot);
  }
  statistics_->read_ahead_wait_nanoseconds += MonotonicNanoseconds() - start;
}

}  // namespace foreactor
