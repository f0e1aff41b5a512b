/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gate.c - SMP: the workers' pacers read through shared byte gates, one per
 * class and one for the whole proxy, so that a class's share of the link
 * holds whichever worker serves its users.
 *
 * Without gates each worker's pacer shares its own part f R of the link
 * among its own accounts (share.c): a user waiting for its server lends its
 * share to its worker's other users, of any class, and not to its class's
 * users in the other workers; with few users per class per worker that
 * lending is most of the time (measured: bronze +36 % of its share on the
 * fast-link bed with 4 workers).
 *
 * A gate is a token bucket kept as one timestamp (GCRA: the theoretical
 * arrival time, tat), changed by compare-and-swap. Each class c has three:
 *   - its own gate in this worker (local): R p_c n_c / N_c, this worker's
 *     part of the class, by the users n_c of the N_c it serves;
 *   - the class's gate (shared, rs_share_gates()): R p_c;
 *   - the proxy's gate (shared): R, the whole proxy's pacer rate.
 * p_c is c's part of the proxy's weights over every worker's row (msf:
 * w_c N_c / sum w N; the others: w_c / sum of the weights of the classes
 * with users), the same parts the workers' shares come from (share.c's
 * class_part(), worker_part()). A gate holds GATE_DEPTH of its rate (the proxy's the
 * pacer's burst B), at least a grant's largest need. A grant of n bytes
 * may go when any of the three holds n: its own gate (what the class's
 * users here are due), the class's (what its users in other workers
 * leave), or the proxy's (what classes leave whose users wait for their
 * servers); it is charged to the first that holds it and the ones after
 * (a borrower's own gate keeps what it is due), each into a debt of at
 * most GATE_DEBT beyond its depth, and bytes given back (refunds) come
 * back to the same gates (the flow remembers which: gate_from; a flow's
 * allowance of several grants remembers the last). So a worker's users
 * get their part of their class whatever
 * the other workers' users do (first come at the shared gates alone
 * starved a slow user: 0 of its 1 Mbit/s in test_smp.py), and what they
 * leave goes to the class's users in the other workers (its gate) or to
 * any class (the proxy's), whoever reads first. A worker's own bucket then
 * refills at R instead of f R (rs_pace_rate()): the gates bound the proxy.
 *
 * Limits: the rates come from rows up to one update old (as the shares);
 * borrowers take the spare in the order they ask, not by weight; the
 * workers' clocks must agree (the workers of one machine: CLOCK_MONOTONIC).
 */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

#define GATE_DEPTH (RS_NSEC_PER_SEC / 50)	/* a class gate: 20 ms of its
						 * rate */
#define GATE_DEPTH_MAX RS_NSEC_PER_SEC	/* however small its rate */
#define GATE_DEBT (RS_NSEC_PER_SEC / 10)	/* charges beyond the depth */

/* The three gates of a class, tried in this order (a grant's gate_from). */
enum { GATE_OWN, GATE_CLASS, GATE_PROXY, NGATES };

struct gate {
	uint64_t *tat;		/* when the gate is empty (GCRA) */
	double rate;		/* bytes/s; 0: holds nothing */
	double depth;		/* ns of rate it holds at most */
};

/* Gate k of class cls. A class gate holds GATE_DEPTH of its rate, the
 * proxy's the pacer's burst, each at least a byte more than a grant's
 * largest need (2 MSS, or q = max(MSS, f R * 2 ms): rs_grant_least()),
 * so that a full gate lets any grant go; a class's gates at most
 * GATE_DEPTH_MAX (one of a tiny rate lends nothing, its class
 * borrows), the proxy's however long that takes (a grant must go). */
static struct gate gate_of(const struct rs_sched *s, uint32_t cls, int k)
{
	double r = rs_pace_rate(s);
	double least = fmax(2 * RS_MSS, rs_grant_least(r)) + 1;
	struct rs_gate_cls *g = &s->gate.cls[cls];
	struct gate x;

	x.tat = k == GATE_OWN ? &g->own_tat :
		k == GATE_CLASS ? &s->gate.tat[1 + cls] : &s->gate.tat[0];
	x.rate = k == GATE_OWN ? r * g->own : k == GATE_CLASS ? r * g->part : r;
	x.depth = k == GATE_PROXY ? rs_pacer_burst(r) / r * RS_NSEC_PER_SEC :
		  (double)GATE_DEPTH;
	if (x.rate > 0)
		x.depth = fmax(x.depth, least / x.rate * RS_NSEC_PER_SEC);
	if (k != GATE_PROXY)	/* R >= 5 % of C: the proxy's is finite */
		x.depth = fmin(x.depth, (double)GATE_DEPTH_MAX);
	return x;
}

/* How far ahead of now the gate's tat is, ns (0: full). Times are kept
 * relative to now, so that doubles stay exact whatever the clock's epoch. */
static double gate_ahead(uint64_t tat, rs_time_ns now)
{
	return tat > now ? (double)(tat - now) : 0;
}

/* Bytes gate x holds at now (0 when it is in debt or has no rate). */
static double gate_holds(struct gate x, rs_time_ns now)
{
	double room;

	if (!(x.rate > 0))
		return 0;
	room = x.depth - gate_ahead(__atomic_load_n(x.tat, __ATOMIC_RELAXED),
				    now);
	return room > 0 ? room * x.rate / RS_NSEC_PER_SEC : 0;
}

/* Moves gate x by n bytes: a charge (n > 0) sets tat to max(tat, now) +
 * n / rate, at most depth + GATE_DEBT ahead of now, and never moves it
 * back (another worker's cap may be higher); bytes given back (n < 0)
 * move it back, not before now. */
static void gate_move(struct gate x, double n, rs_time_ns now)
{
	double cap = x.depth + (double)GATE_DEBT, ahead;
	uint64_t old, next;

	if (!(x.rate > 0) || n == 0)
		return;
	old = __atomic_load_n(x.tat, __ATOMIC_RELAXED);
	do {
		ahead = gate_ahead(old, now);
		if (n > 0 ? ahead >= cap : ahead <= 0)
			return;		/* at the cap, or full */
		ahead += n / x.rate * RS_NSEC_PER_SEC;
		ahead = n > 0 ? fmin(ahead, cap) : fmax(ahead, 0);
		next = now + (uint64_t)ahead;
	} while (!__atomic_compare_exchange_n(x.tat, &old, next, true,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
}

/* When gate x will hold need bytes (now if it does; never without rate). */
static rs_time_ns gate_ready(struct gate x, double need, rs_time_ns now)
{
	double t;

	if (!(x.rate > 0))
		return UINT64_MAX;
	t = gate_ahead(__atomic_load_n(x.tat, __ATOMIC_RELAXED), now) +
	    need / x.rate * RS_NSEC_PER_SEC - x.depth;
	return t > 0 ? now + (rs_time_ns)ceil(t) : now;
}

double rs_gate_left(const struct rs_sched *s, uint32_t cls, rs_time_ns now)
{
	double most = 0;
	int k;

	if (!s->gate.tat)
		return HUGE_VAL;
	for (k = 0; k < NGATES; k++)
		most = fmax(most, gate_holds(gate_of(s, cls, k), now));
	return most;
}

/* A grant of n bytes is taken from the first gate that holds it (the
 * proxy's, borrowing, when none does): charged to that gate and those after
 * it, so the class's gate counts what its users in every worker read and
 * the proxy's what every class reads, and a borrower's own gate is not
 * put in debt for bytes the others left. */
int rs_gate_charge(struct rs_sched *s, uint32_t cls, double n, rs_time_ns now)
{
	int from, k;

	if (!s->gate.tat || n <= 0)
		return GATE_OWN;
	for (from = GATE_OWN; from < GATE_PROXY; from++)
		if (gate_holds(gate_of(s, cls, from), now) >= n)
			break;
	for (k = from; k < NGATES; k++)
		gate_move(gate_of(s, cls, k), n, now);
	return from;
}

void rs_gate_refund(struct rs_sched *s, uint32_t cls, int from, double n,
		    rs_time_ns now)
{
	int k;

	if (!s->gate.tat || n <= 0)
		return;
	for (k = from; k < NGATES; k++)
		gate_move(gate_of(s, cls, k), -n, now);
}

rs_time_ns rs_gate_ready(const struct rs_sched *s, uint32_t cls, double need,
			 rs_time_ns now)
{
	rs_time_ns first = UINT64_MAX, t;
	int k;

	if (!s->gate.tat)
		return now;
	for (k = 0; k < NGATES; k++) {
		t = gate_ready(gate_of(s, cls, k), need, now);
		first = t < first ? t : first;
	}
	return first;
}

void rs_gate_detach(struct rs_sched *s)
{
	free(s->gate.cls);
	s->gate.cls = NULL;
	s->gate.tat = NULL;
	s->gate.ncls = 0;
}

int rs_gate_attach(struct rs_sched *s, uint64_t *gates)
{
	if (s->gate.ncls != s->ncls) {
		struct rs_gate_cls *g = calloc(s->ncls ? s->ncls : 1,
					       sizeof(*g));

		if (!g)
			return RS_ENOMEM;
		free(s->gate.cls);
		s->gate.cls = g;
		s->gate.ncls = s->ncls;
	}
	s->gate.tat = gates;
	return 0;
}
