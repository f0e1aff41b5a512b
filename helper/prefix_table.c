/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefix_table.c - longest-prefix match over sorted per-length tables. */
#include "prefix_table.h"

#include <stdlib.h>
#include <string.h>

void rs_ptable_init(struct rs_ptable *t)
{
	memset(t, 0, sizeof(*t));
}

static void free_filters(struct rs_ptable *t)
{
	for (unsigned int i = 0; i < t->nlengths; i++) {
		free(t->lengths[i].filter);
		t->lengths[i].filter = NULL;
	}
}

void rs_ptable_free(struct rs_ptable *t)
{
	free_filters(t);
	free(t->e);
	rs_ptable_init(t);
}

int rs_ptable_add(struct rs_ptable *t, struct rs_key128 key, unsigned int len,
		  unsigned int cls, unsigned int line)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct rs_pentry *e = realloc(t->e, cap * sizeof(*e));

		if (!e)
			return -1;
		t->e = e;
		t->cap = cap;
	}
	t->e[t->n++] = (struct rs_pentry){ .key = key, .len = len, .cls = cls, .line = line };
	return 0;
}

/* Longer prefixes first, then by key, then by line (so the later line of a
 * duplicate pair comes last). */
static int pentry_cmp(const void *pa, const void *pb)
{
	const struct rs_pentry *a = pa, *b = pb;
	int c;

	if (a->len != b->len)
		return a->len > b->len ? -1 : 1;
	c = rs_key_cmp(a->key, b->key);
	if (c)
		return c;
	return a->line < b->line ? -1 : (a->line > b->line);
}

static unsigned int top16(struct rs_key128 k)
{
	return (unsigned int)(k.hi >> 48);
}

/* Filters are an optimisation only: without memory, lookups still work. */
static void build_filters(struct rs_ptable *t)
{
	for (unsigned int i = 0; i < t->nlengths; i++) {
		struct rs_plen *l = &t->lengths[i];

		l->filter = calloc(RS_FILTER_WORDS, sizeof(uint64_t));
		if (!l->filter)
			continue;
		for (size_t j = l->start; j < l->end; j++) {
			unsigned int b = top16(t->e[j].key);

			l->filter[b / 64] |= UINT64_C(1) << (b % 64);
		}
	}
}

size_t rs_ptable_build(struct rs_ptable *t, struct rs_msglog *log, const char *family)
{
	size_t out = 0, dups = 0;

	if (t->n > 1)
		qsort(t->e, t->n, sizeof(*t->e), pentry_cmp);
	for (size_t i = 0; i < t->n; i++) {
		if (out > 0 && t->e[out - 1].len == t->e[i].len &&
		    rs_key_cmp(t->e[out - 1].key, t->e[i].key) == 0) {
			rs_msglog_line(log, t->e[i].line,
				       "duplicate %s prefix (line %u): this line wins",
				       family, t->e[out - 1].line);
			t->e[out - 1] = t->e[i];
			dups++;
			continue;
		}
		t->e[out++] = t->e[i];
	}
	t->n = out;

	free_filters(t);
	t->nlengths = 0;
	for (size_t i = 0; i < t->n; i++) {
		struct rs_plen *l = &t->lengths[t->nlengths ? t->nlengths - 1 : 0];

		if (t->nlengths == 0 || l->len != t->e[i].len) {
			l = &t->lengths[t->nlengths++];
			l->len = t->e[i].len;
			l->start = i;
		}
		l->end = i + 1;
	}
	build_filters(t);
	return dups;
}

static const struct rs_pentry *bsearch_slice(const struct rs_pentry *e, size_t lo,
					     size_t hi, struct rs_key128 key)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = rs_key_cmp(e[mid].key, key);

		if (c == 0)
			return &e[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

long rs_ptable_lookup(const struct rs_ptable *t, struct rs_key128 key)
{
	for (unsigned int i = 0; i < t->nlengths; i++) {
		const struct rs_plen *l = &t->lengths[i];
		struct rs_key128 masked = rs_key_mask(key, l->len);
		const struct rs_pentry *hit;
		unsigned int b = top16(masked);

		if (l->filter && !(l->filter[b / 64] & (UINT64_C(1) << (b % 64))))
			continue;
		hit = bsearch_slice(t->e, l->start, l->end, masked);
		if (hit)
			return (long)hit->cls;
	}
	return -1;
}
