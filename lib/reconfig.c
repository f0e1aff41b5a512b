/* SPDX-License-Identifier: BSD-2-Clause */
/* reconfig.c - rs_reconfigure() (placeholder: not implemented yet). */
#include "internal.h"

int rs_reconfigure(struct rs_sched *s, const struct rs_config *cfg,
		   const char *const *names, const double *weights, int n,
		   const char *default_name, rs_time_ns now)
{
	(void)cfg; (void)names; (void)weights; (void)n; (void)default_name;
	(void)now;
	if (!s)
		return RS_EINVAL;
	return RS_EINVAL;
}
