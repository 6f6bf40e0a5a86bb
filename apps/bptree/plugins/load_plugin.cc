// load_plugin.cc: the foreaction graph of the B+-tree bulk load.
//
// The bulk load fills its leaves in memory and writes them in
// bptree_write_leaves(), one pwrite per page.  Linked with
// -Wl,--wrap=bptree_write_leaves, this file puts a scope around that loop.
//
//   start -> write_leaf (pwrite of page first + i) -> more_pages? -> write_leaf | end
//
// Writes have side effects, so foreactor issues them early only because no
// edge here is weak: the loop writes every page.  (Should a pwrite fail, the
// plain program stops there while pages after it may already have been
// written early; the load reports the same error either way, and in both
// cases the file is not a valid tree.)
//
// The leaves are output the load makes durable: its user fsyncs the file
// (the benchmark does, right after the tool exits).  So write_leaf declares
// write-behind: the runtime starts write-back of each finished stretch of
// leaves off the program's thread, and the device works while the load
// still fills pages, instead of only once the fsync comes.  Issuing the
// buffered pwrites themselves early gains little: the program never waits
// for a buffered write.
#include "foreactor/foreactor.hpp"
#include "leaf_io.h"

namespace {

struct LoadState {
  int fd;
  uint64_t first_page;
  const char* pages;
  size_t page_count;
};

const foreactor::Graph<LoadState> load_graph = [] {
  foreactor::GraphBuilder<LoadState> builder("bptree_load");
  auto write_leaf = builder.Syscall(
      "write_leaf", FOREACTOR_CALL_PWRITE,
      [](LoadState& load, const foreactor::Visit& visit, foreactor_call& call) {
        const uint64_t i = visit.iteration(0);
        call = foreactor::Pwrite(load.fd, load.pages + i * BPTREE_PAGE_SIZE, BPTREE_PAGE_SIZE,
                                 static_cast<int64_t>((load.first_page + i) * BPTREE_PAGE_SIZE));
        return FOREACTOR_READY;
      });
  auto more_pages =
      builder.Branch("more_pages", [](LoadState& load, const foreactor::Visit& visit) {
        return visit.iteration(0) + 1 < load.page_count ? 0 : 1;
      });
  write_leaf.WriteBehind();
  builder.start().Then(write_leaf).Then(more_pages);
  more_pages.Children({write_leaf, builder.end()});
  return builder.Build();
}();

}  // namespace

extern "C" int __real_bptree_write_leaves(int fd, uint64_t first_page, const void* pages,
                                          size_t page_count);

extern "C" int __wrap_bptree_write_leaves(int fd, uint64_t first_page, const void* pages,
                                          size_t page_count) {
  if (page_count == 0) return __real_bptree_write_leaves(fd, first_page, pages, 0);
  LoadState load{fd, first_page, static_cast<const char*>(pages), page_count};
  foreactor::Scope scope(load_graph, load);
  return __real_bptree_write_leaves(fd, first_page, pages, page_count);
}
