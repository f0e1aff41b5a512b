/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mqos.c - mQoS (Y.-D. Lin, C.-M. Tien, S.-C. Tsao, R.-H. Feng, Y.-C. Lai,
 * "Multiple-Resource Request Scheduling for Differentiated QoS at Website
 * Gateway", §3.3-3.4): one DRR sub-scheduler per server resource and a main
 * scheduler that triggers them.
 *
 * A class has one sub-queue per resource (q[j]: its requests whose largest
 * cost relative to capacity is resource j, rs_res_tendency(), so m classes
 * x n resources queues) and one deficit counter per resource (mq[j].dc, in
 * units of resource j). Sub-scheduler j goes round robin over the classes
 * with requests in q[j] (its turn list; the head is its pointer). The head
 * request r of class c goes when
 *   - every resource has room for it (RAC_i >= cost_i, resources.c), and
 *   - c has DC_ci >= cost_i for every resource i;
 * it then takes cost_i from every DC_ci of its class - from the other
 * sub-schedulers' counters too - and, when released, from every RAC. The
 * sub-scheduler keeps serving that class until its sub-queue empties or a
 * request does not fit; a class without the deficit passes the pointer on.
 * The main scheduler triggers the sub-scheduler of the most available
 * resource (largest RAC_i / capacity_i; ties: the lowest index, where the
 * paper draws at random), and the next most available one when it cannot
 * send, and so on. Quanta: Q_cj = res_quantum * capacity_j * w_c.
 *
 * Where this differs from the paper, and why:
 *  - one round for all sub-schedulers: when the pointer of any of them has
 *    gone round its classes, every DC of every class and resource grows by
 *    its quantum (lazily: s->mq_round, and per class the rounds already
 *    credited). The paper grows the DCs of sub-scheduler j when j's pointer
 *    wraps; then a class's credit on each resource grows at that resource's
 *    own pace, not with its weight, and a class whose requests need a
 *    little of a resource whose sub-scheduler turns slowly waits for it. In
 *    the three-class backlog of test_mqos (shares of disk 0.504, 0.384,
 *    0.112 for weights 6:3:1 with per-resource rounds) one round gives
 *    6:3:1 within 0.003 on every resource and a quarter of the visits;
 *  - a head that does not fit the RACs keeps the pointer (the paper moves
 *    it on): moving on completes rounds, and so hands out quanta, while
 *    the server is full, and the weights fade exactly when the server is
 *    the bottleneck. The sub-scheduler waits for the resources, as DRR on
 *    a link waits for the line; the other sub-schedulers may still send;
 *  - when no sub-scheduler can send only for want of deficit (every head
 *    has room), the rounds the nearest head needs are added at once (as
 *    drr.c's skip_rounds);
 *  - a class whose queues all empty leaves with DC = 0 (DRR); one that gets
 *    a request starts with one quantum per resource (DRR's first visit);
 *    DC_cj <= Q_cj + capacity_j, so the credit a class saves while it does
 *    not use a resource is bounded and any single cost still fits.
 *
 * Invariants (check.c): class c is on turn list j iff q[j] is not empty,
 * and list j's len counts them; DC_cj >= 0.
 * Cost: O(resources) per decision plus the visits of classes without
 * deficit (each such visit moves a pointer towards the next round); a
 * search over the queued heads (O(classes)) only when every class is out
 * of deficit, once per round as drr.c.
 */
#include <math.h>

#include "internal.h"

enum visit { SENT, NO_ROOM, NO_DEFICIT, IDLE };

static struct rs_links round_links(struct rs_sched *s, unsigned j)
{
	return (struct rs_links){ (char *)&s->cls->mq[j], sizeof(*s->cls),
				  offsetof(struct rs_mq, next),
				  offsetof(struct rs_mq, prev) };
}

static double quantum(const struct rs_sched *s, const struct rs_class *k,
		      unsigned j)
{
	return s->cfg.res_quantum * s->cfg.res_capacity[j] * k->weight;
}

/* DC_cj with the rounds not yet credited to it. */
static double *deficit(struct rs_sched *s, struct rs_class *k, unsigned j)
{
	struct rs_mq *m = &k->mq[j];

	if (m->seen != s->mq_round) {
		double q = quantum(s, k, j), top = q + s->cfg.res_capacity[j];

		m->dc += (double)(s->mq_round - m->seen) * q;
		if (m->dc > top)
			m->dc = top;
		m->seen = s->mq_round;
	}
	return &m->dc;
}

static bool deficit_fits(struct rs_sched *s, uint32_t c, uint32_t r)
{
	unsigned i;

	for (i = 0; i < s->cfg.nres; i++)
		if (rs_res_cost(s, r, i) > *deficit(s, &s->cls[c], i))
			return false;
	return true;
}

static void mqos_ready(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];
	unsigned j;

	for (j = 0; j < s->cfg.nres; j++) {
		k->mq[j].dc = quantum(s, k, j);
		k->mq[j].seen = s->mq_round;
	}
}

static void mqos_empty(struct rs_sched *s, uint32_t c)
{
	unsigned j;

	for (j = 0; j < s->cfg.nres; j++)
		s->cls[c].mq[j].dc = 0;
}

/* The pointer of sub-scheduler j moves on after a failed visit; as many
 * moves as classes on its list are a round (every DC grows). */
static void moved(struct rs_sched *s, unsigned j)
{
	if (++s->mq[j].moved >= s->mq[j].len) {
		s->mq[j].moved = 0;
		s->mq_round++;
	}
}

static void mqos_sub_ready(struct rs_sched *s, uint32_t c, unsigned j)
{
	rs_list_append(round_links(s, j), &s->mq[j].head, &s->mq[j].tail, c);
	s->mq[j].len++;
}

/* A class served until its sub-queue empties leaves the list (the
 * pointer is then at the next one: not a move, as DRR). */
static void mqos_sub_empty(struct rs_sched *s, uint32_t c, unsigned j)
{
	rs_list_cut(round_links(s, j), &s->mq[j].head, &s->mq[j].tail, c);
	if (--s->mq[j].len == 0)
		s->mq[j].moved = 0;
}

/* Sub-scheduler j: the class it sends (*c) or why it cannot. Visits each
 * class of its list at most once, plus the first again after a round's
 * quanta. */
static enum visit sub_scheduler(struct rs_sched *s, unsigned j, uint32_t *c)
{
	uint32_t tries;

	for (tries = 0; tries <= s->mq[j].len; tries++) {
		uint32_t r, i;

		*c = s->mq[j].head;
		if (*c == RS_NIL)
			return IDLE;
		r = s->cls[*c].q[j].head;
		if (!rs_res_fits(s, r))
			return NO_ROOM;
		if (deficit_fits(s, *c, r)) {
			for (i = 0; i < s->cfg.nres; i++)
				s->cls[*c].mq[i].dc -= rs_res_cost(s, r, i);
			s->cls[*c].next_sub = (uint8_t)j;
			return SENT;
		}
		rs_list_rotate(round_links(s, j), &s->mq[j].head,
			       &s->mq[j].tail);
		moved(s, j);
	}
	return NO_DEFICIT;
}

/* Resources by availability RAC_i / capacity_i, most available first
 * (ties: lower index first). */
static void by_availability(const struct rs_sched *s, unsigned *order)
{
	double avail[RS_MAX_RESOURCES];
	unsigned i, j, n = s->cfg.nres;

	for (i = 0; i < n; i++) {
		double cap = s->cfg.res_capacity[i];

		avail[i] = (cap - (double)s->res_used[i]) / cap;
		for (j = i; j > 0 && avail[order[j - 1]] < avail[i]; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
}

/* Every head has room but no class has the deficit for its head: the
 * rounds that the nearest head (fewest rounds) still needs. */
static void skip_rounds(struct rs_sched *s)
{
	double rounds = INFINITY;
	unsigned i, j;
	uint32_t c;

	for (j = 0; j < s->cfg.nres; j++)
		for (c = s->mq[j].head; c != RS_NIL; c = s->cls[c].mq[j].next) {
			struct rs_class *k = &s->cls[c];
			uint32_t r = k->q[j].head;
			double need = 0;

			for (i = 0; i < s->cfg.nres; i++) {
				double n = ceil(((double)rs_res_cost(s, r, i) -
						 *deficit(s, k, i)) /
						quantum(s, k, i));

				if (n > need)
					need = n;
			}
			if (need < rounds)
				rounds = need;
		}
	s->mq_round += rounds >= 1 ? (uint64_t)rounds : 1;
}

/* The main scheduler: the class whose head goes next (charged), or
 * RS_NIL. Two passes: the second after skip_rounds(), which lets the
 * nearest head through (every head had room in the first). */
static uint32_t mqos_pick(struct rs_sched *s)
{
	int pass;

	for (pass = 0; pass < 2; pass++) {
		unsigned order[RS_MAX_RESOURCES], i;
		bool queued = false, no_room = false;

		by_availability(s, order);
		for (i = 0; i < s->cfg.nres; i++) {
			uint32_t c;

			switch (sub_scheduler(s, order[i], &c)) {
			case SENT:
				return c;
			case NO_ROOM:
				no_room = true;
				break;
			case NO_DEFICIT:
				queued = true;
				break;
			case IDLE:
				break;
			}
		}
		if (no_room || !queued)
			return RS_NIL;	/* an end gives room back */
		skip_rounds(s);
	}
	return RS_NIL;
}

/* Smallest deficit of the class, relative to its capacity (stats). */
static double mqos_service(const struct rs_sched *s, uint32_t c)
{
	double low = INFINITY;
	unsigned j;

	for (j = 0; j < s->cfg.nres; j++) {
		double f = s->cls[c].mq[j].dc / s->cfg.res_capacity[j];

		if (f < low)
			low = f;
	}
	return low;
}

/* Reconfigure: the lists are built again as the requests are queued. */
static void mqos_rebuild(struct rs_sched *s)
{
	unsigned j;
	uint32_t c;

	for (j = 0; j < RS_MAX_RESOURCES; j++) {
		s->mq[j].head = s->mq[j].tail = RS_NIL;
		s->mq[j].len = s->mq[j].moved = 0;
		for (c = 0; c < s->ncls; c++)
			s->cls[c].mq[j].next = s->cls[c].mq[j].prev = RS_NIL;
	}
}

const struct rs_policy_ops rs_mqos_ops = {
	.name = "mqos",
	.service_counter = false,
	.per_user = false,
	.resources = true,
	.ready = mqos_ready,
	.empty = mqos_empty,
	.pick = mqos_pick,
	.service = mqos_service,
	.rebuild = mqos_rebuild,
	.sub_ready = mqos_sub_ready,
	.sub_empty = mqos_sub_empty,
};
