// random_read_plugin.cc: the foreactor plugin of the example program.
//
// Attached at link time, with no change to the program: -Wl,--wrap=read_blocks
// sends the program's calls of read_blocks() to __wrap_read_blocks() below,
// which runs the original, __real_read_blocks(), inside a scope of this
// graph of its loop:
//
//   start -> pread "read_block" -> branch "more" --0--> read_block (next block)
//                                                \--1--> end
//
// Visit i of read_block is the pread of block i, at offsets[i].
#include <cstddef>
#include <cstdint>

#include "foreactor/foreactor.hpp"

extern "C" {
#include "read_blocks.h"

uint64_t __real_read_blocks(int fd, const uint64_t* offsets, size_t count, char* buffer);
uint64_t __wrap_read_blocks(int fd, const uint64_t* offsets, size_t count, char* buffer);
}

namespace {

// The arguments of one call of read_blocks, which the callbacks read.
struct ReadBlocksCall {
  int fd;
  const uint64_t* offsets;
  size_t count;
};

foreactor::Graph<ReadBlocksCall> BuildReadBlocksGraph() {
  foreactor::GraphBuilder<ReadBlocksCall> builder("random_read");
  auto read_block = builder.Syscall(
      "read_block", FOREACTOR_CALL_PREAD,
      [](ReadBlocksCall& call, const foreactor::Visit& visit, foreactor_call& arguments) {
        const uint64_t block = visit.iteration(0);
        if (block >= call.count) return FOREACTOR_NEVER;  // only when count is 0
        arguments =
            foreactor::Pread(call.fd, BLOCK_SIZE, static_cast<int64_t>(call.offsets[block]));
        return FOREACTOR_READY;
      });
  auto more = builder.Branch("more", [](ReadBlocksCall& call, const foreactor::Visit& visit) {
    return visit.iteration(0) + 1 < call.count ? 0 : 1;
  });
  // read_blocks returns right after a failed or short read: a weak edge.
  builder.start().Then(read_block).Then(more, foreactor::kWeak);
  more.Children({read_block, builder.end()});
  return builder.Build();
}

}  // namespace

uint64_t __wrap_read_blocks(int fd, const uint64_t* offsets, size_t count, char* buffer) {
  static const foreactor::Graph<ReadBlocksCall> graph = BuildReadBlocksGraph();
  ReadBlocksCall call{fd, offsets, count};
  foreactor::Scope scope(graph, call);
  return __real_read_blocks(fd, offsets, count, buffer);
}
