/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * drr.c - RQS release proportion controller (RPC): deficit round robin over
 * the ESTIMATED response sizes of queued requests, with the compensation of
 * RQS Fig. 8 once the real size is known.
 *
 * Round robin over the classes with queued requests (a list whose head is
 * the class being visited; a failed visit moves it to the tail, so a
 * selection is O(1) amortized). On a visit class i gets its quantum
 * Q_i = drr_quantum * w_i once; it releases its head request while
 * size <= DC_i (DC_i -= size); when the head does not fit the visit ends.
 * A class whose queue empties leaves the round with DC_i = 0 (DRR), except
 * that a negative DC left by compensation is kept as debt so that an
 * underestimated class cannot escape it by idling briefly.
 *
 * Compensation (RQS Fig. 8): when the real size is known (first byte with
 * Content-Length, else the bytes received at the end),
 *   DC_i -= real - estimate   (real larger)   DC_i += estimate - real (smaller)
 *
 * sqos (sqos.c) is the same round over the costs of one resource j =
 * cfg.sqos_resource instead of sizes, with Q_i = res_quantum * capacity_j
 * * w_i, and a head that fits its deficit but not RAC_j (resources.c) waits
 * with its visit open: nothing goes until an end gives the room back.
 */
#include <math.h>

#include "internal.h"

static double quantum(const struct rs_sched *s, const struct rs_class *k)
{
	if (s->pol->resources)
		return s->cfg.res_quantum *
		       s->cfg.res_capacity[s->cfg.sqos_resource] * k->weight;
	return (double)s->cfg.drr_quantum * k->weight;
}

/* What request r costs the round: its estimated size, or (sqos) its cost
 * of the scheduled resource. */
static double size_of(const struct rs_sched *s, uint32_t r)
{
	if (s->pol->resources)
		return rs_res_cost(s, r, s->cfg.sqos_resource);
	return (double)s->req[r].est_size;
}

#define ROUND(s) RS_LINKS((s)->cls, rr_next, rr_prev)

/* Class c has queued requests: it joins the round at the tail. */
void rs_drr_ready(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];

	if (k->dc > 0)
		k->dc = 0;
	k->visiting = 0;
	k->in_round = 1;
	rs_list_append(ROUND(s), &s->rr_head, &s->rr_tail, c);
	s->rr_len++;
}

void rs_drr_empty(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];

	if (!k->in_round)
		return;
	if (k->dc > 0)
		k->dc = 0;
	k->visiting = 0;
	k->in_round = 0;
	rs_list_cut(ROUND(s), &s->rr_head, &s->rr_tail, c);
	s->rr_len--;
}

/* Every class in the round failed a visit: add as many whole rounds of
 * quanta as needed at once so that the next visit of some class fits
 * (same outcome as looping, O(classes) instead of O(rounds * classes)). */
static void skip_rounds(struct rs_sched *s)
{
	double rounds = INFINITY;
	uint32_t c;

	for (c = s->rr_head; c != RS_NIL; c = s->cls[c].rr_next) {
		struct rs_class *k = &s->cls[c];
		double need = size_of(s, rs_peek_from(s, c)) - k->dc;
		double n = ceil(need / quantum(s, k)) - 1;

		if (n < rounds)
			rounds = n;
	}
	if (!(rounds > 0))
		return;
	for (c = s->rr_head; c != RS_NIL; c = s->cls[c].rr_next)
		s->cls[c].dc += rounds * quantum(s, &s->cls[c]);
}

/* The class whose head request fits its deficit (charged for it). */
uint32_t rs_drr_pick(struct rs_sched *s)
{
	uint32_t failed = 0;

	while (s->rr_head != RS_NIL) {
		uint32_t c = s->rr_head;
		struct rs_class *k = &s->cls[c];
		uint32_t r;

		if (!k->visiting) {
			k->dc += quantum(s, k);
			k->visiting = 1;
		}
		r = rs_peek_from(s, c);
		if (size_of(s, r) <= k->dc) {
			if (s->pol->resources && !rs_resv_admit(s, r))
				return RS_NIL;	/* sqos: wait for room */
			k->dc -= size_of(s, r);
			return c;	/* may leave the round when taken */
		}
		k->visiting = 0;
		rs_list_rotate(ROUND(s), &s->rr_head, &s->rr_tail);
		if (++failed == s->rr_len) {
			skip_rounds(s);
			failed = 0;
		}
	}
	return RS_NIL;
}

/* The real size of released request r is known (once): correct its
 * class's DC. */
static void drr_size_known(struct rs_sched *s, uint32_t r, uint64_t real)
{
	struct rs_req *q = &s->req[r];

	if (s->cfg.drr_compensation)
		s->cls[q->cls].dc += (double)q->est_size - (double)real;
}

/* Request r was taken but goes away before release (rtc held or
 * scheduled it): its estimated size goes back to the deficit. */
static void drr_refund(struct rs_sched *s, uint32_t r)
{
	struct rs_req *q = &s->req[r];

	if (!(q->flags & RS_RF_SIZE_KNOWN))
		s->cls[q->cls].dc += (double)q->est_size;
}

double rs_drr_service(const struct rs_sched *s, uint32_t c)
{
	return s->cls[c].dc;
}

const struct rs_policy_ops rs_drr_ops = {
	.name = "drr",
	.reads_size = true,
	RS_DRR_OPS,
	.refund = drr_refund,
	.size_known = drr_size_known,
};
