/* SPDX-License-Identifier: GPL-2.0-or-later */
/* http.c - incremental HTTP/1.x response parser (http.h). Invariant: buf
 * holds only the unfinished head or line (len < its limit), a head without
 * NUL bytes (so its string functions see all of it); body bytes are
 * counted, never kept. */
#include "http.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void resp_start(struct resp *r, int head_only)
{
	char *buf = r->buf;
	size_t cap = r->cap;

	memset(r, 0, sizeof(*r));
	r->buf = buf;
	r->cap = cap;
	r->head_only = head_only;
}

void resp_free(struct resp *r)
{
	free(r->buf);
	r->buf = NULL;
	r->cap = 0;
}

static int keep(struct resp *r, const char *p, size_t n, size_t max)
{
	if (r->len + n > max)
		return -1;
	if (r->len + n + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 512;
		char *b;

		while (cap < r->len + n + 1)
			cap *= 2;
		b = realloc(r->buf, cap);
		if (!b)
			return -1;
		r->buf = b;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, p, n);
	r->len += n;
	r->buf[r->len] = '\0';
	return 0;
}

/* does the comma/space-separated value v contain word (any case) */
static int has_word(const char *v, const char *word)
{
	size_t n = strlen(word);

	for (; *v; v++)
		if (!strncasecmp(v, word, n))
			return 1;
	return 0;
}

/* the head in buf (ending with the blank line): status, framing, keep */
static int parse_head(struct resp *r, const char **err)
{
	char *line = r->buf, *next, *end;
	int chunked = 0, has_len = 0, v11, close = 0;
	long long clen = 0;

	next = strstr(line, "\r\n");
	*next = '\0';
	if (strncmp(line, "HTTP/", 5) || !(end = strchr(line, ' '))) {
		*err = "ValueError: bad status line";
		return -1;
	}
	v11 = end - line == 8 && !strncmp(line, "HTTP/1.1", 8);
	while (*end == ' ')
		end++;
	if (!isdigit((unsigned char)*end)) {
		*err = "ValueError: bad status line";
		return -1;
	}
	r->status = (int)strtol(end, &end, 10);
	if ((*end && *end != ' ') || r->status > 999) {
		*err = "ValueError: bad status line";
		return -1;
	}
	for (line = next + 2; *line; line = next + 2) {
		char *colon, *val;

		next = strstr(line, "\r\n");
		*next = '\0';
		if (!(colon = strchr(line, ':')))
			continue;
		*colon = '\0';
		for (val = colon + 1; *val == ' ' || *val == '\t'; val++)
			;
		while (colon > line && (colon[-1] == ' ' || colon[-1] == '\t'))
			*--colon = '\0';
		if (!strcasecmp(line, "connection"))
			close = has_word(val, "close");
		else if (!strcasecmp(line, "transfer-encoding"))
			chunked = has_word(val, "chunked");
		else if (!strcasecmp(line, "content-length")) {
			errno = 0;
			clen = strtoll(val, &end, 10);
			while (*end == ' ' || *end == '\t')
				end++;
			if (errno || end == val || *end || clen < 0) {
				*err = "ValueError: bad Content-Length";
				return -1;
			}
			has_len = 1;
		}
	}
	r->keep = v11 && !close;
	r->len = 0;
	if (r->head_only || r->status == 204 || r->status == 304 || r->status < 200)
		r->state = R_DONE;
	else if (chunked)
		r->state = R_CHUNK_SIZE;
	else if (has_len) {
		r->left = (uint64_t)clen;
		r->state = clen ? R_LEN : R_DONE;
	} else {
		r->keep = 0;
		r->state = R_EOF;
	}
	return 0;
}

/* bytes up to and including the next "\n" (or all) into buf; 1: a line is complete */
static long line_in(struct resp *r, const char *p, size_t n, size_t max, int *complete)
{
	const char *nl = memchr(p, '\n', n);
	size_t k = nl ? (size_t)(nl - p) + 1 : n;

	*complete = nl != NULL;
	return keep(r, p, k, max) ? -1 : (long)k;
}

static int chunk_size(struct resp *r, const char **err)
{
	char *end, *p = r->buf;
	unsigned long long v;

	r->buf[strcspn(r->buf, ";\r\n")] = '\0';
	while (*p == ' ' || *p == '\t')
		p++;
	errno = 0;
	v = *p ? strtoull(p, &end, 16) : 0;
	if (*p && (errno || end == p || (*end && *end != ' ' && *end != '\t') || *p == '-')) {
		*err = "ValueError: bad chunk size";
		return -1;
	}
	r->len = 0;
	r->left = v;
	r->state = v ? R_CHUNK_DATA : R_TRAILER;
	return 0;
}

long resp_feed(struct resp *r, const char *p, size_t n, const char **err)
{
	size_t used = 0;

	while (used < n && r->state != R_DONE) {
		const char *q = p + used;
		size_t m = n - used, k;
		long got;
		int complete;
		char *hend;

		switch (r->state) {
		case R_HEAD:
			/* keep what fits, then find the end: a head split anywhere */
			k = r->len;
			m = m < HTTP_HEAD_MAX - k ? m : HTTP_HEAD_MAX - k;
			if (memchr(q, '\0', m)) {
				*err = "ValueError: a NUL byte in the response head";
				return -1;
			}
			if (keep(r, q, m, HTTP_HEAD_MAX)) {
				*err = "MemoryError: response head";
				return -1;
			}
			hend = strstr(r->buf + (k > 3 ? k - 3 : 0), "\r\n\r\n");
			if (!hend) {
				if (r->len == HTTP_HEAD_MAX) {
					*err = "LimitOverrunError: response head over 64 KiB";
					return -1;
				}
				used += m;
				break;
			}
			used += (size_t)(hend + 4 - r->buf) - k;
			hend[2] = '\0';
			r->len = (size_t)(hend + 2 - r->buf);
			if (parse_head(r, err))
				return -1;
			break;
		case R_LEN:
		case R_CHUNK_DATA:
			k = m < r->left ? m : (size_t)r->left;
			r->left -= k;
			r->body += k;
			used += k;
			if (!r->left)
				r->state = r->state == R_LEN ? R_DONE : R_CHUNK_CRLF;
			if (r->state == R_CHUNK_CRLF)
				r->left = 2;
			break;
		case R_EOF:
			r->body += m;
			used += m;
			break;
		case R_CHUNK_CRLF:
			k = m < r->left ? m : (size_t)r->left;
			r->left -= k;
			used += k;
			if (!r->left)
				r->state = R_CHUNK_SIZE;
			break;
		case R_CHUNK_SIZE:
		case R_TRAILER:
			got = line_in(r, q, m, HTTP_LINE_MAX, &complete);
			if (got < 0) {
				*err = "LimitOverrunError: chunk line too long";
				return -1;
			}
			used += (size_t)got;
			if (!complete)
				break;
			if (r->state == R_CHUNK_SIZE) {
				if (chunk_size(r, err))
					return -1;
			} else {
				if (!strcmp(r->buf, "\r\n") || !strcmp(r->buf, "\n"))
					r->state = R_DONE;
				r->len = 0;
			}
			break;
		case R_DONE:
			break;
		}
	}
	return (long)used;
}

int resp_eof(struct resp *r)
{
	if (r->state != R_EOF)
		return -1;
	r->state = R_DONE;
	return 0;
}
