/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wrc_aimd.c - the window rate controller of FQRS (Eq. 4): the interval is
 * F * W+ completed responses, U the link bytes over its duration / C;
 *   if the window was the limit during the interval:
 *     U < U+/2 -> W+ *= 2 (fast start);  U < U+ -> W+ += 1;
 *     U > U+   -> W+ -= 1 (not below 1)
 * clamped to max_window. W+_0 = initial_window. The update interval of
 * window.c is not its interval: there it keeps the U it measured itself.
 */
#include "internal.h"

static void wrc_aimd_start(struct rs_sched *s, rs_time_ns now)
{
	rs_window_start(s, now);
	s->aimd_ends = 0;
	s->aimd_bytes = s->bytes;
	s->aimd_exc = s->exc_total;
	s->aimd_t0 = now;
}

static void wrc_aimd_interval(struct rs_sched *s, double U)
{
	(void)s;
	(void)U;
}

/* A released request ended: one completion of the interval. */
static void wrc_aimd_ended(struct rs_sched *s, uint32_t r, rs_time_ns now)
{
	double U, target = s->cfg.target_util;

	(void)r;
	if ((double)++s->aimd_ends < (double)s->cfg.F * rs_window_limit(s))
		return;
	U = rs_utilization(s, rs_u_bytes(s) - (double)s->aimd_bytes -
			   s->aimd_exc, now - s->aimd_t0);
	s->U = U;
	if (U >= target)
		s->ss = false;
	if (s->aimd_limited) {
		if (U < target / 2)
			s->Wmax = rs_window_clamp(s, s->Wmax * 2);
		else if (U < target)
			s->Wmax = rs_window_clamp(s, s->Wmax + 1);
		else if (U > target)
			s->Wmax = rs_window_clamp(s, s->Wmax - 1);
	}
	s->aimd_ends = 0;
	s->aimd_bytes = s->bytes;
	s->aimd_exc = s->exc_total;
	s->aimd_t0 = now;
	s->aimd_limited = rs_window_limits(s);
}

const struct rs_controller_ops rs_wrc_aimd_ops = {
	.name = "wrc-aimd",
	.window = true,
	.adaptive = true,
	.start = wrc_aimd_start,
	.release = rs_window_release,
	.interval = wrc_aimd_interval,
	.ended = wrc_aimd_ended,
};
