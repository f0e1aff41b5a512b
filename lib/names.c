/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * names.c - the class name index: name -> class index in O(1) expected,
 * for rs_class_find(), rs_class_add()'s duplicate check and
 * rs_reconfigure()'s duplicate check and matching of old and new names.
 *
 * Open addressing with linear probing over a power-of-two array of slots.
 * A slot holds a name pointer (NULL: empty), the index stored for it and
 * the name's rs_hash() folded to 32 bits, so a probe compares strings only
 * when the hashes are equal and never reads the classes.
 *
 * Invariants:
 *  - the n stored names are pairwise different (strcmp), and 2 n <= nslot
 *    (load <= 1/2: short probe chains, and an empty slot ends every search);
 *  - every slot from a stored name's home (hash & (nslot - 1)) up to its
 *    own, cyclically, is occupied: there is no deletion (a reconfigure
 *    builds a new index), so no chain is ever broken;
 *  - the index borrows the names, it does not own them: a name must live
 *    as long as its slot. The scheduler's index (s->byname) holds exactly
 *    the pointers s->cls[c].name, each with its class index c (check.c,
 *    "names").
 * rs_names_add() never fails after rs_names_reserve() for the total.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static uint32_t name_hash(const char *name)
{
	uint64_t h = rs_hash(name, strlen(name));

	return (uint32_t)(h ^ (h >> 32));	/* FNV's low bits mix least */
}

/* The slot of name (hash h) if stored, else the empty slot ending its chain. */
static uint32_t probe(const struct rs_names *t, const char *name, uint32_t h)
{
	uint32_t mask = t->nslot - 1, i = h & mask;

	for (; t->slot[i].name; i = (i + 1) & mask)
		if (t->slot[i].hash == h && strcmp(t->slot[i].name, name) == 0)
			break;
	return i;
}

/* Room for n names in all. */
int rs_names_reserve(struct rs_names *t, uint32_t n)
{
	uint64_t want = t->nslot ? t->nslot : 16;
	struct rs_nslot *slot;
	struct rs_names grown;
	uint32_t i;

	if ((uint64_t)n * 2 <= t->nslot)
		return 0;
	while (want < (uint64_t)n * 2)
		want *= 2;
	if (want > UINT32_MAX / 2 + 1)
		return RS_ENOMEM;
	slot = calloc(want, sizeof(*slot));
	if (!slot)
		return RS_ENOMEM;
	grown = (struct rs_names){ .slot = slot, .nslot = (uint32_t)want,
				   .n = t->n };
	for (i = 0; i < t->nslot; i++)
		if (t->slot[i].name)
			slot[probe(&grown, t->slot[i].name, t->slot[i].hash)] =
				t->slot[i];
	free(t->slot);
	*t = grown;
	return 0;
}

void rs_names_free(struct rs_names *t)
{
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

/* The index stored for name, or RS_NIL. */
uint32_t rs_names_find(const struct rs_names *t, const char *name)
{
	const struct rs_nslot *e;

	if (!t->n)
		return RS_NIL;
	e = &t->slot[probe(t, name, name_hash(name))];
	return e->name ? e->idx : RS_NIL;
}

/* Store name -> idx, borrowing the pointer; if name is stored already,
 * nothing changes. Returns the index now stored for name: idx, or the one
 * it already had. Room must have been reserved. */
uint32_t rs_names_add(struct rs_names *t, const char *name, uint32_t idx)
{
	uint32_t h = name_hash(name);
	struct rs_nslot *e = &t->slot[probe(t, name, h)];

	if (e->name)
		return e->idx;
	*e = (struct rs_nslot){ .name = name, .idx = idx, .hash = h };
	t->n++;
	return idx;
}
