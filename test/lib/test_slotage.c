/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_slotage.c - rs_reclaim(): window slots older than a maximum age are
 * taken back, oldest first; the request stays released and still counts.
 * rs_on_link_done(): a response the link is done with hands its slot on. */
#include "harness.h"

/* A stalled response holds the only slot; at max_age it is reclaimed, the
 * queued request goes, and the stalled one still counts bytes and ends. */
START_TEST(reclaim_frees_stalled_slot)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s = new_one_class(&cfg, &rec);
	rs_id ids[4], a, b;
	void *cookies[4];
	struct rs_stats st;

	a = enq(s, 0, 1, 0, 0);
	b = enq(s, 0, 2, 0, 0);
	ck_assert_int_eq(rec.n, 1);
	ck_assert_int_eq(rs_on_bytes(s, a, 1000, SEC), 0);
	ck_assert_uint_eq(rs_reclaim(s, 10 * SEC - 1, 10 * SEC, ids, cookies, 4), 0);
	ck_assert_int_eq(rec.n, 1);
	ck_assert_uint_eq(rs_reclaim(s, 10 * SEC, 10 * SEC, ids, cookies, 4), 1);
	ck_assert(ids[0] == a);
	ck_assert_ptr_eq(cookies[0], (void *)(uintptr_t)1);
	ck_assert_int_eq(rec.n, 2);		/* b took the slot */
	ck_assert(rec.id[1] == b);
	st = gstats(s);
	ck_assert_uint_eq(st.reclaimed, 1);
	ck_assert_uint_eq(st.W, 1);
	ck_assert_uint_eq(st.long_transfers, 1);
	ck_assert_uint_eq(cstats(s, 0).outstanding, 2);
	/* still released: its bytes count, its end is due and frees no slot */
	ck_assert_int_eq(rs_on_bytes(s, a, 500, 11 * SEC), 0);
	ck_assert_uint_eq(cstats(s, 0).bytes, 1500);
	ck_assert_int_eq(rs_on_end(s, a, true, 12 * SEC), 0);
	st = gstats(s);
	ck_assert_uint_eq(st.W, 1);
	ck_assert_uint_eq(st.long_transfers, 0);
	ck_assert_int_eq(rs_on_end(s, b, false, 12 * SEC), 0);
	st = gstats(s);
	ck_assert_uint_eq(st.W, 0);
	ck_assert_uint_eq(st.ended, 2);
	ck_assert_uint_eq(st.reclaimed, 1);
	rs_free(s);
}
END_TEST

/* Oldest slot first; n bounds one call; younger slots stay. */
START_TEST(reclaim_oldest_first)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s;
	rs_id ids[4], a, b, c, d;

	cfg.fixed_window = 4;
	s = new_one_class(&cfg, &rec);
	a = enq(s, 0, 1, 0, 0);
	b = enq(s, 0, 2, 0, SEC);
	c = enq(s, 0, 3, 0, 2 * SEC);
	d = enq(s, 0, 4, 0, 5 * SEC);
	ck_assert_int_eq(rs_on_end(s, a, false, 3 * SEC), 0);	/* gone */
	ck_assert_uint_eq(rs_reclaim(s, 12 * SEC, 10 * SEC, ids, NULL, 1), 1);
	ck_assert(ids[0] == b);
	ck_assert_uint_eq(rs_reclaim(s, 12 * SEC, 10 * SEC, ids, NULL, 4), 1);
	ck_assert(ids[0] == c);
	ck_assert_uint_eq(gstats(s).W, 1);			/* d */
	ck_assert_uint_eq(rs_reclaim(s, 15 * SEC, 10 * SEC, NULL, NULL, 4), 1);
	ck_assert_uint_eq(gstats(s).W, 0);
	ck_assert_uint_eq(gstats(s).reclaimed, 3);
	ck_assert_int_eq(rs_on_end(s, b, false, 16 * SEC), 0);
	ck_assert_int_eq(rs_on_end(s, c, false, 16 * SEC), 0);
	ck_assert_int_eq(rs_on_end(s, d, false, 16 * SEC), 0);
	ck_assert_uint_eq(gstats(s).long_transfers, 0);
	rs_free(s);
}
END_TEST

/* A long transfer has no slot to take back; it is never counted twice. */
START_TEST(reclaim_skips_long_transfers)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s;
	rs_id a, b;

	cfg.pacing = true;
	cfg.long_transfer = 10000;
	s = new_one_class(&cfg, &rec);
	a = enq(s, 0, 1, 0, 0);
	b = enq(s, 0, 2, 0, 0);
	ck_assert_int_eq(rs_on_bytes(s, a, 10000, SEC), 0);	/* long: b goes */
	ck_assert_int_eq(rec.n, 2);
	ck_assert_uint_eq(rs_reclaim(s, 100 * SEC, 10 * SEC, NULL, NULL, 4), 1);
	ck_assert_uint_eq(gstats(s).reclaimed, 1);		/* b, not a */
	ck_assert_uint_eq(gstats(s).long_transfers, 2);
	ck_assert_int_eq(rs_on_bytes(s, b, 20000, 101 * SEC), 0);
	ck_assert_uint_eq(gstats(s).long_transfers, 2);
	ck_assert_uint_eq(rs_reclaim(s, 200 * SEC, 10 * SEC, NULL, NULL, 4), 0);
	ck_assert_int_eq(rs_on_end(s, a, false, 200 * SEC), 0);
	ck_assert_int_eq(rs_on_end(s, b, false, 200 * SEC), 0);
	ck_assert_uint_eq(gstats(s).long_transfers, 0);
	ck_assert_uint_eq(gstats(s).W, 0);
	rs_free(s);
}
END_TEST

/* The link is done with a response the proxy still holds (an adaptation
 * service has not answered): its slot goes to the queued request at once,
 * under every controller with a window, pacing or not; a second call and a
 * later reclaim change nothing; a queued or ended request is refused. */
START_TEST(link_done_hands_the_slot_on)
{
	static const enum rs_controller ctl[] = { RS_WIN_FIXED, RS_WIN_WRC_MULT };
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, ctl[_i / 2]);
	struct rs_sched *s;
	rs_id a, b;
	struct rs_stats st;

	cfg.pacing = _i % 2;
	s = new_one_class(&cfg, &rec);
	a = enq(s, 0, 1, 0, 0);
	b = enq(s, 0, 2, 0, 0);
	ck_assert_int_eq(rec.n, 1);
	ck_assert_int_eq(rs_on_link_done(s, b, SEC), RS_ESTATE);
	ck_assert_int_eq(rs_on_bytes(s, a, 50000, SEC), 0);
	ck_assert_int_eq(rs_on_link_done(s, a, 2 * SEC), 0);
	ck_assert_int_eq(rec.n, 2);		/* b took the slot */
	ck_assert(rec.id[1] == b);
	st = gstats(s);
	ck_assert_uint_eq(st.W, 1);
	ck_assert_uint_eq(st.long_transfers, 1);
	ck_assert_uint_eq(st.reclaimed, 0);
	ck_assert_int_eq(rs_on_link_done(s, a, 3 * SEC), 0);
	ck_assert_uint_eq(rs_reclaim(s, 100 * SEC, SEC, NULL, NULL, 4), 1);
	st = gstats(s);
	ck_assert_uint_eq(st.W, 0);		/* b reclaimed, a not again */
	ck_assert_uint_eq(st.long_transfers, 2);
	/* still released: its end is due, counts its bytes, frees no slot */
	ck_assert_int_eq(rs_on_end(s, a, false, 101 * SEC), 0);
	ck_assert_int_eq(rs_on_end(s, b, false, 101 * SEC), 0);
	st = gstats(s);
	ck_assert_uint_eq(st.W, 0);
	ck_assert_uint_eq(st.long_transfers, 0);
	ck_assert_uint_eq(st.ended, 2);
	ck_assert_uint_eq(cstats(s, 0).bytes, 50000);
	ck_assert_int_eq(rs_on_link_done(s, a, 102 * SEC), RS_ESTALE);
	ck_assert_int_eq(rs_on_link_done(NULL, a, 102 * SEC), RS_EINVAL);
	rs_free(s);
}
END_TEST

static struct rs_sched *cb_sched;
static size_t cb_result = 99;

static void reclaim_in_callback(void *ctx, rs_id id, void *cookie)
{
	(void)ctx;
	(void)id;
	(void)cookie;
	cb_result = rs_reclaim(cb_sched, 100 * SEC, 0, NULL, NULL, 4);
}

/* Misuse: no instance, and from inside the release callback. */
START_TEST(reclaim_misuse)
{
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	rs_id id;

	ck_assert_uint_eq(rs_reclaim(NULL, SEC, 0, NULL, NULL, 4), 0);
	cb_sched = rs_new(&cfg, reclaim_in_callback, NULL);
	ck_assert_ptr_nonnull(cb_sched);
	ck_assert_int_eq(rs_class_add(cb_sched, "c", 1), 0);
	ck_assert_int_eq(rs_enqueue(cb_sched, 0, 1, NULL, NULL, 0, &id), 0);
	ck_assert_uint_eq(cb_result, 0);
	ck_assert_uint_eq(gstats(cb_sched).W, 1);
	ck_assert_uint_eq(gstats(cb_sched).reclaimed, 0);
	rs_free(cb_sched);
}
END_TEST

Suite *suite_slotage(void)
{
	Suite *su = suite_create("slotage");
	TCase *tc = tcase_create("reclaim");

	tcase_add_test(tc, reclaim_frees_stalled_slot);
	tcase_add_test(tc, reclaim_oldest_first);
	tcase_add_test(tc, reclaim_skips_long_transfers);
	tcase_add_test(tc, reclaim_misuse);
	tcase_add_loop_test(tc, link_done_hands_the_slot_on, 0, 4);
	suite_add_tcase(su, tc);
	return su;
}
