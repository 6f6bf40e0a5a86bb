/*
 * readahead_by_hand.c: the demo's reference (examples/demo.py), what a
 * programmer would add by hand to get the program's reads through the page
 * cache in parallel, with no foreactor: the program's objects unchanged,
 * linked with -Wl,--wrap=read_blocks,--wrap=pread.
 *
 * __wrap_read_blocks() notes the offsets the loop will read, asks the
 * kernel with readahead(2) to start reading the first READ_AHEAD_WINDOW
 * blocks, and runs the loop.  Each pread of the loop then first starts the
 * block READ_AHEAD_WINDOW reads further on, so that up to that many device
 * reads are in flight while the loop copies and checksums: the path
 * foreactor's cold reads take, without a graph, probes or a runtime.  The
 * hints change nothing the loop returns.  Single-threaded, as the program.
 */
#define _GNU_SOURCE

#include <fcntl.h>
#include <sys/types.h>

#include "read_blocks.h"

/* Reads started ahead of the one the loop makes. */
#define READ_AHEAD_WINDOW 64

uint64_t __real_read_blocks(int fd, const uint64_t *offsets, size_t count, char *buffer);
uint64_t __wrap_read_blocks(int fd, const uint64_t *offsets, size_t count, char *buffer);
ssize_t __real_pread(int fd, void *buffer, size_t length, off_t offset);
ssize_t __wrap_pread(int fd, void *buffer, size_t length, off_t offset);

/* The loop running now: its descriptor and offsets, and how many of its
 * preads were made.  `offsets` is NULL outside read_blocks(). */
static int loop_fd = -1;
static const uint64_t *loop_offsets = NULL;
static size_t loop_count = 0;
static size_t loop_reads = 0;

/* Asks the kernel to start reading the loop's block `index`, if any. */
static void start_reading(size_t index) {
  if (index < loop_count) (void)readahead(loop_fd, (off64_t)loop_offsets[index], BLOCK_SIZE);
}

uint64_t __wrap_read_blocks(int fd, const uint64_t *offsets, size_t count, char *buffer) {
  loop_fd = fd;
  loop_offsets = offsets;
  loop_count = count;
  loop_reads = 0;
  for (size_t i = 0; i < READ_AHEAD_WINDOW; i++) start_reading(i);
  uint64_t checksum = __real_read_blocks(fd, offsets, count, buffer);
  loop_offsets = NULL;
  return checksum;
}

ssize_t __wrap_pread(int fd, void *buffer, size_t length, off_t offset) {
  if (loop_offsets != NULL && fd == loop_fd) start_reading(loop_reads++ + READ_AHEAD_WINDOW);
  return __real_pread(fd, buffer, length, offset);
}
