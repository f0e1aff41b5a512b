/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fault_shim.c - LD_PRELOAD library for test_fail_open.py: makes chosen
 * libreqsched calls fail, as an internal error of the library would, so
 * that the tests can check what Squid does then (fail open). Nothing of it
 * is in libreqsched or Squid.
 *
 * While the file named by RS_FAULT_FILE exists, each function named on its
 * first line (space or comma separated, e.g. "rs_enqueue_cost rs_flow_open")
 * returns RS_ENOMEM without calling the library; every other call goes to
 * the real function. The file is read at every call, so a test can turn a
 * fault on and off while Squid runs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reqsched.h"

/* whether the fault file names the function */
static bool failing(const char *name)
{
	const char *path = getenv("RS_FAULT_FILE");
	char line[512], *tok, *save = NULL;
	FILE *f;
	bool hit = false;

	if (!path || !(f = fopen(path, "r")))
		return false;
	if (fgets(line, sizeof(line), f))
		for (tok = strtok_r(line, " ,\n", &save); tok && !hit;
		     tok = strtok_r(NULL, " ,\n", &save))
			hit = strcmp(tok, name) == 0;
	fclose(f);
	return hit;
}

/* the library's own function of that name */
static void *real(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);

	if (!fn) {
		fprintf(stderr, "fault_shim: no %s in the next library\n", name);
		abort();
	}
	return fn;
}

/* Defines NAME(ARGS) that fails while the fault file names it. */
#define FAULT(type, name, params, args)                                  \
	type name params                                                 \
	{                                                                \
		static type (*fn) params;                                \
		if (failing(#name))                                      \
			return RS_ENOMEM;                                \
		if (!fn)                                                 \
			*(void **)&fn = real(#name);                     \
		return fn args;                                          \
	}

FAULT(int, rs_enqueue_cost,
      (struct rs_sched *s, int cls, uint64_t user,
       const struct rs_req_info *info, const uint32_t *cost, void *cookie,
       rs_time_ns now, rs_id *id),
      (s, cls, user, info, cost, cookie, now, id))
FAULT(int, rs_reconfigure,
      (struct rs_sched *s, const struct rs_config *cfg,
       const char *const *names, const double *weights, int n,
       const char *default_name, rs_time_ns now),
      (s, cfg, names, weights, n, default_name, now))
FAULT(int, rs_flow_open,
      (struct rs_sched *s, rs_id req, int cls, uint64_t user, void *cookie,
       rs_time_ns now, rs_flow *f),
      (s, req, cls, user, cookie, now, f))
FAULT(int64_t, rs_flow_allowance,
      (struct rs_sched *s, rs_flow f, uint64_t want, rs_time_ns now),
      (s, f, want, now))
FAULT(int, rs_flow_read,
      (struct rs_sched *s, rs_flow f, uint64_t n, rs_time_ns now),
      (s, f, n, now))
FAULT(int, rs_on_first_byte,
      (struct rs_sched *s, rs_id id, int64_t content_length, rs_time_ns now),
      (s, id, content_length, now))
