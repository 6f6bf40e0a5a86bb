/*
 * random_read: reads COUNT random blocks of FILE, one after the other, and
 * prints a checksum of the bytes and how long the reads took.
 *
 *   random_read FILE COUNT SEED
 *
 * Output, one "name value" pair per line:
 *   checksum 0x0123456789abcdef
 *   elapsed_ms 123.456
 *
 * The offsets are drawn before the timed part from a PRNG seeded with SEED,
 * so the same FILE, COUNT and SEED always read the same blocks.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "read_blocks.h"

/* splitmix64: a small, well-mixed PRNG; `state` advances on every call. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static int parse_unsigned(const char *text, uint64_t *value) {
  char *end = NULL;
  errno = 0;
  unsigned long long parsed = strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-') return -1;
  *value = parsed;
  return 0;
}

static double now_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  uint64_t count = 0;
  uint64_t seed = 0;
  if (argc != 4 || parse_unsigned(argv[2], &count) != 0 || parse_unsigned(argv[3], &seed) != 0) {
    fprintf(stderr, "usage: %s FILE COUNT SEED\n", argv[0]);
    return 2;
  }

  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    perror(argv[1]);
    return 1;
  }
  struct stat file_status;
  if (fstat(fd, &file_status) != 0) {
    perror(argv[1]);
    return 1;
  }
  uint64_t block_count = (uint64_t)file_status.st_size / BLOCK_SIZE;
  if (block_count == 0) {
    fprintf(stderr, "%s: smaller than one block (%d bytes)\n", argv[1], BLOCK_SIZE);
    return 1;
  }

  uint64_t *offsets = malloc((count > 0 ? count : 1) * sizeof *offsets);
  char *buffer = malloc(BLOCK_SIZE);
  if (offsets == NULL || buffer == NULL) {
    fprintf(stderr, "%s: out of memory\n", argv[0]);
    return 1;
  }
  uint64_t random_state = seed;
  for (uint64_t i = 0; i < count; i++) {
    offsets[i] = (next_random(&random_state) % block_count) * BLOCK_SIZE;
  }

  double start_ms = now_ms();
  uint64_t checksum = read_blocks(fd, offsets, (size_t)count, buffer);
  double elapsed_ms = now_ms() - start_ms;

  printf("checksum 0x%016" PRIx64 "\n", checksum);
  printf("elapsed_ms %.3f\n", elapsed_ms);

  free(buffer);
  free(offsets);
  close(fd);
  return 0;
}
