/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slotage.c - the age of window slots: the window list, and the slots
 * rs_reclaim() (sched.c) takes back.
 *
 * A released request holds one of the W slots of the window until it ends
 * or, as a long transfer, leaves the window (window.c). A response whose
 * server stalls for good (headers and part of a body, then nothing, on a
 * connection nobody closes) would hold its slot for as long as the proxy
 * keeps the transaction, which may be forever: rs_reclaim() takes such
 * slots back after a caller-chosen age.
 *
 * The window list holds the released requests that are in W, in release
 * order (rs_slot_open() at every release and rs_slot_close() at every end
 * are inline in internal.h); release times only grow, so its head is the
 * oldest slot and rs_reclaim() looks at no request it does not reclaim.
 * It reuses the links of the global FIFO of waiting requests (queue.c): a
 * request leaves that FIFO when it is released, so it is never on both.
 *
 * A reclaimed request leaves the window as a long transfer does
 * (rs_window_leave(), window.c: flag RS_RF_LONG, counted in nlong, W - 1)
 * and stays RELEASED: its bytes still count for its class and the caller
 * still owes rs_on_end(), which then does not touch W again. Only the
 * slot is taken back, and the request that takes it is released at once.
 *
 * Invariants (check.c, "window-list"):
 *  - the window list holds exactly the RELEASED requests without
 *    RS_RF_LONG, so its length is W;
 *  - along the list, t_rel never decreases.
 */
#include "internal.h"

/* rs_reclaim() (sched.c, the entry point): up to n slots at least max_age
 * old leave the window, oldest first; the caller releases in their place. */
size_t rs_slots_reclaim(struct rs_sched *s, rs_time_ns now, rs_time_ns max_age,
			rs_id *ids, void **cookies, size_t n)
{
	size_t done = 0;

	while (done < n && s->whead != RS_NIL) {
		uint32_t r = s->whead;

		if (!rs_hand_out_if_old(s, r, s->req[r].t_rel, now, max_age,
					ids, cookies, done))
			break;
		rs_window_leave(s, r, now);
		s->reclaimed++;
		done++;
	}
	return done;
}
