// write_pipeline.h: the ordered write pipeline (DESIGN §4, "links").
//
// A write that writes the bytes of the linked read before it (a copy
// loop: read a chunk, write it) is settled once that read has completed:
// its data and its position are known.  The pipeline runs such writes off
// the program's thread, in program order, so that the program's reads,
// its own work and the writes overlap:
//  - the peek head issues the read alone and hands the pipeline its write
//    (Hold: the write's slot becomes kHeld; nothing is sent yet);
//  - Pump() sends, in order, the held writes at the front whose reads
//    completed with their full length, as ordered requests
//    (Request::ordered): the engine (the thread pool's lane) runs them one
//    at a time, in order, each only if the one before it transferred all
//    its bytes, so no write runs after one that failed or fell short, and
//    none overtakes another.  A worker that finishes one takes the next at
//    once: the writes stream while the program goes on;
//  - a write the program reaches while it is still held, or whose read
//    fell short or failed, is released (kPassed): the program makes it
//    itself, and the writes behind it wait until that call returned in
//    full (FrontierFinished);
//  - a write that the program made or was served short, with an error or
//    not at all stops the pipeline for the rest of the scope: every write
//    still held is released.
// So the file receives exactly the writes the program makes, in its order,
// each only once every write before it succeeded in full: what the program
// would have done, earlier.
//
// The runner makes one where WritePipelineWanted() says (below).
//
// The entries are the visits between the frontier and the peek head, in
// visit order; the runner keeps each slot (and the read's buffer the
// write uses) until the frontier has passed it.  Used by the owning
// runner's thread only; no allocation after construction.
#ifndef FOREACTOR_RUNTIME_WRITE_PIPELINE_H_
#define FOREACTOR_RUNTIME_WRITE_PIPELINE_H_

#include <memory>

#include "config/settings.h"
#include "engine/engine.h"
#include "graph/graph.h"
#include "runtime/visit_slot.h"

namespace foreactor {

// True when the scopes of `graph` run a write pipeline under `settings`
// (given an engine): the graph copies data (Graph::copies_data), outside
// check mode, at any depth.  (Until the scope gate gave trials to plain
// stretches without waits, the automatic depth had none: its trials lost,
// and hot copies paid them.)
inline bool WritePipelineWanted(const Graph& graph, const GraphSettings& settings) {
  return graph.copies_data() && !settings.check;
}

class WritePipeline {
 public:
  // `capacity`: the most writes held or sent at once (the runner's visits
  // ahead bound them).  `engine` outlives this object.
  WritePipeline(Engine* engine, unsigned capacity);

  WritePipeline(const WritePipeline&) = delete;
  WritePipeline& operator=(const WritePipeline&) = delete;

  // Starts a scope: nothing held, the pipeline open, the engine's order
  // restarted (nothing this pipeline sent is in flight then).
  void StartScope();

  // Takes `write` (a slot whose request is prepared, not handed to the
  // engine, and writes from `read`'s buffer), fed by `read` (kIssued, or
  // kCached with its result in place).  On success `write` becomes kHeld.
  // Returns false, changing nothing, when the pipeline is full or stopped
  // for this scope.
  bool Hold(VisitSlot* read, VisitSlot* write);

  // Sends what may go now, as described above.  Returns the number of
  // writes handed to the engine (submitted).
  int Pump();

  // The program has consumed `read`'s visit; `full` says whether it was
  // served the early result with the read's full length.  A read that was
  // not (the program read it itself) releases the write it feeds.
  void ReadConsumed(const VisitSlot* read, bool full);

  // The frontier is at `write`'s visit: a write still held is released.
  void FrontierReached(VisitSlot* write);

  // The program's call of `write`'s visit returned; `full` says whether it
  // transferred the whole length.  Not full stops the pipeline.
  void FrontierFinished(const VisitSlot* write, bool full);

  // Releases every held write (kPassed) and forgets the sent ones, which
  // the runner drains as any other early request.  The pipeline stays
  // open.
  void Clear();

  // Writes handed to the engine since construction.
  uint64_t writes_sent() const { return writes_sent_; }

 private:
  enum class EntryState : unsigned char {
    kHeld,      // waiting for its read and for the writes before it
    kSent,      // handed to the engine
    kReleased,  // the program makes it itself
  };
  struct Entry {
    VisitSlot* read;
    VisitSlot* write;
    EntryState state;
    bool read_consumed;  // the frontier passed the read (read_full then says how)
    bool read_full;
  };

  Entry& At(unsigned index) { return entries_[(front_ + index) % capacity_]; }
  // Whether `entry`'s read finished with its full length; false with
  // *failed set when it never will.
  bool ReadSettled(const Entry& entry, bool* failed) const;
  void Release(Entry& entry);
  // Releases every entry still held (the program makes those writes).
  void ReleaseHeld();
  void Stop();

  Engine* const engine_;
  const unsigned capacity_;
  std::unique_ptr<Entry[]> entries_;
  unsigned front_ = 0;  // index of the oldest entry
  unsigned count_ = 0;
  bool stopped_ = false;
  uint64_t writes_sent_ = 0;
};

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_WRITE_PIPELINE_H_
