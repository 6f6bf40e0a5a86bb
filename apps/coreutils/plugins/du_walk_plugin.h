/*
 * du_walk_plugin.h: the seam between du's link-time attachment
 * (du_walk_attach.c, which knows gnulib's FTS structures) and the
 * foreaction graph of the walk (du_walk_plugin.cc, which knows foreactor).
 *
 * One walk is one fts handle, from its first fts_read() to its last; a
 * scope covers all of it or, when speculation does not pay, only some
 * stretches of it (the runtime's scope gate, one unit per fts_read()).  The graph is a loop of fstatat
 * nodes: visit k is the k-th fstatat of an entry that fts makes during the
 * scope.  The attachment tells the graph
 * which fstatat calls come next whenever it learns them (after each
 * fts_read() returns), by visit number.
 *
 * Single-threaded use per walk; state is per thread.
 */
#ifndef FOREACTOR_APPS_COREUTILS_DU_WALK_PLUGIN_H_
#define FOREACTOR_APPS_COREUTILS_DU_WALK_PLUGIN_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Called before each fts_read() of a walk: opens or closes the walk's scope
 * as foreactor_scope_gate() answers, so that one is open only while it
 * pays.  Never opens one while foreactor is off.  Returns du_walk_active().
 */
int du_walk_before_read(void);

/* Monotonic time in nanoseconds. */
uint64_t du_walk_clock(void);

/*
 * The last `nanoseconds` of the walk were spent in a call whose system
 * calls the graph does not issue early (a directory read): they do not count
 * in the stretch the scope gate is timing.
 */
void du_walk_exclude_time(uint64_t nanoseconds);

/*
 * Leaves the walk's scope if one is open, and forgets every expectation
 * (the walk ended, or du_walk_before_read() decided to rest).
 */
void du_walk_end(void);

/* Nonzero while a walk's scope is open on this thread. */
int du_walk_active(void);

/*
 * How many entry fstatat visits the program has completed in the current
 * walk: the number of the next visit.
 */
uint64_t du_walk_completed_visits(void);

/*
 * Drops every expectation for visits numbered `first_visit` or later
 * (expectations already handed to foreactor stay with it: a wrong one only
 * costs a mispredicted call).
 */
void du_walk_forget_from(uint64_t first_visit);

/*
 * Records that visit `visit` will be fstatat(dirfd, name, _, flags).  `name`
 * is copied.  Visits must be expected in increasing order, without gaps
 * after the last expected one, and at most 256 beyond the completed visits.
 * Returns 0, or -1 (the expectation is then simply not made) when `visit`
 * breaks those rules or `name` is longer than NAME_MAX.
 */
int du_walk_expect(uint64_t visit, int dirfd, const char *name, int flags);

/* Number of the visit after the last expected one (or completed visits). */
uint64_t du_walk_expected_until(void);

#ifdef __cplusplus
}
#endif

#endif /* FOREACTOR_APPS_COREUTILS_DU_WALK_PLUGIN_H_ */
