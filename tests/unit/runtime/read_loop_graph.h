// read_loop_graph.h: the graph of a loop of block reads, for the runtime's
// unit tests that need a plugin's plainest graph.
#ifndef FOREACTOR_TESTS_UNIT_RUNTIME_READ_LOOP_GRAPH_H_
#define FOREACTOR_TESTS_UNIT_RUNTIME_READ_LOOP_GRAPH_H_

#include <cstdint>

#include "foreactor/foreactor.hpp"

namespace foreactor {

// What a scope of the read loop reads: `count` blocks of `block_bytes`
// bytes of `fd`, block i at offset i * block_bytes.
struct ReadLoopState {
  int fd;
  uint64_t count;
  uint64_t block_bytes;
};

// start -> read_block (block i at visit i) -> more? -> read_block | end
inline plugin::Graph<ReadLoopState> BuildReadLoop(const char* name) {
  GraphBuilder<ReadLoopState> builder(name);
  auto read =
      builder.Syscall("read_block", FOREACTOR_CALL_PREAD,
                      [](ReadLoopState& state, const Visit& visit, foreactor_call& call) {
                        call = Pread(state.fd, state.block_bytes,
                                     static_cast<int64_t>(visit.iteration(0) * state.block_bytes));
                        return FOREACTOR_READY;
                      });
  auto more = builder.Branch("more", [](ReadLoopState& state, const Visit& visit) {
    return visit.iteration(0) + 1 < state.count ? 0 : 1;
  });
  builder.start().Then(read).Then(more);
  more.Children({read, builder.end()});
  return builder.Build();
}

}  // namespace foreactor

#endif  // FOREACTOR_TESTS_UNIT_RUNTIME_READ_LOOP_GRAPH_H_
