/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_rtc.c - RQS release-time controller, hand-computed timelines.
 * Link 1,000,000 bytes/s and U+ = 1: BW = 1e6 bytes/s when idle. */
#include "harness.h"

static struct rs_sched *rtc_new(struct rec *rec)
{
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_RTC);

	cfg.target_util = 1.0;
	return new_one_class(&cfg, rec);
}

static rs_id enq_host(struct rs_sched *s, uint64_t host, uint64_t est,
		      rs_time_ns now)
{
	struct rs_req_info info = { 0, host, 0, est };
	rs_id id = 0;

	ck_assert_int_eq(rs_enqueue(s, 0, host, &info, NULL, now, &id), 0);
	return id;
}

/* Default estimates (BW = link, D = 0), then learned ones. */
START_TEST(rtc_finish_time_and_learning)
{
	struct rec rec = { 0 };
	struct rs_sched *s = rtc_new(&rec);
	rs_id r1, r2, r3, r4;

	r1 = enq_host(s, 1, 500000, 0);	/* BW 1e6 <= 1e6: released now */
	ck_assert_int_eq(rec.n, 1);
	r2 = enq_host(s, 1, 500000, 0);	/* held: no bandwidth left */
	ck_assert_int_eq(rec.n, 1);
	ck_assert_uint_eq(gstats(s).queued, 1);
	ck_assert_uint_eq(rs_next_deadline(s), 500 * MS);	/* FT = 0.5 s */
	rs_on_first_byte(s, r1, 200000, 100 * MS);	/* FT = 0.1 + 0.2 */
	ck_assert_uint_eq(rs_next_deadline(s), 300 * MS);
	rs_on_timer(s, 300 * MS);	/* pop r1: BW 1e6, admit r2 now */
	ck_assert_int_eq(rec.n, 2);
	ck_assert(rec.id[1] == r2);
	rs_on_bytes(s, r1, 200000, 350 * MS);
	rs_on_end(s, r1, false, 350 * MS);
	/* learned: Delay_resp 0.1 s, rate 200000 / 0.25 s = 800000 B/s */
	r3 = enq_host(s, 5, 500000, 400 * MS);	/* held: r2 holds 1e6 */
	ck_assert_int_eq(rec.n, 2);
	rs_on_first_byte(s, r2, 300000, 400 * MS);	/* FT = 0.7 s */
	/* RTC runs T_lookahead = 0.1 s before T_minFT */
	ck_assert_uint_eq(rs_next_deadline(s), 600 * MS);
	rs_on_timer(s, 600 * MS);
	/* r3: BW 800000 <= 1e6, release = T_minFT - D = 0.7 - 0.1 = now */
	ck_assert_int_eq(rec.n, 3);
	ck_assert(rec.id[2] == r3);
	r4 = enq_host(s, 5, 100000, 600 * MS);	/* 800000 > 200000 left */
	ck_assert_int_eq(rec.n, 3);
	/* r3 FT = 0.6 + 0.1 + 500000 / 800000 = 1.325 s; r2 already popped */
	ck_assert_uint_eq(rs_next_deadline(s), 1000 * MS);	/* stats tick */
	rs_on_timer(s, 1000 * MS);
	ck_assert_uint_eq(rs_next_deadline(s), 1225 * MS);	/* 1.325 - 0.1 */
	ck_assert_int_eq(rs_cancel(s, r4, 1100 * MS), 0);
	rs_on_end(s, r2, false, 1200 * MS);
	rs_on_end(s, r3, false, 1200 * MS);
	ck_assert_uint_eq(gstats(s).W, 0);
	ck_assert_uint_eq(gstats(s).queued, 0);
	rs_free(s);
}
END_TEST

/* One response each teaches host 1 Delay_resp 0.2 s and host 2 0.05 s,
 * both at 1e6 B/s (ends at 0.3 s and 1.15 s): T_lookahead = 0.2 - 0.15/16. */
static void learn_two_hosts(struct rs_sched *s, struct rec *rec)
{
	rs_id a, b;

	a = enq_host(s, 1, 100000, 0);
	rs_on_first_byte(s, a, 100000, 200 * MS);
	rs_on_bytes(s, a, 100000, 300 * MS);
	rs_on_end(s, a, false, 300 * MS);	/* host 1: D 0.2 s, 1e6 B/s */
	b = enq_host(s, 2, 100000, 1000 * MS);
	ck_assert_int_eq(rec->n, 2);
	rs_on_first_byte(s, b, 100000, 1050 * MS);
	rs_on_bytes(s, b, 100000, 1150 * MS);
	rs_on_end(s, b, false, 1150 * MS);	/* host 2: D 0.05 s */
}

/* A request with a shorter Delay_resp than T_lookahead is scheduled for
 * T_minFT - D, in the future, through H_RELEASE. */
START_TEST(rtc_release_heap)
{
	struct rec rec = { 0 };
	struct rs_sched *s = rtc_new(&rec);
	rs_id c, d;

	learn_two_hosts(s, &rec);
	c = enq_host(s, 1, 100000, 2000 * MS);	/* FT = 2 + 0.2 + 0.1 */
	ck_assert_int_eq(rec.n, 3);
	d = enq_host(s, 2, 100000, 2000 * MS);	/* held */
	ck_assert_int_eq(rec.n, 3);
	ck_assert_uint_eq(rs_next_deadline(s), 2109375 * (MS / 1000));
	rs_on_timer(s, 2109375 * (MS / 1000));
	/* admitted, release = 2.3 - 0.05 = 2.25 s: scheduled, not yet sent */
	ck_assert_int_eq(rec.n, 3);
	/* d's FT = 2.25 + 0.05 + 0.1 = 2.4: RTC runs at 2.4 - T_lookahead */
	ck_assert_uint_eq(rs_next_deadline(s), 2209375 * (MS / 1000));
	rs_on_timer(s, 2209375 * (MS / 1000));
	ck_assert_int_eq(rec.n, 3);
	ck_assert_uint_eq(rs_next_deadline(s), 2250 * MS);
	ck_assert_int_eq(rs_on_end(s, d, false, 2200 * MS), RS_ESTATE);
	rs_on_timer(s, 2250 * MS);
	ck_assert_int_eq(rec.n, 4);
	ck_assert(rec.id[3] == d);
	rs_on_end(s, c, false, 2400 * MS);
	rs_on_end(s, d, false, 2400 * MS);
	ck_assert_uint_eq(gstats(s).W, 0);
	rs_free(s);
}
END_TEST

/* Cancelling a scheduled request gives its bandwidth back. */
START_TEST(rtc_cancel_scheduled)
{
	struct rec rec = { 0 };
	struct rs_sched *s = rtc_new(&rec);
	rs_id c, d;

	learn_two_hosts(s, &rec);
	c = enq_host(s, 1, 100000, 2000 * MS);
	d = enq_host(s, 2, 100000, 2000 * MS);
	rs_on_timer(s, 2109375 * (MS / 1000));	/* d scheduled for 2.25 s */
	ck_assert_uint_eq(gstats(s).queued, 1);
	ck_assert_int_eq(rs_cancel(s, d, 2200 * MS), 0);
	ck_assert_uint_eq(gstats(s).queued, 0);
	ck_assert_uint_eq(cstats(s, 0).queued, 0);
	ck_assert(rs_next_deadline(s) > 2250 * MS);
	rs_on_end(s, c, false, 2300 * MS);
	/* nothing holds bandwidth: a full-rate request is released at once */
	enq_host(s, 3, 100000, 2400 * MS);
	ck_assert_int_eq(rec.n, 4);
	rs_free(s);
}
END_TEST

/* drr under rtc: a request taken from the policy but not released (held
 * for bandwidth) gives its deficit back when cancelled. */
START_TEST(rtc_drr_refund_on_cancel)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_DRR, RS_WIN_RTC);
	struct rs_sched *s;
	rs_id r1, r2;

	cfg.target_util = 1.0;
	cfg.drr_quantum = 1000;
	s = rs_new(&cfg, rec_release, &rec);
	rs_class_add(s, "A", 1);
	r1 = enq_host(s, 1, 600, 0);	/* DC 1000 - 600; empty: 0 */
	ck_assert_int_eq(rec.n, 1);
	r2 = enq_host(s, 1, 600, 0);	/* taken (DC 400, empty: 0), held */
	enq_host(s, 1, 600, 0);		/* A back in the round, DC 0 */
	enq_host(s, 1, 600, 0);
	ck_assert_int_eq(rec.n, 1);
	ck_assert_double_eq(service(s, 0), 0);
	/* cancel: DC 0 + 600 refunded; the next is taken (held):
	 * 600 + 1000 - 600 = 1000 (400 without the refund) */
	ck_assert_int_eq(rs_cancel(s, r2, 1), 0);
	ck_assert_double_eq(service(s, 0), 1000);
	ck_assert_uint_eq(gstats(s).queued, 2);
	rs_on_end(s, r1, false, 2);
	rs_free(s);
}
END_TEST

Suite *suite_rtc(void)
{
	Suite *s = suite_create("rtc");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, rtc_finish_time_and_learning);
	tcase_add_test(tc, rtc_release_heap);
	tcase_add_test(tc, rtc_cancel_scheduled);
	tcase_add_test(tc, rtc_drr_refund_on_cancel);
	suite_add_tcase(s, tc);
	return s;
}
