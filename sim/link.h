/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * link.h - the bottleneck downlink as a fluid processor-sharing server.
 *
 * Capacity C (bytes/s) is shared by the active responses (flows) with
 * max-min fairness: each flow is limited by its server's own bandwidth cap,
 * and what capped flows leave unused is shared equally by the others
 * (water-filling). Constant-bit-rate cross traffic, when on, takes its rate
 * off the top (it is not congestion-controlled).
 *
 * Invariants (after link_set_rates): sum(rate) + cbr_used <= C, every
 * rate <= cap, and either every flow runs at its cap or the link is full.
 */
#ifndef SIM_LINK_H
#define SIM_LINK_H

#include <stddef.h>
#include <stdint.h>

struct sim_flow {
	uint32_t req;		/* owner (the simulator's request index) */
	double remaining;	/* bytes still to deliver */
	double delivered;	/* bytes delivered so far */
	double cap;		/* bytes/s, 0 = unlimited */
	double rate;		/* bytes/s, set by link_set_rates() */
};

struct sim_link {
	double capacity;	/* C, bytes/s */
	double cbr_rate;	/* cross traffic offered while on, bytes/s */
	double cbr_used;	/* min(cbr_rate, C) */
	double now;		/* time up to which flows are advanced, s */
	struct sim_flow *flows;
	size_t n, alloc;
	double flow_bytes;	/* total bytes delivered to flows */
	double cbr_bytes;	/* total cross-traffic bytes carried */
	size_t *order;		/* scratch for water-filling */
};

#define LINK_DONE_EPS 1e-6	/* bytes: a flow with less left is complete */

void link_init(struct sim_link *l, double capacity);
void link_free(struct sim_link *l);
int link_add(struct sim_link *l, uint32_t req, double size, double cap);
void link_set_cbr(struct sim_link *l, double rate);
void link_set_rates(struct sim_link *l);
void link_advance(struct sim_link *l, double t);
double link_next_completion(const struct sim_link *l);	/* INFINITY if none */
/* Remove one completed flow (remaining <= LINK_DONE_EPS) into *out. */
int link_pop_done(struct sim_link *l, struct sim_flow *out);
double link_used_rate(const struct sim_link *l);

#endif /* SIM_LINK_H */
