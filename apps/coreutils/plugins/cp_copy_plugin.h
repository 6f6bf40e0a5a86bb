/*
 * cp_copy_plugin.h: the seam between cp's link-time attachment to copy()
 * (cp_copy_attach.c, which knows coreutils' struct cp_options) and the copy
 * loop's graph (cp_copy_plugin.cc).
 *
 * The graph describes only the plain loop of sparse_copy(): read a chunk,
 * write it, with no holes made and no copy_file_range.  cp runs that loop
 * for a regular file without holes when asked for --sparse=never and
 * --reflink=never, and the attachment says so for the duration of each
 * copy() call.  Per thread.
 */
#ifndef FOREACTOR_APPS_COREUTILS_CP_COPY_PLUGIN_H_
#define FOREACTOR_APPS_COREUTILS_CP_COPY_PLUGIN_H_

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Nonzero: the copies that follow use --sparse=never --reflink=never, so a
 * dense regular file is copied by the plain read/write loop.  Returns the
 * previous value (to restore it when copy() returns).
 */
int cp_copy_set_plain_loop(int plain_loop);

#ifdef __cplusplus
}
#endif

#endif /* FOREACTOR_APPS_COREUTILS_CP_COPY_PLUGIN_H_ */
