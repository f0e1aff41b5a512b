/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_drr.c - drr (RQS RPC), compensation, the size estimator and the
 * sff modifier, with hand-computed expectations. */
#include "harness.h"

/* Response of exactly `bytes` bytes, then end (no compensation surprise). */
static void finish(struct rs_sched *s, rs_id id, uint64_t bytes, rs_time_ns t)
{
	ck_assert_int_eq(rs_on_bytes(s, id, bytes, t), 0);
	ck_assert_int_eq(rs_on_end(s, id, false, t), 0);
}

static struct rs_sched *drr_new(struct rec *rec, uint64_t quantum, bool comp)
{
	struct rs_config cfg = cfg_base(RS_POLICY_DRR, RS_WIN_FIXED);

	cfg.drr_quantum = quantum;
	cfg.drr_compensation = comp;
	return rs_new(&cfg, rec_release, rec);
}

/* Q = 1000 for both classes; order hand-traced through DRR visits. */
START_TEST(drr_order)
{
	struct rec rec = { 0 };
	struct rs_sched *s = drr_new(&rec, 1000, true);
	rs_id c1, a1, a2, a3, b1, b2;

	rs_class_add(s, "A", 1);
	rs_class_add(s, "B", 1);
	rs_class_add(s, "C", 1);
	c1 = enq(s, 2, 9, 100, 0);	/* released: DC_C 1000-100, then empty */
	a1 = enq(s, 0, 1, 600, 0);
	a2 = enq(s, 0, 1, 600, 0);
	a3 = enq(s, 0, 1, 600, 0);
	b1 = enq(s, 1, 2, 1500, 0);
	b2 = enq(s, 1, 2, 300, 0);
	ck_assert_double_eq(service(s, 2), 0);	/* empty class: DC = 0 */
	finish(s, c1, 100, 1);		/* A: DC 1000 -> 400, A1 */
	ck_assert(rec.id[1] == a1);
	ck_assert_double_eq(service(s, 0), 400);
	finish(s, a1, 600, 2);		/* A2 600 > 400; B: 1000 < 1500;
					 * A: 1400 -> 800, A2 */
	ck_assert(rec.id[2] == a2);
	ck_assert_double_eq(service(s, 0), 800);
	ck_assert_double_eq(service(s, 1), 1000);
	finish(s, a2, 600, 3);		/* A: 800 -> 200, A3; A empties */
	ck_assert(rec.id[3] == a3);
	ck_assert_double_eq(service(s, 0), 0);
	finish(s, a3, 600, 4);		/* B: 2000 -> 500, B1 */
	ck_assert(rec.id[4] == b1);
	ck_assert_double_eq(service(s, 1), 500);
	finish(s, b1, 1500, 5);		/* B: 500 -> 200, B2 */
	ck_assert(rec.id[5] == b2);
	rs_free(s);
}
END_TEST

/* Weights 2:1, equal sizes = quantum: 2 releases of A per release of B. */
START_TEST(drr_weighted_shares)
{
	struct rec rec = { 0 };
	struct rs_sched *s = drr_new(&rec, 1000, true);
	int per[2] = { 0 }, i, c;
	rs_id id;

	rs_class_add(s, "A", 2);
	rs_class_add(s, "B", 1);
	for (i = 0; i < 100; i++)
		for (c = 0; c < 2; c++) {
			struct rs_req_info info = { 0, 0, 0, 1000 };

			rs_enqueue(s, c, (uint64_t)c, &info,
				   (void *)(uintptr_t)(c + 1), 0, &id);
		}
	for (i = 0; i < 90; i++) {
		per[(uintptr_t)rec.cookie[i] - 1]++;
		finish(s, rec.id[i], 1000, (rs_time_ns)i + 1);
	}
	ck_assert_int_eq(per[0], 60);
	ck_assert_int_eq(per[1], 30);
	rs_free(s);
}
END_TEST

/* RQS Fig. 8: DC_i corrected by (estimate - real) once the size is known,
 * and by (Content-Length - received) at the end. */
START_TEST(drr_compensation_arithmetic)
{
	struct rec rec = { 0 };
	struct rs_sched *s = drr_new(&rec, 1000, true);
	rs_id a1, a2, b1, b2;

	rs_class_add(s, "A", 1);
	rs_class_add(s, "B", 1);
	a1 = enq(s, 0, 1, 600, 0);	/* DC_A = 1000 - 600, then empty: 0 */
	a2 = enq(s, 0, 1, 600, 0);
	ck_assert_double_eq(service(s, 0), 0);
	/* real size 900 from Content-Length: DC_A += 600 - 900 */
	ck_assert_int_eq(rs_on_first_byte(s, a1, 900, 1), 0);
	ck_assert_double_eq(service(s, 0), -300);	/* debt is kept */
	rs_on_bytes(s, a1, 950, 2);
	rs_on_end(s, a1, false, 3);	/* the 50 bytes beyond it: -350;
					 * A: -350 + 1000 = 650 -> A2 (50) */
	ck_assert(rec.id[1] == a2);
	ck_assert_double_eq(service(s, 0), 0);		/* A2 left: empty */
	/* no Content-Length: compensation at the end with the bytes seen */
	b1 = enq(s, 1, 2, 800, 4);	/* waits (window 1) */
	b2 = enq(s, 1, 2, 800, 4);
	rs_on_end(s, a2, false, 5);	/* B: 1000 -> 200, B1 */
	ck_assert(rec.id[2] == b1);
	ck_assert_double_eq(service(s, 1), 200);
	rs_on_first_byte(s, b1, -1, 6);
	rs_on_bytes(s, b1, 300, 6);
	ck_assert_double_eq(service(s, 1), 200);
	rs_on_end(s, b1, false, 7);	/* DC_B += 800 - 300 = 700; B2 fits:
					 * 700 - 800 < 0 -> +1000: 1700-800 */
	ck_assert(rec.id[3] == b2);
	ck_assert_double_eq(service(s, 1), 0);		/* empty again */
	rs_free(s);
}
END_TEST

/* A body cut short charges what arrived, not the Content-Length its first
 * byte announced (the origin closed, or the client aborted). */
START_TEST(drr_charges_bytes_received)
{
	struct rec rec = { 0 };
	struct rs_sched *s = drr_new(&rec, 1000, true);
	rs_id a1;

	rs_class_add(s, "A", 1);
	a1 = enq(s, 0, 1, 100, 0);	/* DC_A = 1000 - 100, then empty: 0 */
	ck_assert_int_eq(rs_on_first_byte(s, a1, 50000, 1), 0);
	ck_assert_double_eq(service(s, 0), 100 - 50000);
	ck_assert_int_eq(rs_on_bytes(s, a1, 3000, 2), 0);
	ck_assert_int_eq(rs_on_end(s, a1, true, 3), 0);
	ck_assert_double_eq(service(s, 0), 100 - 3000);
	rs_free(s);
}
END_TEST

START_TEST(drr_no_compensation)
{
	struct rec rec = { 0 };
	struct rs_sched *s = drr_new(&rec, 1000, false);
	rs_id a1;

	rs_class_add(s, "A", 1);
	rs_class_add(s, "B", 1);
	a1 = enq(s, 1, 9, 100, 0);	/* blocker in B */
	enq(s, 0, 1, 600, 0);
	enq(s, 0, 1, 600, 0);
	finish(s, a1, 100, 1);		/* A: 1000 - 600 = 400, one left */
	a1 = rec.id[1];
	ck_assert_double_eq(service(s, 0), 400);
	rs_on_first_byte(s, a1, 5000, 1);
	rs_on_bytes(s, a1, 5000, 1);
	ck_assert_double_eq(service(s, 0), 400);	/* not compensated */
	rs_free(s);
}
END_TEST

/* A class that owes more than one quantum gets several rounds' quanta at
 * once (skip) and is served only after paying the debt. */
START_TEST(drr_debt_and_skip)
{
	struct rec rec = { 0 };
	struct rs_sched *s = drr_new(&rec, 1000, true);
	rs_id a1, a2;

	rs_class_add(s, "A", 1);
	a1 = enq(s, 0, 1, 100, 0);
	rs_on_first_byte(s, a1, 5000, 1);	/* DC_A = 0 + 100 - 5000 */
	ck_assert_double_eq(service(s, 0), -4900);
	a2 = enq(s, 0, 1, 100, 2);		/* waits for the window */
	rs_on_bytes(s, a1, 5000, 2);		/* as announced */
	rs_on_end(s, a1, false, 3);
	/* -4900 + 1000 = -3900; skip 3 rounds: -900; +1000 = 100 -> 0 */
	ck_assert_int_eq(rec.n, 2);
	ck_assert(rec.id[1] == a2);
	ck_assert_double_eq(service(s, 0), 0);
	rs_free(s);
}
END_TEST

/* Estimator: default, URL, host EWMA (1/8), content type, aborts ignored. */
START_TEST(estimator_learning)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_DRR, RS_WIN_FIXED);
	struct rs_sched *s;
	struct rs_req_info i1 = { 11, 100, 7, 0 }, i2 = { 12, 100, 7, 0 };
	struct rs_req_info i3 = { 13, 100, 7, 0 }, other = { 99, 200, 7, 0 };
	struct rs_req_info none = { 99, 200, 8, 0 };
	rs_id id;

	cfg.fixed_window = 10;
	s = rs_new(&cfg, rec_release, &rec);
	rs_class_add(s, "A", 1);
	ck_assert_uint_eq(rs_estimate_size(s, NULL), 27656);
	ck_assert_uint_eq(rs_estimate_size(s, &i1), 27656);
	rs_enqueue(s, 0, 1, &i1, NULL, 0, &id);
	rs_on_bytes(s, id, 5000, 1);
	rs_on_end(s, id, false, 2);
	ck_assert_uint_eq(rs_estimate_size(s, &i1), 5000);	/* URL */
	ck_assert_uint_eq(rs_estimate_size(s, &i3), 5000);	/* host */
	ck_assert_uint_eq(rs_estimate_size(s, &other), 5000);	/* type */
	ck_assert_uint_eq(rs_estimate_size(s, &none), 27656);
	rs_enqueue(s, 0, 1, &i2, NULL, 3, &id);
	rs_on_bytes(s, id, 13000, 4);
	rs_on_end(s, id, false, 5);
	ck_assert_uint_eq(rs_estimate_size(s, &i2), 13000);
	ck_assert_uint_eq(rs_estimate_size(s, &i3), 6000);	/* 5000+8000/8 */
	ck_assert_uint_eq(rs_estimate_size(s, &i1), 5000);
	rs_enqueue(s, 0, 1, &i1, NULL, 6, &id);
	rs_on_bytes(s, id, 90000, 7);
	rs_on_end(s, id, true, 8);				/* aborted */
	ck_assert_uint_eq(rs_estimate_size(s, &i1), 5000);
	i1.est_size = 42;
	ck_assert_uint_eq(rs_estimate_size(s, &i1), 42);	/* caller wins */
	rs_free(s);
}
END_TEST

/* Only drr, sff and rtc read size estimates; under msf and rfq a request is
 * charged default_size (or the caller's est_size) and teaches nothing. */
START_TEST(estimator_only_when_read)
{
	static const struct {
		enum rs_policy p;
		enum rs_controller w;
		bool sff;
		int reads;
	} want[] = {
		{ RS_POLICY_MSF, RS_WIN_FIXED, false, 0 },
		{ RS_POLICY_RFQ, RS_WIN_WRC_MULT, false, 0 },
		{ RS_POLICY_MSF, RS_WIN_FIXED, true, 1 },
		{ RS_POLICY_DRR, RS_WIN_FIXED, false, 1 },
		{ RS_POLICY_MSF, RS_WIN_RTC, false, 1 },
	};
	struct rs_req_info i1 = { 11, 100, 7, 0 };
	struct rec rec = { 0 };
	size_t k;
	rs_id id;

	ck_assert_int_eq(rs_reads_size_estimates(NULL), 0);
	for (k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		struct rs_config cfg = cfg_base(want[k].p, want[k].w);
		struct rs_sched *s;

		cfg.fixed_window = 10;
		cfg.sff = want[k].sff;
		s = rs_new(&cfg, rec_release, &rec);
		rs_class_add(s, "A", 1);
		ck_assert_int_eq(rs_reads_size_estimates(s), want[k].reads);
		rs_enqueue(s, 0, 1, &i1, NULL, 0, &id);
		rs_on_bytes(s, id, 5000, 1);
		rs_on_end(s, id, false, 2);
		ck_assert_uint_eq(rs_estimate_size(s, &i1),
				  want[k].reads ? 5000 : 27656);
		i1.est_size = 42;
		ck_assert_uint_eq(rs_estimate_size(s, &i1), 42);
		i1.est_size = 0;
		rs_free(s);
	}
}
END_TEST

/* Bounded memory: 100,000 URLs fit in fixed tables; recent ones survive. */
static void ignore_release(void *ctx, rs_id id, void *cookie)
{
	(void)ctx;
	(void)id;
	(void)cookie;
}

START_TEST(estimator_bounded)
{
	struct rs_config cfg = cfg_base(RS_POLICY_DRR, RS_WIN_FIXED);
	struct rs_sched *s = rs_new(&cfg, ignore_release, NULL);
	struct rs_req_info info = { 0, 0, 0, 0 };
	uint64_t u;
	rs_id id;

	rs_class_add(s, "A", 1);
	for (u = 1; u <= 100000; u++) {
		info.url_key = rs_hash(&u, sizeof(u));
		rs_enqueue(s, 0, 1, &info, NULL, u, &id);
		rs_on_bytes(s, id, 1000 + u, u);
		rs_on_end(s, id, false, u);
	}
	ck_assert_uint_eq(rs_estimate_size(s, &info), 101000);
	rs_free(s);
}
END_TEST

static struct rs_sched *sff_new(struct rec *rec, enum rs_policy p)
{
	struct rs_config cfg = cfg_base(p, RS_WIN_FIXED);

	cfg.sff = true;		/* th 20480, alpha 2, Q_be = 27656 */
	return rs_new(&cfg, rec_release, rec);
}

/* Priority group: DC_p += 2 * 27656 = 55312; best effort: 27656. Sizes
 * 10000: P serves 6 (45312 ... -4688), then B 2 (17656, 7656, empties),
 * then P again. */
START_TEST(sff_priority_best_effort_split)
{
	enum rs_policy pol[2] = { RS_POLICY_MSF, RS_POLICY_DRR };
	int p;

	for (p = 0; p < 2; p++) {
		struct rec rec = { 0 };
		struct rs_sched *s = sff_new(&rec, pol[p]);
		rs_id blk, l2, l3, sh[8];
		int i;

		rs_class_add(s, "A", 1);
		blk = enq(s, 0, 100, 10000, 0);	/* user 100: long */
		rs_on_bytes(s, blk, 30000, 1);	/* recent 30000 >= th */
		l2 = enq(s, 0, 100, 10000, 2);
		l3 = enq(s, 0, 100, 10000, 2);
		for (i = 0; i < 8; i++)
			sh[i] = enq(s, 0, (uint64_t)i, 10000, 2);
		rs_on_end(s, blk, false, 3);
		for (i = 0; i < 6; i++)
			end_latest(s, &rec, sh[i], 4);
		end_latest(s, &rec, l2, 5);
		end_latest(s, &rec, l3, 5);
		end_latest(s, &rec, sh[6], 6);
		end_latest(s, &rec, sh[7], 6);
		ck_assert_uint_eq(gstats(s).W, 0);
		rs_free(s);
	}
}
END_TEST

/* Long transfers are never starved: with the priority group always
 * backlogged, a best-effort request leaves at least every 7 releases. */
START_TEST(sff_no_starvation)
{
	struct rec rec = { 0 };
	struct rs_sched *s = sff_new(&rec, RS_POLICY_MSF);
	int i, since_long = 0, longs = 0;
	uint64_t next_user = 1000;
	rs_id blk;

	rs_class_add(s, "A", 1);
	blk = enq(s, 0, 1, 10000, 0);
	rs_on_bytes(s, blk, 1000000, 0);
	for (i = 0; i < 100; i++)
		enq(s, 0, 1, 10000, 0);		/* long user: best effort */
	for (i = 0; i < 10; i++)
		enq(s, 0, next_user++, 10000, 0);
	rs_on_end(s, blk, false, 0);
	for (i = 0; i < 70; i++) {
		rs_id cur = rec.id[rec.n - 1];
		bool is_long = rec.cookie[rec.n - 1] == (void *)1;

		if (is_long) {
			longs++;
			since_long = 0;
		} else {
			ck_assert_int_lt(++since_long, 7);
		}
		enq(s, 0, next_user++, 10000, 1);	/* keep P backlogged */
		rs_on_end(s, cur, false, 1);
	}
	ck_assert_int_ge(longs, 10);
	rs_free(s);
}
END_TEST

/*
 * Window 1, held by blk: user 100 then user 7 queue at t (estimates
 * 10000). Ends blk and returns the user released first (the priority
 * one, else FIFO); checks the other follows, and ends both.
 */
static uint64_t first_of_100_and_7(struct rs_sched *s, struct rec *rec,
				   rs_id blk, rs_time_ns t)
{
	rs_id l = enq(s, 0, 100, 10000, t);
	rs_id sh = enq(s, 0, 7, 10000, t);
	rs_id first;

	rs_on_end(s, blk, false, t);
	first = rec->id[rec->n - 1];
	ck_assert(first == l || first == sh);
	end_latest(s, rec, first, t);
	end_latest(s, rec, first == l ? sh : l, t);
	return first == l ? 100 : 7;
}

/* A long user silent longer than the flow timeout is short again. */
START_TEST(sff_flow_timeout)
{
	struct rec rec = { 0 };
	struct rs_sched *s = sff_new(&rec, RS_POLICY_MSF);
	rs_id blk;

	rs_class_add(s, "A", 1);
	blk = enq(s, 0, 100, 10000, 0);
	rs_on_bytes(s, blk, 30000, 0);
	rs_on_end(s, blk, false, 0);
	/* within the timeout: still best effort (user entry kept while idle) */
	ck_assert_uint_eq(gstats(s).users, 1);
	blk = enq(s, 0, 50, 10000, 5 * SEC);	/* blocker, released */
	/* 100 best effort, 7 priority */
	ck_assert_uint_eq(first_of_100_and_7(s, &rec, blk, 5 * SEC), 7);
	/* 11 s of silence: recent service forgotten */
	blk = enq(s, 0, 50, 10000, 17 * SEC);
	/* both priority again: FIFO */
	ck_assert_uint_eq(first_of_100_and_7(s, &rec, blk, 17 * SEC), 100);
	rs_on_timer(s, 40 * SEC);	/* idle entries expire */
	ck_assert_uint_eq(gstats(s).users, 0);
	rs_free(s);
}
END_TEST

/*
 * The idle ring is lazy (users.c): an entry used again stays at its old
 * place, and is freed one flow timeout (10 s) after its last end, not
 * after its first. User 100: ends at 0 (on the ring since 0), asks again
 * at 5 s, ends at 6 s; at 11 s the head's 0 is past the timeout but its
 * last end is not: kept (back on the ring since 6 s); freed at 16.5 s.
 * User 7: ends at 20 s, asks again at 25 s and is still live at 31 s: off
 * the ring, kept; ends at 32 s: kept at 41 s, freed at 42.5 s.
 */
START_TEST(sff_idle_entry_expires_after_its_last_end)
{
	struct rec rec = { 0 };
	struct rs_sched *s = sff_new(&rec, RS_POLICY_MSF);
	rs_id id;

	rs_class_add(s, "A", 1);
	rs_on_end(s, enq(s, 0, 100, 10000, 0), false, 0);
	rs_on_end(s, enq(s, 0, 100, 10000, 5 * SEC), false, 6 * SEC);
	rs_on_timer(s, 11 * SEC);
	ck_assert_uint_eq(gstats(s).users, 1);
	rs_on_timer(s, 16 * SEC);
	ck_assert_uint_eq(gstats(s).users, 1);
	rs_on_timer(s, 16 * SEC + SEC / 2);
	ck_assert_uint_eq(gstats(s).users, 0);

	rs_on_end(s, enq(s, 0, 7, 10000, 20 * SEC), false, 20 * SEC);
	id = enq(s, 0, 7, 10000, 25 * SEC);
	rs_on_timer(s, 31 * SEC);
	ck_assert_uint_eq(gstats(s).users, 1);
	rs_on_end(s, id, false, 32 * SEC);
	rs_on_timer(s, 41 * SEC);
	ck_assert_uint_eq(gstats(s).users, 1);
	rs_on_timer(s, 42 * SEC + SEC / 2);
	ck_assert_uint_eq(gstats(s).users, 0);
	rs_free(s);
}
END_TEST

/* Foreign bytes of an active user count as its recent service. */
START_TEST(sff_foreign_bytes_make_long)
{
	struct rec rec = { 0 };
	struct rs_sched *s = sff_new(&rec, RS_POLICY_MSF);
	rs_id blk;

	rs_class_add(s, "A", 1);
	blk = enq(s, 0, 100, 10000, 0);
	ck_assert_int_eq(rs_on_foreign_bytes(s, 0, 100, 25000, 0), 0);
	/* 100: recent 25000 >= th: best effort; 7 priority */
	ck_assert_uint_eq(first_of_100_and_7(s, &rec, blk, 0), 7);
	rs_free(s);
}
END_TEST

Suite *suite_drr(void)
{
	Suite *s = suite_create("drr");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, drr_order);
	tcase_add_test(tc, drr_weighted_shares);
	tcase_add_test(tc, drr_compensation_arithmetic);
	tcase_add_test(tc, drr_charges_bytes_received);
	tcase_add_test(tc, drr_no_compensation);
	tcase_add_test(tc, drr_debt_and_skip);
	tcase_add_test(tc, estimator_learning);
	tcase_add_test(tc, estimator_bounded);
	tcase_add_test(tc, estimator_only_when_read);
	tcase_add_test(tc, sff_priority_best_effort_split);
	tcase_add_test(tc, sff_no_starvation);
	tcase_add_test(tc, sff_flow_timeout);
	tcase_add_test(tc, sff_idle_entry_expires_after_its_last_end);
	tcase_add_test(tc, sff_foreign_bytes_make_long);
	suite_add_tcase(s, tc);
	return s;
}
