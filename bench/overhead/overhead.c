/*
 * overhead: the cost of one intercepted call, in nanoseconds.
 *
 *   overhead CALL MODE COUNT FILE      (COUNT steps of the loop below)
 *
 *   CALL   pread (1 byte at offset 0 of FILE), fstat (of FILE), fstatat
 *          (AT_FDCWD, FILE's path: a stat by path, as du makes), pwrite (1
 *          byte at offset 0 of FILE: a buffered write to a cached page),
 *          open (open(FILE, O_RDONLY), then close of what it returned) or
 *          getdents64 (FILE is a directory: open it, one getdents64 of up
 *          to 32 KiB, close: a directory read as a tree walker makes it)
 *   MODE   plain     the bare loop; the environment decides the rest:
 *                    no library, LD_PRELOAD with FOREACTOR unset, or
 *                    FOREACTOR=1 with no scope open
 *          foreign   the loop inside a scope of a graph that holds neither
 *                    call, so every call is looked at and passed through
 *          matching  the loop inside a scope of a graph in which every
 *                    call is the next visit of its one syscall node
 *          scoped    a scope of the matching graph around every call:
 *                    the cost of entering and leaving a scope per call
 *          gated     the scope gate asked before every call, which then
 *                    runs in a scope when the gate opens (the way plugins
 *                    whose unit is one call use it)
 *
 * Prints "ns_per_call X" on stdout: for open and getdents64, whose every
 * step makes two or three calls (open and close; open, getdents64 and
 * close), the step's time over its number of calls.  FILE should be in the
 * page cache: the point is the cost around the system call, not the device.
 *
 * The program is not linked with libforeactor.so, so that the same binary
 * runs with and without it.  The scope modes find the C API in the
 * preloaded library at run time and fail when it is not there.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "foreactor/foreactor.h"

enum { kWarmUpSteps = 10000, kDirectoryBufferBytes = 32768 };

typedef enum {
  CALL_PREAD,
  CALL_FSTAT,
  CALL_FSTATAT,
  CALL_PWRITE,
  CALL_OPEN,
  CALL_GETDENTS64
} call_kind;

/* The flags a step opens its path with (open and getdents64 steps), and
 * main() its check that the path can be opened. */
static int step_open_flags(call_kind call) {
  return call == CALL_GETDENTS64 ? O_RDONLY | O_DIRECTORY : O_RDONLY;
}

/* How many calls one step of the loop makes for each kind. */
static unsigned calls_per_step(call_kind call) {
  return call == CALL_OPEN ? 2 : call == CALL_GETDENTS64 ? 3 : 1;
}

/* The file every call of a run is about: open (pread, fstat, pwrite; -1
 * for the others) and by path (fstatat, open, getdents64). */
typedef struct {
  int fd;
  const char *path;
} call_target;

/* The byte every pwrite writes; a graph's write must name bytes that stay
 * unchanged until the program makes the call. */
static const char kWrittenByte = 'x';
typedef enum { MODE_PLAIN, MODE_FOREIGN, MODE_MATCHING, MODE_SCOPED, MODE_GATED } run_mode;

/* The parts of the C API this program uses, found in the preloaded library. */
typedef struct {
  foreactor_graph *(*graph_create)(const char *name);
  int (*add_syscall)(foreactor_graph *graph, const char *name, foreactor_call_type type,
                     foreactor_arguments_fn arguments, foreactor_result_fn result, void *node_data);
  int (*add_branch)(foreactor_graph *graph, const char *name, foreactor_choice_fn choice,
                    void *node_data);
  int (*set_next)(foreactor_graph *graph, int from, int to, int weak);
  int (*add_child)(foreactor_graph *graph, int branch, int to, int weak);
  int (*finish)(foreactor_graph *graph, char *error, size_t error_size);
  void (*scope_enter)(foreactor_graph *graph, void *scope_state);
  void (*scope_exit)(foreactor_graph *graph);
  int (*scope_gate)(const foreactor_graph *graph);
} foreactor_api;

static int find_api(foreactor_api *api) {
  struct {
    const char *name;
    void **slot;
  } symbols[] = {
      {"foreactor_graph_create", (void **)&api->graph_create},
      {"foreactor_graph_add_syscall", (void **)&api->add_syscall},
      {"foreactor_graph_add_branch", (void **)&api->add_branch},
      {"foreactor_graph_set_next", (void **)&api->set_next},
      {"foreactor_graph_add_child", (void **)&api->add_child},
      {"foreactor_graph_finish", (void **)&api->finish},
      {"foreactor_scope_enter", (void **)&api->scope_enter},
      {"foreactor_scope_exit", (void **)&api->scope_exit},
      {"foreactor_scope_gate", (void **)&api->scope_gate},
  };
  for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
    *symbols[i].slot = dlsym(RTLD_DEFAULT, symbols[i].name);
    if (*symbols[i].slot == NULL) {
      fprintf(stderr, "overhead: %s not found: preload libforeactor.so for this mode\n",
              symbols[i].name);
      return -1;
    }
  }
  return 0;
}

/* What the graph callbacks need to know about one run of the loop. */
typedef struct {
  call_kind call;
  call_target target;
  uint64_t count;
  /* The descriptor the open of step `opened_step` returned (open and
   * getdents64 loops); the calls after the open name it. */
  int opened_fd;
  uint64_t opened_step;
} loop_state;

static foreactor_readiness loop_call_arguments(const foreactor_visit *visit, foreactor_call *call) {
  const loop_state *state = visit->scope_state;
  if (visit->iteration[0] >= state->count) return FOREACTOR_NEVER;
  if (state->call == CALL_FSTATAT) {
    call->fd = AT_FDCWD;
    call->path = state->target.path;
    call->flags = 0;
  } else {
    call->fd = state->target.fd;
    call->length = 1;
    call->offset = 0;
    if (state->call == CALL_PWRITE) call->buffer = (void *)&kWrittenByte;
  }
  return FOREACTOR_READY;
}

/* The open of an open or getdents64 step. */
static foreactor_readiness step_open_arguments(const foreactor_visit *visit, foreactor_call *call) {
  const loop_state *state = visit->scope_state;
  if (visit->iteration[0] >= state->count) return FOREACTOR_NEVER;
  call->path = state->target.path;
  call->flags = step_open_flags(state->call);
  call->mode = 0;
  return FOREACTOR_READY;
}

static void step_open_result(const foreactor_visit *visit, int64_t result) {
  loop_state *state = visit->scope_state;
  state->opened_fd = (int)result;
  state->opened_step = visit->iteration[0];
}

/* The calls after the open (getdents64, close) name the descriptor it
 * returned: known once the program has made this step's open. */
static foreactor_readiness step_after_open_arguments(const foreactor_visit *visit,
                                                     foreactor_call *call) {
  const loop_state *state = visit->scope_state;
  if (visit->iteration[0] >= state->count) return FOREACTOR_NEVER;
  if (state->opened_step != visit->iteration[0] || state->opened_fd < 0) {
    return FOREACTOR_NOT_YET;
  }
  call->fd = state->opened_fd;
  call->length = kDirectoryBufferBytes;
  return FOREACTOR_READY;
}

/* Child 0 goes around the loop again, child 1 leaves it. */
static int loop_more_choice(const foreactor_visit *visit) {
  const loop_state *state = visit->scope_state;
  return visit->iteration[0] + 1 < state->count ? 0 : 1;
}

/* An open whose arguments are never known: no call of the loop matches it. */
static foreactor_readiness unrelated_open_arguments(const foreactor_visit *visit,
                                                    foreactor_call *call) {
  (void)visit;
  (void)call;
  return FOREACTOR_NOT_YET;
}

/* Builds the graph for `mode` (foreign or matching); NULL on failure. */
static foreactor_graph *build_graph(const foreactor_api *api, run_mode mode, call_kind call) {
  char error[256];
  foreactor_graph *graph = NULL;
  if (mode == MODE_FOREIGN) {
    graph = api->graph_create("overhead_foreign");
    if (graph == NULL) return NULL;
    int open_node = api->add_syscall(graph, "unrelated_open", FOREACTOR_CALL_OPEN,
                                     unrelated_open_arguments, NULL, NULL);
    api->set_next(graph, FOREACTOR_START_NODE, open_node, 0);
    api->set_next(graph, open_node, FOREACTOR_END_NODE, 0);
  } else {
    graph = api->graph_create("overhead_matching");
    if (graph == NULL) return NULL;
    /* The step's calls in order: its first node and its last. */
    int first = -1;
    int last = -1;
    if (call == CALL_OPEN || call == CALL_GETDENTS64) {
      first = api->add_syscall(graph, "step_open", FOREACTOR_CALL_OPEN, step_open_arguments,
                               step_open_result, NULL);
      last = first;
      if (call == CALL_GETDENTS64) {
        int read_node = api->add_syscall(graph, "step_getdents64", FOREACTOR_CALL_GETDENTS64,
                                         step_after_open_arguments, NULL, NULL);
        api->set_next(graph, last, read_node, 0);
        last = read_node;
      }
      int close_node = api->add_syscall(graph, "step_close", FOREACTOR_CALL_CLOSE,
                                        step_after_open_arguments, NULL, NULL);
      api->set_next(graph, last, close_node, 0);
      last = close_node;
    } else {
      foreactor_call_type type = call == CALL_PREAD    ? FOREACTOR_CALL_PREAD
                                 : call == CALL_FSTAT  ? FOREACTOR_CALL_FSTAT
                                 : call == CALL_PWRITE ? FOREACTOR_CALL_PWRITE
                                                       : FOREACTOR_CALL_FSTATAT;
      first = api->add_syscall(graph, "loop_call", type, loop_call_arguments, NULL, NULL);
      last = first;
    }
    int more = api->add_branch(graph, "more", loop_more_choice, NULL);
    api->set_next(graph, FOREACTOR_START_NODE, first, 0);
    api->set_next(graph, last, more, 0);
    api->add_child(graph, more, first, 0);
    api->add_child(graph, more, FOREACTOR_END_NODE, 0);
  }
  if (api->finish(graph, error, sizeof error) != 0) {
    fprintf(stderr, "overhead: invalid graph: %s\n", error);
    return NULL;
  }
  return graph;
}

/* Opens `target`'s path, reads the directory once when `call` is
 * CALL_GETDENTS64, and closes it; returns 1 when a call failed. */
static uint64_t open_step(call_kind call, call_target target) {
  static char entries[kDirectoryBufferBytes];
  int fd = open(target.path, step_open_flags(call));
  if (fd < 0) return 1;
  uint64_t failures = 0;
  if (call == CALL_GETDENTS64) failures += getdents64(fd, entries, sizeof entries) <= 0;
  failures += close(fd) != 0;
  return failures != 0;
}

/* Makes `count` steps; returns how many of them failed. */
static uint64_t run_loop(call_kind call, call_target target, uint64_t count) {
  uint64_t failures = 0;
  char byte;
  struct stat status;
  for (uint64_t i = 0; i < count; i++) {
    switch (call) {
      case CALL_PREAD:
        failures += pread(target.fd, &byte, 1, 0) != 1;
        break;
      case CALL_FSTAT:
        failures += fstat(target.fd, &status) != 0;
        break;
      case CALL_FSTATAT:
        failures += fstatat(AT_FDCWD, target.path, &status, 0) != 0;
        break;
      case CALL_PWRITE:
        failures += pwrite(target.fd, &kWrittenByte, 1, 0) != 1;
        break;
      case CALL_OPEN:
      case CALL_GETDENTS64:
        failures += open_step(call, target);
        break;
    }
  }
  return failures;
}

/* One scope per call (MODE_SCOPED), or per call the gate opens for. */
static uint64_t run_scope_per_call(const foreactor_api *api, foreactor_graph *graph, int gated,
                                   call_kind call, call_target target, uint64_t count) {
  uint64_t failures = 0;
  loop_state state = {call, target, 1, -1, 0};
  for (uint64_t i = 0; i < count; i++) {
    if (gated && !api->scope_gate(graph)) {
      failures += run_loop(call, target, 1);
      continue;
    }
    api->scope_enter(graph, &state);
    failures += run_loop(call, target, 1);
    api->scope_exit(graph);
  }
  return failures;
}

static uint64_t run_once(const foreactor_api *api, foreactor_graph *graph, run_mode mode,
                         call_kind call, call_target target, uint64_t count) {
  if (mode == MODE_SCOPED || mode == MODE_GATED) {
    return run_scope_per_call(api, graph, mode == MODE_GATED, call, target, count);
  }
  loop_state state = {call, target, count, -1, 0};
  if (graph != NULL) api->scope_enter(graph, &state);
  uint64_t failures = run_loop(call, target, count);
  if (graph != NULL) api->scope_exit(graph);
  return failures;
}

static double now_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec * 1e9 + (double)now.tv_nsec;
}

static int usage(const char *program) {
  fprintf(stderr,
          "usage: %s pread|fstat|fstatat|pwrite|open|getdents64 "
          "plain|foreign|matching|scoped|gated COUNT FILE\n",
          program);
  return 2;
}

int main(int argc, char **argv) {
  if (argc != 5) return usage(argv[0]);
  static const char *const kCallNames[] = {"pread",  "fstat", "fstatat",
                                           "pwrite", "open",  "getdents64"};
  int call_index = -1;
  for (int i = 0; i < (int)(sizeof kCallNames / sizeof kCallNames[0]); i++) {
    if (strcmp(argv[1], kCallNames[i]) == 0) call_index = i;
  }
  if (call_index < 0) return usage(argv[0]);
  call_kind call = (call_kind)call_index;
  run_mode mode;
  if (strcmp(argv[2], "plain") == 0) {
    mode = MODE_PLAIN;
  } else if (strcmp(argv[2], "foreign") == 0) {
    mode = MODE_FOREIGN;
  } else if (strcmp(argv[2], "matching") == 0) {
    mode = MODE_MATCHING;
  } else if (strcmp(argv[2], "scoped") == 0) {
    mode = MODE_SCOPED;
  } else if (strcmp(argv[2], "gated") == 0) {
    mode = MODE_GATED;
  } else {
    return usage(argv[0]);
  }
  char *end = NULL;
  unsigned long long count = strtoull(argv[3], &end, 10);
  if (end == argv[3] || *end != '\0' || count == 0) return usage(argv[0]);

  /* The steps of open and getdents64 open the path themselves; the
   * descriptor here only checks that it can be opened. */
  call_target target = {open(argv[4], call == CALL_PWRITE ? O_RDWR : step_open_flags(call)),
                        argv[4]};
  if (target.fd < 0) {
    perror(argv[4]);
    return 1;
  }
  foreactor_api api = {0};
  foreactor_graph *graph = NULL;
  if (mode != MODE_PLAIN) {
    if (find_api(&api) != 0) return 1;
    graph = build_graph(&api, mode, call);
    if (graph == NULL) return 1;
  }

  uint64_t failures = run_once(&api, graph, mode, call, target, kWarmUpSteps);
  double start = now_ns();
  failures += run_once(&api, graph, mode, call, target, count);
  double elapsed = now_ns() - start;

  printf("ns_per_call %.2f\n", elapsed / (double)(count * calls_per_step(call)));
  close(target.fd);
  if (failures != 0) {
    fprintf(stderr, "overhead: %llu calls failed\n", (unsigned long long)failures);
    return 1;
  }
  return 0;
}
