/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefix_table.h - longest-prefix match over sorted per-length tables.
 *
 * All entries of one family live in one array sorted by (len descending,
 * key ascending); lengths[] lists each length present with its [start,end)
 * slice. A lookup masks the address to each present length, longest first,
 * and binary-searches that slice: O(L log n) for L distinct lengths. A
 * 65,536-bit filter per length, indexed by the top 16 bits of the masked
 * key, skips most lengths without touching the array.
 * Invariants after rs_ptable_build(): no two entries share (len, key); a
 * filter bit is clear only if no entry of that length has those top bits.
 */
#ifndef RS_HELPER_PREFIX_TABLE_H
#define RS_HELPER_PREFIX_TABLE_H

#include <stdint.h>
#include <stdio.h>

#include "addr.h"
#include "msglog.h"

struct rs_pentry {
	struct rs_key128 key;
	unsigned int len;
	unsigned int cls;
	unsigned int line;	/* source line, for duplicate reports */
};

#define RS_FILTER_WORDS (65536 / 64)

struct rs_plen {
	unsigned int len;
	size_t start, end;
	uint64_t *filter;	/* RS_FILTER_WORDS words, or NULL (no filter) */
};

struct rs_ptable {
	struct rs_pentry *e;
	size_t n, cap;
	struct rs_plen lengths[129];
	unsigned int nlengths;
};

void rs_ptable_init(struct rs_ptable *t);
void rs_ptable_free(struct rs_ptable *t);

/* Append an entry (unsorted until build). Returns 0 or -1 (out of memory). */
int rs_ptable_add(struct rs_ptable *t, struct rs_key128 key, unsigned int len,
		  unsigned int cls, unsigned int line);

/* Sort, drop duplicates (the later line wins; each override is reported on
 * log) and index the lengths. Returns the number of duplicates dropped. */
size_t rs_ptable_build(struct rs_ptable *t, struct rs_msglog *log, const char *family);

/* Class of the longest prefix containing key, or -1. */
long rs_ptable_lookup(const struct rs_ptable *t, struct rs_key128 key);

#endif
