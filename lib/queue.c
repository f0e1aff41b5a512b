/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * queue.c - per-class sub-queues, the global FIFO of waiting requests and
 * the policy-independent selection entry point.
 *
 * Invariants:
 *  - class c is in the ready heap (msf/rfq) or on the round robin (drr)
 *    iff c->nq > 0, where nq = q[0].len + q[1].len;
 *  - every QUEUED, HELD or SCHEDULED request is on the global FIFO, in
 *    enqueue order (used by rs_expire()).
 */
#include "internal.h"

void rs_class_nq_inc(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];

	if (k->nq++ > 0)
		return;
	if (rs_uses_sc(s)) {
		rs_sc_flush(s);
		rs_ready_add(s, c);
	} else {
		rs_drr_class_ready(s, c);
	}
}

void rs_class_nq_dec(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];

	if (--k->nq > 0)
		return;
	if (rs_uses_sc(s)) {
		rs_ready_del(s, c);
	} else {
		rs_drr_class_empty(s, c);
	}
}

void rs_q_push(struct rs_sched *s, uint32_t r)
{
	struct rs_req *q = &s->req[r];
	struct rs_subq *sq = &s->cls[q->cls].q[q->sub];

	q->next = RS_NIL;
	q->prev = sq->tail;
	if (sq->tail != RS_NIL)
		s->req[sq->tail].next = r;
	else
		sq->head = r;
	sq->tail = r;
	sq->len++;
	rs_class_nq_inc(s, q->cls);
}

void rs_q_unlink(struct rs_sched *s, uint32_t r)
{
	struct rs_req *q = &s->req[r];
	struct rs_class *k = &s->cls[q->cls];
	struct rs_subq *sq = &k->q[q->sub];

	if (q->prev != RS_NIL)
		s->req[q->prev].next = q->next;
	else
		sq->head = q->next;
	if (q->next != RS_NIL)
		s->req[q->next].prev = q->prev;
	else
		sq->tail = q->prev;
	q->next = q->prev = RS_NIL;
	if (--sq->len == 0)
		k->sff_dc[q->sub] = 0;	/* DRR-SFF: empty group resets DC */
	rs_class_nq_dec(s, q->cls);
}

void rs_fifo_push(struct rs_sched *s, uint32_t r)
{
	struct rs_req *q = &s->req[r];

	q->gnext = RS_NIL;
	q->gprev = s->gtail;
	if (s->gtail != RS_NIL)
		s->req[s->gtail].gnext = r;
	else
		s->ghead = r;
	s->gtail = r;
}

void rs_fifo_unlink(struct rs_sched *s, uint32_t r)
{
	struct rs_req *q = &s->req[r];

	if (q->gprev != RS_NIL)
		s->req[q->gprev].gnext = q->gnext;
	else
		s->ghead = q->gnext;
	if (q->gnext != RS_NIL)
		s->req[q->gnext].gprev = q->gprev;
	else
		s->gtail = q->gprev;
	q->gnext = q->gprev = RS_NIL;
}

/* Head request of class c: head of the sub-queue sff would pick. */
uint32_t rs_peek_from(const struct rs_sched *s, uint32_t c)
{
	const struct rs_class *k = &s->cls[c];

	return k->q[s->cfg.sff ? rs_sff_peek(s, k) : 0].head;
}

/* Take the next request of class c (head of the sub-queue sff picks). */
uint32_t rs_take_from(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];
	uint8_t sub = s->cfg.sff ? rs_sff_peek(s, k) : 0;
	uint32_t r = k->q[sub].head;

	if (s->cfg.sff)
		rs_sff_charge(s, k, sub, s->req[r].est_size);
	rs_q_unlink(s, r);
	return r;
}

/* Dequeue the request the policy picks next, or RS_NIL if none queued. */
uint32_t rs_policy_select(struct rs_sched *s)
{
	uint32_t c;

	if (!rs_uses_sc(s))
		return rs_drr_select(s);
	rs_sc_flush(s);
	c = rs_kheap_top(&s->ready);
	if (c == RS_NIL)
		return RS_NIL;
	return rs_take_from(s, c);
}

/* A dequeued request went away before release (cancel of HELD/SCHEDULED):
 * give back what the policy charged for it. */
void rs_policy_refund(struct rs_sched *s, uint32_t r)
{
	struct rs_req *q = &s->req[r];

	if (s->cfg.policy == RS_POLICY_DRR && !(q->flags & RS_RF_SIZE_KNOWN))
		s->cls[q->cls].dc += (double)q->est_size;
}
