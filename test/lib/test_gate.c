/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_gate.c - SMP byte gates (gate.c): two workers' pacers reading
 * through one table of gates. Link 80 Mbit/s, U+ = 0.98: the proxy's
 * R = 9,800,000 bytes/s. msf, classes gold (weight 4) and bronze (weight 1).
 * Worker A serves a gold user who waits for its server (its flow is open
 * and never asks) and a backlogged bronze user; worker B a backlogged gold
 * user. Shares (share.c): A 5/9, B 4/9. The proxy's weights: gold 8/9
 * (two users of 4), bronze 1/9.
 */
#include <math.h>

#include "harness.h"

#define RUN (2 * SEC)
#define R_RUN (9800000.0 * RUN / SEC)	/* what R carries over RUN */

static void no_wake(void *ctx, rs_flow f, void *cookie)
{
	(void)ctx;
	(void)f;
	(void)cookie;
}

static struct rs_sched *new_worker(struct rec *rec)
{
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s;

	cfg.link_bps = 80000000;
	cfg.pacing = true;
	cfg.update_interval = 60 * SEC;	/* every timer is the pacer's */
	s = rs_new(&cfg, rec_release, rec);
	ck_assert_ptr_nonnull(s);
	rs_set_wake(s, no_wake);
	ck_assert_int_eq(rs_class_add(s, "gold", 4), 0);
	ck_assert_int_eq(rs_class_add(s, "bronze", 1), 1);
	return s;
}

static rs_flow open_flow(struct rs_sched *s, int cls, uint64_t user)
{
	rs_flow f = 0;

	ck_assert_int_eq(rs_flow_open(s, 0, cls, user, NULL, 0, &f), 0);
	return f;
}

/* Flow f reads all it is allowed, 9,800 bytes at a time; returns it. */
static uint64_t read_all(struct rs_sched *s, rs_flow f, rs_time_ns now)
{
	uint64_t got = 0;
	int64_t g;

	while ((g = rs_flow_allowance(s, f, 9800, now)) > 0) {
		ck_assert_int_eq(rs_flow_read(s, f, (uint64_t)g, now), 0);
		got += (uint64_t)g;
	}
	ck_assert_int_eq(g, 0);
	return got;
}

/* A's gold user: 0 (waits for its server), or bytes/s its server sends
 * every 10 ms: it then asks for a buffer (16 KB, as Squid) and reads what
 * came. */
struct slow_reader {
	double rate;
	uint64_t got;
};

/* Runs both workers for RUN, each from deadline to deadline, with or
 * without gates, A's gold user slow or waiting for its server, B's gold
 * user reading or waiting too; the bytes bronze (A) and gold (B) read. */
static void run_two(bool gates, struct slow_reader *slow, bool gold_reads,
		    uint64_t *bronze, uint64_t *gold)
{
	struct rec ra = { 0 }, rb = { 0 };
	struct rs_sched *a = new_worker(&ra), *b = new_worker(&rb);
	uint32_t ua[] = { 1, 1 }, ub[] = { 1, 0 };
	struct rs_share_row rows[] = { { ua, 0, 0, true, 0, 0 }, { ub, 0, 0, true, 0, 0 } };
	uint64_t table[RS_SHARE_GATES(2)] = { 0 };
	rs_flow fs, fb, fg;
	rs_time_ns now = 0, tick = 0;
	double due = 0;

	fs = open_flow(a, 0, 1);
	fb = open_flow(a, 1, 2);
	fg = open_flow(b, 0, 3);
	ck_assert_int_eq(rs_set_link_share(a, rs_share_of(a, rows, 2, 0), 0), 0);
	ck_assert_int_eq(rs_set_link_share(b, rs_share_of(b, rows, 2, 1), 0), 0);
	if (gates) {
		ck_assert_int_eq(rs_share_gates(a, table, rows, 2, 0, 0), 0);
		ck_assert_int_eq(rs_share_gates(b, table, rows, 2, 1, 0), 0);
	}
	*bronze = *gold = slow->got = 0;
	for (;;) {
		rs_time_ns ta, tb;

		if (gold_reads)		/* B first: it wins every tie */
			*gold += read_all(b, fg, now);
		if (now >= tick && slow->rate > 0) {	/* its server sent */
			due += slow->rate / 100;
			tick += SEC / 100;
		}
		if (due >= 1) {	/* asks for a buffer, reads what came */
			int64_t g = rs_flow_allowance(a, fs, 16384, now);
			uint64_t n = (uint64_t)fmin((double)g, floor(due));

			ck_assert_int_ge(g, 0);
			ck_assert_int_eq(rs_flow_read(a, fs, n, now), 0);
			due -= (double)n;
			slow->got += n;
		}
		*bronze += read_all(a, fb, now);
		ta = rs_next_deadline(a);
		tb = rs_next_deadline(b);
		now = ta < tb ? ta : tb;
		if (slow->rate > 0 && tick < now)
			now = tick;
		ck_assert(now != UINT64_MAX);
		if (now > RUN)
			break;
		if (tb == now)
			rs_on_timer(b, now);
		if (ta == now)
			rs_on_timer(a, now);
	}
	rs_free(a);
	rs_free(b);
}

/* With gates, gold's share goes to its user in B while A's gold user waits:
 * bronze reads its 1/9 of R and gold 8/9, and together they read R (no
 * less than 95 % of it over 2 s; the gates start full). Without them, A's
 * pacer lends gold's part of its 5/9 to bronze: bronze reads 5/9 of R,
 * gold 4/9. */
START_TEST(gates_keep_a_class_share_across_workers)
{
	struct slow_reader waits = { 0, 0 };
	uint64_t bronze, gold;

	run_two(true, &waits, true, &bronze, &gold);
	ck_assert_double_ge((double)(bronze + gold), 0.95 * R_RUN);
	ck_assert_double_le((double)(bronze + gold), 1.02 * R_RUN);
	ck_assert_double_eq_tol((double)bronze / (double)(bronze + gold),
				1.0 / 9, 0.02);

	run_two(false, &waits, true, &bronze, &gold);
	ck_assert_double_eq_tol((double)bronze / (double)(bronze + gold),
				5.0 / 9, 0.02);
}
END_TEST

/* Both gold users wait for their servers: bronze borrows what the proxy's
 * gate holds beyond the classes' use, all of R (A's own bucket refills at
 * R with gates); without gates it reads A's 5/9 of R until the next
 * update. */
START_TEST(gates_lend_the_spare_to_any_class)
{
	struct slow_reader waits = { 0, 0 };
	uint64_t bronze, gold;

	run_two(true, &waits, false, &bronze, &gold);
	ck_assert_uint_eq(gold, 0);
	ck_assert_double_ge((double)bronze, 0.95 * R_RUN);
	ck_assert_double_le((double)bronze, 1.02 * R_RUN);

	run_two(false, &waits, false, &bronze, &gold);
	ck_assert_double_eq_tol((double)bronze / R_RUN, 5.0 / 9, 0.02);
}
END_TEST

/* A's gold user reads from a server that sends 1,000,000 bytes/s, below
 * its part of gold (R 4/9 = 4,355,556): it gets all of it, although
 * gold's user in B needs less for a grant (q = R 4/9 * 2 ms, A's R 5/9 *
 * 2 ms), so it is woken first whenever gold's gate fills (its own gate;
 * without it A's user got nothing in Squid, and 3.5 % here); B's gold user
 * gets the rest of gold's 8/9, bronze its 1/9. */
START_TEST(gates_keep_a_slow_users_part)
{
	struct slow_reader slow = { 1000000, 0 };
	uint64_t bronze, gold;

	run_two(true, &slow, true, &bronze, &gold);
	ck_assert_double_ge((double)slow.got, 0.95 * 1000000 * RUN / SEC);
	ck_assert_double_eq_tol((double)bronze / R_RUN, 1.0 / 9, 0.02);
	ck_assert_double_eq_tol((double)(gold + slow.got) / R_RUN, 8.0 / 9, 0.03);
}
END_TEST

/* Gates are indexed by class: a class added while they are attached
 * detaches them (its flow reads without them, nothing is written past the
 * table's RS_SHARE_GATES(2) words), and a charge never moves a gate back:
 * gold's gate, 500 ms ahead (another worker's debt beyond this worker's
 * cap), stays there while A's gold user reads from its own gate. */
START_TEST(gates_follow_the_class_set)
{
	struct rec ra = { 0 };
	struct rs_sched *a = new_worker(&ra);
	uint32_t ua[] = { 1, 1 }, ub[] = { 1, 0 };
	struct rs_share_row rows[] = { { ua, 0, 0, true, 0, 0 }, { ub, 0, 0, true, 0, 0 } };
	uint64_t table[RS_SHARE_GATES(2) + 1] = { 0 };
	rs_time_ns now = SEC;
	rs_flow fg, fx;

	table[RS_SHARE_GATES(2)] = 42;		/* past the table */
	table[1] = now + SEC / 2;
	fg = open_flow(a, 0, 1);
	ck_assert_int_eq(rs_share_gates(a, table, rows, 2, 0, now), 0);
	ck_assert_uint_gt(read_all(a, fg, now), 0);
	ck_assert_uint_eq(table[1], now + SEC / 2);
	ck_assert_uint_gt(table[0], now);	/* the proxy's was charged */

	ck_assert_int_eq(rs_class_add(a, "new", 1), 2);
	now += SEC;
	ck_assert_int_eq(rs_flow_close(a, fg, now), 0);	/* it waited */
	fx = open_flow(a, 2, 9);
	ck_assert_int_gt(rs_flow_allowance(a, fx, 9800, now), 0);
	ck_assert_uint_eq(table[RS_SHARE_GATES(2)], 42);
	rs_free(a);
}
END_TEST

/* With gates a worker's flows' windows stay its share of 2 R rtt (R: its
 * part of the link, 5/9 of 9,800,000 B/s): the smaller total from the base
 * RTT (pacer.c's window_total()) would cap what it borrows. Without gates
 * the sample at 100 ms brings it to R (0.1 s + 20 ms). */
START_TEST(gates_keep_the_windows_total)
{
	uint32_t ua[] = { 1, 1 }, ub[] = { 1, 0 };
	struct rs_share_row rows[] = { { ua, 0, 0, true, 0, 0 }, { ub, 0, 0, true, 0, 0 } };
	uint64_t table[RS_SHARE_GATES(2)] = { 0 };
	double r = 9800000.0 * 5 / 9;
	int gates;

	for (gates = 0; gates <= 1; gates++) {
		struct rec ra = { 0 };
		struct rs_sched *a = new_worker(&ra);
		rs_flow f = open_flow(a, 0, 1);
		double want = gates ? 2 * r * 0.1 : r * 0.12;

		ck_assert_int_eq(rs_set_link_share(a, rs_share_of(a, rows, 2, 0),
						   0), 0);
		if (gates)
			ck_assert_int_eq(rs_share_gates(a, table, rows, 2, 0, 0),
					 0);
		ck_assert_uint_eq(rs_flow_clamp(a, f, 100 * MS),
				  (uint32_t)(2 * r * 0.1 + 0.5));
		ck_assert_int_eq(rs_flow_read(a, f, 0, 100 * MS), 0);
		ck_assert_uint_eq(rs_flow_clamp(a, f, 100 * MS),
				  (uint32_t)(want + 0.5));
		rs_free(a);
	}
}
END_TEST

Suite *suite_gate(void)
{
	Suite *s = suite_create("gate");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, gates_keep_a_class_share_across_workers);
	tcase_add_test(tc, gates_lend_the_spare_to_any_class);
	tcase_add_test(tc, gates_keep_a_slow_users_part);
	tcase_add_test(tc, gates_follow_the_class_set);
	tcase_add_test(tc, gates_keep_the_windows_total);
	suite_add_tcase(s, tc);
	return s;
}
