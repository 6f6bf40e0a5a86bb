// cache_probe.c: what each way of asking "would this read come from the page
// cache?" costs on this kernel, for a region of a file that is cached and
// one that is not.
//
// Usage: cache_probe FILE REGION_BYTES PROBES
//
// FILE must hold at least 2 x REGION_BYTES bytes on a disk-backed file
// system (on tmpfs every page is always "cached").  The first region is read
// into the page cache; the second is dropped from it with
// posix_fadvise(POSIX_FADV_DONTNEED) before each way is measured, and the
// drop is repeated until cachestat(2) (or mincore(2) before Linux 6.5) finds
// none of its pages there: pages that read-ahead is still reading in cannot
// be dropped before their read ends.  A probe that misses may start read-ahead around its range, so
// the dropped region is probed at one range per MiB (REGION_BYTES / 1 MiB probes at most), in
// random order, and each range is checked to be out of the cache just before its probe.
//
// Ways, each asked about PROBES random 8 KiB ranges of the cached region and
// up to PROBES ranges of the dropped one:
//   pread           the plain read itself (cached region only): the cost to
//                   compare with, since a probe that finds the data cached
//                   is followed by this read unless the probe is the read
//   preadv2_nowait  preadv2(RWF_NOWAIT): reads the range when all of it is
//                   cached, fails with EAGAIN otherwise (and may start
//                   read-ahead I/O on the way)
//   cachestat       cachestat(2) over the range (Linux 6.5): counts its
//                   cached pages; reads nothing
//   mincore_mapped  mincore(2) over the range of a mapping of the whole file
//                   made once
//   mincore_map     mmap of the range, mincore(2), munmap: without a
//                   mapping kept
//
// Prints one line per way and region:
//   WAY REGION MEDIAN_NS CACHED_SHARE
// REGION is "cached" or "dropped"; MEDIAN_NS the median time of one probe;
// CACHED_SHARE the share of probes that answered "cached".  A way the kernel
// does not have prints "WAY REGION unsupported ERRNO_NAME".  Exits 0, or 1
// with a message on stderr when the file cannot be used or the dropped
// region stays cached for 10 s.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef __NR_cachestat
#define __NR_cachestat 451  // the same number on every architecture
#endif

enum { kRangeBytes = 8192 };
// The dropped region is probed at one range per kDroppedStrideBytes.
static const off_t kDroppedStrideBytes = 1 << 20;
// The pages of one range and the bytes of a page (set once in main, so
// that no probe's timing includes asking for the page size).
static size_t range_pages;
static size_t range_page_bytes;

// The kernel's struct cachestat_range and struct cachestat (linux/mman.h
// from Linux 6.5; older headers lack them).
struct CachestatRange {
  uint64_t offset;
  uint64_t length;
};
struct Cachestat {
  uint64_t cache;
  uint64_t dirty;
  uint64_t writeback;
  uint64_t evicted;
  uint64_t recently_evicted;
};

// One probe of [offset, offset + kRangeBytes): 1 cached, 0 not, -errno when
// the way is not available.
typedef int (*ProbeFunction)(int fd, char* mapping, off_t offset, char* buffer);

static uint64_t NowNanoseconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static int ProbePread(int fd, char* mapping, off_t offset, char* buffer) {
  (void)mapping;
  return pread(fd, buffer, kRangeBytes, offset) == kRangeBytes;
}

static int ProbePreadv2Nowait(int fd, char* mapping, off_t offset, char* buffer) {
  (void)mapping;
  struct iovec vector = {buffer, kRangeBytes};
  ssize_t done = preadv2(fd, &vector, 1, offset, RWF_NOWAIT);
  if (done < 0 && errno != EAGAIN) return -errno;
  return done == kRangeBytes;
}

static int ProbeCachestat(int fd, char* mapping, off_t offset, char* buffer) {
  (void)mapping;
  (void)buffer;
  struct CachestatRange range = {(uint64_t)offset, kRangeBytes};
  struct Cachestat status;
  if (syscall(__NR_cachestat, fd, &range, &status, 0) != 0) return -errno;
  return status.cache >= range_pages;
}

static int AllResident(const unsigned char* vector, size_t pages) {
  for (size_t i = 0; i < pages; ++i) {
    if (!(vector[i] & 1)) return 0;
  }
  return 1;
}

static int ProbeMincoreMapped(int fd, char* mapping, off_t offset, char* buffer) {
  (void)fd;
  (void)buffer;
  unsigned char vector[kRangeBytes / 4096];
  if (mincore(mapping + offset, kRangeBytes, vector) != 0) return -errno;
  return AllResident(vector, range_pages);
}

static int ProbeMincoreMap(int fd, char* mapping, off_t offset, char* buffer) {
  (void)mapping;
  (void)buffer;
  void* range = mmap(NULL, kRangeBytes, PROT_READ, MAP_SHARED, fd, offset);
  if (range == MAP_FAILED) return -errno;
  unsigned char vector[kRangeBytes / 4096];
  int result = mincore(range, kRangeBytes, vector) == 0 ? AllResident(vector, range_pages) : -errno;
  munmap(range, kRangeBytes);
  return result;
}

static int CompareNanoseconds(const void* left, const void* right) {
  uint64_t a = *(const uint64_t*)left;
  uint64_t b = *(const uint64_t*)right;
  return (a > b) - (a < b);
}

static uint64_t Gcd(uint64_t a, uint64_t b) {
  while (b != 0) {
    uint64_t rest = a % b;
    a = b;
    b = rest;
  }
  return a;
}

// xorshift64: the same offsets in every run.
static uint64_t NextRandom(uint64_t* state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

// How long DropRegion waits for reads in flight to finish.
static const int kDropWaitMilliseconds = 10000;

// 1 when any page of [offset, offset + bytes) is in the page cache, read
// or still being read in; 0 when none is; -errno when neither cachestat nor
// mincore can tell.  cachestat counts a page from the moment its read
// starts; mincore (the fallback before Linux 6.5) only once it has been
// read.  `vector` holds a byte per page of the range.
static int AnyPageInCache(int fd, char* mapping, off_t offset, off_t bytes, unsigned char* vector) {
  struct CachestatRange range = {(uint64_t)offset, (uint64_t)bytes};
  struct Cachestat status;
  if (syscall(__NR_cachestat, fd, &range, &status, 0) == 0) return status.cache > 0;
  if (mincore(mapping + offset, (size_t)bytes, vector) != 0) return -errno;
  const size_t pages = (size_t)bytes / range_page_bytes;
  for (size_t i = 0; i < pages; ++i) {
    if (vector[i] & 1) return 1;
  }
  return 0;
}

// Drops [start, start + bytes) from the page cache and waits until none of
// its pages is there.  A page still being read in (read-ahead an earlier
// probe started) is not dropped: the drop is repeated until those reads
// have finished.  Returns 0, or -1 when pages stay for
// kDropWaitMilliseconds or AnyPageInCache cannot tell.  `vector` holds a byte per page of
// the range.
static int DropRegion(int fd, char* mapping, off_t start, off_t bytes, unsigned char* vector) {
  for (int waited = 0; waited <= kDropWaitMilliseconds; waited += 10) {
    posix_fadvise(fd, start, bytes, POSIX_FADV_DONTNEED);
    int in_cache = AnyPageInCache(fd, mapping, start, bytes, vector);
    if (in_cache <= 0) return in_cache == 0 ? 0 : -1;
    usleep(10000);
  }
  return -1;
}

// Probes ranges of [region_start, region_start + region_bytes) with `probe`
// and prints its line: `probes` random ranges, or with `dropped` the region
// dropped first and one range per kDroppedStrideBytes in random order (at
// most `probes`), each range checked to be out of the page cache just before
// its probe.  `samples` holds `probes` entries; `vector` a byte per page of
// the region.  Returns 0, or -1 with a message on stderr when the region
// could not be dropped.
static int Measure(const char* way, ProbeFunction probe, int fd, char* mapping, off_t region_start,
                   off_t region_bytes, int dropped, long probes, uint64_t* samples, char* buffer,
                   unsigned char* vector) {
  const char* region = dropped ? "dropped" : "cached";
  uint64_t state = 0x9e3779b97f4a7c15u;
  const uint64_t ranges = (uint64_t)region_bytes / kRangeBytes;
  const uint64_t stride_count = (uint64_t)(region_bytes / kDroppedStrideBytes);
  long count = probes;
  uint64_t step = 0;  // dropped: the strides are visited as i * step + 1 mod stride_count
  if (dropped) {
    if ((uint64_t)count > stride_count) count = (long)stride_count;
    if (DropRegion(fd, mapping, region_start, region_bytes, vector) != 0) {
      fprintf(stderr, "cache_probe: %s: the region stays in the page cache after %d ms\n", way,
              kDropWaitMilliseconds);
      return -1;
    }
    // A step coprime with stride_count makes that a permutation.
    step = NextRandom(&state) % stride_count;
    while (stride_count > 1 && Gcd(step, stride_count) != 1) step = (step + 1) % stride_count;
  }
  long cached = 0;
  for (long i = 0; i < count; ++i) {
    off_t offset = dropped ? region_start + (off_t)(((uint64_t)i * step + 1) % stride_count) *
                                                kDroppedStrideBytes
                           : region_start + (off_t)(NextRandom(&state) % ranges) * kRangeBytes;
    // Read-ahead of an earlier probe may have reached this range.
    if (dropped && DropRegion(fd, mapping, offset, kRangeBytes, vector) != 0) {
      fprintf(stderr, "cache_probe: %s: a range stays in the page cache after %d ms\n", way,
              kDropWaitMilliseconds);
      return -1;
    }
    uint64_t start = NowNanoseconds();
    int answer = probe(fd, mapping, offset, buffer);
    samples[i] = NowNanoseconds() - start;
    if (answer < 0) {
      printf("%s %s unsupported %s\n", way, region, strerrorname_np(-answer));
      return 0;
    }
    cached += answer;
  }
  qsort(samples, (size_t)count, sizeof samples[0], CompareNanoseconds);
  printf("%s %s %llu %.3f\n", way, region, (unsigned long long)samples[count / 2],
         (double)cached / (double)count);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: cache_probe FILE REGION_BYTES PROBES\n");
    return 1;
  }
  const off_t region_bytes = (off_t)strtoll(argv[2], NULL, 10) / kRangeBytes * kRangeBytes;
  const long probes = strtol(argv[3], NULL, 10);
  if (region_bytes <= 0 || probes <= 0) {
    fprintf(stderr, "cache_probe: REGION_BYTES and PROBES must be positive\n");
    return 1;
  }
  if (region_bytes < kDroppedStrideBytes) {
    fprintf(stderr, "cache_probe: REGION_BYTES must be at least 1 MiB\n");
    return 1;
  }
  const size_t page_bytes = (size_t)sysconf(_SC_PAGESIZE);
  if (page_bytes < 4096 || page_bytes > kRangeBytes) {
    fprintf(stderr, "cache_probe: pages of %zu bytes are not supported\n", page_bytes);
    return 1;
  }
  range_pages = kRangeBytes / page_bytes;
  range_page_bytes = page_bytes;
  int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  struct stat status;
  if (fd < 0 || fstat(fd, &status) != 0) {
    fprintf(stderr, "cache_probe: %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  if (status.st_size < 2 * region_bytes) {
    fprintf(stderr, "cache_probe: %s holds %lld bytes, fewer than 2 x %lld\n", argv[1],
            (long long)status.st_size, (long long)region_bytes);
    return 1;
  }
  char* mapping = mmap(NULL, (size_t)(2 * region_bytes), PROT_READ, MAP_SHARED, fd, 0);
  uint64_t* samples = calloc((size_t)probes, sizeof *samples);
  char* buffer = aligned_alloc(4096, kRangeBytes);
  unsigned char* vector = malloc((size_t)region_bytes / page_bytes);
  if (mapping == MAP_FAILED || samples == NULL || buffer == NULL || vector == NULL) {
    fprintf(stderr, "cache_probe: out of memory\n");
    return 1;
  }
  // The cached region: read once, through the file (not the mapping, so
  // that mincore sees what the other ways see).
  for (off_t offset = 0; offset < region_bytes; offset += kRangeBytes) {
    if (pread(fd, buffer, kRangeBytes, offset) != kRangeBytes) {
      fprintf(stderr, "cache_probe: reading %s: %s\n", argv[1], strerror(errno));
      return 1;
    }
  }

  const struct {
    const char* name;
    ProbeFunction probe;
    int cached_region_only;
  } ways[] = {
      {"pread", ProbePread, 1},
      {"preadv2_nowait", ProbePreadv2Nowait, 0},
      {"cachestat", ProbeCachestat, 0},
      {"mincore_mapped", ProbeMincoreMapped, 0},
      {"mincore_map", ProbeMincoreMap, 0},
  };
  int status_code = 0;
  for (size_t i = 0; i < sizeof ways / sizeof ways[0] && status_code == 0; ++i) {
    status_code = Measure(ways[i].name, ways[i].probe, fd, mapping, 0, region_bytes, 0, probes,
                          samples, buffer, vector);
    if (status_code == 0 && !ways[i].cached_region_only) {
      status_code = Measure(ways[i].name, ways[i].probe, fd, mapping, region_bytes, region_bytes, 1,
                            probes, samples, buffer, vector);
    }
  }
  free(vector);
  free(buffer);
  free(samples);
  munmap(mapping, (size_t)(2 * region_bytes));
  close(fd);
  return status_code == 0 ? 0 : 1;
}
