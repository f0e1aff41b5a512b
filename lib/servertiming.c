/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * servertiming.c - what a request cost the web server, as the server
 * reports it in a Server-Timing response header (W3C Server Timing):
 *
 *   Server-Timing: cpu;dur=12.5, disk;dur=0.3;desc="photo read", db;dur=53
 *
 * A metric named as one of the caller's resources carries in dur the % of
 * that resource's capacity the request held while it was served (the
 * page table's unit, doc/website-gateway.md); other metrics (db above)
 * are the application's own and ignored. The parser reads the header's
 * grammar (metric *( OWS ";" OWS name [ OWS "=" OWS token|quoted-string ] ),
 * entries separated by ","), never reads past len, and stores nothing.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

struct st_cursor {
	const char *p, *end;
};

static void skip_ows(struct st_cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

/* A token (up to a separator or white space): its start, its length. */
static size_t token(struct st_cursor *c, const char **start)
{
	*start = c->p;
	while (c->p < c->end && !strchr(" \t,;=\"", *c->p))
		c->p++;
	return (size_t)(c->p - *start);
}

/* A parameter value: a token or a quoted string (without its quotes;
 * a backslash escape is kept as written, a dur has none). */
static size_t value(struct st_cursor *c, const char **start)
{
	size_t n;

	if (c->p < c->end && *c->p == '"') {
		*start = ++c->p;
		while (c->p < c->end && *c->p != '"')
			c->p += (*c->p == '\\' && c->p + 1 < c->end) ? 2 : 1;
		n = (size_t)(c->p - *start);
		if (c->p < c->end)
			c->p++;		/* the closing quote */
		return n;
	}
	return token(c, start);
}

static int resource_of(const char *name, size_t n, const char *const *names,
		       unsigned nres)
{
	for (unsigned i = 0; i < nres; i++)
		if (names[i] && strlen(names[i]) == n &&
		    !strncasecmp(names[i], name, n))
			return (int)i;
	return -1;
}

/* dur as a percentage: 0 and *pct, or -1 (malformed). */
static int percent(const char *s, size_t n, double *pct)
{
	char buf[64], *end;
	double v;

	if (!s || !n || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (!isdigit((unsigned char)buf[0]) && buf[0] != '.')
		return -1;		/* no sign, no "inf", no "nan" */
	v = strtod(buf, &end);
	if (*end || !isfinite(v) || v < 0)
		return -1;
	*pct = v > 100 ? 100 : v;
	return 0;
}

unsigned rs_server_timing_parse(const char *value_str, size_t len,
				const char *const *names, unsigned n,
				double *pct, unsigned *found)
{
	struct st_cursor c = { value_str, value_str ? value_str + len : NULL };
	unsigned malformed = 0;

	if (found)
		*found = 0;
	if (!value_str || !names || !pct || !found)
		return 0;
	while (c.p < c.end) {
		const char *name, *dur = NULL;
		size_t nlen, dlen = 0;
		int res;

		skip_ows(&c);
		nlen = token(&c, &name);
		res = nlen ? resource_of(name, nlen, names, n) : -1;
		for (skip_ows(&c); c.p < c.end && *c.p == ';'; skip_ows(&c)) {
			const char *pname, *pval = NULL;
			size_t plen, vlen = 0;

			c.p++;
			skip_ows(&c);
			plen = token(&c, &pname);
			skip_ows(&c);
			if (c.p < c.end && *c.p == '=') {
				c.p++;
				skip_ows(&c);
				vlen = value(&c, &pval);
			}
			if (plen == 3 && !strncasecmp(pname, "dur", 3) && !dur) {
				dur = pval;
				dlen = vlen;
			}
		}
		if (res >= 0) {
			double v;

			if (percent(dur, dlen, &v)) {
				malformed++;
			} else {
				pct[res] = v;
				*found |= 1u << res;
			}
		}
		/* whatever is left of a malformed entry, up to the next one */
		while (c.p < c.end && *c.p != ',') {
			if (*c.p == '"')
				value(&c, &name);	/* a quoted ',' */
			else
				c.p++;
		}
		if (c.p < c.end)
			c.p++;
	}
	return malformed;
}
