// graph_runner.h: one graph running on one thread (DESIGN §3).
//
// A GraphRunner is created the first time a thread enters a scope of a
// graph and is reused by every later scope of that graph on that thread.
// It owns the per-node slot rings, the two cursors and the statistics.
//
//  - The frontier is the visit the program is at.  Every intercepted call
//    is offered to it (Offer); a call of another type, or on another fd
//    than the visit predicts, does not belong to the graph and passes
//    through untouched.
//  - The peek head walks ahead of the frontier on the same path (Fill):
//    it follows branch choices, asks for arguments, and issues up to
//    `depth` syscall visits.  A call with side effects that is not certain
//    is passed without being issued (the program makes it at the
//    frontier), like a call that never runs early.  It stops at an unknown
//    branch or arguments, before a call that an earlier pending visit must
//    run before, and when the engine's queue is full.  Everything it
//    prepares in one walk is submitted as one batch.  A call the program
//    makes outside the graph discards the early results it may change.
//  - Certainty, and which calls can run early at all: IssueRules
//    (issue_rules.h).
//  - Order of the visits ahead, and what a call outside the graph makes
//    stale: PendingAccesses (pending_accesses.h).
//  - Descriptor numbers: an early open's descriptor stays in the engine's
//    own table until the program reaches the open, and then takes the
//    lowest free number, as the program's open would
//    (Engine::InstallEarlyDescriptor).
//
// Reads that hit the page cache: an asynchronous engine only costs time on
// data already in memory.  Before issuing a read early, the peek head tries
// it with RWF_NOWAIT, which copies what the page cache holds (or starts the
// read and fails; sometimes it waits for that read and returns it, which
// the timing of PageCacheMode::FromMemory tells): a full hit is kept in the
// slot and the engine is not used.  A read the probe missed or skipped whose
// pages cachestat(2) finds all in the page cache, some still being read in
// (the probe's own read, the kernel's read-ahead), is left to the program:
// the device already has it (`found_present`).  A cold read that continues
// a run in file order on its descriptor is not probed at all but left to
// the program, whose kernel read-ahead streams the run
// (`left_in_file_order`; one in kColdRunCheckInterval is asked of
// cachestat(2) instead, to notice the run coming from the cache).  Any
// other such read of a regular file is cold: the peek head starts it with
// readahead(2) and leaves it to the program too (`reads_started`), whose
// own read waits for the pages coming in and copies them once; only the
// head of a pair whose write the pipeline runs, and direct reads, go to the
// engine (adjacent direct reads as one vectored read: CoalescedReads).
// A runner of a graph of plain reads alone starts with a trial of serving
// them from the page cache at the frontier (PageCacheMode::StartTrial): a
// read that is not cached, or a look-ahead that finds the next ones cold,
// ends it, and the peek head starts.
// After a run of hits the runner serves reads at the frontier straight
// into the program's buffer and the peek head rests; the first checked read
// that would block switches speculation back on.  After a long run of reads
// served so within one scope, with nothing issued ahead, the scope stops
// following the graph: its remaining calls pass through as plain calls.
// PageCacheMode (page_cache_mode.h) holds the policy and its thresholds.
// Stats have no RWF_NOWAIT, and a buffered write never needs the device
// unless the kernel throttles it: a QuickCallMode (quick_call_mode.h) per
// kind judges them by the time the program's own take at the frontier
// (probes left to it now and then); while they are found quicker than a
// hand-off to an engine none is issued early, and a graph of lookups
// alone, or of writes alone, rests its peek head.  (Not the writes of a
// copy loop's write pipeline: those move to the second core while the
// program reads.)
//
// Depth: how many syscall visits the peek head may have ahead comes from a
// DepthController, exact (FOREACTOR_EXACT_DEPTH=1) or chosen as the program runs
// (auto).  The slot rings are sized for the largest depth it may choose.
// Whatever the depth, the visits ahead move at most kMaxBytesAhead bytes
// of data (reads and writes; the visit that crosses it still goes): 2 MiB
// keeps a device busy with large requests as well as with small ones (256
// reads of 8 KiB, 16 of 128 KiB), and bounds the memory of the buffers and
// what a scope left early has read for nothing.
//
// Mispredictions: a MispredictionGuard decides when repeated
// mispredictions suspend speculation (the peek head rests while the
// frontier keeps comparing each call with the graph) and when a run of
// correct predictions resumes it.  A plugin that opens no scope while
// suspended (the scope gate) ends it with RetrySpeculation() after a while
// instead.
//
// Write-behind (graphs with nodes that declare it, GraphSettings::write_behind,
// not in check mode): the results of those nodes' writes go to a
// WriteBehind (write_behind.h), which starts write-back of finished ranges
// off the program's thread; its hints outlive the scope, and the thread
// state makes the program's close() of their descriptors wait for them
// (BeforeClose).
//
// Read-ahead streams (GraphSettings::read_ahead, not in check mode nor at
// depth 0): the program's preads at the frontier go to a ReadAheadStream
// (read_ahead_stream.h), which, when they jump about a file, reads the
// regions of the graph's next preads whole, off the program's thread.  While it runs, a scope does
// not stop following the graph for reads found cached (it needs the program's position), and the
// program's close() of its descriptor waits for it.  A plugin's look-ahead (LookAhead) may start
// it before the program's first read, from the graph's next preads.
//
// Check mode (GraphSettings::check): nothing is issued early; every call
// that belongs to the graph is compared with the visit the graph predicts,
// and the first place in each scope where the program leaves the graph is
// reported with both calls, the node, the visit and a hint.
//
// Invariants:
//  - the peek head is never behind the frontier, and both follow the same
//    path: the frontier re-asks each branch choice and, when it differs
//    from the one the peek head took, everything ahead is drained;
//  - for every syscall node, visits [frontier_count, peek_count) are the
//    ones the peek head passed and the frontier has not reached; they live
//    in distinct slots because at most `depth` < the rings' length visits
//    are ahead (SlotRingsHold);
//  - no request is in flight when the scope is left.
#ifndef FOREACTOR_RUNTIME_GRAPH_RUNNER_H_
#define FOREACTOR_RUNTIME_GRAPH_RUNNER_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/settings.h"
#include "engine/engine.h"
#include "graph/graph.h"
#include "runtime/check_report.h"
#include "runtime/coalesced_reads.h"
#include "runtime/cursor.h"
#include "runtime/depth_controller.h"
#include "runtime/direct_reads.h"
#include "runtime/file_kind_cache.h"
#include "runtime/interception.h"
#include "runtime/issue_rules.h"
#include "runtime/misprediction_guard.h"
#include "runtime/monotonic_clock.h"
#include "runtime/page_cache_mode.h"
#include "runtime/pending_accesses.h"
#include "runtime/quick_call_mode.h"
#include "runtime/read_ahead_stream.h"
#include "runtime/statistics.h"
#include "runtime/visit_slot.h"
#include "runtime/write_behind.h"
#include "runtime/write_pipeline.h"

namespace foreactor {

class GraphRunner {
 public:
  // `graph` must be finished and valid and outlive the instance; `engine`
  // is shared by the thread's instances and outlives them.  `chain_engine`
  // (null: `engine`), which outlives the instance too, runs the chains of
  // linked requests: the writes of the write pipeline and the reads of an
  // in-order read-ahead stream.  The thread pool, where `engine` is
  // io_uring, whose linked requests each go back through the submitting
  // thread.
  GraphRunner(const Graph& graph, const GraphSettings& settings, Engine* engine,
              Engine* chain_engine = nullptr);
  ~GraphRunner();

  GraphRunner(const GraphRunner&) = delete;
  GraphRunner& operator=(const GraphRunner&) = delete;

  static constexpr uint64_t kMaxBytesAhead = uint64_t{2} << 20;
  // Reads sent past the page cache (direct_reads.h) have no kernel
  // read-ahead beside them: what is ahead is all the device sees.  Up to
  // kMaxDirectBytesAhead of them may be ahead (each weighs
  // kMaxBytesAhead / kMaxDirectBytesAhead of its length against the
  // budget), and a node's reads go direct only when the deepest depth the
  // runner may use lets kMinDirectReadBytesAhead of them be ahead, counting
  // only the node's own visits among the visits of its loop (a copy loop's
  // writes take half the depth); an automatic depth is then kept at least
  // that deep.  A cold 1 GiB copy (cp, 128 KiB chunks gathered to 1 MiB
  // requests, thread pool, exact depths, 8 alternating rounds) ran 1.16x of
  // stock cp with 4 MiB of reads ahead, 0.91x with 8 MiB, 0.80x with
  // 16 MiB, and 0.99x with 4 MiB through the page cache.
  static constexpr uint64_t kMaxDirectBytesAhead = uint64_t{16} << 20;
  static constexpr uint64_t kMinDirectReadBytesAhead = uint64_t{8} << 20;

  // True when the constructor could allocate everything.
  bool ok() const { return ok_; }

  // Starts a scope with the plugin's state pointer and issues what can be
  // issued already.
  void Enter(void* scope_state);

  // Ends the scope: drains everything ahead of the frontier and folds the
  // statistics into the process totals.
  void Exit();

  // See OfferCall() in interception.h; this is the per-scope part.
  bool Offer(InterceptedCall* intercepted, int64_t* result);

  // The outcome of a call Offer() claimed but declined to serve.
  void Complete(InterceptedCall* intercepted, int64_t result);

  // After fork() in the child: never touch the engine again.
  void Abandon() {
    abandoned_ = true;
    speculating_ = false;
    if (write_behind_ != nullptr) write_behind_->Abandon();
    if (read_ahead_ != nullptr) read_ahead_->Abandon();
    direct_reads_.CloseAll();  // no request runs in the child
  }

  // True while write-back hints of this runner may still run.
  bool has_write_behind_in_flight() const {
    return write_behind_ != nullptr && write_behind_->has_hints_in_flight();
  }
  // The program is about to close `fd` (in a scope or not): waits for the
  // write-back hints that name it (WriteBehind::BeforeClose).
  void BeforeClose(int fd);
  // Waits for every write-back hint in flight and, between scopes, folds
  // what that counted into the graph's totals: before the engines rest,
  // and at process exit.
  void FinishWriteBehind();

  // Time the plugin leaves out of the scope gate's timing
  // (foreactor_scope_gate_exclude) is left out of the automatic depth's
  // measurement too (DepthController::ExcludeTime).
  void ExcludeTime(uint64_t nanoseconds) { depth_controller_.ExcludeTime(nanoseconds); }

  // The clock that times reads made with RWF_NOWAIT (PageCacheMode::
  // FromMemory); tests give one that makes every read look slow.
  using Clock = uint64_t (*)();
  void SetReadClockForTests(Clock clock) { read_clock_ = clock; }
  // Moves the depth as the controller would (DepthController).
  void SetDepthForTests(unsigned depth) { depth_controller_.SetDepthForTests(depth); }
  // The slots each syscall node has in use: depth + 1 for the largest depth
  // chosen so far, or all of them once a deeper depth had to wait for the
  // visits ahead (SlotRingsHold).
  unsigned slots_in_use() const { return slots_in_use_; }

  bool speculating() const { return speculating_; }
  // Mispredictions suspended speculation; the frontier still follows the program.
  bool suspended() const { return misprediction_guard_.suspended(); }
  // The graph holds only stats, or only writes, and they are found quick: a
  // scope would issue nothing early (it would time the program's calls).
  bool serving_quick_calls_only() const {
    return (lookups_only_ && lookup_mode_.serving()) || (writes_only_ && write_mode_.serving());
  }

  // foreactor_scope_look_ahead(): the plugin learned arguments or choices
  // outside an intercepted call.  Starts a read-ahead stream of the graph's
  // next preads (ReadAheadStream::LookAhead), then walks the peek head.
  // When the rest of the scope is a short run in file order left to the
  // program (ReadAheadStream::RunEndsScope) and nothing is ahead, stops
  // speculating instead: the scope follows its graph no more
  // (scopes_left_in_file_order).
  void LookAhead();
  // What LookAhead() would decide at the start of a scope of `graph` in
  // `scope_state` with these settings, for a scope that follows its graph
  // from the plugin's first look-ahead (foreactor_graph_follow_from_look_
  // ahead): true when the whole scope is a short run in file order left to
  // the program, so that no runner need follow it.
  static bool LeavesAtStart(const Graph& graph, const GraphSettings& settings, void* scope_state);
  // Whether a runner with these settings has a read-ahead stream (for a
  // graph with preads and an engine): streams on, not check mode, a depth.
  static bool ReadAheadStreamsOn(const GraphSettings& settings) {
    return settings.read_ahead && !settings.check && settings.depth > 0;
  }

  // Called between scopes after a long time without any (the scope gate
  // rested because a scope would issue nothing): lifts a suspension as a run
  // of correct predictions would, and lets an automatic depth settled at 0
  // start over (DepthController::Restart).  Without it, state that only
  // scopes can change would keep the gate resting for good.  A suspension
  // that comes back soon after still doubles the run needed to resume.
  void RetrySpeculation();
  unsigned depth() const { return depth_controller_.depth(); }
  // True when the last early read long enough to go past the page cache
  // (DirectReads::kMinLength, at a depth that lets kMinDirectReadBytesAhead
  // be ahead) did: the graph's scopes stream a file that is mostly cold
  // (direct_reads.h).  The scope gate keeps such scopes (scope_gate.h).
  bool streaming_past_cache() const { return streaming_past_cache_; }
  // The depth the automatic controller settles at between its probes.
  unsigned home_depth() const { return depth_controller_.home_depth(); }
  const Graph& graph() const { return graph_; }
  const Statistics& statistics() const { return statistics_; }

  // Scopes outer to this one on the thread that speculate (a list through
  // the thread's scope stack), maintained by the scope API.
  GraphRunner* outer = nullptr;
  // What the last scope this runner left did (foreactor_last_scope_outcome()),
  // set by the scope API; meaningful once has_last_outcome.  Kept here rather than in a
  // per-graph table of the thread: a table for every graph made a thread's
  // first scope fault in two more pages.
  foreactor_scope_outcome last_outcome{};
  bool has_last_outcome = false;

 private:
  // Per syscall node and per branch node state, indexed by dense index.
  struct SyscallNodeState {
    SlotRing slots;
    uint64_t peek_count = 0;
    uint64_t frontier_count = 0;
    // Syscall nodes in the node's innermost loop, itself included (1 for a
    // node in no loop): the visits ahead that one of its visits comes with.
    unsigned visits_per_pass = 1;
  };
  struct BranchNodeState {
    std::unique_ptr<int[]> choices;
    uint64_t peek_count = 0;
    uint64_t frontier_count = 0;
  };

  foreactor_visit MakeVisit(const Cursor& cursor, uint64_t* iteration_storage) const;

  // Peek head.
  void Fill();
  // Whether the slot rings have room for `depth` visits ahead of the
  // frontier.  When they do not, grows them if no visit lives in a slot
  // (to depth + 1 slots, or to the most the controller may choose once it
  // had to wait), and otherwise returns false: the peek head then passes
  // nothing more until the frontier has taken every visit ahead.
  bool SlotRingsHold(unsigned depth);
  enum class PeekStep { kAdvanced, kStop };
  PeekStep PeekBranch(int node);
  PeekStep PeekSyscall(int node);
  bool AskArguments(int node, const Cursor& cursor, VisitSlot& slot);
  void InvalidateAhead(const foreactor_call& real, const VisitSlot* except);
  void TakeEdgeAhead(const Edge& edge);

  // Frontier.
  bool AdvanceFrontierThroughBranches();
  // The program's call `real` at the frontier visit `node` returned `result`.
  // `served_early`: the program was handed the visit's early result.
  void FinishFrontierVisit(int node, const foreactor_call& real, int64_t result, bool served_early);
  bool ServeEarlyResult(int node, VisitSlot& slot, const InterceptedCall& intercepted,
                        int64_t* result);

  // Check mode.
  void ReportDivergence(int node, const Cursor& at, const std::string& what,
                        const std::string& hint);
  void CheckForeignCall(int node, const foreactor_call& real);

  // Page cache.  True when the cacheable pread `call` at the peek head
  // continues a cold run in file order and is left to the program (counted
  // in left_in_file_order): the pread before it on the descriptor was cold
  // and ended where this one starts, or an in-order stream covers it
  // (read_ahead_stream.h); at most kMaxInOrderReadBytes.  The kernel's
  // read-ahead of the program's descriptor streams such a run as the
  // program reads it.  A probe (RWF_NOWAIT starts a read of the missing
  // pages) or a readahead(2) of this one read would start its pages alone,
  // as for a random read, and early reads would be small random reads too:
  // each read then waits for a device read of its own (a cold scan of 64
  // leaves of 8 KiB in file order took 7x plain's time so).  One read in
  // kColdRunCheckInterval is asked of cachestat(2) instead, which starts
  // nothing: found in the page cache, it is not left.
  bool LeftInFileOrder(const foreactor_call& call);
  // Probes the read of `slot` with RWF_NOWAIT; true when it
  // returned all its bytes, which the slot then holds (`probe_waited` when
  // the probe waited for the device all the same).
  bool TryReadFromCache(VisitSlot& slot);
  // preadv2 of `length` bytes at `offset` (-1: the file position) into
  // `buffer` with RWF_NOWAIT, timed with read_clock_ into `*took`; notes a
  // file system that refuses the flag.  Returns what preadv2 returned (a
  // negative errno on failure).
  int64_t ReadWithoutWaiting(int fd, char* buffer, size_t length, int64_t offset, uint64_t* took);
  // The mode that judges `call` by the time the program's own take, or
  // null: lookups (the stat family), and writes to a file without O_DIRECT
  // while no write pipeline runs.  Null when page-cache awareness is off.
  QuickCallMode* QuickModeFor(const foreactor_call& call);
  // A write probe (write_mode_) the frontier has not passed yet: the peek
  // head waits for it.  Forgets a probe the frontier has passed.
  bool WriteProbeAhead();
  // Serving from the cache found a read not cached: back to speculating.
  void LeaveServing();
  bool ServeFromCache(int node, InterceptedCall* intercepted, int64_t* result);
  // The frontier visit `node` was served with `done` (its result): counts
  // it, moves the frontier on, stores the result.  Returns true.
  bool FinishServedFromCache(int node, const foreactor_call& real, int64_t done, int64_t* result);

  // Draining.
  void WaitFor(VisitSlot& slot);
  // Asks that the early request of `slot` (kIssued) be cancelled; it must
  // still be waited for (DiscardEarlyResult).
  void CancelEarly(VisitSlot& slot);
  void DiscardEarlyResult(VisitSlot& slot);
  // The program reached the open of `slot` (kIssued, completed, deliverable):
  // its early descriptor, if it has one, is installed in the program's
  // table and becomes the request's result.  Returns false when the engine
  // could not install it (the result is then -ECANCELED: the program makes
  // the open itself).
  bool InstallEarlyOpen(VisitSlot& slot);
  void DrainAhead();
  void NoteMisprediction();
  // Counts a call that does not belong to the graph at the frontier, lets
  // one with side effects end following_graph_, and drops the early results
  // it may change.
  void PassThrough(const foreactor_call& real);
  void NoteShadowPrediction(bool correct);
  // Ends a suspension (a run of correct predictions, or RetrySpeculation).
  void ResumeSpeculation();
  void NoteFrontierCallForDepth();
  void FoldControllerStatistics();

  const Graph& graph_;
  const GraphSettings settings_;
  Engine* const engine_;
  Engine* const chain_engine_;  // see the constructor (never null)
  // The engine a request of this runner's slots was handed to: the write
  // pipeline's requests, the only ordered ones, went to chain_engine_.
  Engine* EngineOf(const Request& request) const {
    return request.ordered ? chain_engine_ : engine_;
  }
  const unsigned ring_size_;        // the largest depth the controller may choose, plus one
  unsigned slots_in_use_ = 1;       // the least SlotRing::length() of the nodes, at most ring_size_
  bool slot_rings_waited_ = false;  // visits ahead kept the rings from growing
  DepthController depth_controller_;
  bool depth_measuring_ = false;  // the controller's window counts calls that ran speculatively
  uint64_t reported_depth_changes_ = 0;  // controller counters already in statistics_
  uint64_t reported_depth_windows_ = 0;
  uint64_t reported_window_depth_sum_ = 0;
  bool ok_ = false;
  bool abandoned_ = false;
  bool speculating_ = false;
  bool streaming_past_cache_ = false;    // streaming_past_cache()
  bool peek_blocked_for_scope_ = false;  // an arguments callback said NEVER
  void* scope_state_ = nullptr;

  std::vector<SyscallNodeState> syscall_states_;
  std::vector<BranchNodeState> branch_states_;
  std::vector<int> dense_to_node_;  // syscall dense index -> node id

  Cursor frontier_;
  Cursor peek_;
  // Where a pread in program order ended, and whether it was cold (not
  // found in the page cache): a cold pread followed by one that starts
  // where it ended is a cold run in file order, which the kernel's
  // read-ahead of the program's descriptor streams (see PeekSyscall).
  struct ReadEnd {
    int fd = -1;
    int64_t end = -1;
    bool cold = false;
    unsigned left_in_a_row = 0;  // reads of the run left to the program since one was checked
    // True when `call` is a pread that continues a cold run.
    bool ContinuedColdBy(const foreactor_call& call) const {
      return cold && call.type == FOREACTOR_CALL_PREAD && call.fd == fd && call.offset == end;
    }
  };
  // One read in this many of a cold run in file order is asked of
  // cachestat(2), which starts no read: once the kernel's read-ahead is
  // ahead of the program, the run's reads are probed again, and a run of
  // hits serves them from the cache (and may end the scope's following).
  static constexpr unsigned kColdRunCheckInterval = 8;
  // Larger reads in file order are probed and started as any other: the
  // kernel's read-ahead window is often 128 KiB (read_ahead_kb), which
  // holds only a few of them, while early starts keep up to the depth in
  // flight.  32 KiB reads fill such a window four times over.
  static constexpr uint64_t kMaxInOrderReadBytes = uint64_t{32} << 10;
  ReadEnd frontier_read_end_;  // the program's last pread at the frontier in this scope
  ReadEnd peek_read_end_;      // the last pread visit the peek head passed (the frontier's there)
  // Whether the visit at the peek head is certain (weak edges, guesses
  // ahead, following the program), and whether a call can run early at all.
  IssueRules issue_rules_{engine_, &file_kinds_};
  unsigned visits_ahead_ = 0;  // syscall visits passed by peek, not by frontier
  uint64_t bytes_ahead_ = 0;   // data bytes those visits read or write
  unsigned prepared_unsubmitted_ = 0;

  // Suspension after mispredictions (kept across scopes).
  MispredictionGuard misprediction_guard_;
  CheckReport check_report_;               // check mode: one report per scope
  bool frontier_weak_since_call_ = false;  // a weak edge since the last graph call

  // Kept across scopes: whether this graph's data is being found cached.
  PageCacheMode cache_mode_;
  Clock read_clock_ = &MonotonicNanoseconds;
  // Kept across scopes: whether this graph's metadata lookups are quick
  // (found cached), and whether its buffered writes are (QuickModeFor).
  QuickCallMode lookup_mode_;
  QuickCallMode write_mode_{QuickCallMode::kFastWriteNanoseconds};
  // Every syscall node of the graph is a stat (a write): while those are
  // served the peek head rests.
  bool lookups_only_ = false;
  bool writes_only_ = false;
  // Start of the call the program is making at the frontier, timed for
  // `timed_mode_`; 0 when none is timed.
  uint64_t timed_call_start_ = 0;
  QuickCallMode* timed_mode_ = nullptr;
  // The visit of a write left to the frontier as a probe (syscall dense
  // index, visit count of its node); dense_index -1: none.
  struct PausingProbe {
    int dense_index = -1;
    uint64_t visit = 0;
  };
  PausingProbe write_probe_;
  FileKindCache file_kinds_;
  // Descriptors of our own for early reads of cold ranges past the page
  // cache (direct_reads.h); closed at each scope's end.  Unused when
  // GraphSettings::direct_reads or page-cache awareness is off.
  DirectReads direct_reads_;
  // Groups of adjacent direct reads, each sent as one request
  // (coalesced_reads.h); idle between scopes.
  CoalescedReads coalesced_reads_{engine_, &statistics_};
  // One entry per visit in [frontier, peek), in visit order.
  PendingAccesses pending_accesses_{&file_kinds_};
  Statistics statistics_;
  GraphTotals* totals_ = nullptr;  // where statistics_ is folded at each Exit (made at the first)
  std::unique_ptr<WriteBehind> write_behind_;  // null: no node declares it, or switched off
  // Null: the graph has no pread node, or read-ahead streams are off
  // (GraphSettings::read_ahead, check mode, depth 0).
  std::unique_ptr<ReadAheadStream> read_ahead_;
  // Runs the writes that write what a linked read produced, in order
  // (write_pipeline.h).  Made for graphs where a read node is followed
  // directly by a write node (a copy loop), with an engine, outside check
  // mode (WritePipelineWanted); the peek head then does not rest while
  // reads are served from the page cache, since the pipeline moves the
  // writes off the program's thread.
  std::unique_ptr<WritePipeline> write_pipeline_;

  // Folds statistics_ into the graph's totals and clears it.
  void FoldStatistics();
  // The program's write at the frontier `node` (`call`, offset known)
  // returned `result`: tells the WriteBehind when the node declares it.
  void NoteWriteResult(int node, const foreactor_call& call, int64_t result) {
    if (write_behind_ != nullptr && graph_.node(node).write_behind) {
      write_behind_->NoteWrite(call.fd, call.offset, result);
    }
  }
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_GRAPH_RUNNER_H_
