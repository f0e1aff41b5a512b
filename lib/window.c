/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * window.c - when to release: the window controllers and the release loop.
 *
 * W is the number of RELEASED requests (outstanding responses); W+ (Wmax)
 * is the window. The release loop runs while W < W+, so right after a
 * release W <= ceil(W+) (the documented rounding: W+ is real-valued under
 * wrc-mult). W may exceed W+ only because W+ shrank while responses were
 * outstanding; no release happens then.
 *
 * wrc-mult (MSF-RS Eq. 2-3), every update interval T:
 *   U = (S / T) / C;  if the window was the limit during the interval,
 *   W+ <- max(1, min(U+ / U, K) * W+)       (U = 0: factor K)
 * wrc-aimd (FQRS Eq. 4), every F * W+ completed responses:
 *   if limited: U < U+/2 -> W+ *= 2 (fast start); U < U+ -> W+ += 1;
 *               U > U+ -> W+ -= 1 (not below 1)
 * fixed N: W+ = N.
 * "The window was the limit" = at some point of the interval the release
 * loop stopped because W >= W+ while requests were waiting.
 *
 * Long transfers (cfg.pacing, cfg.long_transfer > 0): a released request
 * whose response reached long_transfer bytes leaves the window (W - 1,
 * flag RS_RF_LONG, counted in nlong); it stays RELEASED and its end no
 * longer decrements W. The pacer, not the window, shares the link among
 * long transfers. W counts only the non-long released requests.
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
 * U is measured on the link bytes: the proxied bytes plus the exceptive
 * bytes of the link counter (link.c; 0 with RS_LINK_PROXIED).
 */
#include <math.h>

#include "internal.h"

static double clamp_window(const struct rs_sched *s, double w)
{
	if (w < 1)
		w = 1;
	if (s->cfg.max_window >= 1 && w > s->cfg.max_window)
		w = s->cfg.max_window;
	return w;
}

void rs_window_init(struct rs_sched *s)
{
	if (s->cfg.controller == RS_WIN_FIXED)
		s->Wmax = s->cfg.fixed_window;
	else
		s->Wmax = clamp_window(s, s->cfg.initial_window);
}

/*
 * A reconfiguration that switches to an adaptive controller (wrc-mult,
 * wrc-aimd) starts it from the window in force, not from W+_0: the link was
 * running at that window, and restarting at 1 with W outstanding would stop
 * every release until W drained (and overflow max_queued meanwhile).
 */
void rs_window_carry_over(struct rs_sched *s, double old_wmax)
{
	bool adaptive = s->cfg.controller == RS_WIN_WRC_MULT ||
			s->cfg.controller == RS_WIN_WRC_AIMD;

	if (adaptive && old_wmax > s->Wmax)
		s->Wmax = clamp_window(s, old_wmax);
}

/* Slow start applies: an adaptive controller, in the byte-layer mode. */
static bool adaptive(const struct rs_sched *s)
{
	return s->cfg.pacing && (s->cfg.controller == RS_WIN_WRC_MULT ||
				 s->cfg.controller == RS_WIN_WRC_AIMD);
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

/* Slow start: one end (or long transfer) of a released request. Called
 * before W is decremented. */
void rs_slow_start_step(struct rs_sched *s)
{
	if (s->waiting == 0 || (double)s->W < s->Wmax)
		return;
	s->Wmax = clamp_window(s, s->Wmax + 1);
	if (s->cfg.max_window >= 1 && s->Wmax >= s->cfg.max_window)
		s->ss = false;
}

/* Request r (released) has received bytes >= lt_thresh: out of the
 * window, and the freed slot is released at once. */
void rs_long_check(struct rs_sched *s, uint32_t r, rs_time_ns now)
{
	struct rs_req *q = &s->req[r];

	if ((q->flags & RS_RF_LONG) || q->state != RS_ST_RELEASED ||
	    !s->cfg.pacing || !s->cfg.long_transfer)
		return;
	if (s->ss)
		rs_slow_start_step(s);
	q->flags |= RS_RF_LONG;
	s->W--;
	s->nlong++;
	rs_try_release(s, now);
}

static double link_bytes_per_ns(const struct rs_sched *s)
{
	return (double)s->cfg.link_bps / 8.0 / (double)RS_NSEC_PER_SEC;
}

static double utilization(const struct rs_sched *s, double bytes,
			  rs_time_ns elapsed)
{
	if (!elapsed)
		return 0;
	return bytes / (double)elapsed / link_bytes_per_ns(s);
}

void rs_do_release(struct rs_sched *s, uint32_t r, rs_time_ns now)
{
	struct rs_req *q = &s->req[r];
	struct rs_class *k = &s->cls[q->cls];
	rs_id id = ((uint64_t)q->gen << 32) | (uint64_t)(r + 1);

	rs_fifo_unlink(s, r);
	q->state = RS_ST_RELEASED;
	q->t_rel = now;
	s->waiting--;
	s->W++;
	k->outstanding++;
	k->released++;
	s->released++;
	s->in_callback = 1;
	s->release(s->ctx, id, q->cookie);
	s->in_callback = 0;
}

/* Release as many requests as the controller allows. */
void rs_try_release(struct rs_sched *s, rs_time_ns now)
{
	if (s->cfg.controller == RS_WIN_RTC) {
		rs_rtc_run(s, now);
		return;
	}
	while ((double)s->W < s->Wmax) {
		uint32_t r = rs_policy_select(s);

		if (r == RS_NIL)
			return;
		rs_do_release(s, r, now);
	}
	if (s->waiting > 0) {
		s->limited = true;
		s->aimd_limited = true;
	}
}

static void wrc_mult_update(struct rs_sched *s)
{
	double f;

	if (!s->limited)
		return;
	f = s->U > 0 ? s->cfg.target_util / s->U : s->cfg.K;
	if (f > s->cfg.K)
		f = s->cfg.K;
	s->Wmax = clamp_window(s, f * s->Wmax);
}

/* Measurement interval (every controller): U and per-class throughput;
 * wrc-mult also updates W+ here. */
void rs_tick(struct rs_sched *s, rs_time_ns now)
{
	rs_time_ns elapsed;
	double sec;
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
	if (s->cfg.controller != RS_WIN_WRC_AIMD)
		s->U = utilization(s, rs_u_bytes(s) - (double)s->bytes_at_tick -
				   s->exc_at_tick, elapsed);
	rs_link_tick(s, elapsed);
	for (c = 0; c < s->ncls; c++) {
		struct rs_class *k = &s->cls[c];

		k->throughput_bps = (double)(k->bytes - k->bytes_at_tick) * 8 / sec;
		k->bytes_at_tick = k->bytes;
	}
	s->bytes_at_tick = s->bytes;
	s->exc_at_tick = s->exc_total;
	if (s->cfg.controller == RS_WIN_WRC_MULT) {
		wrc_mult_update(s);
		if (s->U >= s->cfg.target_util)
			s->ss = false;
	}
	/* idle for a whole interval: the next busy period starts slowly */
	if (s->waiting > 0 || s->W > 0 || s->nlong > 0)
		s->t_active = now;
	else if (now - s->t_active >= s->cfg.update_interval && adaptive(s))
		s->ss = true;
	s->limited = s->waiting > 0 && (double)s->W >= s->Wmax;
	s->t_tick = now;
	s->next_tick = now + s->cfg.update_interval;
	set_fast_until(s);
}

/* wrc-aimd: the interval is F * W+ completed responses. */
void rs_window_on_end(struct rs_sched *s, rs_time_ns now)
{
	double U, target = s->cfg.target_util;

	if (s->cfg.controller != RS_WIN_WRC_AIMD)
		return;
	if ((double)++s->aimd_ends < (double)s->cfg.F * s->Wmax)
		return;
	U = utilization(s, rs_u_bytes(s) - (double)s->aimd_bytes - s->aimd_exc,
			now - s->aimd_t0);
	s->U = U;
	if (U >= target)
		s->ss = false;
	if (s->aimd_limited) {
		if (U < target / 2)
			s->Wmax = clamp_window(s, s->Wmax * 2);
		else if (U < target)
			s->Wmax = clamp_window(s, s->Wmax + 1);
		else if (U > target)
			s->Wmax = clamp_window(s, s->Wmax - 1);
	}
	s->aimd_ends = 0;
	s->aimd_bytes = s->bytes;
	s->aimd_exc = s->exc_total;
	s->aimd_t0 = now;
	s->aimd_limited = s->waiting > 0 && (double)s->W >= s->Wmax;
}
