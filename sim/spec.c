/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spec.c - parse a simulator run spec. One directive per line, '#' starts
 * a comment:
 *
 *   seed N                     link_bps BPS            duration SECONDS
 *   mode ordinary|msf|rfq|drr  window wrc-mult|wrc-aimd|rtc|fixed N
 *   sff 0|1                    target_util 0..1        update_interval S
 *   K X                        max_window X            compensation 0|1
 *   cbr BPS PERIOD             (off for the first PERIOD, then on/off)
 *   cbr_accounting foreign|none|counter  (counter: the library reads the
 *                              whole link, cross traffic included, through
 *                              rs_on_link_bytes() with RS_LINK_COUNTER)
 *   sample S                   report_granularity S    requests 0|1
 *   queue_timeout S            abort_fraction P        patience P MEAN
 *   class NAME WEIGHT
 *   active CLASS START END     (repeatable; default: whole run)
 *   users CLASS COUNT backlog DEPTH|think MEAN|interval MEAN|batch N
 *         [size lognormal MU SIGMA | size fixed BYTES] [bias B] [label L]
 *   server DELAY_S CAP_BPS     (CAP 0 = unlimited)
 *   reweight T CLASS WEIGHT    (rs_reconfigure() at T with the new weight)
 */
#define _POSIX_C_SOURCE 200809L	/* strtok_r */
#include <stdlib.h>
#include <string.h>

#include "spec.h"

#define MAX_TOK 24

static void spec_defaults(struct spec *sp)
{
	memset(sp, 0, sizeof(*sp));
	sp->seed = 1;
	sp->duration = 100;
	strcpy(sp->policy, "msf");
	strcpy(sp->window, "wrc-mult");
	sp->target_util = 0.98;
	sp->update_interval = 5;
	sp->K = 2;
	sp->compensation = -1;
	sp->cbr_foreign = true;
	sp->sample = 5;
	sp->report_gran = 0.01;
	sp->emit_requests = true;
}

static int num(const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	return end != s && *end == '\0' ? 0 : -1;
}

static int find_class(const struct spec *sp, const char *name)
{
	for (int i = 0; i < sp->n_classes; i++)
		if (!strcmp(sp->classes[i].name, name))
			return i;
	return -1;
}

/* users CLASS COUNT KIND PARAM [size ...] [bias B] [label L] */
static const char *parse_users(struct spec *sp, char **tok, int n)
{
	struct spec_group *g;
	double v;
	int i;

	if (n < 5)
		return "users needs CLASS COUNT KIND PARAM";
	if (sp->n_groups == SPEC_MAX_GROUPS)
		return "too many users lines";
	g = &sp->groups[sp->n_groups];
	*g = (struct spec_group){ .size_a = 9.357, .size_b = 1.318 };
	g->cls = find_class(sp, tok[1]);
	if (g->cls < 0)
		return "users: unknown class (define it with 'class' first)";
	if (num(tok[2], &v) || v < 1 || v > 100000)
		return "users: COUNT must be 1..100000";
	g->count = (unsigned)v;
	if (num(tok[4], &v) || v <= 0)
		return "users: PARAM must be > 0";
	if (!strcmp(tok[3], "backlog") || !strcmp(tok[3], "batch")) {
		g->kind = !strcmp(tok[3], "backlog") ?
			USER_BACKLOG : USER_BATCH;
		if (v != (unsigned)v)
			return "users: depth must be an integer";
		g->depth = (unsigned)v;
	} else if (!strcmp(tok[3], "think")) {
		g->kind = USER_THINK;
		g->param = v;
	} else if (!strcmp(tok[3], "interval")) {
		g->kind = USER_INTERVAL;
		g->param = v;
	} else {
		return "users: KIND must be backlog|think|interval|batch";
	}
	snprintf(g->label, sizeof(g->label), "%s", tok[1]);
	for (i = 5; i < n; i++) {
		if (!strcmp(tok[i], "size") && i + 2 < n &&
		    !strcmp(tok[i + 1], "lognormal") && i + 3 < n) {
			double mu, sigma;

			if (num(tok[i + 2], &mu) || num(tok[i + 3], &sigma) ||
			    sigma < 0)
				return "users: size lognormal MU SIGMA";
			g->size_kind = SIZE_LOGNORMAL;
			g->size_a = mu;
			g->size_b = sigma;
			i += 3;
		} else if (!strcmp(tok[i], "size") && i + 2 < n &&
			   !strcmp(tok[i + 1], "fixed")) {
			if (num(tok[i + 2], &v) || v < 1)
				return "users: size fixed BYTES (>= 1)";
			g->size_kind = SIZE_FIXED;
			g->size_a = v;
			i += 2;
		} else if (!strcmp(tok[i], "bias") && i + 1 < n) {
			if (num(tok[i + 1], &g->bias) || g->bias <= 0)
				return "users: bias must be > 0";
			i++;
		} else if (!strcmp(tok[i], "label") && i + 1 < n) {
			snprintf(g->label, sizeof(g->label), "%s", tok[i + 1]);
			i++;
		} else {
			return "users: unknown option";
		}
	}
	sp->n_groups++;
	return NULL;
}

static const char *parse_line(struct spec *sp, char **tok, int n)
{
	const char *k = tok[0];
	double v = 0, v2 = 0;

	if (n >= 2 && strcmp(k, "mode") && strcmp(k, "window") &&
	    strcmp(k, "class") && strcmp(k, "active") &&
	    strcmp(k, "users") && strcmp(k, "cbr_accounting") &&
	    strcmp(k, "reweight") &&
	    num(tok[1], &v))
		return "value is not a number";
	if (!strcmp(k, "seed") && n == 2)
		sp->seed = (uint64_t)v;
	else if (!strcmp(k, "link_bps") && n == 2 && v > 0)
		sp->link_bps = v;
	else if (!strcmp(k, "duration") && n == 2 && v > 0)
		sp->duration = v;
	else if (!strcmp(k, "mode") && n == 2) {
		sp->ordinary = !strcmp(tok[1], "ordinary");
		if (!sp->ordinary)
			snprintf(sp->policy, sizeof(sp->policy), "%s", tok[1]);
	} else if (!strcmp(k, "window") && (n == 2 || n == 3)) {
		snprintf(sp->window, sizeof(sp->window), "%s", tok[1]);
		if (n == 3) {
			if (num(tok[2], &v) || v < 1)
				return "window fixed N: N >= 1";
			sp->fixed_window = (unsigned)v;
		}
	} else if (!strcmp(k, "sff") && n == 2)
		sp->sff = v != 0;
	else if (!strcmp(k, "target_util") && n == 2 && v > 0 && v <= 1)
		sp->target_util = v;
	else if (!strcmp(k, "update_interval") && n == 2 && v > 0)
		sp->update_interval = v;
	else if (!strcmp(k, "K") && n == 2 && v >= 1)
		sp->K = v;
	else if (!strcmp(k, "max_window") && n == 2 && v >= 0)
		sp->max_window = v;
	else if (!strcmp(k, "compensation") && n == 2)
		sp->compensation = v != 0;
	else if (!strcmp(k, "cbr") && n == 3 && !num(tok[2], &v2) &&
		 v >= 0 && v2 > 0) {
		sp->cbr_bps = v;
		sp->cbr_period = v2;
	} else if (!strcmp(k, "cbr_accounting") && n == 2 &&
		   (!strcmp(tok[1], "foreign") || !strcmp(tok[1], "none") ||
		    !strcmp(tok[1], "counter"))) {
		sp->cbr_foreign = tok[1][0] == 'f';
		sp->link_counter = tok[1][0] == 'c';
	}
	else if (!strcmp(k, "sample") && n == 2 && v > 0)
		sp->sample = v;
	else if (!strcmp(k, "report_granularity") && n == 2 && v > 0)
		sp->report_gran = v;
	else if (!strcmp(k, "requests") && n == 2)
		sp->emit_requests = v != 0;
	else if (!strcmp(k, "queue_timeout") && n == 2 && v >= 0)
		sp->queue_timeout = v;
	else if (!strcmp(k, "abort_fraction") && n == 2 && v >= 0 && v <= 1)
		sp->abort_fraction = v;
	else if (!strcmp(k, "patience") && n == 3 && !num(tok[2], &v2) &&
		 v >= 0 && v <= 1 && v2 > 0) {
		sp->patience_fraction = v;
		sp->patience_mean = v2;
	}
	else if (!strcmp(k, "class") && n == 3) {
		struct spec_class *c = &sp->classes[sp->n_classes];

		if (sp->n_classes == SPEC_MAX_CLASSES)
			return "too many classes";
		if (find_class(sp, tok[1]) >= 0)
			return "duplicate class name";
		if (num(tok[2], &v) || v <= 0)
			return "class weight must be > 0";
		*c = (struct spec_class){ .weight = v };
		snprintf(c->name, sizeof(c->name), "%s", tok[1]);
		sp->n_classes++;
	} else if (!strcmp(k, "active") && n == 4) {
		int ci = find_class(sp, tok[1]);
		struct spec_class *c;

		if (ci < 0)
			return "active: unknown class";
		c = &sp->classes[ci];
		if (c->n_active == SPEC_MAX_ACTIVE)
			return "active: too many intervals";
		if (num(tok[2], &v) || num(tok[3], &v2) || v < 0 || v2 <= v)
			return "active: need 0 <= START < END";
		c->active[c->n_active++] = (struct spec_interval){ v, v2 };
	} else if (!strcmp(k, "reweight") && n == 4) {
		struct spec_reweight *rw = &sp->reweights[sp->n_reweights];

		if (sp->n_reweights == SPEC_MAX_REWEIGHT)
			return "too many reweight lines";
		if (num(tok[1], &rw->t) || rw->t < 0)
			return "reweight: T must be >= 0";
		rw->cls = find_class(sp, tok[2]);
		if (rw->cls < 0)
			return "reweight: unknown class";
		if (num(tok[3], &rw->weight) || rw->weight <= 0)
			return "reweight: weight must be > 0";
		sp->n_reweights++;
	} else if (!strcmp(k, "users"))
		return parse_users(sp, tok, n);
	else if (!strcmp(k, "server") && n == 3) {
		if (sp->n_servers == SPEC_MAX_SERVERS)
			return "too many servers";
		if (num(tok[2], &v2) || v < 0 || v2 < 0)
			return "server DELAY CAP: both >= 0";
		sp->servers[sp->n_servers++] =
			(struct spec_server){ .delay = v, .cap_bps = v2 };
	} else
		return "unknown directive or bad value";
	return NULL;
}

static const char *check(const struct spec *sp)
{
	if (sp->link_bps <= 0)
		return "link_bps is required";
	if (!sp->n_classes)
		return "at least one class is required";
	if (!sp->n_groups)
		return "at least one users line is required";
	if (!sp->n_servers)
		return "at least one server is required";
	if (!strcmp(sp->window, "fixed") && !sp->fixed_window)
		return "window fixed needs N";
	return NULL;
}

int spec_split(char *line, char **tok, int max)
{
	char *p = strchr(line, '#'), *save = NULL;
	int n = 0;

	if (p)
		*p = '\0';
	for (p = strtok_r(line, " \t\r\n", &save); p && n < max;
	     p = strtok_r(NULL, " \t\r\n", &save))
		tok[n++] = p;
	return n;
}

int spec_read(struct spec *sp, FILE *in, const char *name, FILE *err)
{
	char line[1024];
	int lineno = 0;
	const char *e;

	spec_defaults(sp);
	while (fgets(line, sizeof(line), in)) {
		char *tok[MAX_TOK];
		int n;

		lineno++;
		n = spec_split(line, tok, MAX_TOK);
		if (!n)
			continue;
		e = parse_line(sp, tok, n);
		if (e) {
			fprintf(err, "%s:%d: %s: '%s'\n", name, lineno, e,
				tok[0]);
			return -1;
		}
	}
	e = check(sp);
	if (e) {
		fprintf(err, "%s: %s\n", name, e);
		return -1;
	}
	return 0;
}
