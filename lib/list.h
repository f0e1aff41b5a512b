/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * list.h - intrusive doubly linked lists of array elements, linked by
 * index (uint32_t, RS_NIL = none) rather than by pointer: the arrays are
 * reallocated as they grow, and an index is half the size of a pointer.
 *
 * An element carries its two links as plain uint32_t members (any names:
 * next/prev, gnext/gprev, ...); RS_LINKS(array, next, prev) describes where
 * they are, and the list itself is a head and a tail index. With the
 * description a compile-time constant the functions below inline to the
 * hand-written code.
 *
 * Invariants of a list (head, tail): head == RS_NIL iff tail == RS_NIL;
 * following next from head reaches tail and then RS_NIL, following prev
 * from tail reaches head; the links of an element on no list are RS_NIL.
 */
#ifndef REQSCHED_LIST_H
#define REQSCHED_LIST_H

#include <stddef.h>
#include <stdint.h>

#ifndef RS_NIL
#define RS_NIL UINT32_MAX
#endif

struct rs_links {
	char *base;		/* the array */
	size_t size;		/* its element size */
	size_t next, prev;	/* offsets of the two links in an element */
};

#define RS_LINKS(arr, nx, pv)                                            \
	((struct rs_links){ (char *)(arr), sizeof(*(arr)),               \
			    offsetof(__typeof__(*(arr)), nx),            \
			    offsetof(__typeof__(*(arr)), pv) })

static inline uint32_t *rs_next_of(struct rs_links l, uint32_t i)
{
	return (uint32_t *)(void *)(l.base + (size_t)i * l.size + l.next);
}

static inline uint32_t *rs_prev_of(struct rs_links l, uint32_t i)
{
	return (uint32_t *)(void *)(l.base + (size_t)i * l.size + l.prev);
}

/* Link element i at the tail. */
static inline void rs_list_append(struct rs_links l, uint32_t *head,
				  uint32_t *tail, uint32_t i)
{
	*rs_next_of(l, i) = RS_NIL;
	*rs_prev_of(l, i) = *tail;
	if (*tail != RS_NIL)
		*rs_next_of(l, *tail) = i;
	else
		*head = i;
	*tail = i;
}

/* Unlink element i (on the list); its links become RS_NIL. */
static inline void rs_list_cut(struct rs_links l, uint32_t *head,
			       uint32_t *tail, uint32_t i)
{
	uint32_t next = *rs_next_of(l, i), prev = *rs_prev_of(l, i);

	if (prev != RS_NIL)
		*rs_next_of(l, prev) = next;
	else
		*head = next;
	if (next != RS_NIL)
		*rs_prev_of(l, next) = prev;
	else
		*tail = prev;
	*rs_next_of(l, i) = *rs_prev_of(l, i) = RS_NIL;
}

/* The head goes to the tail (a round robin passes the turn). */
static inline void rs_list_rotate(struct rs_links l, uint32_t *head,
				  uint32_t *tail)
{
	uint32_t i = *head;

	if (i == RS_NIL || *rs_next_of(l, i) == RS_NIL)
		return;
	rs_list_cut(l, head, tail, i);
	rs_list_append(l, head, tail, i);
}

#endif /* REQSCHED_LIST_H */
