/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wrc_mult.c - the window rate controller of MSF-RS (Eq. 2-3): every
 * update interval T, with U = (S / T) / C measured by window.c,
 *   if the window was the limit during the interval:
 *     W+ <- max(1, min(U+ / U, K) * W+)       (U = 0: factor K)
 * clamped to max_window. W+_0 = initial_window. Reaching U+ ends slow
 * start (window.c).
 */
#include "internal.h"

static void wrc_mult_interval(struct rs_sched *s, double U)
{
	double f;

	s->U = U;
	if (s->limited) {
		f = U > 0 ? s->cfg.target_util / U : s->cfg.K;
		if (f > s->cfg.K)
			f = s->cfg.K;
		s->Wmax = rs_window_clamp(s, f * s->Wmax);
	}
	if (U >= s->cfg.target_util)
		s->ss = false;
}

const struct rs_controller_ops rs_wrc_mult_ops = {
	.name = "wrc-mult",
	.window = true,
	.adaptive = true,
	.start = rs_window_start,
	.release = rs_window_release,
	.interval = wrc_mult_interval,
};
