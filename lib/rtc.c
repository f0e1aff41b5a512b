/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rtc.c - RQS release-time controller (placeholder until step 3: the
 * controller is rejected by rs_config_check()).
 */
#include "internal.h"

static bool ft_less(const struct rs_sched *s, uint32_t a, uint32_t b)
{
	return s->req[a].ft < s->req[b].ft;
}

static void ft_setpos(struct rs_sched *s, uint32_t r, uint32_t pos)
{
	s->req[r].hpos_ft = pos;
}

static bool rel_less(const struct rs_sched *s, uint32_t a, uint32_t b)
{
	return s->req[a].t_rel < s->req[b].t_rel;
}

static void rel_setpos(struct rs_sched *s, uint32_t r, uint32_t pos)
{
	s->req[r].hpos_rel = pos;
}

const struct rs_heap_ops rs_ft_ops = { ft_less, ft_setpos };
const struct rs_heap_ops rs_rel_ops = { rel_less, rel_setpos };

void rs_rtc_init(struct rs_sched *s)
{
	s->held = RS_NIL;
	s->bw_avail = 0;
}

void rs_rtc_run(struct rs_sched *s, rs_time_ns now)
{
	(void)s;
	(void)now;
}

void rs_rtc_first_byte(struct rs_sched *s, uint32_t r, uint64_t size,
		       rs_time_ns now)
{
	(void)s;
	(void)r;
	(void)size;
	(void)now;
}

void rs_rtc_forget(struct rs_sched *s, uint32_t r)
{
	(void)s;
	(void)r;
}

rs_time_ns rs_rtc_deadline(const struct rs_sched *s)
{
	(void)s;
	return UINT64_MAX;
}
