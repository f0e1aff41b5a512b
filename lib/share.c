/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * share.c - one link, one scheduler per SMP worker: the share of the link
 * each worker's scheduler schedules.
 *
 * A proxy with N worker processes runs N schedulers (one per process; an
 * instance is not shared). Each schedules its share f of the link: C, the
 * pacer's rate and the fixed window are taken times f (rs_link_Bps(),
 * fixed_window * f), and a whole-link counter's bytes are taken times f
 * (link.c), so every worker sees the link's utilization and takes its
 * share of the cross traffic. With f = 1 (one worker) nothing changes.
 *
 * The shares come from a table the host keeps where every worker can read
 * it (Squid: shared memory): every update, each worker samples its own row
 * (rs_share_sample(): per class, the users it serves; the fraction of C it
 * read since its previous sample; the fraction its outstanding responses
 * hold; whether it had requests or flows waiting)
 * and computes its share from every live row (rs_share_of()):
 *
 *  - demand weight of worker i: msf (user-based fairness) d_i = sum_c
 *    w_c * n_ic, so each user of class c gets w_c / sum_j d_j of the link
 *    whichever worker serves it; rfq and drr (class-based fairness) give
 *    each class with users s_c = w_c / sum_{c: n_c > 0} w_c and split it
 *    among the workers by their users: d_i = sum_c s_c * n_ic / n_c;
 *  - work conservation: a worker that had nothing waiting is capped at
 *    1.25 times what it read, at least what its outstanding responses hold
 *    (W / W+ of its share: it keeps the slots it fills until they end) and
 *    the idle share below (it may grow
 *    by a quarter per update, at once to the full demand share when
 *    something waits), and
 *    what it leaves goes to the others by demand weight (water-filling);
 *    what is left when every worker is capped goes to all by demand weight;
 *  - a worker with no users gets RS_SHARE_IDLE / N, so that its first
 *    request is paced at a small rate until its next update, not stopped.
 *
 * Invariants: 0 < f <= 1 for every worker; over workers with demand, the
 * shares sum to 1 (idle workers' floors come on top); the computation
 * reads only the rows, so every worker computes the same shares from the
 * same table. Limits: the rows are read at each worker's own update, so
 * shares lag changes of demand by up to one update; rfq and drr shares are
 * exact only when each class's users use what they are given.
 */
#include "internal.h"

#define RS_SHARE_IDLE 0.05	/* of 1/N: the share of a worker with no users */
#define RS_SHARE_GROWTH 1.25	/* a satisfied worker's cap, times what it read */

/* Users of class c: with a request queued or outstanding, or a flow. */
static uint32_t class_demand(const struct rs_sched *s, uint32_t c)
{
	const struct rs_class *k = &s->cls[c];

	return k->uc > k->naccts ? k->uc : k->naccts;
}

int rs_share_sample(struct rs_sched *s, rs_time_ns now, uint32_t *users,
		    struct rs_share_row *row)
{
	double dt, held;
	uint32_t c;
	int err = rs_entry_err(s);

	if (err)
		return err;
	if (!users || !row)
		return RS_EINVAL;
	rs_advance(s, now);
	for (c = 0; c < s->ncls; c++)
		users[c] = class_demand(s, c);
	row->users = users;
	dt = now > s->share_t ? (double)(now - s->share_t) /
				(double)RS_NSEC_PER_SEC : 0;
	row->used = s->share_t && dt > 0 ?
		    (double)(s->bytes - s->share_mark) / dt /
		    ((double)s->cfg.link_bps / 8.0) : 0;
	held = s->Wmax > 0 ? (double)s->W / s->Wmax : 0;
	row->held = (held < 1 ? held : 1) * s->link_share;
	row->limited = s->waiting > 0 || s->pc.waiting > 0;
	s->share_t = now;
	s->share_mark = s->bytes;
	return 0;
}

/* Demand weights of every row into d[], their sum returned. */
static double demand_weights(const struct rs_sched *s,
			     const struct rs_share_row *rows, unsigned n,
			     double *d)
{
	double wsum = 0, sum = 0;
	uint32_t c;
	unsigned i;

	for (i = 0; i < n; i++)
		d[i] = 0;
	for (c = 0; c < s->ncls; c++) {
		double w = s->cls[c].weight;
		uint64_t nc = 0;

		for (i = 0; i < n; i++)
			nc += rows[i].users[c];
		if (!nc)
			continue;
		if (s->cfg.policy == RS_POLICY_MSF) {
			for (i = 0; i < n; i++)
				d[i] += w * rows[i].users[c];
			continue;
		}
		wsum += w;
		for (i = 0; i < n; i++)
			d[i] += w * rows[i].users[c] / (double)nc;
	}
	for (i = 0; i < n; i++) {
		if (wsum > 0)
			d[i] /= wsum;
		sum += d[i];
	}
	return sum;
}

/* A worker's cap: what it may use, 1 when it wants more than it had; at
 * least what its outstanding responses hold (a worker keeps the slots it
 * fills) and an idle worker's share. */
static double cap_of(const struct rs_share_row *r, unsigned n)
{
	double cap = r->limited ? 1 : r->used * RS_SHARE_GROWTH;

	if (cap < r->held)
		cap = r->held;
	if (cap < RS_SHARE_IDLE / n)
		cap = RS_SHARE_IDLE / n;
	return cap < 1 ? cap : 1;
}

/*
 * Water-filling: the workers with demand share 1 in proportion to d, none
 * above its cap; capped workers' surplus goes to the rest. Returns self's
 * share before the idle floor.
 */
static double fill(const struct rs_share_row *rows, unsigned n, unsigned self,
		   const double *d, double dsum)
{
	double left = 1, open = dsum, f_self = 0;
	bool capped[RS_SHARE_MAX_WORKERS] = { false };
	bool changed = true;
	unsigned i;

	while (changed && open > 0) {
		changed = false;
		for (i = 0; i < n; i++) {
			if (capped[i] || d[i] <= 0 ||
			    left * d[i] / open <= cap_of(&rows[i], n))
				continue;
			capped[i] = true;
			left -= cap_of(&rows[i], n);
			open -= d[i];
			changed = true;
		}
	}
	if (capped[self])
		f_self = cap_of(&rows[self], n);
	if (open > 0)
		return capped[self] ? f_self : left * d[self] / open;
	/* everyone capped: the rest goes to all by demand weight */
	return f_self + (left > 0 ? left * d[self] / dsum : 0);
}

double rs_share_of(const struct rs_sched *s, const struct rs_share_row *rows,
		   unsigned n, unsigned self)
{
	double d[RS_SHARE_MAX_WORKERS], dsum, idle, f;

	if (!s || !rows || n == 0 || self >= n)
		return 1;
	if (n > RS_SHARE_MAX_WORKERS)
		return 1.0 / n;
	idle = RS_SHARE_IDLE / n;
	dsum = demand_weights(s, rows, n, d);
	if (dsum <= 0)
		return 1.0 / n;
	if (d[self] <= 0)
		return idle;
	f = fill(rows, n, self, d, dsum);
	if (f < idle)
		f = idle;
	return f < 1 ? f : 1;
}

int rs_set_link_share(struct rs_sched *s, double share, rs_time_ns now)
{
	double before;
	int err = rs_entry_err(s);

	if (err)
		return err;
	if (!(share > 0 && share <= 1))
		return RS_EINVAL;
	rs_advance(s, now);
	rs_pacer_refill(s, now);
	before = rs_full_rate(s);
	s->link_share = share;
	rs_pacer_cap(s);
	if (s->ctl->rate_changed)
		s->ctl->rate_changed(s, rs_full_rate(s) - before);
	if (s->cfg.controller == RS_WIN_FIXED)
		s->Wmax = rs_fixed_window(s);
	rs_try_release(s, now);
	rs_check(s, "rs_set_link_share");
	return 0;
}
