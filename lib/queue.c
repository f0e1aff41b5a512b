/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * queue.c - per-class sub-queues, the global FIFO of waiting requests, and
 * the release of a request out of them.
 *
 * Invariants:
 *  - nq = the sum of q[].len, and the policy has been told (s->pol->ready,
 *    s->pol->empty) each time nq went from 0 to 1 and from 1 to 0, and
 *    (sub_ready, sub_empty) each time a sub-queue's len did;
 *  - a request's sub-queue is sff's group (0 priority, 1 best effort),
 *    mqos's resource (rs_res_tendency) or 0;
 *  - every QUEUED, HELD or SCHEDULED request is on the global FIFO, in
 *    enqueue order (used by rs_expire()), and no other request is;
 *  - s->waiting is the FIFO's length, and each (class,user) entry's waiting
 *    the number of its requests on it: both change only in rs_fifo_push()
 *    and fifo_unlink() (rs_reconfigure() recounts them).
 */
#include "internal.h"

#define SUBQ(s) RS_LINKS((s)->req, next, prev)
#define FIFO(s) RS_LINKS((s)->req, gnext, gprev)

void rs_q_push(struct rs_sched *s, uint32_t r)
{
	struct rs_req *q = &s->req[r];
	struct rs_class *k = &s->cls[q->cls];
	struct rs_subq *sq = &k->q[q->sub];

	rs_list_append(SUBQ(s), &sq->head, &sq->tail, r);
	sq->len++;
	if (k->nq++ == 0)
		s->pol->ready(s, q->cls);
	if (sq->len == 1 && s->pol->sub_ready)
		s->pol->sub_ready(s, q->cls, q->sub);
}

void rs_q_unlink(struct rs_sched *s, uint32_t r)
{
	struct rs_req *q = &s->req[r];
	struct rs_class *k = &s->cls[q->cls];
	struct rs_subq *sq = &k->q[q->sub];

	rs_resv_forget(s, r);
	rs_list_cut(SUBQ(s), &sq->head, &sq->tail, r);
	if (--sq->len == 0) {
		if (q->sub < 2)		/* DRR-SFF: empty group resets DC */
			k->sff_dc[q->sub] = 0;
		if (s->pol->sub_empty)
			s->pol->sub_empty(s, q->cls, q->sub);
	}
	if (--k->nq == 0)
		s->pol->empty(s, q->cls);
}

void rs_fifo_push(struct rs_sched *s, uint32_t r)
{
	rs_list_append(FIFO(s), &s->ghead, &s->gtail, r);
	s->waiting++;
	s->users.ent[s->req[r].user].waiting++;
}

/* Request r leaves the global FIFO (inline: every release). */
static inline void fifo_unlink(struct rs_sched *s, uint32_t r)
{
	rs_list_cut(FIFO(s), &s->ghead, &s->gtail, r);
	s->waiting--;
	s->users.ent[s->req[r].user].waiting--;
}

/* Head request of class c: head of the sub-queue sff would pick (mqos:
 * the one its pick chose; else the only one). */
uint32_t rs_peek_from(const struct rs_sched *s, uint32_t c)
{
	const struct rs_class *k = &s->cls[c];

	return k->q[s->cfg.sff ? rs_sff_peek(s, k) : k->next_sub].head;
}

/* Take the next request of class c (head of the sub-queue sff picks). */
uint32_t rs_take_from(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];
	uint8_t sub = s->cfg.sff ? rs_sff_peek(s, k) : k->next_sub;
	uint32_t r = k->q[sub].head;

	if (s->cfg.sff)
		rs_sff_charge(s, k, sub, s->req[r].est_size);
	rs_q_unlink(s, r);
	return r;
}

/* Request r, taken from its queue, leaves the FIFO towards the network:
 * it takes a slot of the window (W, the window list) and the release
 * callback fires. */
void rs_release(struct rs_sched *s, uint32_t r, rs_time_ns now)
{
	struct rs_req *q = &s->req[r];
	struct rs_class *k = &s->cls[q->cls];
	rs_id id = rs_make_id(s, r);

	fifo_unlink(s, r);
	rs_slot_open(s, r);
	q->state = RS_ST_RELEASED;
	q->t_rel = now;
	s->W++;
	k->outstanding++;
	k->released++;
	s->released++;
	s->in_callback = 1;
	s->release(s->ctx, id, q->cookie);
	s->in_callback = 0;
}

/* A waiting request (QUEUED, HELD or SCHEDULED) goes away unreleased. */
void rs_q_drop(struct rs_sched *s, uint32_t r)
{
	fifo_unlink(s, r);
}
