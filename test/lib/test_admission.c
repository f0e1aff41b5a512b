/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_admission.c - long transfers leave the window; slow start per
 * round of responses (both only with cfg.pacing). Link 1,000,000 bytes/s,
 * T = 1 s, U+ = 0.98, long_transfer = 65,536 (the default).
 */
#include "harness.h"

/* fixed window 1: the byte that makes r1 long releases r2 inside the byte
 * call; r1's end then leaves W alone. Through a flow as well. */
START_TEST(long_transfer_frees_slot)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s;
	rs_id r1, r2, r3;
	rs_flow f;

	cfg.pacing = true;
	s = new_one_class(&cfg, &rec);
	r1 = enq(s, 0, 1, 0, 0);
	r2 = enq(s, 0, 2, 0, 0);
	ck_assert_int_eq(rec.n, 1);
	ck_assert_int_eq(rs_on_bytes(s, r1, 65535, 1), 0);
	ck_assert_int_eq(rec.n, 1);
	ck_assert_int_eq(rs_on_bytes(s, r1, 1, 2), 0);
	ck_assert_int_eq(rec.n, 2);		/* released synchronously */
	ck_assert(rec.id[1] == r2);
	ck_assert_uint_eq(gstats(s).W, 1);
	ck_assert_uint_eq(gstats(s).long_transfers, 1);
	ck_assert_uint_eq(cstats(s, 0).outstanding, 2);
	ck_assert_int_eq(rs_on_bytes(s, r1, 100000, 3), 0);	/* once */
	ck_assert_uint_eq(gstats(s).long_transfers, 1);
	ck_assert_int_eq(rs_on_end(s, r1, false, 4), 0);
	ck_assert_uint_eq(gstats(s).W, 1);
	ck_assert_uint_eq(gstats(s).long_transfers, 0);
	/* through a flow bound to r2: r3 is released inside rs_flow_read */
	r3 = enq(s, 0, 3, 0, 5);
	ck_assert_int_eq(rec.n, 2);
	ck_assert_int_eq(rs_flow_open(s, r2, 0, 0, NULL, 5, &f), 0);
	ck_assert_int_eq(rs_flow_read(s, f, 70000, 6), 0);
	ck_assert_int_eq(rec.n, 3);
	ck_assert(rec.id[2] == r3);
	/* a reconfigure that turns pacing off keeps r2 out until it ends */
	{
		const char *names[] = { "c" };
		double w[] = { 1 };

		cfg.pacing = false;
		ck_assert_int_eq(rs_reconfigure(s, &cfg, names, w, 1, "c", 7), 0);
	}
	ck_assert_uint_eq(gstats(s).long_transfers, 1);
	ck_assert_int_eq(rs_on_bytes(s, r3, 100000, 8), 0);	/* no longer */
	ck_assert_uint_eq(gstats(s).long_transfers, 1);
	ck_assert_int_eq(rs_on_end(s, r2, false, 9), 0);
	ck_assert_uint_eq(gstats(s).W, 1);
	ck_assert_int_eq(rs_on_end(s, r3, false, 9), 0);
	ck_assert_uint_eq(gstats(s).W, 0);
	ck_assert_uint_eq(gstats(s).long_transfers, 0);
	rs_free(s);
}
END_TEST

/* Without pacing nothing is long. */
START_TEST(long_transfer_needs_pacing)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s = new_one_class(&cfg, &rec);
	rs_id r1 = enq(s, 0, 1, 0, 0);

	enq(s, 0, 2, 0, 0);
	ck_assert_int_eq(rs_on_bytes(s, r1, 1000000, 1), 0);
	ck_assert_int_eq(rec.n, 1);
	ck_assert_uint_eq(gstats(s).long_transfers, 0);
	rs_free(s);
}
END_TEST

/* End every outstanding response (latest releases first seen in rec). */
static void end_round(struct rs_sched *s, struct rec *rec, int *done,
		      rs_time_ns now)
{
	int n = rec->n, i;

	for (i = *done; i < n; i++)
		ck_assert_int_eq(rs_on_end(s, rec->id[i], false, now), 0);
	*done = n;
}

/* wrc-mult, 200 requests waiting: W+ 1 -> 2 -> 4 -> 8 -> 16 -> 32, one
 * doubling per round of responses, well inside one update interval. */
START_TEST(slow_start_doubles)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
	struct rs_sched *s;
	int done = 0, k;

	cfg.pacing = true;
	s = new_one_class(&cfg, &rec);
	enq_n(s, 200, 1, 0);
	ck_assert_double_eq_tol(gstats(s).W_max, 1, 1e-12);
	for (k = 1; k <= 5; k++) {
		end_round(s, &rec, &done, (rs_time_ns)k * 1000);
		ck_assert_double_eq_tol(gstats(s).W_max, 1 << k, 1e-12);
		ck_assert_uint_eq(gstats(s).W, 1u << k);
	}
	rs_free(s);
}
END_TEST

/* The phase ends at max_window. */
START_TEST(slow_start_max_window)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_AIMD);
	struct rs_sched *s;
	int done = 0, k;

	cfg.pacing = true;
	cfg.max_window = 6;
	cfg.F = 1000;		/* no regular update in this test */
	s = new_one_class(&cfg, &rec);
	enq_n(s, 100, 1, 0);
	for (k = 1; k <= 4; k++)
		end_round(s, &rec, &done, (rs_time_ns)k * 1000);
	ck_assert_double_eq_tol(gstats(s).W_max, 6, 1e-12);	/* 1 2 4 6 6 */
	rs_free(s);
}
END_TEST

/* The phase ends when an update measured U >= U+ (W+ 4 -> 3.92, then
 * ends add nothing), and starts again after an idle interval. */
START_TEST(slow_start_ends_and_restarts)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
	struct rs_sched *s;
	int done = 0, i;

	cfg.pacing = true;
	s = new_one_class(&cfg, &rec);
	enq_n(s, 100, 1, 0);
	end_round(s, &rec, &done, 1000);
	end_round(s, &rec, &done, 2000);
	ck_assert_double_eq_tol(gstats(s).W_max, 4, 1e-12);
	rs_on_foreign_bytes(s, 0, 1, 1000000, SEC / 2);	/* not long */
	rs_on_timer(s, SEC);			/* U = 1: x 0.98 */
	ck_assert_double_eq_tol(gstats(s).W_max, 3.92, 1e-12);
	end_round(s, &rec, &done, SEC + 1000);
	ck_assert_double_eq_tol(gstats(s).W_max, 3.92, 1e-12);
	/* drain and stay idle for a whole interval */
	for (i = 0; i < 100; i++)
		end_round(s, &rec, &done, SEC + 2000);
	ck_assert_uint_eq(gstats(s).queued, 0);
	rs_on_timer(s, 2 * SEC);	/* limited, U = 0: x K = 2 */
	ck_assert_double_eq_tol(gstats(s).W_max, 7.84, 1e-12);
	rs_on_timer(s, 3 * SEC + 2000);	/* idle since SEC + 2000 */
	enq_n(s, 20, 1, 3 * SEC + 3000);	/* W = 8, 12 wait */
	/* each end releases 2 while requests wait: 6 ends add 1 each */
	end_round(s, &rec, &done, 3 * SEC + 4000);
	ck_assert_double_eq_tol(gstats(s).W_max, 13.84, 1e-12);
	rs_free(s);
}
END_TEST

/* A flow that has to wait for the pacer ends the phase. */
START_TEST(slow_start_ends_on_wait)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
	struct rs_sched *s;
	rs_flow f;
	int done = 0;

	cfg.pacing = true;
	s = new_one_class(&cfg, &rec);
	enq_n(s, 100, 1, 0);
	end_round(s, &rec, &done, 1000);
	ck_assert_double_eq_tol(gstats(s).W_max, 2, 1e-12);
	ck_assert_int_eq(rs_flow_open(s, rec.id[rec.n - 1], 0, 0, NULL, 1000,
				      &f), 0);
	ck_assert_int_eq(rs_flow_allowance(s, f, 4900, 1000), 4900);
	ck_assert_int_eq(rs_flow_allowance(s, f, 4900, 1000), 0);	/* waits */
	ck_assert_int_eq(rs_flow_close(s, f, 1000), 0);
	end_round(s, &rec, &done, 2000);
	ck_assert_double_eq_tol(gstats(s).W_max, 2, 1e-12);
	rs_free(s);
}
END_TEST

Suite *suite_admission(void)
{
	Suite *s = suite_create("admission");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, long_transfer_frees_slot);
	tcase_add_test(tc, long_transfer_needs_pacing);
	tcase_add_test(tc, slow_start_doubles);
	tcase_add_test(tc, slow_start_max_window);
	tcase_add_test(tc, slow_start_ends_and_restarts);
	tcase_add_test(tc, slow_start_ends_on_wait);
	suite_add_tcase(s, tc);
	return s;
}
