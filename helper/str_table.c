/* SPDX-License-Identifier: GPL-2.0-or-later */
/* str_table.c - string -> unsigned value hash table (open addressing). */
#include "str_table.h"

#include <stdlib.h>
#include <string.h>

#define EMPTY_OFF SIZE_MAX

/* FNV-1a, 32 bit. */
static uint32_t str_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

void rs_strtable_init(struct rs_strtable *t)
{
	memset(t, 0, sizeof(*t));
}

void rs_strtable_free(struct rs_strtable *t)
{
	free(t->slot);
	free(t->arena);
	rs_strtable_init(t);
}

static bool slot_matches(const struct rs_strtable *t, const struct rs_strslot *sl,
			 uint32_t h, const char *s, size_t len)
{
	return sl->hash == h && sl->len == len && memcmp(t->arena + sl->off, s, len) == 0;
}

/* Index of the slot holding s, or of the empty slot where it would go. */
static size_t find_slot(const struct rs_strtable *t, uint32_t h, const char *s, size_t len)
{
	size_t mask = t->nslots - 1;
	size_t i = h & mask;

	while (t->slot[i].off != EMPTY_OFF && !slot_matches(t, &t->slot[i], h, s, len))
		i = (i + 1) & mask;
	return i;
}

static int grow_slots(struct rs_strtable *t)
{
	size_t nslots = t->nslots ? t->nslots * 2 : 64;
	struct rs_strslot *old = t->slot, *slot;
	size_t oldn = t->nslots;

	slot = malloc(nslots * sizeof(*slot));
	if (!slot)
		return -1;
	for (size_t i = 0; i < nslots; i++)
		slot[i].off = EMPTY_OFF;
	t->slot = slot;
	t->nslots = nslots;
	for (size_t i = 0; i < oldn; i++) {
		if (old[i].off == EMPTY_OFF)
			continue;
		size_t mask = nslots - 1, j = old[i].hash & mask;

		while (slot[j].off != EMPTY_OFF)
			j = (j + 1) & mask;
		slot[j] = old[i];
	}
	free(old);
	return 0;
}

static int arena_copy(struct rs_strtable *t, const char *s, size_t len, size_t *off)
{
	if (t->arena_len + len + 1 > t->arena_cap) {
		size_t cap = t->arena_cap ? t->arena_cap : 4096;
		char *a;

		while (cap < t->arena_len + len + 1)
			cap *= 2;
		a = realloc(t->arena, cap);
		if (!a)
			return -1;
		t->arena = a;
		t->arena_cap = cap;
	}
	*off = t->arena_len;
	memcpy(t->arena + t->arena_len, s, len);
	t->arena[t->arena_len + len] = '\0';
	t->arena_len += len + 1;
	return 0;
}

int rs_strtable_put(struct rs_strtable *t, const char *s, size_t len, uint32_t value,
		    uint32_t *old_value)
{
	uint32_t h = str_hash(s, len);
	size_t i, off;

	if ((t->n + 1) * 2 > t->nslots && grow_slots(t) < 0)
		return -1;
	i = find_slot(t, h, s, len);
	if (t->slot[i].off != EMPTY_OFF) {
		if (old_value)
			*old_value = t->slot[i].value;
		t->slot[i].value = value;
		return 1;
	}
	if (arena_copy(t, s, len, &off) < 0)
		return -1;
	t->slot[i] = (struct rs_strslot){ .hash = h, .value = value, .off = off, .len = len };
	t->n++;
	return 0;
}

bool rs_strtable_get(const struct rs_strtable *t, const char *s, size_t len, uint32_t *value)
{
	size_t i;

	if (t->nslots == 0)
		return false;
	i = find_slot(t, str_hash(s, len), s, len);
	if (t->slot[i].off == EMPTY_OFF)
		return false;
	*value = t->slot[i].value;
	return true;
}

const char *rs_strtable_key_of(const struct rs_strtable *t, uint32_t value)
{
	for (size_t i = 0; i < t->nslots; i++)
		if (t->slot[i].off != EMPTY_OFF && t->slot[i].value == value)
			return t->arena + t->slot[i].off;
	return NULL;
}
