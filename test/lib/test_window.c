/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_window.c - window controllers, hand-computed W+ sequences. */
#include "harness.h"

/* Link 1,000,000 bytes/s, T = 1 s, U+ = 0.98, K = 2, W+_0 = 1. */
START_TEST(wrc_mult_sequence)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
	struct rs_sched *s = new_one_class(&cfg, &rec);
	rs_id r1, r2, r3, r[5];
	int i;

	r1 = enq(s, 0, 1, 0, 0);
	r2 = enq(s, 0, 1, 0, 0);	/* waits: the window is the limit */
	ck_assert_int_eq(rec.n, 1);
	ck_assert_uint_eq(rs_next_deadline(s), 1 * SEC);
	rs_on_bytes(s, r1, 250000, SEC / 2);
	rs_on_timer(s, 1 * SEC);
	/* U = 0.25, min(0.98/0.25, 2) * 1 = 2 */
	ck_assert_double_eq_tol(gstats(s).U, 0.25, 1e-12);
	ck_assert_double_eq_tol(gstats(s).W_max, 2, 1e-12);
	ck_assert_int_eq(rec.n, 2);
	ck_assert(rec.id[1] == r2);
	ck_assert_uint_eq(rs_next_deadline(s), 2 * SEC);

	r3 = enq(s, 0, 2, 0, 3 * SEC / 2);	/* waits: limited again */
	rs_on_bytes(s, r2, 490000, 3 * SEC / 2);
	rs_on_timer(s, 2 * SEC);
	/* U = 0.49: min(2, 2) * 2 = 4 */
	ck_assert_double_eq_tol(gstats(s).W_max, 4, 1e-12);
	ck_assert(rec.id[2] == r3);

	rs_on_bytes(s, r3, 100000, 5 * SEC / 2);
	rs_on_end(s, r1, false, 5 * SEC / 2);
	rs_on_end(s, r2, false, 5 * SEC / 2);
	rs_on_end(s, r3, false, 5 * SEC / 2);
	rs_on_timer(s, 3 * SEC);
	/* U = 0.1 but the window was not the limit: W+ unchanged */
	ck_assert_double_eq_tol(gstats(s).U, 0.1, 1e-12);
	ck_assert_double_eq_tol(gstats(s).W_max, 4, 1e-12);

	for (i = 0; i < 5; i++)
		r[i] = enq(s, 0, 3, 0, 3 * SEC + SEC / 10);
	ck_assert_uint_eq(gstats(s).W, 4);
	rs_on_bytes(s, r[0], 1960000, 3 * SEC + SEC / 2);
	rs_on_timer(s, 4 * SEC);
	/* U = 1.96: min(0.98/1.96, 2) * 4 = 2; W = 4 stays, no release */
	ck_assert_double_eq_tol(gstats(s).W_max, 2, 1e-12);
	ck_assert_uint_eq(gstats(s).W, 4);
	rs_on_end(s, r[0], false, 4 * SEC + 1);
	rs_on_end(s, r[1], false, 4 * SEC + 1);
	ck_assert_uint_eq(gstats(s).queued, 1);	/* W = 2 = W+ */
	rs_on_end(s, r[2], false, 4 * SEC + 2);
	ck_assert_uint_eq(gstats(s).queued, 0);	/* W = 1 < 2: released */
	ck_assert(rec.id[rec.n - 1] == r[4]);
	rs_free(s);
}
END_TEST

/* With the byte layer a full link reads U a little under U+ (the pacer
 * reads at most R = U+ C): wrc-mult does not grow W+ while U >= 0.97 U+ =
 * 0.9506. One response outstanding (never a long transfer), one queued,
 * T = 1 s. U = 0.96: W+ stays 1 with pacing, 0.98 / 0.96 without; then
 * U = 0.94: 0.98 / 0.94. */
START_TEST(wrc_mult_full_paced_link)
{
	int pacing;

	for (pacing = 0; pacing <= 1; pacing++) {
		struct rec rec = { 0 };
		struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
		struct rs_sched *s;
		double w = pacing ? 1 : 0.98 / 0.96;
		rs_id r1;

		cfg.pacing = pacing;
		cfg.long_transfer = 0;	/* r1 stays in the window */
		s = new_one_class(&cfg, &rec);
		r1 = enq(s, 0, 1, 0, 0);
		enq(s, 0, 1, 0, 0);
		rs_on_bytes(s, r1, 960000, SEC / 2);
		rs_on_timer(s, SEC);
		ck_assert_double_eq_tol(gstats(s).U, 0.96, 1e-12);
		ck_assert_double_eq_tol(gstats(s).W_max, w, 1e-12);
		ck_assert_int_eq(rec.n, pacing ? 1 : 2);
		rs_on_bytes(s, r1, 940000, 3 * SEC / 2);
		rs_on_timer(s, 2 * SEC);
		if (pacing)
			ck_assert_double_eq_tol(gstats(s).W_max, 0.98 / 0.94, 1e-12);
		ck_assert_int_eq(rec.n, 2);
		rs_free(s);
	}
}
END_TEST

/* The window never falls below 1 and max_window caps it. */
/* The interval ends inside a call that does not release (first byte):
 * W+ grows there, the deadline is then one already passed, and the timer
 * releases the waiting request at once (not an interval later). */
START_TEST(interval_inside_a_call_makes_the_timer_due)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
	struct rs_sched *s = new_one_class(&cfg, &rec);
	rs_id r1;

	r1 = enq(s, 0, 1, 0, 0);
	enq(s, 0, 1, 0, 0);			/* waits: W+ = 1 */
	ck_assert_int_eq(rs_on_bytes(s, r1, 250000, SEC / 2), 0);
	ck_assert_int_eq(rs_on_first_byte(s, r1, -1, SEC + 1), 0);
	ck_assert_double_eq_tol(gstats(s).W_max, 2, 1e-12);	/* grew */
	ck_assert_int_eq(rec.n, 1);		/* no release in there */
	ck_assert_uint_le(rs_next_deadline(s), SEC + 1);
	rs_on_timer(s, SEC + 2);
	ck_assert_int_eq(rec.n, 2);
	ck_assert_uint_eq(rs_next_deadline(s), 2 * SEC + 1);
	rs_free(s);
}
END_TEST

START_TEST(wrc_mult_bounds)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
	struct rs_sched *s;
	rs_id r1;
	int t;

	cfg.max_window = 3;
	s = new_one_class(&cfg, &rec);
	r1 = enq_n(s, 10, 1, 0);	/* backlog: the window stays the limit */
	rs_on_bytes(s, r1, 5000000, 1);		/* U = 5 */
	rs_on_timer(s, SEC);
	ck_assert_double_eq_tol(gstats(s).W_max, 1, 1e-12);	/* max(1, 0.196) */
	for (t = 2; t <= 5; t++)
		rs_on_timer(s, (rs_time_ns)t * SEC);	/* U = 0: x2 each time */
	ck_assert_double_eq_tol(gstats(s).W_max, 3, 1e-12);	/* capped */
	rs_free(s);
}
END_TEST

/* W+ is real-valued: with W+ = 1.5 the loop releases while W < 1.5, so
 * W reaches ceil(W+) = 2 and stops there (the documented rounding). */
START_TEST(wrc_mult_fractional_window)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
	struct rs_sched *s;
	rs_id r1;

	cfg.target_util = 0.9;
	s = new_one_class(&cfg, &rec);
	r1 = enq_n(s, 6, 1, 0);
	rs_on_bytes(s, r1, 600000, 1);
	rs_on_timer(s, SEC);		/* U = 0.6: 0.9/0.6 = 1.5 */
	ck_assert_double_eq_tol(gstats(s).W_max, 1.5, 1e-12);
	ck_assert_uint_eq(gstats(s).W, 2);
	ck_assert_uint_eq(gstats(s).queued, 4);
	rs_free(s);
}
END_TEST

/* With an SMP worker's link share f, W_max is f W+ (at least 1) and
 * rs_window_max() W+ itself, which is what a restart starts from: a
 * scheduler created with initial_window 6 releases 3 at f = 0.5. */
START_TEST(window_max_in_proxy_units)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
	struct rs_sched *s;

	cfg.pacing = 1;
	cfg.initial_window = 6;
	s = new_one_class(&cfg, &rec);
	ck_assert_double_eq_tol(rs_window_max(s), 6, 1e-12);
	ck_assert_int_eq(rs_set_link_share(s, 0.5, 0), 0);
	ck_assert_double_eq_tol(gstats(s).W_max, 3, 1e-12);
	ck_assert_double_eq_tol(rs_window_max(s), 6, 1e-12);
	enq_n(s, 5, 1, 0);
	ck_assert_uint_eq(gstats(s).W, 3);
	ck_assert_int_eq(rs_set_link_share(s, 0.1, 0), 0);
	ck_assert_double_eq_tol(gstats(s).W_max, 1, 1e-12);	/* at least 1 */
	ck_assert_double_eq_tol(rs_window_max(s), 6, 1e-12);
	rs_free(s);
}
END_TEST

/* fixed N: exactly N outstanding. */
START_TEST(fixed_window)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_RFQ, RS_WIN_FIXED);
	struct rs_sched *s;
	int i;

	cfg.fixed_window = 3;
	s = new_one_class(&cfg, &rec);
	for (i = 0; i < 5; i++)
		enq(s, 0, (uint64_t)i, 0, 0);
	ck_assert_int_eq(rec.n, 3);
	ck_assert_uint_eq(gstats(s).W, 3);
	ck_assert_uint_eq(gstats(s).queued, 2);
	rs_on_end(s, rec.id[0], false, 1);
	ck_assert_int_eq(rec.n, 4);
	rs_on_timer(s, 100 * SEC);
	ck_assert_double_eq(gstats(s).W_max, 3);
	rs_free(s);
}
END_TEST

/* End the oldest outstanding request after giving it `bytes` bytes. */
static void end_oldest(struct rs_sched *s, struct rec *rec, int *cursor,
		       uint64_t bytes, rs_time_ns t)
{
	rs_id id = rec->id[(*cursor)++];

	ck_assert_int_eq(rs_on_bytes(s, id, bytes, t), 0);
	ck_assert_int_eq(rs_on_end(s, id, false, t), 0);
}

/* wrc-aimd, F = 2, U+ = 0.98, link 1,000,000 bytes/s, backlogged:
 * interval = F * W+ completions. */
START_TEST(wrc_aimd_sequence)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_AIMD);
	struct rs_sched *s;
	int cur = 0, i;

	cfg.F = 2;
	s = new_one_class(&cfg, &rec);
	enq_n(s, 200, 1, 0);
	ck_assert_uint_eq(gstats(s).W, 1);
	end_oldest(s, &rec, &cur, 100000, 1 * SEC);	/* 1 of 2 */
	ck_assert_double_eq(gstats(s).W_max, 1);
	end_oldest(s, &rec, &cur, 100000, 2 * SEC);	/* U = 0.1 < 0.49 */
	ck_assert_double_eq(gstats(s).W_max, 2);	/* fast start: x2 */
	ck_assert_uint_eq(gstats(s).W, 2);
	for (i = 0; i < 4; i++)				/* U = 0.3 < 0.49 */
		end_oldest(s, &rec, &cur, 75000, 3 * SEC);
	ck_assert_double_eq(gstats(s).W_max, 4);
	for (i = 0; i < 8; i++)				/* U = 0.8: +1 */
		end_oldest(s, &rec, &cur, 100000, 4 * SEC);
	ck_assert_double_eq(gstats(s).W_max, 5);
	ck_assert_double_eq_tol(gstats(s).U, 0.8, 1e-12);
	for (i = 0; i < 10; i++)			/* U = 1.5: -1 */
		end_oldest(s, &rec, &cur, 150000, 5 * SEC);
	ck_assert_double_eq(gstats(s).W_max, 4);
	ck_assert_uint_eq(gstats(s).W, 4);
	rs_free(s);
}
END_TEST

/* wrc-aimd changes nothing when the window was not the limit. */
START_TEST(wrc_aimd_only_when_limited)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_AIMD);
	struct rs_sched *s;
	int cur = 0, i;

	cfg.F = 2;
	s = new_one_class(&cfg, &rec);
	for (i = 0; i < 4; i++) {	/* one request at a time: never waits */
		enq(s, 0, 1, 0, (rs_time_ns)i * SEC);
		end_oldest(s, &rec, &cur, 1000, (rs_time_ns)i * SEC + 1);
	}
	ck_assert_double_eq(gstats(s).W_max, 1);
	rs_free(s);
}
END_TEST

Suite *suite_window(void)
{
	Suite *s = suite_create("window");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, wrc_mult_sequence);
	tcase_add_test(tc, wrc_mult_full_paced_link);
	tcase_add_test(tc, interval_inside_a_call_makes_the_timer_due);
	tcase_add_test(tc, wrc_mult_bounds);
	tcase_add_test(tc, wrc_mult_fractional_window);
	tcase_add_test(tc, window_max_in_proxy_units);
	tcase_add_test(tc, fixed_window);
	tcase_add_test(tc, wrc_aimd_sequence);
	tcase_add_test(tc, wrc_aimd_only_when_limited);
	suite_add_tcase(s, tc);
	return s;
}
