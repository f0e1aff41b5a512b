/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_msf.c - msf / rfq selection and service counters, hand-computed. */
#include <stdio.h>

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

/*
 * The tests below pin the lazy active heap and the activation pool of
 * policy.c with hand-computed SCs. Each runs for msf and rfq (_i): every
 * byte is counted while its class has one user, where the two agree.
 */
static const enum rs_policy sc_policy[2] = { RS_POLICY_MSF, RS_POLICY_RFQ };

/* A scheduler of the classes "c0".."c<n-1>" with the given weights. */
static struct rs_sched *sc_sched(enum rs_policy pol, uint32_t window,
				 struct rec *rec, const double *weight, int n)
{
	struct rs_config cfg = cfg_base(pol, RS_WIN_FIXED);
	struct rs_sched *s;
	char name[16];
	int i;

	cfg.fixed_window = window;
	s = rs_new(&cfg, rec_release, rec);
	ck_assert_ptr_nonnull(s);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		ck_assert_int_eq(rs_class_add(s, name, weight[i]), i);
	}
	return s;
}

/*
 * Three classes; C goes idle while A and B accumulate service, then comes
 * back: it restarts at the minimum SC of the active classes, read from a
 * lazy active heap whose entries are all stale (key 0), one of them idle
 * C's. Weights A 1, B 2, C 4, window 100:
 *   A, B, C join at SC 0 (all three pooled)
 *   bytes A 300, B 1000, C 400
 *   C's 2nd user: C's SC folds to 400/4 = 100 and C leaves the pool into
 *   the active heap with key 0; both C requests end: C idle
 *   bytes A 600, B 400
 *   C returns: A = (300+600)/1 = 900, B = (1000+400)/2 = 700 leave the
 *   pool with key 0; C restarts at min(900, 700) = 700
 *   (not 0, the stale keys; not 100, its own SC while idle).
 */
START_TEST(sc_idle_class_restarts_at_active_min)
{
	const double w[3] = { 1, 2, 4 };
	struct rec rec = { 0 };
	struct rs_sched *s = sc_sched(sc_policy[_i], 100, &rec, w, 3);
	rs_id a, b, c, c2;

	a = enq(s, 0, 1, 0, 0);
	b = enq(s, 1, 2, 0, 0);
	c = enq(s, 2, 3, 0, 0);
	rs_on_bytes(s, a, 300, 1);
	rs_on_bytes(s, b, 1000, 1);
	rs_on_bytes(s, c, 400, 1);
	c2 = enq(s, 2, 4, 0, 2);
	ck_assert_uint_eq(cstats(s, 2).active_users, 2);
	rs_on_end(s, c, false, 3);
	rs_on_end(s, c2, false, 3);
	ck_assert_uint_eq(cstats(s, 2).active_users, 0);
	ck_assert_double_eq_tol(service(s, 2), 100, 1e-9);
	rs_on_bytes(s, a, 600, 4);
	rs_on_bytes(s, b, 400, 4);
	enq(s, 2, 3, 0, 5);
	ck_assert_double_eq_tol(service(s, 0), 900, 1e-9);
	ck_assert_double_eq_tol(service(s, 1), 700, 1e-9);
	ck_assert_double_eq_tol(service(s, 2), 700, 1e-9);
	rs_free(s);
}
END_TEST

/*
 * A pooled class whose SC changes leaves the pool into the active heap
 * and must be ordered against the heap classes; a returning class whose
 * SC is above the minimum keeps it and its old entry. Weights 1, window
 * 100:
 *   A, B join at 0; bytes A 900, B 300
 *   C joins at min(900, 300) = 300 (A, B keys now exact: 900, 300)
 *   bytes C 200 (C 500, pooled); B ends (idle, entry key 300)
 *   D joins: C leaves the pool with key 300; min(A 900, C 500) = 500
 *   A ends (idle, entry key 900); A returns above the pool SC 500 (D
 *   pooled): it keeps 900 and its entry
 *   bytes A 100 (A 1000), D 300 (D 800), C 400 (C 900)
 *   E joins: D enters the heap: min(A 1000, C 900, D 800) = 800.
 */
START_TEST(sc_pooled_class_ordered_against_heap)
{
	const double w[5] = { 1, 1, 1, 1, 1 };
	struct rec rec = { 0 };
	struct rs_sched *s = sc_sched(sc_policy[_i], 100, &rec, w, 5);
	rs_id a, b, c, d;

	a = enq(s, 0, 1, 0, 0);
	b = enq(s, 1, 2, 0, 0);
	rs_on_bytes(s, a, 900, 1);
	rs_on_bytes(s, b, 300, 1);
	c = enq(s, 2, 3, 0, 2);
	ck_assert_double_eq_tol(service(s, 2), 300, 1e-9);
	rs_on_bytes(s, c, 200, 3);
	rs_on_end(s, b, false, 3);
	d = enq(s, 3, 4, 0, 4);
	ck_assert_double_eq_tol(service(s, 3), 500, 1e-9);
	rs_on_end(s, a, false, 5);
	a = enq(s, 0, 1, 0, 6);
	ck_assert_double_eq_tol(service(s, 0), 900, 1e-9);
	rs_on_bytes(s, a, 100, 7);
	rs_on_bytes(s, d, 300, 7);
	rs_on_bytes(s, c, 400, 7);
	enq(s, 4, 5, 0, 8);
	ck_assert_double_eq_tol(service(s, 0), 1000, 1e-9);
	ck_assert_double_eq_tol(service(s, 2), 900, 1e-9);
	ck_assert_double_eq_tol(service(s, 3), 800, 1e-9);
	ck_assert_double_eq_tol(service(s, 4), 800, 1e-9);
	rs_free(s);
}
END_TEST

/*
 * A class that returns after every class went idle (a new epoch) starts
 * at the minimum although its old active-heap entry has key 1000; that
 * entry sits
 * below exact keys of other classes and must rise when its class leaves
 * the pool, else a minimum read from the top misses it. Weights 1,
 * window 100; classes Q P A X D E:
 *   Q, P, A, X join at 0; bytes Q 100, P 900, A 1000, X 950
 *   D joins at min = 100 (the read makes every key exact: Q 100 on top,
 *   A's 1000 below X's 950); D ends at once (idle, the pool is empty)
 *   all of them end: every SC resets (new epoch); the old entries stay
 *   Q, P, X return at 0 (pooled); bytes Q 100, P 900, X 950
 *   A returns at min(Q 100, P 900, X 950) = 100 (its 1000 is of the old
 *   epoch), alone in the pool
 *   bytes A 50 (A 150), Q 500 (Q 600)
 *   E joins: min(Q 600, P 900, X 950, A 150) = 150 (not Q's 600).
 */
START_TEST(sc_returning_class_entry_rises)
{
	const double w[6] = { 1, 1, 1, 1, 1, 1 };
	struct rec rec = { 0 };
	struct rs_sched *s = sc_sched(sc_policy[_i], 100, &rec, w, 6);
	rs_id q, p, a, x, d;

	q = enq(s, 0, 1, 0, 0);
	p = enq(s, 1, 2, 0, 0);
	a = enq(s, 2, 3, 0, 0);
	x = enq(s, 3, 4, 0, 0);
	rs_on_bytes(s, q, 100, 1);
	rs_on_bytes(s, p, 900, 1);
	rs_on_bytes(s, a, 1000, 1);
	rs_on_bytes(s, x, 950, 1);
	d = enq(s, 4, 5, 0, 2);
	ck_assert_double_eq_tol(service(s, 4), 100, 1e-9);
	rs_on_end(s, d, false, 3);
	rs_on_end(s, q, false, 4);
	rs_on_end(s, p, false, 4);
	rs_on_end(s, a, false, 4);
	rs_on_end(s, x, false, 4);
	q = enq(s, 0, 1, 0, 5);
	p = enq(s, 1, 2, 0, 5);
	x = enq(s, 3, 4, 0, 5);
	rs_on_bytes(s, q, 100, 5);
	rs_on_bytes(s, p, 900, 5);
	rs_on_bytes(s, x, 950, 5);
	a = enq(s, 2, 3, 0, 5);
	ck_assert_double_eq_tol(service(s, 2), 100, 1e-9);
	rs_on_bytes(s, a, 50, 6);
	rs_on_bytes(s, q, 500, 6);
	enq(s, 5, 6, 0, 7);
	ck_assert_double_eq_tol(service(s, 5), 150, 1e-9);
	rs_free(s);
}
END_TEST

/*
 * A class that idles for a moment keeps the SC it has: gold (weight 3) and
 * bronze (1), one user each, window 1. Gold reads 3000 (SC 1000) and ends;
 * bronze, queued all along at SC 0, goes out; gold's user asks again at
 * once. With MSF-RS's literal reset gold would come back at the minimum
 * (bronze's 0) and win every tie by its larger w*UC; a worker holding one
 * slot then starved bronze for a whole run (testbed, mid-link, 4 workers).
 */
START_TEST(sc_returning_class_keeps_its_service)
{
	const double w[2] = { 3, 1 };
	struct rec rec = { 0 };
	struct rs_sched *s = sc_sched(sc_policy[_i], 1, &rec, w, 2);
	rs_id g, b;

	g = enq(s, 0, 1, 0, 0);
	b = enq(s, 1, 2, 0, 0);
	ck_assert_int_eq(rec.n, 1);
	rs_on_bytes(s, g, 3000, 1);
	rs_on_end(s, g, false, 2);
	ck_assert_int_eq(rec.n, 2);
	ck_assert(rec.id[1] == b);
	g = enq(s, 0, 1, 0, 3);
	ck_assert_double_eq_tol(service(s, 0), 1000, 1e-9);
	ck_assert_double_eq_tol(service(s, 1), 0, 1e-9);
	rs_on_bytes(s, b, 500, 4);
	rs_on_end(s, b, false, 5);
	ck_assert_int_eq(rec.n, 3);
	ck_assert(rec.id[2] == g);
	rs_free(s);
}
END_TEST

/*
 * Classes activating in a row at different minima, some with the pool
 * not empty, some with it empty. Weights 1, window 100:
 *   A joins at 0 (none active); bytes A 400
 *   B joins at 400 (A's, from the heap); C joins at 400 (B pooled)
 *   bytes A 100 (A 500), B 200 (B 600); C is still pooled at 400
 *   D joins at 400: C's pool SC, below every heap class (A 500, B 600)
 *   bytes C 300 (C 700), D 100 (D 500)
 *   E joins at 500 (pool empty: min(A 500, B 600, C 700, D 500))
 *   A ends; bytes E 150 (E 650), D 300 (D 800)
 *   F joins at 600 (pool empty: min(B 600, C 700, D 800, E 650))
 *   G joins at 600 (F pooled)
 */
START_TEST(sc_activations_in_a_row)
{
	const double w[7] = { 1, 1, 1, 1, 1, 1, 1 };
	struct rec rec = { 0 };
	struct rs_sched *s = sc_sched(sc_policy[_i], 100, &rec, w, 7);
	rs_id a, b, c, d, e;

	a = enq(s, 0, 1, 0, 0);
	ck_assert_double_eq(service(s, 0), 0);
	rs_on_bytes(s, a, 400, 1);
	b = enq(s, 1, 2, 0, 2);
	ck_assert_double_eq_tol(service(s, 1), 400, 1e-9);
	c = enq(s, 2, 3, 0, 2);
	ck_assert_double_eq_tol(service(s, 2), 400, 1e-9);
	rs_on_bytes(s, a, 100, 3);
	rs_on_bytes(s, b, 200, 3);
	d = enq(s, 3, 4, 0, 4);
	ck_assert_double_eq_tol(service(s, 3), 400, 1e-9);
	rs_on_bytes(s, c, 300, 5);
	rs_on_bytes(s, d, 100, 5);
	e = enq(s, 4, 5, 0, 6);
	ck_assert_double_eq_tol(service(s, 4), 500, 1e-9);
	rs_on_end(s, a, false, 7);
	rs_on_bytes(s, e, 150, 7);
	rs_on_bytes(s, d, 300, 7);
	enq(s, 5, 6, 0, 8);
	ck_assert_double_eq_tol(service(s, 5), 600, 1e-9);
	enq(s, 6, 7, 0, 8);
	ck_assert_double_eq_tol(service(s, 6), 600, 1e-9);
	ck_assert_double_eq_tol(service(s, 1), 600, 1e-9);
	ck_assert_double_eq_tol(service(s, 2), 700, 1e-9);
	ck_assert_double_eq_tol(service(s, 3), 800, 1e-9);
	ck_assert_double_eq_tol(service(s, 4), 650, 1e-9);
	rs_free(s);
}
END_TEST

/*
 * Equal SCs go to the largest w*UC, and a UC change re-sorts a queued
 * class. msf, window 1, no bytes (every SC stays 0):
 *   X (w 1) takes the one window slot; Y (w 3, 1 user, w*UC 3),
 *   Z (w 2, 2 users, w*UC 4), V (w 1, 1 user, w*UC 1) queue at SC 0
 *   X ends:  Z (4 > 3 > 1)
 *   Z's released request ends: Z keeps one queued user, w*UC 2: Y (3)
 *   Y's ends: Z (2 > 1); Z's ends: V.
 */
START_TEST(msf_ties_to_largest_wuc)
{
	const double w[4] = { 1, 3, 2, 1 };
	struct rec rec = { 0 };
	struct rs_sched *s = sc_sched(RS_POLICY_MSF, 1, &rec, w, 4);
	rs_id x, y, z1, z2, v;

	x = enq(s, 0, 1, 0, 0);
	y = enq(s, 1, 2, 0, 0);
	v = enq(s, 3, 5, 0, 0);
	z1 = enq(s, 2, 3, 0, 0);
	z2 = enq(s, 2, 4, 0, 0);
	ck_assert_uint_eq(cstats(s, 2).active_users, 2);
	ck_assert_int_eq(rec.n, 1);
	ck_assert(rec.id[0] == x);
	rs_on_end(s, x, false, 1);
	ck_assert_int_eq(rec.n, 2);
	ck_assert(rec.id[1] == z1);
	rs_on_end(s, z1, false, 2);
	ck_assert_uint_eq(cstats(s, 2).active_users, 1);
	ck_assert(rec.id[2] == y);
	rs_on_end(s, y, false, 3);
	ck_assert(rec.id[3] == z2);
	rs_on_end(s, z2, false, 4);
	ck_assert(rec.id[4] == v);
	ck_assert_int_eq(rec.n, 5);
	rs_free(s);
}
END_TEST

/*
 * When every class is idle all SCs read 0, a returning class starts at
 * 0, and old heap entries from before the reset (keys 900 and 300) must
 * not raise the minimum. Weights 1, window 100:
 *   A, B join at 0; bytes A 900, B 300; C joins at 300
 *   all end: every SC reads 0
 *   B, A return at 0 (pooled); bytes A 100, B 200
 *   C returns: A and B leave the pool (old entries lowered from 900 and
 *   300); min(A 100, B 200) = 100.
 */
START_TEST(sc_all_idle_resets_to_zero)
{
	const double w[3] = { 1, 1, 1 };
	struct rec rec = { 0 };
	struct rs_sched *s = sc_sched(sc_policy[_i], 100, &rec, w, 3);
	rs_id a, b, c;
	int i;

	a = enq(s, 0, 1, 0, 0);
	b = enq(s, 1, 2, 0, 0);
	rs_on_bytes(s, a, 900, 1);
	rs_on_bytes(s, b, 300, 1);
	c = enq(s, 2, 3, 0, 2);
	ck_assert_double_eq_tol(service(s, 0), 900, 1e-9);
	ck_assert_double_eq_tol(service(s, 2), 300, 1e-9);
	rs_on_end(s, a, false, 3);
	rs_on_end(s, b, false, 3);
	ck_assert_double_eq_tol(service(s, 0), 900, 1e-9); /* C active */
	rs_on_end(s, c, false, 3);
	for (i = 0; i < 3; i++)
		ck_assert_double_eq(service(s, i), 0);
	b = enq(s, 1, 2, 0, 4);
	a = enq(s, 0, 1, 0, 4);
	ck_assert_double_eq(service(s, 0), 0);
	ck_assert_double_eq(service(s, 1), 0);
	rs_on_bytes(s, a, 100, 5);
	rs_on_bytes(s, b, 200, 5);
	enq(s, 2, 3, 0, 6);
	ck_assert_double_eq_tol(service(s, 0), 100, 1e-9);
	ck_assert_double_eq_tol(service(s, 1), 200, 1e-9);
	ck_assert_double_eq_tol(service(s, 2), 100, 1e-9);
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
	tcase_add_loop_test(tc, sc_idle_class_restarts_at_active_min, 0, 2);
	tcase_add_loop_test(tc, sc_pooled_class_ordered_against_heap, 0, 2);
	tcase_add_loop_test(tc, sc_returning_class_keeps_its_service, 0, 2);
	tcase_add_loop_test(tc, sc_returning_class_entry_rises, 0, 2);
	tcase_add_loop_test(tc, sc_activations_in_a_row, 0, 2);
	tcase_add_test(tc, msf_ties_to_largest_wuc);
	tcase_add_loop_test(tc, sc_all_idle_resets_to_zero, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
