// scan_plugin.cc: the foreaction graph of the B+-tree range scan.
//
// The scan gathers its candidate leaf pages from the last inner level and
// then reads them one by one in bptree_read_leaves().  Linked with
// -Wl,--wrap=bptree_read_leaves, this file puts a scope around that loop;
// the graph tells foreactor which page the program will read next, so up to
// `depth` leaf reads are on the device at once.
//
//   start -> read_leaf (pread of leaf i) --weak--> more_leaves? -> read_leaf | end
//
// The edge after each read is weak: an I/O error or a corrupt page ends the
// loop early, and reads issued beyond it are simply never used.
#include "foreactor/foreactor.hpp"
#include "leaf_io.h"

namespace {

struct ScanState {
  int fd;
  const uint64_t* leaf_pages;
  size_t leaf_count;
};

const foreactor::Graph<ScanState> scan_graph = [] {
  foreactor::GraphBuilder<ScanState> builder("bptree_scan");
  auto read_leaf =
      builder.Syscall("read_leaf", FOREACTOR_CALL_PREAD,
                      [](ScanState& scan, const foreactor::Visit& visit, foreactor_call& call) {
                        const uint64_t page = scan.leaf_pages[visit.iteration(0)];
                        call = foreactor::Pread(scan.fd, BPTREE_PAGE_SIZE,
                                                static_cast<int64_t>(page * BPTREE_PAGE_SIZE));
                        return FOREACTOR_READY;
                      });
  auto more_leaves =
      builder.Branch("more_leaves", [](ScanState& scan, const foreactor::Visit& visit) {
        return visit.iteration(0) + 1 < scan.leaf_count ? 0 : 1;
      });
  builder.start().Then(read_leaf).Then(more_leaves, foreactor::kWeak);
  more_leaves.Children({read_leaf, builder.end()});
  return builder.Build();
}();

}  // namespace

extern "C" int64_t __real_bptree_read_leaves(int fd, const uint64_t* leaf_pages, size_t leaf_count,
                                             uint64_t low, uint64_t high, bptree_pair* out,
                                             size_t out_capacity);

extern "C" int64_t __wrap_bptree_read_leaves(int fd, const uint64_t* leaf_pages, size_t leaf_count,
                                             uint64_t low, uint64_t high, bptree_pair* out,
                                             size_t out_capacity) {
  if (leaf_count == 0)
    return __real_bptree_read_leaves(fd, leaf_pages, 0, low, high, out, out_capacity);
  ScanState scan{fd, leaf_pages, leaf_count};
  foreactor::Scope scope(scan_graph, scan);
  return __real_bptree_read_leaves(fd, leaf_pages, leaf_count, low, high, out, out_capacity);
}
