/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * drr.c - RQS release proportion controller (RPC): deficit round robin over
 * the ESTIMATED response sizes of queued requests, with the compensation of
 * RQS Fig. 8 once the real size is known.
 *
 * Round robin over the classes with queued requests (a circular list, so a
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
 */
#include <math.h>

#include "internal.h"

static double quantum(const struct rs_sched *s, const struct rs_class *k)
{
	return (double)s->cfg.drr_quantum * k->weight;
}

void rs_drr_class_ready(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];

	if (k->dc > 0)
		k->dc = 0;
	k->visiting = 0;
	k->in_round = 1;
	if (s->rr_head == RS_NIL) {
		k->rr_next = k->rr_prev = c;
		s->rr_head = c;
	} else {
		/* insert at the tail: just before the current class */
		uint32_t h = s->rr_head, t = s->cls[h].rr_prev;

		k->rr_next = h;
		k->rr_prev = t;
		s->cls[t].rr_next = c;
		s->cls[h].rr_prev = c;
	}
	s->rr_len++;
}

void rs_drr_class_empty(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];

	if (!k->in_round)
		return;
	if (k->dc > 0)
		k->dc = 0;
	k->visiting = 0;
	k->in_round = 0;
	if (--s->rr_len == 0) {
		s->rr_head = RS_NIL;
	} else {
		s->cls[k->rr_prev].rr_next = k->rr_next;
		s->cls[k->rr_next].rr_prev = k->rr_prev;
		if (s->rr_head == c)
			s->rr_head = k->rr_next;
	}
	k->rr_next = k->rr_prev = RS_NIL;
}

/* Every class in the round failed a visit: add as many whole rounds of
 * quanta as needed at once so that the next visit of some class fits
 * (same outcome as looping, O(classes) instead of O(rounds * classes)). */
static void skip_rounds(struct rs_sched *s)
{
	double rounds = INFINITY;
	uint32_t c = s->rr_head, i;

	for (i = 0; i < s->rr_len; i++, c = s->cls[c].rr_next) {
		struct rs_class *k = &s->cls[c];
		double need = (double)s->req[rs_peek_from(s, c)].est_size - k->dc;
		double n = ceil(need / quantum(s, k)) - 1;

		if (n < rounds)
			rounds = n;
	}
	if (!(rounds > 0))
		return;
	for (i = 0; i < s->rr_len; i++, c = s->cls[c].rr_next)
		s->cls[c].dc += rounds * quantum(s, &s->cls[c]);
}

uint32_t rs_drr_select(struct rs_sched *s)
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
		if ((double)s->req[r].est_size <= k->dc) {
			k->dc -= (double)s->req[r].est_size;
			return rs_take_from(s, c);	/* may leave the round */
		}
		k->visiting = 0;
		s->rr_head = k->rr_next;
		if (++failed == s->rr_len) {
			skip_rounds(s);
			failed = 0;
		}
	}
	return RS_NIL;
}

/* The real size of released request r is known: correct its class's DC. */
void rs_drr_compensate(struct rs_sched *s, uint32_t r, uint64_t real)
{
	struct rs_req *q = &s->req[r];

	if (q->flags & RS_RF_SIZE_KNOWN)
		return;
	q->flags |= RS_RF_SIZE_KNOWN;
	if (s->cfg.policy != RS_POLICY_DRR || !s->cfg.drr_compensation)
		return;
	s->cls[q->cls].dc += (double)q->est_size - (double)real;
}
