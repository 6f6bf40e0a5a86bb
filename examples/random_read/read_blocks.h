/*
 * read_blocks.h: the function of the example program that foreactor
 * accelerates.  It is an ordinary serial loop; nothing here knows about
 * foreactor.
 */
#ifndef RANDOM_READ_READ_BLOCKS_H_
#define RANDOM_READ_READ_BLOCKS_H_

#include <stddef.h>
#include <stdint.h>

/* Size of one block: every read is one block at a block-aligned offset. */
#define BLOCK_SIZE 8192

/*
 * Reads `count` blocks of `fd`, block i at `offsets[i]`, one pread after the
 * other, into `buffer` (BLOCK_SIZE bytes, reused for every block), and
 * returns a checksum of every byte read, in order.  Stops at the first read
 * that fails or comes back short, says so on stderr, and returns the
 * checksum of what it read until then.
 */
uint64_t read_blocks(int fd, const uint64_t *offsets, size_t count, char *buffer);

#endif /* RANDOM_READ_READ_BLOCKS_H_ */
