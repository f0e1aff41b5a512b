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
 * C is configured as TCP payload in full-size segments (1448 bytes in a
 * 1514-byte frame). A link whose frames are shorter carries less payload:
 * the pacer at U+ of the configured C then fills it above U+ (the testbed's
 * full beds, 1,151-1,243 bytes per frame under the pacer: 0.984-0.991 of
 * the wire at U+ 0.98, with a standing ISP queue). So from a counter with frames,
 * frame_scale() measures the link's payload per wire byte, P / N over its
 * busy samples (payload at least FRAME_BUSY of C; an idle link's frames are
 * mostly ACKs and say nothing about a full one), both sums decayed with
 * time constant FRAME_TAU, and scales C (rs_link_Bps()) by its ratio to
 * RS_WIRE_PAYLOAD_RATIO, within [FRAME_SCALE_MIN, 1]. Without frames (a
 * byte counter, or no counter) the scale is 1.
 *
 * link_full records that the last sample had no such room; the pacer
 * reads it too (its link_has_room(): cross traffic that fills the link
 * shows here before the exceptive rate, and so R, follows).
 *
 * Invariants: exc_total only grows and only in RS_LINK_COUNTER; exc_rate
 * is 0 in RS_LINK_PROXIED. The bytes U sees are proxied + exceptive
 * (rs_u_bytes()): per sample max(link payload, proxied), so a counter that
 * lags behind the proxy's reads never makes U smaller than the proxy's own
 * bytes. The rate left for the proxy (pacer R, rtc's C * U+) is
 * max(5 % of C, U+ * C - exceptive rate).
 */
#include <math.h>

#include "internal.h"

/* The exceptive rate or C's frame scale changes: the pacer refills at the
 * old rate up to now, rtc's free bandwidth follows the new C * U+ -
 * exceptive. */
static void set_link_rate(struct rs_sched *s, double rate, double scale,
			  rs_time_ns now)
{
	double before = rs_full_rate(s);

	rs_pacer_refill(s, now);
	s->exc_rate = rate;
	s->frame_scale = scale;
	rs_pacer_cap(s);
	if (s->ctl->rate_changed)
		s->ctl->rate_changed(s, rs_full_rate(s) - before);
}

#define EXC_TAU 1.0		/* s: the exceptive rate's time constant */
#define EXC_FALL_TAU 0.25	/* s: ... falling while the link has room */
#define LINK_ROOM 0.9		/* a sample below this part of U+ * C has room */
#define FRAME_TAU 2.0		/* s: the payload per wire byte's time constant */
#define FRAME_BUSY 0.5		/* a sample with this part of C shows the frames */
#define FRAME_SCALE_MIN 0.5	/* C is never scaled below this */

/* C's scale after a sample of `payload` in n wire bytes (frames known) over
 * dt seconds (see the top of this file). */
static double frame_scale(struct rs_sched *s, double payload, double n,
			  double dt)
{
	double keep = exp(-dt / FRAME_TAU), scale;

	if (payload < FRAME_BUSY * rs_link_Bps(s) / s->frame_scale * dt)
		return s->frame_scale;
	s->frame_pay = s->frame_pay * keep + payload;
	s->frame_wire = s->frame_wire * keep + n;
	scale = s->frame_pay / s->frame_wire / RS_WIRE_PAYLOAD_RATIO;
	return fmax(FRAME_SCALE_MIN, fmin(1, scale));
}

/* One second of the link, in payload bytes: how far the high-water mark
 * may stay above the cumulative difference. */
static double link_slack(const struct rs_sched *s)
{
	return rs_link_Bps(s);
}

/* The exceptive bytes of a sample whose link - proxied is diff. */
static double exceptive(struct rs_sched *s, double diff)
{
	double exc = 0;

	s->link_diff += diff;
	if (s->link_diff > s->link_high) {
		exc = s->link_diff - s->link_high;
		s->link_high = s->link_diff;
	} else if (s->link_diff < s->link_high - link_slack(s)) {
		s->link_high = s->link_diff + link_slack(s);
	}
	return exc;
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
	s->link_diff = s->link_high = 0;
	s->link_full = false;
	s->frame_pay = s->frame_wire = 0;
	set_link_rate(s, src == RS_LINK_PROXIED ? 0 : s->exc_rate, 1, now);
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
	double payload, proxied, exc, rate, scale;
	int err = rs_entry_err(s);

	if (err)
		return err;
	if (s->link_src != RS_LINK_COUNTER)
		return RS_ESTATE;
	rs_advance(s, now);
	payload = link_payload(n, frames) * s->link_share;
	proxied = (double)(s->bytes - s->link_mark);
	exc = exceptive(s, payload - proxied);
	s->link_total += payload;
	s->exc_total += exc;
	rate = s->exc_rate;
	scale = s->frame_scale;
	if (now > s->link_t) {
		double dt = (double)(now - s->link_t) / (double)RS_NSEC_PER_SEC;
		double x = exc / dt;

		s->link_full = payload / dt >=
			       LINK_ROOM * s->cfg.target_util * rs_link_Bps(s);
		rate += (1 - exp(-dt / exc_tau(s, x))) * (x - rate);
		if (frames && n)
			scale = frame_scale(s, payload, (double)n * s->link_share, dt);
	}
	set_link_rate(s, rate, scale, now);
	s->link_t = now;
	s->link_mark = s->bytes;
	rs_check(s, "rs_on_link_bytes");
	return 0;
}
