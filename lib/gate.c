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
 * with users). A gate holds GATE_DEPTH of its rate (the proxy's the
 * pacer's burst B), at least a grant's largest need. A grant of n bytes
 * may go when any of the three holds n: its own gate (what the class's
 * users here are due), the class's (what its users in other workers
 * leave), or the proxy's (what classes leave whose users wait for their
 * servers); it is charged to all three, each into a debt of at most
 * GATE_DEBT beyond its depth, and bytes given back (refunds) come back to
 * all three. So a worker's users get their part of their class whatever
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
#define GATE_DEBT (RS_NSEC_PER_SEC / 10)	/* charges beyond the depth */
#define MSS 1448.0

/* The three gates of a class, tried in this order. */
enum { GATE_OWN, GATE_CLASS, GATE_PROXY, NGATES };

struct gate {
	uint64_t *tat;		/* when the gate is empty (GCRA) */
	double rate;		/* bytes/s; 0: holds nothing */
	double depth;		/* ns of rate it holds at most */
};

/* Gate k of class cls. Each holds GATE_DEPTH of its rate (the proxy's the
 * pacer's burst), at least a grant's largest need (2 MSS, or R * 2 ms:
 * pacer.c's q), or a small class could never read. */
static struct gate gate_of(const struct rs_sched *s, uint32_t cls, int k)
{
	double r = rs_pace_rate(s), least = fmax(2 * MSS, r * 0.002);
	struct rs_gate_cls *g = &s->gate.cls[cls];
	struct gate x;

	x.tat = k == GATE_OWN ? &g->own_tat :
		k == GATE_CLASS ? &s->gate.tat[1 + cls] : &s->gate.tat[0];
	x.rate = k == GATE_OWN ? r * g->own : k == GATE_CLASS ? r * g->part : r;
	x.depth = k == GATE_PROXY ? rs_pacer_burst(r) / r : 0.02;
	if (x.rate > 0)
		x.depth = fmax(x.depth, least / x.rate) * RS_NSEC_PER_SEC;
	return x;
}

/* Bytes gate x holds at now (0 when it is in debt or has no rate). */
static double gate_holds(struct gate x, rs_time_ns now)
{
	double tat, room;

	if (!(x.rate > 0))
		return 0;
	tat = (double)__atomic_load_n(x.tat, __ATOMIC_RELAXED);
	room = (double)now + x.depth - fmax(tat, (double)now);
	return room > 0 ? room * x.rate / RS_NSEC_PER_SEC : 0;
}

/* Moves gate x by n bytes (< 0: given back): tat = max(tat, now) + n / rate,
 * at most depth + GATE_DEBT ahead of now, at least now when giving back. */
static void gate_move(struct gate x, double n, rs_time_ns now)
{
	double cap = (double)now + x.depth + GATE_DEBT, t;
	uint64_t old, next;

	if (!(x.rate > 0))
		return;
	old = __atomic_load_n(x.tat, __ATOMIC_RELAXED);
	do {
		if (n >= 0) {
			t = fmax((double)old, (double)now) +
			    n / x.rate * RS_NSEC_PER_SEC;
			t = fmin(t, cap);
		} else if (old > now) {
			t = fmax((double)old + n / x.rate * RS_NSEC_PER_SEC,
				 (double)now);
		} else {
			return;		/* full already */
		}
		next = (uint64_t)t;
	} while (!__atomic_compare_exchange_n(x.tat, &old, next, true,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
}

/* When gate x will hold need bytes (now if it does; never without rate). */
static rs_time_ns gate_ready(struct gate x, double need, rs_time_ns now)
{
	double tat, t;

	if (!(x.rate > 0))
		return UINT64_MAX;
	tat = (double)__atomic_load_n(x.tat, __ATOMIC_RELAXED);
	t = fmax(tat, (double)now) + need / x.rate * RS_NSEC_PER_SEC - x.depth;
	return t > (double)now ? (rs_time_ns)ceil(t) : now;
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

void rs_gate_charge(struct rs_sched *s, uint32_t cls, double n, rs_time_ns now)
{
	int k;

	if (!s->gate.tat || n == 0)
		return;
	for (k = 0; k < NGATES; k++)
		gate_move(gate_of(s, cls, k), n, now);
}

rs_time_ns rs_gate_ready(const struct rs_sched *s, uint32_t cls, double need,
			 rs_time_ns now)
{
	rs_time_ns first = UINT64_MAX, t;
	int k;

	for (k = 0; k < NGATES; k++) {
		t = gate_ready(gate_of(s, cls, k), need, now);
		first = t < first ? t : first;
	}
	return first;
}

/* p_c of every class from the rows (msf weighs users, the rest classes),
 * and this worker's part of it, by the users it serves. */
static void gate_parts(struct rs_sched *s, const struct rs_share_row *rows,
		       unsigned n, unsigned self)
{
	struct rs_gate_cls *g = s->gate.cls;
	double sum = 0;
	uint32_t c;
	unsigned i;

	for (c = 0; c < s->ncls; c++) {
		uint64_t users = 0;

		for (i = 0; i < n; i++)
			users += rows[i].users[c];
		g[c].part = !users ? 0 : s->pol->per_user ?
			    s->cls[c].weight * (double)users :
			    s->cls[c].weight;
		g[c].own = users ? (double)rows[self].users[c] / users : 0;
		sum += g[c].part;
	}
	for (c = 0; c < s->ncls; c++) {
		g[c].part = sum > 0 ? g[c].part / sum : 0;
		g[c].own *= g[c].part;
	}
}

void rs_gate_detach(struct rs_sched *s)
{
	free(s->gate.cls);
	s->gate.cls = NULL;
	s->gate.tat = NULL;
	s->gate.ncls = 0;
}

int rs_gate_attach(struct rs_sched *s, uint64_t *gates,
		   const struct rs_share_row *rows, unsigned n, unsigned self)
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
	gate_parts(s, rows, n, self);
	return 0;
}
