/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * link.c - the link source: U and the pacer's rate from the proxy's own
 * bytes (RS_LINK_PROXIED) or from a counter of the whole downlink
 * (RS_LINK_COUNTER, fed by rs_on_link_bytes()).
 *
 * A sample spans [previous rs_on_link_bytes() or source switch, now]. Its
 * link bytes are the TCP payload of its frames, n - RS_FRAME_OVERHEAD *
 * frames (at least 0), or n * RS_WIRE_PAYLOAD_RATIO from a counter without
 * frames (too many when segments are short: on the testbed's beds, 1,127 to
 * 1,272 bytes per frame, the ratio overcounted the payload by 1.1 to 3.1 %,
 * the frames by 0.0 to 1.9 %; doc/testbed.md). Its proxied bytes are
 * everything the proxy counted in the same span (rs_on_bytes,
 * rs_on_foreign_bytes, rs_flow_read: s->bytes).
 *
 * Exceptive bytes (the traffic that bypasses the proxy) are the new highs of
 * D = cumulative (link payload - proxied): a byte crosses the interface
 * before the proxy reads it, and with the byte layer it may wait in a
 * socket buffer for a while, so per-sample differences swing both ways
 * with no cross traffic at all, and summing only their positive parts
 * would invent exceptive traffic (measured: 0.21 Mbit/s of 1.74 on a link
 * with none). D only wobbles inside the band of bytes in socket buffers;
 * cross traffic makes it climb. The high-water mark H follows D down with
 * a slack of one second of C (LINK_SLACK), so a counter that undercounts
 * for a while cannot hide later cross traffic for longer than that:
 *   D += link - proxied;  D > H: exceptive = D - H, H = D;
 *   D < H - slack: H = D + slack.
 * The exceptive rate is an EWMA of the samples' exceptive bytes/s x:
 *   rate += a * (x - rate),  a = 1 - exp(-dt / tau),
 * tau = EXC_TAU, or EXC_FALL_TAU when x < rate in a sample that shows room
 * on the link (its payload below LINK_ROOM * U+ * C): the link then carried
 * less than the proxy was left, so either the traffic that bypassed the
 * proxy has stopped or the estimate was too high; either way the pacer's
 * rate was too low (a 1-s decay after a 60 % CBR stops leaves the pacer
 * about 0.6 s of the link behind, 6 % of a 10-s pause). While the link is full the rate
 * falls slowly, since x is lumpy there: a sample in which the proxy read a
 * backlog lifts no high and reads 0.
 *
 * link_full records that the last sample had no such room; the pacer
 * reads it too (its link_has_room(): cross traffic that fills the link
 * shows here before the exceptive rate, and so R, follows).
 *
 * SMP workers (share.c): a worker schedules its share f of the link and
 * takes f of the counter's payload. Alone it can compare that only with
 * its own reads, and then every byte it reads below its share counts as
 * cross traffic: the workers' pacers left that much of the link idle
 * (mid-link, 4 workers: 0.86 Mbit/s "exceptive" of 10 Mbit/s with 0.11
 * crossing the link, utilization 0.942). With a count of every worker's
 * reads that they share (rs_share_proxied(): each adds its reads at its
 * samples), a worker computes the whole proxy's exceptive bytes, D and H
 * of link payload - every worker's reads (`proxy`, slack one second of
 * the whole C: the others' reads are up to one of their samples late),
 * and takes f of them; its first sample after attaching only sets D and
 * H. U keeps coming from the worker's own difference (`own`: f payload -
 * its reads, u_exc_total), so every worker's controller sees the link's
 * utilization whatever part of its share it reads. Without the shared
 * count (one worker: f = 1, where both are the same) `own` gives both.
 *
 * Invariants: exc_total and u_exc_total only grow and only in
 * RS_LINK_COUNTER, and are equal without a shared count; exc_rate is 0 in
 * RS_LINK_PROXIED. The bytes U sees are proxied + u_exc_total
 * (rs_u_bytes()): per sample max(f link payload, proxied), so a counter
 * that lags behind the proxy's reads never makes U smaller than the
 * proxy's own bytes. The rate left for the proxy (pacer R, rtc's C * U+)
 * is max(5 % of C, U+ * C - exceptive rate).
 */
#include <math.h>

#include "internal.h"

/* The exceptive rate changes: the pacer refills at the old rate up to now,
 * rtc's free bandwidth follows the new C * U+ - exceptive. */
static void set_exc_rate(struct rs_sched *s, double rate, rs_time_ns now)
{
	double before = rs_full_rate(s);

	rs_pacer_refill(s, now);
	s->exc_rate = rate;
	rs_pacer_cap(s);
	if (s->ctl->rate_changed)
		s->ctl->rate_changed(s, rs_full_rate(s) - before);
}

#define EXC_TAU 1.0		/* s: the exceptive rate's time constant */
#define EXC_FALL_TAU 0.25	/* s: ... falling while the link has room */
#define LINK_ROOM 0.9		/* a sample below this part of U+ * C has room */

/* The exceptive bytes of a sample whose link - proxied is diff; slack:
 * one second of the link the difference is of, in payload bytes, how far
 * the high-water mark may stay above it. */
static double exceptive(struct rs_link_excess *x, double diff, double slack)
{
	double exc = 0;

	x->diff += diff;
	if (x->diff > x->high) {
		exc = x->diff - x->high;
		x->high = x->diff;
	} else if (x->diff < x->high - slack) {
		x->high = x->diff + slack;
	}
	return exc;
}

/* The proxy's exceptive bytes of a sample of the whole link's payload, of
 * which this worker read own bytes (the shared count: see the top). */
static double proxy_exceptive(struct rs_sched *s, double payload,
			      uint64_t own)
{
	uint64_t all = __atomic_add_fetch(s->proxied, own, __ATOMIC_RELAXED);
	double diff = payload - (double)(all - s->proxied_seen);

	s->proxied_seen = all;
	if (!s->proxied_primed) {
		s->proxied_primed = true;
		s->proxy.diff = s->proxy.high = diff;
		return 0;
	}
	return exceptive(&s->proxy, diff, (double)s->cfg.link_bps / 8.0);
}

/* The time constant of the exceptive rate's step toward x (bytes/s) after
 * a sample (see the top of this file). */
static double exc_tau(const struct rs_sched *s, double x)
{
	return x < s->exc_rate && !s->link_full ? EXC_FALL_TAU : EXC_TAU;
}

int rs_set_link_source(struct rs_sched *s, enum rs_link_source src,
		       rs_time_ns now)
{
	int err = rs_entry_err(s);

	if (err)
		return err;
	if (src != RS_LINK_PROXIED && src != RS_LINK_COUNTER)
		return RS_EINVAL;
	rs_advance(s, now);
	s->link_src = src;
	s->link_t = now;
	s->link_mark = s->bytes;
	s->own.diff = s->own.high = 0;
	s->proxied_primed = false;
	s->link_full = false;
	if (src == RS_LINK_PROXIED)
		set_exc_rate(s, 0, now);
	rs_check(s, "rs_set_link_source");
	return 0;
}

/* The TCP payload of n bytes in `frames` frames (frames 0: unknown). */
static double link_payload(uint64_t n, uint64_t frames)
{
	double overhead = (double)frames * RS_FRAME_OVERHEAD;

	if (!frames)
		return (double)n * RS_WIRE_PAYLOAD_RATIO;
	return (double)n > overhead ? (double)n - overhead : 0;
}

int rs_on_link_bytes(struct rs_sched *s, uint64_t n, uint64_t frames,
		     rs_time_ns now)
{
	double whole, payload, exc, u_exc, rate;
	uint64_t proxied;
	int err = rs_entry_err(s);

	if (err)
		return err;
	if (s->link_src != RS_LINK_COUNTER)
		return RS_ESTATE;
	rs_advance(s, now);
	whole = link_payload(n, frames);
	payload = whole * s->link_share;
	proxied = s->bytes - s->link_mark;
	u_exc = exceptive(&s->own, payload - (double)proxied, rs_link_Bps(s));
	exc = s->proxied ? proxy_exceptive(s, whole, proxied) * s->link_share :
			   u_exc;
	s->link_total += payload;
	s->exc_total += exc;
	s->u_exc_total += u_exc;
	rate = s->exc_rate;
	if (now > s->link_t) {
		double dt = (double)(now - s->link_t) / (double)RS_NSEC_PER_SEC;
		double x = exc / dt;

		s->link_full = payload / dt >=
			       LINK_ROOM * s->cfg.target_util * rs_link_Bps(s);
		rate += (1 - exp(-dt / exc_tau(s, x))) * (x - rate);
	}
	set_exc_rate(s, rate, now);
	s->link_t = now;
	s->link_mark = s->bytes;
	rs_check(s, "rs_on_link_bytes");
	return 0;
}

int rs_share_proxied(struct rs_sched *s, uint64_t *proxied, rs_time_ns now)
{
	int err = rs_entry_err(s);

	if (err)
		return err;
	if ((uintptr_t)proxied & 7)
		return RS_EINVAL;
	if (proxied == s->proxied)
		return 0;
	rs_advance(s, now);
	s->proxied = proxied;
	s->proxied_primed = false;
	s->proxied_seen = proxied ? __atomic_load_n(proxied, __ATOMIC_RELAXED) :
				    0;
	rs_check(s, "rs_share_proxied");
	return 0;
}
