/* SPDX-License-Identifier: GPL-2.0-or-later */
/* protocol.c - Squid external ACL helper protocol (request and reply lines). */
#include "protocol.h"

#include <string.h>

#include "escape.h"

struct span {
	char *s;
	size_t len;
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool all_digits(const struct span *t)
{
	if (t->len == 0 || t->len > RS_CHANNEL_MAX_DIGITS)
		return false;
	for (size_t i = 0; i < t->len; i++)
		if (t->s[i] < '0' || t->s[i] > '9')
			return false;
	return true;
}

/* Split into at most max tokens; returns how many were found. */
static size_t tokenize(char *line, size_t len, struct span *tok, size_t max)
{
	size_t n = 0, i = 0;

	while (i < len && n < max) {
		while (i < len && is_blank(line[i]))
			i++;
		if (i == len)
			break;
		tok[n].s = line + i;
		while (i < len && !is_blank(line[i]))
			i++;
		tok[n].len = (size_t)(line + i - tok[n].s);
		n++;
	}
	return n;
}

const char *rs_request_parse(char *line, size_t len, bool truncated, enum rs_chan_mode mode,
			     size_t want_keys, struct rs_request *req)
{
	struct span tok[RS_MAX_KEYS + 2];
	size_t n, first = 0;

	memset(req, 0, sizeof(*req));
	if (want_keys < 1)
		want_keys = 1;
	if (want_keys > RS_MAX_KEYS)
		want_keys = RS_MAX_KEYS;
	if (len > 0 && line[len - 1] == '\r')
		len--;

	n = tokenize(line, len, tok, want_keys + 2);
	if (n > 0 && mode != RS_CHAN_NEVER && all_digits(&tok[0]) &&
	    (mode == RS_CHAN_ALWAYS || n > 1)) {
		req->channel = tok[0].s;
		req->channel_len = tok[0].len;
		first = 1;
	}
	/* A cut line's last token may be partial; only drop it if it reaches
	 * the cut (a token followed by more tokens is complete). */
	if (truncated && n > first && tok[n - 1].s + tok[n - 1].len == line + len)
		n--;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return "control character in request";
	}
	if (mode == RS_CHAN_ALWAYS && !req->channel)
		return n == 0 ? "empty request" : "missing or bad channel ID";
	if (n <= first)
		return truncated ? "request line too long" : "empty request";

	for (size_t i = first; i < n && req->nkeys < want_keys; i++) {
		ssize_t dlen = rs_url_decode(tok[i].s, tok[i].len);

		if (dlen < 0) {
			if (req->nkeys == 0)
				return "bad %XX escape in key";
			break;	/* a later fallback token is merely unusable */
		}
		req->key[req->nkeys] = tok[i].s;
		req->key_len[req->nkeys] = (size_t)dlen;
		req->nkeys++;
	}
	return NULL;
}

/* Append s[0..len) to out at *pos; false when it does not fit. */
static bool put(char *out, size_t cap, size_t *pos, const char *s, size_t len)
{
	if (*pos + len > cap)
		return false;
	memcpy(out + *pos, s, len);
	*pos += len;
	return true;
}

static bool puts_(char *out, size_t cap, size_t *pos, const char *s)
{
	return put(out, cap, pos, s, strlen(s));
}

/* A message as a double-quoted value with \" and \\ escaped, control
 * characters dropped. */
static bool put_quoted(char *out, size_t cap, size_t *pos, const char *msg)
{
	if (!put(out, cap, pos, "\"", 1))
		return false;
	for (; *msg; msg++) {
		unsigned char c = (unsigned char)*msg;

		if (c < 0x20 || c == 0x7f)
			continue;
		if ((c == '"' || c == '\\') && !put(out, cap, pos, "\\", 1))
			return false;
		if (!put(out, cap, pos, msg, 1))
			return false;
	}
	return put(out, cap, pos, "\"", 1);
}

size_t rs_reply_format(char *out, size_t cap, const struct rs_request *req,
		       enum rs_verdict v, const char *arg)
{
	size_t pos = 0;
	bool ok = true;

	if (req && req->channel) {
		ok = put(out, cap, &pos, req->channel, req->channel_len) &&
		     put(out, cap, &pos, " ", 1);
	}
	switch (v) {
	case RS_REPLY_OK:
		ok = ok && puts_(out, cap, &pos, "OK tag=") && puts_(out, cap, &pos, arg) &&
		     puts_(out, cap, &pos, " reqsched_class=") && puts_(out, cap, &pos, arg);
		break;
	case RS_REPLY_ERR:
		ok = ok && puts_(out, cap, &pos, "ERR");
		break;
	case RS_REPLY_BH:
		ok = ok && puts_(out, cap, &pos, "BH message=") &&
		     put_quoted(out, cap, &pos, arg ? arg : "error");
		break;
	}
	ok = ok && put(out, cap, &pos, "\n", 1);
	return ok ? pos : 0;
}
