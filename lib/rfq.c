/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rfq.c - FQRS request-based fair queuing: the minimum-service-first
 * arbiter of msf.c with class-based normalization, SC_i += L / w_i (not
 * divided by the class's active users UC_i), so that classes, not users,
 * share by weight. The pacer keeps one account per class.
 *
 * FQRS (Fig. 2) restarts a class's counter whenever a request finds its
 * queue empty; rfq uses MSF-RS's rule (restart when the class becomes
 * active, reset when all are idle) so that msf and rfq differ only in the
 * normalization by UC (doc/lib.md).
 */
#include "internal.h"

const struct rs_policy_ops rs_rfq_ops = {
	.name = "rfq",
	.per_user = false,	/* SC_i += L / w_i */
	RS_SC_OPS,
};
