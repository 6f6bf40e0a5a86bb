// engine_options.h: which engine a graph's scopes use and how it is sized.
// Chosen by the configuration (src/config/), obeyed by the engines
// (src/engine/), which is why it lives below both.
#ifndef FOREACTOR_BASE_ENGINE_OPTIONS_H_
#define FOREACTOR_BASE_ENGINE_OPTIONS_H_

namespace foreactor {

// Which engine a thread uses.
enum class EngineKind { kIoUring, kThreads, kSync };

struct EngineOptions {
  EngineKind kind = EngineKind::kIoUring;
  unsigned queue_size = 256;    // io_uring SQ entries; thread pool batch bound
  unsigned workers = 0;         // thread pool workers (0: default); io-wq bound
  bool io_uring_async = false;  // IOSQE_ASYNC on every io_uring request
};

}  // namespace foreactor

#endif  // FOREACTOR_BASE_ENGINE_OPTIONS_H_
