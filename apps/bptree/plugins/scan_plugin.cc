// scan_plugin.cc: the foreaction graph of the B+-tree range scan.
//
// Tree::Scan gathers its candidate leaf pages from the inner levels, sets
// up its result buffer, and then reads the leaves one by one in
// bptree_read_leaves().  Linked with
//   -Wl,--wrap=bptree_read_leaves
//   -Wl,--wrap=_ZN6bptree4Tree4ScanEmmPSt6vectorI11bptree_pairSaIS2_EEPd   (Tree::Scan)
//   -Wl,--wrap=_ZNK6bptree5Pager8ReadPageEmPNS_4PageE                       (Pager::ReadPage)
// this file puts a scope around the whole scan; the graph tells foreactor
// which page the program will read next, so up to `depth` leaf reads are on
// the device at once.
//
//   start --weak--> leaves_known? -> read_leaf (pread of leaf i) --weak--> more_leaves?
//                        |                                       more_leaves? -> read_leaf | end
//                        +-> end (no leaves)
//
// leaves_known? answers not-yet while the tree still walks its inner
// levels: the frontier waits there and the inner reads pass through.  A
// LeafPlanner follows that walk through the pages Pager::ReadPage returns;
// once the last inner page is in, the list of leaves is known, and the
// plugin says so with foreactor_scope_look_ahead(): the leaves are read
// ahead while the tree zero-fills its result buffer (a third of a cold scan
// of a bulk-loaded tree), not only once its leaf loop starts.  The list the
// tree hands to bptree_read_leaves() then replaces the planned one.  Where
// the plan fails (the tree found inner pages in its own cache and read
// fewer), the graph learns the leaves at bptree_read_leaves(), as a graph
// of the leaf loop alone does, and the plugin looks ahead there.
//
// The edges into the loop and after each read are weak: an I/O error or a
// corrupt page ends the scan early, and reads issued beyond it are simply
// never used.
#include <optional>
#include <vector>

#include "foreactor/foreactor.hpp"
#include "leaf_io.h"
#include "leaf_planner.h"
#include "pager.h"
#include "status.h"
#include "tree.h"

namespace {

struct ScanState {
  int fd = -1;
  const uint64_t* leaf_pages = nullptr;
  size_t leaf_count = 0;
  bool leaves_known = false;
  // Inside Tree::Scan: the walk of its inner levels (empty for a scope of
  // bptree_read_leaves() alone).
  std::optional<bptree_plugin::LeafPlanner> planner;
  // The plugin told the runtime that the leaves are known
  // (foreactor_scope_look_ahead()).
  bool looked_ahead = false;

  // The scan reads `leaf_count` leaves `leaf_pages` of `fd`: leaves_known?
  // now leads into the loop.
  void KnowLeaves(int leaf_fd, const uint64_t* pages, size_t count) {
    fd = leaf_fd;
    leaf_pages = pages;
    leaf_count = count;
    leaves_known = true;
  }
};

const foreactor::Graph<ScanState> scan_graph = [] {
  foreactor::GraphBuilder<ScanState> builder("bptree_scan");
  auto leaves_known = builder.Branch("leaves_known", [](ScanState& scan, const foreactor::Visit&) {
    if (!scan.leaves_known) return FOREACTOR_CHOICE_NOT_YET;
    return scan.leaf_count > 0 ? 0 : 1;
  });
  auto read_leaf =
      builder.Syscall("read_leaf", FOREACTOR_CALL_PREAD,
                      [](ScanState& scan, const foreactor::Visit& visit, foreactor_call& call) {
                        const uint64_t page = scan.leaf_pages[visit.iteration(0)];
                        call = foreactor::Pread(scan.fd, BPTREE_PAGE_SIZE,
                                                static_cast<int64_t>(page * BPTREE_PAGE_SIZE));
                        return FOREACTOR_READY;
                      });
  // The loop runs once per leaf: with the count, the runtime can tell a
  // short scan from a long one without asking about each leaf.
  auto more_leaves = builder.Branch(
      "more_leaves",
      [](ScanState& scan, const foreactor::Visit& visit) {
        return visit.iteration(0) + 1 < scan.leaf_count ? 0 : 1;
      },
      [](ScanState& scan, const foreactor::Visit&) {
        return static_cast<int64_t>(scan.leaf_count);
      });
  // Nothing moves before the leaves are known, and the plugin then always
  // looks ahead: the runtime follows a scan from there (a short one in file
  // order it leaves with nothing set up).
  builder.FollowFromLookAhead();
  builder.start().Then(leaves_known, foreactor::kWeak);
  leaves_known.Children({{read_leaf, foreactor::kWeak}, builder.end()});
  read_leaf.Then(more_leaves, foreactor::kWeak);
  more_leaves.Children({read_leaf, builder.end()});
  return builder.Build();
}();

// The state of the Tree::Scan scope open on this thread, if any.
thread_local ScanState* tree_scan = nullptr;

// The leaves of `scan`'s scope are known: the runtime may read them ahead
// (or leave them to the page cache) before the leaf loop starts.
void LookAhead(ScanState* scan) {
  scan->looked_ahead = true;
  scan_graph.LookAhead();
}

}  // namespace

extern "C" int64_t __real_bptree_read_leaves(int fd, const uint64_t* leaf_pages, size_t leaf_count,
                                             uint64_t low, uint64_t high, bptree_pair* out,
                                             size_t out_capacity);

extern "C" int64_t __wrap_bptree_read_leaves(int fd, const uint64_t* leaf_pages, size_t leaf_count,
                                             uint64_t low, uint64_t high, bptree_pair* out,
                                             size_t out_capacity) {
  if (tree_scan != nullptr) {
    // Inside Tree::Scan's scope: the tree's own list replaces the plan.
    tree_scan->KnowLeaves(fd, leaf_pages, leaf_count);
    tree_scan->planner.reset();
    // Where the plan failed (a later scan of the process finds the inner
    // pages in the tree's own cache), the runtime learns the leaves here:
    // told so, it may leave a short run in file order to the page cache, as
    // at the first scan, rather than follow each of its reads.
    if (!tree_scan->looked_ahead) LookAhead(tree_scan);
    return __real_bptree_read_leaves(fd, leaf_pages, leaf_count, low, high, out, out_capacity);
  }
  if (leaf_count == 0)
    return __real_bptree_read_leaves(fd, leaf_pages, 0, low, high, out, out_capacity);
  ScanState scan;
  scan.KnowLeaves(fd, leaf_pages, leaf_count);
  foreactor::Scope scope(scan_graph, scan);
  LookAhead(&scan);
  return __real_bptree_read_leaves(fd, leaf_pages, leaf_count, low, high, out, out_capacity);
}

// Pager::ReadPage(uint64_t, Page*) const, under its mangled name.
extern "C" bptree::Status __real__ZNK6bptree5Pager8ReadPageEmPNS_4PageE(const bptree::Pager* pager,
                                                                        uint64_t page_number,
                                                                        bptree::Page* page);

extern "C" bptree::Status __wrap__ZNK6bptree5Pager8ReadPageEmPNS_4PageE(const bptree::Pager* pager,
                                                                        uint64_t page_number,
                                                                        bptree::Page* page) {
  bptree::Status status = __real__ZNK6bptree5Pager8ReadPageEmPNS_4PageE(pager, page_number, page);
  ScanState* scan = tree_scan;
  if (scan == nullptr || !status.ok() || !scan->planner.has_value() ||
      !scan->planner->InnerPageRead(page_number, *page)) {
    return status;
  }
  // The last inner page of the walk: the leaves are known.
  scan->KnowLeaves(pager->fd(), scan->planner->leaves().data(), scan->planner->leaves().size());
  LookAhead(scan);
  return status;
}

// Tree::Scan(uint64_t, uint64_t, std::vector<bptree_pair>*, double*), under
// its mangled name.
extern "C" bptree::Status __real__ZN6bptree4Tree4ScanEmmPSt6vectorI11bptree_pairSaIS2_EEPd(
    bptree::Tree* tree, uint64_t low, uint64_t high, std::vector<bptree_pair>* pairs,
    double* leaf_loop_ms);

extern "C" bptree::Status __wrap__ZN6bptree4Tree4ScanEmmPSt6vectorI11bptree_pairSaIS2_EEPd(
    bptree::Tree* tree, uint64_t low, uint64_t high, std::vector<bptree_pair>* pairs,
    double* leaf_loop_ms) {
  // Nothing to plan when no scope would speculate (bptree_read_leaves()
  // still opens its own, so that the runtime's state can move on), or
  // inside another scan.
  if (tree_scan != nullptr || low > high ||
      scan_graph.ScopeSpeculation() == FOREACTOR_SPECULATION_NONE) {
    return __real__ZN6bptree4Tree4ScanEmmPSt6vectorI11bptree_pairSaIS2_EEPd(tree, low, high, pairs,
                                                                            leaf_loop_ms);
  }
  const bptree::TreeMeta& meta = tree->meta();
  ScanState scan;
  scan.planner.emplace(meta.root_page, meta.height, low, high);
  tree_scan = &scan;
  struct Restore {
    ~Restore() { tree_scan = nullptr; }
  } restore;
  foreactor::Scope scope(scan_graph, scan);
  return __real__ZN6bptree4Tree4ScanEmmPSt6vectorI11bptree_pairSaIS2_EEPd(tree, low, high, pairs,
                                                                          leaf_loop_ms);
}
