/*
 * du_walk_attach.c: attaches the du walk graph (du_walk_plugin.cc) to an
 * unmodified du at link time:
 *
 *   -Wl,--wrap=rpl_fts_read -Wl,--wrap=rpl_fts_close
 *
 * (gnulib names its fts functions rpl_fts_*).  Compiled against coreutils'
 * own config.h and gnulib's fts_.h, so it reads the FTS and FTSENT
 * structures exactly as du's fts does; it only reads them.
 *
 * What fts does, for du (FTS_PHYSICAL | FTS_CWDFD | FTS_NOSTAT, deferred
 * stats): when it enters a directory it reads every entry into a list
 * linked through fts_link, in the order it will return them, without
 * stat'ing them.  du then takes them one by one; each one is stat'ed with
 * fstatat(fts_cwd_fd, fts_accpath, _, AT_SYMLINK_NOFOLLOW) before du uses
 * it (regular files through du's fts_set(FTS_AGAIN) + fts_read, directories
 * and unknown types inside fts_read).  A directory among them is descended
 * into right after its stat, so its children's stats come before those of
 * its later siblings.
 *
 * Hence, after each fts_read() returns an entry E in a directory, the next
 * stats are those of E (when not stat'ed yet) and of E's later siblings, up
 * to and including the first one that is (or may be) a directory.  Those
 * are recorded as expectations for the graph's next visits.  Returns that
 * do not continue the expected sequence (after a directory, a post-order
 * visit, an excluded file) start the expectations afresh.
 *
 * Not predicted (the walk then runs with plain calls): logical walks (-L),
 * walks without FTS_CWDFD, command-line arguments (root level).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "fts_.h"

#include "du_walk_plugin.h"

/* fts.c's private marks in fts_statp->st_size of a deferred entry. */
enum { DEFERRED_NO_STAT_REQUIRED = 1, DEFERRED_STAT_REQUIRED = 2 };

/* How many visits beyond the completed ones may be expected at once. */
enum { EXPECT_WINDOW = 256 };

FTSENT *__real_rpl_fts_read(FTS *fts);
int __real_rpl_fts_close(FTS *fts);
FTSENT *__wrap_rpl_fts_read(FTS *fts);
int __wrap_rpl_fts_close(FTS *fts);

/* Which entry each expected visit stats, by visit number modulo the ring. */
struct expected_entry {
  uint64_t visit;
  const FTSENT *entry;
};

static _Thread_local struct expected_entry expected_ring[EXPECT_WINDOW];
/* The next entry of the current directory list not yet expected, or NULL. */
static _Thread_local const FTSENT *next_unexpected;
static _Thread_local const FTS *walked_fts;

static int
deferred_entry (const FTSENT *entry)
{
  return entry->fts_info == FTS_NSOK
         && (entry->fts_statp->st_size == DEFERRED_STAT_REQUIRED
             || entry->fts_statp->st_size == DEFERRED_NO_STAT_REQUIRED);
}

/* Whether ENTRY was expected as visit VISIT. */
static int
expected_as (const FTSENT *entry, uint64_t visit)
{
  const struct expected_entry *slot = &expected_ring[visit % EXPECT_WINDOW];
  return slot->entry == entry && slot->visit == visit
         && visit < du_walk_expected_until ();
}

static int
walk_is_predictable (const FTS *fts)
{
  int options = fts->fts_options;
  return (options & FTS_CWDFD) && (options & FTS_PHYSICAL)
         && !(options & (FTS_NOCHDIR | FTS_LOGICAL));
}

/* Expects the stats of the list from next_unexpected on, within the window. */
static void
extend_expectations (const FTS *fts)
{
  uint64_t completed = du_walk_completed_visits ();
  uint64_t visit = du_walk_expected_until ();
  while (next_unexpected != NULL && visit + 2 < completed + EXPECT_WINDOW)
    {
      const FTSENT *entry = next_unexpected;
      if (entry->fts_instr == FTS_SKIP || !deferred_entry (entry))
        {
          /* fts would skip it or has stat'ed it already: stop guessing.  */
          next_unexpected = NULL;
          break;
        }
      if (du_walk_expect (visit, fts->fts_cwd_fd, entry->fts_accpath,
                          AT_SYMLINK_NOFOLLOW) != 0)
        {
          next_unexpected = NULL;
          break;
        }
      expected_ring[visit % EXPECT_WINDOW].visit = visit;
      expected_ring[visit % EXPECT_WINDOW].entry = entry;
      visit++;
      mode_t type = entry->fts_statp->st_mode & S_IFMT;
      if (type == S_IFDIR || type == 0)
        {
          /* Descended into (or possibly so) right after its stat.  */
          next_unexpected = NULL;
          break;
        }
      next_unexpected = entry->fts_link;
    }
}

/* Updates the expectations after fts_read returned ENTRY. */
static void
note_returned_entry (const FTS *fts, const FTSENT *entry)
{
  /* Without a scope (foreactor off, or no graph) nothing consumes the
     expectations: recording them would only cost time.  */
  if (!du_walk_active () || !walk_is_predictable (fts))
    return;
  uint64_t completed = du_walk_completed_visits ();
  int continues = expected_as (entry, completed)
                  || (completed > 0 && expected_as (entry, completed - 1));
  if (!continues)
    {
      du_walk_forget_from (completed);
      next_unexpected = NULL;
      if (entry->fts_level > FTS_ROOTLEVEL)
        {
          if (deferred_entry (entry))
            next_unexpected = entry;
          else if (entry->fts_info != FTS_D && entry->fts_info != FTS_DNR
                   && entry->fts_info != FTS_ERR)
            next_unexpected = entry->fts_link;
        }
    }
  extend_expectations (fts);
}

/* A new walk (another fts handle): the previous one's scope is over.  */
static void __attribute__ ((noinline))
start_walk (const FTS *fts)
{
  du_walk_end ();
  next_unexpected = NULL;
  walked_fts = fts;
}

/* fts_read with the walk's scope open: records what the returned entry
   tells about the stats to come.  */
static FTSENT * __attribute__ ((noinline))
read_in_scope (FTS *fts)
{
  FTSENT *entry = __real_rpl_fts_read (fts);
  int saved_errno = errno;
  if (entry == NULL)
    {
      du_walk_end ();
      next_unexpected = NULL;
    }
  else
    note_returned_entry (fts, entry);
  errno = saved_errno;
  return entry;
}

/* Whether the last fts_read returned a directory in preorder: the next one
   then reads that directory (opendir, getdents to the end).  */
static _Thread_local int directory_read_next;

/* An fts_read that reads a directory, timed: the graph issues none of its
   calls early, so its time (which, cold, is most of a walk's) stays out of
   the scope gate's comparison of stretches (du_walk_exclude_time).  */
static FTSENT * __attribute__ ((noinline))
read_directory (FTS *fts, int in_scope)
{
  uint64_t start = du_walk_clock ();
  FTSENT *entry = in_scope ? read_in_scope (fts) : __real_rpl_fts_read (fts);
  du_walk_exclude_time (du_walk_clock () - start);
  return entry;
}

/* Most calls, with the page cache hot, take the plain path: no scope, so
   nothing to record and no errno to keep.  */
FTSENT *
__wrap_rpl_fts_read (FTS *fts)
{
  if (walked_fts != fts)
    start_walk (fts);
  int in_scope = du_walk_before_read ();
  FTSENT *entry;
  if (directory_read_next)
    entry = read_directory (fts, in_scope);
  else if (in_scope)
    entry = read_in_scope (fts);
  else
    entry = __real_rpl_fts_read (fts);
  directory_read_next = entry != NULL && entry->fts_info == FTS_D;
  return entry;
}

int
__wrap_rpl_fts_close (FTS *fts)
{
  if (walked_fts == fts)
    {
      du_walk_end ();
      next_unexpected = NULL;
      walked_fts = NULL;
    }
  return __real_rpl_fts_close (fts);
}
