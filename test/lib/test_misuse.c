/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_misuse.c - misuse returns an error and changes no counter. */
#include "harness.h"

struct snap {
	struct rs_stats g;
	struct rs_class_stats c[4];
};

static void take(struct rs_sched *s, struct snap *sn)
{
	int i;

	memset(sn, 0, sizeof(*sn));
	rs_get_stats(s, &sn->g);
	for (i = 0; i < rs_class_count(s) && i < 4; i++)
		rs_get_class_stats(s, i, &sn->c[i]);
}

#define ASSERT_UNCHANGED(s, before)                                     \
	do {                                                            \
		struct snap after_;                                     \
		take((s), &after_);                                     \
		ck_assert(memcmp(&(before), &after_, sizeof(after_)) == 0); \
	} while (0)

START_TEST(misuse_requests)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s = rs_new(&cfg, rec_release, &rec);
	struct snap sn;
	rs_id r1, r2, r3, r4, bad = 0;

	rs_class_add(s, "a", 1);
	rs_class_add(s, "b", 2);
	r1 = enq(s, 0, 1, 0, 0);	/* released */
	r2 = enq(s, 1, 2, 0, 0);	/* queued */
	r3 = enq(s, 1, 3, 0, 0);	/* queued */
	rs_on_bytes(s, r1, 100, 1);
	take(s, &sn);
	ck_assert_int_eq(rs_on_end(s, r2, false, 2), RS_ESTATE);
	ck_assert_int_eq(rs_on_bytes(s, r2, 5, 2), RS_ESTATE);
	ck_assert_int_eq(rs_on_first_byte(s, r2, 10, 2), RS_ESTATE);
	ck_assert_int_eq(rs_cancel(s, r1, 2), RS_ESTATE);
	ck_assert_int_eq(rs_cancel(s, 0, 2), RS_ESTALE);
	ck_assert_int_eq(rs_on_end(s, 0xdeadbeef00000007ULL, false, 2), RS_ESTALE);
	ck_assert_int_eq(rs_on_bytes(s, 999, 1, 2), RS_ESTALE);
	ck_assert_int_eq(rs_enqueue(s, 2, 1, NULL, NULL, 2, &bad), RS_ENOCLASS);
	ck_assert_int_eq(rs_enqueue(s, -1, 1, NULL, NULL, 2, &bad), RS_ENOCLASS);
	ck_assert_int_eq(rs_enqueue(s, 0, 1, NULL, NULL, 2, NULL), RS_EINVAL);
	ck_assert_int_eq(rs_on_foreign_bytes(s, 7, 1, 10, 2), RS_ENOCLASS);
	ck_assert(bad == 0);
	ASSERT_UNCHANGED(s, sn);

	ck_assert_int_eq(rs_on_first_byte(s, r1, 100, 2), 0);
	take(s, &sn);
	ck_assert_int_eq(rs_on_first_byte(s, r1, 100, 2), RS_ESTATE);
	ASSERT_UNCHANGED(s, sn);

	ck_assert_int_eq(rs_on_end(s, r1, false, 3), 0);	/* releases r2 */
	take(s, &sn);
	ck_assert_int_eq(rs_on_end(s, r1, false, 3), RS_ESTALE);
	ck_assert_int_eq(rs_on_end(s, r1, true, 3), RS_ESTALE);
	ck_assert_int_eq(rs_on_bytes(s, r1, 1, 3), RS_ESTALE);
	ck_assert_int_eq(rs_cancel(s, r1, 3), RS_ESTALE);
	ASSERT_UNCHANGED(s, sn);

	ck_assert_int_eq(rs_cancel(s, r3, 4), 0);
	take(s, &sn);
	ck_assert_int_eq(rs_cancel(s, r3, 4), RS_ESTALE);
	ASSERT_UNCHANGED(s, sn);
	/* the slot of r3 is reused with a new generation */
	r4 = enq(s, 1, 3, 0, 5);
	ck_assert((uint32_t)r4 == (uint32_t)r3);
	ck_assert(r4 != r3);
	take(s, &sn);
	ck_assert_int_eq(rs_cancel(s, r3, 5), RS_ESTALE);
	ASSERT_UNCHANGED(s, sn);
	ck_assert_int_eq(rs_cancel(s, r4, 5), 0);
	ck_assert_uint_eq(gstats(s).cancelled, 2);
	rs_free(s);
}
END_TEST

START_TEST(misuse_classes_and_config)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s = rs_new(&cfg, rec_release, &rec);
	struct snap sn;

	ck_assert_int_eq(rs_class_add(s, "a", 1), 0);
	take(s, &sn);
	ck_assert_int_eq(rs_class_add(s, "z", 0), RS_EINVAL);
	ck_assert_int_eq(rs_class_add(s, "z", -2), RS_EINVAL);
	ck_assert_int_eq(rs_class_add(s, "z", 0.0 / 0.0), RS_EINVAL);
	ck_assert_int_eq(rs_class_add(s, "", 1), RS_EINVAL);
	ck_assert_int_eq(rs_class_add(s, NULL, 1), RS_EINVAL);
	ck_assert_int_eq(rs_class_add(s, "a", 3), RS_EEXIST);
	ck_assert_int_eq(rs_class_count(s), 1);
	ck_assert_int_eq(rs_class_find(s, "a"), 0);
	ck_assert_int_eq(rs_class_find(s, "nope"), RS_ENOCLASS);
	ASSERT_UNCHANGED(s, sn);
	rs_free(s);

	cfg.link_bps = 0;
	ck_assert_int_eq(rs_config_check(&cfg), RS_EINVAL);
	ck_assert_ptr_null(rs_new(&cfg, rec_release, &rec));
	cfg = cfg_base(RS_POLICY_MSF, RS_WIN_WRC_MULT);
	cfg.target_util = 1.5;
	ck_assert_int_eq(rs_config_check(&cfg), RS_EINVAL);
	cfg.target_util = 0.98;
	cfg.K = 0.5;
	ck_assert_int_eq(rs_config_check(&cfg), RS_EINVAL);
	cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	cfg.fixed_window = 0;
	ck_assert_int_eq(rs_config_check(&cfg), RS_EINVAL);
	ck_assert_ptr_null(rs_new(NULL, rec_release, &rec));
}
END_TEST

START_TEST(max_queued_rejects)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s;
	rs_id id = 0;

	cfg.max_queued = 2;
	s = rs_new(&cfg, rec_release, &rec);
	rs_class_add(s, "a", 1);
	enq(s, 0, 1, 0, 0);	/* released */
	enq(s, 0, 1, 0, 0);
	enq(s, 0, 1, 0, 0);
	ck_assert_int_eq(rs_enqueue(s, 0, 1, NULL, NULL, 0, &id), RS_EFULL);
	ck_assert(id == 0);
	ck_assert_uint_eq(gstats(s).rejected, 1);
	ck_assert_uint_eq(gstats(s).queued, 2);
	ck_assert_uint_eq(cstats(s, 0).queued, 2);
	rs_free(s);
}
END_TEST

/* The per-user limit refuses only the user over it, the per-class limit
 * only requests of the full class, the global one everything; a request
 * that leaves the queue (cancel, release) makes room for its user; a
 * reconfigure that merges a removed class's users into the default class
 * counts their queued requests there. */
START_TEST(queue_limits_refuse_the_offender)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	const char *names[] = { "a" };
	const double weights[] = { 1 };
	struct rs_sched *s;
	rs_id id = 0, u1;

	cfg.max_queued_user = 2;
	cfg.max_queued_class = 3;
	cfg.max_queued = 5;
	s = rs_new(&cfg, rec_release, &rec);
	rs_class_add(s, "a", 1);
	rs_class_add(s, "b", 1);
	enq(s, 0, 1, 0, 0);		/* released: not waiting */
	u1 = enq(s, 0, 1, 0, 0);
	enq(s, 0, 1, 0, 0);
	ck_assert_int_eq(rs_enqueue(s, 0, 1, NULL, NULL, 0, &id), RS_EUSERFULL);
	enq(s, 0, 2, 0, 0);		/* another user still gets in */
	ck_assert_int_eq(rs_enqueue(s, 0, 3, NULL, NULL, 0, &id), RS_ECLASSFULL);
	enq(s, 1, 1, 0, 0);		/* user 1 in class b: its own entry */
	enq(s, 1, 4, 0, 0);
	ck_assert_int_eq(rs_enqueue(s, 1, 5, NULL, NULL, 0, &id), RS_EFULL);
	ck_assert(id == 0);
	ck_assert_uint_eq(gstats(s).rejected, 3);
	ck_assert_uint_eq(gstats(s).rejected_user, 1);
	ck_assert_uint_eq(gstats(s).rejected_class, 1);
	ck_assert_uint_eq(cstats(s, 0).rejected, 2);
	ck_assert_uint_eq(cstats(s, 1).rejected, 1);
	ck_assert_uint_eq(gstats(s).queued, 5);
	ck_assert_str_eq(rs_strerror(RS_EUSERFULL),
			 "too many queued requests of this user");
	ck_assert_str_eq(rs_strerror(RS_ECLASSFULL),
			 "too many queued requests of this class");

	ck_assert_int_eq(rs_cancel(s, u1, 1), 0);
	ck_assert_int_eq(rs_enqueue(s, 0, 1, NULL, NULL, 1, &id), 0);
	ck_assert_int_eq(rs_enqueue(s, 0, 1, NULL, NULL, 1, &id), RS_EUSERFULL);

	/* b goes: user 1's request there joins its 2 in a (3 > the limit) */
	cfg.max_queued_class = 0;
	cfg.max_queued = 0;
	ck_assert_int_eq(rs_reconfigure(s, &cfg, names, weights, 1, "a", 2), 0);
	ck_assert_uint_eq(gstats(s).queued, 5);
	ck_assert_int_eq(rs_enqueue(s, 0, 1, NULL, NULL, 2, &id), RS_EUSERFULL);
	ck_assert_int_eq(rs_enqueue(s, 0, 4, NULL, NULL, 2, &id), 0);
	ck_assert_int_eq(rs_enqueue(s, 0, 4, NULL, NULL, 2, &id), RS_EUSERFULL);
	ck_assert_uint_eq(cstats(s, 0).rejected, 5);	/* b's count is gone */
	rs_free(s);
}
END_TEST

struct reenter {
	struct rs_sched *s;
	int err;
	int n;
};

static void reenter_release(void *ctx, rs_id id, void *cookie)
{
	struct reenter *r = ctx;
	rs_id x;

	(void)cookie;
	r->n++;
	r->err = rs_enqueue(r->s, 0, 9, NULL, NULL, 0, &x);
	if (r->err == 0)
		return;
	r->err = r->err == RS_EBUSY ? rs_on_end(r->s, id, false, 0) : r->err;
}

START_TEST(callback_reentry_refused)
{
	struct reenter re = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	rs_id id;

	re.s = rs_new(&cfg, reenter_release, &re);
	rs_class_add(re.s, "a", 1);
	ck_assert_int_eq(rs_enqueue(re.s, 0, 1, NULL, NULL, 0, &id), 0);
	ck_assert_int_eq(re.n, 1);
	ck_assert_int_eq(re.err, RS_EBUSY);
	ck_assert_uint_eq(gstats(re.s).W, 1);
	ck_assert_uint_eq(gstats(re.s).queued, 0);
	ck_assert_int_eq(rs_on_end(re.s, id, false, 1), 0);
	rs_free(re.s);
}
END_TEST

/* What the Squid glue's checked cookies rely on (patch 25): a cancel from
 * inside the release callback (an owner that goes away there) is refused
 * with RS_EBUSY and leaves the request queued, counted nowhere; when it is
 * released later, the callback gets the cookie it was queued with, once,
 * and the caller must still end it. */
struct cancel_in_cb {
	struct rs_sched *s;
	rs_id victim;
	int err;
	int n;
	rs_id id[4];
	void *cookie[4];
};

static void cancel_release(void *ctx, rs_id id, void *cookie)
{
	struct cancel_in_cb *c = ctx;

	ck_assert_int_lt(c->n, 4);
	c->id[c->n] = id;
	c->cookie[c->n] = cookie;
	c->n++;
	if (c->victim) {
		c->err = rs_cancel(c->s, c->victim, 0);
		c->victim = 0;
	}
}

START_TEST(cancel_inside_callback_keeps_the_request)
{
	struct cancel_in_cb c = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	rs_id a, b, v;

	c.s = rs_new(&cfg, cancel_release, &c);
	rs_class_add(c.s, "a", 1);
	a = enq(c.s, 0, 1, 0, 0);	/* released */
	b = enq(c.s, 0, 2, 0, 0);
	v = enq(c.s, 0, 3, 0, 0);
	c.victim = v;
	ck_assert_int_eq(rs_on_end(c.s, a, false, 1), 0);	/* releases b */
	ck_assert_int_eq(c.err, RS_EBUSY);
	ck_assert_int_eq(c.n, 2);
	ck_assert(c.id[1] == b);
	ck_assert_uint_eq(gstats(c.s).queued, 1);
	ck_assert_uint_eq(gstats(c.s).cancelled, 0);
	ck_assert_int_eq(rs_on_end(c.s, b, false, 2), 0);	/* releases v */
	ck_assert_int_eq(c.n, 3);
	ck_assert(c.id[2] == v);
	ck_assert_ptr_eq(c.cookie[2], (void *)(uintptr_t)3);
	ck_assert_uint_eq(gstats(c.s).W, 1);
	ck_assert_int_eq(rs_on_end(c.s, v, true, 3), 0);
	ck_assert_uint_eq(gstats(c.s).W, 0);
	ck_assert_uint_eq(gstats(c.s).ended, 3);
	rs_free(c.s);
}
END_TEST

START_TEST(strings_and_parsing)
{
	enum rs_policy p;
	enum rs_controller c;

	ck_assert_int_eq(rs_policy_parse("rfq", &p), 0);
	ck_assert_int_eq(p, RS_POLICY_RFQ);
	ck_assert_int_eq(rs_policy_parse("fifo", &p), RS_EINVAL);
	ck_assert_int_eq(rs_controller_parse("wrc-aimd", &c), 0);
	ck_assert_int_eq(c, RS_WIN_WRC_AIMD);
	ck_assert_int_eq(rs_controller_parse("fixed", &c), 0);
	ck_assert_str_eq(rs_policy_name(RS_POLICY_DRR), "drr");
	ck_assert_str_eq(rs_controller_name(RS_WIN_RTC), "rtc");
	ck_assert_str_eq(rs_strerror(RS_ESTALE),
			 "unknown, ended or cancelled request id");
	ck_assert(rs_hash("", 0) != 0);
	ck_assert(rs_hash("a", 1) == 0xaf63dc4c8601ec8cULL);	/* FNV-1a 64 */
}
END_TEST

/* Aborted ends count in ended and aborted and free the slot like ends. */
START_TEST(aborted_end_counts)
{
	struct rec rec = { 0 };
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s = rs_new(&cfg, rec_release, &rec);
	rs_id a, b;

	rs_class_add(s, "a", 1);
	a = enq(s, 0, 1, 0, 0);
	b = enq(s, 0, 2, 0, 0);
	ck_assert_int_eq(rs_on_end(s, a, true, 1), 0);
	ck_assert(rec.id[1] == b);
	ck_assert_int_eq(rs_on_end(s, b, false, 2), 0);
	ck_assert_uint_eq(gstats(s).ended, 2);
	ck_assert_uint_eq(gstats(s).aborted, 1);
	ck_assert_uint_eq(cstats(s, 0).aborted, 1);
	ck_assert_uint_eq(cstats(s, 0).ended, 2);
	ck_assert_uint_eq(gstats(s).W, 0);
	ck_assert_uint_eq(gstats(s).users, 0);
	rs_free(s);
}
END_TEST

Suite *suite_misuse(void)
{
	Suite *s = suite_create("misuse");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, misuse_requests);
	tcase_add_test(tc, misuse_classes_and_config);
	tcase_add_test(tc, max_queued_rejects);
	tcase_add_test(tc, queue_limits_refuse_the_offender);
	tcase_add_test(tc, callback_reentry_refused);
	tcase_add_test(tc, cancel_inside_callback_keeps_the_request);
	tcase_add_test(tc, strings_and_parsing);
	tcase_add_test(tc, aborted_end_counts);
	suite_add_tcase(s, tc);
	return s;
}
