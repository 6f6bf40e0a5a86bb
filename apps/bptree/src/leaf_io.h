/* The two loops of leaf-page I/O of the bptree library, with C linkage.
 *
 * Each function is alone in its source file (read_leaves.cc,
 * write_leaves.cc) and takes as arguments everything it uses, so that a
 * plugin can take it over at link time with GNU ld
 *   -Wl,--wrap=bptree_read_leaves   or   -Wl,--wrap=bptree_write_leaves
 * and call the original as __real_bptree_read_leaves / ..._write_leaves.
 *
 * Page N of the file is the 8192 bytes at offset N * 8192 (the layout of a
 * leaf page is in page_format.h).
 */

#ifndef BPTREE_LEAF_IO_H_
#define BPTREE_LEAF_IO_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BPTREE_PAGE_SIZE 8192

typedef struct bptree_pair {
  uint64_t key;
  uint64_t value;
} bptree_pair;

/* The serial loop of a range scan.
 *
 * For i = 0, 1, ..., leaf_count - 1, in this order, reads leaf page
 * leaf_pages[i] with exactly one
 *   pread(fd, buffer, BPTREE_PAGE_SIZE, leaf_pages[i] * BPTREE_PAGE_SIZE)
 * (a call is repeated only after EINTR, and a short read is continued with
 * further preads for the rest of the page), and appends to out[] the pairs
 * of that leaf whose key lies in [low, high], in the leaf's order.  Every
 * listed page is read, with no early exit, unless an error stops the loop.
 * It makes no other system call and allocates no memory.
 *
 * Returns the number of pairs stored in out[0 .. return), or -1 with errno:
 *   the pread error;
 *   EBADMSG   a page ends beyond the end of the file, is not a leaf, or
 *             claims more than 510 keys;
 *   ENOBUFS   more than out_capacity pairs would be stored;
 *   EINVAL    a page number is so large that its offset overflows.
 * On error out[] holds an unspecified prefix.  The caller must pass leaf
 * pages in key order for the result to be in key order.
 */
int64_t bptree_read_leaves(int fd, const uint64_t* leaf_pages, size_t leaf_count, uint64_t low,
                           uint64_t high, bptree_pair* out, size_t out_capacity);

/* The serial loop of a bulk load.
 *
 * `pages` holds page_count complete pages, back to back
 * (page_count * BPTREE_PAGE_SIZE bytes).  For i = 0, 1, ..., page_count - 1,
 * in this order, writes pages + i * BPTREE_PAGE_SIZE as page first_page + i
 * with exactly one
 *   pwrite(fd, pages + i * BPTREE_PAGE_SIZE, BPTREE_PAGE_SIZE,
 *          (first_page + i) * BPTREE_PAGE_SIZE)
 * (repeated only after EINTR; a short write is continued with further
 * pwrites for the rest of the page).  It makes no other system call.
 *
 * Returns 0, or -1 with errno: the pwrite error, EIO if pwrite wrote
 * nothing, EINVAL if an offset would overflow.  Pages before the failing one
 * have been written.
 */
int bptree_write_leaves(int fd, uint64_t first_page, const void* pages, size_t page_count);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BPTREE_LEAF_IO_H_ */
