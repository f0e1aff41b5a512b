/* SPDX-License-Identifier: GPL-2.0-or-later */
/* str_table.h - string -> unsigned value hash table (open addressing).
 *
 * Used for login names (value = class index) and for interning class names
 * (value = class index, in insertion order). Strings are copied into one
 * arena and referenced by offset, so growing the arena never invalidates the
 * slots. Invariant: the slot array is a power of two and at most half full.
 */
#ifndef RS_HELPER_STR_TABLE_H
#define RS_HELPER_STR_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rs_strslot {
	uint32_t hash;
	uint32_t value;
	size_t off;		/* offset of the NUL-terminated string in arena; SIZE_MAX = empty */
	size_t len;
};

struct rs_strtable {
	struct rs_strslot *slot;
	size_t nslots;		/* power of two, or 0 */
	size_t n;		/* occupied slots */
	char *arena;
	size_t arena_len, arena_cap;
};

void rs_strtable_init(struct rs_strtable *t);
void rs_strtable_free(struct rs_strtable *t);

/* Insert or overwrite. *old_value gets the previous value when the string
 * was present (returns 1), else returns 0; -1 when out of memory. */
int rs_strtable_put(struct rs_strtable *t, const char *s, size_t len, uint32_t value,
		    uint32_t *old_value);

/* Look a string up; true and *value when found. */
bool rs_strtable_get(const struct rs_strtable *t, const char *s, size_t len, uint32_t *value);

/* The stored copy of the string whose slot holds value (linear scan; for
 * debug output only). */
const char *rs_strtable_key_of(const struct rs_strtable *t, uint32_t value);

#endif
