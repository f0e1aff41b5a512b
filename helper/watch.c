/* SPDX-License-Identifier: GPL-2.0-or-later */
/* watch.c - reload the mapping file when it changes. */
#include "watch.h"

#include <errno.h>
#include <string.h>
#include <time.h>

static uint64_t ns_since(const struct timespec *a, const struct timespec *b)
{
	return (uint64_t)(b->tv_sec - a->tv_sec) * 1000000000u + (uint64_t)b->tv_nsec -
	       (uint64_t)a->tv_nsec;
}

void rs_watch_init(struct rs_watch *w, const char *path, const struct rs_classmap_opts *opts,
		   double interval_s, FILE *log, bool quiet)
{
	memset(w, 0, sizeof(*w));
	w->path = path;
	if (opts)
		w->opts = *opts;
	w->interval_ns = interval_s > 0 ? (uint64_t)(interval_s * 1e9) : 0;
	w->log = log;
	w->quiet = quiet;
}

bool rs_watch_stat_differs(const struct stat *a, const struct stat *b)
{
	return a->st_dev != b->st_dev || a->st_ino != b->st_ino || a->st_size != b->st_size ||
	       a->st_mtim.tv_sec != b->st_mtim.tv_sec || a->st_mtim.tv_nsec != b->st_mtim.tv_nsec ||
	       a->st_ctim.tv_sec != b->st_ctim.tv_sec || a->st_ctim.tv_nsec != b->st_ctim.tv_nsec;
}

static void report_failure(struct rs_watch *w, int err)
{
	if (w->log && err != w->last_errno)
		fprintf(w->log, "%s: cannot read mapping file (%s); keeping the %s table\n",
			w->path, strerror(err), w->have_st ? "previous" : "empty");
	w->last_errno = err;
}

static void report_success(struct rs_watch *w, const struct rs_classmap *m, uint64_t ns)
{
	const struct rs_load_stats *s = &m->stats;

	if (!w->log || w->quiet)
		return;
	fprintf(w->log,
		"%s: loaded %zu lines: %zu IPv4, %zu IPv6, %zu logins, default %s, "
		"%zu malformed, %zu duplicates, %zu classes, %.1f ms\n",
		w->path, s->lines, s->v4, s->v6, s->logins,
		m->default_cls >= 0 ? rs_classmap_class_name(m, m->default_cls) : "(none)",
		s->malformed, s->duplicates, m->nclasses, (double)ns / 1e6);
}

enum rs_watch_result rs_watch_load(struct rs_watch *w, struct rs_classmap **map)
{
	struct stat before, after;
	struct timespec t0, t1;
	struct rs_classmap *m;

	if (stat(w->path, &before) < 0) {
		report_failure(w, errno);
		return RS_WATCH_FAILED;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	m = rs_classmap_load(w->path, &w->opts, w->log);
	if (!m) {
		report_failure(w, errno ? errno : EIO);
		return RS_WATCH_FAILED;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	rs_classmap_free(*map);
	*map = m;
	w->last_errno = 0;
	/* Remember the identity seen before reading: if the file changed while
	 * it was read, the next poll sees a difference and reads it again. */
	w->st = before;
	w->have_st = true;
	if (stat(w->path, &after) == 0 && rs_watch_stat_differs(&before, &after))
		memset(&w->st, 0, sizeof(w->st));
	report_success(w, m, ns_since(&t0, &t1));
	return RS_WATCH_RELOADED;
}

enum rs_watch_result rs_watch_poll(struct rs_watch *w, struct rs_classmap **map,
				   uint64_t now_ns)
{
	struct stat st;

	if (w->checked_once && now_ns - w->last_check_ns < w->interval_ns)
		return RS_WATCH_UNCHANGED;
	w->checked_once = true;
	w->last_check_ns = now_ns;
	if (stat(w->path, &st) < 0) {
		report_failure(w, errno);
		return RS_WATCH_FAILED;
	}
	if (w->have_st && w->last_errno == 0 && !rs_watch_stat_differs(&st, &w->st))
		return RS_WATCH_UNCHANGED;
	return rs_watch_load(w, map);
}
