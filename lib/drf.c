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
 *
 * Ties: the smaller drf_used, then the lower class index. drf_used is the
 * dominant shares of the requests the class was given, each divided by
 * w_c (the memory of DRFQ, Ghodsi et al., SIGCOMM 2012). Without it a
 * server that one request fills leaves every class holding nothing at
 * every decision, and the first class would win every tie (measured in
 * Squid: 48:0 for weights 6:1); with it they go w_a : w_b. A class that
 * becomes backlogged starts at max(drf_used, V), V the drf_used of the
 * class last picked before its charge (SFQ's start tag), so time spent
 * idle is not credit.
 *
 * Invariant (check.c): a class is in s->drf iff nq > 0, its key is
 * rs_res_share() of what it holds now, and the heap is ordered by (key,
 * drf_used, index).
 */
#include "heap.h"

static bool drf_less(const struct rs_sched *s, uint32_t a, uint32_t b)
{
	const struct rs_cres *x = &s->cres[a], *y = &s->cres[b];

	if (x->drf_share != y->drf_share)
		return x->drf_share < y->drf_share;
	if (x->drf_used != y->drf_used)
		return x->drf_used < y->drf_used;
	return a < b;
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
	struct rs_cres *k = &s->cres[c];

	if (k->drf_used < s->drf_v)
		k->drf_used = s->drf_v;
	k->drf_share = rs_res_share(s, c);
	rs_heap_push(s, &s->drf, &drf_heap, c);
}

static void drf_empty(struct rs_sched *s, uint32_t c)
{
	rs_heap_remove(s, &s->drf, &drf_heap, s->cres[c].hpos_drf);
}

/* The head of the top class goes if it fits; the class is charged its
 * dominant share (rs_res_take() then fixes its place in the heap). */
static uint32_t drf_pick(struct rs_sched *s)
{
	uint32_t c = rs_heap_top(&s->drf), r;

	if (c == RS_NIL)
		return RS_NIL;
	r = s->cls[c].q[0].head;
	if (!rs_res_fits(s, r))
		return RS_NIL;
	s->drf_v = s->cres[c].drf_used;
	s->cres[c].drf_used += rs_res_dominant(s, r) / s->cls[c].weight;
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

/* Reconfigure: the heap is built again as the requests are queued; the
 * memory starts again. */
static void drf_rebuild(struct rs_sched *s)
{
	uint32_t c;

	s->drf.n = 0;
	s->drf_v = 0;
	for (c = 0; c < s->ncls; c++) {
		s->cres[c].hpos_drf = RS_NIL;
		s->cres[c].drf_used = 0;
	}
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
