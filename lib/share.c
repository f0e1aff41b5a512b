/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * share.c - one link, one scheduler per SMP worker: the share of the link
 * each worker's scheduler schedules.
 *
 * A proxy with N worker processes runs N schedulers (one per process; an
 * instance is not shared). Each schedules its share f of the link: C, the
 * pacer's rate, the fixed window and an adaptive window's W+ are taken
 * times f (rs_link_Bps(), rs_fixed_window(), rs_window_limit(): W+ stays
 * in the proxy's units), and a whole-link counter's bytes are taken times
 * f (link.c), so every worker sees the link's utilization and takes its
 * share of the cross traffic. With f = 1 (one worker) nothing changes.
 *
 * The shares come from a table the host keeps where every worker can read
 * it (Squid: shared memory): every update, each worker samples its own row
 * (rs_share_sample(): per class, the users it serves; the fraction of C it
 * read since its previous sample; the fraction its outstanding responses
 * hold; whether it wants more: requests or flows wait at the sample, or it
 * is waking up) and computes its share from the n live rows
 * (rs_share_of()):
 *
 *  - demand weight of worker i: with per-user fairness (msf) d_i =
 *    sum_c w_c * n_ic, so each user of class c gets w_c / sum_j d_j of the
 *    link whichever worker serves it; every other policy (rfq, drr, and
 *    the website gateway's) gives each class with users s_c = w_c /
 *    sum_{c: n_c > 0} w_c and splits it among the workers by their users:
 *    d_i = sum_c s_c * n_ic / n_c;
 *  - work conservation (water-filling): a worker that does not want more
 *    is capped at 1.25 times what it read, but at least what its
 *    outstanding responses hold (it keeps the slots it fills until they
 *    end) and the idle share; what it leaves goes to the others by demand
 *    weight, and what is left when every worker is capped goes to all by
 *    demand weight. A capped worker may grow by a quarter per update, and
 *    to its full demand share at the first update where something waits;
 *  - a worker with no users gets rs_share_idle(n) = 5 % of 1/n, so that
 *    its next first request is paced at a small rate until its next update,
 *    not stopped; the floor also applies to a worker with users whose share
 *    would be smaller.
 *
 * Invariants: 0 < f <= 1 for every worker; over the workers with users,
 * the shares add up to 1 but for the idle floors (within n * the idle
 * share); the computation reads only the rows, so every worker computes
 * the same shares from the same table. Limits: the rows are read at each
 * worker's own update, so shares lag changes of demand by up to one
 * update; per-class policies' class shares are exact only when each
 * class's users use what they are given (split by users, not by use).
 *
 * Bounded shares: the lag lets shares computed from rows of different ages
 * add up to more than 1 for an update (measured: a fixed window of 4 at 7
 * for 0.3 s). With a fixed window its slots are a bound the administrator
 * set for the whole proxy, so there each worker's share also comes from
 * one budget of 1 that the host keeps (an atomic sum of the workers'
 * claims, grown only by compare-and-swap out of what is left):
 *  - a worker claims max(f, W / fixed window) (rs_share_claim()): it keeps
 *    the slots its outstanding responses fill until they end; a single
 *    slot is not claimed, since every busy worker has one anyway;
 *  - it schedules min(f, what it holds of the budget), at least the idle
 *    share (rs_share_granted()).
 * Then every worker's W and W+ are at most its claim times the fixed
 * window, and the claims add up to at most 1: the proxy's W and W+ never
 * exceed the fixed window but for the floor of one slot per worker with
 * users. A share that moves waits for the giver's next update. Adaptive
 * windows and rtc are not bounded (claim 0): their bytes are bounded by
 * the pacers, an adaptive window's slots follow the share (max(1, f W+)),
 * and a worker waking up takes its share at once.
 *
 * One adaptive window (rs_share_window()): every worker's controller moves
 * its own W+ by its own U and signals, and the U of the workers differ (a
 * link counter's bytes are split by share, so a worker that reads less
 * than its share sees the rest as cross traffic), so their W+ drift apart.
 * At every update a worker's W+ becomes the mean of the live rows' W+
 * weighted by their shares: sum_j f_j W+_j / sum_j f_j, the proxy's slots
 * over the shares that hold them. With shares adding up to 1 the update
 * keeps the proxy's slots and splits them by the new shares. A row that
 * is not an adaptive sample (W+ 0) does not count.
 */
#include "internal.h"

#define RS_SHARE_IDLE 0.05	/* of 1/N: the share of a worker with no users */
#define RS_SHARE_GROWTH 1.25	/* a satisfied worker's cap, times what it read */
#define RS_SHARE_CLAIM_ULP 1e-6	/* the resolution of the host's claims */

/* Users of class c: with a request queued or outstanding, or a flow. */
static uint32_t class_demand(const struct rs_sched *s, uint32_t c)
{
	const struct rs_class *k = &s->cls[c];

	return k->uc > k->naccts ? k->uc : k->naccts;
}

/* The fraction of C this scheduler's outstanding responses hold: W / W+
 * of its share with a window, rtc's promised bandwidth without one. */
static double held_of(const struct rs_sched *s)
{
	double full = rs_full_rate(s), held;

	if (s->ctl->window)
		held = (double)s->W / rs_window_limit(s);
	else
		held = full > 0 ? (full - s->bw_avail) / full : 0;
	if (held < 0)
		held = 0;
	return (held < 1 ? held : 1) * s->link_share;
}

/*
 * Whether this scheduler wants more than it had: requests or flows wait
 * now, or it is waking up (no sample yet, the previous one is older than a
 * second, or it had no users then): it has not read anything yet, and
 * capping it at what it read would hold it at the idle share for an
 * update.
 */
static bool limited_of(const struct rs_sched *s, rs_time_ns now)
{
	if (s->waiting > 0 || s->pc.waiting > 0)
		return true;
	return !s->share_t || now - s->share_t > RS_NSEC_PER_SEC ||
	       !s->share_users;
}

int rs_share_sample(struct rs_sched *s, rs_time_ns now, uint32_t *users,
		    struct rs_share_row *row)
{
	uint64_t total = 0;
	double dt;
	uint32_t c;
	int err = rs_entry_err(s);

	if (err)
		return err;
	if (!users || !row || now < s->share_t)
		return RS_EINVAL;
	for (c = 0; c < s->ncls; c++) {
		users[c] = class_demand(s, c);
		total += users[c];
	}
	row->users = users;
	dt = (double)(now - s->share_t) / (double)RS_NSEC_PER_SEC;
	row->used = s->share_t && dt > 0 ?
		    (double)(s->bytes - s->share_mark) / dt /
		    (rs_link_Bps(s) / s->link_share) : 0;
	row->held = held_of(s);
	row->limited = limited_of(s, now);
	row->share = s->link_share;
	row->window_max = s->ctl->adaptive ? s->Wmax : 0;
	s->share_t = now;
	s->share_mark = s->bytes;
	s->share_users = total > 0;
	return 0;
}

double rs_share_idle(unsigned n)
{
	return n ? RS_SHARE_IDLE / n : 1;
}

/* Users of class c over the rows: N_c. */
static uint64_t class_users(const struct rs_share_row *rows, unsigned n,
			    uint32_t c)
{
	uint64_t nc = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		nc += rows[i].users[c];
	return nc;
}

/* Class c's weight in the proxy: msf weighs users (w_c N_c), every other
 * policy the classes with users (w_c); 0 without users. */
static double class_weight(const struct rs_sched *s, uint32_t c, uint64_t nc)
{
	if (!nc)
		return 0;
	return s->pol->per_user ? s->cls[c].weight * (double)nc :
	       s->cls[c].weight;
}

/* The sum of class_weight() over the classes. */
static double weights_total(const struct rs_sched *s,
			    const struct rs_share_row *rows, unsigned n)
{
	double total = 0;
	uint32_t c;

	for (c = 0; c < s->ncls; c++)
		total += class_weight(s, c, class_users(rows, n, c));
	return total;
}

/*
 * Each class's part of the proxy, p_c = class_weight() / weights_total(),
 * and worker i's part of class c, p_c n_ic / N_c (its users of the class;
 * nc = N_c, class_users(), counted once per class by the callers).
 * A worker's demand weight is the sum of its parts over the classes
 * (demand_weights()), and its byte gates read at R times the same parts
 * (gate.c, rs_share_gates()): one definition for both.
 */
static double class_part(const struct rs_sched *s, uint32_t c, uint64_t nc,
			 double total)
{
	return total > 0 ? class_weight(s, c, nc) / total : 0;
}

static double worker_part(const struct rs_share_row *rows, unsigned i,
			  uint32_t c, uint64_t nc, double part)
{
	return nc ? part * rows[i].users[c] / (double)nc : 0;
}

/* Demand weights of every row into d[], their sum returned. */
static double demand_weights(const struct rs_sched *s,
			     const struct rs_share_row *rows, unsigned n,
			     double *d)
{
	double total = weights_total(s, rows, n), sum = 0;
	uint32_t c;
	unsigned i;

	for (i = 0; i < n; i++)
		d[i] = 0;
	for (c = 0; c < s->ncls; c++) {
		uint64_t nc = class_users(rows, n, c);
		double part = class_part(s, c, nc, total);

		for (i = 0; i < n && part > 0; i++)
			d[i] += worker_part(rows, i, c, nc, part);
	}
	for (i = 0; i < n; i++)
		sum += d[i];
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
	if (cap < rs_share_idle(n))
		cap = rs_share_idle(n);
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
	bool capped[RS_SHARE_MAX_WORKERS] = { false };
	double left = 1, open;
	bool changed = true;
	unsigned i, nopen;

	/* the level left / open only rises as workers are capped, so a worker
	 * capped in one pass stays capped; count the open workers, not their
	 * float sum, to know whether any is left */
	for (;;) {
		open = 0;
		nopen = 0;
		for (i = 0; i < n; i++)
			if (!capped[i] && d[i] > 0) {
				open += d[i];
				nopen++;
			}
		if (!changed || !nopen)
			break;
		changed = false;
		for (i = 0; i < n; i++) {
			if (capped[i] || d[i] <= 0 ||
			    left * d[i] / open <= cap_of(&rows[i], n))
				continue;
			capped[i] = true;
			left -= cap_of(&rows[i], n);
			changed = true;
		}
	}
	if (nopen)
		return capped[self] ? cap_of(&rows[self], n) :
		       left * d[self] / open;
	/* everyone capped: the rest goes to all by demand weight */
	return cap_of(&rows[self], n) + (left > 0 ? left * d[self] / dsum : 0);
}

double rs_share_of(const struct rs_sched *s, const struct rs_share_row *rows,
		   unsigned n, unsigned self)
{
	double d[RS_SHARE_MAX_WORKERS], dsum, idle, f;

	if (!s || !rows || n == 0 || self >= n)
		return 1;
	if (n > RS_SHARE_MAX_WORKERS)
		return 1.0 / n;
	idle = rs_share_idle(n);
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

/* Whether this scheduler's share comes from the host's budget: a window
 * from the configuration, whose slots bound the whole proxy. */
static bool bounded(const struct rs_sched *s)
{
	return s->ctl->window_from_config;
}

double rs_share_claim(const struct rs_sched *s, double f)
{
	double slots;

	if (!s || !bounded(s))
		return 0;
	/* one slot is every busy worker's floor (rs_fixed_window()), whatever
	 * its share: claimed, it would take a share from the others' rates */
	slots = s->W > 1 && s->cfg.fixed_window >= 1 ?
		(double)s->W / s->cfg.fixed_window : 0;
	if (slots > f)
		f = slots;
	return f < 1 ? f : 1;
}

double rs_share_granted(const struct rs_sched *s, double f, double claimed,
			unsigned n)
{
	double idle = rs_share_idle(n);

	if (!s || !bounded(s))
		return f;
	/* a host may keep claims to a millionth: within that, the claim is f
	 * (the shares then add up to at most 1 + n millionths, which adds no
	 * slot to floor(N * f) summed over the workers while N < 500,000) */
	if (claimed < f - RS_SHARE_CLAIM_ULP)
		f = claimed;
	return f > idle ? f : idle;
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
	/* the exceptive rate is this scheduler's part of the cross traffic */
	s->exc_rate *= share / s->link_share;
	s->link_share = share;
	rs_pacer_cap(s);
	if (s->ctl->rate_changed)
		s->ctl->rate_changed(s, rs_full_rate(s) - before);
	if (s->ctl->window_from_config)
		s->ctl->start(s, now);	/* the fixed window of the new share */
	rs_try_release(s, now);
	rs_check(s, "rs_set_link_share");
	return 0;
}

int rs_share_window(struct rs_sched *s, const struct rs_share_row *rows,
		    unsigned n, rs_time_ns now)
{
	double slots = 0, shares = 0;
	unsigned i;
	int err = rs_entry_err(s);

	if (err)
		return err;
	if (!rows || !n || n > RS_SHARE_MAX_WORKERS)
		return RS_EINVAL;
	if (!s->ctl->adaptive)
		return 0;
	for (i = 0; i < n; i++) {
		if (!(rows[i].window_max >= 1 && rows[i].share > 0 &&
		      rows[i].share <= 1))
			continue;	/* not adaptive, or not a sample */
		slots += rows[i].share * rows[i].window_max;
		shares += rows[i].share;
	}
	if (shares <= 0)
		return 0;
	rs_advance(s, now);
	rs_part_slot_update(s, now);	/* the credit up to now at the old W+ */
	s->Wmax = rs_window_clamp(s, slots / shares);
	rs_try_release(s, now);
	rs_check(s, "rs_share_window");
	return 0;
}

int rs_share_gates(struct rs_sched *s, uint64_t *gates,
		   const struct rs_share_row *rows, unsigned n, unsigned self,
		   rs_time_ns now)
{
	int err = rs_entry_err(s);

	if (err)
		return err;
	if (gates && (!rows || self >= n || n > RS_SHARE_MAX_WORKERS ||
		      ((uintptr_t)gates & 7)))
		return RS_EINVAL;
	rs_advance(s, now);
	rs_pacer_refill(s, now);	/* the tokens up to now at the old rate */
	if (gates)
		err = rs_gate_attach(s, gates);
	else
		rs_gate_detach(s);
	if (gates && !err) {
		double total = weights_total(s, rows, n);
		uint32_t c;

		for (c = 0; c < s->ncls; c++) {
			struct rs_gate_cls *g = &s->gate.cls[c];
			uint64_t nc = class_users(rows, n, c);

			g->part = class_part(s, c, nc, total);
			g->own = worker_part(rows, self, c, nc, g->part);
		}
	}
	rs_pacer_cap(s);		/* the bucket of the new rate */
	rs_check(s, "rs_share_gates");
	return err;
}
