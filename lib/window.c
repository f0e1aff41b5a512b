/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * window.c - when to release under a window: W <= W+, the release loop,
 * long transfers, slow start, the update interval (every controller), and
 * the fixed window N. How W+ adapts is each controller's file (wrc_mult.c,
 * wrc_aimd.c); rtc (rtc.c) has no window.
 *
 * W is the number of RELEASED requests (outstanding responses); W+ (Wmax)
 * is the window. The release loop runs while W < W+, so right after a
 * release W <= ceil(W+) (the documented rounding: W+ is real-valued under
 * wrc-mult). W may exceed W+ only because W+ shrank while responses were
 * outstanding; no release happens then.
 *
 * fixed N: W+ = N (re-read on every reconfigure).
 * Every update interval T (all controllers): U = (S / T) / C with S the
 * link bytes of the interval, then s->ctl->interval(U).
 * "The window was the limit" = at some point of the interval the release
 * loop stopped because W >= W+ while requests were waiting.
 *
 * Long transfers (cfg.pacing, cfg.long_transfer > 0): a released request
 * whose response reached long_transfer bytes leaves the window (W - 1,
 * flag RS_RF_LONG, counted in nlong); it stays RELEASED and its end no
 * longer decrements W. The pacer, not the window, shares the link among
 * long transfers. W counts only the non-long released requests.
 *
 * Link done (rs_on_link_done(), any controller): a released request whose
 * response has wholly crossed the link but cannot end yet (the proxy still
 * adapts it) leaves the window the same way, so a slot is never held by a
 * response that no longer uses the link.
 *
 * Slow start (wrc-mult, wrc-aimd, with cfg.pacing: without it the
 * controllers are exactly the papers'): after rs_new(), every rs_reconfigure()
 * and an idle period (nothing queued or outstanding for >= one update
 * interval), every end or long transfer of a released request while
 * requests wait and W >= W+ adds 1 to W+, so W+ doubles per round of
 * responses (TCP slow start per RTT). The phase ends when a flow had to
 * wait for the pacer, when W+ reaches max_window, or when a regular update
 * measured U >= U+. It never lowers W+; the regular updates go on.
 *
 * Room (the same controllers, with cfg.pacing; after slow start): every
 * three read-rate samples of the pacer (100 ms) in a row that find the
 * link with room (the proxy read < 90 % of R, and the link counter's last
 * sample < 90 % of U+ * C) and no flow waiting for the pacer, while
 * requests wait and W >= W+ and one more flow's least window fits in
 * flight (pacer.c decides), add one slot (rs_window_room(): 1 to W+, or
 * 1 / f in an SMP worker of share f, whose W+ is in the proxy's units and
 * whose signals are its own). A round
 * trip's bursts make a flow wait for the pacer on a link with room too,
 * which ends slow start within the first second, and the regular updates
 * alone then took tens of seconds to open the window.
 *
 * Share (the same controllers, with cfg.pacing, slow start or not): a
 * sample of the pacer in which it limits (the proxy read at 90 % of R and
 * flows wait for it) and a class with queued requests read below 90 % of
 * its share of R adds one slot while requests wait and W >= W+ and one more
 * flow's least window fits in flight (rs_window_share(); the conditions
 * are pacer.c's). A full link shows no room, so without it the
 * requests of a class whose servers are slow wait behind the window while
 * the downloads of another take the bytes they would have read.
 *
 * U is measured on the link bytes: the proxied bytes plus the exceptive
 * bytes of the link counter (link.c; 0 with RS_LINK_PROXIED).
 */
#include <math.h>

#include "internal.h"

/* W+ within [1, max_window]. */
double rs_window_clamp(const struct rs_sched *s, double w)
{
	if (w < 1)
		w = 1;
	if (s->cfg.max_window >= 1 && w > s->cfg.max_window)
		w = s->cfg.max_window;
	return w;
}

/* W+_0 of the adaptive controllers (and of rtc, which has no window). */
void rs_window_start(struct rs_sched *s, rs_time_ns now)
{
	(void)now;
	s->Wmax = rs_window_clamp(s, s->cfg.initial_window);
}

/* The fixed window of this scheduler's share of the link (share.c):
 * floor(fixed_window * share), at least 1. The workers' windows add up to
 * at most fixed_window as long as every worker's share gives it one slot;
 * a worker below that (fewer slots than busy workers, an idle worker's
 * floor) still has one. The 1e-9 keeps a share like 0.75 computed as
 * 0.7499... from losing a slot. */
uint32_t rs_fixed_window(const struct rs_sched *s)
{
	double w = floor((double)s->cfg.fixed_window * s->link_share + 1e-9);

	return w >= 1 ? (uint32_t)w : 1;
}

static void fixed_start(struct rs_sched *s, rs_time_ns now)
{
	(void)now;
	s->Wmax = rs_fixed_window(s);
}

/*
 * rs_reconfigure(): a new controller starts, and the fixed window is read
 * again. A switch to an adaptive controller (wrc-mult, wrc-aimd) starts it
 * from the window in force, not from W+_0: the link was running at that
 * window, and restarting at 1 with W outstanding would stop every release
 * until W drained (and overflow max_queued meanwhile). The same adaptive
 * controller keeps its W+ within the new max_window.
 */
void rs_window_restart(struct rs_sched *s, const struct rs_controller_ops *old,
		       rs_time_ns now)
{
	double old_wmax = s->Wmax;

	if (s->ctl == old && !s->ctl->window_from_config) {
		if (s->cfg.max_window >= 1 && s->Wmax > s->cfg.max_window)
			s->Wmax = s->cfg.max_window;
		return;
	}
	s->ctl->start(s, now);
	if (s->ctl->adaptive && old_wmax > s->Wmax)
		s->Wmax = rs_window_clamp(s, old_wmax);
	s->part_t = now;	/* a fixed window counted no part slot */
	s->part_credit = 0;
}

/* Slow start applies: an adaptive controller, in the byte-layer mode. */
static bool adaptive(const struct rs_sched *s)
{
	return s->cfg.pacing && s->ctl->adaptive;
}
/* rs_on_bytes() takes its fast path while now < fast_until: inside the
 * current interval and with long transfers off (they need a check per
 * byte event, so with pacing every byte event takes the slow path and
 * the path without pacing pays nothing for them). */
static void set_fast_until(struct rs_sched *s)
{
	s->fast_until = s->started && s->lt_thresh == UINT64_MAX ?
			s->next_tick : 0;
}

/* Derived parameters of cfg; a new configuration restarts slow start. */
void rs_window_params(struct rs_sched *s)
{
	s->lt_thresh = s->cfg.pacing && s->cfg.long_transfer ?
		       s->cfg.long_transfer : UINT64_MAX;
	s->ss = adaptive(s);
	set_fast_until(s);
}

/* The window this scheduler releases up to: W+, or, for an adaptive
 * controller in one of several SMP workers (link share f < 1), f * W+, at
 * least 1: the most it holds (a worker due x = f W+ holds floor(x) slots
 * and one more part of the time, rs_window_open()). Each worker's
 * controller then keeps W+ in the proxy's units: it measures the whole
 * link's U, so the regular updates scale every worker's W+ alike, and its
 * slots follow its share of the link as a fixed window's do
 * (rs_fixed_window()); without it every worker's slow start ended at its
 * own first wait and the windows added up to twice one worker's, split
 * evenly rather than by share. With one worker (f = 1) it is W+. */
double rs_window_limit(const struct rs_sched *s)
{
	double w;

	if (!s->ctl->adaptive || s->link_share >= 1)
		return s->Wmax;
	w = s->Wmax * s->link_share;
	return w > 1 ? w : 1;
}

/*
 * The part slot (SMP, adaptive window): a worker due x = f W+ slots holds
 * floor(x) of them at any time and one more, the part slot, a part
 * x - floor(x) of the time, so that the proxy's slots add up to W+ over
 * time rather than to the sum of the workers' ceil(x). Rounded up, a
 * worker due a quarter of a slot held a whole one: on the testbed's
 * few-users bed with 4 workers the workers held 7.1-7.4 slots for a W+ of
 * 5.5-5.8, and a lone bronze user in a worker of share 0.048 held its
 * slot all the time. part_credit (s) grows at x - floor(x) while the
 * worker holds floor(x) slots or fewer and falls at 1 - (x - floor(x))
 * while it holds one more, within +-RS_PART_CREDIT_S of that part; the part
 * slot opens while it is not negative. A worker waits at most
 * RS_PART_CREDIT_S for it. x is read at each count: a change of W+ or f
 * counts from the previous one on.
 */

/* x = f W+ of an adaptive SMP worker with a part slot: its whole slots
 * and the part; false without one (one worker, a fixed window, x whole). */
static bool part_slot(const struct rs_sched *s, double *whole, double *part)
{
	double x;

	if (!s->ctl->adaptive || s->link_share >= 1)
		return false;
	x = s->Wmax * s->link_share;
	*whole = floor(x + 1e-9);
	*part = x - *whole;
	return *part > 1e-9;
}

/* Counts part_credit up to now with the W held since part_t (called
 * before W moves). Only an adaptive controller has a part slot; a switch
 * to one starts the count (rs_window_restart()). */
void rs_part_slot_update(struct rs_sched *s, rs_time_ns now)
{
	double whole, part, dt;

	if (!s->ctl->adaptive || now <= s->part_t)
		return;
	dt = (double)(now - s->part_t) / (double)RS_NSEC_PER_SEC;
	s->part_t = now;
	if (!part_slot(s, &whole, &part))
		return;
	s->part_credit += (double)s->W > whole ? -dt * (1 - part) : dt * part;
	s->part_credit = fmin(part * RS_PART_CREDIT_S,
			      fmax(-part * RS_PART_CREDIT_S, s->part_credit));
}

/* When the part slot opens for a waiting request (UINT64_MAX: it is open,
 * or nothing waits for it). */
rs_time_ns rs_part_slot_deadline(const struct rs_sched *s)
{
	double whole, part;

	if (!s->waiting || !part_slot(s, &whole, &part) ||
	    (double)s->W != whole || s->part_credit >= 0)
		return UINT64_MAX;
	return s->part_t + (rs_time_ns)ceil(-s->part_credit / part *
					    (double)RS_NSEC_PER_SEC);
}

/* The slots the window may hold now: rs_window_limit(), or with a part
 * slot floor(x), and one more while its credit lasts. */
double rs_window_open(const struct rs_sched *s)
{
	double whole, part;

	if (!part_slot(s, &whole, &part))
		return rs_window_limit(s);
	return whole + (s->part_credit >= 0 ? 1 : 0);
}

/* W+ in the proxy's units (reqsched.h). */
double rs_window_max(const struct rs_sched *s)
{
	return s->ctl->window ? s->Wmax : (double)s->W;
}

/* The window is the limit: requests wait and W has reached the slots it
 * may hold now (a closed part slot limits too). */
bool rs_window_limits(const struct rs_sched *s)
{
	return s->waiting > 0 && (double)s->W >= rs_window_open(s);
}

/* Slow start: one end (or long transfer) of a released request. Called
 * before W is decremented. One slot more per end: 1 / f in the proxy's
 * units, since this worker sees f of the proxy's ends. */
void rs_slow_start_step(struct rs_sched *s)
{
	if (!rs_window_limits(s))
		return;
	s->Wmax = rs_window_clamp(s, s->Wmax + 1 / s->link_share);
	if (s->cfg.max_window >= 1 && s->Wmax >= s->cfg.max_window)
		s->ss = false;
}

/* An adaptive window holds requests back (W >= W+ while some wait): the
 * only state in which the pacer's signals below may open it. */
bool rs_window_holds_back(const struct rs_sched *s)
{
	return adaptive(s) && rs_window_limits(s);
}

/* One more slot of this scheduler's: 1 / f in the proxy's units (the
 * pacer's signals below are its own); the next timer releases it. */
static void window_grow(struct rs_sched *s)
{
	s->Wmax = rs_window_clamp(s, s->Wmax + 1 / s->link_share);
	s->release_due = true;
}

/* The pacer saw the link with room and no flow waiting for it for 300 ms,
 * and one more flow fits: after slow start, a window that holds requests
 * back grows by one (at most 10 per 3 s). */
void rs_window_room(struct rs_sched *s)
{
	if (rs_window_holds_back(s) && !s->ss)	/* slow start grows faster */
		window_grow(s);
}

/* Admission by share: the pacer holds flows back (the link is full at R)
 * while a class with queued requests reads below its share of R (pacer.c
 * decides, at most once per 100-ms sample): a window that holds requests
 * back grows by one, so the policy's next request starts and its bytes
 * come out of the classes above their share, not out of the link. */
void rs_window_share(struct rs_sched *s)
{
	if (rs_window_holds_back(s))
		window_grow(s);
}

/* Request r leaves its slot at now (it ends, or leaves the window): the
 * one place W falls, so the part slot's credit counts the W held up to
 * now first. */
void rs_window_close(struct rs_sched *s, uint32_t r, rs_time_ns now)
{
	rs_slot_close(s, r);
	rs_part_slot_update(s, now);
	s->W--;
}

/* Released request r, in the window, leaves it and stays released. */
void rs_window_leave(struct rs_sched *s, uint32_t r, rs_time_ns now)
{
	rs_window_close(s, r, now);
	s->req[r].flags |= RS_RF_LONG;
	s->nlong++;
}

/* Released request r, in the window, hands its slot on: it leaves the
 * window (a round of slow start, as an end would be) and the freed slot
 * is released at once. */
void rs_window_hand_on(struct rs_sched *s, uint32_t r, rs_time_ns now)
{
	if (s->ss)
		rs_slow_start_step(s);
	rs_window_leave(s, r, now);
	rs_try_release(s, now);
}

/* Request r (released) has received bytes >= lt_thresh: out of the
 * window, and the freed slot is released at once. */
void rs_long_check(struct rs_sched *s, uint32_t r, rs_time_ns now)
{
	struct rs_req *q = &s->req[r];

	if ((q->flags & RS_RF_LONG) || q->state != RS_ST_RELEASED ||
	    !s->cfg.pacing || !s->cfg.long_transfer)
		return;
	rs_window_hand_on(s, r, now);
}

static double link_bytes_per_ns(const struct rs_sched *s)
{
	return rs_link_Bps(s) / (double)RS_NSEC_PER_SEC;
}

/* Utilization of bytes received over elapsed ns. */
double rs_utilization(const struct rs_sched *s, double bytes,
		      rs_time_ns elapsed)
{
	if (!elapsed)
		return 0;
	return bytes / (double)elapsed / link_bytes_per_ns(s);
}

/* The release loop of the window controllers: the policy's next
 * requests while W < W+. */
void rs_window_release(struct rs_sched *s, rs_time_ns now)
{
	rs_part_slot_update(s, now);
	while ((double)s->W < rs_window_open(s)) {
		uint32_t r = rs_select_next(s);

		if (r == RS_NIL)
			return;
		rs_release(s, r, now);
	}
	if (s->waiting > 0) {
		s->limited = true;
		s->aimd_limited = true;
	}
}

/* The controller records U (wrc-aimd measures its own, over completions). */
void rs_window_measured(struct rs_sched *s, double U)
{
	s->U = U;
}

/* Measurement interval (every controller): U, per-class throughput and
 * the link statistics; then the controller's interval (wrc-mult updates
 * W+ there). */
void rs_tick(struct rs_sched *s, rs_time_ns now)
{
	rs_time_ns elapsed;
	double sec, U;
	uint32_t c;

	if (!s->started) {
		s->started = true;
		s->t_tick = now;
		s->next_tick = now + s->cfg.update_interval;
		s->aimd_t0 = now;
		s->t_active = now;
		s->link_t = now;
		s->link_mark = s->bytes;
		set_fast_until(s);
		return;
	}
	if (now < s->next_tick)
		return;
	elapsed = now - s->t_tick;
	sec = (double)elapsed / (double)RS_NSEC_PER_SEC;
	U = rs_utilization(s, rs_u_bytes(s) - (double)s->bytes_at_tick -
			   s->exc_at_tick, elapsed);
	/* the link statistics of the interval (link.c) */
	s->st_proxied = s->bytes - s->bytes_at_tick;
	s->st_exc = (uint64_t)llround(s->exc_total - s->exc_at_tick);
	s->st_link = s->link_src == RS_LINK_COUNTER ?
		     (uint64_t)llround(s->link_total - s->link_at_tick) :
		     s->st_proxied;
	s->st_interval = sec;
	s->link_at_tick = s->link_total;
	for (c = 0; c < s->ncls; c++) {
		struct rs_class *k = &s->cls[c];

		k->throughput_bps = (double)(k->bytes - k->bytes_at_tick) * 8 / sec;
		k->bytes_at_tick = k->bytes;
	}
	s->bytes_at_tick = s->bytes;
	s->exc_at_tick = s->exc_total;
	s->ctl->interval(s, U);
	/* the entry point that ticked may not release: the next timer does */
	s->release_due = s->waiting > 0;
	/* idle for a whole interval: the next busy period starts slowly */
	if (s->waiting > 0 || s->W > 0 || s->nlong > 0)
		s->t_active = now;
	else if (now - s->t_active >= s->cfg.update_interval && adaptive(s))
		s->ss = true;
	s->limited = rs_window_limits(s);
	s->t_tick = now;
	s->next_tick = now + s->cfg.update_interval;
	set_fast_until(s);
}

const struct rs_controller_ops rs_fixed_ops = {
	.name = "fixed",
	.window = true,
	.adaptive = false,
	.window_from_config = true,
	.start = fixed_start,
	.release = rs_window_release,
	.interval = rs_window_measured,
};
