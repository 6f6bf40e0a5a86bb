/*
 * foreactor.h: the C API for plugins.
 *
 * A plugin describes the system calls one function of a host program makes
 * as a foreaction graph, then brackets each invocation of that function with
 * foreactor_scope_enter() / foreactor_scope_exit().  While a scope is active
 * on a thread, foreactor intercepts the thread's libc calls, matches each one
 * against the graph, and issues the calls that come next ahead of time.
 *
 * Contract shared by every function here: no function throws, none aborts the
 * host program, and none changes what the host program observes.  Errors are
 * reported through return values; a graph that fails validation can still be
 * used with foreactor_scope_enter(), which then does nothing.
 *
 * Threading: a finished graph is immutable and may be used from any number of
 * threads at once; each thread gets its own instance (slots, buffers, engine).
 * Building a graph (the add/set functions) is not thread-safe.
 */
#ifndef FOREACTOR_FOREACTOR_H_
#define FOREACTOR_FOREACTOR_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A plugin calls these functions through its global offset table, filled
 * when the program starts with the rest of its relocations (GCC's noplt),
 * rather than through a PLT entry bound at the first call: a lazy binding
 * costs about half a microsecond with cold caches, and a plugin's first
 * calls come in the program's first scope.  The library's own objects
 * (FOREACTOR_BUILDING_LIBRARY) call them as any other function.
 */
#if defined(__has_attribute) && !defined(FOREACTOR_BUILDING_LIBRARY)
#if __has_attribute(noplt)
#define FOREACTOR_API __attribute__((visibility("default"), noplt))
#endif
#endif
#ifndef FOREACTOR_API
#define FOREACTOR_API __attribute__((visibility("default")))
#endif

/* Most loops one graph may contain, nested or not. */
#define FOREACTOR_MAX_LOOPS 8

/* The system calls a syscall node may stand for. */
typedef enum foreactor_call_type {
  FOREACTOR_CALL_OPEN = 0,   /* open(path, flags, mode) */
  FOREACTOR_CALL_OPENAT,     /* openat(fd, path, flags, mode) */
  FOREACTOR_CALL_CLOSE,      /* close(fd) */
  FOREACTOR_CALL_READ,       /* read(fd, buffer, length) at file position `offset` */
  FOREACTOR_CALL_PREAD,      /* pread(fd, buffer, length, offset) */
  FOREACTOR_CALL_WRITE,      /* write(fd, buffer, length) at file position `offset` */
  FOREACTOR_CALL_PWRITE,     /* pwrite(fd, buffer, length, offset) */
  FOREACTOR_CALL_LSEEK,      /* lseek(fd, offset, whence) */
  FOREACTOR_CALL_FSTAT,      /* fstat(fd, buffer) */
  FOREACTOR_CALL_FSTATAT,    /* fstatat(fd, path, buffer, flags) */
  FOREACTOR_CALL_STAT,       /* stat(path, buffer) */
  FOREACTOR_CALL_LSTAT,      /* lstat(path, buffer) */
  FOREACTOR_CALL_STATX,      /* statx(fd, path, flags, mode = mask, buffer) */
  FOREACTOR_CALL_GETDENTS64, /* getdents64(fd, buffer, length) */
  FOREACTOR_CALL_READV,      /* readv(fd, iov, iovcnt) at file position `offset` */
  FOREACTOR_CALL_PREADV,     /* preadv(fd, iov, iovcnt, offset) */
  FOREACTOR_CALL_WRITEV,     /* writev(fd, iov, iovcnt) at file position `offset` */
  FOREACTOR_CALL_PWRITEV,    /* pwritev(fd, iov, iovcnt, offset) */
  FOREACTOR_CALL_TYPE_COUNT
} foreactor_call_type;

/*
 * The arguments of one system call.  Which fields mean something depends on
 * `type` (see the comments on foreactor_call_type); the rest are ignored.
 *
 * When a plugin fills one in for early issue:
 *  - read-like calls (read, pread, readv, preadv, getdents64, the stat
 *    family) leave `buffer` / `iov` alone: foreactor reads into buffers of
 *    its own and copies into the program's buffer when the program makes the
 *    call.  For readv/preadv only the total length matters: set `length`.
 *  - write-like calls give the bytes to write in `buffer` (or `iov`), which
 *    must stay valid and unchanged until the program makes the call.  A write
 *    that directly follows a read whose arguments set `link_next` may leave
 *    `buffer` NULL: it then writes the bytes that read produced.
 *  - `path` is copied when the callback returns; it need not outlive it.
 *  - `link_next` asks that this call and the next syscall node's call run in
 *    order as one unit; the second runs only if the first one transferred
 *    exactly `length` bytes.  A write with a NULL `buffer` after such a read
 *    goes through the write pipeline (outside check mode): it is sent once
 *    its read completed in full, and runs only after every such write
 *    before it in the scope did, so these writes reach the file in program
 *    order, none after one that failed or fell short (USER_GUIDE, "The
 *    write pipeline").
 */
typedef struct foreactor_call {
  foreactor_call_type type;
  int fd;                  /* file descriptor, or directory fd for *at calls */
  const char *path;        /* path for open, openat, stat, lstat, fstatat, statx */
  int flags;               /* open flags, or AT_* flags for fstatat and statx */
  unsigned int mode;       /* creation mode for open/openat; mask for statx */
  void *buffer;            /* data to write, or (intercepted calls) destination */
  size_t length;           /* byte count for read/write family and getdents64 */
  int64_t offset;          /* file offset; for lseek the offset argument */
  int whence;              /* lseek only */
  const struct iovec *iov; /* vector forms only */
  int iovcnt;              /* vector forms only */
  int link_next;           /* nonzero: run together with the next syscall node */
} foreactor_call;

/*
 * One execution of a node, as seen by a callback.  `iteration[i]` counts how
 * many times the i-th loop enclosing the node (outermost first) has gone
 * around before this visit, starting at 0.  `loop_count` is 0 for a node in
 * no loop.
 */
typedef struct foreactor_visit {
  void *scope_state;         /* the pointer given to foreactor_scope_enter() */
  void *node_data;           /* the pointer given when the node was added */
  const uint64_t *iteration; /* `loop_count` entries, outermost loop first */
  unsigned int loop_count;
} foreactor_visit;

/* What an arguments callback knows about a visit. */
typedef enum foreactor_readiness {
  FOREACTOR_READY = 0,   /* *call holds the arguments */
  FOREACTOR_NOT_YET = 1, /* not known yet; ask again later */
  FOREACTOR_NEVER = 2    /* the program will not make this call: stop looking ahead here */
} foreactor_readiness;

/* A branch choice that is not known yet. */
#define FOREACTOR_CHOICE_NOT_YET (-1)

/*
 * Arguments callback of a syscall node.  Fills *call (type is preset) for
 * the given visit.  May be called several times for the same visit and must
 * then give the same answer once it said READY.  May be called for visits
 * far ahead of the program (a read-ahead stream walks up to 2,048 preads
 * ahead): answer NOT_YET where the answer is not known.  Must not make
 * system calls that belong to the graph.
 */
typedef foreactor_readiness (*foreactor_arguments_fn)(const foreactor_visit *visit,
                                                      foreactor_call *call);

/*
 * Result callback of a syscall node.  Called exactly once per visit the
 * program makes while the scope speculates, in program order, after the
 * program received the call's result: `result` is the return value (or
 * -errno on failure).  A call on another descriptor than the visit's
 * arguments name is not a visit of the node.  Once repeated wrong guesses
 * have switched speculation off for the scope, no callback runs again in
 * that scope.  May be NULL.
 */
typedef void (*foreactor_result_fn)(const foreactor_visit *visit, int64_t result);

/*
 * Choice callback of a branch node: the index of the child the program will
 * take at this visit, or FOREACTOR_CHOICE_NOT_YET.  Once it returns a child
 * for a visit it must return the same child for that visit.
 */
typedef int (*foreactor_choice_fn)(const foreactor_visit *visit);

/* A loop count that is not known yet. */
#define FOREACTOR_COUNT_NOT_YET (-1)

/*
 * Loop-count callback of a branch node that closes a loop
 * (foreactor_graph_set_loop_count): how many iterations the loop runs in
 * all, in the instance the visit's counters name (the visit's last counter
 * is the iteration the branch ends), or FOREACTOR_COUNT_NOT_YET.  Like a
 * choice, it must not change once known.
 */
typedef int64_t (*foreactor_count_fn)(const foreactor_visit *visit);

/* ------------------------------------------------------------------ graphs */

typedef struct foreactor_graph foreactor_graph;

/*
 * Creates an empty graph named `name` (letters, digits and '_'; used in
 * configuration variables and statistics).  It already holds its start and
 * end nodes.  Returns NULL only when out of memory.
 */
FOREACTOR_API foreactor_graph *foreactor_graph_create(const char *name);

/* Frees a graph.  No scope of it may be active on any thread. */
FOREACTOR_API void foreactor_graph_destroy(foreactor_graph *graph);

/* Node ids of the start and end nodes of every graph. */
#define FOREACTOR_START_NODE 0
#define FOREACTOR_END_NODE 1

/*
 * Adds a syscall node.  `arguments` is required; `result` may be NULL.
 * Returns the new node's id (>= 2), or -1 if the graph is already finished
 * or the type is out of range.
 */
FOREACTOR_API int foreactor_graph_add_syscall(foreactor_graph *graph, const char *name,
                                              foreactor_call_type type,
                                              foreactor_arguments_fn arguments,
                                              foreactor_result_fn result, void *node_data);

/* Adds a branch node.  Returns its id, or -1 as above. */
FOREACTOR_API int foreactor_graph_add_branch(foreactor_graph *graph, const char *name,
                                             foreactor_choice_fn choice, void *node_data);

/*
 * Sets the successor of the start node or of a syscall node.  `weak` nonzero
 * marks the edge weak: the function may return on it.  Returns 0, or -1 if
 * `from` already has a successor or is not a start/syscall node (the error
 * is kept and reported by foreactor_graph_finish()).
 */
FOREACTOR_API int foreactor_graph_set_next(foreactor_graph *graph, int from, int to, int weak);

/*
 * Appends a child to a branch node; child indices count from 0 in the order
 * of these calls.  A child that is an earlier node closes a loop.  Returns
 * the child's index, or -1 (error kept as above).
 */
FOREACTOR_API int foreactor_graph_add_child(foreactor_graph *graph, int branch, int to, int weak);

/*
 * Declares write-behind on a write, pwrite, writev or pwritev node.  The
 * contract: the writes of this node form output the program will make
 * durable (it fsyncs the file, or the data must reach the device anyway);
 * the runtime may start their write-back early.
 *
 * What the runtime then does: once the program's own writes of the node
 * (issued early or not) have completed a contiguous range of a regular file
 * opened without O_DIRECT or O_APPEND, it asks the kernel, off the
 * program's thread, to start writing that range to the device
 * (sync_file_range with SYNC_FILE_RANGE_WRITE, which waits for nothing and
 * reports no write-back error); what is left is started when the scope
 * ends.  The program sees the same results from every call, and a later
 * fsync still reports any write-back error; the only trace is data
 * reaching the device earlier.  Wrong for output that is rewritten soon or
 * deleted without being made durable (temporary files): their pages would
 * be written for nothing.  Needs an asynchronous engine (io_uring or the
 * thread pool); FOREACTOR_WRITE_BEHIND=0 turns it off.
 *
 * Returns 0, or -1 if the graph is finished or `node` is not a write-family
 * syscall node (the error is kept and reported by foreactor_graph_finish()).
 */
FOREACTOR_API int foreactor_graph_set_write_behind(foreactor_graph *graph, int node);

/*
 * Declares how many iterations the loop closed by branch node `branch` runs:
 * `count` (contract: foreactor_count_fn).  Optional; for loops whose length
 * the plugin knows up front (a list of pages to read).  The contract: when
 * `count` returns T for a visit of `branch` at iteration i, the branch takes
 * the loop's back edge at iterations i to T - 2 and leaves the loop at
 * iteration T - 1; and the arguments and choice callbacks of the loop's
 * nodes may be asked about any iteration below T, in any order, not only
 * the next one.
 *
 * What the runtime then does: where it only needs to know how a loop of
 * preads ends, not each of its reads (whether the rest of a scope is a short
 * run in file order, which it leaves to the page cache), it walks the
 * loop's first iterations and its last one and takes those between as
 * alike, instead of asking the callbacks about each; only for a loop whose
 * every node but `branch` is a pread node.  The runtime issues early only
 * what the callbacks say visit by visit: a count that is wrong, short of
 * the loop or past its end, costs speculation, never correctness, as long
 * as the callbacks can answer (if only NOT_YET) for every iteration below
 * it.
 *
 * Returns 0, or -1 if the graph is finished, `branch` is not a branch node
 * or `count` is NULL (the error is kept and reported by
 * foreactor_graph_finish(), which also rejects a count on a branch that
 * does not close exactly one loop).
 */
FOREACTOR_API int foreactor_graph_set_loop_count(foreactor_graph *graph, int branch,
                                                 foreactor_count_fn count);

/*
 * Declares that the graph's scopes need not follow the program before the
 * plugin's first foreactor_scope_look_ahead() in each scope: the graph can
 * move past its start only once the plugin has learned something outside
 * the program's calls, and the plugin then always looks ahead (a B+-tree
 * scan's leaves, known once its inner walk is read).  The contract: every
 * scope in which the graph can make progress gets a look-ahead, and before
 * it the program makes none of the graph's calls.
 *
 * What the runtime then does: it enters such a scope without starting to
 * follow it; the program's calls before the look-ahead pass untouched.  At
 * the look-ahead, a scope whose rest is a short run of preads in file order
 * (what the page cache and the kernel's read-ahead serve as well as reads
 * issued early) is left at once, with nothing set up for it; any other
 * scope is followed from the graph's start on, as from its entry.  A scope
 * with no look-ahead costs its entry and exit alone.  Not in check mode or
 * at an exact depth (FOREACTOR_CHECK, FOREACTOR_EXACT_DEPTH), which follow
 * every scope from its entry.  A plugin that breaks the contract loses
 * speculation, never correctness.
 *
 * Returns 0, or -1 if the graph is finished or NULL.
 */
FOREACTOR_API int foreactor_graph_follow_from_look_ahead(foreactor_graph *graph);

/*
 * Validates the graph and makes it usable.  Returns 0; or -1 and writes a
 * message naming the offending node and the rule it breaks into `error`
 * (`error_size` bytes, NUL-terminated; may be NULL).
 */
FOREACTOR_API int foreactor_graph_finish(foreactor_graph *graph, char *error, size_t error_size);

/* Writes a finished graph in Graphviz DOT form.  Returns 0 or -1. */
FOREACTOR_API int foreactor_graph_write_dot(const foreactor_graph *graph, FILE *out);

/* The graph's name. */
FOREACTOR_API const char *foreactor_graph_name(const foreactor_graph *graph);

/* ------------------------------------------------------------------ scopes */

/*
 * Enters a scope of `graph` on the calling thread: the function the graph
 * describes starts now.  `scope_state` is passed to every callback.  Scopes
 * of different graphs may nest; a scope of a graph already active on this
 * thread nests as an inactive scope.  When foreactor is off for the process
 * (FOREACTOR unset or 0), this does nothing; when the graph cannot speculate
 * (graph invalid, depth 0, io failure) it only records that a scope is open.
 */
FOREACTOR_API void foreactor_scope_enter(foreactor_graph *graph, void *scope_state);

/*
 * Leaves the innermost scope of `graph` on this thread: cancels or waits for
 * every call issued early, closes files opened early and never used, and
 * releases buffers.  Must pair with foreactor_scope_enter().
 */
FOREACTOR_API void foreactor_scope_exit(foreactor_graph *graph);

/*
 * Tells the innermost open scope of `graph` on the calling thread that
 * arguments or branch choices its callbacks answered not-yet may be known
 * now: the plugin learned them outside an intercepted call (from a function
 * it wraps), and the program may next work a while without system calls.
 * foreactor then walks ahead at once, as it does at each of the program's
 * calls, and may start a read-ahead stream of the graph's next preads
 * (docs/DESIGN.md §5), so that the device works while the program computes.
 * What the program observes does not change.  Does nothing when no scope of
 * `graph` speculates on this thread.  Cost when it does nothing: a few
 * thread-local loads.
 */
FOREACTOR_API void foreactor_scope_look_ahead(foreactor_graph *graph);

/* What one scope did with the graph's calls (foreactor_last_scope_outcome). */
typedef struct foreactor_scope_outcome {
  uint64_t calls;           /* calls of the program that matched the graph */
  uint64_t issued_early;    /* requests handed to the engine ahead of the program */
  uint64_t from_page_cache; /* reads served from the page cache without the
                               engine: found there ahead of the program (also
                               ones it then did not make), or at its call */
} foreactor_scope_outcome;

/*
 * Copies what the last scope of `graph` on the calling thread that
 * speculated (it had a runtime instance: foreactor on, graph valid and
 * enabled, an engine) did into *outcome and returns 1; returns 0 and leaves
 * *outcome alone when no such scope has ended on this thread.  Cost: a few
 * thread-local loads; no lock, no allocation, no system call.
 *
 * Meant for plugins that decide whether a scope is worth opening: scopes
 * whose reads all came from the page cache gained nothing.
 */
FOREACTOR_API int foreactor_last_scope_outcome(const foreactor_graph *graph,
                                               foreactor_scope_outcome *outcome);

/* Nonzero when foreactor is switched on for this process (FOREACTOR=1). */
FOREACTOR_API int foreactor_enabled(void);

/* What a scope of a graph entered now on the calling thread would do. */
typedef enum foreactor_speculation {
  /* Issue nothing early: foreactor off, graph NULL, invalid or switched off
     by its settings, no engine, speculation suspended after mispredictions
     on this thread, depth 0 (FOREACTOR_DEPTH=0, or a depth the runtime
     chooses settled at 0; a brief probe of depth 0 from a higher depth does
     not count), the sync engine with the automatic depth, or, unless the depth is
     exact, a graph of stats alone whose stats are being found cached
     (docs/USER_GUIDE.md). */
  FOREACTOR_SPECULATION_NONE = 0,
  /* Issue early at a depth the runtime chooses (FOREACTOR_DEPTH=auto, or a
     fixed depth, which is the most it issues ahead), above 0 now or not
     known yet (no scope of the graph on this thread so far). */
  FOREACTOR_SPECULATION_AUTOMATIC = 1,
  /* The configuration asks for scopes: an exact depth above 0
     (FOREACTOR_EXACT_DEPTH=1), the sync engine at a fixed depth, or check
     mode (which issues nothing but compares every call with the graph). */
  FOREACTOR_SPECULATION_REQUESTED = 2
} foreactor_speculation;

/*
 * What a scope of `graph` entered now on the calling thread would do (see
 * foreactor_speculation).  Never changes what any scope does.  Cost: a few
 * loads of thread-local and process-wide data, no lock, no system call; the
 * first call for a graph in the process reads its settings, as its first
 * scope would.
 *
 * Meant for plugins whose scopes bracket cheap calls, to leave scopes out
 * where they cost more than they gain.  A graph's depth and suspension only
 * change inside its scopes: a plugin that leaves them out while this says
 * NONE must still open one now and then.
 */
FOREACTOR_API foreactor_speculation foreactor_scope_speculation(const foreactor_graph *graph);

/*
 * The scope gate: whether the next unit of the program's work that scopes
 * of `graph` cover should run with a scope.  Returns 1 (enter a scope, or
 * keep the open one, and plan whatever the graph's callbacks need) or 0
 * (run the unit plain: no scope, no planning).
 *
 * A unit is the plugin's choice: one call of the wrapped function (a Get),
 * or one step of a loop that one long scope spans (one entry of a
 * directory walk; the plugin then enters or exits its scope where the
 * answer changes).  Call it once before every unit, on the thread that
 * runs the unit.  A scope left between units must be left where the graph
 * has a weak edge (the function may return there): calls with side effects
 * are issued early only when no weak edge lies before them.
 *
 * The gate answers 1 for every unit when the configuration asks for scopes
 * (an exact depth above 0, the sync engine at a fixed depth, check mode)
 * and 0 when foreactor is off, the graph is NULL or invalid.  With the
 * automatic depth or a fixed one (a bound) it times stretches of
 * units without and with a scope, per graph and thread, keeps the scope
 * only while it makes the units measurably faster, and otherwise runs plain
 * and tries again later (docs/USER_GUIDE.md, "The scope gate"; its
 * thresholds are in docs/DESIGN.md §5).  While foreactor_scope_speculation()
 * answers NONE it runs plain too, and after a rest that grows with each
 * retry that finds nothing it lifts a suspension and lets the automatic
 * depth start over, as a plugin that leaves scopes out must.  Its counters
 * appear in the statistics as gate_*.
 *
 * Cost: a few thread-local loads and a decrement per unit; a few clock
 * reads per timed stretch of units, one per other stretch.  No system call
 * outside decisions; the first call on a thread allocates the gate.
 */
FOREACTOR_API int foreactor_scope_gate(const foreactor_graph *graph);

/*
 * foreactor_scope_gate() for a stretch of units: returns the answer for
 * the next unit and sets `*units` to how many units, that one included,
 * the answer holds for (at least 1; UINT32_MAX when it never changes, e.g.
 * foreactor off).  The plugin runs that many units with the answer without
 * asking, and asks again before the unit after them, on the same thread:
 * the gate then decides where it would have with one question per unit.
 * For units too cheap for a question each (one fts_read() of a hot walk).
 * `units` NULL: as foreactor_scope_gate().
 */
FOREACTOR_API int foreactor_scope_gate_units(const foreactor_graph *graph, uint32_t *units);

/*
 * Leaves the last `nanoseconds` out of the stretch the gate of `graph` is
 * timing on this thread, and out of the automatic depth's measurement of
 * the scope open on it: work inside a unit that no scope can speed up and
 * whose amount differs between units (du: reading a directory).  No effect
 * before the thread's first foreactor_scope_gate(graph).
 */
FOREACTOR_API void foreactor_scope_gate_exclude(const foreactor_graph *graph, uint64_t nanoseconds);

/*
 * Whether the gate of `graph` on this thread measures the units of its last
 * answer: 1 in a stretch it times without a scope, and for units with a
 * scope (the automatic depth measures those); 0 while it rests, and before
 * its first answer.  Time left out with foreactor_scope_gate_exclude()
 * counts only while this is 1, so a plugin may skip timing the work it
 * would leave out while it is 0.  Ask after foreactor_scope_gate() or
 * foreactor_scope_gate_units(); the answer holds for the units of that
 * answer.  A few thread-local loads.
 */
FOREACTOR_API int foreactor_scope_gate_measuring(const foreactor_graph *graph);

/* ------------------------------------------------------------- walk-ahead */

/*
 * Asks for walk-ahead in this process: from now on, the directory trees the
 * program walks recursively are read ahead of it by threads of foreactor's
 * own, which only warm the kernel's caches (docs/USER_GUIDE.md,
 * "Walk-ahead").  For plugins whose function walks trees (du's fts walk);
 * without a plugin, `foreactor run --walk-ahead` (FOREACTOR_WALK_AHEAD=1)
 * does the same.  Call it before the walk opens its first directory; calling
 * it again is harmless.
 *
 * Returns 1 when walk-ahead is on after the call; 0 when foreactor is off,
 * FOREACTOR_WALK_AHEAD=0 or an invalid walk-ahead setting keeps it off, or
 * it cannot run in this process (after fork(), out of memory).
 */
FOREACTOR_API int foreactor_walk_ahead(void);

struct stat;

/*
 * foreactor_walk_ahead(), and walk-ahead keeps the status of every entry it
 * stats (fstatat with AT_SYMLINK_NOFOLLOW), by directory, so that the
 * plugin can answer the program's own stat of the same entry from it
 * (foreactor_walk_ahead_stat) instead of making the call again: as a graph
 * answers a call from the same call issued early, the answer is the status
 * walk-ahead's call returned, a little earlier.  What is kept is bounded
 * (its bytes are in walk-ahead's statistics) and dropped once asked for.
 * For plugins that know which directory each of the program's stats names
 * (du's fts keeps the status of the directory it reads).
 *
 * Returns what foreactor_walk_ahead() returns.
 */
FOREACTOR_API int foreactor_walk_ahead_keep_stats(void);

/*
 * Answers fstatat(fd, name, status, AT_SYMLINK_NOFOLLOW), where `fd` is open
 * on the directory whose status the program got as `*directory` (by its own
 * stat, or by an answer), from walk-ahead's kept stat of the entry.
 *
 * Returns 1 and writes `*status` when walk-ahead read that directory under
 * the same status (device, inode, modification and change time: a
 * directory whose entries changed since has another) and its stat of
 * `name` succeeded; returns 0 and writes nothing otherwise (then make the
 * call).  `name` is one entry's name, without '/'.  Costs a lock and a
 * lookup, no system call; 0 at once (one load) while nothing is kept.
 */
FOREACTOR_API int foreactor_walk_ahead_stat(const struct stat *directory, const char *name,
                                            struct stat *status);

/*
 * The address of a word that reads 0 for as long as walk-ahead has kept no
 * stat in this process, and nonzero from the first one it keeps on (it
 * never goes back to 0).  While it reads 0, foreactor_walk_ahead_stat()
 * answers nothing.  A plugin that wraps every stat of the program may read
 * it first, with a relaxed atomic load (__atomic_load_n(flag,
 * __ATOMIC_RELAXED)), and make the call at once while it is 0: on a cached
 * tree, where walk-ahead keeps nothing, that is a load in place of the
 * wrapper's checks and a call into the library on every stat.
 *
 * Never NULL; the word lives as long as the process.
 */
FOREACTOR_API const int *foreactor_walk_ahead_stats_kept_flag(void);

/* -------------------------------------------------------------- page cache */

/*
 * Counts the pages of bytes [offset, offset + length) of the file open as
 * `fd` that the page cache holds now: writes that count to *cached and the
 * number of pages the range touches to *pages, and returns 0.  A page whose
 * read has started counts as held; pages past the end of the file count as
 * not held.  Returns -1 and writes nothing when the kernel cannot tell: no
 * cachestat(2) (Linux before 6.5, or a seccomp filter that refuses it),
 * `fd` not open, a length of 0, or a range that overflows; and when
 * page-cache awareness is off (FOREACTOR_PAGE_CACHE=0) or in check mode
 * (FOREACTOR_CHECK=1), so that plugins then plan as if nothing were cached.
 *
 * Reads no data and changes nothing: it never waits for the device, and
 * answers whether or not foreactor is on.  Cost: one system call that visits
 * every page of the range (some tens of nanoseconds per page): cheap for a
 * block, not for a whole large file at every call.
 *
 * Meant for plugins that plan a function's reads before its scope: a read
 * the page cache holds gains nothing from being planned, and the runtime
 * would only probe it.  foreactor::RangesInCache (foreactor.hpp) builds on
 * it; apps/leveldb's plugin uses that to leave cached reads out of plans.
 */
FOREACTOR_API int foreactor_pages_cached(int fd, uint64_t offset, uint64_t length, uint64_t *cached,
                                         uint64_t *pages);

/*
 * Starts the device reads of bytes [offset, offset + length) of the regular
 * file open as `fd` (readahead(2)) and returns without waiting for them, for
 * a plugin that plans a unit's reads before the unit's scope of `graph` and
 * finds one of them cold (foreactor_pages_cached): the device then reads it
 * while the rest of the plan is made, instead of from the scope's first
 * look ahead on.  In the scope, the runtime's peek head finds the read's
 * pages coming in and leaves the read to the program, whose own read waits
 * for them and copies them once (the graph's statistics count it in
 * `found_present`).  Pages the page cache holds are left alone.
 *
 * Returns 0 once the reads are started, counted in the graph's statistics
 * (`reads_started_in_plans`).  Returns -1, with nothing done, when the
 * graph's scopes issue nothing early on the calling thread: foreactor off,
 * the graph invalid or switched off, check mode (nothing runs early there),
 * depth 0 or the sync engine, page-cache awareness off (the runtime then
 * issues every planned read itself), or speculation suspended
 * (foreactor_scope_speculation() answers FOREACTOR_SPECULATION_NONE); and
 * when readahead(2) refuses the range: `fd` not open, not a regular file,
 * a length of 0 or a range that overflows.
 *
 * A start is a hint: it changes no data the program reads and no descriptor,
 * and a plan that turns out wrong (the unit returns before the read) only
 * cost the device that read.  Cost to the caller: one system call, which
 * on a virtual machine includes the device's notification (about 20 us on
 * the development VM when the device was idle, a few us more per further
 * start).  Start only reads a scope would start anyway: those the plan
 * holds, found cold.  Thread-safe, not async-signal-safe.
 */
FOREACTOR_API int foreactor_scope_start_read(const foreactor_graph *graph, int fd, uint64_t offset,
                                             uint64_t length);

/*
 * Reads bytes [offset, offset + length) of `fd` into `buffer` and returns
 * what pread(2) would, with errno as it would set it, for the program's read
 * of a range the calling thread started with foreactor_scope_start_read()
 * for `graph`.  While the range's device reads are on their way, the caller
 * asks the page cache for the range again and again (preadv2(2) with
 * RWF_NOWAIT, which never waits), until the range is in or
 * FOREACTOR_POLL_US microseconds (default 300) have passed; then it reads
 * with pread(2), which sleeps until the device is done.  The same bytes are
 * read either way.  A plain pread(2) where foreactor_scope_start_read()
 * starts nothing, with FOREACTOR_POLL_US=0, and for a range that reaches
 * past the end of the file.
 *
 * Why: a thread that sleeps for the device pays for it twice on a virtual
 * machine, in its CPU's halt and in its wake-up; a thread that polls sees
 * the pages as soon as they are read, at the cost of its CPU for the read's
 * time.  That pays only while no other thread wants the CPU: no more
 * threads of the process poll at once than the CPUs it may run on (the
 * others read asleep), a poll that finds it lost its CPU (a gap of 100 us
 * between two tries) reads asleep at once, and no thread of the process
 * polls for the next 10 ms, a window that doubles, up to 10 s, at each such
 * poll soon after the last.  A range
 * the page cache holds costs one try; a cold range nothing started is
 * started by the first try.  Counted in the graph's statistics
 * (`started_reads_polled`, `started_reads_asleep`).  Thread-safe, not
 * async-signal-safe.
 */
FOREACTOR_API ssize_t foreactor_scope_read_started(const foreactor_graph *graph, int fd,
                                                   void *buffer, size_t length, int64_t offset);

/*
 * 1 when foreactor_scope_start_read() starts reads for `graph` on the
 * calling thread (for a range readahead(2) takes), 0 when it would return -1
 * whatever the range: foreactor off, the graph's scopes issuing nothing
 * early, check mode, page-cache awareness off or the sync engine.  A plugin
 * asks it before a unit to choose how to plan: where reads can be started,
 * it may plan late and start the cold ones itself; where not, only a
 * scope's engine issues its planned reads early.  Thread-safe.
 */
FOREACTOR_API int foreactor_scope_starts_reads(const foreactor_graph *graph);

/*
 * Starts reading bytes [offset, offset + length) of the regular file at
 * `path` into the page cache, for a file the program has not opened yet but
 * is about to open and read there (a LevelDB table's index, which opening
 * the table reads).  Returns 0 once the hint is queued, without waiting for
 * the file's open or the device (pages already cached are left alone); -1
 * when `path` names no regular file (a stat of it), `path` is longer than
 * PATH_MAX, the range is empty or overflows, or no thread can be started.
 *
 * A thread of foreactor's own, with a descriptor table of its own, opens the
 * file read-only (O_NONBLOCK, O_NOCTTY), checks that it is still the file
 * the stat found, asks the kernel to read the range (readahead(2)) and
 * closes it: nothing the program reads changes, none of its descriptor
 * numbers is taken even for a while, and none of its POSIX record locks is
 * released (closing a descriptor of a locked file in the program's own
 * table would).  A relative `path` is resolved when that thread opens it.
 * At most 64 hints wait at once; a call beyond them waits for the oldest to
 * be taken, at most 2 seconds: past that the thread is taken to have stopped
 * progressing (an open stuck on an unreachable network mount), the call
 * returns -1, and later calls finding the queue full return -1 at once
 * until the thread takes a hint again.  Cost to the caller: a stat and a
 * hand-over.  Hints of ranges the page cache already holds are left out:
 * while the last 16 hints carried out each found its whole range cached,
 * a call returns 0 at once, path unchecked, and only one call in 16 is
 * carried out, so that a range found missing starts hints again.
 * Thread-safe, not async-signal-safe.  Works whether or not foreactor is on.
 */
FOREACTOR_API int foreactor_read_ahead_file(const char *path, uint64_t offset, uint64_t length);

/* --------------------------------------------------------- private memory */

/*
 * Memory for a plugin's long-lived records (per open file or table), taken
 * from mappings of foreactor's own, never from the program's malloc.
 *
 * Records that live while the program runs, allocated from its heap between
 * its own allocations, change which chunks its allocator keeps ready; the
 * program's later allocations can then take slower paths than they take
 * without foreactor.  Memory from here leaves the program's heap as the
 * plain program leaves it.  foreactor::PrivateAllocator and
 * foreactor::MakePrivate (foreactor.hpp) build on these two functions.
 *
 * foreactor_private_allocate returns `size` bytes aligned to 16, or NULL
 * when `size` is 0 or no memory can be had.  foreactor_private_free gives
 * back `pointer` (NULL: nothing), which foreactor_private_allocate(`size`)
 * returned, with the same `size`.  Both are thread-safe and take a lock:
 * meant for records made now and then, not for every call.  Both work
 * whether or not foreactor is on.
 */
FOREACTOR_API void *foreactor_private_allocate(size_t size);
FOREACTOR_API void foreactor_private_free(void *pointer, size_t size);

/* ------------------------------------------------------------------- misc */

/* Name of a call type ("pread", "fstatat", ...). */
FOREACTOR_API const char *foreactor_call_type_name(foreactor_call_type type);

/*
 * Writes the statistics of every graph as JSON to `out`.  Called
 * automatically at exit when FOREACTOR_STATS names a file.  Returns 0 or -1.
 */
FOREACTOR_API int foreactor_write_stats(FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* FOREACTOR_FOREACTOR_H_ */
