/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_share.c - SMP: a worker's share of the link from every worker's row
 * (rs_share_of), its own row (rs_share_sample), and what a share changes
 * (rs_set_link_share). Link 8 Mbit/s = 1,000,000 bytes/s, U+ = 0.98.
 * Classes: gold (weight 4, index 0) and bronze (weight 1, index 1).
 */
#include <math.h>

#include "harness.h"

static struct rs_sched *new_gold_bronze(enum rs_policy p, struct rec *rec)
{
	struct rs_config cfg = cfg_base(p, RS_WIN_FIXED);
	struct rs_sched *s = rs_new(&cfg, rec_release, rec);

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(rs_class_add(s, "gold", 4), 0);
	ck_assert_int_eq(rs_class_add(s, "bronze", 1), 1);
	return s;
}

static struct rs_share_row row(const uint32_t *users, double used,
			       bool limited)
{
	struct rs_share_row r = { users, used, 0, limited, 0, 0 };

	return r;
}

/* msf weighs users: 2 gold users (8) against 2 bronze users (2). */
START_TEST(msf_weighs_users)
{
	struct rec rec = { 0 };
	struct rs_sched *s = new_gold_bronze(RS_POLICY_MSF, &rec);
	uint32_t u0[] = { 2, 0 }, u1[] = { 0, 2 }, u2[] = { 1, 3 };
	struct rs_share_row rows[] = { row(u0, 0.5, true), row(u1, 0.5, true) };

	ck_assert_double_eq_tol(rs_share_of(s, rows, 2, 0), 0.8, 1e-12);
	ck_assert_double_eq_tol(rs_share_of(s, rows, 2, 1), 0.2, 1e-12);
	/* a worker with a gold and 3 bronze users: 7 of 8 + 7 */
	rows[1] = row(u2, 0.5, true);
	ck_assert_double_eq_tol(rs_share_of(s, rows, 2, 1), 7.0 / 15, 1e-12);
	rs_free(s);
}
END_TEST

/* rfq weighs classes (4:1 of the link), each split by the workers' users:
 * worker 0 has 1 of 4 gold users (0.8 / 4), worker 1 the other 3 and the
 * only bronze user (0.6 + 0.2). */
START_TEST(rfq_splits_classes)
{
	struct rec rec = { 0 };
	struct rs_sched *s = new_gold_bronze(RS_POLICY_RFQ, &rec);
	uint32_t u0[] = { 1, 0 }, u1[] = { 3, 1 }, u2[] = { 0, 5 };
	struct rs_share_row rows[] = { row(u0, 0.5, true), row(u1, 0.5, true) };

	ck_assert_double_eq_tol(rs_share_of(s, rows, 2, 0), 0.2, 1e-12);
	ck_assert_double_eq_tol(rs_share_of(s, rows, 2, 1), 0.8, 1e-12);
	/* class-based: 1 gold user against 5 bronze users is still 4:1 */
	rows[1] = row(u2, 0.5, true);
	ck_assert_double_eq_tol(rs_share_of(s, rows, 2, 0), 0.8, 1e-12);
	rs_free(s);
}
END_TEST

/* rfq with every worker capped: what is left still goes out, by demand;
 * the shares add up to 1 (a float sum of the open workers' weights once
 * left a hair above 0 and kept the rest back: 0.25-0.375 in all). */
START_TEST(rfq_all_capped_add_up)
{
	struct rec rec = { 0 };
	struct rs_sched *s = new_gold_bronze(RS_POLICY_RFQ, &rec);
	uint32_t u0[] = { 1, 2 }, u1[] = { 2, 0 }, u2[] = { 0, 1 };
	struct rs_share_row rows[] = { row(u0, 0.1, false), row(u1, 0.05, false),
				       row(u2, 0.02, false) };
	double sum = 0;
	unsigned i;

	for (i = 0; i < 3; i++)
		sum += rs_share_of(s, rows, 3, i);
	ck_assert_double_eq_tol(sum, 1, 1e-12);
	rs_free(s);
}
END_TEST

/* A worker that had nothing waiting keeps 1.25 times what it read; the
 * rest goes to the others by demand (work conservation). When every
 * worker is capped, what is left goes to all by demand. */
START_TEST(unused_share_goes_to_others)
{
	struct rec rec = { 0 };
	struct rs_sched *s = new_gold_bronze(RS_POLICY_MSF, &rec);
	uint32_t u0[] = { 0, 1 }, u1[] = { 1, 0 }, u2[] = { 0, 1 };
	struct rs_share_row rows[] = { row(u0, 0.1, true),
				       row(u1, 0.1, false),
				       row(u2, 0.1, true) };

	/* gold (4 of 6) is capped at 0.125: bronzes split 0.875 */
	ck_assert_double_eq_tol(rs_share_of(s, rows, 3, 1), 0.125, 1e-12);
	ck_assert_double_eq_tol(rs_share_of(s, rows, 3, 0), 0.4375, 1e-12);
	ck_assert_double_eq_tol(rs_share_of(s, rows, 3, 2), 0.4375, 1e-12);
	/* all capped at 0.125: 0.625 left, by demand 1:4:1 */
	rows[0].limited = rows[2].limited = false;
	ck_assert_double_eq_tol(rs_share_of(s, rows, 3, 0),
				0.125 + 0.625 / 6, 1e-12);
	ck_assert_double_eq_tol(rs_share_of(s, rows, 3, 1),
				0.125 + 0.625 * 4 / 6, 1e-12);
	/* a capped worker that read nothing keeps the idle share */
	rows[1].used = 0;
	rows[0].limited = true;
	ck_assert_double_eq_tol(rs_share_of(s, rows, 3, 1), 0.05 / 3, 1e-12);
	/* ... or what its outstanding responses hold (slow servers) */
	rows[1].held = 0.5;
	ck_assert_double_eq_tol(rs_share_of(s, rows, 3, 1), 0.5, 1e-12);
	ck_assert_double_eq_tol(rs_share_of(s, rows, 3, 0), 0.375, 1e-12);
	rs_free(s);
}
END_TEST

/* No users: the idle share; nobody with users: 1 / N; bad arguments. */
START_TEST(idle_workers)
{
	struct rec rec = { 0 };
	struct rs_sched *s = new_gold_bronze(RS_POLICY_MSF, &rec);
	uint32_t busy[] = { 1, 1 }, none[] = { 0, 0 };
	struct rs_share_row rows[] = { row(busy, 0.9, true), row(none, 0, false),
				       row(none, 0, false), row(none, 0, false) };
	struct rs_share_row many[RS_SHARE_MAX_WORKERS + 1];
	unsigned i;

	ck_assert_double_eq_tol(rs_share_of(s, rows, 4, 0), 1, 1e-12);
	ck_assert_double_eq_tol(rs_share_of(s, rows, 4, 3), 0.05 / 4, 1e-12);
	rows[0] = row(none, 0, false);
	ck_assert_double_eq_tol(rs_share_of(s, rows, 4, 0), 0.25, 1e-12);
	ck_assert_double_eq_tol(rs_share_of(s, rows, 4, 4), 1, 1e-12);
	ck_assert_double_eq_tol(rs_share_of(s, NULL, 4, 0), 1, 1e-12);
	for (i = 0; i <= RS_SHARE_MAX_WORKERS; i++)
		many[i] = row(busy, 0, true);
	ck_assert_double_eq_tol(rs_share_of(s, many, RS_SHARE_MAX_WORKERS + 1, 0),
				1.0 / (RS_SHARE_MAX_WORKERS + 1), 1e-12);
	rs_free(s);
}
END_TEST

/* A worker's own row: users per class (queued, outstanding, or a flow),
 * the fraction of C read since the previous sample, the fraction its
 * outstanding responses hold (W / W+ times its share), waiting requests. */
START_TEST(sample_own_row)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_share_row r;
	struct rs_sched *s;
	uint32_t users[2];
	rs_id a, b;
	rs_flow f;

	cfg.pacing = true;
	cfg.fixed_window = 2;
	s = rs_new(&cfg, rec_release, &rec);
	ck_assert_int_eq(rs_class_add(s, "gold", 4), 0);
	ck_assert_int_eq(rs_class_add(s, "bronze", 1), 1);
	ck_assert_int_eq(rs_set_link_share(s, 0.5, 0), 0);	/* W+ = 1 */
	a = enq(s, 0, 1, 0, 0);		/* released */
	b = enq(s, 0, 2, 0, 0);		/* waits */
	ck_assert_int_eq(rs_flow_open(s, 0, 1, 7, NULL, 0, &f), 0); /* a tunnel */
	ck_assert_int_eq(rs_share_sample(s, SEC, users, &r), 0);
	ck_assert_ptr_eq(r.users, users);
	ck_assert_uint_eq(users[0], 2);
	ck_assert_uint_eq(users[1], 1);
	ck_assert_double_eq_tol(r.used, 0, 1e-12);	/* no previous sample */
	ck_assert_double_eq_tol(r.held, 0.5, 1e-12);	/* W = W+, share 0.5 */
	ck_assert(r.limited);
	ck_assert_int_eq(rs_on_bytes(s, a, 250000, SEC + SEC / 4), 0);
	ck_assert_int_eq(rs_on_end(s, a, false, SEC + SEC / 4), 0);
	ck_assert_int_eq(rs_on_end(s, b, false, SEC + SEC / 4), 0);
	ck_assert_int_eq(rs_flow_close(s, f, SEC + SEC / 4), 0);
	ck_assert_int_eq(rs_share_sample(s, SEC + SEC / 2, users, &r), 0);
	ck_assert_double_eq_tol(r.used, 0.5, 1e-12);	/* 250 KB in 0.5 s */
	ck_assert_double_eq_tol(r.held, 0, 1e-12);
	ck_assert(!r.limited);
	ck_assert_int_eq(rs_share_sample(s, SEC, NULL, &r), RS_EINVAL);
	ck_assert_int_eq(rs_share_sample(s, SEC, users, NULL), RS_EINVAL);
	rs_free(s);
}
END_TEST

/* A share scales C: the pacer's rate, U, the fixed window (at least 1),
 * a link counter's bytes. Out-of-range shares are refused. */
START_TEST(share_scales_the_link)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s;
	struct rs_stats st;
	int i;

	cfg.pacing = true;
	cfg.fixed_window = 10;
	s = new_one_class(&cfg, &rec);
	ck_assert_int_eq(rs_set_link_share(s, 0.35, 0), 0);
	for (i = 0; i < 6; i++)
		enq(s, 0, (uint64_t)i + 1, 0, 0);
	st = gstats(s);
	ck_assert_uint_eq(st.W, 3);			/* floor(10 * 0.35) */
	ck_assert_double_eq_tol(st.link_share, 0.35, 1e-12);
	ck_assert_uint_eq(st.link_bps, 8000000);
	ck_assert_double_eq_tol(st.pace_bps, 8000000 * 0.98 * 0.35, 1e-6);
	ck_assert_int_eq(rs_set_link_share(s, 0.01, SEC / 10), 0);
	ck_assert_double_eq_tol(gstats(s).W_max, 1, 1e-12);	/* never below 1 */
	ck_assert_int_eq(rs_set_link_share(s, 1, SEC / 5), 0);
	ck_assert_uint_eq(gstats(s).W, 6);		/* the rest released */
	/* a whole-link counter: this worker's part is the share's */
	ck_assert_int_eq(rs_set_link_share(s, 0.5, SEC / 4), 0);
	ck_assert_int_eq(rs_set_link_source(s, RS_LINK_COUNTER, SEC / 4), 0);
	ck_assert_int_eq(rs_on_link_bytes(s, 1514 * 1000, 1000, SEC), 0);
	rs_on_timer(s, 2 * SEC);
	ck_assert_uint_eq(gstats(s).link_bytes, 1448 * 500);
	ck_assert_int_eq(rs_set_link_share(s, 0, 2 * SEC), RS_EINVAL);
	ck_assert_int_eq(rs_set_link_share(s, 1.01, 2 * SEC), RS_EINVAL);
	ck_assert_int_eq(rs_set_link_share(s, NAN, 2 * SEC), RS_EINVAL);
	ck_assert_double_eq_tol(gstats(s).link_share, 0.5, 1e-12);
	rs_free(s);
}
END_TEST

/* An adaptive window in one of several SMP workers: W+ is in the proxy's
 * units and the worker releases up to f * W+, at least 1, so the workers'
 * slots follow their shares; slow start adds one slot per end (1 / f of
 * W+). W+ 8: share 0.25 releases 2, 0.5 four, 0.05 leaves one slot (the
 * four out stay out); back at 0.5, an end in slow start makes W+ 10: five
 * slots, two released. */
START_TEST(adaptive_window_follows_the_share)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
	struct rs_sched *s;
	int i;

	cfg.pacing = true;			/* slow start */
	cfg.initial_window = 8;
	cfg.update_interval = 60 * SEC;		/* no regular update */
	s = new_one_class(&cfg, &rec);
	ck_assert_int_eq(rs_set_link_share(s, 0.25, 0), 0);
	for (i = 0; i < 8; i++)
		enq(s, 0, (uint64_t)i + 1, 0, 0);
	ck_assert_uint_eq(gstats(s).W, 2);
	ck_assert_double_eq_tol(gstats(s).W_max, 2, 1e-12);
	ck_assert_int_eq(rs_set_link_share(s, 0.5, 1), 0);
	ck_assert_uint_eq(gstats(s).W, 4);
	ck_assert_int_eq(rs_set_link_share(s, 0.05, 2), 0);
	ck_assert_double_eq_tol(gstats(s).W_max, 1, 1e-12);
	ck_assert_uint_eq(gstats(s).W, 4);
	ck_assert_int_eq(rs_set_link_share(s, 0.5, 3), 0);
	ck_assert_int_eq(rs_on_end(s, rec.id[0], false, 4), 0);
	ck_assert_double_eq_tol(gstats(s).W_max, 5, 1e-12);
	ck_assert_uint_eq(gstats(s).W, 5);
	ck_assert_int_eq(rec.n, 6);
	rs_free(s);
}
END_TEST

/* One window for the proxy: a worker's W+ becomes the rows' W+ weighted
 * by their shares, so the workers' views of it cannot drift apart (on the
 * testbed's mid-link bed with 4 workers they ended at W+ 5.0, 7.5, 9.4
 * and 12.0, and the worker at 5.0 held one slot for three users). Share
 * 0.5 of W+ 2 holds one slot; beside a row of share 0.5 at W+ 6 the mean
 * is 4: two slots, the second queued request goes. A row that is not an
 * adaptive sample (W+ 0: a fixed window) does not count; nor does a fixed
 * window follow the rows. */
START_TEST(one_window_for_the_proxy)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
	struct rs_share_row rows[3];
	struct rs_sched *s;
	uint32_t users[1];

	cfg.initial_window = 2;
	cfg.update_interval = 60 * SEC;		/* no regular update */
	s = new_one_class(&cfg, &rec);
	ck_assert_int_eq(rs_set_link_share(s, 0.5, 0), 0);
	enq(s, 0, 1, 0, 0);
	enq(s, 0, 2, 0, 0);
	ck_assert_int_eq(rec.n, 1);
	ck_assert_int_eq(rs_share_sample(s, SEC / 4, users, &rows[0]), 0);
	ck_assert_double_eq_tol(rows[0].share, 0.5, 1e-12);
	ck_assert_double_eq_tol(rows[0].window_max, 2, 1e-12);
	rows[1] = rows[0];
	rows[1].share = 0.5;
	rows[1].window_max = 6;
	rows[2] = rows[0];
	rows[2].share = 0.25;
	rows[2].window_max = 0;			/* a fixed window's row */
	ck_assert_int_eq(rs_share_window(s, rows, 3, SEC / 4), 0);
	ck_assert_double_eq_tol(rs_window_max(s), 4, 1e-12);
	ck_assert_double_eq_tol(gstats(s).W_max, 2, 1e-12);
	ck_assert_int_eq(rec.n, 2);
	/* shares need not add up to 1: a mean over the live rows */
	rows[1].share = 0.1;
	rows[1].window_max = 12;
	ck_assert_int_eq(rs_share_window(s, rows, 2, SEC / 2), 0);
	ck_assert_double_eq_tol(rs_window_max(s), (1 + 1.2) / 0.6, 1e-12);
	ck_assert_int_eq(rs_share_window(s, NULL, 2, SEC), RS_EINVAL);
	ck_assert_int_eq(rs_share_window(s, rows, 0, SEC), RS_EINVAL);
	rs_free(s);

	cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	cfg.fixed_window = 4;
	s = new_one_class(&cfg, &rec);
	ck_assert_int_eq(rs_set_link_share(s, 0.5, 0), 0);
	ck_assert_int_eq(rs_share_sample(s, SEC / 4, users, &rows[0]), 0);
	ck_assert_double_eq_tol(rows[0].window_max, 0, 1e-12);
	rows[1].share = 0.5;
	rows[1].window_max = 10;
	ck_assert_int_eq(rs_share_window(s, rows, 2, SEC / 4), 0);
	ck_assert_double_eq_tol(rs_window_max(s), 2, 1e-12);
	rs_free(s);
}
END_TEST

/* The slots a worker of share f holds on average over 20 s when W+ is
 * 4, one user keeps 4 requests queued and each request ends 100 ms after
 * its release (1-ms steps; the timer runs at its deadlines). */
static double mean_slots_held(double f)
{
	static rs_time_ns released[MAXREL];
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
	struct rs_sched *s;
	rs_time_ns t, step = SEC / 1000, end = 20 * SEC;
	double held = 0;
	int stamped = 0, ended = 0, i;

	cfg.initial_window = 4;
	cfg.update_interval = 60 * SEC;		/* no regular update */
	s = new_one_class(&cfg, &rec);
	ck_assert_int_eq(rs_set_link_share(s, f, 0), 0);
	for (i = 0; i < 4; i++)
		enq(s, 0, 1, 0, 0);
	for (t = 0; t < end; t += step) {
		for (; stamped < rec.n; stamped++)
			released[stamped] = t;
		while (ended < stamped && released[ended] + SEC / 10 <= t) {
			ck_assert_int_eq(rs_on_end(s, rec.id[ended], false, t),
					 0);
			ended++;
			enq(s, 0, 1, 0, t);
		}
		if (rs_next_deadline(s) <= t)
			rs_on_timer(s, t);
		held += (double)gstats(s).W;
	}
	rs_free(s);
	return held * (double)step / (double)end;
}

/* The part slot: a worker due x = f W+ slots holds floor(x) and one more
 * x - floor(x) of the time, so the proxy's slots add up to W+ (rounded up,
 * share 0.1 held a whole slot for 0.4 and 0.375 two for 1.5). */
START_TEST(part_slot_follows_the_share)
{
	ck_assert_double_eq_tol(mean_slots_held(0.1), 0.4, 0.03);
	ck_assert_double_eq_tol(mean_slots_held(0.375), 1.5, 0.03);
	ck_assert_double_eq_tol(mean_slots_held(0.5), 2, 1e-9);
	ck_assert_double_eq_tol(mean_slots_held(1), 4, 1e-9);
}
END_TEST

/* A switch from a fixed window to an adaptive one counts the part slot's
 * credit from the switch on, not from the last count under the fixed
 * window (which has none): share 0.375 of a fixed 8 holds 3 slots for
 * 10 s; then wrc-mult's W+ 4 makes x 1.5. Two ends at 10.1 s leave one
 * slot and a credit of -0.05 s (the 0.1 s held above floor(x)), so the
 * part slot opens at 10.2 s rather than a second later. */
START_TEST(part_slot_counts_from_a_switch)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s;
	const char *names[] = { "c" };
	const double weights[] = { 1 };
	int i;

	cfg.fixed_window = 8;
	cfg.update_interval = 60 * SEC;		/* no regular update */
	s = new_one_class(&cfg, &rec);
	ck_assert_int_eq(rs_set_link_share(s, 0.375, 0), 0);
	for (i = 0; i < 6; i++)
		enq(s, 0, 1, 0, 0);
	ck_assert_uint_eq(gstats(s).W, 3);
	cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
	cfg.initial_window = 4;
	cfg.update_interval = 60 * SEC;
	ck_assert_int_eq(rs_reconfigure(s, &cfg, names, weights, 1, "c",
					10 * SEC), 0);
	ck_assert_uint_eq(gstats(s).W, 3);
	ck_assert_int_eq(rs_on_end(s, rec.id[0], false, 10 * SEC + SEC / 10), 0);
	ck_assert_int_eq(rs_on_end(s, rec.id[1], false, 10 * SEC + SEC / 10), 0);
	ck_assert_uint_eq(gstats(s).W, 1);
	ck_assert_uint_eq(rs_next_deadline(s), 10 * SEC + SEC / 5);
	rs_on_timer(s, 10 * SEC + SEC / 5);
	ck_assert_uint_eq(gstats(s).W, 2);
	rs_free(s);
}
END_TEST

/* Bounded shares (a fixed window of 4): the claim is max(f, W / 4) (f
 * while W is the one slot every busy worker has), the share min(f, what
 * was claimed) but at least the idle share; an adaptive window is not
 * bounded (claim 0, share f). */
START_TEST(fixed_window_claims_from_the_budget)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s, *adaptive;
	int i;

	cfg.fixed_window = 4;
	s = new_one_class(&cfg, &rec);
	ck_assert_double_eq_tol(rs_share_claim(s, 0.6), 0.6, 1e-12);
	enq(s, 0, 1, 0, 0);
	/* one slot is every busy worker's floor: not claimed */
	ck_assert_double_eq_tol(rs_share_claim(s, 0.1), 0.1, 1e-12);
	for (i = 1; i < 3; i++)
		enq(s, 0, (uint64_t)i + 1, 0, 0);	/* W = 3 of 4 */
	ck_assert_uint_eq(gstats(s).W, 3);
	/* its share falls to 0.25: it keeps claiming the 3 slots it fills */
	ck_assert_double_eq_tol(rs_share_claim(s, 0.25), 0.75, 1e-12);
	ck_assert_double_eq_tol(rs_share_claim(s, 0.9), 0.9, 1e-12);
	ck_assert_double_eq_tol(rs_share_claim(s, 1.5), 1, 1e-12);
	/* it schedules what it holds of the budget, never below idle */
	ck_assert_double_eq_tol(rs_share_granted(s, 0.75, 0.5, 2), 0.5, 1e-12);
	ck_assert_double_eq_tol(rs_share_granted(s, 0.25, 0.75, 2), 0.25, 1e-12);
	ck_assert_double_eq_tol(rs_share_granted(s, 0.75, 0, 2), 0.025, 1e-12);
	/* a claim kept to a millionth is the share (6 * 1/3 stays 2 slots) */
	ck_assert_double_eq_tol(rs_share_granted(s, 1.0 / 3, 0.333333, 3),
				1.0 / 3, 1e-12);
	ck_assert_double_eq_tol(rs_share_claim(NULL, 0.5), 0, 1e-12);

	cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
	adaptive = new_one_class(&cfg, &rec);
	enq(adaptive, 0, 1, 0, 0);
	ck_assert_double_eq_tol(rs_share_claim(adaptive, 0.6), 0, 1e-12);
	ck_assert_double_eq_tol(rs_share_granted(adaptive, 0.6, 0, 2), 0.6, 1e-12);
	rs_free(adaptive);
	rs_free(s);
}
END_TEST

Suite *suite_share(void)
{
	Suite *s = suite_create("share");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, msf_weighs_users);
	tcase_add_test(tc, rfq_splits_classes);
	tcase_add_test(tc, unused_share_goes_to_others);
	tcase_add_test(tc, rfq_all_capped_add_up);
	tcase_add_test(tc, idle_workers);
	tcase_add_test(tc, sample_own_row);
	tcase_add_test(tc, share_scales_the_link);
	tcase_add_test(tc, fixed_window_claims_from_the_budget);
	tcase_add_test(tc, adaptive_window_follows_the_share);
	tcase_add_test(tc, one_window_for_the_proxy);
	tcase_add_test(tc, part_slot_follows_the_share);
	tcase_add_test(tc, part_slot_counts_from_a_switch);
	suite_add_tcase(s, tc);
	return s;
}
