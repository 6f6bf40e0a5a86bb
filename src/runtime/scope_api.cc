// scope_api.cc: the scope functions of the C API, the per-thread state
// behind them, and the entry points the interposers call.
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "base/call_types.h"
#include "base/out_of_memory.h"
#include "base/private_memory.h"
#include "config/report.h"
#include "config/settings.h"
#include "engine/deferred_engine.h"
#include "engine/engine.h"
#include "engine/high_descriptors.h"
#include "graph/graph.h"
#include "graph/graph_handle.h"
#include "runtime/graph_runner.h"
#include "runtime/interception.h"
#include "runtime/polled_read.h"
#include "runtime/raw_syscalls.h"
#include "runtime/scope_gate.h"
#include "runtime/statistics.h"

namespace foreactor {

constinit thread_local ThreadContext tls_context;

namespace {

constexpr int kMaxGraphs = 256;                  // graphs per process that can speculate
constexpr int kMaxScopeDepth = 64;               // nested scopes per thread that are tracked
constexpr int kInlineScopeFrames = 8;            // of them, kept in the thread's record
constexpr unsigned kAutomaticDepthWorkers = 32;  // thread pool workers for FOREACTOR_DEPTH=auto

void ReportOnce(std::atomic<bool>& flag, const std::string& message) {
  if (!flag.exchange(true)) Report(message);
}

// Process-wide facts about one graph, made on its first scope, in private
// memory (base/private_memory.h: the program's heap grows by no record of
// foreactor's while it runs).
struct GraphRuntime {
  GraphSettings settings;
  std::string graph_name;  // (the graph may be destroyed before the counts are folded)
  // The graph's scopes that no runner followed
  // (foreactor_graph_follow_from_look_ahead), and of them those left in
  // file order, not yet in the graph's statistics totals: a scope adds to
  // them with no lock and no lookup (CountScopeWithoutRunner); they are
  // folded in before the statistics are written (FoldCountsOutsideRunners).
  // `scopes` is added to before `left` (release), and `left` taken before
  // `scopes` (acquire): a fold never sees more left than entered.
  std::atomic<uint64_t> scopes_without_runner{0};
  std::atomic<uint64_t> scopes_left_without_runner{0};
  // Reads started by foreactor_scope_start_read(), not yet in the totals
  // (folded with the two above).
  std::atomic<uint64_t> reads_started_in_plans{0};
  // The program's reads of started ranges (foreactor_scope_read_started()),
  // served by a poll of the page cache or not: folded with the above.
  std::atomic<uint64_t> started_reads_polled{0};
  std::atomic<uint64_t> started_reads_asleep{0};
};

std::atomic<GraphRuntime*> graph_runtimes[kMaxGraphs];
std::atomic<bool> too_many_graphs_reported{false};
std::atomic<bool> fallback_reported{false};
std::atomic<bool> no_engine_reported{false};
std::atomic<bool> unbalanced_reported{false};
std::atomic<bool> no_thread_key_reported{false};

GraphRuntime* RuntimeOf(const Graph& graph) {
  const int id = graph.id();
  if (id < 0 || id >= kMaxGraphs) {
    ReportOnce(too_many_graphs_reported, "more than " + std::to_string(kMaxGraphs) +
                                             " graphs; graph '" + graph.name() +
                                             "' and later ones run without speculation");
    return nullptr;
  }
  GraphRuntime* runtime = graph_runtimes[id].load(std::memory_order_acquire);
  if (runtime != nullptr) return runtime;
  GraphRuntime* fresh = NewPrivateOrNull<GraphRuntime>();
  if (fresh == nullptr) return nullptr;
  fresh->settings = SettingsForGraph(graph.name());
  if (!AllocationSucceeds([&] { fresh->graph_name = graph.name(); })) {
    DeletePrivate(fresh);
    return nullptr;
  }
  // Depth 0 issues nothing early: no engine resources at all.
  if (!fresh->settings.automatic_depth && fresh->settings.depth == 0)
    fresh->settings.engine.kind = EngineKind::kSync;
  // A thread pool keeps as many calls in flight as it has workers: unless
  // told otherwise, give it one per call the graph may run ahead (with the
  // automatic depth, up to kAutomaticDepthWorkers: more threads than that
  // only add switching).  The pool starts them as requests wait.
  if (fresh->settings.engine.kind == EngineKind::kThreads && fresh->settings.engine.workers == 0) {
    fresh->settings.engine.workers = fresh->settings.automatic_depth
                                         ? std::min(fresh->settings.depth, kAutomaticDepthWorkers)
                                         : fresh->settings.depth;
  }
  if (graph_runtimes[id].compare_exchange_strong(runtime, fresh, std::memory_order_acq_rel)) {
    return fresh;
  }
  DeletePrivate(fresh);
  return runtime;
}

// Everything one thread keeps: its runners (one per graph), its engines
// (one per kind, shared by its graphs) and its stack of open scopes.
struct ThreadState {
  struct Frame {
    foreactor_graph* graph;
    GraphRunner* runner;  // null when this scope does not speculate
    // The scope was entered to be followed from the plugin's first
    // look-ahead on (foreactor_graph_follow_from_look_ahead); until that
    // look-ahead (awaits_look_ahead) it has no runner, and `scope_state` is
    // kept for it.  A scope so entered counts as open for nested scopes of
    // its graph, with a runner or not.
    bool from_look_ahead;
    bool awaits_look_ahead;
    void* scope_state;
  };

  // kMaxGraphs entries (runner of graph id, or null), made with the
  // thread's first runner: a thread whose scopes are all left with no
  // runner (a short run in file order) never writes them.  With the stack
  // below not zeroed, a thread's first scope touches a few hundred bytes
  // of this record instead of 4 KiB (two fresh heap pages in a short
  // process).
  std::unique_ptr<GraphRunner*[]> runners;
  // kMaxGraphs entries, made with the first scope gate of the thread (each
  // gate by its graph's first foreactor_scope_gate()): a thread whose
  // plugins ask no gate does not write them.
  std::unique_ptr<ScopeGate*[]> gates;
  std::unique_ptr<Engine> engines[3];
  bool engine_failed[3] = {};
  // Frames [0, depth) of the open scopes, innermost last (FrameAt): the
  // first kInlineScopeFrames in the record, deeper ones in a table made
  // when a scope first nests that deep.  Frames at depth and beyond are
  // never read (the record's constructor leaves them unwritten); a small
  // record is the first scope's one allocation, and fits where the
  // program's heap has already touched its pages.
  Frame inline_frames[kInlineScopeFrames];
  std::unique_ptr<Frame[]> deeper_frames;  // kMaxScopeDepth - kInlineScopeFrames
  int depth = 0;
  int untracked_depth = 0;  // scopes opened with no room for their frame (RoomForNextFrame)
  bool forked_child = false;
  // A scope gate started to rest: once no scope is open on the thread, the
  // engines release what they can make again (RestEnginesIfIdle).
  bool rest_engines_when_idle = false;

  // Leaves the frames unwritten (a value-initialized record would zero
  // them).
  ThreadState() {}

  Frame& FrameAt(int index) {
    return index < kInlineScopeFrames ? inline_frames[index]
                                      : deeper_frames[index - kInlineScopeFrames];
  }
  const Frame& FrameAt(int index) const {
    return index < kInlineScopeFrames ? inline_frames[index]
                                      : deeper_frames[index - kInlineScopeFrames];
  }

  // True when frame `depth` can be pushed: below kMaxScopeDepth, with the
  // table of deeper frames made when it is needed (false when it cannot
  // be).
  bool RoomForNextFrame() {
    if (depth >= kMaxScopeDepth) return false;
    if (depth < kInlineScopeFrames || deeper_frames != nullptr) return true;
    deeper_frames.reset(NewArrayOrNull<Frame>(kMaxScopeDepth - kInlineScopeFrames));
    return deeper_frames != nullptr;
  }

  // The scope gate of graph `id` on this thread, or null before its first
  // foreactor_scope_gate().
  ScopeGate* GateOf(int id) const { return gates != nullptr ? gates[id] : nullptr; }

  // The runner of graph `id` on this thread, or null before its first.
  GraphRunner* RunnerOf(int id) const { return runners != nullptr ? runners[id] : nullptr; }

  // Calls `visit` with each runner the thread made.
  template <typename Visit>
  void ForEachRunner(Visit visit) const {
    if (runners == nullptr) return;
    std::for_each(runners.get(), runners.get() + kMaxGraphs, [&](GraphRunner* runner) {
      if (runner != nullptr) visit(runner);
    });
  }

  ~ThreadState() {
    if (forked_child) {
      // The parent's engines (its ring, its pool) must never be touched.
      for (auto& engine : engines) (void)engine.release();
      return;
    }
    ForEachRunner([](GraphRunner* runner) { delete runner; });
    if (gates != nullptr)
      std::for_each(gates.get(), gates.get() + kMaxGraphs, [](ScopeGate* gate) { delete gate; });
  }

  // When rest_engines_when_idle is set and no scope is open on the thread,
  // lets every engine release its threads and kernel resources (the next
  // request makes them again) and clears the flag; otherwise does nothing.
  void RestEnginesIfIdle() {
    if (!rest_engines_when_idle || forked_child || depth > 0 || untracked_depth > 0) return;
    rest_engines_when_idle = false;
    FinishWriteBehind();  // nothing may run when an engine rests
    for (auto& engine : engines) {
      if (engine != nullptr) engine->Rest();
    }
  }

  // Waits for every write-back hint of the thread's runners.
  void FinishWriteBehind() {
    if (tls_context.write_behind_hints_in_flight == 0 || forked_child) return;
    ForEachRunner([](GraphRunner* runner) { runner->FinishWriteBehind(); });
  }

  // The program is about to close `fd`: waits for the write-back hints
  // that name it (runners keep them past their scopes).
  void BeforeClose(int fd) {
    if (tls_context.write_behind_hints_in_flight == 0 || forked_child) return;
    ForEachRunner([fd](GraphRunner* runner) {
      if (runner->has_write_behind_in_flight()) runner->BeforeClose(fd);
    });
  }

  // The thread's engine of `options.kind`.  io_uring and thread pool
  // engines are made at their first request (DeferredEngine): a thread
  // that never issues anything early never pays for a ring or a worker.
  Engine* EngineFor(const EngineOptions& options) {
    const int index = static_cast<int>(options.kind);
    if (engines[index] == nullptr && !engine_failed[index]) {
      if (options.kind == EngineKind::kSync) {
        std::string fallback_reason;
        engines[index] = CreateEngine(options, &fallback_reason);
      } else {
        engines[index].reset(NewOrNull<DeferredEngine>(options, &EngineMade, this));
      }
      if (engines[index] == nullptr) EngineMade(this, options.kind, "", false);
    }
    return engines[index].get();
  }

  // Reports how making the engine of `kind` went (DeferredEngine::MadeCallback).
  static void EngineMade(void* context, EngineKind kind, const std::string& fallback_reason,
                         bool made) {
    if (!fallback_reason.empty()) ReportOnce(fallback_reported, fallback_reason);
    if (made) return;
    static_cast<ThreadState*>(context)->engine_failed[static_cast<int>(kind)] = true;
    ReportOnce(no_engine_reported,
               "no asynchronous engine could be started; running without speculation");
  }
};

// Initial-exec, as tls_context: the library is loaded at program start.
thread_local ThreadState* tls_state __attribute__((tls_model("initial-exec"))) = nullptr;
pthread_key_t thread_state_key;

void DestroyThreadState(void* state) {
  tls_context.innermost = nullptr;
  tls_state = nullptr;
  delete static_cast<ThreadState*>(state);
}

// Makes thread_state_key, once per process (a function-local static: unlike
// pthread_once(), whose completion is a futex wake system call, it costs a
// process's first scope no system call).  Returns false when the process
// has no key left (PTHREAD_KEYS_MAX taken): thread_state_key is then no
// key of ours, and setting it could overwrite one of the program's.
bool ThreadStateKeyMade() {
  static const bool made = pthread_key_create(&thread_state_key, DestroyThreadState) == 0;
  return made;
}

ThreadState* GetThreadState() {
  if (tls_state != nullptr) return tls_state;
  if (!ThreadStateKeyMade()) {
    ReportOnce(no_thread_key_reported,
               "no thread-specific data key left (pthread_key_create failed); running without "
               "speculation");
    return nullptr;
  }
  ThreadState* state = NewOrNull<ThreadState>();
  if (state == nullptr) return nullptr;
  tls_state = state;
  pthread_setspecific(thread_state_key, state);
  return state;
}

// Marks foreactor's own code on this thread so that the calls it (and the
// plugin's callbacks) make pass through the interposers untouched.  Also
// keeps errno as the program left it.
class InsideForeactor {
 public:
  InsideForeactor() : saved_errno_(errno) { tls_context.inside_foreactor++; }
  ~InsideForeactor() {
    tls_context.inside_foreactor--;
    errno = saved_errno_;
  }
  InsideForeactor(const InsideForeactor&) = delete;
  InsideForeactor& operator=(const InsideForeactor&) = delete;

 private:
  int saved_errno_;
};

// The index of `graph` in the per-thread and per-process tables, or -1 when
// it has none: NULL, invalid, or beyond kMaxGraphs.
int TableIndexOf(const foreactor_graph* graph) {
  if (graph == nullptr || !graph->graph.valid()) return -1;
  const int id = graph->graph.id();
  return id >= 0 && id < kMaxGraphs ? id : -1;
}

bool ScopeOfGraphOpen(const ThreadState& state, const foreactor_graph* graph) {
  for (int i = 0; i < state.depth; ++i) {
    const ThreadState::Frame& frame = state.FrameAt(i);
    if (frame.graph == graph && (frame.runner != nullptr || frame.from_look_ahead)) return true;
  }
  return false;
}

// Whether scopes of a graph with these settings may wait for the plugin's
// first look-ahead before following it: not where every scope is followed
// from its entry (check mode, an exact depth).
bool MayAwaitLookAhead(const GraphSettings& settings) {
  return !settings.check && DepthPolicyOf(settings) != DepthPolicy::kExact;
}

// Counts a scope that no runner followed: entered, and left in file order
// at its first look-ahead when `left` says so.
void CountScopeWithoutRunner(GraphRuntime* runtime, bool left) {
  runtime->scopes_without_runner.fetch_add(1, std::memory_order_relaxed);
  if (left) runtime->scopes_left_without_runner.fetch_add(1, std::memory_order_release);
}

// Folds every graph's counts kept outside its runners (scopes no runner
// followed, reads started in plans) into its statistics totals (a
// statistics fold, added when the library loads).
void FoldCountsOutsideRunners() {
  for (std::atomic<GraphRuntime*>& slot : graph_runtimes) {
    GraphRuntime* runtime = slot.load(std::memory_order_acquire);
    if (runtime == nullptr) continue;
    Statistics delta;
    delta.scopes_left_in_file_order =
        runtime->scopes_left_without_runner.exchange(0, std::memory_order_acquire);
    delta.scopes = runtime->scopes_without_runner.exchange(0, std::memory_order_relaxed);
    delta.reads_started_in_plans =
        runtime->reads_started_in_plans.exchange(0, std::memory_order_relaxed);
    delta.started_reads_polled =
        runtime->started_reads_polled.exchange(0, std::memory_order_relaxed);
    delta.started_reads_asleep =
        runtime->started_reads_asleep.exchange(0, std::memory_order_relaxed);
    if (delta.scopes == 0 && delta.reads_started_in_plans == 0 && delta.started_reads_polled == 0 &&
        delta.started_reads_asleep == 0) {
      continue;
    }
    // (No engine is made for such a scope or start: the kind the graph's
    // runner uses.)
    AccumulateStatistics(runtime->graph_name, EngineKindName(runtime->settings.engine.kind), delta);
  }
}

// Makes (once per thread and graph) and enters the runner of `frame`'s
// graph, which becomes the thread's innermost speculating scope.  Leaves
// `frame->runner` null when no runner can be made.
void EnterRunner(ThreadState* state, ThreadState::Frame* frame, const GraphRuntime& runtime,
                 void* scope_state) {
  const Graph& model = frame->graph->graph;
  if (state->runners == nullptr) {
    state->runners.reset(NewArrayOrNull<GraphRunner*>(kMaxGraphs));
    if (state->runners == nullptr) return;
    std::fill_n(state->runners.get(), kMaxGraphs, nullptr);
  }
  GraphRunner*& runner = state->runners[model.id()];
  if (runner == nullptr) {
    Engine* engine = state->EngineFor(runtime.settings.engine);
    // Chains of linked requests go to the thread pool when the graph's
    // engine is io_uring (GraphRunner's constructor says why).
    Engine* chain_engine = engine;
    if (runtime.settings.engine.kind == EngineKind::kIoUring) {
      EngineOptions pool = runtime.settings.engine;
      pool.kind = EngineKind::kThreads;
      Engine* threads = state->EngineFor(pool);
      if (threads != nullptr) chain_engine = threads;
    }
    if (engine != nullptr) {
      runner = NewOrNull<GraphRunner>(model, runtime.settings, engine, chain_engine);
      if (runner != nullptr && !runner->ok()) {
        delete runner;
        runner = nullptr;
      }
    }
  }
  if (runner == nullptr) return;
  frame->runner = runner;
  runner->outer = tls_context.innermost;
  tls_context.innermost = runner;
  runner->Enter(scope_state);
}

// Reads the settings (and reports invalid ones) when the library loads,
// not in the middle of the program's first scope, and adds the fold of
// the counts kept outside runners.  With foreactor on, also
// grows the descriptor table for foreactor's high descriptors while the
// process most likely has one thread (high_descriptors.h).
__attribute__((constructor)) void LoadSettingsAtStart() {
  AddStatisticsFold(&FoldCountsOutsideRunners);
  if (Settings().enabled) ReserveHighDescriptors();
}

// At exit: waits for the write-back hints of the exiting thread (nothing
// of foreactor's may run past it), then writes the statistics file when
// FOREACTOR_STATS asks for one.
__attribute__((destructor)) void WriteStatisticsAtExit() {
  const ProcessSettings& settings = Settings();
  if (!settings.enabled) return;
  if (tls_state != nullptr) {
    tls_context.inside_foreactor++;
    tls_state->FinishWriteBehind();
    tls_context.inside_foreactor--;
  }
  if (settings.stats_path.empty()) return;
  tls_context.inside_foreactor++;
  const int written = WriteStatisticsFile(settings.stats_path.c_str());
  if (written != 0) {
    Report("cannot write statistics to " + settings.stats_path + ": " + std::strerror(-written));
  }
  tls_context.inside_foreactor--;
}

}  // namespace

bool OfferCall(InterceptedCall* intercepted, int64_t* result) {
  InsideForeactor inside;
  if (intercepted->call.type == FOREACTOR_CALL_CLOSE) {
    // The open scopes forget the descriptor's runs of finished writes
    // (its number may name another file next), and every runner of the
    // thread waits for its hints on it.
    for (GraphRunner* scope = tls_context.innermost; scope != nullptr; scope = scope->outer) {
      scope->BeforeClose(intercepted->call.fd);
    }
    if (tls_state != nullptr) tls_state->BeforeClose(intercepted->call.fd);
  }
  for (GraphRunner* scope = tls_context.innermost; scope != nullptr; scope = scope->outer) {
    if (!scope->speculating()) continue;
    if (scope->Offer(intercepted, result)) {
      // A scope that stopped speculating while serving the call (it left
      // the rest of the scope to the page cache) leaves the list of
      // speculating scopes when it is the innermost (foreactor_scope_exit
      // restores the same list): the program's calls then take the
      // interposers' idle path.
      if (!scope->speculating() && tls_context.innermost == scope) {
        tls_context.innermost = scope->outer;
      }
      return true;
    }
    if (intercepted->claimed_by != nullptr) return false;  // claimed: the real call runs
  }
  return false;
}

bool ThreadHasSpeculatingScope() { return tls_context.innermost != nullptr; }

void CompleteCall(InterceptedCall* intercepted, int64_t result) {
  if (intercepted->claimed_by == nullptr) return;
  InsideForeactor inside;
  intercepted->claimed_by->Complete(intercepted, result);
}

void DisableAfterFork() {
  tls_context.innermost = nullptr;
  tls_context.write_behind_hints_in_flight = 0;  // the parent's, never touched here
  ThreadState* state = tls_state;
  if (state == nullptr) return;
  state->forked_child = true;
  state->ForEachRunner([](GraphRunner* runner) { runner->Abandon(); });
}

}  // namespace foreactor

using foreactor::InsideForeactor;
using foreactor::ThreadState;
using foreactor::tls_context;

namespace {

// The runtime of `graph` when foreactor_scope_start_read() starts reads for
// it on the calling thread, given a range readahead(2) takes; null where
// the graph's scopes issue nothing early (NONE covers foreactor off, an
// invalid or switched-off graph, depth 0, the sync engine at the automatic
// depth and suspended speculation), in check mode, with page-cache
// awareness off (the runtime then issues every planned read itself) and
// with the sync engine.
foreactor::GraphRuntime* RuntimeStartingReads(const foreactor_graph* graph) {
  if (foreactor_scope_speculation(graph) == FOREACTOR_SPECULATION_NONE) return nullptr;
  foreactor::GraphRuntime* runtime = foreactor::RuntimeOf(graph->graph);
  if (runtime == nullptr) return nullptr;
  const foreactor::GraphSettings& settings = runtime->settings;
  if (settings.check || !settings.page_cache_aware ||
      settings.engine.kind == foreactor::EngineKind::kSync) {
    return nullptr;
  }
  return runtime;
}

}  // namespace

extern "C" {

void foreactor_scope_enter(foreactor_graph* graph, void* scope_state) {
  // Foreactor off (for the whole life of the process): no scope is tracked,
  // and foreactor_scope_exit finds no thread state either.  A process that
  // never speculates builds none (about 5 us in a new process).
  if (graph == nullptr || !foreactor::Enabled()) return;
  InsideForeactor inside;
  ThreadState* state = foreactor::GetThreadState();
  if (state == nullptr) return;
  if (!state->RoomForNextFrame()) {
    state->untracked_depth++;
    return;
  }
  ThreadState::Frame& frame = state->FrameAt(state->depth);
  frame = ThreadState::Frame{graph, nullptr, false, false, nullptr};
  const foreactor::Graph& model = graph->graph;
  bool speculate = foreactor::Enabled() && !state->forked_child && model.valid() &&
                   !foreactor::ScopeOfGraphOpen(*state, graph);
  foreactor::GraphRuntime* runtime = speculate ? foreactor::RuntimeOf(model) : nullptr;
  if (runtime != nullptr && runtime->settings.enabled) {
    if (model.follows_from_look_ahead() && foreactor::MayAwaitLookAhead(runtime->settings)) {
      // Nothing to follow before the plugin's first look-ahead (the
      // graph's contract): no runner yet, and the program's calls take the
      // interposers' idle path.
      frame.from_look_ahead = true;
      frame.awaits_look_ahead = true;
      frame.scope_state = scope_state;
    } else {
      foreactor::EnterRunner(state, &frame, *runtime, scope_state);
    }
  }
  state->depth++;
}

void foreactor_scope_exit(foreactor_graph* graph) {
  ThreadState* state = foreactor::tls_state;
  if (state == nullptr || graph == nullptr) return;
  InsideForeactor inside;
  if (state->untracked_depth > 0) {
    state->untracked_depth--;
    return;
  }
  if (state->depth == 0 || state->FrameAt(state->depth - 1).graph != graph) {
    foreactor::ReportOnce(foreactor::unbalanced_reported,
                          std::string("foreactor_scope_exit(") + graph->graph.name().c_str() +
                              ") does not match the innermost open scope; ignored");
    return;
  }
  ThreadState::Frame frame = state->FrameAt(--state->depth);
  if (frame.awaits_look_ahead) {
    // No look-ahead came: the scope is counted, nothing else was done.
    foreactor::GraphRuntime* runtime = foreactor::RuntimeOf(graph->graph);
    if (runtime != nullptr) foreactor::CountScopeWithoutRunner(runtime, false);
  }
  if (frame.runner != nullptr) {
    if (!state->forked_child) tls_context.innermost = frame.runner->outer;
    frame.runner->outer = nullptr;
    const foreactor::Statistics& statistics = frame.runner->statistics();
    frame.runner->has_last_outcome = true;
    frame.runner->last_outcome = {statistics.intercepted, statistics.issued_early,
                                  statistics.found_cached + statistics.served_from_cache};
    frame.runner->Exit();
  }
  state->RestEnginesIfIdle();
}

void foreactor_scope_look_ahead(foreactor_graph* graph) {
  ThreadState* state = foreactor::tls_state;
  if (state == nullptr || graph == nullptr || state->forked_child) return;
  for (int i = state->depth - 1; i >= 0; --i) {
    ThreadState::Frame& frame = state->FrameAt(i);
    if (frame.graph != graph) continue;
    if (frame.awaits_look_ahead) {
      InsideForeactor inside;
      frame.awaits_look_ahead = false;
      foreactor::GraphRuntime* runtime = foreactor::RuntimeOf(graph->graph);
      if (runtime == nullptr) return;
      if (foreactor::GraphRunner::LeavesAtStart(graph->graph, runtime->settings,
                                                frame.scope_state)) {
        foreactor::CountScopeWithoutRunner(runtime, true);
        return;
      }
      // Followed from here, as from the scope's entry; only as the
      // innermost scope (the runners' list of speculating scopes is a
      // stack).  Otherwise the scope runs without speculation.
      if (i != state->depth - 1) {
        foreactor::CountScopeWithoutRunner(runtime, false);
        return;
      }
      foreactor::EnterRunner(state, &frame, *runtime, frame.scope_state);
    }
    foreactor::GraphRunner* runner = frame.runner;
    if (runner == nullptr || !runner->speculating()) return;
    InsideForeactor inside;
    runner->LookAhead();
    // A runner that left the rest of its scope (GraphRunner::LookAhead)
    // leaves the list of speculating scopes when it is the innermost, as
    // in OfferCall.
    if (!runner->speculating() && tls_context.innermost == runner)
      tls_context.innermost = runner->outer;
    return;
  }
}

int foreactor_last_scope_outcome(const foreactor_graph* graph, foreactor_scope_outcome* outcome) {
  const ThreadState* state = foreactor::tls_state;
  const int id = foreactor::TableIndexOf(graph);
  if (state == nullptr || outcome == nullptr || id < 0) return 0;
  const foreactor::GraphRunner* runner = state->RunnerOf(id);
  if (runner == nullptr || !runner->has_last_outcome) return 0;
  *outcome = runner->last_outcome;
  return 1;
}

namespace foreactor {
namespace {

// The calling thread's runner of `graph`, or null before its first scope.
GraphRunner* ThreadRunnerOf(const foreactor_graph* graph) {
  const ThreadState* state = foreactor::tls_state;
  const int id = foreactor::TableIndexOf(graph);
  return state != nullptr && id >= 0 ? state->RunnerOf(id) : nullptr;
}

// The scope gate's request after an idle rest (ScopeGate::RetryRequest).
void RetrySpeculation(const foreactor_graph* graph) {
  GraphRunner* runner = ThreadRunnerOf(graph);
  if (runner != nullptr) runner->RetrySpeculation();
}

// Whether the graph's scopes on this thread stream a file past the page
// cache (ScopeGate::StreamQuery).
bool ScopesStream(const foreactor_graph* graph) {
  const GraphRunner* runner = ThreadRunnerOf(graph);
  return runner != nullptr && runner->streaming_past_cache();
}

// The gate's first question on this thread: makes the gate.
__attribute__((noinline)) int FirstGateQuestion(const foreactor_graph* graph, int id) {
  InsideForeactor inside;
  ThreadState* state = GetThreadState();
  if (state == nullptr) return 0;
  if (state->gates == nullptr) {
    state->gates.reset(NewArrayOrNull<ScopeGate*>(kMaxGraphs));
    if (state->gates == nullptr) return 0;
    std::fill_n(state->gates.get(), kMaxGraphs, nullptr);
  }
  ScopeGate* gate = NewOrNull<ScopeGate>(graph, &foreactor_scope_speculation, &RetrySpeculation);
  if (gate == nullptr) return 0;
  gate->KeepWhileStreaming(&ScopesStream);
  const GraphRuntime* runtime = RuntimeOf(graph->graph);
  if (runtime != nullptr && WritePipelineWanted(graph->graph, runtime->settings)) {
    gate->TrialsWithoutWaits();
  }
  state->gates[id] = gate;
  return foreactor_scope_gate(graph);
}

// A decision was made: folds the gate's statistics into the graph's.  A
// gate that starts to rest lets the thread's engines rest too, now or at
// the exit of the scope that is still open (engines made again on demand
// cost a few system calls, an io_uring ring kept open with idle kernel workers costs
// every descriptor call of the program, DESIGN §2 rule 5: free when idle).
__attribute__((noinline)) void FoldGateStatistics(const foreactor_graph* graph, ScopeGate* gate,
                                                  ThreadState* state) {
  InsideForeactor inside;
  Statistics delta;
  gate->TakeStatistics(&delta);
  AccumulateStatistics(graph->graph.name(), "", delta);
  if (gate->resting()) {
    state->rest_engines_when_idle = true;
    state->RestEnginesIfIdle();
  }
}

// foreactor_scope_gate(), and with `units` foreactor_scope_gate_units():
// the answer for the next unit, with `*units` the units it holds for.
// Inlined into each, so the question per unit stays a few loads and a
// decrement.
__attribute__((always_inline)) inline int AskScopeGate(const foreactor_graph* graph,
                                                       uint32_t* units) {
  const int id = TableIndexOf(graph);
  if (id < 0 || !Enabled()) {
    if (units != nullptr) *units = UINT32_MAX;  // the answer never changes
    return 0;
  }
  ThreadState* state = tls_state;
  ScopeGate* gate = state != nullptr ? state->GateOf(id) : nullptr;
  if (gate == nullptr) {
    if (units != nullptr) *units = 1;  // the gate is made now; the next unit asks it
    return FirstGateQuestion(graph, id);
  }
  const bool open = units != nullptr ? gate->BeforeUnits(units) : gate->BeforeUnit();
  if (gate->has_statistics()) FoldGateStatistics(graph, gate, state);
  return open ? 1 : 0;
}

}  // namespace
}  // namespace foreactor

int foreactor_scope_gate(const foreactor_graph* graph) {
  return foreactor::AskScopeGate(graph, nullptr);
}

int foreactor_scope_gate_units(const foreactor_graph* graph, uint32_t* units) {
  return foreactor::AskScopeGate(graph, units);
}

void foreactor_scope_gate_exclude(const foreactor_graph* graph, uint64_t nanoseconds) {
  const ThreadState* state = foreactor::tls_state;
  const int id = foreactor::TableIndexOf(graph);
  foreactor::ScopeGate* gate = state != nullptr && id >= 0 ? state->GateOf(id) : nullptr;
  if (gate == nullptr) return;
  gate->ExcludeTime(nanoseconds);
  foreactor::GraphRunner* runner = state->RunnerOf(id);
  if (runner != nullptr) runner->ExcludeTime(nanoseconds);
}

int foreactor_scope_gate_measuring(const foreactor_graph* graph) {
  const ThreadState* state = foreactor::tls_state;
  const int id = foreactor::TableIndexOf(graph);
  const foreactor::ScopeGate* gate = state != nullptr && id >= 0 ? state->GateOf(id) : nullptr;
  return gate != nullptr && gate->measuring() ? 1 : 0;
}

int foreactor_enabled(void) { return foreactor::Enabled() ? 1 : 0; }

foreactor_speculation foreactor_scope_speculation(const foreactor_graph* graph) {
  if (graph == nullptr || !foreactor::Enabled()) return FOREACTOR_SPECULATION_NONE;
  const foreactor::Graph& model = graph->graph;
  if (!model.valid()) return FOREACTOR_SPECULATION_NONE;
  const foreactor::GraphRuntime* runtime = nullptr;
  {
    InsideForeactor inside;  // the first call reads the graph's settings
    runtime = foreactor::RuntimeOf(model);
  }
  if (runtime == nullptr || !runtime->settings.enabled) return FOREACTOR_SPECULATION_NONE;
  const foreactor::GraphSettings& settings = runtime->settings;
  const ThreadState* state = foreactor::tls_state;
  if (state != nullptr && state->forked_child) return FOREACTOR_SPECULATION_NONE;
  if (settings.check) return FOREACTOR_SPECULATION_REQUESTED;
  if (!settings.automatic_depth && settings.depth == 0) return FOREACTOR_SPECULATION_NONE;
  // The sync engine issues nothing early at any depth: a fixed depth asks
  // for its scopes (the graph's code path as a baseline), the automatic
  // depth only looks for gains it cannot have.
  const bool sync = settings.engine.kind == foreactor::EngineKind::kSync;
  if (settings.automatic_depth && sync) return FOREACTOR_SPECULATION_NONE;
  const foreactor::GraphRunner* runner = state != nullptr ? state->RunnerOf(model.id()) : nullptr;
  if (runner == nullptr) {
    // Never entered on this thread, or its engine could not be started.
    if (state != nullptr && state->engine_failed[static_cast<int>(settings.engine.kind)]) {
      return FOREACTOR_SPECULATION_NONE;
    }
  } else if (runner->suspended() || runner->home_depth() == 0 ||
             (foreactor::DepthPolicyOf(settings) != foreactor::DepthPolicy::kExact &&
              runner->serving_quick_calls_only())) {
    // (Stats found cached, or writes found quick: the gate rests; the scope
    // of its next trial still times the program's calls and speculates
    // again when they are slow.)
    return FOREACTOR_SPECULATION_NONE;
  }
  // A depth the runtime may lower (auto, or a fixed depth as a bound) lets the
  // plugin's scope gate time its scopes; an exact one asks for every scope.
  return foreactor::DepthPolicyOf(settings) == foreactor::DepthPolicy::kExact || sync
             ? FOREACTOR_SPECULATION_REQUESTED
             : FOREACTOR_SPECULATION_AUTOMATIC;
}

int foreactor_scope_starts_reads(const foreactor_graph* graph) {
  return RuntimeStartingReads(graph) != nullptr ? 1 : 0;
}

int foreactor_scope_start_read(const foreactor_graph* graph, int fd, uint64_t offset,
                               uint64_t length) {
  foreactor::GraphRuntime* runtime = RuntimeStartingReads(graph);
  if (runtime == nullptr || length == 0 || offset > INT64_MAX || length > INT64_MAX - offset) {
    return -1;
  }
  {
    InsideForeactor inside;  // keeps the program's errno
    if (foreactor::raw::Readahead(fd, static_cast<int64_t>(offset), static_cast<size_t>(length)) <
        0) {
      return -1;
    }
  }
  runtime->reads_started_in_plans.fetch_add(1, std::memory_order_relaxed);
  return 0;
}

ssize_t foreactor_scope_read_started(const foreactor_graph* graph, int fd, void* buffer,
                                     size_t length, int64_t offset) {
  // The process's: polls stop for a while after one lost its CPU, and no
  // more threads poll at once than it has CPUs.
  constinit static foreactor::PollAdmission poll_admission;
  foreactor::GraphRuntime* runtime = RuntimeStartingReads(graph);
  const uint64_t budget_ns =
      runtime != nullptr ? uint64_t{runtime->settings.poll_microseconds} * 1000 : 0;
  // (ReadPolling keeps errno and makes its calls past the interposers.)
  bool polled = false;
  const int64_t result =
      foreactor::ReadPolling(fd, buffer, length, offset, budget_ns, &poll_admission, &polled);
  if (runtime != nullptr) {
    (polled ? runtime->started_reads_polled : runtime->started_reads_asleep)
        .fetch_add(1, std::memory_order_relaxed);
  }
  if (result < 0) {
    errno = static_cast<int>(-result);
    return -1;
  }
  return static_cast<ssize_t>(result);
}

int foreactor_write_stats(FILE* out) {
  if (out == nullptr) return -1;
  return foreactor::WriteStatisticsJson(out);
}

}  // extern "C"
