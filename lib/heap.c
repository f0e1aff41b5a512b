/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * heap.c - storage of the heaps of heap.h.
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
