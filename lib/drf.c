/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * drf.c - Dominant Resource Fairness (A. Ghodsi, M. Zaharia, B. Hindman,
 * A. Konwinski, S. Shenker, I. Stoica, "Dominant Resource Fairness: Fair
 * Allocation of Multiple Resource Types", NSDI 2011), weighted, over the
 * resources that released requests hold (resources.c).
 *
 * The dominant share of class c is max_i held_ci / capacity_i, its key
 * that share divided by w_c. As DRF's Algorithm 1, the class with the
 * smallest key whose queue is not empty goes next when every resource has
 * room for its head; when it has not, nothing goes until an end gives room
 * back (progressive filling stops at the first resource that saturates;
 * skipping to a class with a smaller request would let small requests
 * starve large ones). Keys change when a class takes (release) or gives
 * back (end) resources: O(resources + log classes) per event.
 * Ties: the lower class index.
 *
 * Invariant (check.c): a class is in s->drf iff nq > 0, its key is
 * rs_res_share() of what it holds now, and the heap is ordered.
 */
#include "heap.h"

static bool drf_less(const struct rs_sched *s, uint32_t a, uint32_t b)
{
	double ka = s->cres[a].drf_share, kb = s->cres[b].drf_share;

	return ka < kb || (ka == kb && a < b);
}

static void drf_setpos(struct rs_sched *s, uint32_t c, uint32_t pos)
{
	s->cres[c].hpos_drf = pos;
}

static const struct rs_heap_ops drf_heap = { drf_less, drf_setpos };

int rs_drf_reserve(struct rs_sched *s, uint32_t n)
{
	return rs_heap_reserve(&s->drf, n);
}

static void drf_ready(struct rs_sched *s, uint32_t c)
{
	s->cres[c].drf_share = rs_res_share(s, c);
	rs_heap_push(s, &s->drf, &drf_heap, c);
}

static void drf_empty(struct rs_sched *s, uint32_t c)
{
	rs_heap_remove(s, &s->drf, &drf_heap, s->cres[c].hpos_drf);
}

static uint32_t drf_pick(struct rs_sched *s)
{
	uint32_t c = rs_heap_top(&s->drf);

	if (c == RS_NIL || !rs_res_fits(s, s->cls[c].q[0].head))
		return RS_NIL;
	return c;
}

/* Class c took or gave back resources: its key moves. */
static void drf_res_changed(struct rs_sched *s, uint32_t c)
{
	struct rs_cres *k = &s->cres[c];

	k->drf_share = rs_res_share(s, c);
	if (k->hpos_drf != RS_NIL)
		rs_heap_fix(s, &s->drf, &drf_heap, k->hpos_drf);
}

static double drf_service(const struct rs_sched *s, uint32_t c)
{
	return rs_res_share(s, c);
}

/* Reconfigure: the heap is built again as the requests are queued. */
static void drf_rebuild(struct rs_sched *s)
{
	uint32_t c;

	s->drf.n = 0;
	for (c = 0; c < s->ncls; c++)
		s->cres[c].hpos_drf = RS_NIL;
}

const struct rs_policy_ops rs_drf_ops = {
	.name = "drf",
	.service_counter = false,
	.per_user = false,
	.resources = true,
	.ready = drf_ready,
	.empty = drf_empty,
	.pick = drf_pick,
	.service = drf_service,
	.rebuild = drf_rebuild,
	.res_changed = drf_res_changed,
};
