/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heap.c - storage of the heaps of heap.h: the request heaps (rtc) and
 * the keyed class heaps (msf, drf). Only the storage is shared: the sift code
 * of each is specialized (see heap.h).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * Make room for `need` elements of `size` bytes in the array whose pointer
 * is at `arr` (a T ** passed as void *, so that one function serves every
 * element type) and whose capacity is *cap: at least 16 elements and at
 * least double the old capacity, so pushes are amortized O(1).
 */
static int array_reserve(void *arr, uint32_t *cap, uint32_t need,
			 size_t size)
{
	void *p;

	if (need <= *cap)
		return 0;
	if (need < 16)
		need = 16;
	if (need < *cap * 2)
		need = *cap * 2;
	memcpy(&p, arr, sizeof(p));
	p = realloc(p, (size_t)need * size);
	if (!p)
		return RS_ENOMEM;
	memcpy(arr, &p, sizeof(p));
	*cap = need;
	return 0;
}

int rs_heap_reserve(struct rs_heap *h, uint32_t cap)
{
	return array_reserve(&h->item, &h->cap, cap, sizeof(*h->item));
}

int rs_kheap_reserve(struct rs_kheap *h, uint32_t cap)
{
	return array_reserve(&h->ent, &h->cap, cap, sizeof(*h->ent));
}

void rs_heap_free(struct rs_heap *h)
{
	free(h->item);
	h->item = NULL;
	h->n = h->cap = 0;
}

void rs_kheap_free(struct rs_kheap *h)
{
	free(h->ent);
	h->ent = NULL;
	h->n = h->cap = 0;
}
