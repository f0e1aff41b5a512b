/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtc.c - RQS release-time controller (RTC, thesis Fig. 3) and the timing
 * half of the response recorder (RR, Fig. 5/8).
 *
 * Bandwidth, not a window, limits the releases. Every released or
 * scheduled request holds its estimated rate req.BW (bytes/s) out of the
 * link's C * U+; H_FT orders them by estimated finishing time req.FT, and
 * H_RELEASE orders scheduled requests by their planned release time.
 *
 * RTC invocation at time now (paper: at T_minFT - T_lookahead, and when a
 * request arrives at an idle scheduler; here also after any event, which
 * only evaluates the same admission test earlier):
 *   1. while HEAD(H_FT).FT - T_lookahead <= now: T_minFT = HEAD(H_FT).FT,
 *      pop every request with FT == T_minFT, BW += req.BW   (first loop)
 *   2. while HEAD(Q_RPC).BW <= BW: req = DEQUEUE(Q_RPC); BW -= req.BW;
 *      req.release = T_minFT - req.D (never before now); INSERT(H_RELEASE),
 *      INSERT(H_FT) with FT = release + D + SIZE/BW       (second loop)
 *   3. release every request of H_RELEASE whose time has come.
 * Q_RPC is the selection policy (msf, rfq or drr); its head, once taken
 * from the policy, is "held" until the bandwidth is there.
 * RR: at the first byte FT = now + SIZE/BW with the real size when the
 * Content-Length is known; H_FT is fixed. A response that ends before it
 * was popped gives its BW back at once.
 * T_lookahead = decaying maximum of measured Delay_resp (estimator.c);
 * req.D and req.BW come from the host's history, else the global averages,
 * else D = 0 and BW = C * U+ (one response may fill the link: W+_0 = 1).
 *
 * Deviations, all documented in doc/lib.md: "<=" instead of "<" in the
 * second loop (a request estimated at the full link rate could never be
 * admitted otherwise); BW is reset to C * U+ whenever no request holds
 * bandwidth (removes floating point drift, keeps the loop live).
 */
#include <stdlib.h>

#include "heap.h"

static bool ft_less(const struct rs_sched *s, uint32_t a, uint32_t b)
{
	if (s->rq[a].ft != s->rq[b].ft)
		return s->rq[a].ft < s->rq[b].ft;
	return a < b;
}

static void ft_setpos(struct rs_sched *s, uint32_t r, uint32_t pos)
{
	s->rq[r].hpos_ft = pos;
}

static bool rel_less(const struct rs_sched *s, uint32_t a, uint32_t b)
{
	if (s->req[a].t_rel != s->req[b].t_rel)
		return s->req[a].t_rel < s->req[b].t_rel;
	return a < b;
}

static void rel_setpos(struct rs_sched *s, uint32_t r, uint32_t pos)
{
	s->rq[r].hpos_rel = pos;
}

static const struct rs_heap_ops rs_ft_ops = { ft_less, ft_setpos };
static const struct rs_heap_ops rs_rel_ops = { rel_less, rel_setpos };


/* Memory for one more request: the rtc array follows the request slab
 * (cap = req_cap), the heaps hold every request slot. */
static int rtc_reserve(struct rs_sched *s)
{
	uint32_t cap = s->req_cap ? s->req_cap : 1;

	if (!s->rq || cap > s->rq_cap) {
		struct rs_rtcq *p = realloc(s->rq, (size_t)cap * sizeof(*p));

		if (!p)
			return RS_ENOMEM;
		s->rq = p;
		s->rq_cap = cap;
	}
	if (rs_heap_reserve(&s->h_ft, s->nreq + 1) ||
	    rs_heap_reserve(&s->h_rel, s->nreq + 1))
		return RS_ENOMEM;
	return 0;
}

/* Request r becomes rtc's (taken from the policy, or adopted). */
static void slot_init(struct rs_sched *s, uint32_t r)
{
	s->rq[r].hpos_ft = s->rq[r].hpos_rel = RS_NIL;
	s->rq[r].bw = 0;
	s->rq[r].ft = s->rq[r].delay = 0;
}

void rs_rtc_init(struct rs_sched *s)
{
	s->held = RS_NIL;
	s->bw_avail = rs_full_rate(s);
	s->bw_holders = 0;
	s->bw_time = 0;
}

/* rs_reconfigure(): nothing is held or scheduled any more (the waiting
 * requests are queued again) and no request holds bandwidth; rtc adopts
 * the released ones afterwards. */
void rs_rtc_reset(struct rs_sched *s, rs_time_ns now)
{
	s->held = RS_NIL;
	s->h_ft.n = s->h_rel.n = 0;
	s->bw_holders = 0;
	s->bw_time = now;
	s->bw_avail = rs_full_rate(s);
}

static rs_time_ns lookahead(const struct rs_sched *s)
{
	return (rs_time_ns)s->est.delay_peak;
}

static rs_time_ns xfer_ns(uint64_t size, double bw)
{
	double ns = (double)size / bw * (double)RS_NSEC_PER_SEC;

	return ns > 1e18 ? (rs_time_ns)1e18 : (rs_time_ns)ns;
}

/* Estimates of a request taken from the policy: BW and D. */
static void estimate(struct rs_sched *s, uint32_t r)
{
	double rate, delay, full = rs_full_rate(s);
	struct rs_rtcq *x = &s->rq[r];

	rs_est_path(&s->est, s->req[r].host_key, &rate, &delay);
	x->bw = rate > 0 && rate < full ? rate : full;
	x->delay = delay > 0 ? (rs_time_ns)delay : 0;
}

static void give_back(struct rs_sched *s, uint32_t r)
{
	struct rs_req *q = &s->req[r];
	struct rs_rtcq *x = &s->rq[r];

	if (!(q->flags & RS_RF_HOLDS_BW))
		return;
	q->flags &= (uint8_t)~RS_RF_HOLDS_BW;
	if (x->hpos_ft != RS_NIL)
		rs_heap_remove(s, &s->h_ft, &rs_ft_ops, x->hpos_ft);
	s->bw_avail += x->bw;
	if (--s->bw_holders == 0)
		s->bw_avail = rs_full_rate(s);
}

/* First loop: bandwidth of the responses finishing first comes back. */
static void pop_finished(struct rs_sched *s, rs_time_ns now)
{
	rs_time_ns la = lookahead(s);

	while (s->h_ft.n) {
		uint32_t r = rs_heap_top(&s->h_ft);
		rs_time_ns tmin = s->rq[r].ft;

		if (tmin > now && tmin - now > la)
			break;
		do {
			struct rs_req *q = &s->req[r];

			rs_heap_remove(s, &s->h_ft, &rs_ft_ops, 0);
			q->flags &= (uint8_t)~RS_RF_HOLDS_BW;
			s->bw_avail += s->rq[r].bw;
			if (--s->bw_holders == 0)
				s->bw_avail = rs_full_rate(s);
			r = rs_heap_top(&s->h_ft);
		} while (r != RS_NIL && s->rq[r].ft == tmin);
		if (tmin > s->bw_time)
			s->bw_time = tmin;
	}
}

/* Second loop: admit the policy's next requests while bandwidth lasts.
 * Returns how many were admitted. */
static unsigned admit(struct rs_sched *s, rs_time_ns now)
{
	unsigned n = 0;

	for (;; n++) {
		uint32_t r = s->held;
		struct rs_req *q;
		struct rs_rtcq *x;
		rs_time_ns at = s->bw_time > now ? s->bw_time : now;

		if (r == RS_NIL) {
			r = rs_select_next(s);
			if (r == RS_NIL)
				return n;
			slot_init(s, r);
			q = &s->req[r];
			q->state = RS_ST_HELD;
			s->cls[q->cls].pending++;
			estimate(s, r);
			s->held = r;
		}
		q = &s->req[r];
		x = &s->rq[r];
		/* the link counter may have lowered C * U+ since the
		 * estimate: one request may still take all of it */
		if (x->bw > rs_full_rate(s))
			x->bw = rs_full_rate(s);
		if (x->bw > s->bw_avail)
			return n;
		s->held = RS_NIL;
		s->bw_avail -= x->bw;
		s->bw_holders++;
		q->flags |= RS_RF_HOLDS_BW;
		q->state = RS_ST_SCHEDULED;
		q->t_rel = at > now + x->delay ? at - x->delay : now;
		x->ft = q->t_rel + x->delay + xfer_ns(q->est_size, x->bw);
		rs_heap_push(s, &s->h_rel, &rs_rel_ops, r);
		rs_heap_push(s, &s->h_ft, &rs_ft_ops, r);
	}
}

static void release_due(struct rs_sched *s, rs_time_ns now)
{
	while (s->h_rel.n) {
		uint32_t r = rs_heap_top(&s->h_rel);

		if (s->req[r].t_rel > now)
			return;
		rs_heap_remove(s, &s->h_rel, &rs_rel_ops, 0);
		s->cls[s->req[r].cls].pending--;
		rs_release(s, r, now);
	}
}

static void rtc_release(struct rs_sched *s, rs_time_ns now)
{
	if (s->bw_time < now)
		s->bw_time = now;
	/* A newly admitted response may itself finish within T_lookahead:
	 * RTC would be scheduled in the past and run again at once. */
	do
		pop_finished(s, now);
	while (admit(s, now));
	release_due(s, now);
}

/* Reconfiguration to rtc: an already released request takes its share of
 * the bandwidth until its estimated finishing time. */
static void rtc_adopt(struct rs_sched *s, uint32_t r, rs_time_ns now)
{
	struct rs_req *q = &s->req[r];
	struct rs_rtcq *x = &s->rq[r];
	uint64_t left = q->est_size > q->bytes ? q->est_size - q->bytes : 0;

	slot_init(s, r);
	estimate(s, r);
	x->ft = now + xfer_ns(left, x->bw);
	q->flags |= RS_RF_HOLDS_BW;
	s->bw_avail -= x->bw;
	s->bw_holders++;
	rs_heap_push(s, &s->h_ft, &rs_ft_ops, r);
}

/* RR: the first byte arrived; recompute FT with the real size if known. */
static void rtc_first_byte(struct rs_sched *s, uint32_t r, uint64_t size,
			   rs_time_ns now)
{
	struct rs_rtcq *x = &s->rq[r];

	if (x->hpos_ft == RS_NIL)
		return;		/* already popped: its bandwidth is promised */
	x->ft = now + xfer_ns(size, x->bw);
	rs_heap_fix(s, &s->h_ft, &rs_ft_ops, x->hpos_ft);
}

/* The request ends or leaves before release: free what it holds. */
void rs_rtc_forget(struct rs_sched *s, uint32_t r)
{
	if (s->rq[r].hpos_rel != RS_NIL)
		rs_heap_remove(s, &s->h_rel, &rs_rel_ops, s->rq[r].hpos_rel);
	give_back(s, r);
}

static void rtc_ended(struct rs_sched *s, uint32_t r, rs_time_ns now)
{
	(void)now;
	rs_rtc_forget(s, r);
}

static rs_time_ns rtc_deadline(const struct rs_sched *s)
{
	rs_time_ns t = UINT64_MAX, la;

	if (s->h_rel.n)
		t = s->req[rs_heap_top(&s->h_rel)].t_rel;
	if (s->h_ft.n) {
		rs_time_ns ft = s->rq[rs_heap_top(&s->h_ft)].ft;

		la = lookahead(s);
		ft = ft > la ? ft - la : 0;
		if (ft < t)
			t = ft;
	}
	return t;
}

/* The link counter or the link share changed C * U+ - exceptive by
 * delta. With no holder, BW is the full rate exactly (not a sum of deltas
 * that rounding leaves a hair below it, which would hold a request whose
 * estimate is the full rate forever). */
static void rtc_rate_changed(struct rs_sched *s, double delta)
{
	if (s->bw_holders == 0)
		s->bw_avail = rs_full_rate(s);
	else
		s->bw_avail += delta;
}

const struct rs_controller_ops rs_rtc_ops = {
	.name = "rtc",
	.window = false,
	.reads_size = true,
	.adaptive = false,
	.start = rs_window_start,	/* W+ is kept for a later switch */
	.release = rtc_release,
	.interval = rs_window_measured,
	.reserve = rtc_reserve,
	.ended = rtc_ended,
	.first_byte = rtc_first_byte,
	.adopt = rtc_adopt,
	.deadline = rtc_deadline,
	.rate_changed = rtc_rate_changed,
};
