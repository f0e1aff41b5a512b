/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heap.h - binary min-heap of timed events.
 *
 * Events are ordered by (time, seq): seq is a global insertion counter, so
 * events at the same instant run in the order they were scheduled and a
 * run is deterministic.
 */
#ifndef SIM_HEAP_H
#define SIM_HEAP_H

#include <stddef.h>
#include <stdint.h>

struct sim_event {
	double t;
	uint64_t seq;
	int type;
	uint32_t a;		/* type-specific: user or request index */
	uint32_t b;		/* type-specific: generation, class */
};

struct sim_heap {
	struct sim_event *ev;
	size_t n, alloc;
	uint64_t seq;
};

int heap_push(struct sim_heap *h, double t, int type, uint32_t a, uint32_t b);
int heap_pop(struct sim_heap *h, struct sim_event *out);	/* 0 if empty */
double heap_top_time(const struct sim_heap *h);		/* INFINITY if empty */
void heap_free(struct sim_heap *h);

#endif /* SIM_HEAP_H */
