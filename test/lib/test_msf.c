/* SPDX-License-Identifier: BSD-2-Clause */
/* test_msf.c - msf / rfq selection and service counters, hand-computed. */
#include "harness.h"

/* Weights 4:2:1, one user each: SC_i = L_i / (w_i * UC_i). */
START_TEST(msf_sc_after_bytes)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s;
	rs_id a, b, c;

	cfg.fixed_window = 100;
	s = rs_new(&cfg, rec_release, &rec);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(rs_class_add(s, "gold", 4), 0);
	ck_assert_int_eq(rs_class_add(s, "silver", 2), 1);
	ck_assert_int_eq(rs_class_add(s, "bronze", 1), 2);
	a = enq(s, 0, 1, 0, 0);
	b = enq(s, 1, 2, 0, 0);
	c = enq(s, 2, 3, 0, 0);
	ck_assert_int_eq(rec.n, 3);
	ck_assert_int_eq(rs_on_bytes(s, a, 4000, 1), 0);	/* 4000/(4*1) */
	ck_assert_int_eq(rs_on_bytes(s, b, 3000, 1), 0);	/* 3000/(2*1) */
	ck_assert_int_eq(rs_on_bytes(s, c, 1000, 1), 0);	/* 1000/(1*1) */
	ck_assert_double_eq_tol(service(s, 0), 1000, 1e-9);
	ck_assert_double_eq_tol(service(s, 1), 1500, 1e-9);
	ck_assert_double_eq_tol(service(s, 2), 1000, 1e-9);
	/* two more gold users: UC_gold = 3, SC += 1200 / (4 * 3) = 100 */
	enq(s, 0, 10, 0, 2);
	enq(s, 0, 11, 0, 2);
	ck_assert_uint_eq(cstats(s, 0).active_users, 3);
	ck_assert_int_eq(rs_on_bytes(s, a, 1200, 3), 0);
	ck_assert_double_eq_tol(service(s, 0), 1100, 1e-9);
	/* a second request of an existing user does not change UC */
	enq(s, 0, 10, 0, 4);
	ck_assert_uint_eq(cstats(s, 0).active_users, 3);
	ck_assert_uint_eq(gstats(s).users, 5);
	rs_free(s);
}
END_TEST

/* Window 1; order of releases by minimum SC, ties to the largest w*UC. */
START_TEST(msf_order_and_ties)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s = rs_new(&cfg, rec_release, &rec);
	rs_id a1, b1, c1, a2;

	rs_class_add(s, "A", 4);
	rs_class_add(s, "B", 2);
	rs_class_add(s, "C", 1);
	a1 = enq(s, 0, 1, 0, 0);	/* released at once: W = 0 < 1 */
	b1 = enq(s, 1, 2, 0, 0);	/* SC_B <- min active SC = 0 */
	c1 = enq(s, 2, 3, 0, 0);	/* SC_C <- 0 */
	a2 = enq(s, 0, 1, 0, 0);
	ck_assert_int_eq(rec.n, 1);
	ck_assert(rec.id[0] == a1);
	rs_on_bytes(s, a1, 400, 1);	/* SC_A = 400/4 = 100 */
	rs_on_end(s, a1, false, 2);
	/* SC: A 100, B 0, C 0; tie B/C -> larger w*UC: B (2 > 1) */
	ck_assert_int_eq(rec.n, 2);
	ck_assert(rec.id[1] == b1);
	rs_on_bytes(s, b1, 400, 3);	/* SC_B = 200 */
	rs_on_end(s, b1, false, 4);
	ck_assert(rec.id[2] == c1);	/* C 0 < A 100 < B 200 */
	rs_on_bytes(s, c1, 400, 5);	/* SC_C = 400 */
	rs_on_end(s, c1, false, 6);
	ck_assert(rec.id[3] == a2);	/* A 100 */
	ck_assert_double_eq_tol(service(s, 2), 400, 1e-9);
	rs_on_end(s, a2, false, 7);
	/* every class idle: all SCs reset to 0 */
	ck_assert_double_eq(service(s, 0), 0);
	ck_assert_double_eq(service(s, 1), 0);
	ck_assert_double_eq(service(s, 2), 0);
	ck_assert_uint_eq(gstats(s).W, 0);
	ck_assert_uint_eq(gstats(s).users, 0);
	rs_free(s);
}
END_TEST

/* An idle class that becomes active starts at the minimum active SC. */
START_TEST(msf_idle_restart_at_min)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s;
	rs_id a, b;

	cfg.fixed_window = 10;
	s = rs_new(&cfg, rec_release, &rec);
	rs_class_add(s, "A", 1);
	rs_class_add(s, "B", 1);
	rs_class_add(s, "C", 1);
	a = enq(s, 0, 1, 0, 0);
	b = enq(s, 1, 2, 0, 0);
	rs_on_bytes(s, a, 500, 1);	/* SC_A = 500 */
	rs_on_bytes(s, b, 300, 1);	/* SC_B = 300 */
	rs_on_end(s, b, false, 2);	/* B idle: its SC is no longer active */
	rs_on_bytes(s, a, 100, 3);	/* SC_A = 600 */
	enq(s, 2, 3, 0, 4);		/* C starts at min active = A's 600 */
	ck_assert_double_eq_tol(service(s, 2), 600, 1e-9);
	enq(s, 1, 2, 0, 5);		/* B restarts at 600 too, not 300 */
	ck_assert_double_eq_tol(service(s, 1), 600, 1e-9);
	rs_free(s);
}
END_TEST

/* msf normalizes by users, rfq does not: 4 users in a class of weight 2. */
START_TEST(rfq_vs_msf_normalization)
{
	enum rs_policy pol[2] = { RS_POLICY_MSF, RS_POLICY_RFQ };
	double expect[2] = { 800.0 / (2 * 4), 800.0 / 2 };
	int i;

	for (i = 0; i < 2; i++) {
		struct rec rec = { 0 };
		struct rs_config cfg = cfg_base(pol[i], RS_WIN_FIXED);
		struct rs_sched *s;
		rs_id first;
		uint64_t u;

		cfg.fixed_window = 10;
		s = rs_new(&cfg, rec_release, &rec);
		rs_class_add(s, "big", 2);
		first = enq(s, 0, 1, 0, 0);
		for (u = 2; u <= 4; u++)
			enq(s, 0, u, 0, 0);
		ck_assert_uint_eq(cstats(s, 0).active_users, 4);
		rs_on_bytes(s, first, 800, 1);
		ck_assert_double_eq_tol(service(s, 0), expect[i], 1e-9);
		rs_free(s);
	}
}
END_TEST

/* Backlogged 4:2:1 classes with equal sizes: releases follow 4:2:1. */
START_TEST(msf_backlogged_shares)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s = rs_new(&cfg, rec_release, &rec);
	int per_class[3] = { 0 }, i, c;
	void *cookie_class[3] = { (void *)1, (void *)2, (void *)3 };
	rs_id id;

	rs_class_add(s, "A", 4);
	rs_class_add(s, "B", 2);
	rs_class_add(s, "C", 1);
	for (i = 0; i < 200; i++)
		for (c = 0; c < 3; c++)
			ck_assert_int_eq(rs_enqueue(s, c, (uint64_t)c, NULL,
						    cookie_class[c], 0, &id), 0);
	/* serve 70 responses of 1000 bytes each, one at a time */
	for (i = 0; i < 70; i++) {
		rs_id cur = rec.id[i];

		per_class[(uintptr_t)rec.cookie[i] - 1]++;
		rs_on_bytes(s, cur, 1000, (rs_time_ns)i + 1);
		rs_on_end(s, cur, false, (rs_time_ns)i + 1);
	}
	ck_assert_int_eq(per_class[0], 40);
	ck_assert_int_eq(per_class[1], 20);
	ck_assert_int_eq(per_class[2], 10);
	rs_free(s);
}
END_TEST

Suite *suite_msf(void)
{
	Suite *s = suite_create("msf");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, msf_sc_after_bytes);
	tcase_add_test(tc, msf_order_and_ties);
	tcase_add_test(tc, msf_idle_restart_at_min);
	tcase_add_test(tc, rfq_vs_msf_normalization);
	tcase_add_test(tc, msf_backlogged_shares);
	suite_add_tcase(s, tc);
	return s;
}
