#include "runtime/graph_runner.h"

#include <fcntl.h>
#include <limits.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include "base/call_types.h"
#include "base/out_of_memory.h"
#include "runtime/call_matching.h"
#include "runtime/early_request.h"
#include "runtime/monotonic_clock.h"
#include "runtime/pages_cached.h"
#include "runtime/raw_syscalls.h"

namespace foreactor {
namespace {

// Plain reads of one buffer: the calls that can be served from the page cache.
bool IsPlainRead(foreactor_call_type type) {
  return type == FOREACTOR_CALL_READ || type == FOREACTOR_CALL_PREAD;
}

// Metadata lookups (QuickCallMode): the stat family.  Not opens: an
// early open gives the descriptor that the reads after it need to be
// issued early, and a file's data can be cold while its inode is cached.
bool IsLookupType(foreactor_call_type type) { return InfoOf(type).fills_stat; }

}  // namespace

// ------------------------------------------------------------ construction

GraphRunner::GraphRunner(const Graph& graph, const GraphSettings& settings, Engine* engine,
                         Engine* chain_engine)
    : graph_(graph),
      settings_(settings),
      engine_(engine),
      chain_engine_(chain_engine != nullptr ? chain_engine : engine),
      ring_size_(settings.depth + 1),
      depth_controller_(DepthPolicyOf(settings), settings.depth),
      check_report_(graph) {
  lookups_only_ = graph.syscall_count() > 0;
  writes_only_ = graph.syscall_count() > 0;
  bool has_pread = false;
  bool reads_only = graph.syscall_count() > 0;
  ok_ = AllocationSucceeds([&] {
    syscall_states_.resize(graph.syscall_count());
    branch_states_.resize(graph.branch_count());
    dense_to_node_.resize(graph.syscall_count());
    for (int id = 0; id < graph.node_count(); ++id) {
      const Node& node = graph.node(id);
      if (node.kind == NodeKind::kSyscall) {
        if (!IsLookupType(node.call_type)) lookups_only_ = false;
        if (!InfoOf(node.call_type).writes_data) writes_only_ = false;
        if (node.call_type == FOREACTOR_CALL_PREAD) has_pread = true;
        if (!IsPlainRead(node.call_type)) reads_only = false;
        dense_to_node_[node.dense_index] = id;
        SyscallNodeState& state = syscall_states_[node.dense_index];
        state.slots.Allocate(ring_size_);
      } else if (node.kind == NodeKind::kBranch) {
        branch_states_[node.dense_index].choices.reset(new int[ring_size_ + 1]);
      }
    }
    for (int id = 0; id < graph.node_count(); ++id) {
      const Node& node = graph.node(id);
      if (node.kind != NodeKind::kSyscall || node.loops.empty()) continue;
      const int innermost = node.loops.back();
      unsigned in_loop = 0;
      for (int other = 0; other < graph.node_count(); ++other) {
        const Node& candidate = graph.node(other);
        if (candidate.kind == NodeKind::kSyscall &&
            std::find(candidate.loops.begin(), candidate.loops.end(), innermost) !=
                candidate.loops.end()) {
          in_loop++;
        }
      }
      syscall_states_[node.dense_index].visits_per_pass = in_loop;
    }
    pending_accesses_.Reserve(ring_size_);
    if (graph.has_write_behind() && settings.write_behind && !settings.check && engine != nullptr) {
      write_behind_.reset(new WriteBehind(engine, &file_kinds_, &statistics_,
                                          &tls_context.write_behind_hints_in_flight,
                                          WriteBehind::ChunkBytesForTests()));
    }
    if (has_pread && ReadAheadStreamsOn(settings) && engine != nullptr) {
      read_ahead_.reset(new ReadAheadStream(graph, engine, &file_kinds_, &statistics_));
    }
    if (WritePipelineWanted(graph, settings) && engine != nullptr) {
      write_pipeline_.reset(new WritePipeline(chain_engine_, ring_size_));
    }
    // The page-cache trial (PageCacheMode::StartTrial): for a graph of
    // plain reads alone (while it lasts the peek head rests, and would
    // start no other call early), whose calls need not all be issued (not
    // an exact depth, not check mode).
    if (reads_only && settings.page_cache_aware && !settings.check &&
        DepthPolicyOf(settings) != DepthPolicy::kExact) {
      cache_mode_.StartTrial();
    }
  });
}

GraphRunner::~GraphRunner() {
  if (!abandoned_ && speculating_) DrainAhead();
  // ~WriteBehind waits for the hints still in flight (unless abandoned).
}

// ------------------------------------------------------------ scope life

void GraphRunner::Enter(void* scope_state) {
  scope_state_ = scope_state;
  speculating_ = ok_ && !abandoned_ && engine_ != nullptr;
  cache_mode_.StartScope();
  timed_call_start_ = 0;
  write_probe_ = PausingProbe{};
  frontier_ = Cursor{};
  frontier_.Take(graph_.node(FOREACTOR_START_NODE).next);
  peek_ = frontier_;
  frontier_read_end_ = peek_read_end_ = ReadEnd{};
  issue_rules_.StartScope(graph_.node(FOREACTOR_START_NODE).next.weak);
  visits_ahead_ = 0;
  bytes_ahead_ = 0;
  prepared_unsubmitted_ = 0;
  pending_accesses_.Clear();
  misprediction_guard_.ResetMispredictionRun();
  check_report_.StartScope();
  frontier_weak_since_call_ = graph_.node(FOREACTOR_START_NODE).next.weak;
  peek_blocked_for_scope_ = false;
  for (SyscallNodeState& state : syscall_states_) state.peek_count = state.frontier_count = 0;
  for (BranchNodeState& state : branch_states_) state.peek_count = state.frontier_count = 0;
  file_kinds_.Clear();
  statistics_.scopes++;
  depth_controller_.ScopeEntered();
  if (read_ahead_ != nullptr) read_ahead_->StartScope(scope_state);
  if (write_pipeline_ != nullptr) write_pipeline_->StartScope();
  Fill();
}

void GraphRunner::Exit() {
  if (abandoned_) return;
  if (settings_.check && speculating_ && AdvanceFrontierThroughBranches() &&
      graph_.node(frontier_.node).kind == NodeKind::kSyscall && !frontier_weak_since_call_) {
    ReportDivergence(frontier_.node, frontier_,
                     "the function returned, but no weak edge leads here from its last call",
                     "mark the edge weak if the function may return there, or check the "
                     "branch choices that led here");
  }
  DrainAhead();
  direct_reads_.CloseAll();  // every early request has completed
  if (read_ahead_ != nullptr) read_ahead_->EndScope();
  if (write_behind_ != nullptr) write_behind_->EndScope();
  depth_controller_.ScopeLeft();
  depth_controller_.KeepAtLeast(0);
  FoldControllerStatistics();
  FoldStatistics();
  speculating_ = false;
  scope_state_ = nullptr;
}

void GraphRunner::FoldStatistics() {
  if (totals_ == nullptr)
    totals_ = GraphTotalsFor(graph_.name(), engine_ != nullptr ? engine_->name() : "none");
  AccumulateStatistics(totals_, statistics_);
  statistics_ = Statistics{};
}

void GraphRunner::BeforeClose(int fd) {
  if (write_behind_ == nullptr || abandoned_) return;
  write_behind_->BeforeClose(fd);
  // Between scopes nothing else folds what the wait counted.
  const bool counted =
      statistics_.write_behind_wait_nanoseconds != 0 || statistics_.write_behind_errors != 0;
  if (counted && !speculating_ && scope_state_ == nullptr) FoldStatistics();
}

void GraphRunner::FinishWriteBehind() {
  if (write_behind_ == nullptr || abandoned_ || !write_behind_->has_hints_in_flight()) return;
  write_behind_->WaitAll();
  if (!speculating_ && scope_state_ == nullptr) FoldStatistics();
}

// ------------------------------------------------------------ helpers

foreactor_visit GraphRunner::MakeVisit(const Cursor& cursor, uint64_t* iteration_storage) const {
  return VisitAt(graph_, cursor, scope_state_, iteration_storage);
}

bool GraphRunner::AskArguments(int node, const Cursor& cursor, VisitSlot& slot) {
  const Node& info = graph_.node(node);
  uint64_t iteration[FOREACTOR_MAX_LOOPS];
  foreactor_visit visit = MakeVisit(cursor, iteration);
  foreactor_call call{};
  call.type = info.call_type;
  foreactor_readiness readiness = info.arguments(&visit, &call);
  if (readiness == FOREACTOR_NEVER) {
    if (&cursor == &peek_) peek_blocked_for_scope_ = true;
    return false;
  }
  if (readiness != FOREACTOR_READY) return false;
  call.type = info.call_type;  // a callback cannot change its node's type
  if (InfoOf(call.type).uses_path) {
    if (call.path == nullptr) return false;
    size_t length = strnlen(call.path, PATH_MAX);
    if (length >= PATH_MAX) return false;
    if (slot.path_storage == nullptr) {
      slot.path_storage.reset(NewArrayOrNull<char>(PATH_MAX));
      if (slot.path_storage == nullptr) return false;
    }
    std::memcpy(slot.path_storage.get(), call.path, length + 1);
    call.path = slot.path_storage.get();
  }
  slot.predicted = call;
  slot.state = SlotState::kPassed;
  // A new visit: nothing of the slot's visit before describes it.
  slot.probe_waited = false;
  slot.direct_read = false;
  return true;
}

void GraphRunner::InvalidateAhead(const foreactor_call& real, const VisitSlot* except) {
  // Early results ahead that a call the program makes now (outside the
  // graph, or not as the graph said) may change must not be used.
  if (!PendingAccesses::MayChangeEarlyResults(real) || visits_ahead_ == 0) return;
  const PendingAccesses::Change change = pending_accesses_.ChangeBy(real);
  for (SyscallNodeState& state : syscall_states_) {
    for (uint64_t visit = state.frontier_count; visit < state.peek_count; ++visit) {
      VisitSlot& slot = state.slots.At(visit);
      if (&slot == except) continue;
      if (slot.state != SlotState::kIssued && slot.state != SlotState::kCached) continue;
      if (!pending_accesses_.MakesStale(change, slot.predicted)) continue;
      if (slot.state == SlotState::kIssued) {
        CancelEarly(slot);
        DiscardEarlyResult(slot);
      } else {
        statistics_.wasted++;
        slot.state = SlotState::kPassed;
        slot.request.state.store(RequestState::kIdle, std::memory_order_relaxed);
      }
    }
  }
}

void GraphRunner::TakeEdgeAhead(const Edge& edge) {
  peek_.Take(edge);
  issue_rules_.PeekCrossed(edge.weak);
}

// ------------------------------------------------------------ peek head

void GraphRunner::Fill() {
  if (!speculating_) return;
  coalesced_reads_.Reap();  // before the pipeline looks at the reads' states
  if (write_pipeline_ != nullptr) statistics_.issued_early += write_pipeline_->Pump();
  // While reads are served from the page cache nothing is issued early, so
  // the peek head rests; the frontier takes it along as it passes it, and
  // the walk resumes when a read would block.  A copy loop's reads still
  // feed its writes to the write pipeline.
  if (misprediction_guard_.suspended() ||
      (cache_mode_.serving_from_cache() && write_pipeline_ == nullptr) ||
      serving_quick_calls_only()) {
    return;
  }
  const unsigned depth = depth_controller_.depth();
  if (!SlotRingsHold(depth)) return;
  while (!peek_blocked_for_scope_ && visits_ahead_ < depth && bytes_ahead_ < kMaxBytesAhead &&
         !WriteProbeAhead()) {
    const Node& node = graph_.node(peek_.node);
    PeekStep step = PeekStep::kStop;
    if (node.kind == NodeKind::kBranch) {
      step = PeekBranch(peek_.node);
    } else if (node.kind == NodeKind::kSyscall) {
      step = PeekSyscall(peek_.node);
    }
    if (step == PeekStep::kStop) break;
  }
  prepared_unsubmitted_ += coalesced_reads_.FinishWalk();
  if (prepared_unsubmitted_ > 0) {
    prepared_unsubmitted_ = 0;
    engine_->Submit();  // failures complete the requests with -ECANCELED
  }
}

bool GraphRunner::SlotRingsHold(unsigned depth) {
  if (depth < slots_in_use_) return true;
  if (visits_ahead_ > 0) {
    slot_rings_waited_ = true;
    return false;
  }
  // A ring that had to wait grows to the most at once: a second wait would
  // cost another pipeline's drain.
  const unsigned wanted = slot_rings_waited_ ? ring_size_ : std::min(depth + 1, ring_size_);
  slot_rings_waited_ = false;
  // Out of memory, a ring stays shorter, and so does the depth.
  unsigned held = wanted;
  for (SyscallNodeState& state : syscall_states_) held = std::min(held, state.slots.GrowTo(wanted));
  slots_in_use_ = held;  // (GrowTo never shrinks a ring)
  return depth < slots_in_use_;
}

GraphRunner::PeekStep GraphRunner::PeekBranch(int node) {
  const Node& info = graph_.node(node);
  BranchNodeState& state = branch_states_[info.dense_index];
  uint64_t iteration[FOREACTOR_MAX_LOOPS];
  foreactor_visit visit = MakeVisit(peek_, iteration);
  int choice = info.choice(&visit);
  if (choice < 0 || choice >= static_cast<int>(info.children.size())) return PeekStep::kStop;
  state.choices[state.peek_count % (ring_size_ + 1)] = choice;
  state.peek_count++;
  TakeEdgeAhead(info.children[choice]);
  return PeekStep::kAdvanced;
}

bool GraphRunner::LeftInFileOrder(const foreactor_call& call) {
  // Asked before the direct-read decision: the reads it takes are too
  // small to go past the page cache.
  static_assert(kMaxInOrderReadBytes < DirectReads::kMinLength);
  if (call.type != FOREACTOR_CALL_PREAD || call.length > kMaxInOrderReadBytes) return false;
  bool left =
      read_ahead_ != nullptr && read_ahead_->ReadsInOrder(call.fd, call.offset, call.length);
  if (!left && peek_read_end_.ContinuedColdBy(call)) {
    left = (peek_read_end_.left_in_a_row + 1) % kColdRunCheckInterval != 0 ||
           !RangeCached(call.fd, static_cast<uint64_t>(call.offset), call.length);
  }
  if (left) statistics_.left_in_file_order++;
  return left;
}

GraphRunner::PeekStep GraphRunner::PeekSyscall(int node) {
  const Node& info = graph_.node(node);
  SyscallNodeState& state = syscall_states_[info.dense_index];
  VisitSlot& slot = state.slots.At(state.peek_count);
  if (!AskArguments(node, peek_, slot)) return PeekStep::kStop;

  const foreactor_call& call = slot.predicted;
  const EarlyIssue early = EarlyIssueFor(call);
  const bool uncertain = issue_rules_.Uncertain();
  // A call with side effects that is not certain is passed like one that
  // never runs early: the program makes it at the frontier, and the pure
  // calls after it may still be issued on a guess.
  const bool held_back = IssueRules::HeldBack(early, uncertain);
  if (pending_accesses_.Blocks(call)) return PeekStep::kStop;

  bool issue =
      !settings_.check && early != EarlyIssue::kNever && !held_back && issue_rules_.Issuable(call);
  // A write of the bytes a linked read produces never runs on its own.
  if (WritesLinkedReadsBytes(call)) issue = false;
  // A write at the file position goes where the plugin says only if that
  // is where the position will be.
  if (issue && !IssueRules::WriteAtPositionSettled(call, pending_accesses_)) issue = false;
  // Reads of a file opened with O_DIRECT never come from the page cache
  // (and RWF_NOWAIT reads them from the device).  The head of a linked pair
  // is tried too: found in the page cache, it is kept and its write runs at
  // the frontier, as the program makes it.
  const bool plain_read = issue && settings_.page_cache_aware && IsPlainRead(call.type);
  const FileKindCache::Kind kind = plain_read ? file_kinds_.Lookup(call.fd) : FileKindCache::Kind{};
  const bool cacheable_read = plain_read && !kind.direct;
  // The head of a pair whose write the pipeline may run is read early even
  // from the page cache: the write needs the bytes in a buffer of ours.
  const bool feeds_pipeline = call.link_next && write_pipeline_ != nullptr &&
                              graph_.node(info.next.to).kind == NodeKind::kSyscall &&
                              InfoOf(graph_.node(info.next.to).call_type).writes_data;
  if (cacheable_read && cache_mode_.serving_from_cache() && !feeds_pipeline) {
    issue = false;  // the frontier reads it from the page cache
  }
  // A lookup or a buffered write is left to the frontier, which times it,
  // while such calls are served, and as a probe now and then while they
  // are not.
  // A write probe pauses the peek head until the frontier has passed it:
  // early writes to the same file running beside it would slow the
  // program's own (the file's lock, its pages), and the probe would time
  // them.
  if (issue) {
    QuickCallMode* quick = QuickModeFor(call);
    if (quick != nullptr && (quick->serving() || quick->ProbeThis())) {
      issue = false;
      if (quick == &write_mode_ && !quick->serving()) {
        write_probe_ = PausingProbe{info.dense_index, state.peek_count};
      }
    }
  }
  // Decided before a buffer is taken for the read: a read left to the
  // program needs none (a one-scan process touches each slot's buffer for
  // the first time, 1.3 us a page on the development VM).
  bool left_in_file_order = false;
  if (cacheable_read && issue && !feeds_pipeline && LeftInFileOrder(call)) {
    issue = false;
    left_in_file_order = true;
  }
  if (issue && !PrepareEarlyRequest(slot)) return PeekStep::kStop;
  // A read of a cold range goes past the page cache when it can: the
  // device fills the slot directly, and no probe starts the kernel's
  // read-ahead of a range the slot will serve.
  bool direct = false;
  const uint64_t visits_for_direct_reads =
      cacheable_read && issue && settings_.direct_reads
          ? (kMinDirectReadBytesAhead + slot.request.call.length - 1) /
                std::max<uint64_t>(slot.request.call.length, 1) * state.visits_per_pass
          : 0;
  if (visits_for_direct_reads > 0 && settings_.depth >= visits_for_direct_reads) {
    if (slot.request.call.length >= DirectReads::kMinLength) streaming_past_cache_ = false;
    const int descriptor =
        direct_reads_.DescriptorFor(call.fd, kind, slot.request.call.offset,
                                    slot.request.call.length, slot.request.call.buffer);
    if (descriptor >= 0) {
      slot.request.call.fd = descriptor;
      direct = true;
      streaming_past_cache_ = true;
      // The scope streams past the cache from here on: the automatic
      // depth keeps what direct reads need.
      depth_controller_.KeepAtLeast(static_cast<unsigned>(visits_for_direct_reads));
    }
  }
  slot.direct_read = direct;
  // Went through the page cache's checks and was not found there (reads
  // left in file order continue a cold run).
  bool cold_read = left_in_file_order;
  if (cacheable_read && issue && !direct) {
    cold_read = true;
    if (!feeds_pipeline && read_ahead_ != nullptr &&
        read_ahead_->ReadsInOrder(call.fd, call.offset, call.length)) {
      // In an in-order stream's regions, larger than LeftInFileOrder()
      // takes (kMaxInOrderReadBytes): the stream reads them.
      issue = false;
      left_in_file_order = true;
      statistics_.left_in_file_order++;
    } else if (TryReadFromCache(slot)) {
      issue = false;
      slot.state = SlotState::kCached;
      cold_read = slot.probe_waited;
      (slot.probe_waited ? statistics_.probes_waited : statistics_.found_cached)++;
    } else if (!feeds_pipeline && call.offset >= 0) {
      if (RangeCached(call.fd, static_cast<uint64_t>(call.offset), call.length)) {
        // Every page is in the page cache, some perhaps still being read in
        // (the kernel's read-ahead of a sequential scan, or the probe's own):
        // the device already has the read.  Issued early, it would only wait
        // for those pages on a worker and wake the program from there (5-7%
        // slower on a bulk-loaded B+-tree's cold scan with the thread pool);
        // the program's own read waits for them as cheaply.
        issue = false;
        statistics_.found_present++;
      } else if (kind.regular && raw::Readahead(call.fd, call.offset, call.length) == 0) {
        // Cold: the kernel starts reading the range now, from this thread,
        // and the program's own read at the frontier waits for those pages
        // and copies them once.  Issued early, the read would start only
        // when the engine got to it (a pool worker woken on the other core)
        // and be copied twice (into the slot, then into the program's buffer).
        issue = false;
        statistics_.reads_started++;
      }
    }
  }

  // A linked pair: prepare the successor now.  A write of the bytes the
  // read produces goes to the write pipeline, which sends it once the read
  // completed and the writes before it did in full; any other tail is
  // handed over with its head as one linked unit.
  VisitSlot* partner = nullptr;
  int partner_node = info.next.to;
  const bool head_ahead = issue || (feeds_pipeline && slot.state == SlotState::kCached);
  if (head_ahead && call.link_next && graph_.node(partner_node).kind == NodeKind::kSyscall) {
    Cursor after = peek_;
    after.Take(info.next);
    SyscallNodeState& partner_state = syscall_states_[graph_.node(partner_node).dense_index];
    VisitSlot& candidate = partner_state.slots.At(partner_state.peek_count);
    if (!AskArguments(partner_node, after, candidate)) return PeekStep::kStop;
    const bool partner_uncertain = uncertain || info.next.weak;
    const EarlyIssue partner_early = EarlyIssueFor(candidate.predicted);
    const bool partner_held_back = IssueRules::HeldBack(partner_early, partner_uncertain);
    // The tail is ordered after its head by the link, and after every
    // earlier visit ahead like any other call.  A tail that may not run
    // early leaves the head to run alone.
    // (The pipeline checks where a fed write at the file position goes
    // when it sends it.)
    const bool fed = WritesLinkedReadsBytes(candidate.predicted);
    if (partner_early != EarlyIssue::kNever && !partner_held_back &&
        !pending_accesses_.Blocks(candidate.predicted) &&
        (fed || IssueRules::WriteAtPositionSettled(candidate.predicted, pending_accesses_)) &&
        issue_rules_.Issuable(candidate.predicted) && (!fed || write_pipeline_ != nullptr) &&
        PrepareEarlyRequest(candidate)) {
      if (fed) {
        candidate.request.call.buffer = slot.data.data();  // writes what the read produced
        if (write_pipeline_->Hold(&slot, &candidate)) partner = &candidate;
      } else if (issue) {
        slot.request.linked_next = &candidate.request;
        partner = &candidate;
      }
    }
    if (partner == nullptr) candidate.state = SlotState::kEmpty;
  }

  if (issue) {
    // A direct read rides on a coalesced request when it can: it is then
    // prepared on the engine with its group (coalesced_reads.h).
    const bool coalesced =
        direct && slot.request.linked_next == nullptr && coalesced_reads_.Join(&slot);
    if (!coalesced && !engine_->Prepare(&slot.request)) {
      slot.request.linked_next = nullptr;
      slot.state = SlotState::kEmpty;
      if (partner != nullptr) partner->state = SlotState::kEmpty;
      return PeekStep::kStop;  // queue full: try again after the next completion
    }
    slot.state = SlotState::kIssued;
    statistics_.issued_early++;
    if (direct) statistics_.direct_reads++;
    if (!coalesced) {
      prepared_unsubmitted_++;
      if (direct) statistics_.direct_read_requests++;
    }
  }

  auto pass = [this](VisitSlot& passed, SyscallNodeState& passed_state, bool passed_held_back) {
    pending_accesses_.Record(passed.predicted);
    passed.has_access = true;
    const foreactor_call_type type = passed.predicted.type;
    // Nothing after a visit that rests on a guess is certain.
    passed.unconfirmed_guess = issue_rules_.PassedRestsOnGuess(passed.predicted, passed_held_back);
    const CallTypeInfo& passed_info = InfoOf(type);
    passed.bytes_ahead =
        passed_info.reads_data || passed_info.writes_data ? DataLength(passed.predicted) : 0;
    // A write of what its linked read produced moves the read's bytes
    // again, from the read's buffer: it adds no memory and no device read.
    if (WritesLinkedReadsBytes(passed.predicted)) passed.bytes_ahead = 0;
    if (passed.state == SlotState::kIssued && passed.direct_read) {
      passed.bytes_ahead = passed.bytes_ahead * kMaxBytesAhead / kMaxDirectBytesAhead;
    }
    bytes_ahead_ += passed.bytes_ahead;
    passed_state.peek_count++;
    visits_ahead_++;
  };
  pass(slot, state, held_back);
  if (call.type == FOREACTOR_CALL_PREAD) {
    const unsigned left_in_a_row = left_in_file_order ? peek_read_end_.left_in_a_row + 1 : 0;
    peek_read_end_ =
        ReadEnd{call.fd, call.offset + static_cast<int64_t>(call.length), cold_read, left_in_a_row};
  }
  TakeEdgeAhead(info.next);
  if (partner != nullptr) {
    if (partner->state != SlotState::kHeld) {  // held: counted when the pipeline sends it
      partner->state = SlotState::kIssued;
      statistics_.issued_early++;
    }
    const Node& partner_info = graph_.node(partner_node);
    pass(*partner, syscall_states_[partner_info.dense_index], false);
    TakeEdgeAhead(partner_info.next);
  }
  return PeekStep::kAdvanced;
}

// ------------------------------------------------------------ frontier

bool GraphRunner::AdvanceFrontierThroughBranches() {
  for (;;) {
    const Node& info = graph_.node(frontier_.node);
    if (info.kind != NodeKind::kBranch) return true;
    BranchNodeState& state = branch_states_[info.dense_index];
    uint64_t iteration[FOREACTOR_MAX_LOOPS];
    foreactor_visit visit = MakeVisit(frontier_, iteration);
    int choice = info.choice(&visit);
    const bool valid = choice >= 0 && choice < static_cast<int>(info.children.size());
    bool peek_passed = state.frontier_count < state.peek_count;
    if (peek_passed) {
      int recorded = state.choices[state.frontier_count % (ring_size_ + 1)];
      if (!valid) {
        choice = recorded;
      } else if (choice != recorded) {
        // The path the peek head took is not the program's: nothing ahead
        // can be used.
        if (settings_.check) {
          ReportDivergence(frontier_.node, frontier_,
                           "the choice callback first answered child " + std::to_string(recorded) +
                               ", now child " + std::to_string(choice),
                           "a choice must not change once given: it may depend only on what is "
                           "known for this visit");
        }
        NoteMisprediction();
        DrainAhead();
        peek_passed = false;
      }
    } else if (!valid) {
      return false;
    }
    const Edge& edge = info.children[choice];
    state.frontier_count++;
    frontier_.Take(edge);
    if (edge.weak) {
      issue_rules_.FrontierCrossedWeakEdge();
      frontier_weak_since_call_ = true;
    }
    if (!peek_passed) {
      state.peek_count = state.frontier_count;
      peek_ = frontier_;
      peek_read_end_ = frontier_read_end_;
      issue_rules_.PeekAtFrontier();
    }
  }
}

bool GraphRunner::Offer(InterceptedCall* intercepted, int64_t* result) {
  if (!speculating_) return false;
  if (!AdvanceFrontierThroughBranches()) {
    PassThrough(intercepted->call);
    return false;
  }
  const int node = frontier_.node;
  const Node& info = graph_.node(node);
  foreactor_call& real = intercepted->call;
  if (real.type == FOREACTOR_CALL_CLOSE && read_ahead_ != nullptr)
    read_ahead_->BeforeClose(real.fd);
  if (info.kind != NodeKind::kSyscall || real.type != info.call_type) {
    if (settings_.check && info.kind == NodeKind::kSyscall) CheckForeignCall(node, real);
    PassThrough(real);
    return false;
  }
  SyscallNodeState& state = syscall_states_[info.dense_index];
  VisitSlot& slot = state.slots.At(state.frontier_count);
  const bool peek_passed = state.frontier_count < state.peek_count;
  // Arguments further ahead may have become known since the last call; ask
  // before waiting.  (When the peek head is still at the frontier, this
  // visit runs synchronously and the walk resumes after it.)
  if (peek_passed) Fill();
  bool known = peek_passed;
  if (!known) known = AskArguments(node, frontier_, slot);
  const CallTypeInfo& type_info = InfoOf(real.type);
  if (known && type_info.uses_fd && slot.predicted.fd != real.fd) {
    // Another descriptor: not this graph's call.
    if (!peek_passed) slot.state = SlotState::kEmpty;
    PassThrough(real);
    return false;
  }
  statistics_.intercepted++;
  intercepted->claimed_by = this;
  intercepted->claimed_node = node;
  // The program went on past any weak edge behind the frontier.
  issue_rules_.ProgramMadeGraphCall();
  // A read an in-order stream's fill brings in waits for it (served from
  // the cache or made as the program's own, it must start no read-ahead).
  if (read_ahead_ != nullptr && real.type == FOREACTOR_CALL_PREAD)
    read_ahead_->WaitForFill(real.fd, real.offset, real.length);

  if (cache_mode_.serving_from_cache() && IsPlainRead(real.type) &&
      slot.state != SlotState::kIssued && slot.state != SlotState::kCached &&
      ServeFromCache(node, intercepted, result)) {
    return true;
  }
  if (type_info.implicit_offset) {
    real.offset = file_kinds_.Lookup(real.fd).regular ? raw::Lseek(real.fd, 0, SEEK_CUR) : -1;
  }
  if (slot.state == SlotState::kIssued && (type_info.reads_data || type_info.writes_data) &&
      !issue_rules_.DirectIoAllowed(real, true)) {
    // Direct I/O the kernel refuses (a misaligned buffer, offset or
    // length): the program's own call must fail as it would.
    DiscardEarlyResult(slot);
  }
  if (misprediction_guard_.suspended() && known && !peek_passed)
    NoteShadowPrediction(ArgumentsMatch(slot.predicted, real));
  if (settings_.check) {
    if (!known) {
      ReportDivergence(node, frontier_,
                       "the program called " + DescribeCall(real) +
                           " while the arguments callback still answers not-yet or never",
                       "everything the callback needs must be in the scope state when the "
                       "program makes the call");
    } else if (!ArgumentsMatch(slot.predicted, real)) {
      ReportDivergence(node, frontier_,
                       "the program called " + DescribeCall(real) + ", the graph predicted " +
                           DescribeCall(slot.predicted),
                       "the arguments callback of this node computes other arguments than the "
                       "program uses at this visit");
    }
  }
  // A lookup or buffered write made here for the first time is timed
  // (Complete()).
  QuickCallMode* quick_made_here =
      slot.state != SlotState::kCached && slot.state != SlotState::kIssued ? QuickModeFor(real)
                                                                           : nullptr;
  if (slot.state == SlotState::kHeld) write_pipeline_->FrontierReached(&slot);  // not sent yet
  if (slot.state == SlotState::kCached) {
    if (ArgumentsMatch(slot.predicted, real))
      return ServeEarlyResult(node, slot, *intercepted, result);
    slot.state = SlotState::kPassed;
    NoteMisprediction();
  } else if (slot.state == SlotState::kIssued) {
    const char* written = static_cast<const char*>(slot.request.call.buffer);
    bool match =
        ArgumentsMatch(slot.predicted, real) &&
        (!type_info.writes_data || (written != nullptr && WrittenBytesMatch(real, written)));
    if (match) {
      WaitFor(slot);
      // A direct read that failed says nothing of the program's read
      // through the page cache, which then runs as its own call.
      const bool failed_direct = slot.direct_read && slot.request.result < 0;
      if (Deliverable(slot.request) && !failed_direct && InstallEarlyOpen(slot)) {
        return ServeEarlyResult(node, slot, *intercepted, result);
      }
      if (Executed(slot.request)) {
        statistics_.wasted++;
      } else {
        statistics_.cancelled++;
      }
    } else {
      DiscardEarlyResult(slot);
      NoteMisprediction();
    }
  }
  statistics_.synchronous++;
  InvalidateAhead(real, &slot);
  if (quick_made_here != nullptr && depth_controller_.depth() > 0) {
    // (At depth 0 nothing would be issued early: nothing to decide.)
    bool timed = true;
    if (quick_made_here->serving()) {
      (quick_made_here == &lookup_mode_ ? statistics_.metadata_served
                                        : statistics_.writes_served)++;
      timed = quick_made_here->CheckThisServed();
    }
    if (timed) {
      timed_mode_ = quick_made_here;
      timed_call_start_ = MonotonicNanoseconds();
    }
  }
  return false;
}

bool GraphRunner::ServeEarlyResult(int node, VisitSlot& slot, const InterceptedCall& intercepted,
                                   int64_t* result) {
  const bool from_engine = slot.state == SlotState::kIssued;
  const foreactor_call& real = intercepted.call;
  const CallTypeInfo& type_info = InfoOf(real.type);
  int64_t value = DeliverResult(slot, real);
  if (type_info.implicit_offset && value > 0) raw::Lseek(real.fd, real.offset + value, SEEK_SET);
  if (from_engine) statistics_.consumed++;
  if (from_engine && value > 0 && (type_info.reads_data || type_info.writes_data)) {
    statistics_.bytes_early += static_cast<uint64_t>(value);
  }
  misprediction_guard_.ResetMispredictionRun();
  if (type_info.writes_data) NoteWriteResult(node, real, value);
  FinishFrontierVisit(node, real, value, true);
  Fill();
  *result = value;
  return true;
}

bool GraphRunner::InstallEarlyOpen(VisitSlot& slot) {
  Request& request = slot.request;
  if (!IsOpen(slot.predicted.type) || request.result < 0) return true;
  const int64_t installed =
      EngineOf(request)->InstallEarlyDescriptor(request.result, slot.predicted);
  // Not installed: the engine gave the file up, and the program opens it
  // itself (counted as a cancelled early call).
  request.result = installed >= 0 ? installed : -ECANCELED;
  return installed >= 0;
}

void GraphRunner::Complete(InterceptedCall* intercepted, int64_t result) {
  if (timed_call_start_ != 0) {
    const uint64_t took = MonotonicNanoseconds() - timed_call_start_;
    timed_call_start_ = 0;
    if (timed_mode_->NoteTimedCall(took)) {
      (timed_mode_ == &lookup_mode_ ? statistics_.metadata_mode_changes
                                    : statistics_.write_mode_changes)++;
    }
  }
  if (InfoOf(intercepted->call.type).writes_data) {
    NoteWriteResult(intercepted->claimed_node, intercepted->call, result);
  }
  FinishFrontierVisit(intercepted->claimed_node, intercepted->call, result, false);
  Fill();
}

void GraphRunner::FinishFrontierVisit(int node, const foreactor_call& real, int64_t result,
                                      bool served_early) {
  const Node& info = graph_.node(node);
  SyscallNodeState& state = syscall_states_[info.dense_index];
  VisitSlot& slot = state.slots.At(state.frontier_count);
  const bool peek_passed = state.frontier_count < state.peek_count;
  // The visit's bytes came from the page cache, found by a probe of the
  // peek head or served at the frontier.
  const bool found_cached =
      (peek_passed && slot.state == SlotState::kCached && !slot.probe_waited) ||
      cache_mode_.serving_from_cache();
  if (write_pipeline_ != nullptr && peek_passed) {
    const CallTypeInfo& call_info = InfoOf(real.type);
    const bool full = result >= 0 && static_cast<uint64_t>(result) == DataLength(real);
    if (call_info.reads_data) write_pipeline_->ReadConsumed(&slot, served_early && full);
    if (call_info.writes_data) write_pipeline_->FrontierFinished(&slot, full);
  }
  if (slot.has_access && !pending_accesses_.empty()) {
    pending_accesses_.ReleaseOldest();
  }
  slot.has_access = false;
  if (slot.unconfirmed_guess) issue_rules_.GuessReached();
  slot.unconfirmed_guess = false;
  if (info.call_type == FOREACTOR_CALL_CLOSE && slot.state != SlotState::kEmpty) {
    file_kinds_.Forget(slot.predicted.fd);
  }
  slot.state = SlotState::kEmpty;
  slot.request.state.store(RequestState::kIdle, std::memory_order_relaxed);

  if (info.result != nullptr) {
    uint64_t iteration[FOREACTOR_MAX_LOOPS];
    foreactor_visit visit = MakeVisit(frontier_, iteration);
    info.result(&visit, result);
  }
  state.frontier_count++;
  if (peek_passed) {
    visits_ahead_--;
    bytes_ahead_ -= slot.bytes_ahead;
  }
  NoteFrontierCallForDepth();
  frontier_.Take(info.next);
  frontier_weak_since_call_ = info.next.weak;
  if (info.next.weak) issue_rules_.FrontierCrossedWeakEdge();
  if (real.type == FOREACTOR_CALL_PREAD) {
    frontier_read_end_ =
        result > 0 ? ReadEnd{real.fd, real.offset + result, !found_cached} : ReadEnd{};
  }
  if (!peek_passed) {
    state.peek_count = state.frontier_count;
    peek_ = frontier_;
    peek_read_end_ = frontier_read_end_;
    issue_rules_.PeekAtFrontier();
  }
  if (read_ahead_ != nullptr && real.type == FOREACTOR_CALL_PREAD) {
    read_ahead_->NoteProgramRead(real.fd, real.offset, result, frontier_, found_cached);
  }
}

// ------------------------------------------------------------ check mode

void GraphRunner::ReportDivergence(int node, const Cursor& at, const std::string& what,
                                   const std::string& hint) {
  statistics_.check_divergences++;
  check_report_.Divergence(node, at, what, hint);
}

void GraphRunner::CheckForeignCall(int node, const foreactor_call& real) {
  // A call of another type on the very descriptor the graph expects next
  // usually means the graph lacks a node or has them in the wrong order.
  SyscallNodeState& state = syscall_states_[graph_.node(node).dense_index];
  if (state.frontier_count >= state.peek_count) return;
  const VisitSlot& slot = state.slots.At(state.frontier_count);
  const CallTypeInfo& real_info = InfoOf(real.type);
  if (!real_info.uses_fd || !InfoOf(slot.predicted.type).uses_fd || real.fd != slot.predicted.fd) {
    return;
  }
  ReportDivergence(node, frontier_,
                   "the program called " + DescribeCall(real) + " where the graph expects " +
                       DescribeCall(slot.predicted),
                   "a node may be missing before this one, or the nodes are in another order "
                   "than the program's calls");
}

// ------------------------------------------------------------ page cache

bool GraphRunner::WriteProbeAhead() {
  if (write_probe_.dense_index < 0) return false;
  if (syscall_states_[write_probe_.dense_index].frontier_count <= write_probe_.visit) return true;
  write_probe_ = PausingProbe{};
  return false;
}

QuickCallMode* GraphRunner::QuickModeFor(const foreactor_call& call) {
  if (!settings_.page_cache_aware) return nullptr;
  if (IsLookupType(call.type)) return &lookup_mode_;
  if (!InfoOf(call.type).writes_data || write_pipeline_ != nullptr) return nullptr;
  const FileKindCache::Kind kind = file_kinds_.Lookup(call.fd);
  return kind.regular && !kind.direct ? &write_mode_ : nullptr;
}

int64_t GraphRunner::ReadWithoutWaiting(int fd, char* buffer, size_t length, int64_t offset,
                                        uint64_t* took) {
  const uint64_t start = read_clock_();
  const int64_t result = raw::Preadv2(fd, buffer, length, offset, RWF_NOWAIT);
  *took = read_clock_() - start;
  if (result == -EOPNOTSUPP) cache_mode_.NoteNowaitUnsupported();
  return result;
}

bool GraphRunner::TryReadFromCache(VisitSlot& slot) {
  const foreactor_call& predicted = slot.predicted;
  if (cache_mode_.nowait_unsupported() || predicted.offset < 0) return false;
  // After a run of misses the data is cold: only some reads are probed, so
  // that a cold run pays little for the probes.
  if (!cache_mode_.ProbeWanted()) return false;
  uint64_t took = 0;
  const int64_t result =
      ReadWithoutWaiting(predicted.fd, slot.data.data(), predicted.length, predicted.offset, &took);
  const bool full = result == static_cast<int64_t>(predicted.length);
  // A read that waited for the device is a miss even when it returned the
  // data; the bytes are kept all the same.
  const bool hit = full && cache_mode_.FromMemory(predicted.length, took);
  if (cache_mode_.NoteProbe(hit, predicted.length)) statistics_.cache_mode_changes++;
  if (!full) return false;
  slot.probe_waited = !hit;
  slot.request.result = result;
  slot.request.state.store(RequestState::kCompleted, std::memory_order_relaxed);
  return true;
}

void GraphRunner::LeaveServing() {
  // (The end of the trial is not counted in cache_mode_changes.)
  if (!cache_mode_.in_trial()) statistics_.cache_mode_changes++;
  cache_mode_.LeaveServing();  // in the trial: EndTrial()
}

bool GraphRunner::ServeFromCache(int node, InterceptedCall* intercepted, int64_t* result) {
  const foreactor_call& real = intercepted->call;
  const FileKindCache::Kind kind = file_kinds_.Lookup(real.fd);
  if (cache_mode_.nowait_unsupported() || !kind.regular || kind.direct ||
      (real.type == FOREACTOR_CALL_PREAD && real.offset < 0)) {
    // (A negative PREAD offset is an error the plain call must report.)
    if (cache_mode_.in_trial()) cache_mode_.EndTrial();
    return false;
  }
  // The program's own call, made without blocking: READ at the file
  // position (offset -1 to preadv2), PREAD at its offset.
  const int64_t offset = real.type == FOREACTOR_CALL_PREAD ? real.offset : -1;
  char* buffer = static_cast<char*>(real.buffer);
  if (!cache_mode_.CheckThisRead()) {
    // The plain call, made here: what it returns is what the program gets
    // (a failure runs again as the program's own call; reads are pure).
    const int64_t done = raw::ReadAt(real.fd, buffer, real.length, offset);
    if (done < 0) return false;
    return FinishServedFromCache(node, real, done, result);
  }
  uint64_t took = 0;
  int64_t done = ReadWithoutWaiting(real.fd, buffer, real.length, offset, &took);
  if (done < 0) {
    if (done == -EAGAIN || done == -EOPNOTSUPP) {
      // Not cached: speculate again; this call runs as the program made it.
      LeaveServing();
    }
    return false;
  }
  if (done > 0 && static_cast<size_t>(done) < real.length) {
    // Part of the range was cached, or the file ends here: read the rest
    // as the plain call would have, and return the total, as it would.
    int64_t rest = raw::Preadv2(real.fd, buffer + done, real.length - static_cast<size_t>(done),
                                offset < 0 ? -1 : offset + done, 0);
    if (rest > 0) done += rest;
  }
  if (!cache_mode_.FromMemory(real.length, took)) {
    // It waited for the device: what it read is the program's, and the
    // data is cold: speculate again.
    LeaveServing();
  } else if (cache_mode_.in_trial() && static_cast<uint64_t>(done) == real.length &&
             cache_mode_.NoteTrialHit(real.length)) {
    statistics_.cache_mode_changes++;  // the trial found the streak: serving
  }
  return FinishServedFromCache(node, real, done, result);
}

bool GraphRunner::FinishServedFromCache(int node, const foreactor_call& real, int64_t done,
                                        int64_t* result) {
  statistics_.served_from_cache++;
  cache_mode_.NoteServed();
  FinishFrontierVisit(node, real, done, false);
  Fill();
  *result = done;
  // (A read-ahead stream may need the program's calls.)
  if (cache_mode_.ServedRunLeavesScope() && visits_ahead_ == 0 &&
      (read_ahead_ == nullptr || !read_ahead_->follows_program())) {
    speculating_ = false;  // OfferCall passes the rest of the scope by
    statistics_.scopes_left_to_cache++;
  }
  return true;
}

// ------------------------------------------------------------ draining

void GraphRunner::WaitFor(VisitSlot& slot) {
  if (slot.request.state.load(std::memory_order_acquire) == RequestState::kCompleted) return;
  uint64_t start = MonotonicNanoseconds();
  if (slot.read_group >= 0) {
    coalesced_reads_.Wait(&slot);
  } else {
    EngineOf(slot.request)->Wait(&slot.request);
  }
  statistics_.wait_nanoseconds += MonotonicNanoseconds() - start;
}

void GraphRunner::CancelEarly(VisitSlot& slot) {
  // Done already: a member of a coalesced read completes with its group,
  // and its own request never reached an engine.
  if (slot.request.state.load(std::memory_order_acquire) == RequestState::kCompleted) return;
  if (slot.read_group >= 0) {
    coalesced_reads_.Cancel(&slot);
  } else {
    EngineOf(slot.request)->Cancel(&slot.request);
  }
}

void GraphRunner::DiscardEarlyResult(VisitSlot& slot) {
  WaitFor(slot);
  const Request& request = slot.request;
  if (!Executed(request)) {
    statistics_.cancelled++;
  } else {
    statistics_.wasted++;
    const foreactor_call_type type = slot.predicted.type;
    if (IsOpen(type) && request.result >= 0) {
      EngineOf(slot.request)->ReleaseEarlyDescriptor(request.result);
    } else if (type == FOREACTOR_CALL_GETDENTS64 && request.result > 0) {
      raw::Lseek(slot.predicted.fd, slot.directory_position, SEEK_SET);
    }
  }
  slot.state = SlotState::kPassed;
  slot.request.state.store(RequestState::kIdle, std::memory_order_relaxed);
}

void GraphRunner::DrainAhead() {
  if (write_pipeline_ != nullptr) write_pipeline_->Clear();  // held writes were never sent
  // Cancel everything first so the engine can drop it together, then wait.
  for (SyscallNodeState& state : syscall_states_) {
    for (uint64_t visit = state.frontier_count; visit < state.peek_count; ++visit) {
      VisitSlot& slot = state.slots.At(visit);
      if (slot.state == SlotState::kIssued) CancelEarly(slot);
    }
  }
  for (SyscallNodeState& state : syscall_states_) {
    for (uint64_t visit = state.frontier_count; visit < state.peek_count; ++visit) {
      VisitSlot& slot = state.slots.At(visit);
      if (slot.state == SlotState::kIssued) DiscardEarlyResult(slot);
      slot.request.state.store(RequestState::kIdle, std::memory_order_relaxed);
      slot.state = SlotState::kEmpty;
      slot.has_access = false;
      slot.unconfirmed_guess = false;
    }
    state.peek_count = state.frontier_count;
  }
  for (BranchNodeState& state : branch_states_) state.peek_count = state.frontier_count;
  peek_ = frontier_;
  peek_read_end_ = frontier_read_end_;
  issue_rules_.PeekAtFrontier();
  visits_ahead_ = 0;
  bytes_ahead_ = 0;
  write_probe_ = PausingProbe{};  // its visit is gone with the rest
  pending_accesses_.Clear();
  issue_rules_.ForgetGuessesAhead();
}

void GraphRunner::PassThrough(const foreactor_call& real) {
  statistics_.passed_through++;
  // A call with side effects that the graph did not expect here: the graph
  // may have lost the program (IssueRules::LoseTheProgram).
  if (EarlyIssueFor(real) != EarlyIssue::kOnGuess) issue_rules_.LoseTheProgram();
  InvalidateAhead(real, nullptr);
}

void GraphRunner::NoteMisprediction() {
  issue_rules_.LoseTheProgram();
  statistics_.mispredicted++;
  if (!misprediction_guard_.MispredictionSuspends(speculating_)) return;
  DrainAhead();
  misprediction_guard_.Suspend();
  statistics_.speculation_stopped++;
}

void GraphRunner::LookAhead() {
  if (!speculating_ || abandoned_) return;
  // The stream first: its hints of the regions ahead go out before the
  // peek head probes the first visits one by one, and the probes then find
  // those pages coming in.
  if (read_ahead_ != nullptr && !misprediction_guard_.suspended()) {
    // The rest of the scope is a run of reads in file order the page cache
    // or the kernel's read-ahead serve as well as anything issued early
    // would: nothing is left to follow, and the program's calls take the
    // idle path from here on.  (Not when page-cache awareness is off: then
    // every read is issued.)
    const bool may_leave_run = settings_.page_cache_aware && visits_ahead_ == 0;
    const bool found_cold =
        read_ahead_->LookAhead(frontier_, may_leave_run ? kMaxInOrderReadBytes : 0);
    if (may_leave_run && read_ahead_->RunEndsScope(kMaxInOrderReadBytes)) {
      speculating_ = false;
      statistics_.scopes_left_in_file_order++;
      return;
    }
    // The stream found the next reads cold: the peek head starts them
    // while the program computes, rather than the frontier one by one.
    if (found_cold && cache_mode_.in_trial()) cache_mode_.EndTrial();
  }
  Fill();
}

bool GraphRunner::LeavesAtStart(const Graph& graph, const GraphSettings& settings,
                                void* scope_state) {
  // As a runner's LookAhead(): its read-ahead stream exists, and may leave
  // a run only when page-cache awareness is on (nothing is ahead yet).
  if (!ReadAheadStreamsOn(settings) || !settings.page_cache_aware) return false;
  Cursor start;
  start.Take(graph.node(FOREACTOR_START_NODE).next);
  FileKindCache file_kinds;
  return ReadAheadStream::ShortRunEndsScope(graph, scope_state, start, kMaxInOrderReadBytes,
                                            &file_kinds);
}

void GraphRunner::RetrySpeculation() {
  if (misprediction_guard_.suspended()) ResumeSpeculation();
  if (depth_controller_.home_depth() == 0) depth_controller_.Restart();
}

void GraphRunner::ResumeSpeculation() {
  misprediction_guard_.Resume();
  statistics_.speculation_resumed++;
}

void GraphRunner::NoteShadowPrediction(bool correct) {
  if (misprediction_guard_.ShadowPredictionResumes(correct)) ResumeSpeculation();
}

void GraphRunner::NoteFrontierCallForDepth() {
  misprediction_guard_.NoteFrontierCall();
  // Only calls made while speculation ran say something about the depth.
  const bool measuring =
      !misprediction_guard_.suspended() && !cache_mode_.serving_from_cache() && !settings_.check;
  if (measuring != depth_measuring_) {
    depth_measuring_ = measuring;
    depth_controller_.DiscardWindow();
    return;
  }
  if (measuring) depth_controller_.CallFinished(visits_ahead_);
}

void GraphRunner::FoldControllerStatistics() {
  statistics_.depth_changes += depth_controller_.depth_changes() - reported_depth_changes_;
  statistics_.depth_windows += depth_controller_.windows() - reported_depth_windows_;
  statistics_.depth_window_sum += depth_controller_.window_depth_sum() - reported_window_depth_sum_;
  reported_depth_changes_ = depth_controller_.depth_changes();
  reported_depth_windows_ = depth_controller_.windows();
  reported_window_depth_sum_ = depth_controller_.window_depth_sum();
}

}  // namespace foreactor
