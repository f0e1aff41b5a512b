/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_reconfig.c - rs_reconfigure, rs_expire, foreign bytes. */
#include <stdio.h>

#include "harness.h"

static const char *const names3[] = { "gold", "bronze", "fresh" };
static const double weights3[] = { 1, 3, 2 };

static struct rs_sched *three(struct rec *rec, struct rs_config *cfg)
{
	struct rs_sched *s = rs_new(cfg, rec_release, rec);

	rs_class_add(s, "gold", 4);
	rs_class_add(s, "silver", 2);
	rs_class_add(s, "bronze", 1);
	return s;
}

START_TEST(reconfig_keeps_requests)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s = three(&rec, &cfg);
	rs_id g1;
	int i;

	g1 = enq(s, 0, 1, 0, 0);		/* released */
	enq(s, 1, 2, 0, 0);
	enq(s, 1, 3, 0, 0);
	enq(s, 2, 4, 0, 0);
	enq(s, 0, 1, 0, 0);
	rs_on_bytes(s, g1, 400, 1);		/* SC_gold = 400/(4*1) = 100 */
	ck_assert_int_eq(rs_reconfigure(s, &cfg, names3, weights3, 3, "gold",
					2), 0);
	ck_assert_int_eq(rs_class_count(s), 3);
	ck_assert_int_eq(rs_class_find(s, "silver"), RS_ENOCLASS);
	ck_assert_int_eq(rs_class_find(s, "fresh"), 2);
	ck_assert_uint_eq(gstats(s).W, 1);
	ck_assert_uint_eq(gstats(s).queued, 4);
	/* silver's 2 requests (users 2, 3) moved to gold: gold has users 1,2,3 */
	ck_assert_uint_eq(cstats(s, 0).queued, 3);
	ck_assert_uint_eq(cstats(s, 0).outstanding, 1);
	ck_assert_uint_eq(cstats(s, 0).active_users, 3);
	ck_assert_double_eq(cstats(s, 0).weight, 1);
	ck_assert_double_eq_tol(service(s, 0), 100, 1e-9);	/* kept */
	ck_assert_uint_eq(cstats(s, 1).queued, 1);
	ck_assert_double_eq(cstats(s, 1).weight, 3);
	ck_assert_uint_eq(cstats(s, 2).queued, 0);
	ck_assert_uint_eq(gstats(s).users, 4);
	/* the moved requests keep their enqueue order inside gold */
	rs_on_end(s, g1, false, 3);
	for (i = 1; i < 5; i++)
		rs_on_end(s, rec.id[i], false, 4);
	ck_assert_int_eq(rec.n, 5);
	ck_assert_uint_eq(gstats(s).W, 0);
	ck_assert_uint_eq(gstats(s).queued, 0);
	ck_assert_uint_eq(gstats(s).users, 0);
	ck_assert_uint_eq(gstats(s).ended, 5);
	rs_free(s);
}
END_TEST

/* The same user in a kept and a removed class becomes one user. */
START_TEST(reconfig_merges_users)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s = three(&rec, &cfg);

	enq(s, 2, 9, 0, 0);		/* blocker */
	enq(s, 0, 5, 0, 0);
	enq(s, 1, 5, 0, 0);
	ck_assert_uint_eq(gstats(s).users, 3);
	ck_assert_int_eq(rs_reconfigure(s, &cfg, names3, weights3, 3, "gold",
					1), 0);
	ck_assert_uint_eq(gstats(s).users, 2);
	ck_assert_uint_eq(cstats(s, 0).active_users, 1);
	ck_assert_uint_eq(cstats(s, 0).queued, 2);
	rs_free(s);
}
END_TEST

struct snap {
	struct rs_stats g;
	struct rs_class_stats c[3];
};

static void take(struct rs_sched *s, struct snap *sn)
{
	int i;

	memset(sn, 0, sizeof(*sn));
	rs_get_stats(s, &sn->g);
	for (i = 0; i < 3; i++)
		rs_get_class_stats(s, i, &sn->c[i]);
}

START_TEST(reconfig_errors_change_nothing)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED), bad;
	struct rs_sched *s = three(&rec, &cfg);
	const char *dup[] = { "a", "a" };
	const char *nul[] = { "a", NULL };
	const double w2[] = { 1, 1 }, wz[] = { 1, 0 };
	struct snap before, after;

	enq(s, 0, 1, 0, 0);
	enq(s, 1, 2, 0, 0);
	take(s, &before);
	ck_assert_int_eq(rs_reconfigure(s, &cfg, names3, weights3, 3, "nope",
					1), RS_ENOCLASS);
	ck_assert_int_eq(rs_reconfigure(s, &cfg, dup, w2, 2, "a", 1), RS_EEXIST);
	ck_assert_int_eq(rs_reconfigure(s, &cfg, nul, w2, 2, "a", 1), RS_EINVAL);
	ck_assert_int_eq(rs_reconfigure(s, &cfg, names3, wz, 2, "gold", 1),
			 RS_EINVAL);
	ck_assert_int_eq(rs_reconfigure(s, &cfg, names3, weights3, 0, "gold",
					1), RS_EINVAL);
	bad = cfg;
	bad.link_bps = 0;
	ck_assert_int_eq(rs_reconfigure(s, &bad, names3, weights3, 3, "gold",
					1), RS_EINVAL);
	take(s, &after);
	ck_assert(memcmp(&before, &after, sizeof(before)) == 0);
	ck_assert_str_eq(cstats(s, 1).name, "silver");
	rs_free(s);
}
END_TEST

/* Switch policy, modifier and controller with requests in every state. */
START_TEST(reconfig_switch_policy_and_controller)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_config cfg2 = cfg_base(RS_POLICY_DRR, RS_WIN_RTC);
	struct rs_config cfg3 = cfg_base(RS_POLICY_RFQ, RS_WIN_WRC_AIMD);
	struct rs_sched *s;
	const char *n1[] = { "gold", "silver", "bronze" };
	const double w1[] = { 4, 2, 1 };
	int i;

	cfg.fixed_window = 2;
	cfg2.sff = true;
	s = three(&rec, &cfg);
	for (i = 0; i < 12; i++)
		enq(s, i % 3, (uint64_t)i, 1000, 0);
	ck_assert_uint_eq(gstats(s).W, 2);
	ck_assert_int_eq(rs_reconfigure(s, &cfg2, n1, w1, 3, "gold", 1), 0);
	ck_assert_uint_eq(gstats(s).W, 2);
	ck_assert_uint_eq(gstats(s).queued, 10);
	rs_on_timer(s, 2);
	ck_assert_int_eq(rs_reconfigure(s, &cfg3, n1, w1, 3, "gold", 3), 0);
	/* serve everything; the counters must come back to zero */
	for (i = 0; i < rec.n; i++) {
		rs_on_bytes(s, rec.id[i], 1000, 10 + (rs_time_ns)i);
		ck_assert_int_eq(rs_on_end(s, rec.id[i], false,
					   10 + (rs_time_ns)i), 0);
	}
	ck_assert_int_eq(rec.n, 12);
	ck_assert_uint_eq(gstats(s).W, 0);
	ck_assert_uint_eq(gstats(s).queued, 0);
	ck_assert_uint_eq(gstats(s).users, 0);
	for (i = 0; i < 3; i++) {
		ck_assert_uint_eq(cstats(s, i).active_users, 0);
		ck_assert_uint_eq(cstats(s, i).outstanding, 0);
	}
	rs_free(s);
}
END_TEST

/*
 * fixed 12 -> wrc-mult with 12 outstanding and 8 queued: wrc-mult starts at
 * W+ = 12 (not W+_0 = 1), so the first end releases the next request at
 * once. With max_window 5 the carried window is clamped to 5, and no
 * release happens until W has drained below 5.
 */
START_TEST(reconfig_controller_switch_keeps_window)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_config cfg2 = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
	const char *n1[] = { "gold", "silver", "bronze" };
	const double w1[] = { 4, 2, 1 };
	struct rs_sched *s;
	int i;

	cfg.fixed_window = 12;
	s = three(&rec, &cfg);
	for (i = 0; i < 20; i++)
		enq(s, i % 3, (uint64_t)i, 1000, 0);
	ck_assert_uint_eq(gstats(s).W, 12);
	ck_assert_int_eq(rs_reconfigure(s, &cfg2, n1, w1, 3, "gold", 1), 0);
	ck_assert(gstats(s).W_max == 12.0);
	ck_assert_int_eq(rs_on_end(s, rec.id[0], false, 2), 0);
	ck_assert_int_eq(rec.n, 13);		/* released at once */
	ck_assert_uint_eq(gstats(s).W, 12);

	cfg2.max_window = 5;
	ck_assert_int_eq(rs_reconfigure(s, &cfg, n1, w1, 3, "gold", 3), 0);
	ck_assert_int_eq(rs_reconfigure(s, &cfg2, n1, w1, 3, "gold", 4), 0);
	ck_assert(gstats(s).W_max == 5.0);
	ck_assert_int_eq(rs_on_end(s, rec.id[1], false, 5), 0);
	ck_assert_int_eq(rec.n, 13);		/* W = 11 > 5: nothing */
	rs_free(s);
}
END_TEST

START_TEST(expire_oldest_first)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s = rs_new(&cfg, rec_release, &rec);
	rs_id r0, q0, q1, q2, ids[4];
	void *cookies[4];

	rs_class_add(s, "a", 1);
	r0 = enq(s, 0, 10, 0, 0);	/* released: never expires */
	q0 = enq(s, 0, 11, 0, 0);
	q1 = enq(s, 0, 12, 0, SEC);
	q2 = enq(s, 0, 13, 0, 2 * SEC);
	ck_assert_uint_eq(rs_expire(s, 2 * SEC + SEC / 2, 3 * SEC / 2, ids,
				    cookies, 1), 1);
	ck_assert(ids[0] == q0);
	ck_assert_ptr_eq(cookies[0], (void *)11);
	ck_assert_uint_eq(rs_expire(s, 2 * SEC + SEC / 2, 3 * SEC / 2, ids,
				    cookies, 4), 1);	/* waited exactly 1.5 s */
	ck_assert(ids[0] == q1);
	ck_assert_uint_eq(gstats(s).expired, 2);
	ck_assert_uint_eq(cstats(s, 0).expired, 2);
	ck_assert_uint_eq(gstats(s).queued, 1);
	ck_assert_int_eq(rs_cancel(s, q1, 3 * SEC), RS_ESTALE);
	ck_assert_uint_eq(rs_expire(s, 100 * SEC, SEC, NULL, NULL, 4), 1);
	ck_assert_int_eq(rs_cancel(s, q2, 100 * SEC), RS_ESTALE);
	ck_assert_int_eq(rs_on_end(s, r0, false, 100 * SEC), 0);
	ck_assert_uint_eq(gstats(s).users, 0);
	ck_assert_int_eq(rec.n, 1);
	rs_free(s);
}
END_TEST

/* Foreign bytes: service of the class (SC += L/(w*UC)) and link usage. */
START_TEST(foreign_bytes_count)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
	struct rs_sched *s = rs_new(&cfg, rec_release, &rec);

	rs_class_add(s, "a", 2);
	rs_class_add(s, "b", 1);
	enq(s, 0, 1, 0, 0);
	enq(s, 0, 2, 0, 0);
	ck_assert_int_eq(rs_on_foreign_bytes(s, 0, 77, 800, 1), 0);
	ck_assert_double_eq_tol(service(s, 0), 800.0 / (2 * 2), 1e-9);
	ck_assert_int_eq(rs_on_foreign_bytes(s, 1, 5, 499200, 2), 0);
	ck_assert_uint_eq(cstats(s, 0).foreign_bytes, 800);
	ck_assert_uint_eq(cstats(s, 0).bytes, 800);
	ck_assert_uint_eq(cstats(s, 1).foreign_bytes, 499200);
	ck_assert_uint_eq(gstats(s).bytes, 500000);
	rs_on_timer(s, SEC);
	ck_assert_double_eq_tol(gstats(s).U, 0.5, 1e-12);
	ck_assert_double_eq_tol(cstats(s, 1).throughput_bps, 499200 * 8.0,
				1e-6);
	ck_assert_uint_eq(gstats(s).users, 2);	/* no entry for foreign users */
	rs_free(s);
}
END_TEST

/* Class names through the name index (lib/names.c) with thousands of
 * classes: the index grows many times, class19794 and class61278 share
 * their 32-bit hash (one probe chain), and a reconfigure matches the kept
 * classes by name in a new order. */
#define NBIG 3002
#define NNEW 10
static char big[NBIG][16], fresh[NNEW][16];

START_TEST(classes_by_name_at_scale)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s = rs_new(&cfg, rec_release, &rec);
	static const char *names[NBIG + NNEW];
	static double w[NBIG + NNEW];
	int i, j, n = 0;

	for (i = 0; i < NBIG - 2; i++)
		snprintf(big[i], sizeof(big[i]), "class%d", i);
	strcpy(big[NBIG - 2], "class19794");
	strcpy(big[NBIG - 1], "class61278");
	for (i = 0; i < NBIG; i++)
		ck_assert_int_eq(rs_class_add(s, big[i], 1), i);
	for (i = 0; i < NBIG; i++) {
		ck_assert_int_eq(rs_class_find(s, big[i]), i);
		ck_assert_int_eq(rs_class_add(s, big[i], 2), RS_EEXIST);
	}
	ck_assert_int_eq(rs_class_find(s, "class3000"), RS_ENOCLASS);
	ck_assert_int_eq(rs_class_count(s), NBIG);
	for (i = 0; i < NBIG; i += 5)
		enq(s, i, (uint64_t)i, 0, 0);	/* the first is released */

	/* keep the odd classes in reverse order (class61278 first, class19794
	 * goes), then new ones; the default is class1 */
	for (i = NBIG - 1; i >= 0; i -= 2, n++) {
		names[n] = big[i];
		w[n] = 3;
	}
	for (i = 0; i < NNEW; i++, n++) {
		snprintf(fresh[i], sizeof(fresh[i]), "new%d", i);
		names[n] = fresh[i];
		w[n] = 1;
	}
	names[n] = "class1";		/* a duplicate at the very end */
	w[n] = 1;
	ck_assert_int_eq(rs_reconfigure(s, &cfg, names, w, n + 1, "class1", 1),
			 RS_EEXIST);
	ck_assert_int_eq(rs_class_count(s), NBIG);
	ck_assert_int_eq(rs_class_find(s, "class19794"), NBIG - 2);
	ck_assert_int_eq(rs_reconfigure(s, &cfg, names, w, n, "class1", 1), 0);
	ck_assert_int_eq(rs_class_count(s), n);
	ck_assert_int_eq(rs_class_find(s, "class19794"), RS_ENOCLASS);
	ck_assert_int_eq(rs_class_find(s, "class61278"), 0);
	for (i = 0; i < NBIG; i++) {
		j = rs_class_find(s, big[i]);
		if (i % 2 == 0) {
			ck_assert_int_eq(j, RS_ENOCLASS);
			continue;
		}
		ck_assert_int_eq(j, (NBIG - 1 - i) / 2);
		ck_assert_str_eq(cstats(s, j).name, big[i]);
		ck_assert_double_eq(cstats(s, j).weight, 3);
		/* kept classes keep their requests; class1 gets the removed
		 * classes' (i = 0, 10, ... 3000) */
		ck_assert_uint_eq(cstats(s, j).queued + cstats(s, j).outstanding,
				  i == 1 ? (NBIG + 9) / 10 : i % 5 == 0);
	}
	for (i = 0; i < NNEW; i++) {
		j = rs_class_find(s, fresh[i]);
		ck_assert_int_eq(j, NBIG / 2 + i);
		ck_assert_double_eq(cstats(s, j).weight, 1);
		ck_assert_uint_eq(cstats(s, j).queued, 0);
	}
	rs_free(s);
}
END_TEST

Suite *suite_reconfig(void)
{
	Suite *s = suite_create("reconfig");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, reconfig_keeps_requests);
	tcase_add_test(tc, reconfig_merges_users);
	tcase_add_test(tc, reconfig_errors_change_nothing);
	tcase_add_test(tc, reconfig_switch_policy_and_controller);
	tcase_add_test(tc, reconfig_controller_switch_keeps_window);
	tcase_add_test(tc, expire_oldest_first);
	tcase_add_test(tc, foreign_bytes_count);
	tcase_add_test(tc, classes_by_name_at_scale);
	suite_add_tcase(s, tc);
	return s;
}
