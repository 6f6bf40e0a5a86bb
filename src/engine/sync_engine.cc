#include "engine/sync_engine.h"

namespace foreactor {

bool SyncEngine::Supports(foreactor_call_type) const { return false; }

bool SyncEngine::Prepare(Request*) { return false; }

void SyncEngine::Wait(Request*) {}

void SyncEngine::Cancel(Request*) {}

}  // namespace foreactor
