/* SPDX-License-Identifier: GPL-2.0-or-later */
/* harness.h - shared helpers of the libreqsched Check tests. */
#ifndef REQSCHED_TEST_HARNESS_H
#define REQSCHED_TEST_HARNESS_H

#include <check.h>
#include <string.h>

#include "reqsched.h"

#define SEC RS_NSEC_PER_SEC
#define MS (SEC / 1000)
#define MAXREL 4096

/* Records every release callback, in order. */
struct rec {
	rs_id id[MAXREL];
	void *cookie[MAXREL];
	int n;
};

static inline void rec_release(void *ctx, rs_id id, void *cookie)
{
	struct rec *r = ctx;

	ck_assert_int_lt(r->n, MAXREL);
	r->id[r->n] = id;
	r->cookie[r->n] = cookie;
	r->n++;
}

static inline struct rs_config cfg_base(enum rs_policy p,
					enum rs_controller c)
{
	struct rs_config cfg;

	rs_config_default(&cfg);
	cfg.policy = p;
	cfg.controller = c;
	cfg.link_bps = 8000000;		/* 1,000,000 bytes/s */
	cfg.update_interval = SEC;
	cfg.fixed_window = 1;
	return cfg;
}

/* A scheduler of cfg releasing into rec, with the one class "c" of
 * weight 1 (index 0). */
static inline struct rs_sched *new_one_class(const struct rs_config *cfg,
					     struct rec *rec)
{
	struct rs_sched *s = rs_new(cfg, rec_release, rec);

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(rs_class_add(s, "c", 1), 0);
	return s;
}

/* Enqueue and return the id, failing the test on error. */
static inline rs_id enq(struct rs_sched *s, int cls, uint64_t user,
			uint64_t est, rs_time_ns now)
{
	struct rs_req_info info = { 0, 0, 0, est };
	rs_id id = 0;

	ck_assert_int_eq(rs_enqueue(s, cls, user, &info, (void *)(uintptr_t)user,
				    now, &id), 0);
	ck_assert(id != 0);
	return id;
}

/* Enqueue n requests of user in class 0 at now; returns the first id. */
static inline rs_id enq_n(struct rs_sched *s, int n, uint64_t user,
			  rs_time_ns now)
{
	rs_id first = enq(s, 0, user, 0, now);

	while (--n > 0)
		enq(s, 0, user, 0, now);
	return first;
}

/* The latest release must be id: end it (ok, no bytes) at now. */
static inline void end_latest(struct rs_sched *s, const struct rec *rec,
			      rs_id id, rs_time_ns now)
{
	ck_assert_int_gt(rec->n, 0);
	ck_assert(rec->id[rec->n - 1] == id);
	ck_assert_int_eq(rs_on_end(s, id, false, now), 0);
}

static inline double service(struct rs_sched *s, int cls)
{
	struct rs_class_stats cs;

	ck_assert_int_eq(rs_get_class_stats(s, cls, &cs), 0);
	return cs.service;
}

static inline struct rs_class_stats cstats(struct rs_sched *s, int cls)
{
	struct rs_class_stats cs;

	ck_assert_int_eq(rs_get_class_stats(s, cls, &cs), 0);
	return cs;
}

static inline struct rs_stats gstats(struct rs_sched *s)
{
	struct rs_stats st;

	rs_get_stats(s, &st);
	return st;
}

Suite *suite_msf(void);
Suite *suite_window(void);
Suite *suite_misuse(void);
Suite *suite_drr(void);
Suite *suite_rtc(void);
Suite *suite_reconfig(void);
Suite *suite_pacer(void);
Suite *suite_link(void);
Suite *suite_admission(void);
Suite *suite_slotage(void);
Suite *suite_mqos(void);
Suite *suite_share(void);
Suite *suite_gate(void);
Suite *suite_costlearn(void);

#endif
