// leaf_loops_link_order.cc: keeps the tree's leaf loops where the plain
// program has them.
//
// Linked after bptree_storage and before the plugins, this object's
// references pull read_leaves.o and write_leaves.o from the archive that
// follows it, as the plain program's calls pull them (last, in a second
// scan of bptree_storage).  Without it, once --wrap sends the tree's calls
// to the plugins, only the plugins' __real_ calls would pull the two files,
// and they would land after the plugins' code.  It holds no code.
#include "leaf_io.h"

extern "C" {
extern decltype(bptree_read_leaves) __real_bptree_read_leaves;
extern decltype(bptree_write_leaves) __real_bptree_write_leaves;
}

[[gnu::used]] void* const leaf_loops_link_order[] = {
    reinterpret_cast<void*>(&__real_bptree_read_leaves),
    reinterpret_cast<void*>(&__real_bptree_write_leaves)};
