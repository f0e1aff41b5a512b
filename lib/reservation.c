/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reservation.c - whether a request may take the server's resources now:
 * the room check of the multi-resource policies (mqos, sqos, drf) with a
 * reservation for the request the policy would serve next.
 *
 * Room alone (rs_res_fits: in_use_i + cost_i <= capacity_i) starves a
 * request whose cost is large against what smaller requests keep holding:
 * a media file costing 100 % of the bandwidth waits for an idle link, and
 * with 4-% CGI pages released whenever the CPU frees, the link never idles
 * (the testbed's prober table: 0 media files served under mqos). So the
 * first request the policy would serve next that has no room is reserved
 * (s->resv). Once ops->resv_passes other requests have been released since
 * (the reservation holds), another request goes only if it fits beside it,
 *   in_use_i + cost_i(resv) + cost_i(r) <= capacity_i for every resource r
 *   needs,
 * i.e. nothing that needs a resource the reserved request lacks goes, and
 * on the others the room it needs is kept. Before that, others go if they
 * fit: mqos passes a head without room 4 times, which keeps its interleaving
 * of the sub-schedulers (website-gateway, open load: 354-356 req/s with the
 * CPU at 0.96 when the reservation holds at once, 358-362 and 0.98 with 4,
 * 361-363 and 0.99 without a reservation); drf and sqos hold at once (drf
 * with passes lets small requests take the room of the large one it
 * reserved: its 6:3:1 fell to 2.7:1.7:1 on the disk).
 *
 * The reservation ends when the request leaves its queue (released,
 * cancelled, expired), at a reconfigure, or when the policy's choice
 * moves on: drf reserves the head of the class with the smallest key,
 * whichever that is now; mqos and sqos keep their pointer on the reserved
 * request, so it stays what they would serve next.
 *
 * Invariant (check.c): s->resv is RS_NIL or a queued request. Once its
 * reservation holds, in_use_i does not grow on a resource where the
 * reserved request has no room and stays <= capacity_i - cost_i(resv) on
 * the others; so it goes, in the burst of releases in which it first fits,
 * once the requests that held its resources have ended, however many
 * other requests arrive.
 */
#include "internal.h"

/* Every managed resource has room for request r beside request h. */
bool rs_resv_fits_beside(const struct rs_sched *s, uint32_t h, uint32_t r)
{
	unsigned i;

	for (i = 0; i < s->cfg.nres; i++) {
		uint64_t c = rs_res_cost(s, r, i);

		if (c && rs_res_managed(s, i) &&
		    s->res_used[i] + rs_res_cost(s, h, i) + c >
		    s->cfg.res_capacity[i])
			return false;
	}
	return true;
}

/* Request r, the one the policy would serve next, may go now (the policy
 * then releases it); if it may not and nothing is reserved, it is
 * reserved. */
bool rs_resv_admit(struct rs_sched *s, uint32_t r)
{
	bool ok;

	if (s->resv != RS_NIL && s->resv != r) {
		ok = s->resv_passed >= s->pol->resv_passes ?
		     rs_resv_fits_beside(s, s->resv, r) : rs_res_fits(s, r);
		s->resv_passed += ok;
		return ok;
	}
	if (rs_res_fits(s, r))
		return true;
	if (s->resv == RS_NIL) {
		s->resv = r;
		s->resv_passed = 0;
	}
	return false;
}

/* Nothing waiting can go beside the reserved request: its reservation
 * holds, and on some resource it has no room every waiting request needs
 * some of (used_i + cost_i(resv) >= capacity_i > 0, bit i of
 * res_free_for clear). Saves drf's look-ahead when it would find nothing. */
bool rs_resv_blocks_all(const struct rs_sched *s)
{
	unsigned i;

	if (s->resv == RS_NIL || s->resv_passed < s->pol->resv_passes)
		return false;
	for (i = 0; i < s->cfg.nres; i++)
		if (!(s->res_free_for & (1u << i)) && rs_res_managed(s, i) &&
		    s->cfg.res_capacity[i] &&
		    s->res_used[i] + rs_res_cost(s, s->resv, i) >=
		    s->cfg.res_capacity[i])
			return true;
	return false;
}
