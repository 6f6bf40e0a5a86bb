/*
 * cp_copy_attach.c: tells the cp copy-loop graph (cp_copy_plugin.cc) which
 * options a copy runs with, by wrapping coreutils' copy() at link time:
 *
 *   -Wl,--wrap=copy
 *
 * copy() (src/copy.c, called by cp.c once per command-line source) takes
 * the struct cp_options that decide how copy_reg() moves the data.  Only
 * --sparse=never with --reflink=never gives the plain read/write loop the
 * graph describes; with any other setting the plugin stays out of the way.
 * Compiled against coreutils' own config.h and copy.h, so it reads the
 * options exactly as cp does; it only reads them.
 */
#include <config.h>

#include <stdbool.h>
#include <sys/types.h>

#include "backupfile.h"
#include "copy.h"
#include "hash.h"

#include "cp_copy_plugin.h"

bool __real_copy(char const *src_name, char const *dst_name, int dst_dirfd, char const *dst_relname,
                 int nonexistent_dst, const struct cp_options *options, bool *copy_into_self,
                 bool *rename_succeeded);
bool __wrap_copy(char const *src_name, char const *dst_name, int dst_dirfd, char const *dst_relname,
                 int nonexistent_dst, const struct cp_options *options, bool *copy_into_self,
                 bool *rename_succeeded);

bool __wrap_copy(char const *src_name, char const *dst_name, int dst_dirfd, char const *dst_relname,
                 int nonexistent_dst, const struct cp_options *options, bool *copy_into_self,
                 bool *rename_succeeded) {
  int plain_loop = options->sparse_mode == SPARSE_NEVER && options->reflink_mode == REFLINK_NEVER;
  int previous = cp_copy_set_plain_loop(plain_loop);
  bool copied = __real_copy(src_name, dst_name, dst_dirfd, dst_relname, nonexistent_dst, options,
                            copy_into_self, rename_succeeded);
  cp_copy_set_plain_loop(previous);
  return copied;
}
