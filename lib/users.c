/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * users.c - the (class,user) table: ReqFromUser[j] of MSF-RS and the recent
 * service of DRR-SFF.
 *
 * Invariants:
 *  - an entry is in the hash index iff it is in use (count > 0, or count == 0
 *    and kept for the sff flow timeout);
 *  - the class's UC equals the number of its entries with count > 0;
 *  - every entry in use with count == 0 is on the idle ring, once (its idle
 *    flag); the ring is ordered by idle_since, so expiry pops from the head.
 *
 * The ring is lazy: an idle entry that is used again stays on it, so a
 * user's next request touches no other user's entry (a doubly linked list
 * cut it out and wrote both neighbours: two cache misses per request with
 * 100,000 users). The head is looked at when its idle_since is past the
 * timeout: an entry used again since then is dropped from the ring (or
 * goes back on at the tail if it is idle again but not for the timeout).
 * An entry is freed at the latest one timeout after it would have been.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static uint32_t hash_of(uint32_t cls, uint64_t key)
{
	uint64_t h = key ^ ((uint64_t)cls * 0x9e3779b97f4a7c15ULL);

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (uint32_t)h;
}

int rs_users_init(struct rs_users *u)
{
	memset(u, 0, sizeof(*u));
	u->free_head = RS_NIL;
	u->nslot = 64;
	u->slot = calloc(u->nslot, sizeof(*u->slot));
	return u->slot ? 0 : RS_ENOMEM;
}

void rs_users_free(struct rs_users *u)
{
	free(u->ent);
	free(u->idle);
	free(u->slot);
	memset(u, 0, sizeof(*u));
}

static void slot_insert(struct rs_uslot *slot, uint32_t nslot, uint32_t idx,
			uint32_t h)
{
	uint32_t mask = nslot - 1;
	uint32_t i = h & mask;

	while (slot[i].idx1)
		i = (i + 1) & mask;
	slot[i].idx1 = idx + 1;
	slot[i].hash = h;
}

static void index_insert(struct rs_users *u, uint32_t idx)
{
	slot_insert(u->slot, u->nslot, idx,
		    hash_of(u->ent[idx].cls, u->ent[idx].key));
}

/* Place i of the ring counted from its head (i <= cap). */
static inline uint32_t ring_at(const struct rs_users *u, uint32_t i)
{
	uint32_t at = u->idle_head + i;

	return at >= u->cap ? at - u->cap : at;
}

/* Entries and the idle ring to a capacity of cap; the ring's entries move
 * to its start, in order. */
static int grow_entries(struct rs_users *u, uint32_t cap)
{
	struct rs_user *p = realloc(u->ent, (size_t)cap * sizeof(*p));
	uint32_t *ring;
	uint32_t i;

	if (!p)
		return RS_ENOMEM;
	u->ent = p;
	ring = malloc((size_t)cap * sizeof(*ring));
	if (!ring)
		return RS_ENOMEM;
	for (i = 0; i < u->nidle; i++)
		ring[i] = u->idle[ring_at(u, i)];
	free(u->idle);
	u->idle = ring;
	u->idle_head = 0;
	u->cap = cap;
	return 0;
}

static int rehash(struct rs_users *u, uint32_t nslot)
{
	struct rs_uslot *slot = calloc(nslot, sizeof(*slot));
	uint32_t i;

	if (!slot)
		return RS_ENOMEM;
	for (i = 0; i < u->nslot; i++)
		if (u->slot[i].idx1)
			slot_insert(slot, nslot, u->slot[i].idx1 - 1,
				    u->slot[i].hash);
	free(u->slot);
	u->slot = slot;
	u->nslot = nslot;
	return 0;
}

/* rs_users_reserve() without the room: the entries or the index grow. */
int rs_users_grow(struct rs_users *u)
{
	if (u->free_head == RS_NIL && u->nent == u->cap &&
	    grow_entries(u, u->cap ? u->cap * 2 : 64))
		return RS_ENOMEM;
	if ((u->alive + 1) * 2 > u->nslot)
		return rehash(u, u->nslot * 2);
	return 0;
}

/* Entry of (cls,key), or RS_NIL; then *empty is the free slot that ends
 * the probe chain - where linear probing inserts it - and *hash its hash. */
static inline uint32_t find_slot(const struct rs_users *u, uint32_t cls,
				 uint64_t key, uint32_t *empty, uint32_t *hash)
{
	uint32_t mask = u->nslot - 1;
	uint32_t h = hash_of(cls, key), i = h & mask;

	for (; u->slot[i].idx1; i = (i + 1) & mask) {
		const struct rs_user *e;

		if (u->slot[i].hash != h)
			continue;
		e = &u->ent[u->slot[i].idx1 - 1];
		if (e->key == key && e->cls == cls)
			return u->slot[i].idx1 - 1;
	}
	*empty = i;
	*hash = h;
	return RS_NIL;
}

uint32_t rs_users_find(const struct rs_users *u, uint32_t cls, uint64_t key)
{
	uint32_t empty, h;

	return find_slot(u, cls, key, &empty, &h);
}

/* Entry idx (not on the ring) joins its tail, idle since `since` or the
 * newest's idle_since if later (the ring stays ordered). Room: the ring
 * has cap places and holds each entry at most once. */
static void idle_push(struct rs_users *u, uint32_t idx, rs_time_ns since)
{
	struct rs_user *e = &u->ent[idx];

	if (u->nidle && since < u->idle_last)
		since = u->idle_last;
	e->idle = 1;
	e->idle_since = u->idle_last = since;
	u->idle[ring_at(u, u->nidle++)] = idx;
}

static uint32_t idle_pop(struct rs_users *u)
{
	uint32_t idx = u->idle[u->idle_head];

	u->idle_head = ring_at(u, 1);
	u->nidle--;
	u->ent[idx].idle = 0;
	return idx;
}

/* Entry idx leaves the index (inline: a user's last end frees it). */
static inline void index_delete(struct rs_users *u, uint32_t idx)
{
	uint32_t mask = u->nslot - 1;
	uint32_t i = hash_of(u->ent[idx].cls, u->ent[idx].key) & mask;
	uint32_t j;

	while (u->slot[i].idx1 != idx + 1)
		i = (i + 1) & mask;
	/* backward-shift deletion keeps every probe chain unbroken */
	for (j = (i + 1) & mask; u->slot[j].idx1; j = (j + 1) & mask) {
		uint32_t home = u->slot[j].hash & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			u->slot[i] = u->slot[j];
			i = j;
		}
	}
	u->slot[i].idx1 = 0;
}

static void entry_free(struct rs_users *u, uint32_t idx)
{
	index_delete(u, idx);
	u->ent[idx].next_free = u->free_head;
	u->free_head = idx;
	u->alive--;
}

/* UC of class c changes by d (+1 or -1); the policy follows (msf, rfq:
 * the service counter restarts or folds its pending bytes first). Inline:
 * a user's first enqueue and last end change it. */
static inline void uc_add(struct rs_sched *s, uint32_t c, int d)
{
	if (s->pol->users_changing)
		s->pol->users_changing(s, c);
	s->cls[c].uc += (uint32_t)d;
	if (s->pol->users_changed)
		s->pol->users_changed(s, c);
}

/* Take one reference on (cls,key); UC of the class grows when the entry
 * goes from 0 to 1. rs_users_reserve() must have succeeded before. */
uint32_t rs_users_get(struct rs_sched *s, uint32_t cls, uint64_t key,
		      rs_time_ns now)
{
	struct rs_users *u = &s->users;
	uint32_t empty = 0, h = 0;
	uint32_t idx = find_slot(u, cls, key, &empty, &h);
	struct rs_user *e;

	if (idx == RS_NIL) {
		if (u->free_head != RS_NIL) {
			idx = u->free_head;
			u->free_head = u->ent[idx].next_free;
		} else {
			idx = u->nent++;
		}
		e = &u->ent[idx];
		e->key = key;
		e->cls = cls;
		e->count = 0;
		e->waiting = 0;
		e->idle = 0;
		e->recent = 0;
		e->last_seen = now;
		u->slot[empty].idx1 = idx + 1;	/* rs_users_reserve() kept */
		u->slot[empty].hash = h;	/* the load <= 1/2 */
		u->alive++;
	}	/* else an idle entry stays on the ring (lazy) */
	e = &u->ent[idx];
	if (e->count++ == 0)
		uc_add(s, cls, 1);
	return idx;
}

/* Drop one reference. At zero the class loses a user; the entry is kept on
 * the idle ring while sff needs its recent service, else freed. */
void rs_users_put(struct rs_sched *s, uint32_t idx, rs_time_ns now)
{
	struct rs_users *u = &s->users;
	struct rs_user *e = &u->ent[idx];

	if (--e->count > 0)
		return;
	uc_add(s, e->cls, -1);
	if (s->cfg.sff) {
		if (e->last_seen < now)
			e->last_seen = now;
		if (!e->idle)
			idle_push(u, idx, e->last_seen);
	} else {
		entry_free(u, idx);
	}
}

/* Whether an entry idle (or seen) at t is still inside the flow timeout. */
static bool within_timeout(const struct rs_sched *s, rs_time_ns t,
			   rs_time_ns now)
{
	return s->cfg.sff && t <= now && now - t <= s->cfg.sff_flow_timeout;
}

/* Forget idle entries whose flow timed out (sff) - or all idle entries when
 * sff is off (after a reconfiguration that turned it off). */
void rs_users_expire(struct rs_sched *s, rs_time_ns now)
{
	struct rs_users *u = &s->users;

	while (u->nidle &&
	       !within_timeout(s, u->ent[u->idle[u->idle_head]].idle_since, now)) {
		uint32_t idx = idle_pop(u);
		struct rs_user *e = &u->ent[idx];

		if (e->count > 0)
			continue;	/* used again: off the ring */
		if (within_timeout(s, e->last_seen, now))
			idle_push(u, idx, e->last_seen);	/* idle again */
		else
			entry_free(u, idx);
	}
}

/* Room for n entries in total (reconfiguration builds a new table). */
int rs_users_reserve_n(struct rs_users *u, uint32_t n)
{
	if (n > u->cap && grow_entries(u, n))
		return RS_ENOMEM;
	if ((uint64_t)n * 2 > u->nslot) {
		uint32_t nslot = u->nslot;

		while ((uint64_t)n * 2 > nslot)
			nslot *= 2;
		return rehash(u, nslot);
	}
	return 0;
}

/* Find or add (cls,key) without touching UC; after rs_users_reserve_n()
 * for enough entries it never fails. A new entry has count 0. */
uint32_t rs_users_insert(struct rs_users *u, uint32_t cls, uint64_t key)
{
	uint32_t idx = rs_users_find(u, cls, key);
	struct rs_user *e;

	if (idx != RS_NIL)
		return idx;
	idx = u->nent++;
	e = &u->ent[idx];
	memset(e, 0, sizeof(*e));
	e->key = key;
	e->cls = cls;
	index_insert(u, idx);
	u->alive++;
	return idx;
}

/* The i-th oldest entry on the idle ring (i < nidle). */
uint32_t rs_users_idle_at(const struct rs_users *u, uint32_t i)
{
	return u->idle[ring_at(u, i)];
}

/* Entry idx (count 0, not on the ring) is kept idle since its last_seen. */
void rs_users_idle_add(struct rs_users *u, uint32_t idx)
{
	idle_push(u, idx, u->ent[idx].last_seen);
}
