/* SPDX-License-Identifier: GPL-2.0-or-later */
/* classmap.c - parse the mapping file and look keys up. */
#include "classmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addr.h"
#include "escape.h"
#include "msglog.h"

#define LOGIN_PREFIX "user:"
#define LOGIN_MAX 1024

struct token {
	const char *s;
	size_t len;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static void lower_ascii(char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] >= 'A' && s[i] <= 'Z')
			s[i] = (char)(s[i] - 'A' + 'a');
}

static bool valid_class_name(const struct token *t)
{
	if (t->len == 0 || t->len > RS_CLASS_NAME_MAX)
		return false;
	for (size_t i = 0; i < t->len; i++) {
		char c = t->s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

/* Split a line (comment already cut) into at most max tokens; returns the
 * number found, or max + 1 when there are more. */
static size_t split(const char *s, size_t len, struct token *tok, size_t max)
{
	size_t n = 0, i = 0;

	while (i < len) {
		while (i < len && is_space(s[i]))
			i++;
		if (i == len)
			break;
		if (n == max)
			return max + 1;
		size_t start = i;

		while (i < len && !is_space(s[i]))
			i++;
		tok[n].s = s + start;
		tok[n].len = i - start;
		n++;
	}
	return n;
}

/* Index of a class name, interning it on first use; -1 when out of memory. */
static long intern_class(struct rs_classmap *m, const struct token *t)
{
	uint32_t idx;
	char **names;
	char *copy;

	if (rs_strtable_get(&m->class_ids, t->s, t->len, &idx))
		return (long)idx;
	names = realloc(m->class_names, (m->nclasses + 1) * sizeof(*names));
	if (!names)
		return -1;
	m->class_names = names;
	copy = strndup(t->s, t->len);
	if (!copy)
		return -1;
	if (rs_strtable_put(&m->class_ids, t->s, t->len, (uint32_t)m->nclasses, NULL) < 0) {
		free(copy);
		return -1;
	}
	m->class_names[m->nclasses] = copy;
	return (long)m->nclasses++;
}

/* Outcome of one line: NULL (ok or blank) or a reason it is malformed.
 * *oom is set when memory ran out (the whole parse then fails). */
static const char *parse_line(struct rs_classmap *m, const char *s, size_t len,
			      unsigned int lineno, struct rs_msglog *log, bool *oom)
{
	struct token tok[2];
	struct rs_prefix p;
	const char *comment, *why;
	size_t n;
	long cls;

	if (len > RS_MAP_LINE_MAX)
		return "line too long";
	if (memchr(s, '\0', len))
		return "NUL byte in line";
	comment = memchr(s, '#', len);
	if (comment)
		len = (size_t)(comment - s);
	n = split(s, len, tok, 2);
	if (n == 0)
		return NULL;
	if (n != 2)
		return "expected two fields: KEY CLASS";
	if (!valid_class_name(&tok[1]))
		return "bad class name (1-64 of A-Z a-z 0-9 _ . -)";

	if (tok[0].len == 7 && memcmp(tok[0].s, "default", 7) == 0) {
		cls = intern_class(m, &tok[1]);
		if (cls < 0)
			goto oom;
		if (m->default_cls >= 0) {
			m->stats.duplicates++;
			rs_msglog_line(log, lineno, "duplicate default: this line wins");
		}
		m->default_cls = cls;
		m->stats.has_default = true;
		return NULL;
	}

	if (tok[0].len > strlen(LOGIN_PREFIX) &&
	    memcmp(tok[0].s, LOGIN_PREFIX, strlen(LOGIN_PREFIX)) == 0) {
		char name[LOGIN_MAX];
		size_t nlen = tok[0].len - strlen(LOGIN_PREFIX);
		ssize_t dlen;
		uint32_t old;
		int r;

		if (nlen >= sizeof(name))
			return "login name too long";
		memcpy(name, tok[0].s + strlen(LOGIN_PREFIX), nlen);
		dlen = rs_url_decode(name, nlen);
		if (dlen < 0)
			return "bad %XX escape in login name";
		if (dlen == 0 || (dlen == 1 && name[0] == '-'))
			return "empty login name ('-' is Squid's placeholder for none)";
		if (m->logins_nocase)
			lower_ascii(name, (size_t)dlen);
		cls = intern_class(m, &tok[1]);
		if (cls < 0)
			goto oom;
		r = rs_strtable_put(&m->logins, name, (size_t)dlen, (uint32_t)cls, &old);
		if (r < 0)
			goto oom;
		if (r == 1) {
			m->stats.duplicates++;
			rs_msglog_line(log, lineno, "duplicate login: this line wins");
		}
		return NULL;
	}

	why = rs_parse_prefix(tok[0].s, tok[0].len, &p);
	if (why)
		return why;
	if (p.host_bits_set)
		rs_msglog_line(log, lineno, "warning: host bits set after the prefix length; cleared");
	cls = intern_class(m, &tok[1]);
	if (cls < 0)
		goto oom;
	if (rs_ptable_add(p.family == RS_AF_INET4 ? &m->v4 : &m->v6, p.key, p.len,
			  (unsigned int)cls, lineno) < 0)
		goto oom;
	return NULL;
oom:
	*oom = true;
	return NULL;
}

static struct rs_classmap *classmap_new(const struct rs_classmap_opts *opts)
{
	struct rs_classmap *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	rs_strtable_init(&m->class_ids);
	rs_strtable_init(&m->logins);
	rs_ptable_init(&m->v4);
	rs_ptable_init(&m->v6);
	m->default_cls = -1;
	m->logins_nocase = opts && opts->logins_nocase;
	return m;
}

struct rs_classmap *rs_classmap_parse(const char *buf, size_t len, const char *fname,
				      const struct rs_classmap_opts *opts, FILE *log)
{
	struct rs_classmap *m = classmap_new(opts);
	struct rs_msglog msg;
	size_t pos = 0;
	unsigned int lineno = 0;
	bool oom = false;

	if (!m)
		return NULL;
	rs_msglog_init(&msg, log, fname);
	while (pos < len && !oom) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t llen = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		const char *why;

		lineno++;
		why = parse_line(m, buf + pos, llen, lineno, &msg, &oom);
		if (why) {
			m->stats.malformed++;
			rs_msglog_line(&msg, lineno, "malformed line skipped: %s", why);
		}
		pos += llen + (nl ? 1 : 0);
	}
	if (oom) {
		rs_classmap_free(m);
		errno = ENOMEM;
		return NULL;
	}
	m->stats.lines = lineno;
	m->stats.duplicates += rs_ptable_build(&m->v4, &msg, "IPv4");
	m->stats.duplicates += rs_ptable_build(&m->v6, &msg, "IPv6");
	rs_msglog_finish(&msg);
	m->stats.v4 = m->v4.n;
	m->stats.v6 = m->v6.n;
	m->stats.logins = m->logins.n;
	return m;
}

/* Read a whole file into a malloc'd buffer. */
static char *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 1 << 16, n = 0;
	char *buf;
	int saved;

	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	if (!buf)
		goto fail;
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *b = realloc(buf, cap * 2);

			if (!b)
				goto fail;
			buf = b;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*len = n;
	return buf;
fail:
	saved = errno;
	free(buf);
	close(fd);
	errno = saved;
	return NULL;
}

struct rs_classmap *rs_classmap_load(const char *path, const struct rs_classmap_opts *opts,
				     FILE *log)
{
	size_t len;
	char *buf = read_file(path, &len);
	struct rs_classmap *m;

	if (!buf)
		return NULL;
	m = rs_classmap_parse(buf, len, path, opts, log);
	free(buf);
	return m;
}

void rs_classmap_free(struct rs_classmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nclasses; i++)
		free(m->class_names[i]);
	free(m->class_names);
	rs_strtable_free(&m->class_ids);
	rs_strtable_free(&m->logins);
	rs_ptable_free(&m->v4);
	rs_ptable_free(&m->v6);
	free(m);
}

long rs_classmap_lookup(const struct rs_classmap *m, const char *key, size_t len)
{
	struct rs_prefix a;
	uint32_t cls;

	if (len == 0 || (len == 1 && key[0] == '-'))
		return -1;
	if (rs_parse_addr(key, len, &a))
		return rs_ptable_lookup(a.family == RS_AF_INET4 ? &m->v4 : &m->v6, a.key);
	if (m->logins_nocase) {
		char low[LOGIN_MAX];

		if (len >= sizeof(low))
			return -1;
		memcpy(low, key, len);
		lower_ascii(low, len);
		return rs_strtable_get(&m->logins, low, len, &cls) ? (long)cls : -1;
	}
	return rs_strtable_get(&m->logins, key, len, &cls) ? (long)cls : -1;
}
