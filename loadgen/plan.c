/* SPDX-License-Identifier: GPL-2.0-or-later */
/* plan.c - parser of one plan line (plan.h). Invariant: on success every
 * pointer of the plan_line points into the line and every number is in
 * range; on failure nothing of pl is to be used. */
#include "plan.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 11

static int name_ok(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("._:@+-", *s)))
			return 0;
	return 1;
}

static int upper_ok(const char *s)
{
	for (; *s; s++)
		if (*s < 'A' || *s > 'Z')
			return 0;
	return 1;
}

/* a finite number in [lo, hi] */
static int num(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int integer(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* split at single spaces; every byte must be printable ASCII */
static int split(char *line, char **f, int *nf, const char **err)
{
	char *p = line;

	*nf = 0;
	for (char *q = line; *q; q++)
		if (*q < 0x20 || *q > 0x7e) {
			*err = "a byte that is not printable ASCII";
			return -1;
		}
	while (*p) {
		if (*nf == MAX_FIELDS) {
			*err = "too many fields";
			return -1;
		}
		f[(*nf)++] = p;
		p = strchr(p, ' ');
		if (!p)
			break;
		*p++ = '\0';
		if (!*p || *p == ' ') {
			*err = "an empty field";
			return -1;
		}
	}
	return 0;
}

static int parse_user(char **f, struct plan_line *pl, const char **err)
{
	pl->id = f[1];
	pl->name = f[2];
	if (!name_ok(pl->id) || !name_ok(pl->name)) {
		*err = "user: ID and CLASS are [A-Za-z0-9._:@+-]";
		return -1;
	}
	if (num(f[3], 0, 1e9, &pl->t1) || num(f[4], -1, 1e9, &pl->t2) ||
	    (pl->t2 < 0 && pl->t2 != -1)) {
		*err = "user: START >= 0, LEAVE >= 0 or -1";
		return -1;
	}
	pl->text = strcmp(f[5], "-") ? f[5] : NULL;
	if (strcmp(f[6], "0") && strcmp(f[6], "1")) {
		*err = "user: ARRIVAL is 0 or 1";
		return -1;
	}
	pl->n = f[6][0] == '1';
	return 0;
}

/* METHOD SIZE STATUS BODY MAXAGE URL from f (obj's, and step's last six) */
static int parse_request(char **f, struct plan_line *pl, const char **err)
{
	pl->method = f[0];
	pl->text = f[5];
	if (!upper_ok(pl->method) || strlen(pl->method) > 16) {
		*err = "METHOD is 1 to 16 capital letters";
		return -1;
	}
	if (integer(f[1], 0, 1000000000000L, &pl->n) || integer(f[2], 100, 999, &pl->status) ||
	    integer(f[3], 0, 1000000000000L, &pl->body) ||
	    integer(f[4], 0, 1000000000L, &pl->max_age)) {
		*err = "SIZE, STATUS (100-999), BODY, MAXAGE are integers in range";
		return -1;
	}
	if (strcmp(pl->method, "CONNECT") ? strncmp(pl->text, "http://", 7) != 0
					  : strchr(pl->text, '/') != NULL) {
		*err = "URL is http://... (CONNECT: HOST:PORT)";
		return -1;
	}
	return 0;
}

static int parse_replay(char **f, struct plan_line *pl, const char **err)
{
	pl->id = f[1];
	pl->name = f[2];
	if (!name_ok(pl->id) || !name_ok(pl->name) || inet_pton(AF_INET, f[3], &pl->addr) != 1 ||
	    (strcmp(f[4], "open") && strcmp(f[4], "closed")) ||
	    integer(f[5], 1, PLAN_MAX_CONNECTIONS, &pl->n) || num(f[6], 0, 1e9, &pl->t1)) {
		*err = "replay: ID CLASS IPV4 open|closed CONNS (1-64) START (>= 0)";
		return -1;
	}
	pl->closed = !strcmp(f[4], "closed");
	return 0;
}

static int parse_step(char **f, struct plan_line *pl, const char **err)
{
	if (parse_request(f + 5, pl, err))
		return -1;
	pl->name = f[1];
	pl->auth = strcmp(f[4], "-") ? f[4] : NULL;
	if (!name_ok(pl->name) || num(f[2], 0, 1e9, &pl->t1) || num(f[3], 0, 1e9, &pl->t2)) {
		*err = "step: USER AT (>= 0) THINK (>= 0)";
		return -1;
	}
	return 0;
}

int plan_parse(char *line, struct plan_line *pl, const char **err)
{
	static const struct { const char *word; enum plan_kind kind; int nf; } kinds[] = {
		{ "class", PL_CLASS, 3 }, { "addr", PL_ADDR, 3 }, { "user", PL_USER, 7 },
		{ "page", PL_PAGE, 6 }, { "obj", PL_OBJ, 7 }, { "end", PL_END, 2 },
		{ "start", PL_START, 1 }, { "replay", PL_REPLAY, 7 }, { "step", PL_STEP, 11 },
	};
	char *f[MAX_FIELDS];
	int nf;
	size_t k;

	memset(pl, 0, sizeof(*pl));
	if (!*line || *line == '#')
		return 0;
	if (split(line, f, &nf, err))
		return -1;
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (!strcmp(f[0], kinds[k].word))
			break;
	if (k == sizeof(kinds) / sizeof(kinds[0])) {
		*err = "unknown line kind";
		return -1;
	}
	if (nf != kinds[k].nf) {
		*err = "wrong number of fields";
		return -1;
	}
	pl->kind = kinds[k].kind;
	switch (pl->kind) {
	case PL_CLASS:
		pl->name = f[1];
		if (!name_ok(pl->name) || integer(f[2], 1, PLAN_MAX_CONNECTIONS, &pl->n)) {
			*err = "class: NAME [A-Za-z0-9._:@+-], CONNECTIONS 1-64";
			return -1;
		}
		return 0;
	case PL_ADDR:
		pl->name = f[1];
		if (!name_ok(pl->name) || inet_pton(AF_INET, f[2], &pl->addr) != 1) {
			*err = "addr: CLASS and an IPv4 address";
			return -1;
		}
		return 0;
	case PL_USER:
		return parse_user(f, pl, err);
	case PL_PAGE:
		pl->name = f[1];
		pl->id = f[2];
		if (!name_ok(pl->name) || !name_ok(pl->id) ||
		    integer(f[3], 1, 1000000000L, &pl->n) || num(f[4], 0, 1e9, &pl->t1) ||
		    integer(f[5], 1, 100000, &pl->objects)) {
			*err = "page: USER PAGEID SESSION (>= 1) THINK (>= 0) OBJECTS (>= 1)";
			return -1;
		}
		return 0;
	case PL_OBJ:
		return parse_request(f + 1, pl, err);
	case PL_REPLAY:
		return parse_replay(f, pl, err);
	case PL_STEP:
		return parse_step(f, pl, err);
	case PL_END:
		pl->name = f[1];
		if (!name_ok(pl->name)) {
			*err = "end: USER";
			return -1;
		}
		return 0;
	default:
		return 0;
	}
}
