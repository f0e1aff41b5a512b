/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * costlearn.c - what requests cost, learned from what they were observed
 * to cost: a bounded table of keys (a URL, a URL pattern) with an
 * exponentially weighted moving average of the cost vectors reported for
 * each (doc/website-gateway.md, Learning costs online). It serves the
 * gateway when no page table names a URL; the scheduler itself never calls
 * it: the caller looks a cost up before rs_enqueue_cost() and feeds back
 * what the server reported.
 *
 * Storage: an array of cfg.entries entries allocated once, a bucket array
 * of the next power of two >= entries heads chaining entries by hash
 * (index links, RS_NIL ends a chain), and one LRU list of every entry in
 * use, least recently used at the head. Until the array is full a new key
 * takes the next unused entry; then it takes the head of the LRU list.
 *
 * Invariants: every entry below `used` has a key != 0, is on exactly one
 * chain (its key's bucket) and on the LRU list; no two have one key;
 * trusted = the entries with n >= min_obs; avg[j] lies between the
 * smallest and the largest value observed for resource j since the key
 * took the entry (a convex combination of them).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct rs_cl_entry {
	uint64_t key;
	double avg[RS_MAX_RESOURCES];
	uint32_t n;			/* observations (saturating) */
	uint32_t hnext;			/* bucket chain */
	uint32_t lnext, lprev;		/* LRU list */
};

struct rs_costlearn {
	struct rs_costlearn_config cfg;
	struct rs_cl_entry *e;
	uint32_t *bucket;
	uint32_t mask;			/* buckets - 1 */
	uint32_t used;			/* e[0..used-1] hold keys */
	uint32_t lru_head, lru_tail;	/* head: least recently used */
	uint32_t trusted;
	uint64_t observations, evictions;
};

#define CL_LRU(l) RS_LINKS((l)->e, lnext, lprev)
#define CL_MAX_ENTRIES (1u << 24)

void rs_costlearn_config_default(struct rs_costlearn_config *c)
{
	memset(c, 0, sizeof(*c));
	c->nres = 1;
	c->entries = 4096;
	c->weight = 0.25;
	c->min_obs = 3;
}

static bool config_ok(const struct rs_costlearn_config *c)
{
	return c && c->nres >= 1 && c->nres <= RS_MAX_RESOURCES &&
	       c->entries >= 1 && c->entries <= CL_MAX_ENTRIES &&
	       c->weight > 0 && c->weight <= 1 && c->min_obs >= 1;
}

struct rs_costlearn *rs_costlearn_new(const struct rs_costlearn_config *c)
{
	struct rs_costlearn *l;
	uint32_t nb = 1;

	if (!config_ok(c))
		return NULL;
	while (nb < c->entries)
		nb *= 2;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->cfg = *c;
	l->e = calloc(c->entries, sizeof(*l->e));
	l->bucket = malloc((size_t)nb * sizeof(*l->bucket));
	if (!l->e || !l->bucket) {
		rs_costlearn_free(l);
		return NULL;
	}
	memset(l->bucket, 0xff, (size_t)nb * sizeof(*l->bucket));	/* RS_NIL */
	l->mask = nb - 1;
	l->lru_head = l->lru_tail = RS_NIL;
	return l;
}

void rs_costlearn_free(struct rs_costlearn *l)
{
	if (!l)
		return;
	free(l->e);
	free(l->bucket);
	free(l);
}

uint64_t rs_costlearn_key(const char *path, size_t len, int pattern)
{
	const char *q;
	size_t end, dir = 0;
	uint64_t h;

	if (!pattern)
		return rs_hash(path, len);
	q = path ? memchr(path, '?', len) : NULL;
	end = q ? (size_t)(q - path) : len;
	for (size_t i = 0; path && i < end; i++)
		if (path[i] == '/')
			dir = i + 1;
	h = rs_fnv(rs_fnv(RS_FNV_BASIS, path, dir), "*", 1);
	return h ? h : 1;
}

static uint32_t *chain_of(struct rs_costlearn *l, uint64_t key)
{
	return &l->bucket[(uint32_t)(key ^ (key >> 32)) & l->mask];
}

static uint32_t find(struct rs_costlearn *l, uint64_t key)
{
	uint32_t i = *chain_of(l, key);

	while (i != RS_NIL && l->e[i].key != key)
		i = l->e[i].hnext;
	return i;
}

/* i becomes the most recently used. */
static void touch(struct rs_costlearn *l, uint32_t i)
{
	rs_list_cut(CL_LRU(l), &l->lru_head, &l->lru_tail, i);
	rs_list_append(CL_LRU(l), &l->lru_head, &l->lru_tail, i);
}

/* An entry for key, new: the next unused one, else the least recently
 * used one's (taken off its chain and the LRU list). */
static uint32_t take(struct rs_costlearn *l, uint64_t key)
{
	uint32_t i, *p;

	if (l->used < l->cfg.entries) {
		i = l->used++;
	} else {
		i = l->lru_head;
		for (p = chain_of(l, l->e[i].key); *p != i; p = &l->e[*p].hnext)
			;
		*p = l->e[i].hnext;
		rs_list_cut(CL_LRU(l), &l->lru_head, &l->lru_tail, i);
		if (l->e[i].n >= l->cfg.min_obs)
			l->trusted--;
		l->evictions++;
	}
	memset(&l->e[i], 0, sizeof(l->e[i]));
	l->e[i].key = key;
	p = chain_of(l, key);
	l->e[i].hnext = *p;
	*p = i;
	rs_list_append(CL_LRU(l), &l->lru_head, &l->lru_tail, i);
	return i;
}

int rs_costlearn_observe(struct rs_costlearn *l, uint64_t key,
			 const uint32_t *cost)
{
	struct rs_cl_entry *e;
	uint32_t i;

	if (!l || !key || !cost)
		return RS_EINVAL;
	i = find(l, key);
	if (i == RS_NIL)
		i = take(l, key);
	else
		touch(l, i);
	e = &l->e[i];
	for (unsigned j = 0; j < l->cfg.nres; j++)
		e->avg[j] = e->n ? e->avg[j] + l->cfg.weight * (cost[j] - e->avg[j])
				 : cost[j];
	if (e->n < UINT32_MAX && ++e->n == l->cfg.min_obs)
		l->trusted++;
	l->observations++;
	return RS_OK;
}

int rs_costlearn_lookup(struct rs_costlearn *l, uint64_t key, uint32_t *cost)
{
	uint32_t i;

	if (!l || !key || !cost)
		return 0;
	i = find(l, key);
	if (i == RS_NIL)
		return 0;
	touch(l, i);
	if (l->e[i].n < l->cfg.min_obs)
		return 0;
	for (unsigned j = 0; j < l->cfg.nres; j++)
		cost[j] = (uint32_t)lround(l->e[i].avg[j]);
	return 1;
}

void rs_costlearn_get_stats(const struct rs_costlearn *l,
			    struct rs_costlearn_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!l)
		return;
	st->entries = l->used;
	st->capacity = l->cfg.entries;
	st->trusted = l->trusted;
	st->observations = l->observations;
	st->evictions = l->evictions;
}
