/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sqos.c - sQoS, the mQoS paper's single-resource baseline (§2.2, §4): DRR
 * over the costs of one server resource, cfg.sqos_resource, and only that
 * resource's availability counter gates the releases (resources.c). The
 * other resources are neither checked nor held: the paper's point is that
 * they then idle, or overload, while the scheduled one is full.
 * The round itself is drr.c's: a head without room keeps the pointer and
 * is the reserved request (reservation.c), and nothing else goes until it
 * fits.
 */
#include "internal.h"

const struct rs_policy_ops rs_sqos_ops = {
	.name = "sqos",
	RS_DRR_OPS,
	.resources = true,
};
