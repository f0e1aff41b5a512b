/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sff.c - DRR-SFF modifier: inside each class a priority group (users whose
 * recent service is below th) and a best-effort group, served by weighted
 * DRR with quantum ratio alpha = Q_priority / Q_best_effort.
 *
 * Recent service of a (class,user) counts response and foreign bytes and
 * resets when the user has been silent longer than the flow timeout. The
 * group of a request is fixed at enqueue time (DRR-SFF moves a flow to the
 * best-effort group once th bytes were served).
 *
 * Group scheduling (DRR-SFF Fig. 3, one request = one "packet" of its
 * estimated size): when it is group g's turn, DC_g += Q_g if DC_g <= 0;
 * the head request of g leaves and DC_g -= size; if DC_g <= 0 the turn
 * passes to the other group. An empty group resets DC_g to 0. The
 * best-effort group therefore gets at least one request for every
 * alpha * Q_best_effort bytes of priority requests: never starved.
 */
#include "internal.h"

uint8_t rs_sff_classify(const struct rs_sched *s, const struct rs_user *u,
			rs_time_ns now)
{
	uint64_t recent = u->recent;

	if (now > u->last_seen && now - u->last_seen > s->cfg.sff_flow_timeout)
		recent = 0;
	return recent < s->cfg.sff_threshold ? 0 : 1;
}

uint8_t rs_sff_peek(const struct rs_sched *s, const struct rs_class *c)
{
	(void)s;
	if (c->q[0].len == 0)
		return 1;
	if (c->q[1].len == 0)
		return 0;
	return c->sff_turn;
}

void rs_sff_charge(struct rs_sched *s, struct rs_class *c, uint8_t sub,
		   uint64_t size)
{
	double q = (double)s->cfg.default_size;

	if (sub == 0)
		q *= s->cfg.sff_alpha;
	c->sff_turn = sub;
	if (c->sff_dc[sub] <= 0)
		c->sff_dc[sub] += q;
	c->sff_dc[sub] -= (double)size;
	if (c->sff_dc[sub] <= 0)
		c->sff_turn = 1 - sub;
}
