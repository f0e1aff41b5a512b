/* SPDX-License-Identifier: GPL-2.0-or-later */
/* watch.h - reload the mapping file when it changes.
 *
 * The file is stat()ed at most once per interval (checked when a batch of
 * requests arrives); any change of device, inode, size, mtime or ctime
 * triggers a reload. A reload that cannot read the file keeps the previous
 * table and is retried at the next check (the error is printed once until
 * it changes). Invariant: *map always points at a complete table, or is
 * NULL only before the first successful load.
 */
#ifndef RS_HELPER_WATCH_H
#define RS_HELPER_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "classmap.h"

struct rs_watch {
	const char *path;
	struct rs_classmap_opts opts;
	uint64_t interval_ns;	/* minimum time between two stat() calls */
	uint64_t last_check_ns;
	bool checked_once;
	struct stat st;		/* identity of the file the current map came from */
	bool have_st;
	int last_errno;		/* of the last failed attempt, 0 after a success */
	bool quiet;		/* no summary line after a successful load */
	FILE *log;
};

enum rs_watch_result {
	RS_WATCH_UNCHANGED,
	RS_WATCH_RELOADED,
	RS_WATCH_FAILED,	/* file unreadable; the old map is kept */
};

void rs_watch_init(struct rs_watch *w, const char *path, const struct rs_classmap_opts *opts,
		   double interval_s, FILE *log, bool quiet);

/* True when two stats describe different file contents (or files). */
bool rs_watch_stat_differs(const struct stat *a, const struct stat *b);

/* Load the file unconditionally, replacing *map on success. */
enum rs_watch_result rs_watch_load(struct rs_watch *w, struct rs_classmap **map);

/* At time now_ns (monotonic), reload when the interval has passed and the
 * file changed. */
enum rs_watch_result rs_watch_poll(struct rs_watch *w, struct rs_classmap **map,
				   uint64_t now_ns);

#endif
