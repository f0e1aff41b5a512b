/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * drf.c - Dominant Resource Fairness over time: weighted DRFQ (A. Ghodsi,
 * V. Sekar, M. Zaharia, I. Stoica, "Multi-Resource Fair Queueing for
 * Packet Processing", SIGCOMM 2012) over the resources that released
 * requests hold (resources.c), with the dominant share of DRF (Ghodsi et
 * al., NSDI 2011).
 *
 * A request's dominant share is its largest cost / capacity. A class's key
 * drf_used is the dominant shares of the requests it was given, each
 * divided by w_c: DRFQ's start tag of its next request. The class with the
 * smallest key whose queue is not empty goes next when every resource has
 * room for its head. A class that becomes backlogged starts at max(drf_used,
 * V), V the key of the class last picked before its charge (SFQ's start
 * tag), so time spent idle is not credit. Over a backlog the dominant
 * shares given follow the weights; with the same mix of requests in every
 * class so does each resource's use.
 *
 * Before (2026-11-26) the key was what the class held at the decision
 * (DRF's instantaneous allocation), drf_used only a tie-break: bronze got
 * 43-47 % more than its CPU share on the testbed's website gateway and
 * 11-19 % less in the simulator's; since, the worst class is 2.6-8.7 % off
 * (doc/website-gateway.md). The charge is the cost vector, not how long it
 * is held: a class whose requests hold their costs longer than others'
 * gets more of the resources' time than its weight (the costs are rates).
 *
 * When the top's head has no room it is reserved (reservation.c) and the
 * next classes in key order may go beside it, with what it needs kept for
 * it. Before, nothing went until an end gave room back (DRF's progressive
 * filling stops at the first saturated resource), which with heads that
 * need a whole resource left the others idle: ~0.4 of every resource on
 * the testbed with the prober's table. Skipping alone would let small
 * requests starve large ones; with the reservation a head waits only while
 * other classes come before its class in key order (the reservation
 * follows the top; the others' keys grow with what they are given, so its
 * class comes back to the top). Keys change only when a class is given a
 * request: O(log classes) per release, O(DRF_LOOK * resources) more when
 * the top's head has no room.
 *
 * Invariant (check.c): a class is in s->drf iff nq > 0, its entry's key
 * is its drf_used, and the heap is ordered by (drf_used, index): heap.h's
 * keyed heap RS_KH_DRF.
 */
#include "heap.h"

/* Classes whose heads one decision looks at, the top one included: bounds
 * a decision when the top's head has no room. */
#define DRF_LOOK 8

int rs_drf_reserve(struct rs_sched *s, uint32_t n)
{
	return rs_kheap_reserve(&s->drf, n);
}

/* Class c's entry: its key drf_used (no second key: ties go to the lower
 * index, rs_kless). */
static struct rs_kent key_of(const struct rs_sched *s, uint32_t c)
{
	struct rs_kent e = { s->cres[c].drf_used, 0, c };

	return e;
}

static void drf_ready(struct rs_sched *s, uint32_t c)
{
	struct rs_cres *k = &s->cres[c];
	struct rs_kent e;

	if (k->drf_used < s->drf_v)
		k->drf_used = s->drf_v;
	e = key_of(s, c);
	rs_kpush(s, RS_KH_DRF, &e);
}

static void drf_empty(struct rs_sched *s, uint32_t c)
{
	rs_kremove(s, RS_KH_DRF, s->cres[c].hpos_drf);
}

/* Class c's head r goes: c is charged its dominant share / w and moves
 * down the heap - unless r is its last request: the take that follows
 * every pick (rs_select_next) empties the class, and drf_empty removes it
 * from the heap, which the larger key does not order until then. */
static uint32_t charge(struct rs_sched *s, uint32_t c, uint32_t r)
{
	struct rs_cres *k = &s->cres[c];

	s->drf_v = k->drf_used;
	k->drf_used += rs_res_dominant(s, r) / s->cls[c].weight;
	if (s->cls[c].nq > 1) {
		struct rs_kent e = key_of(s, c);

		rs_kmove(s, RS_KH_DRF, k->hpos_drf, &e);
	}
	return c;
}

/* A class the look-ahead looks at: its entry and place in the heap. */
struct drf_cand {
	struct rs_kent e;
	uint32_t pos;
};

/* The children of the class at pos join the candidates front[0..*n). */
static void look_below(const struct rs_sched *s, struct drf_cand *front,
		       uint32_t *n, uint32_t pos)
{
	uint32_t i;

	for (i = 2 * pos + 1; i <= 2 * pos + 2 && i < s->drf.n; i++) {
		front[*n].e = s->drf.ent[i];
		front[(*n)++].pos = i;
	}
}

/* The top's head is reserved and something may go beside it: the heads
 * of the next classes in key order (best first through the heap,
 * DRF_LOOK - 1 of them); the first that fits beside it goes. */
static uint32_t look_ahead(struct rs_sched *s)
{
	struct drf_cand front[DRF_LOOK + 1], top;
	uint32_t n = 0, seen, i, best;

	look_below(s, front, &n, 0);
	for (seen = 1; n && seen < DRF_LOOK; seen++) {
		uint32_t r;

		for (best = 0, i = 1; i < n; i++)
			if (rs_kless(RS_KH_DRF, &front[i].e, &front[best].e))
				best = i;
		top = front[best];
		front[best] = front[--n];
		r = s->cls[top.e.c].q[0].head;
		if (rs_resv_admit(s, r))
			return charge(s, top.e.c, r);
		look_below(s, front, &n, top.pos);
	}
	return RS_NIL;
}

/* The head of the top class goes if it fits; if not, it is the reserved
 * request (the reservation follows the top: the class DRF would serve
 * now), and the first of the heads of the next classes that fits beside
 * it goes (look_ahead, reservation.c). */
static uint32_t drf_pick(struct rs_sched *s)
{
	uint32_t c, r;

	if (!s->drf.n)
		return RS_NIL;
	c = s->drf.ent[0].c;
	r = s->cls[c].q[0].head;
	if (s->resv != r)
		rs_resv_forget(s, s->resv);
	if (rs_resv_admit(s, r))
		return charge(s, c, r);
	if (rs_resv_blocks_all(s))
		return RS_NIL;
	return look_ahead(s);
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
};
