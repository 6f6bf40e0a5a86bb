/*
 * read_blocks.c: the serial read loop, in a file of its own so that the
 * linker can redirect calls to it from main (random_read.c).
 */
#define _XOPEN_SOURCE 700

#include "read_blocks.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* 64-bit FNV-1a constants, applied to 8-byte words instead of bytes. */
static const uint64_t kChecksumStart = 0xcbf29ce484222325u;
static const uint64_t kChecksumPrime = 0x100000001b3u;

static uint64_t checksum_add(uint64_t checksum, const char *bytes, size_t length) {
  size_t i = 0;
  for (; i + sizeof(uint64_t) <= length; i += sizeof(uint64_t)) {
    uint64_t word;
    memcpy(&word, bytes + i, sizeof word);
    checksum = (checksum ^ word) * kChecksumPrime;
  }
  for (; i < length; i++) {
    checksum = (checksum ^ (unsigned char)bytes[i]) * kChecksumPrime;
  }
  return checksum;
}

uint64_t read_blocks(int fd, const uint64_t *offsets, size_t count, char *buffer) {
  uint64_t checksum = kChecksumStart;
  for (size_t i = 0; i < count; i++) {
    ssize_t got = pread(fd, buffer, BLOCK_SIZE, (off_t)offsets[i]);
    if (got < 0) {
      perror("read_blocks: pread");
      return checksum;
    }
    checksum = checksum_add(checksum, buffer, (size_t)got);
    if (got != BLOCK_SIZE) {
      fprintf(stderr, "read_blocks: short read at offset %llu: %zd bytes\n",
              (unsigned long long)offsets[i], got);
      return checksum;
    }
  }
  return checksum;
}
