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
 * room for its head. When it has not, its head is reserved (reservation.c)
 * and the next classes in key order may go beside it, with what it needs
 * kept for it. Before, nothing went until an end gave room back (DRF's
 * progressive filling stops at the first saturated resource), which with
 * heads that need a whole resource left the others idle: ~0.4 of every
 * resource on the testbed with the prober's table (a CGI page costing
 * 100 % CPU at the top blocked the photos and media files behind it).
 * Skipping alone would let small requests starve large ones; with the
 * reservation a head waits only while other classes come before its class
 * in DRF's own order (the reservation follows the top; drf_used grows with
 * what the others are given, so its class comes back to the top). Keys
 * change when a class takes (release) or gives back (end) resources:
 * O(resources + log classes) per event, O(resources * DRF_LOOK) more when
 * the top's head has no room.
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

/* Classes whose heads one decision looks at, the top one included: bounds
 * a decision when the top's head has no room. */
#define DRF_LOOK 8

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

/* Class c's head r goes: c is charged its dominant share (rs_res_take()
 * then fixes its place in the heap). */
static uint32_t charge(struct rs_sched *s, uint32_t c, uint32_t r)
{
	s->drf_v = s->cres[c].drf_used;
	s->cres[c].drf_used += rs_res_dominant(s, r) / s->cls[c].weight;
	return c;
}

/* The head of the top class goes if it fits; if not, it is the reserved
 * request (the reservation follows the top: the class DRF would serve
 * now), and the first of the heads of the next classes in key order (best
 * first through the heap, DRF_LOOK in all) that fits beside it goes
 * (reservation.c). */
static uint32_t drf_pick(struct rs_sched *s)
{
	uint32_t front[DRF_LOOK + 1], n = 0, seen, i, best;

	if (s->drf.n) {
		front[n++] = 0;
		if (s->resv != s->cls[s->drf.item[0]].q[0].head)
			rs_resv_forget(s, s->resv);
	}
	for (seen = 0; n && seen < DRF_LOOK; seen++) {
		uint32_t pos, c, r;

		for (best = 0, i = 1; i < n; i++)
			if (drf_less(s, s->drf.item[front[i]],
				     s->drf.item[front[best]]))
				best = i;
		pos = front[best];
		front[best] = front[--n];
		c = s->drf.item[pos];
		r = s->cls[c].q[0].head;
		if (rs_resv_admit(s, r))
			return charge(s, c, r);
		for (i = 2 * pos + 1; i <= 2 * pos + 2 && i < s->drf.n; i++)
			front[n++] = i;
	}
	return RS_NIL;
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
