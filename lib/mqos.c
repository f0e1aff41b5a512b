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
 * with requests in q[j] (its list; the head is its pointer). When its
 * pointer has gone round the list, every class's DC_j grows by its quantum
 * Q_cj = res_quantum * capacity_j * w_c, all at once as the paper says
 * (lazily here: a round counter per resource, and per class the rounds
 * already credited). The head request r of the class at the pointer goes
 * when
 *   - its class has DC_cj >= cost_j (or it is the reserved request), and
 *   - every resource has room for it (RAC_i >= cost_i, resources.c), with
 *     the room of a reserved request kept (reservation.c);
 * it then takes cost_i from every DC_ci of its class - the other
 * sub-schedulers' counters too - and, when released, from every RAC. The
 * sub-scheduler keeps serving that class until its sub-queue empties or a
 * request does not fit; a class without the deficit passes the pointer on.
 * The main scheduler triggers the sub-scheduler of the most available
 * resource (largest RAC_i / capacity_i; ties: the lowest index, where the
 * paper draws at random), and the next most available one when it cannot
 * send, and so on.
 *
 * Where this differs from the paper, and why (measured with test_mqos's
 * backlog and the website-gateway scenario of reqsched-sim):
 *  - the deficit checked is the sub-scheduler's own, DC_cj; the paper
 *    checks every DC_ci of the class. The charge still goes to every DC, so
 *    a DC_ci below 0 is a debt the class pays back on resource i before its
 *    next i-heavy request. Checking them all starves a light class's disk
 *    and bandwidth requests: each needs a little CPU deficit, which the
 *    class's CPU-heavy requests spend as soon as a CPU round credits it (in
 *    the scenario's open load bronze sent 0 of its disk- and 0 of its
 *    bandwidth-heavy requests; with the own check every resource is split
 *    within 4 % of 6:3:1);
 *  - a head with the deficit that does not fit the RACs keeps the pointer
 *    (the paper moves it on): moving on completes rounds, and so hands out
 *    quanta, while the server is full, and the weights fade exactly when
 *    the server is the bottleneck. The sub-scheduler waits for the
 *    resources, as DRR on a link waits for the line; the other
 *    sub-schedulers may still send, beside it once its reservation holds
 *    (reservation.c: after 4 of their releases; without it a media file
 *    costing 100 % of the bandwidth never went while CGI pages holding 4 %
 *    kept going). The deficit is checked first, so the reserved request is
 *    one the sub-scheduler would send, and it then goes without a second
 *    check (the others' releases may have charged its class's DC_cj);
 *  - a sub-scheduler whose whole list is short of deficit adds at once the
 *    rounds its nearest head needs (as drr.c's skip_rounds);
 *  - a class whose queues all empty keeps its debts and loses its credit
 *    (DRR; drr.c); one that gets a request gains one quantum per resource
 *    (DRR's first visit); DC_cj <= Q_cj + capacity_j, so the credit saved
 *    while a class does not use a resource is bounded and any cost fits.
 *
 * Invariants (check.c): class c is on list j iff q[j] is not empty, list
 * j's len counts them; every DC is finite.
 * Cost: O(resources) per decision plus DRR's amortized O(1) visits (a
 * failed visit passes the pointer; a round credits every class); O(list)
 * only when a whole list is short of deficit, once per round as drr.c.
 */
#include <math.h>

#include "internal.h"

enum visit { SENT, NO_ROOM, IDLE };

static struct rs_links list_links(struct rs_sched *s, unsigned j)
{
	return (struct rs_links){ (char *)&s->cres->mq[j], sizeof(*s->cres),
				  offsetof(struct rs_mq, next),
				  offsetof(struct rs_mq, prev) };
}

static double quantum(const struct rs_sched *s, uint32_t c, unsigned j)
{
	return s->cfg.res_quantum * s->cfg.res_capacity[j] * s->cls[c].weight;
}

/* Credit DC_cj with the rounds of sub-scheduler j it has not seen. */
static __attribute__((noinline)) void credit(struct rs_sched *s, uint32_t c,
					     unsigned j)
{
	struct rs_mq *m = &s->cres[c].mq[j];
	double q = quantum(s, c, j), top = q + s->cfg.res_capacity[j];

	m->dc += (double)(s->mq[j].round - m->seen) * q;
	if (m->dc > top)
		m->dc = top;
	m->seen = s->mq[j].round;
}

/* DC_cj with the rounds of sub-scheduler j not yet credited to it (inline:
 * every visit reads it and rounds are rare; the credit is not). */
static inline double *deficit(struct rs_sched *s, uint32_t c, unsigned j)
{
	struct rs_mq *m = &s->cres[c].mq[j];

	if (m->seen != s->mq[j].round)
		credit(s, c, j);
	return &m->dc;
}

static void mqos_ready(struct rs_sched *s, uint32_t c)
{
	unsigned j;

	for (j = 0; j < s->cfg.nres; j++) {
		struct rs_mq *m = &s->cres[c].mq[j];
		double q = quantum(s, c, j), top = q + s->cfg.res_capacity[j];

		m->seen = s->mq[j].round;
		m->dc = m->dc + q < top ? m->dc + q : top;
	}
}

static void mqos_empty(struct rs_sched *s, uint32_t c)
{
	unsigned j;

	for (j = 0; j < s->cfg.nres; j++)
		if (*deficit(s, c, j) > 0)
			s->cres[c].mq[j].dc = 0;
}

/* The pointer of sub-scheduler j moves on after a failed visit; as many
 * moves as classes on its list are a round (every DC_j grows). */
static void moved(struct rs_sched *s, unsigned j)
{
	if (++s->mq[j].moved >= s->mq[j].len) {
		s->mq[j].moved = 0;
		s->mq[j].round++;
	}
}

static void mqos_sub_ready(struct rs_sched *s, uint32_t c, unsigned j)
{
	rs_list_append(list_links(s, j), &s->mq[j].head, &s->mq[j].tail, c);
	s->mq[j].len++;
}

/* A class served until its sub-queue empties leaves the list (the
 * pointer is then at the next one: not a move, as DRR). */
static void mqos_sub_empty(struct rs_sched *s, uint32_t c, unsigned j)
{
	rs_list_cut(list_links(s, j), &s->mq[j].head, &s->mq[j].tail, c);
	if (--s->mq[j].len == 0)
		s->mq[j].moved = 0;
}

/* Every class on list j failed a visit: the rounds the nearest head still
 * needs, at once. */
static void skip_rounds(struct rs_sched *s, unsigned j)
{
	double rounds = INFINITY;
	uint32_t c;

	for (c = s->mq[j].head; c != RS_NIL; c = s->cres[c].mq[j].next) {
		double need = ceil(((double)rs_res_cost(s, s->cls[c].q[j].head, j) -
				    *deficit(s, c, j)) / quantum(s, c, j));

		if (need < rounds)
			rounds = need;
	}
	if (rounds >= 1)
		s->mq[j].round += (uint64_t)rounds;
}

/* Sub-scheduler j: the class it sends (*c, charged) or why it cannot. */
static enum visit sub_scheduler(struct rs_sched *s, unsigned j, uint32_t *c)
{
	uint32_t failed = 0;

	while ((*c = s->mq[j].head) != RS_NIL) {
		struct rs_class *k = &s->cls[*c];
		uint32_t r = k->q[j].head;
		unsigned i;

		if (r == s->resv || rs_res_cost(s, r, j) <= *deficit(s, *c, j)) {
			if (!rs_resv_admit(s, r))
				return NO_ROOM;
			for (i = 0; i < s->cfg.nres; i++)
				*deficit(s, *c, i) -= rs_res_cost(s, r, i);
			k->next_sub = (uint8_t)j;
			return SENT;
		}
		rs_list_rotate(list_links(s, j), &s->mq[j].head,
			       &s->mq[j].tail);
		moved(s, j);
		if (++failed == s->mq[j].len) {
			skip_rounds(s, j);
			failed = 0;
		}
	}
	return IDLE;
}

/* Resources by availability RAC_i / capacity_i, most available first
 * (ties: lower index first). Sorted again only when an availability
 * changed (s->res_gen): a decision that finds no room leaves them as
 * they were, and the next one (the next enqueue's) reads the same. */
static const unsigned *by_availability(struct rs_sched *s)
{
	double avail[RS_MAX_RESOURCES];
	unsigned i, j, n = s->cfg.nres, *order = s->mq_order;

	if (s->mq_order_gen == s->res_gen)
		return order;
	for (i = 0; i < n; i++) {
		avail[i] = rs_res_avail(s, i);
		for (j = i; j > 0 && avail[order[j - 1]] < avail[i]; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	s->mq_order_gen = s->res_gen;
	return order;
}

/* The main scheduler: the class whose head goes next (charged), or
 * RS_NIL when no sub-scheduler has a request with room. */
static uint32_t mqos_pick(struct rs_sched *s)
{
	const unsigned *order = by_availability(s);
	unsigned i;

	for (i = 0; i < s->cfg.nres; i++) {
		uint32_t c;

		if (sub_scheduler(s, order[i], &c) == SENT)
			return c;
	}
	return RS_NIL;
}

/* Smallest deficit of the class, relative to its capacity (stats). */
static double mqos_service(const struct rs_sched *s, uint32_t c)
{
	double low = INFINITY;
	unsigned j;

	for (j = 0; j < s->cfg.nres; j++) {
		double f = s->cres[c].mq[j].dc / s->cfg.res_capacity[j];

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
			s->cres[c].mq[j].next = s->cres[c].mq[j].prev = RS_NIL;
	}
}

const struct rs_policy_ops rs_mqos_ops = {
	.name = "mqos",
	.service_counter = false,
	.per_user = false,
	.resources = true,
	.resv_passes = 4,
	.ready = mqos_ready,
	.empty = mqos_empty,
	.pick = mqos_pick,
	.service = mqos_service,
	.rebuild = mqos_rebuild,
	.sub_ready = mqos_sub_ready,
	.sub_empty = mqos_sub_empty,
};
