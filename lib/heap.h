/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heap.h - binary min-heap of uint32 items with back-pointers, inlined so
 * that the comparison of each heap (a constant ops table) is inlined too.
 *
 * Invariant: for every pos > 0, !less(item[pos], item[(pos-1)/2]) and
 * setpos(item[pos], pos) has been called with the current position, so the
 * owner can fix or remove any item in O(log n).
 */
#ifndef REQSCHED_HEAP_H
#define REQSCHED_HEAP_H

#include "internal.h"

static inline void rs_heap_place(struct rs_sched *s, struct rs_heap *h,
		  const struct rs_heap_ops *ops, uint32_t pos, uint32_t item)
{
	h->item[pos] = item;
	ops->setpos(s, item, pos);
}

static inline uint32_t rs_heap_sift_up(struct rs_sched *s, struct rs_heap *h,
			const struct rs_heap_ops *ops, uint32_t pos)
{
	uint32_t item = h->item[pos];

	while (pos > 0) {
		uint32_t parent = (pos - 1) / 2;

		if (!ops->less(s, item, h->item[parent]))
			break;
		rs_heap_place(s, h, ops, pos, h->item[parent]);
		pos = parent;
	}
	rs_heap_place(s, h, ops, pos, item);
	return pos;
}

static inline void rs_heap_sift_down(struct rs_sched *s, struct rs_heap *h,
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
		rs_heap_place(s, h, ops, pos, h->item[child]);
		pos = child;
	}
	rs_heap_place(s, h, ops, pos, item);
}

static inline void rs_heap_fix(struct rs_sched *s, struct rs_heap *h,
			       const struct rs_heap_ops *ops, uint32_t pos);

/* The caller has reserved room (rs_heap_reserve) beforehand. */
static inline void rs_heap_push(struct rs_sched *s, struct rs_heap *h,
		  const struct rs_heap_ops *ops, uint32_t item)
{
	h->item[h->n++] = item;
	rs_heap_sift_up(s, h, ops, h->n - 1);
}

static inline void rs_heap_remove(struct rs_sched *s, struct rs_heap *h,
		    const struct rs_heap_ops *ops, uint32_t pos)
{
	uint32_t last = h->item[--h->n];

	ops->setpos(s, h->item[pos], RS_NIL);
	if (pos == h->n)
		return;
	rs_heap_place(s, h, ops, pos, last);
	rs_heap_fix(s, h, ops, pos);
}

static inline void rs_heap_fix(struct rs_sched *s, struct rs_heap *h,
		 const struct rs_heap_ops *ops, uint32_t pos)
{
	if (rs_heap_sift_up(s, h, ops, pos) == pos)
		rs_heap_sift_down(s, h, ops, pos);
}

#endif /* REQSCHED_HEAP_H */
