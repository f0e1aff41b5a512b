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
 * arrival time, tat), in memory the host shares between the workers
 * (rs_share_gates()), changed only by compare-and-swap:
 *   - class c's gate refills at R_c = R * p_c, where p_c is c's part of the
 *     proxy's weights over every worker's row (msf: w_c N_c / sum w N, the
 *     N users of each class; the others: w_c / sum of the weights of the
 *     classes with users), and holds GATE_DEPTH of it (at least 2 MSS);
 *   - the proxy's gate refills at R (the whole proxy's pacer rate) and
 *     holds the pacer's burst B of it;
 *   - a grant of n bytes may go when the class gate holds n, or, borrowing,
 *     when the proxy's gate does (the spare of the classes that do not use
 *     their shares, their users waiting for their servers); either way both
 *     gates are charged, each into a debt of at most GATE_DEBT beyond its
 *     depth, and bytes given back (refunds) come back to both.
 * So every class's users, in every worker, read the class's rate among
 * them, and what a class leaves goes to whoever reads first. A worker's own
 * token bucket then refills at R instead of f R (rs_pace_rate()): the gates
 * bound the proxy.
 *
 * Limits: the rates come from rows up to one update old (as the shares);
 * borrowers take the spare in the order they ask, not by weight; the
 * host's clocks must agree (the workers of one machine: CLOCK_MONOTONIC).
 */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

#define GATE_DEPTH (RS_NSEC_PER_SEC / 50)	/* a class gate: 20 ms of R_c */
#define GATE_DEBT (RS_NSEC_PER_SEC / 10)	/* charges beyond the depth */
#define MSS 1448.0

/* The rate of gate g (0: the proxy, 1 + c: class c), bytes/s. */
static double gate_rate(const struct rs_sched *s, uint32_t g)
{
	double r = rs_pace_rate(s);

	return g ? r * s->gate.part[g - 1] : r;
}

/* How long gate g holds at most, ns: a class gate GATE_DEPTH, the proxy's
 * the pacer's burst, each at least a grant's largest need (2 MSS, or
 * R * 2 ms: pacer.c's q), or a small class could never read. */
static double gate_depth(const struct rs_sched *s, uint32_t g, double rate)
{
	double least = fmax(2 * MSS, rs_pace_rate(s) * 0.002);
	double d = g ? (double)GATE_DEPTH :
		   rs_pacer_burst(rate) / rate * RS_NSEC_PER_SEC;

	return fmax(d, least / rate * RS_NSEC_PER_SEC);
}

/* Bytes gate g holds at now (0 when it is in debt or has no rate). */
static double gate_holds(const struct rs_sched *s, uint32_t g, rs_time_ns now)
{
	double rate = gate_rate(s, g), tat, room;

	if (!(rate > 0))
		return 0;
	tat = (double)__atomic_load_n(&s->gate.tat[g], __ATOMIC_RELAXED);
	room = (double)now + gate_depth(s, g, rate) - fmax(tat, (double)now);
	return room > 0 ? room * rate / RS_NSEC_PER_SEC : 0;
}

/* Moves gate g by n bytes (< 0: given back): tat = max(tat, now) + n / rate,
 * at most depth + GATE_DEBT ahead of now, at least now when giving back. */
static void gate_move(struct rs_sched *s, uint32_t g, double n, rs_time_ns now)
{
	double rate = gate_rate(s, g);
	uint64_t *tat = &s->gate.tat[g], old, next;
	double cap, t;

	if (!(rate > 0))
		return;
	cap = (double)now + gate_depth(s, g, rate) + GATE_DEBT;
	old = __atomic_load_n(tat, __ATOMIC_RELAXED);
	do {
		if (n >= 0) {
			t = fmax((double)old, (double)now) +
			    n / rate * RS_NSEC_PER_SEC;
			t = fmin(t, cap);
		} else if (old > now) {
			t = fmax((double)old + n / rate * RS_NSEC_PER_SEC,
				 (double)now);
		} else {
			return;		/* full already */
		}
		next = (uint64_t)t;
	} while (!__atomic_compare_exchange_n(tat, &old, next, true,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
}

double rs_gate_left(const struct rs_sched *s, uint32_t cls, rs_time_ns now)
{
	if (!s->gate.tat)
		return HUGE_VAL;
	return fmax(gate_holds(s, 1 + cls, now), gate_holds(s, 0, now));
}

void rs_gate_charge(struct rs_sched *s, uint32_t cls, double n, rs_time_ns now)
{
	if (!s->gate.tat || n == 0)
		return;
	gate_move(s, 1 + cls, n, now);
	gate_move(s, 0, n, now);
}

/* When gate g will hold need bytes (now if it does; never without rate). */
static rs_time_ns gate_ready_one(const struct rs_sched *s, uint32_t g,
				 double need, rs_time_ns now)
{
	double rate = gate_rate(s, g), tat, t;

	if (!(rate > 0))
		return UINT64_MAX;
	tat = (double)__atomic_load_n(&s->gate.tat[g], __ATOMIC_RELAXED);
	t = fmax(tat, (double)now) + need / rate * RS_NSEC_PER_SEC -
	    gate_depth(s, g, rate);
	return t > (double)now ? (rs_time_ns)ceil(t) : now;
}

rs_time_ns rs_gate_ready(const struct rs_sched *s, uint32_t cls, double need,
			 rs_time_ns now)
{
	rs_time_ns c = gate_ready_one(s, 1 + cls, need, now);
	rs_time_ns p = gate_ready_one(s, 0, need, now);

	return c < p ? c : p;
}

/* p_c of every class from the rows: msf weighs users, the rest classes. */
static void gate_parts(struct rs_sched *s, const struct rs_share_row *rows,
		       unsigned n)
{
	double sum = 0;
	uint32_t c;
	unsigned i;

	for (c = 0; c < s->ncls; c++) {
		uint64_t users = 0;

		for (i = 0; i < n; i++)
			users += rows[i].users[c];
		s->gate.part[c] = !users ? 0 : s->pol->per_user ?
				  s->cls[c].weight * (double)users :
				  s->cls[c].weight;
		sum += s->gate.part[c];
	}
	for (c = 0; c < s->ncls; c++)
		s->gate.part[c] = sum > 0 ? s->gate.part[c] / sum : 0;
}

void rs_gate_detach(struct rs_sched *s)
{
	free(s->gate.part);
	s->gate.part = NULL;
	s->gate.tat = NULL;
	s->gate.ncls = 0;
}

int rs_gate_attach(struct rs_sched *s, uint64_t *gates,
		   const struct rs_share_row *rows, unsigned n)
{
	if (s->gate.ncls != s->ncls) {
		double *part = realloc(s->gate.part, (s->ncls ? s->ncls : 1) *
				       sizeof(*part));

		if (!part)
			return RS_ENOMEM;
		s->gate.part = part;
		s->gate.ncls = s->ncls;
	}
	s->gate.tat = gates;
	gate_parts(s, rows, n);
	return 0;
}
