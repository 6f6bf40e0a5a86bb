// early_request.h: the request an engine runs for a visit issued early,
// and what its result means (DESIGN §3).
//
// The engine runs the positional form of the predicted call (IssuedType)
// on the visit slot's own buffer, never on the program's: a read's bytes
// land in the slot and are copied into the program's buffer when the
// program makes the call (DeliverResult, call_matching.h); a write's bytes
// are copied from the plugin's buffer or iovecs when the request is made,
// and the program's call is served only when its bytes are the same then.
// A write that follows a linked read with no buffer of its own writes
// what the read produced (the runner points it at the read's buffer).  A
// getdents64 records the directory position before it, so that a result
// thrown away can put the position back.
#ifndef FOREACTOR_RUNTIME_EARLY_REQUEST_H_
#define FOREACTOR_RUNTIME_EARLY_REQUEST_H_

#include "base/call_types.h"
#include "engine/request.h"
#include "foreactor/foreactor.h"
#include "runtime/visit_slot.h"

namespace foreactor {

// The call type an engine runs for a predicted call: calls with an implicit
// offset become their positional forms, vector reads become one read into
// the slot's buffer, vector writes one write from it.
foreactor_call_type IssuedType(foreactor_call_type type);

// Fills slot.request from slot.predicted as described above; the request's
// link to a successor is left empty.  Returns false, with the slot's
// request not to be used, when a buffer cannot be allocated or the
// directory position of a getdents64 cannot be read.
bool PrepareEarlyRequest(VisitSlot& slot);

// True when `call` writes what the linked read before it produces: a
// write (not vectored) the plugin gave no buffer.  Any other call after a
// linked read, a read among them, has buffers of its own.
inline bool WritesLinkedReadsBytes(const foreactor_call& call) {
  const CallTypeInfo& info = InfoOf(call.type);
  return info.writes_data && !info.vectored && call.buffer == nullptr;
}

// True when the early request ran the call (as opposed to being cancelled,
// cut off by a short linked predecessor, or failed by the engine).
inline bool Executed(const Request& request) { return request.result != -ECANCELED; }

// True when an early result may be handed to the program as its own.  An
// early open that found no free descriptor says nothing about the program's
// open, which runs later with other descriptors open and closed.
bool Deliverable(const Request& request);

}  // namespace foreactor

#endif  // FOREACTOR_RUNTIME_EARLY_REQUEST_H_
