/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_pacer.c - flows and the pacer (token bucket + fair order of
 * accounts by tag), hand-computed.
 *
 * Link 80 Mbit/s, U+ = 0.98: R = 9,800,000 bytes/s, B = R * 5 ms = 49,000,
 * q = R * 2 ms = 19,600; a byte adds 1 / w to its account's tag (w_min =
 * 1).
 * Link 8 Mbit/s: R = 980,000, B = 4,900, q = 1,960.
 */
#include <math.h>

#include "harness.h"

/* Records wakes; optionally tries to re-enter from inside. */
struct wakes {
	rs_flow f[MAXREL];
	int n;
	struct rs_sched *s;
	int reenter_err;
};

static struct wakes *g_wakes;	/* ctx of rs_new() is the release rec */

static void on_wake(void *ctx, rs_flow f, void *cookie)
{
	struct wakes *w = g_wakes;

	(void)ctx;
	(void)cookie;
	ck_assert_int_lt(w->n, MAXREL);
	w->f[w->n++] = f;
	if (w->s)
		w->reenter_err = (int)rs_flow_allowance(w->s, f, 1, 0);
}

static struct rs_sched *new_paced(struct rs_config *cfg, struct rec *rec,
				  struct wakes *wk)
{
	struct rs_sched *s;

	cfg->pacing = true;
	s = rs_new(cfg, rec_release, rec);
	ck_assert_ptr_nonnull(s);
	memset(wk, 0, sizeof(*wk));
	g_wakes = wk;
	rs_set_wake(s, on_wake);
	return s;
}

static rs_flow fopen_(struct rs_sched *s, rs_id req, int cls, uint64_t user,
		      rs_time_ns now)
{
	rs_flow f = 0;

	ck_assert_int_eq(rs_flow_open(s, req, cls, user, NULL, now, &f), 0);
	ck_assert(f != 0);
	return f;
}

/* Classes a (weight 3) and b (weight 1), pacing on. */
static struct rs_sched *three_to_one(struct rs_config *cfg, struct rec *rec,
				     struct wakes *wk)
{
	struct rs_sched *s = new_paced(cfg, rec, wk);

	ck_assert_int_eq(rs_class_add(s, "a", 3), 0);
	ck_assert_int_eq(rs_class_add(s, "b", 1), 1);
	return s;
}

/* The configuration of a link of 80 Mbit/s with a fixed window. */
static struct rs_config cfg_80m(enum rs_policy policy)
{
	struct rs_config cfg = cfg_base(policy, RS_WIN_FIXED);

	cfg.link_bps = 80000000;
	return cfg;
}

/* three_to_one() on a link of 80 Mbit/s. */
static struct rs_sched *paced_three_to_one(enum rs_policy policy, struct rec *rec,
					   struct wakes *wk)
{
	struct rs_config cfg = cfg_80m(policy);

	return three_to_one(&cfg, rec, wk);
}

/* Reconfigures rfq's paced_three_to_one() with pacing on or off. */
static void repace_three_to_one(struct rs_sched *s, bool pacing)
{
	struct rs_config cfg = cfg_80m(RS_POLICY_RFQ);
	const char *names[] = { "a", "b" };
	double weights[] = { 3, 1 };

	cfg.pacing = pacing;
	ck_assert_int_eq(rs_reconfigure(s, &cfg, names, weights, 2, "a", 0), 0);
}

/* fa takes the left bytes of the bucket and reads them; fa and fb then
 * both wait for 9,800 bytes. */
static void both_waiting(struct rs_sched *s, rs_flow fa, rs_flow fb, int64_t left,
			 rs_time_ns now)
{
	ck_assert_int_eq(rs_flow_allowance(s, fa, 1000000, now), left);
	ck_assert_int_eq(rs_flow_read(s, fa, (uint64_t)left, now), 0);
	ck_assert_int_eq(rs_flow_allowance(s, fa, 9800, now), 0);
	ck_assert_int_eq(rs_flow_allowance(s, fb, 9800, now), 0);
	ck_assert_uint_eq(gstats(s).flows_waiting, 2);
}

/* Runs n grants, one every ms after *now (each flow asks again after its read);
 * returns how many of them went to flow f. */
static int grants_to(struct rs_sched *s, struct wakes *wk, rs_flow f, int n,
		     rs_time_ns *now)
{
	int i, got = 0;

	for (i = 0; i < n; i++) {
		rs_flow g;

		ck_assert_uint_eq(rs_next_deadline(s), *now + MS);
		*now += MS;
		wk->n = 0;
		rs_on_timer(s, *now);
		ck_assert_int_eq(wk->n, 1);
		g = wk->f[0];
		got += g == f;
		ck_assert_int_eq(rs_flow_allowance(s, g, 9800, *now), 9800);
		ck_assert_int_eq(rs_flow_read(s, g, 9800, *now), 0);
		ck_assert_int_eq(rs_flow_allowance(s, g, 9800, *now), 0);
	}
	return got;
}

/* Weights 3:1, two backlogged accounts asking 9,800 bytes at a time, one
 * grant per ms (the tokens of 1 ms are 9,800). fa read the bucket alone
 * (tag 49,000 / 3 = 16,333; V stays 0, where that charge started), so fb
 * (tag 0) is served first, twice (9,800, 19,600); then for every grant
 * of 9,800 to fb, three to fa: in 32 grants tags 16,333 + 24 * 3,267 =
 * 94,733 and 19,600 + 8 * 9,800 = 98,000 (25 : 7 or 23 : 9 would have
 * served one above the other's tag). */
START_TEST(fair_three_to_one)
{
	struct rec rec = { 0 };
	struct wakes wk;
	struct rs_sched *s = paced_three_to_one(RS_POLICY_RFQ, &rec, &wk);
	rs_flow fa, fb;
	rs_time_ns now = 0;

	fa = fopen_(s, 0, 0, 1, 0);
	fb = fopen_(s, 0, 1, 2, 0);
	both_waiting(s, fa, fb, 49000, 0);	/* the bucket starts full: B */
	ck_assert_int_eq(grants_to(s, &wk, fb, 2, &now), 2);
	ck_assert_int_eq(grants_to(s, &wk, fa, 32, &now), 24);
	ck_assert_uint_eq(now, 34 * MS);
	/* the byte counts went to the classes as foreign bytes */
	ck_assert_uint_eq(cstats(s, 0).foreign_bytes, 49000 + 24 * 9800);
	ck_assert_uint_eq(cstats(s, 1).bytes, 10 * 9800);
	rs_free(s);
}
END_TEST

/* msf, weights 3:1. User 2 of class a read 1 ms ago (a tunnel between
 * two responses): it is present, so the backlogged user 1 of its class
 * has the weights of both, 6: a grant of 9,800 adds 1,633 to its tag,
 * against 9,800 for user 3 of class b. User 1 read 48,000 alone (at cost
 * 1 / 3: tag 16,000), so user 3 is served twice first; then in 14 grants
 * 12 to user 1 (tags 16,000 + 12 * 1,633 = 35,600 and 39,200). Once user
 * 2 has been silent for 1 s, user 1 is back to weight 3: after user 3's
 * two, 24 of 32 as in fair_three_to_one. */
START_TEST(present_user_lends_to_its_class)
{
	struct rec rec = { 0 };
	struct wakes wk;
	struct rs_sched *s = paced_three_to_one(RS_POLICY_MSF, &rec, &wk);
	rs_flow fa1, fa2, fb;
	rs_time_ns now = 0;

	fa1 = fopen_(s, 0, 0, 1, 0);
	fa2 = fopen_(s, 0, 0, 2, 0);
	fb = fopen_(s, 0, 1, 3, 0);
	ck_assert_int_eq(rs_flow_allowance(s, fa2, 1000, 0), 1000);
	ck_assert_int_eq(rs_flow_read(s, fa2, 1000, 0), 0);
	both_waiting(s, fa1, fb, 48000, 0);
	ck_assert_int_eq(grants_to(s, &wk, fb, 2, &now), 2);
	ck_assert_int_eq(grants_to(s, &wk, fa1, 14, &now), 12);
	ck_assert_uint_eq(now, 16 * MS);
	ck_assert_int_eq(rs_flow_close(s, fa1, now), 0);
	ck_assert_int_eq(rs_flow_close(s, fb, now), 0);

	now = 2 * SEC;		/* user 2 has been silent for 2 s */
	fa1 = fopen_(s, 0, 0, 1, now);
	fb = fopen_(s, 0, 1, 3, now);
	both_waiting(s, fa1, fb, 49000, now);
	ck_assert_int_eq(grants_to(s, &wk, fb, 2, &now), 2);
	ck_assert_int_eq(grants_to(s, &wk, fa1, 32, &now), 24);
	rs_free(s);
}
END_TEST

/* Tokens never exceed B: after 10 s idle the bucket holds B = 4,900; an
 * unused allowance comes back but the bucket stays capped. */
START_TEST(tokens_capped)
{
	struct rec rec = { 0 };
	struct wakes wk;
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s = new_paced(&cfg, &rec, &wk);
	rs_flow f;

	ck_assert_int_eq(rs_class_add(s, "c", 1), 0);
	f = fopen_(s, 0, 0, 1, 0);
	ck_assert_int_eq(rs_flow_allowance(s, f, 1000000, 10 * SEC), 4900);
	ck_assert_int_eq(rs_flow_read(s, f, 0, 10 * SEC), 0);	/* refund */
	ck_assert_int_eq(rs_flow_allowance(s, f, 1000000, 20 * SEC), 4900);
	ck_assert_int_eq(rs_flow_read(s, f, 4900, 20 * SEC), 0);
	/* 1 ms later: 980 bytes, less than q (1,960): wait */
	ck_assert_int_eq(rs_flow_allowance(s, f, 1000000, 20 * SEC + MS), 0);
	/* a small want needs only itself */
	rs_flow_close(s, f, 20 * SEC + MS);
	f = fopen_(s, 0, 0, 1, 20 * SEC + MS);
	ck_assert_int_eq(rs_flow_allowance(s, f, 500, 20 * SEC + MS), 500);
	/* over-reading is counted and drives the tokens negative:
	 * 480 left - 10,000 = -9,520; 10 ms later only 280 */
	ck_assert_int_eq(rs_flow_read(s, f, 10500, 20 * SEC + MS), 0);
	ck_assert_int_eq(rs_flow_allowance(s, f, 1448, 20 * SEC + 11 * MS), 0);
	ck_assert_uint_eq(cstats(s, 0).foreign_bytes, 4900 + 10500);
	rs_free(s);
}
END_TEST

/* No waiting flow: the pacer arms no timer (only the controller's
 * update interval). A waiting flow: when the tokens reach its need. */
START_TEST(idle_no_deadline)
{
	struct rec rec = { 0 };
	struct wakes wk;
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s = new_paced(&cfg, &rec, &wk);
	rs_flow fa, fb;

	ck_assert_int_eq(rs_class_add(s, "c", 1), 0);
	fa = fopen_(s, 0, 0, 1, 0);
	fb = fopen_(s, 0, 0, 2, 0);
	ck_assert_uint_eq(rs_next_deadline(s), SEC);	/* update interval */
	ck_assert_int_eq(rs_flow_allowance(s, fa, 4900, 0), 4900);
	ck_assert_uint_eq(rs_next_deadline(s), SEC);
	ck_assert_int_eq(rs_flow_allowance(s, fb, 100000, 0), 0);
	/* q = 1,960 bytes at 980,000 bytes/s: 2 ms */
	ck_assert_uint_eq(rs_next_deadline(s), 2 * MS);
	rs_on_timer(s, 2 * MS);
	ck_assert_int_eq(wk.n, 1);
	ck_assert(wk.f[0] == fb);
	ck_assert_uint_eq(gstats(s).flows_waiting, 0);
	ck_assert_uint_eq(rs_next_deadline(s), SEC);
	/* the grant: min(want, deficit 1,960, tokens 1,960) */
	ck_assert_int_eq(rs_flow_allowance(s, fb, 100000, 2 * MS), 1960);
	/* fb reads 1,460: 500 go back to the tokens and its deficit. fa
	 * waits for 1,960; fb's 100 would fit but fa waits first: both
	 * wait, and the head (fb's account, still in its turn with deficit
	 * 500) has enough: not before now + 1 ms */
	ck_assert_int_eq(rs_flow_read(s, fb, 1460, 2 * MS), 0);
	ck_assert_int_eq(rs_flow_allowance(s, fa, 100000, 2 * MS), 0);
	ck_assert_int_eq(rs_flow_allowance(s, fb, 100, 2 * MS), 0);
	ck_assert_uint_eq(gstats(s).flows_waiting, 2);
	ck_assert_uint_eq(rs_next_deadline(s), 3 * MS);
	rs_on_timer(s, 3 * MS);
	ck_assert_int_eq(wk.n, 2);
	ck_assert(wk.f[1] == fb);
	ck_assert_int_eq(rs_flow_allowance(s, fb, 100, 3 * MS), 100);
	rs_free(s);
}
END_TEST

/* A grant nobody asks for within 1 s goes back; until then it is kept. */
START_TEST(stale_grant_reclaimed)
{
	struct rec rec = { 0 };
	struct wakes wk;
	struct rs_config cfg = cfg_base(RS_POLICY_RFQ, RS_WIN_FIXED);
	struct rs_sched *s = new_paced(&cfg, &rec, &wk);
	rs_flow fa, fb, fc;

	ck_assert_int_eq(rs_class_add(s, "c", 1), 0);
	fa = fopen_(s, 0, 0, 1, 0);
	fb = fopen_(s, 0, 0, 2, 0);
	fc = fopen_(s, 0, 0, 3, 0);
	ck_assert_int_eq(rs_flow_allowance(s, fa, 4900, 0), 4900);
	ck_assert_int_eq(rs_flow_allowance(s, fb, 100000, 0), 0);
	rs_on_timer(s, 2 * MS);
	ck_assert_int_eq(wk.n, 1);		/* fb holds q = 1,960 */
	/* fc waits; the pending grant's expiry is in the deadlines */
	ck_assert_int_eq(rs_flow_allowance(s, fc, 1448, 2 * MS), 0);
	/* 1,448 bytes at 980,000 bytes/s: 1,477,551.02 ns, rounded up */
	ck_assert_uint_eq(rs_next_deadline(s), 2 * MS + 1477552);
	rs_on_timer(s, 2 * MS + 1477552);
	ck_assert_int_eq(wk.n, 2);		/* fc served, fb still holds */
	ck_assert_int_eq(rs_flow_allowance(s, fb, 100000, SEC / 2), 1960);
	ck_assert_int_eq(rs_flow_read(s, fb, 1960, SEC / 2), 0);
	/* fc never comes back: at grant + 1 s its 1,448 return to the
	 * (already full) bucket and fc asks anew from the tokens */
	ck_assert_int_eq(rs_flow_allowance(s, fc, 100000, 3 * SEC), 4900);
	rs_free(s);
}
END_TEST

/* clamp = 2 R rtt * w / sum(w) / flows of the account, 2 MSS .. min(2 R
 * rtt, 16 MiB). rfq: accounts per class; R = 980,000 bytes/s. */
START_TEST(clamp_numbers)
{
	struct rec rec = { 0 };
	struct wakes wk;
	struct rs_config cfg = cfg_base(RS_POLICY_RFQ, RS_WIN_FIXED);
	struct rs_sched *s = three_to_one(&cfg, &rec, &wk);
	rs_flow a1, a2, b1;

	a1 = fopen_(s, 0, 0, 1, 0);
	a2 = fopen_(s, 0, 0, 2, 0);
	b1 = fopen_(s, 0, 1, 3, 0);
	/* 2 * 980,000 * 0.1 = 196,000; a: 3/4 over 2 flows = 73,500 */
	ck_assert_uint_eq(rs_flow_clamp(s, a1, 100 * MS), 73500);
	ck_assert_uint_eq(rs_flow_clamp(s, a2, 0), 73500);	/* 100 ms */
	ck_assert_uint_eq(rs_flow_clamp(s, b1, 100 * MS), 49000);
	ck_assert_uint_eq(gstats(s).window_bytes, 73500 + 73500 + 49000);
	/* 1 ms: 1,960 / 4 = 490 -> floor 2,896 */
	ck_assert_uint_eq(rs_flow_clamp(s, b1, MS), 2896);
	ck_assert_uint_eq(gstats(s).window_bytes, 73500 + 73500 + 2896);
	rs_flow_close(s, a2, 0);
	ck_assert_uint_eq(gstats(s).window_bytes, 73500 + 2896);
	/* a alone over one flow: 3/4 of 196,000 */
	ck_assert_uint_eq(rs_flow_clamp(s, a1, 100 * MS), 147000);
	ck_assert_uint_eq(rs_flow_clamp(s, a2, 100 * MS), 0);	/* stale */
	rs_free(s);

	/* ceiling: 10 Gbit/s, one flow, 1 s: min(2.45e9, 16 MiB) */
	cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	cfg.link_bps = 10000000000ULL;
	s = new_paced(&cfg, &rec, &wk);
	ck_assert_int_eq(rs_class_add(s, "c", 1), 0);
	a1 = fopen_(s, 0, 0, 1, 0);
	ck_assert_uint_eq(rs_flow_clamp(s, a1, SEC), 16777216);
	/* msf: one account per user: users 1 and 2 of weight 1 share */
	a2 = fopen_(s, 0, 0, 2, 0);
	ck_assert_uint_eq(rs_flow_clamp(s, a1, MS), 1225000);	/* 2.45e6/2 */
	rs_free(s);
}
END_TEST

/* A flow that reads more than its share gets a window for what it reads:
 * clamp = max(share's, gain * rate * rtt), the rate over a sample of >= its
 * least rtt (a shorter one keeps the last rate); gain 2 while the link has
 * room (the proxy read < 90 % of R over the pacer's last 100-ms sample),
 * 1 while it is full. rfq, a 3 : b 1, R = 980,000 B/s. */
START_TEST(clamp_follows_the_read_rate)
{
	struct rec rec = { 0 };
	struct wakes wk;
	struct rs_config cfg = cfg_base(RS_POLICY_RFQ, RS_WIN_FIXED);
	struct rs_sched *s = three_to_one(&cfg, &rec, &wk);
	rs_flow a1, b1;

	a1 = fopen_(s, 0, 0, 1, 0);
	b1 = fopen_(s, 0, 1, 2, 0);
	/* nothing read yet: b's share, 196,000 / 4 */
	ck_assert_uint_eq(rs_flow_clamp(s, b1, 100 * MS), 49000);
	/* 49,000 bytes in the first 100 ms: 490,000 B/s, 2 * 49,000 */
	ck_assert_int_eq(rs_flow_read(s, b1, 49000, 100 * MS), 0);
	ck_assert_uint_eq(rs_flow_clamp(s, b1, 100 * MS), 98000);
	/* 50 ms later: a sample shorter than the RTT keeps the rate */
	ck_assert_int_eq(rs_flow_read(s, b1, 1000, 150 * MS), 0);
	ck_assert_uint_eq(rs_flow_clamp(s, b1, 100 * MS), 98000);
	/* 1,000 bytes over 200 ms: 5,000 B/s, below the share again, which
	 * the samples since 100 ms take of T = R (base RTT + 20 ms) =
	 * 117,600 (clamp_total_from_the_base_rtt): 29,400 */
	ck_assert_int_eq(rs_flow_read(s, a1, 0, 300 * MS), 0);
	ck_assert_uint_eq(rs_flow_clamp(s, b1, 100 * MS), 29400);
	/* twice R over 100 ms: the ceiling, T */
	ck_assert_int_eq(rs_flow_read(s, b1, 196000, 400 * MS), 0);
	ck_assert_uint_eq(rs_flow_clamp(s, b1, 100 * MS), 117600);
	ck_assert_uint_eq(gstats(s).window_bytes, 117600);
	/* the pacer's sample at 500 ms: 196,000 bytes in 100 ms, the link is
	 * full: b keeps what it reads, 98,000 in 100 ms, once (not twice) */
	ck_assert_int_eq(rs_flow_read(s, b1, 98000, 500 * MS), 0);
	ck_assert_uint_eq(rs_flow_clamp(s, b1, 100 * MS), 98000);
	ck_assert_uint_eq(gstats(s).window_bytes, 98000);
	/* still full at 600 ms (98,000 in 100 ms is R): 20,000 read, so
	 * 20,000 kept, below b's share: the share's 29,400 */
	ck_assert_int_eq(rs_flow_read(s, b1, 20000, 600 * MS), 0);
	ck_assert_int_eq(rs_flow_read(s, a1, 78000, 600 * MS), 0);
	ck_assert_uint_eq(rs_flow_clamp(s, b1, 100 * MS), 29400);
	rs_free(s);

	/* the window spans the least RTT measured: rtt 0 (unknown: 100 ms) is
	 * never taken for it, and a queue that doubles the RTT does not double
	 * the window */
	s = three_to_one(&cfg, &rec, &wk);
	a1 = fopen_(s, 0, 0, 1, 0);
	b1 = fopen_(s, 0, 1, 2, 0);
	ck_assert_uint_eq(rs_flow_clamp(s, b1, 0), 49000);	/* 100 ms */
	/* 147,000 bytes in 250 ms: 588,000 B/s over the least RTT, 200 ms:
	 * 2 * 588,000 * 0.2 = 235,200, above the ceiling T = R * 0.22 =
	 * 215,600 (2 R rtt is 392,000) */
	ck_assert_int_eq(rs_flow_read(s, b1, 147000, 250 * MS), 0);
	ck_assert_uint_eq(rs_flow_clamp(s, b1, 200 * MS), 215600);
	/* a least RTT of 50 ms: 2 * 588,000 * 0.05 = 58,800 (T 68,600) */
	ck_assert_uint_eq(rs_flow_clamp(s, b1, 50 * MS), 58800);
	/* the RTT back at 100 ms (a queue): still 58,800 (share 49,000) */
	ck_assert_uint_eq(rs_flow_clamp(s, b1, 100 * MS), 58800);
	rs_free(s);
}
END_TEST

/* The windows' total T is R (base RTT + 20 ms) instead of 2 R rtt once a
 * read-rate sample found that the flow with the least share still gets
 * its floor (2 MSS) of it; a queue that lengthens a flow's RTT then widens
 * no window. rfq, a 3 : b 1, R = 980,000 B/s. */
START_TEST(clamp_total_from_the_base_rtt)
{
	struct rec rec = { 0 };
	struct wakes wk;
	struct rs_config cfg = cfg_base(RS_POLICY_RFQ, RS_WIN_FIXED);
	struct rs_sched *s = three_to_one(&cfg, &rec, &wk);
	rs_flow a1, b1;
	int i;

	a1 = fopen_(s, 0, 0, 1, 0);
	b1 = fopen_(s, 0, 1, 2, 0);
	/* no sample yet: b's quarter of 2 R rtt = 196,000 */
	ck_assert_uint_eq(rs_flow_clamp(s, b1, 100 * MS), 49000);
	/* the sample at 100 ms: least share 1/4, of R * 0.12 = 117,600:
	 * 29,400 >= 2,896 */
	ck_assert_int_eq(rs_flow_read(s, a1, 0, 100 * MS), 0);
	ck_assert_uint_eq(rs_flow_clamp(s, b1, 100 * MS), 29400);
	/* an RTT of 200 ms (a queue): the base RTT stays 100 ms */
	ck_assert_uint_eq(rs_flow_clamp(s, b1, 200 * MS), 29400);
	ck_assert_uint_eq(rs_flow_clamp(s, a1, 200 * MS), 88200);
	/* 11 more flows of b: 1/4 over 12 = 1/48 of 117,600 is 2,450, below
	 * the floor: from the sample at 200 ms T is 2 R rtt again, b's flows
	 * 196,000 / 48 = 4,083 at 100 ms */
	for (i = 0; i < 11; i++)
		fopen_(s, 0, 1, 10 + (uint64_t)i, 150 * MS);
	ck_assert_uint_eq(rs_flow_clamp(s, b1, 100 * MS), 2896);
	ck_assert_int_eq(rs_flow_read(s, a1, 0, 200 * MS), 0);
	ck_assert_uint_eq(rs_flow_clamp(s, b1, 100 * MS), 4083);
	rs_free(s);
}
END_TEST

/* share_bps: msf w * (accounts of the class with flows) / sum. */
START_TEST(class_share)
{
	struct rec rec = { 0 };
	struct wakes wk;
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s = new_paced(&cfg, &rec, &wk);

	ck_assert_int_eq(rs_class_add(s, "a", 2), 0);
	ck_assert_int_eq(rs_class_add(s, "b", 1), 1);
	ck_assert_int_eq(rs_class_add(s, "c", 1), 2);
	fopen_(s, 0, 0, 1, 0);
	fopen_(s, 0, 0, 2, 0);
	fopen_(s, 0, 0, 2, 0);		/* same account */
	fopen_(s, 0, 1, 7, 0);
	/* sum = 2 + 2 + 1 = 5; R * 8 = 7,840,000 */
	ck_assert_double_eq_tol(gstats(s).pace_bps, 7840000, 1e-6);
	ck_assert_uint_eq(gstats(s).flows, 4);
	ck_assert_uint_eq(cstats(s, 0).flows, 3);
	ck_assert_double_eq_tol(cstats(s, 0).share_bps, 7840000.0 * 4 / 5, 1e-6);
	ck_assert_double_eq_tol(cstats(s, 1).share_bps, 7840000.0 / 5, 1e-6);
	ck_assert_double_eq_tol(cstats(s, 2).share_bps, 0, 1e-12);
	rs_free(s);
}
END_TEST

/* Flows bound to a request count exactly like rs_on_bytes(); misuse. */
START_TEST(bound_flow_and_errors)
{
	struct rec rec = { 0 };
	struct wakes wk;
	struct rs_config cfg = cfg_base(RS_POLICY_DRR, RS_WIN_FIXED);
	struct rs_sched *s = new_paced(&cfg, &rec, &wk);
	rs_id r1, r2;
	rs_flow f = 0, f2;

	ck_assert_int_eq(rs_class_add(s, "c", 1), 0);
	r1 = enq(s, 0, 1, 1000, 0);
	r2 = enq(s, 0, 1, 1000, 0);		/* queued */
	ck_assert_int_eq(rs_flow_open(s, r2, 0, 0, NULL, 0, &f), RS_ESTATE);
	ck_assert_int_eq(rs_flow_open(s, r1 + (1ULL << 32), 0, 0, NULL, 0, &f),
			 RS_ESTALE);
	ck_assert_int_eq(rs_flow_open(s, 0, 5, 0, NULL, 0, &f), RS_ENOCLASS);
	ck_assert_int_eq(rs_flow_open(s, 0, 0, 0, NULL, 0, NULL), RS_EINVAL);
	ck_assert_int_eq(rs_flow_open(NULL, 0, 0, 0, NULL, 0, &f), RS_EINVAL);
	f = fopen_(s, r1, 99, 99, 0);		/* cls, user ignored */
	f2 = fopen_(s, r1, 0, 0, 0);		/* a second flow (FTP data) */
	ck_assert_uint_eq(cstats(s, 0).flows, 2);
	ck_assert_int_eq(rs_flow_allowance(s, f, 0, 0), RS_EINVAL);
	ck_assert_int_eq(rs_flow_allowance(s, f, 1000, 0), 1000);
	ck_assert_int_eq(rs_flow_read(s, f, 1000, 0), 0);
	ck_assert_int_eq(rs_flow_read(s, f2, 200, 0), 0);
	ck_assert_uint_eq(cstats(s, 0).bytes, 1200);
	ck_assert_uint_eq(cstats(s, 0).foreign_bytes, 0);
	rs_on_end(s, r1, false, 1);
	/* after the end the flow's bytes are foreign bytes of its class */
	ck_assert_int_eq(rs_flow_read(s, f, 10, 1), 0);
	ck_assert_uint_eq(cstats(s, 0).foreign_bytes, 10);
	ck_assert_int_eq(rs_flow_close(s, f, 1), 0);
	ck_assert_int_eq(rs_flow_close(s, f, 1), RS_ESTALE);
	ck_assert_int_eq(rs_flow_read(s, f, 1, 1), RS_ESTALE);
	ck_assert_int_eq(rs_flow_allowance(s, f, 1, 1), RS_ESTALE);
	ck_assert_int_eq(rs_flow_allowance(s, 0, 1, 1), RS_ESTALE);
	ck_assert_uint_eq(rs_flow_clamp(s, f, 0), 0);
	ck_assert_int_eq(rs_flow_close(s, f2, 1), 0);
	ck_assert_uint_eq(gstats(s).flows, 0);
	(void)r2;
	rs_free(s);
}
END_TEST

/* The wake callback cannot re-enter (RS_EBUSY). */
START_TEST(wake_no_reentry)
{
	struct rec rec = { 0 };
	struct wakes wk;
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s = new_paced(&cfg, &rec, &wk);
	rs_flow fa, fb;

	ck_assert_int_eq(rs_class_add(s, "c", 1), 0);
	fa = fopen_(s, 0, 0, 1, 0);
	fb = fopen_(s, 0, 0, 2, 0);
	ck_assert_int_eq(rs_flow_allowance(s, fa, 4900, 0), 4900);
	ck_assert_int_eq(rs_flow_allowance(s, fb, 4900, 0), 0);
	wk.s = s;
	rs_on_timer(s, 10 * MS);
	ck_assert_int_eq(wk.n, 1);
	ck_assert_int_eq(wk.reenter_err, RS_EBUSY);
	rs_free(s);
}
END_TEST

/* Pacing off: every allowance at once; R reported as U+ C. A reconfigure
 * that turns pacing off wakes the waiting flows; one that removes a class
 * moves its flows to the default class. */
START_TEST(pacing_off_and_reconfigure)
{
	struct rec rec = { 0 };
	struct wakes wk;
	struct rs_config cfg = cfg_base(RS_POLICY_MSF, RS_WIN_FIXED);
	struct rs_sched *s = new_paced(&cfg, &rec, &wk);
	const char *names[] = { "d" };
	double weights[] = { 1 };
	rs_flow fa, fb;

	ck_assert_int_eq(rs_class_add(s, "c", 1), 0);
	ck_assert_int_eq(rs_class_add(s, "d", 1), 1);
	fa = fopen_(s, 0, 0, 1, 0);
	fb = fopen_(s, 0, 1, 2, 0);
	ck_assert_int_eq(rs_flow_allowance(s, fa, 4900, 0), 4900);
	ck_assert_int_eq(rs_flow_allowance(s, fb, 3000, 0), 0);
	cfg.pacing = false;
	ck_assert_int_eq(rs_reconfigure(s, &cfg, names, weights, 1, "d", 0), 0);
	ck_assert_int_eq(wk.n, 1);
	ck_assert(wk.f[0] == fb);
	ck_assert_int_eq(rs_flow_allowance(s, fb, 100000, 0), 3000);	/* grant */
	ck_assert_int_eq(rs_flow_allowance(s, fb, 100000, 0), 100000);
	ck_assert_uint_eq(cstats(s, 0).flows, 2);	/* both in "d" */
	ck_assert_double_eq_tol(gstats(s).pace_bps, 0.98 * 8000000, 1e-6);
	ck_assert_int_eq(rs_flow_read(s, fa, 4900, 0), 0);
	ck_assert_uint_eq(cstats(s, 0).foreign_bytes, 4900);
	rs_free(s);
}
END_TEST

/* Kept shares (cfg.pace_keep_share), link 8 Mbit/s: R = 980,000, B = 4,900.
 * Classes a (weight 4) and b (weight 1), one account each (rfq), both with
 * an open flow; a's flow never asks (its user waits for its server).
 * b's share is S = R / 5 = 196,000 bytes/s, its bucket D = 20 ms of it =
 * 3,920 bytes. */
static struct rs_sched *four_to_one(bool keep, struct rec *rec,
				    struct wakes *wk, rs_flow *fa, rs_flow *fb)
{
	struct rs_config cfg = cfg_base(RS_POLICY_RFQ, RS_WIN_FIXED);
	struct rs_sched *s;

	cfg.pace_keep_share = keep;
	cfg.update_interval = 60 * SEC;	/* every timer is the pacer's */
	s = new_paced(&cfg, rec, wk);
	ck_assert_int_eq(rs_class_add(s, "a", 4), 0);
	ck_assert_int_eq(rs_class_add(s, "b", 1), 1);
	*fa = fopen_(s, 0, 0, 1, 0);
	*fb = fopen_(s, 0, 1, 2, 0);
	return s;
}

/* Flow f asks for 9,800 bytes at a time and reads all it is allowed, going
 * from deadline to deadline until end; returns the bytes it read. Every
 * timer must wake f (the pacer never polls): *timers counts them. */
static uint64_t greedy_reader(struct rs_sched *s, struct wakes *wk, rs_flow f,
			      rs_time_ns end, rs_time_ns *now, int *timers)
{
	uint64_t got = 0;

	for (;;) {
		int64_t g;
		rs_time_ns t;

		while ((g = rs_flow_allowance(s, f, 9800, *now)) > 0) {
			ck_assert_int_eq(rs_flow_read(s, f, (uint64_t)g, *now), 0);
			got += (uint64_t)g;
		}
		ck_assert_int_eq(g, 0);
		t = rs_next_deadline(s);
		ck_assert(t > *now && t != UINT64_MAX);
		if (t > end)
			return got;
		*now = t;
		wk->n = 0;
		rs_on_timer(s, *now);
		ck_assert_int_eq(wk->n, 1);
		ck_assert(wk->f[0] == f);
		(*timers)++;
	}
}

/* With the flag, b reads its bucket (3,920), then waits for its share:
 * q = 1,960 bytes at 196,000 bytes/s is 10 ms away, one timer per grant.
 * Over 1 s it reads D + S = 199,920 bytes, less what its bucket holds at
 * the end (< q, + 1 byte of rounding). When a's flow closes, b's share is
 * all of R: 980,000 bytes the next second (+ the pacer's bucket, less q). */
START_TEST(kept_share_holds_weight)
{
	struct rec rec = { 0 };
	struct wakes wk;
	rs_flow fa, fb;
	struct rs_sched *s = four_to_one(true, &rec, &wk, &fa, &fb);
	rs_time_ns now = 0;
	uint64_t got;
	int timers = 0;

	ck_assert_int_eq(rs_flow_allowance(s, fb, 1000000, 0), 3920);
	ck_assert_int_eq(rs_flow_read(s, fb, 3920, 0), 0);
	ck_assert_int_eq(rs_flow_allowance(s, fb, 9800, 0), 0);
	ck_assert_uint_eq(rs_next_deadline(s), 10 * MS);
	now = 10 * MS;
	rs_on_timer(s, now);
	ck_assert_int_eq(wk.n, 1);
	ck_assert_int_eq(rs_flow_allowance(s, fb, 9800, now), 1960);
	ck_assert_int_eq(rs_flow_read(s, fb, 1960, now), 0);
	got = 3920 + 1960 + greedy_reader(s, &wk, fb, SEC, &now, &timers);
	ck_assert_uint_le(got, 199920);
	ck_assert_uint_ge(got, 199920 - 1961);
	ck_assert_int_ge(timers, 97);		/* 196,000 / 1,960 - 1 */
	ck_assert_int_le(timers, 99);

	ck_assert_int_eq(rs_flow_close(s, fa, now), 0);
	timers = 0;
	got = greedy_reader(s, &wk, fb, 2 * SEC, &now, &timers);
	ck_assert_uint_le(got, 980000 + 4900);
	ck_assert_uint_ge(got, 980000 - 1961);
	rs_free(s);
}
END_TEST

/* With the flag, a waiting account left alone when the tokens are short
 * is woken when its share has refilled too, not polled at the tokens'
 * time. b reads its bucket (3,920; the tokens keep 980) and waits for
 * q = 1,960 of its share (10 ms at 196,000 bytes/s). a's flow closes at
 * 0.5 ms: b's share is then all of R, the tokens hold 1,470 and its share
 * 490, so both are there at 0.5 + 1,470 / 980,000 s = 2 ms (the tokens
 * alone at 1 ms). */
START_TEST(kept_share_alone_waits_for_its_share)
{
	struct rec rec = { 0 };
	struct wakes wk;
	rs_flow fa, fb;
	struct rs_sched *s = four_to_one(true, &rec, &wk, &fa, &fb);
	rs_time_ns t;

	ck_assert_int_eq(rs_flow_allowance(s, fb, 1000000, 0), 3920);
	ck_assert_int_eq(rs_flow_read(s, fb, 3920, 0), 0);
	ck_assert_int_eq(rs_flow_allowance(s, fb, 9800, 0), 0);
	ck_assert_uint_eq(rs_next_deadline(s), 10 * MS);
	ck_assert_int_eq(rs_flow_close(s, fa, MS / 2), 0);
	t = rs_next_deadline(s);
	ck_assert_uint_ge(t, 2 * MS);
	ck_assert_uint_le(t, 2 * MS + 1);	/* a rounding up */
	rs_on_timer(s, t);
	ck_assert_int_eq(wk.n, 1);
	ck_assert(wk.f[0] == fb);
	ck_assert_int_eq(rs_flow_allowance(s, fb, 9800, t), 1960);
	rs_free(s);
}
END_TEST

/* With the flag a grant needs at most what the account's bucket holds: at
 * 80 Mbit/s q = 19,600, but b (weight 1 of 31) is refilled at S_b =
 * 9,800,000 / 31 = 316,129 bytes/s into D_b = S_b * 20 ms = 6,322.58. It
 * reads its full bucket (6,322), waits for it to refill (6,322 bytes at
 * S_b: 19,998,164 ns) and gets 6,322 again; needing min(want, q) = 9,800
 * it would wait forever. */
START_TEST(kept_share_need_within_bucket)
{
	struct rec rec = { 0 };
	struct wakes wk;
	struct rs_config cfg = cfg_80m(RS_POLICY_RFQ);
	struct rs_sched *s;
	rs_flow fb;
	rs_time_ns t;

	cfg.pace_keep_share = true;
	cfg.update_interval = 60 * SEC;
	s = new_paced(&cfg, &rec, &wk);
	ck_assert_int_eq(rs_class_add(s, "a", 30), 0);
	ck_assert_int_eq(rs_class_add(s, "b", 1), 1);
	(void)fopen_(s, 0, 0, 1, 0);
	fb = fopen_(s, 0, 1, 2, 0);
	ck_assert_int_eq(rs_flow_allowance(s, fb, 9800, 0), 6322);
	ck_assert_int_eq(rs_flow_read(s, fb, 6322, 0), 0);
	ck_assert_int_eq(rs_flow_allowance(s, fb, 9800, 0), 0);
	t = rs_next_deadline(s);
	ck_assert_uint_ge(t, 19998164);
	ck_assert_uint_le(t, 19998166);
	rs_on_timer(s, t);
	ck_assert_int_eq(wk.n, 1);
	ck_assert(wk.f[0] == fb);
	ck_assert_int_eq(rs_flow_allowance(s, fb, 9800, t), 6322);
	rs_free(s);
}
END_TEST

/* Without the flag the pacer is work-conserving: b alone reads all of R
 * (980,000 bytes/s + the bucket of 4,900) while a's flow is open. */
START_TEST(lent_share_work_conserving)
{
	struct rec rec = { 0 };
	struct wakes wk;
	rs_flow fa, fb;
	struct rs_sched *s = four_to_one(false, &rec, &wk, &fa, &fb);
	rs_time_ns now = 0;
	uint64_t got;
	int timers = 0;

	got = greedy_reader(s, &wk, fb, SEC, &now, &timers);
	ck_assert_uint_le(got, 980000 + 4900);
	ck_assert_uint_ge(got, 980000 + 4900 - 1449);
	rs_free(s);
}
END_TEST

/* rs_reconfigure() flips the flag: b, reading all of R, is held to its
 * share from then on (its bucket restarts full). */
START_TEST(kept_share_reconfigure)
{
	struct rec rec = { 0 };
	struct wakes wk;
	rs_flow fa, fb;
	struct rs_sched *s = four_to_one(false, &rec, &wk, &fa, &fb);
	struct rs_config cfg = cfg_base(RS_POLICY_RFQ, RS_WIN_FIXED);
	const char *names[] = { "a", "b" };
	double weights[] = { 4, 1 };
	rs_time_ns now = 0;
	uint64_t got;
	int timers = 0;

	ck_assert_uint_ge(greedy_reader(s, &wk, fb, SEC, &now, &timers),
			  980000);
	cfg.pacing = true;
	cfg.pace_keep_share = true;
	cfg.update_interval = 60 * SEC;
	ck_assert_int_eq(rs_reconfigure(s, &cfg, names, weights, 2, "a", now),
			 0);
	got = greedy_reader(s, &wk, fb, 2 * SEC, &now, &timers);
	ck_assert_uint_le(got, 199920);
	ck_assert_uint_ge(got, 199920 - 9800);
	rs_free(s);
}
END_TEST

/* 80 Mbit/s, 3:1. Asked ahead, the allowance's test queues a flow that
 * would be refused (the bucket of 49,000 is read) and leaves one that may
 * read: nothing taken, the next allowance gets the whole bucket. */
START_TEST(wait_ahead_queues_like_allowance)
{
	struct rec rec = { 0 };
	struct wakes wk;
	struct rs_sched *s = paced_three_to_one(RS_POLICY_RFQ, &rec, &wk);
	rs_flow fa, fb;

	fa = fopen_(s, 0, 0, 1, 0);
	fb = fopen_(s, 0, 1, 2, 0);
	ck_assert_int_eq(rs_flow_wait_ahead(s, fa, 9800, 0), 0);
	ck_assert_uint_eq(gstats(s).flows_waiting, 0);
	ck_assert_int_eq(rs_flow_allowance(s, fa, 1000000, 0), 49000);
	ck_assert_int_eq(rs_flow_read(s, fa, 49000, 0), 0);
	/* no tokens: fa waits for 9,800 bytes, 1 ms at R */
	ck_assert_int_eq(rs_flow_wait_ahead(s, fa, 9800, 0), 1);
	ck_assert_uint_eq(gstats(s).flows_waiting, 1);
	ck_assert_int_eq(rs_flow_wait_ahead(s, fa, 9800, 0), 1);
	ck_assert_int_eq(rs_flow_allowance(s, fa, 9800, 0), 0);
	ck_assert_uint_eq(gstats(s).flows_waiting, 1);
	ck_assert_uint_eq(rs_next_deadline(s), MS);
	/* 2 ms later the tokens are there; fb waits too, and is served
	 * first (fa read the bucket: its tag is 16,333, fb's 0) */
	ck_assert_int_eq(rs_flow_wait_ahead(s, fb, 9800, 2 * MS), 1);
	ck_assert_uint_eq(gstats(s).flows_waiting, 2);
	rs_on_timer(s, 2 * MS);
	ck_assert_int_ge(wk.n, 1);
	ck_assert(wk.f[0] == fb);
	/* a granted flow may read: nothing changes until it asks */
	ck_assert_int_eq(rs_flow_wait_ahead(s, fb, 9800, 2 * MS), 0);
	ck_assert_int_eq(rs_flow_allowance(s, fb, 9800, 2 * MS), 9800);
	/* its socket had nothing yet: the 9,800 go back and fa, if the tokens
	 * of 2 ms (19,600 less a rounding) did not cover it, is woken now */
	ck_assert_int_eq(rs_flow_read(s, fb, 0, 2 * MS), 0);
	ck_assert_int_eq(wk.n, 2);
	ck_assert(wk.f[1] == fa);
	ck_assert_int_eq(rs_flow_allowance(s, fa, 9800, 2 * MS), 9800);
	ck_assert_uint_eq(cstats(s, 0).foreign_bytes, 49000);
	rs_free(s);
}
END_TEST

/* A flow that holds an allowance it has not read is never queued ahead
 * (it reads first); misuse and pacing off. */
START_TEST(wait_ahead_allowance_held_and_errors)
{
	struct rec rec = { 0 };
	struct wakes wk;
	struct rs_sched *s = paced_three_to_one(RS_POLICY_RFQ, &rec, &wk);
	rs_flow fa, fb;

	fa = fopen_(s, 0, 0, 1, 0);
	fb = fopen_(s, 0, 1, 2, 0);
	ck_assert_int_eq(rs_flow_allowance(s, fa, 1000000, 0), 49000);
	ck_assert_int_eq(rs_flow_wait_ahead(s, fa, 9800, 0), 0);
	ck_assert_int_eq(rs_flow_wait_ahead(s, fb, 9800, 0), 1);
	ck_assert_uint_eq(gstats(s).flows_waiting, 1);
	ck_assert_int_eq(rs_flow_wait_ahead(s, fa, 0, 0), RS_EINVAL);
	ck_assert_int_eq(rs_flow_close(s, fa, 0), 0);
	ck_assert_int_eq(rs_flow_wait_ahead(s, fa, 9800, 0), RS_ESTALE);
	/* pacing off: nobody waits */
	repace_three_to_one(s, false);
	ck_assert_int_eq(rs_flow_wait_ahead(s, fb, 9800, 0), 0);
	ck_assert_uint_eq(gstats(s).flows_waiting, 0);
	rs_free(s);
}
END_TEST

/* Bytes let read while pacing was off cost nothing: given back unread
 * after it is on again, they take nothing off the tag (fa would otherwise
 * be owed 2^40 / 3 and served alone); the order is fair_three_to_one's. */
START_TEST(unpaced_bytes_refund_nothing)
{
	struct rec rec = { 0 };
	struct wakes wk;
	struct rs_sched *s = paced_three_to_one(RS_POLICY_RFQ, &rec, &wk);
	rs_time_ns now = 0;
	rs_flow fa, fb;

	fa = fopen_(s, 0, 0, 1, 0);
	fb = fopen_(s, 0, 1, 2, 0);
	repace_three_to_one(s, false);
	ck_assert_int_eq(rs_flow_allowance(s, fa, (uint64_t)1 << 40, 0),
			 (int64_t)1 << 40);
	repace_three_to_one(s, true);
	ck_assert_int_eq(rs_flow_read(s, fa, 0, 0), 0);
	both_waiting(s, fa, fb, 49000, 0);
	ck_assert_int_eq(grants_to(s, &wk, fb, 2, &now), 2);
	ck_assert_int_eq(grants_to(s, &wk, fa, 32, &now), 24);
	rs_free(s);
}
END_TEST

Suite *suite_pacer(void)
{
	Suite *s = suite_create("pacer");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, fair_three_to_one);
	tcase_add_test(tc, present_user_lends_to_its_class);
	tcase_add_test(tc, tokens_capped);
	tcase_add_test(tc, idle_no_deadline);
	tcase_add_test(tc, stale_grant_reclaimed);
	tcase_add_test(tc, clamp_numbers);
	tcase_add_test(tc, clamp_follows_the_read_rate);
	tcase_add_test(tc, clamp_total_from_the_base_rtt);
	tcase_add_test(tc, class_share);
	tcase_add_test(tc, bound_flow_and_errors);
	tcase_add_test(tc, wake_no_reentry);
	tcase_add_test(tc, pacing_off_and_reconfigure);
	tcase_add_test(tc, kept_share_holds_weight);
	tcase_add_test(tc, kept_share_alone_waits_for_its_share);
	tcase_add_test(tc, kept_share_need_within_bucket);
	tcase_add_test(tc, lent_share_work_conserving);
	tcase_add_test(tc, kept_share_reconfigure);
	tcase_add_test(tc, wait_ahead_queues_like_allowance);
	tcase_add_test(tc, wait_ahead_allowance_held_and_errors);
	tcase_add_test(tc, unpaced_bytes_refund_nothing);
	suite_add_tcase(s, tc);
	return s;
}
