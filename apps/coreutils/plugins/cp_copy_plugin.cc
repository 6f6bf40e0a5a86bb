// cp_copy_plugin.cc: the foreaction graph of cp's data copy loop, attached to
// an unmodified cp at link time with
//
//   -Wl,--wrap=copy (cp_copy_attach.c)  -Wl,--wrap=fdadvise
//   -Wl,--wrap=xalignalloc -Wl,--wrap=full_write -Wl,--wrap=close
//
// With --reflink=never --sparse=never (cp_copy_attach.c checks the options
// of each copy() call), cp copies a regular file that has no holes (as
// copy.c's infer_scantype() decides: st_blocks not below st_size / 512) in
// copy.c's sparse_copy() (static), a loop of
//
//   n = read(source, buffer, chunk);  if (n <= 0) stop;  full_write(dest, buffer, n);
//
// which reads the whole file, in order, `chunk` bytes at a time, and ends
// with the read that returns 0.  No function around that loop is visible
// to the linker, but it is bracketed by calls that are:
//  - fdadvise(source, 0, 0, FADVISE_SEQUENTIAL), once per file, just before
//    the copy: names the source descriptor (its size and whether it has
//    holes come from fstat);
//  - xalignalloc(page size, chunk), made by the loop itself right before
//    its first read: gives the chunk size.  The scope starts here;
//  - full_write(dest, ...), the loop's first write: names the destination;
//  - close(dest) / close(source), which end every copy (errors included):
//    the scope ends at the first of them.
//
// The loop's unit for the runtime's scope gate is one chunk: the gate is
// asked before the first read (in xalignalloc) and after each full write
// (in full_write), and the scope is entered or left there, so a scope
// covers the chunks from `first_chunk` on while it pays.  Sequential reads
// get the kernel's readahead, and with the page cache hot an early read
// only adds a copy: then the loop runs plain.
//
// The graph, for a file of `size` bytes read `chunk` bytes at a time:
//
//   start -> read_chunk -> write_chunk -> more_chunks? -> read_chunk | end
//
// Visit v of read_chunk is chunk i = first_chunk + v: read(source, chunk)
// at position i*chunk.  While the destination is known (from the second
// chunk on) and the chunk is expected to be full, it is linked with visit v
// of write_chunk, write(dest, <the bytes read>, chunk) at position i*chunk:
// the runtime's write pipeline then writes the chunk on a worker once the
// read completed in full and every write before it did, so reading and
// writing run on both cores.  The last, partial chunk and the final
// zero-byte read are predicted without a write (the program writes that
// chunk itself).  The edges are strong: the loop writes what it read until
// the end of the file, and a failed or short write (which ends the loop)
// stops the pipeline before any later write is sent.  The scope gate may
// still leave the scope between chunks: writes sent ahead and not yet
// reached are then made again by the program, the same bytes at the same
// place.  A file that changes size while it is copied only costs
// mispredictions.
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cp_copy_plugin.h"
#include "foreactor/foreactor.hpp"

namespace {

struct CopyState {
  int source_fd = -1;
  int dest_fd = -1;          // -1 until the loop's first write
  int64_t source_size = -1;  // from fstat when the copy was announced
  int64_t chunk = 0;
  int64_t copied = 0;        // bytes the loop has written so far
  uint64_t first_chunk = 0;  // the chunk of the open scope's visit 0
  bool announced = false;    // fdadvise seen, loop not started yet
  bool copying = false;      // in the loop (xalignalloc seen)
  bool in_scope = false;

  // Whether the read of chunk i is linked with its write: the chunk is
  // expected to be full and the destination is known.  The destination is
  // learnt at the first write, so read 0 (asked when the scope starts) is
  // never linked, and every later read is asked after the first write
  // (from a scope entered then, or after the peek head passed write 0):
  // the answer for a visit never changes.
  bool LinkedPair(uint64_t i) const {
    return i >= 1 && dest_fd >= 0 && static_cast<int64_t>(i + 1) * chunk <= source_size;
  }
};

thread_local CopyState copy_state;
thread_local int plain_loop_requested = 0;  // set by cp_copy_attach.c

// Built once and never destroyed: du and cp may exit() from inside the
// loop (a fatal error), and a graph must outlive every scope of it.
const foreactor::Graph<CopyState>& copy_graph = *new foreactor::Graph<CopyState>([] {
  foreactor::GraphBuilder<CopyState> builder("cp_copy_chunks");
  auto read_chunk = builder.Syscall(
      "read_chunk", FOREACTOR_CALL_READ,
      [](CopyState& copy, const foreactor::Visit& visit, foreactor_call& call) {
        const uint64_t i = copy.first_chunk + visit.iteration(0);
        const int64_t position = static_cast<int64_t>(i) * copy.chunk;
        if (position > copy.source_size) return FOREACTOR_NOT_YET;
        call = foreactor::Read(copy.source_fd, static_cast<size_t>(copy.chunk), position);
        if (copy.LinkedPair(i)) call.link_next = 1;
        return FOREACTOR_READY;
      });
  auto write_chunk = builder.Syscall(
      "write_chunk", FOREACTOR_CALL_WRITE,
      [](CopyState& copy, const foreactor::Visit& visit, foreactor_call& call) {
        const uint64_t i = copy.first_chunk + visit.iteration(0);
        if (!copy.LinkedPair(i)) return FOREACTOR_NOT_YET;
        call = foreactor::Write(copy.dest_fd, nullptr, static_cast<size_t>(copy.chunk),
                                static_cast<int64_t>(i) * copy.chunk);
        return FOREACTOR_READY;
      });
  auto more_chunks =
      builder.Branch("more_chunks", [](CopyState&, const foreactor::Visit&) { return 0; });
  builder.start().Then(read_chunk).Then(write_chunk).Then(more_chunks);
  more_chunks.Children({read_chunk, builder.end()});
  return builder.Build();
}());

void LeaveCopyScope() {
  if (copy_state.in_scope) foreactor_scope_exit(copy_graph.handle());
  copy_state = CopyState{};
}

// Before the loop's next chunk (the first, or one after a full write):
// enters or leaves the scope as the scope gate answers.
void BeforeChunk() {
  const bool open = copy_graph.ScopeGate();
  if (open && !copy_state.in_scope) {
    copy_state.first_chunk = static_cast<uint64_t>(copy_state.copied / copy_state.chunk);
    copy_state.in_scope = true;
    foreactor_scope_enter(copy_graph.handle(), &copy_state);
  } else if (!open && copy_state.in_scope) {
    foreactor_scope_exit(copy_graph.handle());
    copy_state.in_scope = false;
  }
}

}  // namespace

extern "C" {

int cp_copy_set_plain_loop(int plain_loop) {
  const int previous = plain_loop_requested;
  plain_loop_requested = plain_loop;
  return previous;
}

int __real_fdadvise(int fd, off_t offset, off_t length, int advice);
void* __real_xalignalloc(ptrdiff_t alignment, ptrdiff_t size);
size_t __real_full_write(int fd, const void* buffer, size_t count);
int __real_close(int fd);

// gnulib: void fdadvise (int fd, off_t offset, off_t len, fadvice_t advice);
// fadvice_t is an enum, passed as an int.
void __wrap_fdadvise(int fd, off_t offset, off_t length, int advice) {
  LeaveCopyScope();
  struct stat status;
  // Only the plain loop: options asked for it, and a source without holes
  // (otherwise copy_reg() takes lseek_copy(), extent by extent).
  if (plain_loop_requested && fd >= 0 && fstat(fd, &status) == 0 && S_ISREG(status.st_mode) &&
      !(status.st_blocks < status.st_size / 512)) {
    copy_state.source_fd = fd;
    copy_state.source_size = status.st_size;
    copy_state.announced = true;
  }
  __real_fdadvise(fd, offset, length, advice);
}

// gnulib: void *xalignalloc (idx_t alignment, idx_t size);
void* __wrap_xalignalloc(ptrdiff_t alignment, ptrdiff_t size) {
  void* buffer = __real_xalignalloc(alignment, size);
  if (copy_state.announced && !copy_state.copying && size > 0 && copy_graph.handle() != nullptr) {
    copy_state.announced = false;
    copy_state.copying = true;
    copy_state.chunk = size;
    BeforeChunk();
  }
  return buffer;
}

size_t __wrap_full_write(int fd, const void* buffer, size_t count) {
  if (!copy_state.copying) return __real_full_write(fd, buffer, count);
  if (copy_state.dest_fd < 0 && fd != copy_state.source_fd) copy_state.dest_fd = fd;
  const size_t written = __real_full_write(fd, buffer, count);
  if (fd == copy_state.dest_fd) {
    copy_state.copied += static_cast<int64_t>(written);
    // A partial chunk is the last (or a failed write): the loop ends.
    if (written == count && copy_state.copied % copy_state.chunk == 0) BeforeChunk();
  }
  return written;
}

int __wrap_close(int fd) {
  if (fd >= 0 && (copy_state.copying || copy_state.announced) &&
      (fd == copy_state.source_fd || fd == copy_state.dest_fd)) {
    LeaveCopyScope();
  }
  return __real_close(fd);
}

}  // extern "C"
