/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heap.h - binary min-heaps with back-pointers, inlined so that the
 * comparison of each heap is inlined too:
 *  - of uint32 items, compared through a constant ops table (rtc's
 *    request heaps);
 *  - of classes, each entry a copy of its class's key (struct rs_kent):
 *    msf's ready and active heaps, drf's heap (the keyed heaps below).
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

/*
 * The keyed class heaps. The code is written once for the three and
 * inlined with a constant heap (enum rs_kh), so that the heap, its tie
 * break and the position field are known at compile time. It does not
 * reuse the item heap above (items compared through an ops table by
 * looking up each class): entries carry a copy of their key, so a sift
 * reads one array and never the classes, and the inlined constant tie
 * break replaces the indirect call. That specialization was measured
 * (doc/lib.md, Benchmark); only the storage (heap.c) is shared.
 */
enum rs_kh {
	RS_KH_READY,		/* msf: classes with nq > 0 */
	RS_KH_ACTIVE,		/* msf: classes with uc > 0 (lazy) */
	RS_KH_DRF,		/* drf: classes with nq > 0 */
};

#define RS_HOT static inline __attribute__((always_inline))

RS_HOT struct rs_kheap *rs_kheap_of(struct rs_sched *s, enum rs_kh h)
{
	return h == RS_KH_READY ? &s->ready :
	       h == RS_KH_ACTIVE ? &s->active : &s->drf;
}

/* The order of heap h: the smaller key first; on the ready heap then the
 * larger w*UC; then the lower class index. It is total, so the top (and
 * a best-first walk from it) does not depend on the heap's layout. */
RS_HOT bool rs_kless(enum rs_kh h, const struct rs_kent *a,
		     const struct rs_kent *b)
{
	if (a->sc != b->sc)
		return a->sc < b->sc;
	if (h == RS_KH_READY && a->wuc != b->wuc)
		return a->wuc > b->wuc;
	return a->c < b->c;
}

/* Where class c keeps its position in heap h. */
RS_HOT uint32_t *rs_kpos(struct rs_sched *s, enum rs_kh h, uint32_t c)
{
	return h == RS_KH_READY ? &s->cls[c].hpos_ready :
	       h == RS_KH_ACTIVE ? &s->cls[c].hpos_active :
	       &s->cres[c].hpos_drf;
}

RS_HOT void rs_kset(struct rs_sched *s, enum rs_kh h, uint32_t pos,
		    const struct rs_kent *e)
{
	rs_kheap_of(s, h)->ent[pos] = *e;
	*rs_kpos(s, h, e->c) = pos;
}

RS_HOT uint32_t rs_ksift_up(struct rs_sched *s, enum rs_kh h, uint32_t pos,
			    const struct rs_kent *e)
{
	struct rs_kent *ent = rs_kheap_of(s, h)->ent;

	while (pos > 0) {
		uint32_t parent = (pos - 1) / 2;

		if (!rs_kless(h, e, &ent[parent]))
			break;
		rs_kset(s, h, pos, &ent[parent]);
		pos = parent;
	}
	rs_kset(s, h, pos, e);
	return pos;
}

RS_HOT void rs_ksift_down(struct rs_sched *s, enum rs_kh h, uint32_t pos,
			  const struct rs_kent *e)
{
	struct rs_kheap *kh = rs_kheap_of(s, h);

	for (;;) {
		uint32_t child = 2 * pos + 1;

		if (child >= kh->n)
			break;
		if (child + 1 < kh->n &&
		    rs_kless(h, &kh->ent[child + 1], &kh->ent[child]))
			child++;
		if (!rs_kless(h, &kh->ent[child], e))
			break;
		rs_kset(s, h, pos, &kh->ent[child]);
		pos = child;
	}
	rs_kset(s, h, pos, e);
}

/* The entry at pos takes key e (of the same class) and order is
 * restored: a smaller key can only rise, a larger one only sink, so one
 * sift (and one write of the entry). */
RS_HOT void rs_kmove(struct rs_sched *s, enum rs_kh h, uint32_t pos,
		     const struct rs_kent *e)
{
	if (rs_kless(h, e, &rs_kheap_of(s, h)->ent[pos]))
		rs_ksift_up(s, h, pos, e);
	else
		rs_ksift_down(s, h, pos, e);
}

/* The caller has reserved room (rs_kheap_reserve) beforehand. */
RS_HOT void rs_kpush(struct rs_sched *s, enum rs_kh h, const struct rs_kent *e)
{
	rs_ksift_up(s, h, rs_kheap_of(s, h)->n++, e);
}

RS_HOT void rs_kremove(struct rs_sched *s, enum rs_kh h, uint32_t pos)
{
	struct rs_kheap *kh = rs_kheap_of(s, h);
	struct rs_kent last = kh->ent[--kh->n];

	*rs_kpos(s, h, kh->ent[pos].c) = RS_NIL;
	if (pos == kh->n)
		return;
	if (rs_ksift_up(s, h, pos, &last) == pos)
		rs_ksift_down(s, h, pos, &last);
}

#endif /* REQSCHED_HEAP_H */
