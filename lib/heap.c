/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * heap.c - binary min-heap of uint32 items with back-pointers.
 *
 * Invariant: for every pos > 0, !less(item[pos], item[(pos-1)/2]) and
 * setpos(item[pos], pos) has been called with the current position, so the
 * owner can fix or remove any item in O(log n).
 */
#include <stdlib.h>

#include "internal.h"

int rs_heap_reserve(struct rs_heap *h, uint32_t cap)
{
	uint32_t *p;

	if (cap <= h->cap)
		return 0;
	if (cap < 16)
		cap = 16;
	if (cap < h->cap * 2)
		cap = h->cap * 2;
	p = realloc(h->item, (size_t)cap * sizeof(*p));
	if (!p)
		return RS_ENOMEM;
	h->item = p;
	h->cap = cap;
	return 0;
}

void rs_heap_free(struct rs_heap *h)
{
	free(h->item);
	h->item = NULL;
	h->n = h->cap = 0;
}

static void place(struct rs_sched *s, struct rs_heap *h,
		  const struct rs_heap_ops *ops, uint32_t pos, uint32_t item)
{
	h->item[pos] = item;
	ops->setpos(s, item, pos);
}

static uint32_t sift_up(struct rs_sched *s, struct rs_heap *h,
			const struct rs_heap_ops *ops, uint32_t pos)
{
	uint32_t item = h->item[pos];

	while (pos > 0) {
		uint32_t parent = (pos - 1) / 2;

		if (!ops->less(s, item, h->item[parent]))
			break;
		place(s, h, ops, pos, h->item[parent]);
		pos = parent;
	}
	place(s, h, ops, pos, item);
	return pos;
}

static void sift_down(struct rs_sched *s, struct rs_heap *h,
		      const struct rs_heap_ops *ops, uint32_t pos)
{
	uint32_t item = h->item[pos];

	for (;;) {
		uint32_t child = 2 * pos + 1;

		if (child >= h->n)
			break;
		if (child + 1 < h->n &&
		    ops->less(s, h->item[child + 1], h->item[child]))
			child++;
		if (!ops->less(s, h->item[child], item))
			break;
		place(s, h, ops, pos, h->item[child]);
		pos = child;
	}
	place(s, h, ops, pos, item);
}

/* The caller has reserved room (rs_heap_reserve) beforehand. */
void rs_heap_push(struct rs_sched *s, struct rs_heap *h,
		  const struct rs_heap_ops *ops, uint32_t item)
{
	h->item[h->n++] = item;
	sift_up(s, h, ops, h->n - 1);
}

void rs_heap_remove(struct rs_sched *s, struct rs_heap *h,
		    const struct rs_heap_ops *ops, uint32_t pos)
{
	uint32_t last = h->item[--h->n];

	ops->setpos(s, h->item[pos], RS_NIL);
	if (pos == h->n)
		return;
	place(s, h, ops, pos, last);
	rs_heap_fix(s, h, ops, pos);
}

void rs_heap_fix(struct rs_sched *s, struct rs_heap *h,
		 const struct rs_heap_ops *ops, uint32_t pos)
{
	if (sift_up(s, h, ops, pos) == pos)
		sift_down(s, h, ops, pos);
}
