/* SPDX-License-Identifier: GPL-2.0-or-later */
/* heap.c - array binary heap; invariant: ev[i] <= ev[2i+1], ev[2i+2]. */
#include <math.h>
#include <stdlib.h>

#include "heap.h"

static int before(const struct sim_event *x, const struct sim_event *y)
{
	return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static void swap(struct sim_event *x, struct sim_event *y)
{
	struct sim_event t = *x;

	*x = *y;
	*y = t;
}

int heap_push(struct sim_heap *h, double t, int type, uint32_t a, uint32_t b)
{
	size_t i;

	if (h->n == h->alloc) {
		size_t na = h->alloc ? 2 * h->alloc : 256;
		struct sim_event *e = realloc(h->ev, na * sizeof(*e));

		if (!e)
			return -1;
		h->ev = e;
		h->alloc = na;
	}
	i = h->n++;
	h->ev[i] = (struct sim_event){
		.t = t, .seq = h->seq++, .type = type, .a = a, .b = b,
	};
	while (i > 0 && before(&h->ev[i], &h->ev[(i - 1) / 2])) {
		swap(&h->ev[i], &h->ev[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	return 0;
}

int heap_pop(struct sim_heap *h, struct sim_event *out)
{
	size_t i = 0;

	if (!h->n)
		return 0;
	*out = h->ev[0];
	h->ev[0] = h->ev[--h->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && before(&h->ev[l], &h->ev[m]))
			m = l;
		if (r < h->n && before(&h->ev[r], &h->ev[m]))
			m = r;
		if (m == i)
			break;
		swap(&h->ev[i], &h->ev[m]);
		i = m;
	}
	return 1;
}

double heap_top_time(const struct sim_heap *h)
{
	return h->n ? h->ev[0].t : INFINITY;
}

void heap_free(struct sim_heap *h)
{
	free(h->ev);
	*h = (struct sim_heap){ 0 };
}
