/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wrc_mult.c - the window rate controller of MSF-RS (Eq. 2-3): every
 * update interval T, with U = (S / T) / C measured by window.c,
 *   if the window was the limit during the interval:
 *     W+ <- max(1, min(U+ / U, K) * W+)       (U = 0: factor K)
 * clamped to max_window. W+_0 = initial_window. Reaching U+ ends slow
 * start (window.c). With the byte layer the pacer reads at most R = U+ C
 * (less the exceptive rate), so a full link measures U a little under U+
 * and every interval would grow W+ by that little: W+ does not grow while
 * U >= PACED_FULL U+ (the pacer's own samples open the window for room and
 * for a class below its share, pacer.c); it still shrinks.
 */
#include "internal.h"

#define PACED_FULL 0.97	/* with the byte layer, U >= this part of U+ is a
			 * full link (the pacer's reads fall short of R by a
			 * few segments per interval) */

static void wrc_mult_interval(struct rs_sched *s, double U)
{
	double f;

	s->U = U;
	if (s->limited) {
		f = U > 0 ? s->cfg.target_util / U : s->cfg.K;
		if (f > s->cfg.K)
			f = s->cfg.K;
		if (f > 1 && s->cfg.pacing && U >= PACED_FULL * s->cfg.target_util)
			f = 1;
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
