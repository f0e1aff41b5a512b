/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_link.c - the link source: exceptive bytes and rate, U from the
 * link counter, errors. Link 8 Mbit/s = 1,000,000 bytes/s, U+ = 0.98,
 * T = 1 s. Wire -> payload: 1,514-byte frames carry 1,448 bytes.
 */
#include <math.h>

#include "harness.h"

#define FRAMES(n) ((uint64_t)(n) * 1514)

/* A paced msf instance on the link counter since 0, with request *r1
 * queued (its bytes are the proxied bytes of the samples). */
static struct rs_sched *counter_sched(struct rec *rec, rs_id *r1)
{
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s;

	cfg.pacing = true;
	s = new_one_class(&cfg, rec);
	*r1 = enq(s, 0, 1, 0, 0);
	ck_assert_int_eq(rs_set_link_source(s, RS_LINK_COUNTER, 0), 0);
	return s;
}

/* Sample 1: [0, 0.9 s], proxied 100,000, link 200 frames = 289,600 payload:
 * exceptive 189,600, rate (1 - e^-0.9) * 189,600 / 0.9. Sample 2:
 * [0.9, 1.5 s], proxied 400,000 > link 144,800: exceptive 0; the link
 * carried 241,333 B/s, below 0.9 * U+ * C = 882,000 (room on the link), so
 * the rate decays with the 0.25-s time constant: by e^-2.4. */
START_TEST(exceptive_samples)
{
	struct rec rec = { 0 };
	struct rs_sched *s;
	struct rs_stats st;
	double rate;
	rs_id r1;

	s = counter_sched(&rec, &r1);
	ck_assert_int_eq(rs_on_bytes(s, r1, 100000, SEC / 2), 0);
	ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(200), 200, 9 * SEC / 10), 0);
	rate = (1 - exp(-0.9)) * 189600 / 0.9;
	ck_assert_double_eq_tol(gstats(s).pace_bps, (980000 - rate) * 8, 1e-3);
	rs_on_timer(s, SEC);
	st = gstats(s);
	ck_assert_int_eq(st.link_source, RS_LINK_COUNTER);
	ck_assert_uint_eq(st.link_bytes, 289600);
	ck_assert_uint_eq(st.proxied_bytes, 100000);
	ck_assert_uint_eq(st.exceptive_bytes, 189600);
	ck_assert_double_eq_tol(st.interval_s, 1, 1e-12);
	ck_assert_double_eq_tol(st.U, 0.2896, 1e-9);	/* link bytes / C */
	ck_assert_int_eq(rs_on_bytes(s, r1, 400000, 12 * SEC / 10), 0);
	ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(100), 100, 15 * SEC / 10), 0);
	rate *= exp(-0.6 / 0.25);
	ck_assert_double_eq_tol(gstats(s).pace_bps, (980000 - rate) * 8, 1e-3);
	rs_on_timer(s, 2 * SEC);
	st = gstats(s);
	ck_assert_uint_eq(st.link_bytes, 144800);
	ck_assert_uint_eq(st.proxied_bytes, 400000);
	ck_assert_uint_eq(st.exceptive_bytes, 0);
	ck_assert_double_eq_tol(st.U, 0.4, 1e-9);	/* never below proxied */
	/* back to the proxy's own bytes: the exceptive rate is forgotten */
	ck_assert_int_eq(rs_set_link_source(s, RS_LINK_PROXIED, 2 * SEC), 0);
	ck_assert_double_eq_tol(gstats(s).pace_bps, 980000 * 8, 1e-6);
	ck_assert_int_eq(rs_on_bytes(s, r1, 300000, 25 * SEC / 10), 0);
	rs_on_timer(s, 3 * SEC);
	st = gstats(s);
	ck_assert_int_eq(st.link_source, RS_LINK_PROXIED);
	ck_assert_uint_eq(st.link_bytes, 300000);
	ck_assert_uint_eq(st.proxied_bytes, 300000);
	ck_assert_uint_eq(st.exceptive_bytes, 0);
	rs_free(s);
}
END_TEST

/* The exceptive rate rises and falls with a 1-s time constant while the link
 * is full, and falls with 0.25 s in a sample that shows room on the link
 * (payload below 0.9 * U+ * C = 882,000 B/s). Sample 1 [0, 1 s]: 690 frames
 * = 999,120 payload, 300,000 proxied: x = 699,120 B/s. Sample 2 [1, 1.5 s]:
 * 345 frames = 499,560 all proxied (999,120 B/s, full): x = 0, e^-0.5.
 * Sample 3 [1.5, 2 s]: 200 frames = 289,600 all proxied (579,200 B/s, room):
 * x = 0, e^-2. Sample 4 [2, 2.5 s]: 200 frames, none proxied, room but
 * rising: x = 579,200 B/s, 1 - e^-0.5 of the way. */
START_TEST(exceptive_falls_fast_with_room)
{
	struct rec rec = { 0 };
	struct rs_sched *s;
	double rate;
	rs_id r1;

	s = counter_sched(&rec, &r1);
	ck_assert_int_eq(rs_on_bytes(s, r1, 300000, SEC / 2), 0);
	ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(690), 690, SEC), 0);
	rate = (1 - exp(-1.0)) * 699120;
	ck_assert_double_eq_tol(gstats(s).pace_bps, (980000 - rate) * 8, 1e-3);
	ck_assert_int_eq(rs_on_bytes(s, r1, 499560, 3 * SEC / 2 - 1), 0);
	ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(345), 345, 3 * SEC / 2), 0);
	rate *= exp(-0.5);
	ck_assert_double_eq_tol(gstats(s).pace_bps, (980000 - rate) * 8, 1e-3);
	ck_assert_int_eq(rs_on_bytes(s, r1, 289600, 2 * SEC - 1), 0);
	ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(200), 200, 2 * SEC), 0);
	rate *= exp(-2.0);
	ck_assert_double_eq_tol(gstats(s).pace_bps, (980000 - rate) * 8, 1e-3);
	ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(200), 200, 5 * SEC / 2), 0);
	rate += (1 - exp(-0.5)) * (579200 - rate);
	ck_assert_double_eq_tol(gstats(s).pace_bps, (980000 - rate) * 8, 1e-3);
	rs_free(s);
}
END_TEST

/* Bytes cross the interface before the proxy reads them: samples that swing
 * +44,800 / -44,800 with no cross traffic count 44,800 exceptive bytes once
 * (the first high), not every other sample. Then 300 frames with 100,000
 * proxied: D climbs to 334,400, 289,600 exceptive. A sample with 1,500,000
 * proxied and no link bytes drops D to -1,165,600: H follows it down to
 * D + slack (1 s of C = 1,000,000) = -165,600, so of the next samples'
 * 289,600 + 1,013,600 link bytes (none proxied) D = 137,600 is 303,200
 * above H. */
START_TEST(lag_is_not_exceptive)
{
	struct rec rec = { 0 };
	struct rs_sched *s;
	rs_id r1;
	int i;

	s = counter_sched(&rec, &r1);
	for (i = 1; i <= 4; i++) {
		uint64_t proxied = i % 2 ? 100000 : 189600;

		ck_assert_int_eq(rs_on_bytes(s, r1, proxied, i * SEC / 4 - 1), 0);
		ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(100), 100, i * SEC / 4), 0);
	}
	rs_on_timer(s, SEC);
	ck_assert_uint_eq(gstats(s).exceptive_bytes, 44800);
	ck_assert_int_eq(rs_on_bytes(s, r1, 100000, 5 * SEC / 4 - 1), 0);
	ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(300), 300, 5 * SEC / 4), 0);
	ck_assert_int_eq(rs_on_bytes(s, r1, 1500000, 6 * SEC / 4 - 1), 0);
	ck_assert_int_eq(rs_on_link_bytes(s, 0, 0, 6 * SEC / 4), 0);
	ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(200), 200, 7 * SEC / 4), 0);
	ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(700), 700, 8 * SEC / 4 - 1), 0);
	rs_on_timer(s, 2 * SEC);
	ck_assert_uint_eq(gstats(s).exceptive_bytes, 289600 + 303200);
	rs_free(s);
}
END_TEST

/* The rate left for the proxy never falls below 5 % of C. */
START_TEST(rate_floor)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_RFQ, RS_WIN_FIXED);
	struct rs_sched *s;

	cfg.pacing = true;
	s = new_one_class(&cfg, &rec);
	ck_assert_int_eq(rs_set_link_source(s, RS_LINK_COUNTER, 0), 0);
	ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(100000), 100000, SEC / 10), 0);
	ck_assert_double_eq_tol(gstats(s).pace_bps, 0.05 * 8000000, 1e-6);
	rs_free(s);
}
END_TEST

/* Frames carry their payload: 100 full frames (151,400 bytes, 144,800 of
 * payload) and 50 ACKs (66 bytes each, none) are 144,800 link bytes; the
 * same 154,700 bytes from a counter without frames are 154,700 * 1448 /
 * 1514 = 147,956.2 (the ACKs counted as payload); fewer bytes than the
 * frames' headers count 0. Proxied 144,800 in each sample: exceptive 0,
 * 3,156 (the ratio's excess), 0. */
START_TEST(frames_carry_their_payload)
{
	struct rec rec = { 0 };
	struct rs_sched *s;
	struct rs_stats st;
	rs_id r1;

	s = counter_sched(&rec, &r1);
	ck_assert_int_eq(rs_on_bytes(s, r1, 144800, SEC / 2), 0);
	ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(100) + 50 * 66, 150, 9 * SEC / 10), 0);
	rs_on_timer(s, SEC);
	st = gstats(s);
	ck_assert_uint_eq(st.link_bytes, 144800);
	ck_assert_uint_eq(st.exceptive_bytes, 0);
	ck_assert_int_eq(rs_on_bytes(s, r1, 144800, 3 * SEC / 2), 0);
	ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(100) + 50 * 66, 0, 19 * SEC / 10), 0);
	rs_on_timer(s, 2 * SEC);
	st = gstats(s);
	ck_assert_uint_eq(st.link_bytes, 147956);
	ck_assert_uint_eq(st.exceptive_bytes, 3156);
	ck_assert_int_eq(rs_on_link_bytes(s, 10 * 66 - 1, 10, 5 * SEC / 2), 0);
	rs_on_timer(s, 3 * SEC);
	st = gstats(s);
	ck_assert_uint_eq(st.link_bytes, 0);
	ck_assert_uint_eq(st.exceptive_bytes, 0);
	rs_free(s);
}
END_TEST

/* Short frames carry less of C: C is configured in full-size segments
 * (1,448 of 1,514 bytes). Sample 1 [0, 1 s]: 800 frames of 1,166 bytes
 * (1,100 of payload; 880,000 B/s, busy: at least half of C), all proxied:
 * payload per wire byte 880,000 / 932,800, C scaled by that / (1448/1514)
 * = 0.986396, so R = 980,000 * 0.986396. Sample 2 [1, 1.5 s]: 200 full
 * frames (579,200 B/s, busy), the sums decayed by e^-0.25 first. Sample 3
 * [1.5, 2 s]: 100 full frames (289,600 B/s, not busy): no change; U of
 * [1, 2 s] is 434,400 bytes over the scaled C. Back to the proxy's own
 * bytes: the scale is 1. */
START_TEST(short_frames_scale_c)
{
	struct rec rec = { 0 };
	struct rs_sched *s;
	double k = exp(-0.25), ratio = 1448.0 / 1514, scale;
	rs_id r1;

	s = counter_sched(&rec, &r1);
	ck_assert_int_eq(rs_on_bytes(s, r1, 880000, SEC - 1), 0);
	ck_assert_int_eq(rs_on_link_bytes(s, 800 * 1166, 800, SEC), 0);
	scale = 880000.0 / 932800 / ratio;
	ck_assert_double_eq_tol(scale, 0.986396, 1e-6);
	ck_assert_double_eq_tol(gstats(s).pace_bps, 980000 * scale * 8, 1e-3);
	ck_assert_double_eq_tol(gstats(s).payload_per_wire, 880000.0 / 932800, 1e-12);
	ck_assert_int_eq(rs_on_bytes(s, r1, 289600, 3 * SEC / 2 - 1), 0);
	ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(200), 200, 3 * SEC / 2), 0);
	scale = (880000 * k + 289600) / (932800 * k + 302800) / ratio;
	ck_assert_double_eq_tol(gstats(s).pace_bps, 980000 * scale * 8, 1e-3);
	ck_assert_int_eq(rs_on_bytes(s, r1, 144800, 2 * SEC - 1), 0);
	ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(100), 100, 2 * SEC), 0);
	ck_assert_double_eq_tol(gstats(s).pace_bps, 980000 * scale * 8, 1e-3);
	/* the interval [1, 2 s] ticked before sample 3, at sample 2's scale */
	ck_assert_double_eq_tol(gstats(s).U, 0.4344 / scale, 1e-9);
	ck_assert_int_eq(rs_set_link_source(s, RS_LINK_PROXIED, 2 * SEC), 0);
	ck_assert_double_eq_tol(gstats(s).pace_bps, 980000 * 8, 1e-6);
	ck_assert_double_eq_tol(gstats(s).payload_per_wire, ratio, 1e-12);
	rs_free(s);
}
END_TEST

/* Errors change nothing. */
START_TEST(link_errors)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s = new_one_class(&cfg, &rec);
	struct rs_stats a, b;

	ck_assert_int_eq(rs_set_link_source(NULL, RS_LINK_COUNTER, 0), RS_EINVAL);
	ck_assert_int_eq(rs_on_link_bytes(NULL, 1, 1, 0), RS_EINVAL);
	ck_assert_int_eq(rs_set_link_source(s, (enum rs_link_source)7, 0),
			 RS_EINVAL);
	rs_get_stats(s, &a);
	ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(10), 10, SEC / 2), RS_ESTATE);
	rs_get_stats(s, &b);
	ck_assert_mem_eq(&a, &b, sizeof(a));
	ck_assert_int_eq(a.link_source, RS_LINK_PROXIED);
	rs_free(s);
}
END_TEST

/* wrc-mult with the link full of traffic that bypasses the proxy: the
 * proxy's own U is 0.1 (W+ would double), the link's 1.96 halves it
 * (not below 1). */
START_TEST(counter_drives_wrc_mult)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
	struct rs_sched *s = new_one_class(&cfg, &rec);
	rs_id r1;

	r1 = enq_n(s, 2, 1, 0);		/* one waits: the window is the limit */
	ck_assert_int_eq(rs_set_link_source(s, RS_LINK_COUNTER, 0), 0);
	rs_on_bytes(s, r1, 100000, SEC / 2);
	/* 1,354 frames = 1,960,592 payload bytes */
	ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(1354), 1354, 9 * SEC / 10), 0);
	rs_on_timer(s, SEC);
	ck_assert_double_eq_tol(gstats(s).U, 1.960592, 1e-9);
	ck_assert_double_eq_tol(gstats(s).W_max, 1, 1e-12);
	rs_free(s);
}
END_TEST

/* wrc-aimd, F = 1: U over one completion uses the link bytes too:
 * 1.960592 > U+ -> W+ - 1 (stays 1); the proxy's 0.1 would double it. */
START_TEST(counter_drives_wrc_aimd)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_AIMD);
	struct rs_sched *s;
	rs_id r1;

	cfg.F = 1;
	s = new_one_class(&cfg, &rec);
	r1 = enq_n(s, 2, 1, 0);
	ck_assert_int_eq(rs_set_link_source(s, RS_LINK_COUNTER, 0), 0);
	rs_on_bytes(s, r1, 100000, SEC / 2);
	/* a counter of bytes alone: full frames by the ratio */
	ck_assert_int_eq(rs_on_link_bytes(s, FRAMES(1354), 0, 9 * SEC / 10), 0);
	rs_on_end(s, r1, false, SEC - 1);
	ck_assert_double_eq_tol(gstats(s).U, 1.960592 * 1e9 / (SEC - 1), 1e-6);
	ck_assert_double_eq_tol(gstats(s).W_max, 1, 1e-12);
	rs_free(s);
}
END_TEST

Suite *suite_link(void)
{
	Suite *s = suite_create("link");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, exceptive_samples);
	tcase_add_test(tc, exceptive_falls_fast_with_room);
	tcase_add_test(tc, lag_is_not_exceptive);
	tcase_add_test(tc, rate_floor);
	tcase_add_test(tc, frames_carry_their_payload);
	tcase_add_test(tc, short_frames_scale_c);
	tcase_add_test(tc, link_errors);
	tcase_add_test(tc, counter_drives_wrc_mult);
	tcase_add_test(tc, counter_drives_wrc_aimd);
	suite_add_tcase(s, tc);
	return s;
}
