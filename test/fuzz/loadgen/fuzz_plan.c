/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_plan.c - libFuzzer target: the plan parser of reqsched-loadc
 * (loadgen/plan.c), one line at a time as loadc.c's on_plan() feeds it.
 *
 * Input: plan text; each line (at most PLAN_LINE_MAX bytes) is parsed.
 * A line accepted must hold what plan.h promises: pointers into the line,
 * numbers in their ranges, a known kind.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int inside(const char *p, const char *line, size_t n)
{
	return !p || (p >= line && p < line + n);
}

static void check(const struct plan_line *pl, const char *line, size_t n)
{
	if (!inside(pl->name, line, n) || !inside(pl->id, line, n) ||
	    !inside(pl->text, line, n) || !inside(pl->auth, line, n) ||
	    !inside(pl->method, line, n))
		abort();
	if (pl->kind > PL_STEP || !isfinite(pl->t1) || !isfinite(pl->t2))
		abort();
	if (pl->kind == PL_CLASS && (pl->n < 1 || pl->n > PLAN_MAX_CONNECTIONS))
		abort();
	if ((pl->kind == PL_OBJ || pl->kind == PL_STEP) &&
	    (pl->n < 0 || pl->status < 100 || pl->status > 999 || !pl->method || !pl->text))
		abort();
	if (pl->kind == PL_PAGE && (pl->objects < 1 || pl->t1 < 0))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char line[PLAN_LINE_MAX + 1];
	size_t i = 0;

	while (i < size) {
		const uint8_t *nl = memchr(data + i, '\n', size - i);
		size_t n = (nl ? (size_t)(nl - data) : size) - i;
		struct plan_line pl;
		const char *err;

		if (n > PLAN_LINE_MAX)
			n = PLAN_LINE_MAX;
		memcpy(line, data + i, n);
		line[n] = '\0';
		if (!plan_parse(line, &pl, &err))
			check(&pl, line, n + 1);
		else if (!err || !*err)
			abort();
		i += (nl ? (size_t)(nl - data) + 1 : size) - i;
	}
	return 0;
}
