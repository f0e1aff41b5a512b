/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pacer.c - the byte layer: flows, and a pacer that grants reads of
 * response bytes at rate R in weighted fair order (a token bucket in front
 * of start-time fair queueing over accounts).
 *
 * Rate and bucket:  R = max(5 % of C, U+ * C - exceptive rate)  (bytes/s,
 *   rs_full_rate()); tokens refill at R, capped at B = max(2 MSS, R * 5 ms);
 *   they start full and may go negative only when a flow reads more than
 *   it was allowed. With SMP byte gates (gate.c) the bucket refills at the
 *   whole proxy's R (rs_pace_rate()) and every grant is also taken from
 *   the gates, tested with the kept shares (share_left(), share_ready()).
 * Accounts: msf: one per (class, user); rfq, drr: one per class; weight
 *   w_class; an account exists while it has open flows.
 * Presence: an account is present while a flow bound to a request is open
 *   (its user waits for a server or reads a response) or it read within
 *   the last PRESENT_TTL = 1 s (a tunnel, whose requests are unseen). MSF
 *   counts such a user among its class's active users; so the backlogged
 *   accounts of a class share the weights of its present ones: a user
 *   waiting for its server lends its share to its own class first.
 * Fair order (start-time fair queueing, Goyal, Vin and Cheng, SIGCOMM
 *   1996, over accounts): every account has a tag, the bytes it was let
 *   read times its cost per byte c_a = w_min / (w_a * max(1, present_c /
 *   backlogged_c)), and the pacer a virtual time V, the highest tag a
 *   grant or an allowance started from (not an over-read). An account that
 *   starts waiting, or takes bytes while it does not wait, first takes tag
 *   max(V, its tag): it is owed nothing for the time it did not ask, and
 *   still owes what it read before. The waiting account with the least
 *   tag (the heap's top) is served: its head flow gets g = min(want,
 *   tokens, max(need, the flow's clamp)) (with kept shares, never more
 *   than the account's bucket holds), need = min(want, q), q = max(MSS,
 *   R * 2 ms); g * c_a is added to its tag and the flow leaves the FIFO
 *   with the grant and wake fires; an account without waiting flows
 *   leaves the heap and keeps its tag. Every take of bytes (a grant or an
 *   allowance) is charged so; every byte given back unread takes its cost
 *   back off the tag (at the mean cost of the flow's unread bytes; bytes
 *   let read with pacing off cost 0) and every byte read beyond an
 *   allowance adds to it. Tags grow while any flow is open (V and every
 *   tag restart at 0 when none is): at 1 Gbit/s of the lightest class a
 *   tag reaches 2^50 in about 100 days, where a double still resolves a
 *   quarter of a byte. An account is freed with its last flow, and with
 *   it what it read ahead of V (at most its last grant and over-reads).
 *   So the order follows what each account read, not what it was offered:
 *   an account whose flows' windows hold less than its share per visit is
 *   visited more often (DRR's quanta, offered once per round, were lost
 *   unread there: doc/testbed.md). When the tokens run out the dispatch
 *   stops and the top keeps its place.
 * Kept shares (cfg.pace_keep_share): each account has a second bucket,
 *   refilled at its share of R among the accounts with open flows,
 *   S_a = R * w_a / wsum * max(1, present_c / backlogged_c) (its class's
 *   absent users lend it their shares, as in c_a), capped at
 *   D_a = max(2 MSS, S_a * 20 ms). Every grant is taken from it too, and
 *   refunds and over-reads move it like the tokens. An account at the top
 *   whose bucket holds less than its head's need is held aside for the
 *   rest of the dispatch (it goes back with its tag at the end); a
 *   dispatch that holds every waiting account records when the earliest
 *   of them refills (rs_pacer_deadline(); so do a refused flow whose
 *   account is alone in the heap, and a dispatch short of tokens for an
 *   account alone in it and short of its share); a new waiting account, a refund, a
 *   new present account, a closed flow or a new R forget that time (the
 *   deadline falls back to the tokens'). The pacer is then not
 *   work-conserving toward a class whose users wait for their servers; it
 *   still is toward a class with no open flow (it has no share).
 *
 * Invariants (checked by test/lib/random_invariants.c):
 *   - tokens <= B;
 *   - every WAITING flow is in exactly one FIFO, its account's, and
 *     waiting = sum of nwait; an account is in the heap iff nwait > 0
 *     (but while dispatch() holds it aside), and the heap is ordered by
 *     (tag, account);
 *   - per class, nbacklog = its accounts with nwait > 0, npresent =
 *     its present accounts; an account is on the recent list iff recent,
 *     oldest read first;
 *   - every GRANTED flow is on the granted list, oldest grant first, and is
 *     reclaimed (grant refunded, back to IDLE) 1 s after its grant;
 *   - open = number of open flows = sum over accounts of nflows = sum over
 *     classes of nflows; window_bytes = sum of the clamps of open flows;
 *   - kept shares: share_tokens <= D_a as of the account's last refill
 *     (so <= max(2 MSS, 20 ms of C * max(U+, 0.05)), which check.c
 *     checks), share_refill = 0 when the flag is off and there are no
 *     gates.
 *
 * Receive window (rs_flow_clamp()): T times the flow's share of the
 *   weights of the accounts with open flows, T = 2 R rtt, or R (base RTT +
 *   QUEUE_ROOM) where that is less, the flow with the least share still
 *   gets its floor of it and there are no gates (window_total()), or more
 *   for a flow that reads more: GROW_GAIN times what it read over its least RTT while the link
 *   has room (link_has_room(): the proxy read < AT_RATE of R in the last
 *   RATE_SPAN sample and the link counter's last sample had room), so a
 *   flow can take what others leave; HOLD_GAIN times while the link is
 *   full, so it keeps what the pacer grants it but cannot grow on its own;
 *   floor 2 MSS, ceiling min(T, CLAMP_MAX).
 * Admission: every ROOM_RUN RATE_SPAN samples in a row with room and no
 *   flow waiting for the pacer tell the window (rs_window_room()), if one
 *   more flow fits (below): one more request could use the link. The run
 *   filters the sample or two of room when cross traffic stops, which the
 *   flows' own windows fill within a few round trips, and leaves the
 *   counter (sampled every 250 ms) time to show what the last request
 *   added before the next.
 *   Admission by share: a sample in which the pacer limits (the proxy read
 *   at >= AT_RATE of R and flows wait for it: pacer_limits()) and a class
 *   with requests queued at admission read below AT_RATE of its share of
 *   R (class_share(): R * w_c * accounts_c / wsum) tells the window too
 *   (rs_window_share()): the pacer will take the new request's bytes from
 *   the classes above their share. When the pacer does not limit, the
 *   shares are set at the ISP's queue, where more flows of a class would
 *   win it more than its weight, so nothing opens then; nor when the open
 *   flows' least windows (2 MSS each) and a new one's would hold more than
 *   R carries over the base RTT plus QUEUE_ROOM (flow_fits(), at U+ 0.98:
 *   up to 20 open flows at 10 Mbit/s and a 30-ms RTT; none at 2 Mbit/s
 *   without delay). The base RTT is the least RTT any flow measured in the
 *   last 10-20 s (base_rtt()), not that of the open flows: a queue that
 *   stood while they opened would let more flows in, and they would keep
 *   it standing.
 *
 * Flow handles are (generation << 32) | (slot + 1), like rs_id.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "internal.h"

#define GRANT_TTL RS_NSEC_PER_SEC		/* unused grants are reclaimed */
#define PRESENT_TTL RS_NSEC_PER_SEC		/* a reader stays present */
#define MIN_WAIT (RS_NSEC_PER_SEC / 1000)	/* timer granularity: 1 ms */
#define CLAMP_MAX (16.0 * 1024 * 1024)
#define WANT_MAX ((uint64_t)1 << 48)		/* keeps sums in int64 */
#define SHARE_DEPTH (RS_NSEC_PER_SEC / 50)	/* kept shares: 20 ms of S_a */
#define RATE_SPAN (RS_NSEC_PER_SEC / 10)	/* the proxy's read-rate sample */
#define AT_RATE 0.9		/* read at >= this part of R: the link is full */
#define ROOM_RUN 3		/* samples in a row with room: W+ + 1 */
#define GROW_GAIN 2.0		/* link has room: a window may double per RTT */
#define HOLD_GAIN 1.0		/* link full: a window keeps what it reads */
#define QUEUE_ROOM (RS_NSEC_PER_SEC / 50)	/* the ISP queue the flows'
						 * windows may build */
#define BASE_SPAN (10 * RS_NSEC_PER_SEC)	/* the base RTT's window */

/* The present accounts of class k lend their shares to its backlogged ones. */
static double lend(const struct rs_class *k)
{
	if (k->nbacklog && k->npresent > k->nbacklog)
		return (double)k->npresent / k->nbacklog;
	return 1;
}

/* q = max(MSS, R * 2 ms): one segment up to 5.8 Mbit/s, 4.9 KB at 20
 * (internal.h). */
static double grant_least(const struct rs_sched *s)
{
	return rs_grant_least(rs_full_rate(s));
}

/* c_a: what a byte adds to account a's tag, in bytes of the lightest
 * class. */
static double acct_cost(const struct rs_sched *s, const struct rs_acct *a)
{
	const struct rs_class *k = &s->cls[a->cls];

	return s->w_min / (k->weight * lend(k));
}

/* ---- kept shares (cfg.pace_keep_share) ---- */

/* S_a: the account's share of R among the accounts with open flows. */
static double share_rate(const struct rs_sched *s, const struct rs_acct *a)
{
	const struct rs_class *k = &s->cls[a->cls];

	return rs_full_rate(s) * k->weight / s->pc.wsum * lend(k);
}

static double share_depth(double rate)
{
	return fmax(2 * RS_MSS, rate * (double)SHARE_DEPTH / RS_NSEC_PER_SEC);
}

/* What a flow of account a asking for want bytes needs before it is
 * granted: q, or want if less; with kept shares never more than the
 * account's bucket holds (D_a >= 2 MSS), or it would wait forever. */
static double grant_need(const struct rs_sched *s, const struct rs_acct *a,
			 uint64_t want)
{
	double need = fmin((double)want, grant_least(s));

	if (s->cfg.pace_keep_share)
		need = fmin(need, share_depth(share_rate(s, a)));
	return need;
}

/* The need of account a's head flow (of any flow when none waits). */
static double head_need(const struct rs_sched *s, const struct rs_acct *a)
{
	return grant_need(s, a, a->nwait ? s->pc.fl[a->head].want : WANT_MAX);
}

/* Bytes account a may read now within its share and its class's gate
 * (gate.c); unlimited without the flag and gates. */
static double share_left(struct rs_sched *s, uint32_t a, rs_time_ns now)
{
	struct rs_acct *e = &s->pc.ac[a];
	double rate, gate = rs_gate_left(s, e->cls, now);

	if (!s->cfg.pace_keep_share)
		return gate;
	rate = share_rate(s, e);
	if (now > e->t_share) {
		e->share_tokens += rate * (double)(now - e->t_share) /
				   (double)RS_NSEC_PER_SEC;
		e->t_share = now;
	}
	e->share_tokens = fmin(e->share_tokens, share_depth(rate));
	return fmin(e->share_tokens, gate);
}

/* When account a will have need bytes within its share and its class's
 * gate, from now. */
static rs_time_ns share_ready(const struct rs_sched *s, uint32_t a,
			      double need, rs_time_ns now)
{
	const struct rs_acct *e = &s->pc.ac[a];
	double lack = need - e->share_tokens;
	rs_time_ns t = now, gate = rs_gate_ready(s, e->cls, need, now);

	if (s->cfg.pace_keep_share && lack > 0)
		t += (rs_time_ns)ceil(lack / share_rate(s, e) *
				      (double)RS_NSEC_PER_SEC);
	return t > gate ? t : gate;
}

/* Something may let a waiting account read sooner than recorded. */
static void share_forget(struct rs_pacer *p)
{
	p->share_refill = 0;
}

static rs_flow make_flow(const struct rs_pacer *p, uint32_t i)
{
	return ((uint64_t)p->fl[i].gen << 32) | (uint64_t)(i + 1);
}

/* Slot of an open flow handle, or RS_NIL. */
static uint32_t flow_lookup(const struct rs_pacer *p, rs_flow f)
{
	uint32_t low = (uint32_t)f, i;

	if (low == 0)
		return RS_NIL;
	i = low - 1;
	if (i >= p->nfl || p->fl[i].state == RS_FL_FREE ||
	    p->fl[i].gen != (uint32_t)(f >> 32))
		return RS_NIL;
	return i;
}

void rs_pacer_init(struct rs_sched *s)
{
	struct rs_pacer *p = &s->pc;

	memset(p, 0, sizeof(*p));
	p->fl_free = p->ac_free = RS_NIL;
	p->gr_head = p->gr_tail = RS_NIL;
	p->rc_head = p->rc_tail = RS_NIL;
	p->tokens = rs_pacer_burst(rs_pace_rate(s));
}

void rs_pacer_free(struct rs_sched *s)
{
	free(s->pc.fl);
	free(s->pc.ac);
	free(s->pc.slot);
	rs_heap_free(&s->pc.act);
	memset(&s->pc, 0, sizeof(s->pc));
}

static void wmin(struct rs_sched *s)
{
	uint32_t c;

	for (c = 0; c < s->ncls; c++)
		if (c == 0 || s->cls[c].weight < s->w_min)
			s->w_min = s->cls[c].weight;
}

/* ---- the account index: (class, key) -> account, linear probing ---- */

static uint32_t acct_hash(uint32_t cls, uint64_t key)
{
	uint64_t h = key ^ ((uint64_t)cls * 0x9e3779b97f4a7c15ULL);

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (uint32_t)h;
}

static uint32_t acct_find(const struct rs_pacer *p, uint32_t cls,
			  uint64_t key, uint32_t *empty)
{
	uint32_t mask = p->nslot - 1, i = acct_hash(cls, key) & mask;

	for (; p->slot[i]; i = (i + 1) & mask) {
		const struct rs_acct *a = &p->ac[p->slot[i] - 1];

		if (a->cls == cls && a->key == key)
			return p->slot[i] - 1;
	}
	*empty = i;
	return RS_NIL;
}

static void slot_delete(struct rs_pacer *p, uint32_t a)
{
	uint32_t mask = p->nslot - 1;
	uint32_t i = acct_hash(p->ac[a].cls, p->ac[a].key) & mask, j;

	while (p->slot[i] != a + 1)
		i = (i + 1) & mask;
	/* backward-shift deletion keeps every probe chain unbroken */
	for (j = (i + 1) & mask; p->slot[j]; j = (j + 1) & mask) {
		const struct rs_acct *e = &p->ac[p->slot[j] - 1];
		uint32_t home = acct_hash(e->cls, e->key) & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			p->slot[i] = p->slot[j];
			i = j;
		}
	}
	p->slot[i] = 0;
}

/* Room for one more flow (and so one more account). */
static int pacer_reserve(struct rs_pacer *p)
{
	uint32_t cap, nslot, a;
	struct rs_flow_ent *fl;
	struct rs_acct *ac;
	uint32_t *slot;

	if (p->fl_free != RS_NIL || p->nfl < p->fl_cap)
		return 0;
	if (p->fl_cap >= UINT32_MAX / 8)
		return RS_ENOMEM;
	cap = p->fl_cap ? p->fl_cap * 2 : 16;
	nslot = cap * 2;
	fl = realloc(p->fl, (size_t)cap * sizeof(*fl));
	if (!fl)
		return RS_ENOMEM;
	p->fl = fl;
	ac = realloc(p->ac, (size_t)cap * sizeof(*ac));
	if (!ac)
		return RS_ENOMEM;
	p->ac = ac;
	if (rs_heap_reserve(&p->act, cap))
		return RS_ENOMEM;
	slot = calloc(nslot, sizeof(*slot));
	if (!slot)
		return RS_ENOMEM;
	free(p->slot);
	p->slot = slot;
	p->nslot = nslot;
	for (a = 0; a < p->nac; a++) {
		uint32_t empty = 0;

		if (p->ac[a].nflows &&
		    acct_find(p, p->ac[a].cls, p->ac[a].key, &empty) == RS_NIL)
			p->slot[empty] = a + 1;
	}
	p->fl_cap = cap;
	return 0;
}

/* ---- lists ---- */

/* Flows are on one list at a time (their account's FIFO while WAITING, the
 * granted list while GRANTED), linked through fl[].next/prev. */
#define FLOWS(p) RS_LINKS((p)->fl, next, prev)
/* The recent readers, through ac[].rnext/rprev. */
#define RECENT(p) RS_LINKS((p)->ac, rnext, rprev)

/* ---- fair order: the heap of waiting accounts by tag ---- */

static bool tag_less(const struct rs_sched *s, uint32_t a, uint32_t b)
{
	const struct rs_acct *x = &s->pc.ac[a], *y = &s->pc.ac[b];

	if (x->tag != y->tag)
		return x->tag < y->tag;
	return a < b;
}

static void tag_setpos(struct rs_sched *s, uint32_t a, uint32_t pos)
{
	s->pc.ac[a].hpos = pos;
}

static const struct rs_heap_ops tag_ops = { tag_less, tag_setpos };

/* The tag a charge to account a starts from: out of the heap, it first
 * catches up with V (it is owed nothing for the time it did not wait). */
static double tag_start(struct rs_pacer *p, uint32_t a)
{
	struct rs_acct *e = &p->ac[a];

	if (e->hpos == RS_NIL && e->tag < p->vtime)
		e->tag = p->vtime;
	return e->tag;
}

/* n bytes (< 0: given back) at cost c per byte move account a's tag. */
static void tag_add(struct rs_sched *s, uint32_t a, double n, double c)
{
	struct rs_acct *e = &s->pc.ac[a];

	e->tag += n * c;
	if (e->hpos != RS_NIL)
		rs_heap_fix(s, &s->pc.act, &tag_ops, e->hpos);
}

/* Account a starts waiting. */
static void act_join(struct rs_sched *s, uint32_t a)
{
	struct rs_pacer *p = &s->pc;

	tag_start(p, a);
	s->cls[p->ac[a].cls].nbacklog++;
	share_forget(p);
	rs_heap_push(s, &p->act, &tag_ops, a);
}

/* Account a has no waiting flow left: it leaves the heap, keeps its tag. */
static void act_leave(struct rs_sched *s, uint32_t a)
{
	s->cls[s->pc.ac[a].cls].nbacklog--;
	rs_heap_remove(s, &s->pc.act, &tag_ops, s->pc.ac[a].hpos);
}

static void fifo_push(struct rs_sched *s, uint32_t f)
{
	struct rs_pacer *p = &s->pc;
	struct rs_flow_ent *e = &p->fl[f];
	struct rs_acct *a = &p->ac[e->acct];

	e->state = RS_FL_WAITING;
	rs_list_append(FLOWS(p), &a->head, &a->tail, f);
	p->waiting++;
	if (a->nwait++ == 0)
		act_join(s, e->acct);
}

/* Take f out of its account's FIFO; the account leaves the heap with its
 * last waiting flow. */
static void fifo_cut(struct rs_sched *s, uint32_t f)
{
	struct rs_pacer *p = &s->pc;
	struct rs_flow_ent *e = &p->fl[f];
	struct rs_acct *a = &p->ac[e->acct];

	rs_list_cut(FLOWS(p), &a->head, &a->tail, f);
	p->waiting--;
	e->state = RS_FL_IDLE;
	if (--a->nwait == 0)
		act_leave(s, e->acct);
}

static void gr_push(struct rs_pacer *p, uint32_t f)
{
	p->fl[f].state = RS_FL_GRANTED;
	rs_list_append(FLOWS(p), &p->gr_head, &p->gr_tail, f);
}

static void gr_cut(struct rs_pacer *p, uint32_t f)
{
	struct rs_flow_ent *e = &p->fl[f];

	rs_list_cut(FLOWS(p), &p->gr_head, &p->gr_tail, f);
	e->state = RS_FL_IDLE;
	e->grant = 0;
}

/* ---- presence ---- */

static bool acct_present(const struct rs_acct *a)
{
	return a->nreq > 0 || a->recent;
}

/* Account a may have come or gone; was: present before the change. */
static void presence_note(struct rs_sched *s, uint32_t a, bool was)
{
	const struct rs_acct *e = &s->pc.ac[a];
	bool is = acct_present(e);

	if (is && !was) {
		s->cls[e->cls].npresent++;
		share_forget(&s->pc);
	} else if (was && !is) {
		s->cls[e->cls].npresent--;
	}
}

/* A flow bound to a request opens (+1) or closes (-1) on account a. */
static void acct_nreq_add(struct rs_sched *s, uint32_t a, int delta)
{
	bool was = acct_present(&s->pc.ac[a]);

	s->pc.ac[a].nreq += delta;
	presence_note(s, a, was);
}

/* The recent list, linked through ac[].rnext/rprev. */
static void recent_cut(struct rs_sched *s, uint32_t a)
{
	struct rs_pacer *p = &s->pc;
	struct rs_acct *e = &p->ac[a];
	bool was = acct_present(e);

	rs_list_cut(RECENT(p), &p->rc_head, &p->rc_tail, a);
	e->recent = 0;
	presence_note(s, a, was);
}

/* Account a read now: it goes to the tail of the recent list. */
static void recent_touch(struct rs_sched *s, uint32_t a, rs_time_ns now)
{
	struct rs_pacer *p = &s->pc;
	struct rs_acct *e = &p->ac[a];

	if (e->recent) {	/* already present: only its place moves */
		rs_list_cut(RECENT(p), &p->rc_head, &p->rc_tail, a);
	} else {
		bool was = acct_present(e);

		e->recent = 1;
		presence_note(s, a, was);
	}
	e->t_read = now;
	rs_list_append(RECENT(p), &p->rc_head, &p->rc_tail, a);
}

/* Readers silent for PRESENT_TTL are no longer recent. */
static void recent_expire(struct rs_sched *s, rs_time_ns now)
{
	struct rs_pacer *p = &s->pc;

	while (p->rc_head != RS_NIL &&
	       now >= p->ac[p->rc_head].t_read + PRESENT_TTL)
		recent_cut(s, p->rc_head);
}

/* ---- tokens ---- */

/* The rate changed (link source, reconfigure): the bucket follows. */
void rs_pacer_cap(struct rs_sched *s)
{
	double b = rs_pacer_burst(rs_pace_rate(s));

	if (s->pc.tokens > b)
		s->pc.tokens = b;
	share_forget(&s->pc);
}

void rs_pacer_refill(struct rs_sched *s, rs_time_ns now)
{
	struct rs_pacer *p = &s->pc;
	double rate = rs_pace_rate(s), b = rs_pacer_burst(rate);

	if (!p->t_set) {
		p->t = now;
		p->t_set = true;
	} else if (now > p->t) {
		p->tokens += rate * (double)(now - p->t) / (double)RS_NSEC_PER_SEC;
		p->t = now;
	}
	if (p->tokens > b)
		p->tokens = b;
}

/* Unused bytes of flow f come back: to the tokens and the gates they were
 * taken from, and off its account's tag at the cost they were charged. */
static void refund(struct rs_sched *s, uint32_t f, int64_t tok)
{
	struct rs_pacer *p = &s->pc;
	uint32_t a = p->fl[f].acct;
	double b = rs_pacer_burst(rs_pace_rate(s));

	p->tokens += (double)tok;
	if (p->tokens > b)
		p->tokens = b;
	rs_gate_refund(s, p->ac[a].cls, p->fl[f].gate_from, (double)tok, p->t);
	tag_add(s, a, -(double)tok, p->fl[f].cost);
	if (s->cfg.pace_keep_share) {
		struct rs_acct *e = &p->ac[a];

		e->share_tokens = fmin(e->share_tokens + (double)tok,
				       share_depth(share_rate(s, e)));
		share_forget(p);
	}
}

/* Flow e's unread bytes grow by n charged at c per byte: its cost becomes
 * their mean, so that a refund takes back what they were charged. */
static void cost_blend(struct rs_flow_ent *e, double n, double c)
{
	double out = (double)e->allowed +
		     (e->state == RS_FL_GRANTED ? (double)e->grant : 0);

	e->cost = out + n > 0 ? (out * e->cost + n * c) / (out + n) : c;
}

/* Flow f is let read n bytes: taken from the tokens, its class's gates
 * (which it remembers for a refund) and its account's kept share, and
 * charged to its account's tag at the account's cost (cost_blend()); V
 * moves up to where the charge starts. */
static void take_bytes(struct rs_sched *s, uint32_t f, double n,
		       rs_time_ns now)
{
	struct rs_pacer *p = &s->pc;
	struct rs_flow_ent *e = &p->fl[f];
	double c = acct_cost(s, &p->ac[e->acct]);

	cost_blend(e, n, c);
	p->vtime = fmax(p->vtime, tag_start(p, e->acct));
	tag_add(s, e->acct, n, c);
	p->tokens -= n;
	e->gate_from = (uint8_t)rs_gate_charge(s, p->ac[e->acct].cls, n, now);
	if (s->cfg.pace_keep_share)
		p->ac[e->acct].share_tokens -= n;
}

/* Bytes read beyond the allowance: taken from the tokens and the kept
 * share (which may go negative) and added to the account's tag. */
static void overcharge(struct rs_sched *s, uint32_t a, uint64_t over)
{
	struct rs_pacer *p = &s->pc;
	struct rs_acct *e = &p->ac[a];

	p->tokens -= (double)over;
	(void)rs_gate_charge(s, e->cls, (double)over, p->t);
	if (s->cfg.pace_keep_share)
		e->share_tokens -= (double)over;
	tag_start(p, a);
	tag_add(s, a, (double)over, acct_cost(s, e));
}

/* The rate of count (cumulative) over samples of at least span: a sample
 * ends at now once it is that long; until then the last one's rate holds. */
static double rate_take(struct rs_rate *r, uint64_t count, rs_time_ns now,
			rs_time_ns span)
{
	if (now > r->t && now - r->t >= span) {
		r->rate = (double)(count - r->mark) * RS_NSEC_PER_SEC /
			  (double)(now - r->t);
		r->mark = count;
		r->t = now;
	}
	return r->rate;
}

/* The proxy read at >= AT_RATE of R in the last sample. */
static bool read_at_rate(const struct rs_sched *s)
{
	return s->pc.read.rate >= AT_RATE * rs_full_rate(s);
}

/* The link has room: the proxy read < AT_RATE of R in the last sample and
 * the link counter's last sample (if one is in use) had room too (cross
 * traffic that took the link shows there before the pacer's R follows). */
static bool link_has_room(const struct rs_sched *s)
{
	return !read_at_rate(s) && !s->link_full;
}

/* The proxy read at R in the last sample and flows wait for the pacer:
 * R, not the ISP's queue, sets what each class gets, so a class below its
 * share has others above theirs for the pacer to take from. */
static bool pacer_limits(const struct rs_sched *s)
{
	return s->pc.waiting && read_at_rate(s);
}

/* Class k's share of R: its accounts' weights among those of every
 * account with open flows; a class with none counts one (its queued
 * request would open it). */
static double class_share(const struct rs_sched *s, const struct rs_class *k)
{
	double n = k->naccts ? (double)k->naccts : 1;
	double wsum = s->pc.wsum + (k->naccts ? 0 : k->weight);

	return rs_full_rate(s) * k->weight * n / wsum;
}

/* The base RTT: the least RTT rs_flow_clamp() was given for any flow in
 * the last one to two BASE_SPANs (0: none). A flow's own least RTT holds
 * the ISP queue it met when it opened; a queue that never drains would
 * keep every open flow's, and a windowed minimum over all flows finds the
 * moments it was shorter (BBR's min_rtt filter, without its probe). */
static void base_rtt_note(struct rs_pacer *p, rs_time_ns rtt, rs_time_ns now)
{
	if (now - p->base_t >= BASE_SPAN) {
		p->base_rtt[1] = now - p->base_t < 2 * BASE_SPAN ?
				 p->base_rtt[0] : 0;
		p->base_rtt[0] = 0;
		p->base_t = now;
	}
	if (!p->base_rtt[0] || rtt < p->base_rtt[0])
		p->base_rtt[0] = rtt;
}

static rs_time_ns base_rtt(const struct rs_pacer *p)
{
	rs_time_ns a = p->base_rtt[0], b = p->base_rtt[1];

	return !a || (b && b < a) ? b : a;
}

/* The least share of the weights a flow has, over the classes with open
 * flows, a class's flows taken as even over its accounts (w_c / wsum *
 * accounts_c / flows_c); 1 with no flow. O(classes): pacer_sampled() keeps
 * it for window_total(), at most one sample (100 ms) old. */
static double least_flow_share(const struct rs_sched *s)
{
	double least = 1;
	uint32_t c;

	for (c = 0; c < s->ncls && s->pc.wsum > 0; c++) {
		const struct rs_class *k = &s->cls[c];

		if (k->nflows)
			least = fmin(least, k->weight / s->pc.wsum *
					    (double)k->naccts /
					    (double)k->nflows);
	}
	return least;
}

/* The bytes the flows' windows share (their total when every flow holds
 * its share): 2 R rtt, twice what the link carries over the flow's RTT, so
 * that bytes wait at the proxy, where the pacer orders them; but R (base
 * RTT + QUEUE_ROOM) when that is less and the flow with the least share
 * still gets its floor (2 MSS) of it. What the windows hold beyond R times
 * the base RTT queues at the ISP (at a 60-ms RTT the queue's mean follows
 * it: doc/testbed.md); where floors bind, every flow is at its floor and
 * only the larger total keeps bytes waiting at the proxy for the weights.
 * With gates (SMP) always 2 R rtt: R is then this worker's part f of the
 * link, not what it may read (it borrows the others' at the gates), and
 * the ceiling T caps a worker's flows at T / RTT, 2 f R with 2 R rtt but
 * only about 1.33 f R from the base RTT at 60 ms. */
static double window_total(const struct rs_sched *s, rs_time_ns rtt)
{
	double r = rs_full_rate(s), most, low;
	rs_time_ns base = base_rtt(&s->pc);

	most = 2 * r * (double)rtt / RS_NSEC_PER_SEC;
	if (!base || !(s->pc.share_least > 0) || s->gate.tat)
		return most;
	low = r * (double)(base + QUEUE_ROOM) / RS_NSEC_PER_SEC;
	return s->pc.share_least * low >= 2 * RS_MSS ? fmin(most, low) : most;
}

/* One more flow fits: the least windows of the open flows and of a new
 * one (2 MSS each) stay within what R carries over the base RTT plus
 * QUEUE_ROOM. Beyond that their floors alone queue at the ISP, where the
 * class with more flows wins more than its weight. */
static bool flow_fits(const struct rs_sched *s)
{
	double hold = rs_full_rate(s) *
		      (double)(base_rtt(&s->pc) + QUEUE_ROOM) / RS_NSEC_PER_SEC;

	return (double)(s->pc.open + 1) * 2 * RS_MSS <= hold;
}

/* Some class with requests queued at admission read below AT_RATE of its
 * share of R in its last sample. A class's rate is sampled only here, so
 * its first sample after a while spans that while. */
static bool queued_class_below_share(struct rs_sched *s, rs_time_ns now)
{
	uint32_t c;

	for (c = 0; c < s->ncls; c++) {
		struct rs_class *k = &s->cls[c];

		if (k->nq && rate_take(&k->rd, k->bytes, now, RATE_SPAN) <
			     AT_RATE * class_share(s, k))
			return true;
	}
	return false;
}

/* A new read-rate sample: every ROOM_RUN in a row with room and no flow
 * waiting open the admission window by one (room); one in which the pacer
 * limits while a class with queued requests reads below its share and one
 * more flow fits does too (share). One opening per sample at most. */
static void pacer_sampled(struct rs_sched *s, rs_time_ns now)
{
	struct rs_pacer *p = &s->pc;

	p->share_least = least_flow_share(s);
	p->room_run = p->waiting == 0 && link_has_room(s) ? p->room_run + 1 : 0;
	if (p->room_run >= ROOM_RUN && flow_fits(s)) {
		rs_window_room(s);
		p->room_run = 0;	/* one per run: the next shows what
					 * this one did */
	} else if (pacer_limits(s) && rs_window_holds_back(s) &&
		   flow_fits(s) && queued_class_below_share(s, now)) {
		rs_window_share(s);
	}
}

/* Refill, sample the proxy's read rate (pacer_sampled()), and reclaim the
 * grants nobody came back for within 1 s. */
static void pacer_advance(struct rs_sched *s, rs_time_ns now)
{
	struct rs_pacer *p = &s->pc;
	rs_time_ns sampled = p->read.t;

	rs_pacer_refill(s, now);
	rate_take(&p->read, s->bytes, now, RATE_SPAN);
	if (p->read.t != sampled)
		pacer_sampled(s, now);
	recent_expire(s, now);
	while (p->gr_head != RS_NIL) {
		uint32_t f = p->gr_head;
		struct rs_flow_ent *e = &p->fl[f];
		int64_t g = e->grant;

		if (now < e->t_grant || now - e->t_grant < GRANT_TTL)
			break;
		gr_cut(p, f);
		if (s->cfg.pacing)
			refund(s, f, g);
	}
}

/* ---- dispatch ---- */

static void grant(struct rs_sched *s, uint32_t f, int64_t g, rs_time_ns now)
{
	struct rs_pacer *p = &s->pc;
	struct rs_flow_ent *e = &p->fl[f];

	fifo_cut(s, f);
	gr_push(p, f);
	e->grant = g;
	e->t_grant = now;
	if (p->wake) {
		s->in_callback = 1;
		p->wake(s->ctx, make_flow(p, f), e->cookie);
		s->in_callback = 0;
	}
}

/* Accounts held aside by dispatch() go back to the heap with their tags. */
static void held_return(struct rs_sched *s, uint32_t held)
{
	while (held != RS_NIL) {
		uint32_t next = s->pc.ac[held].next;

		rs_heap_push(s, &s->pc.act, &tag_ops, held);
		held = next;
	}
}

static void dispatch(struct rs_sched *s, rs_time_ns now)
{
	struct rs_pacer *p = &s->pc;
	/* kept shares: the accounts held aside for their share, through
	 * ac[].next, and when the earliest of them refills */
	uint32_t a, held = RS_NIL;
	rs_time_ns refill = 0;

	pacer_advance(s, now);
	p->share_refill = 0;
	while ((a = rs_heap_top(&p->act)) != RS_NIL) {
		struct rs_acct *e = &p->ac[a];
		struct rs_flow_ent *h = &p->fl[e->head];
		double need, g, left;

		if (!s->cfg.pacing) {	/* pacing was turned off */
			cost_blend(h, (double)h->want, 0);
			grant(s, e->head, (int64_t)h->want, now);
			continue;
		}
		need = head_need(s, e);
		if (p->tokens < need) {	/* the top keeps its place */
			if (held == RS_NIL && p->act.n == 1 &&
			    share_left(s, a, now) < need)
				/* alone, it waits for its share too */
				p->share_refill = share_ready(s, a, need, now);
			break;
		}
		left = share_left(s, a, now);
		if (left < need) {	/* waits for its share: held aside */
			rs_time_ns t = share_ready(s, a, need, now);

			if (held == RS_NIL || t < refill)
				refill = t;
			rs_heap_remove(s, &p->act, &tag_ops, e->hpos);
			e->next = held;
			held = a;
			continue;
		}
		g = floor(fmin(fmin(fmin((double)h->want, p->tokens), left),
			       fmax(need, (double)h->clamp)));
		take_bytes(s, e->head, g, now);
		grant(s, e->head, (int64_t)g, now);
	}
	if (!p->act.n && held != RS_NIL)	/* every one waits for its share */
		p->share_refill = refill;
	held_return(s, held);
}

void rs_pacer_timer(struct rs_sched *s, rs_time_ns now)
{
	if (s->pc.open)
		dispatch(s, now);
}

rs_time_ns rs_pacer_deadline(const struct rs_sched *s)
{
	const struct rs_pacer *p = &s->pc;
	rs_time_ns t, earliest;
	const struct rs_acct *e;
	double need, rate, lack;

	if (!p->waiting)
		return UINT64_MAX;
	earliest = p->t + MIN_WAIT;
	if (!s->cfg.pacing || !p->act.n)
		return earliest;
	e = &p->ac[rs_heap_top(&p->act)];
	need = head_need(s, e);
	rate = rs_pace_rate(s);
	lack = need - p->tokens;
	t = p->t;
	if (lack > 0)
		t += (rs_time_ns)ceil(lack / rate * (double)RS_NSEC_PER_SEC);
	if (p->share_refill > t)	/* every account waits for its share */
		t = p->share_refill;
	if (p->gr_head != RS_NIL && p->fl[p->gr_head].t_grant + GRANT_TTL < t)
		t = p->fl[p->gr_head].t_grant + GRANT_TTL;
	return t > earliest ? t : earliest;
}

/* ---- accounts ---- */

static uint64_t acct_key(const struct rs_sched *s, uint64_t ukey)
{
	return s->pol->per_user ? ukey : 0;
}

/* Account of (cls, key), created if needed; pacer_reserve() made room. */
static uint32_t acct_get(struct rs_sched *s, uint32_t cls, uint64_t key)
{
	struct rs_pacer *p = &s->pc;
	uint32_t empty = 0, a = acct_find(p, cls, key, &empty);
	struct rs_acct *e;

	if (a != RS_NIL)
		return a;
	if (p->ac_free != RS_NIL) {
		a = p->ac_free;
		p->ac_free = p->ac[a].next;
	} else {
		a = p->nac++;
	}
	e = &p->ac[a];
	memset(e, 0, sizeof(*e));
	e->key = key;
	e->cls = cls;
	e->tag = p->vtime;
	e->head = e->tail = RS_NIL;
	e->hpos = e->next = RS_NIL;
	e->rnext = e->rprev = RS_NIL;
	p->slot[empty] = a + 1;
	s->cls[cls].naccts++;
	p->wsum += s->cls[cls].weight;
	e->share_tokens = share_depth(share_rate(s, e));	/* starts full */
	e->t_share = p->t;
	return a;
}

/* An account without flows goes. */
static void acct_put(struct rs_sched *s, uint32_t a)
{
	struct rs_pacer *p = &s->pc;
	struct rs_acct *e = &p->ac[a];

	if (--e->nflows)
		return;
	if (e->recent)
		recent_cut(s, a);
	slot_delete(p, a);
	s->cls[e->cls].naccts--;
	p->wsum -= s->cls[e->cls].weight;
	share_forget(p);	/* the others' shares grow */
	e->next = p->ac_free;
	p->ac_free = a;
}

/* ---- entry points ---- */

static inline int flow_entry(const struct rs_sched *s, rs_flow f,
			     uint32_t *i)
{
	int err = rs_entry_err(s);

	if (err)
		return err;
	*i = flow_lookup(&s->pc, f);
	return *i == RS_NIL ? RS_ESTALE : 0;
}

void rs_set_wake(struct rs_sched *s, rs_wake_fn wake)
{
	if (s && !s->in_callback) {
		s->pc.wake = wake;
		rs_check(s, "rs_set_wake");
	}
}

int rs_flow_open(struct rs_sched *s, rs_id req, int cls, uint64_t user,
		 void *cookie, rs_time_ns now, rs_flow *f)
{
	struct rs_pacer *p = &s->pc;
	struct rs_flow_ent *e;
	uint32_t i, c;
	int err = rs_entry_err(s);

	if (err)
		return err;
	if (!f)
		return RS_EINVAL;
	if (req) {
		uint32_t r = rs_lookup(s, req);

		if (r == RS_NIL)
			return RS_ESTALE;
		if (s->req[r].state != RS_ST_RELEASED)
			return RS_ESTATE;
		c = s->req[r].cls;
		user = s->users.ent[s->req[r].user].key;
	} else {
		if (cls < 0 || (uint32_t)cls >= s->ncls)
			return RS_ENOCLASS;
		c = (uint32_t)cls;
	}
	if (pacer_reserve(p))
		return RS_ENOMEM;
	rs_advance(s, now);
	pacer_advance(s, now);
	if (p->fl_free != RS_NIL) {
		i = p->fl_free;
		p->fl_free = p->fl[i].next;
	} else {
		i = p->nfl++;
		p->fl[i].gen = 1;
	}
	e = &p->fl[i];
	{
		uint32_t gen = e->gen;

		memset(e, 0, sizeof(*e));
		e->gen = gen;
	}
	e->cookie = cookie;
	e->req = req;
	e->ukey = user;
	e->cls = c;
	e->next = e->prev = RS_NIL;
	e->state = RS_FL_IDLE;
	e->rd.t = now;
	e->acct = acct_get(s, c, acct_key(s, user));
	p->ac[e->acct].nflows++;
	if (req)
		acct_nreq_add(s, e->acct, 1);
	s->cls[c].nflows++;
	p->open++;
	*f = make_flow(p, i);
	rs_check(s, "rs_flow_open");
	return 0;
}

int rs_flow_close(struct rs_sched *s, rs_flow f, rs_time_ns now)
{
	struct rs_pacer *p = &s->pc;
	struct rs_flow_ent *e;
	uint32_t i;
	int err = flow_entry(s, f, &i);

	if (err)
		return err;
	rs_advance(s, now);
	pacer_advance(s, now);
	e = &p->fl[i];
	if (e->state == RS_FL_GRANTED) {
		int64_t g = e->grant;

		gr_cut(p, i);
		if (s->cfg.pacing)
			refund(s, i, g);
	} else if (e->state == RS_FL_WAITING) {
		fifo_cut(s, i);
	}
	if (e->req)
		acct_nreq_add(s, e->acct, -1);
	acct_put(s, e->acct);
	s->cls[e->cls].nflows--;
	p->window_bytes -= e->clamp;
	if (--p->open == 0) {	/* no account left: no drift */
		p->wsum = 0;
		p->vtime = 0;
	}
	e->state = RS_FL_FREE;
	if (++e->gen == 0)
		e->gen = 1;
	e->next = p->fl_free;
	p->fl_free = i;
	if (p->act.n)
		dispatch(s, now);
	rs_check(s, "rs_flow_close");
	return 0;
}

/* A granted flow takes its grant as an allowance (of at most want). */
static int64_t take_grant(struct rs_sched *s, uint32_t i, uint64_t want)
{
	struct rs_flow_ent *e = &s->pc.fl[i];
	int64_t g = e->grant, take = (uint64_t)g < want ? g : (int64_t)want;

	gr_cut(&s->pc, i);
	e->allowed += take;
	if (s->cfg.pacing && take < g)
		refund(s, i, g - take);
	return take;
}

/* The pacer's one test: a flow needing `need` bytes, its account having
 * `left` of its kept share, may read now only if no flow waits ahead of it
 * and the tokens and its share both cover the need. */
static bool may_read_now(const struct rs_pacer *p, double need, double left)
{
	return p->waiting == 0 && p->tokens >= need && left >= need;
}

/* Flow i joins its account's FIFO for want bytes; its wake comes from
 * dispatch(). */
static void start_wait(struct rs_sched *s, uint32_t i, uint64_t want,
		       double need, double left, rs_time_ns now)
{
	struct rs_pacer *p = &s->pc;
	struct rs_flow_ent *e = &p->fl[i];

	e->want = want;
	fifo_push(s, i);
	if (p->act.n == 1 && left < need)
		/* alone in the heap, it waits for its share */
		p->share_refill = share_ready(s, e->acct, need, now);
	s->ss = false;		/* the link is at R: slow start is over */
}

/* Flow f asked for *want bytes (an allowance, or a wait ahead): its entry
 * in *i and *want at most WANT_MAX, or an RS_E* code. */
static int flow_ask(const struct rs_sched *s, rs_flow f, uint64_t *want,
		    uint32_t *i)
{
	int err = flow_entry(s, f, i);

	if (err)
		return err;
	if (*want == 0)
		return RS_EINVAL;
	if (*want > WANT_MAX)
		*want = WANT_MAX;
	return 0;
}

static int64_t allowance(struct rs_sched *s, rs_flow f, uint64_t want,
			 rs_time_ns now)
{
	struct rs_pacer *p = &s->pc;
	struct rs_flow_ent *e;
	uint32_t i;
	double need, left;
	int err = flow_ask(s, f, &want, &i);

	if (err)
		return err;
	e = &p->fl[i];
	if (e->allowed > (int64_t)WANT_MAX)	/* asks and never reads */
		return RS_ESTATE;
	pacer_advance(s, now);
	if (e->state == RS_FL_GRANTED)
		return take_grant(s, i, want);
	if (!s->cfg.pacing) {	/* not charged */
		cost_blend(e, (double)want, 0);
		e->allowed += (int64_t)want;
		return (int64_t)want;
	}
	if (e->state == RS_FL_WAITING) {
		e->want = want;
		return 0;
	}
	need = grant_need(s, &p->ac[e->acct], want);
	left = share_left(s, e->acct, now);
	if (may_read_now(p, need, left)) {
		int64_t take = (int64_t)fmin(fmin((double)want, floor(p->tokens)),
					     floor(left));

		take_bytes(s, i, (double)take, now);
		e->allowed += take;
		return take;
	}
	start_wait(s, i, want, need, left, now);
	return 0;
}

int64_t rs_flow_allowance(struct rs_sched *s, rs_flow f, uint64_t want,
			  rs_time_ns now)
{
	int64_t n = allowance(s, f, want, now);

	if (n >= 0)
		rs_check(s, "rs_flow_allowance");
	return n;
}

/*
 * rs_flow_wait_ahead(): the same test as an allowance, asked before the
 * bytes are there, so that a refused flow waits for its wake without the
 * caller polling its socket first. Nothing is taken: a flow that may read
 * now (or holds a grant or an unread allowance) is left as it is (0); one
 * that may not joins the FIFO as rs_flow_allowance() would queue it (1).
 */
static int wait_ahead(struct rs_sched *s, uint32_t i, uint64_t want,
		      rs_time_ns now)
{
	struct rs_pacer *p = &s->pc;
	struct rs_flow_ent *e = &p->fl[i];
	double need, left;

	if (!s->cfg.pacing)
		return 0;
	pacer_advance(s, now);
	if (e->state == RS_FL_WAITING) {
		e->want = want;
		return 1;
	}
	if (e->state == RS_FL_GRANTED || e->allowed > 0)
		return 0;
	need = grant_need(s, &p->ac[e->acct], want);
	left = share_left(s, e->acct, now);
	if (may_read_now(p, need, left))
		return 0;
	start_wait(s, i, want, need, left, now);
	return 1;
}

int rs_flow_wait_ahead(struct rs_sched *s, rs_flow f, uint64_t want,
		       rs_time_ns now)
{
	uint32_t i;
	int err = flow_ask(s, f, &want, &i), waits;

	if (err)
		return err;
	waits = wait_ahead(s, i, want, now);
	rs_check(s, "rs_flow_wait_ahead");
	return waits;
}

int rs_flow_read(struct rs_sched *s, rs_flow f, uint64_t n, rs_time_ns now)
{
	struct rs_pacer *p = &s->pc;
	struct rs_flow_ent *e;
	uint32_t i, r;
	int err = flow_entry(s, f, &i);

	if (err)
		return err;
	rs_advance(s, now);
	pacer_advance(s, now);
	e = &p->fl[i];
	if (e->state == RS_FL_GRANTED)	/* read without asking: take it */
		take_grant(s, i, WANT_MAX);
	if (s->cfg.pacing) {
		if (n <= (uint64_t)e->allowed) {
			refund(s, i, e->allowed - (int64_t)n);
		} else {
			overcharge(s, e->acct, n - (uint64_t)e->allowed);
		}
	}
	e->allowed = 0;
	if (n) {
		e->rd_total += n;
		recent_touch(s, e->acct, now);
		r = e->req ? rs_lookup(s, e->req) : RS_NIL;
		if (r != RS_NIL && s->req[r].state == RS_ST_RELEASED)
			rs_req_bytes(s, r, n, now);	/* may release requests */
		else
			rs_foreign_bytes(s, e->cls, e->ukey, n,
					 e->rd_total - n, now);
	}
	if (p->act.n)
		dispatch(s, now);		/* may wake flows */
	rs_check(s, "rs_flow_read");
	return 0;
}

uint32_t rs_flow_clamp(const struct rs_sched *cs, rs_flow f, rs_time_ns rtt)
{
	/* The clamp is recorded on the flow for rs_get_stats().window_bytes:
	 * the instance is never const itself (rs_new() allocates it). */
	struct rs_sched *s = (struct rs_sched *)cs;
	struct rs_flow_ent *e;
	const struct rs_acct *a;
	double total, share, clamp, ceiling, rate, gain;
	rs_time_ns least;
	uint32_t i;

	if (!s || (i = flow_lookup(&s->pc, f)) == RS_NIL)
		return 0;
	e = &s->pc.fl[i];
	a = &s->pc.ac[e->acct];
	if (rtt) {			/* a measured one: never the nominal */
		if (!e->rtt_min || rtt < e->rtt_min)
			e->rtt_min = rtt;
		base_rtt_note(&s->pc, rtt, s->pc.t);
	} else {
		rtt = RS_NSEC_PER_SEC / 10;
	}
	total = window_total(s, rtt);
	share = s->pc.wsum > 0 ?
		s->cls[a->cls].weight / s->pc.wsum / (double)a->nflows : 1;
	/* a flow that reads more than its share gets a window for what it
	 * reads over its least RTT (the queue a full link builds must not
	 * widen it: that growth would feed itself): twice that while the link
	 * has room, so it can take what others leave; once, while it is full,
	 * so it keeps what the pacer gives it but cannot grow on its own */
	least = e->rtt_min ? e->rtt_min : rtt;
	rate = rate_take(&e->rd, e->rd_total, s->pc.t, least);
	gain = link_has_room(s) ? GROW_GAIN : HOLD_GAIN;
	clamp = fmax(total * share,
		     gain * rate * ((double)least / (double)RS_NSEC_PER_SEC));
	ceiling = fmin(total, CLAMP_MAX);
	if (clamp > ceiling)
		clamp = ceiling;
	if (clamp < 2 * RS_MSS)
		clamp = 2 * RS_MSS;
	s->pc.window_bytes -= e->clamp;
	e->clamp = (uint32_t)(clamp + 0.5);
	s->pc.window_bytes += e->clamp;
	if (!s->in_callback)	/* a wake may ask while dispatch() holds
				 * accounts aside */
		rs_check(s, "rs_flow_clamp");
	return e->clamp;
}

/*
 * rs_reconfigure(): the classes were renumbered (map: old -> new class,
 * requests already moved) and the policy may have changed the account
 * granularity. Accounts are rebuilt from the open flows (no allocation:
 * accounts <= flows); tags, V and the flows' costs restart at 0 (so the
 * accounts start even, ties to the lower index); waiting flows keep their
 * order inside each account; grants stay.
 */
void rs_pacer_rebuild(struct rs_sched *s, const uint32_t *map)
{
	struct rs_pacer *p = &s->pc;
	uint32_t a, i, c, chain = RS_NIL, last = RS_NIL;

	wmin(s);
	rs_pacer_cap(s);
	/* one chain of the waiting flows, through next */
	while ((a = rs_heap_top(&p->act)) != RS_NIL) {
		const struct rs_acct *e = &p->ac[a];

		rs_heap_remove(s, &p->act, &tag_ops, 0);
		if (last != RS_NIL)
			p->fl[last].next = e->head;
		else
			chain = e->head;
		last = e->tail;
	}
	p->nac = 0;
	p->ac_free = RS_NIL;
	p->vtime = 0;
	p->rc_head = p->rc_tail = RS_NIL;	/* who read lately is forgotten */
	p->waiting = 0;
	p->wsum = 0;
	share_forget(p);	/* kept shares restart full */
	if (p->slot)
		memset(p->slot, 0, p->nslot * sizeof(*p->slot));
	for (c = 0; c < s->ncls; c++)
		s->cls[c].nflows = s->cls[c].naccts = s->cls[c].nbacklog =
			s->cls[c].npresent = 0;
	for (i = 0; i < p->nfl; i++) {
		struct rs_flow_ent *e = &p->fl[i];
		uint32_t r;

		if (e->state == RS_FL_FREE)
			continue;
		e->cost = 0;	/* the tags it was charged to are gone */
		r = e->req ? rs_lookup(s, e->req) : RS_NIL;
		if (r != RS_NIL)
			e->cls = s->req[r].cls;
		else if (map)
			e->cls = map[e->cls];
		e->acct = acct_get(s, e->cls, acct_key(s, e->ukey));
		p->ac[e->acct].nflows++;
		if (e->req)
			acct_nreq_add(s, e->acct, 1);
		s->cls[e->cls].nflows++;
	}
	while (chain != RS_NIL) {
		uint32_t next = p->fl[chain].next;

		fifo_push(s, chain);
		chain = next;
	}
}
