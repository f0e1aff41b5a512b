/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * select.c - which file implements the configured policy and controller.
 *
 * The only place that maps cfg.policy and cfg.controller to code: each
 * idea exports one ops table (msf.c, rfq.c, drr.c, mqos.c, sqos.c, drf.c;
 * window.c for fixed,
 * wrc_mult.c, wrc_aimd.c, rtc.c) and rs_select_bind() points s->pol and
 * s->ctl at them. The names of the directive words are the tables' names.
 *
 * Invariant: s->pol == rs_policy_ops_of(s->cfg.policy) and
 * s->ctl == rs_controller_ops_of(s->cfg.controller) whenever a public
 * operation returns.
 */
#include <string.h>

#include "internal.h"

static const struct rs_policy_ops *const policies[] = {
	[RS_POLICY_MSF] = &rs_msf_ops,
	[RS_POLICY_RFQ] = &rs_rfq_ops,
	[RS_POLICY_DRR] = &rs_drr_ops,
	[RS_POLICY_MQOS] = &rs_mqos_ops,
	[RS_POLICY_SQOS] = &rs_sqos_ops,
	[RS_POLICY_DRF] = &rs_drf_ops,
};

static const struct rs_controller_ops *const controllers[] = {
	[RS_WIN_WRC_MULT] = &rs_wrc_mult_ops,
	[RS_WIN_WRC_AIMD] = &rs_wrc_aimd_ops,
	[RS_WIN_RTC] = &rs_rtc_ops,
	[RS_WIN_FIXED] = &rs_fixed_ops,
};

#define NPOLICIES (sizeof(policies) / sizeof(policies[0]))
#define NCONTROLLERS (sizeof(controllers) / sizeof(controllers[0]))

/* The table of policy p, or NULL for a value outside the enum. */
const struct rs_policy_ops *rs_policy_ops_of(enum rs_policy p)
{
	return (unsigned)p < NPOLICIES ? policies[p] : NULL;
}

const struct rs_controller_ops *rs_controller_ops_of(enum rs_controller c)
{
	return (unsigned)c < NCONTROLLERS ? controllers[c] : NULL;
}

/* cfg has passed rs_config_check(). */
void rs_select_bind(struct rs_sched *s)
{
	s->pol = rs_policy_ops_of(s->cfg.policy);
	s->ctl = rs_controller_ops_of(s->cfg.controller);
}

/* Dequeue the request the policy picks next, or RS_NIL if none goes;
 * under a multi-resource policy it takes its cost (resources.c). */
uint32_t rs_select_next(struct rs_sched *s)
{
	uint32_t c = s->pol->pick(s), r;

	if (c == RS_NIL)
		return RS_NIL;
	r = rs_take_from(s, c);
	if (s->pol->resources)
		rs_res_take(s, r);
	return r;
}

const char *rs_policy_name(enum rs_policy p)
{
	const struct rs_policy_ops *ops = rs_policy_ops_of(p);

	return ops ? ops->name : "?";
}

const char *rs_controller_name(enum rs_controller c)
{
	const struct rs_controller_ops *ops = rs_controller_ops_of(c);

	return ops ? ops->name : "?";
}

int rs_policy_parse(const char *str, enum rs_policy *p)
{
	unsigned i;

	for (i = 0; str && p && i < NPOLICIES; i++)
		if (strcmp(str, policies[i]->name) == 0) {
			*p = (enum rs_policy)i;
			return 0;
		}
	return RS_EINVAL;
}

int rs_controller_parse(const char *str, enum rs_controller *c)
{
	unsigned i;

	for (i = 0; str && c && i < NCONTROLLERS; i++)
		if (strcmp(str, controllers[i]->name) == 0) {
			*c = (enum rs_controller)i;
			return 0;
		}
	return RS_EINVAL;
}
