/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_costlearn.c - the learned costs (costlearn.c): moving averages
 * worked by hand, the trust threshold, least-recently-used eviction
 * (against a model list over a random sequence), the pattern keys; and the
 * Server-Timing parser (servertiming.c).
 */
#include <math.h>
#include <stdint.h>

#include "harness.h"

static struct rs_costlearn *learner(unsigned nres, uint32_t entries,
				    double weight, uint32_t min_obs)
{
	struct rs_costlearn_config c;
	struct rs_costlearn *l;

	rs_costlearn_config_default(&c);
	c.nres = nres;
	c.entries = entries;
	c.weight = weight;
	c.min_obs = min_obs;
	l = rs_costlearn_new(&c);
	ck_assert_ptr_nonnull(l);
	return l;
}

static void observe(struct rs_costlearn *l, uint64_t key, uint32_t a,
		    uint32_t b)
{
	uint32_t cost[2] = { a, b };

	ck_assert_int_eq(rs_costlearn_observe(l, key, cost), 0);
}

/* weight 0.25, trusted from the third observation:
 * (100, 0) -> avg (100, 0); (200, 40) -> (125, 10);
 * (0, 80) -> (125 - 31.25, 10 + 17.5) = (93.75, 27.5) -> (94, 28) */
START_TEST(average_by_hand)
{
	struct rs_costlearn *l = learner(2, 16, 0.25, 3);
	uint32_t cost[2] = { 7, 7 };
	struct rs_costlearn_stats st;

	observe(l, 42, 100, 0);
	ck_assert_int_eq(rs_costlearn_lookup(l, 42, cost), 0);
	observe(l, 42, 200, 40);
	ck_assert_int_eq(rs_costlearn_lookup(l, 42, cost), 0);
	ck_assert_uint_eq(cost[0], 7);		/* untouched while untrusted */
	rs_costlearn_get_stats(l, &st);
	ck_assert_uint_eq(st.trusted, 0);
	observe(l, 42, 0, 80);
	ck_assert_int_eq(rs_costlearn_lookup(l, 42, cost), 1);
	ck_assert_uint_eq(cost[0], 94);
	ck_assert_uint_eq(cost[1], 28);
	ck_assert_int_eq(rs_costlearn_lookup(l, 43, cost), 0);
	rs_costlearn_get_stats(l, &st);
	ck_assert_uint_eq(st.entries, 1);
	ck_assert_uint_eq(st.capacity, 16);
	ck_assert_uint_eq(st.trusted, 1);
	ck_assert_uint_eq(st.observations, 3);
	ck_assert_uint_eq(st.evictions, 0);
	rs_costlearn_free(l);
}
END_TEST

/* A cost that changes is relearned: from 1000, eight observations of 0
 * leave 1000 * 0.75^8 = 100.1; weight 1 follows the last one at once. */
START_TEST(relearns_a_change)
{
	struct rs_costlearn *l = learner(1, 4, 0.25, 1);
	struct rs_costlearn *last = learner(1, 4, 1, 1);
	uint32_t zero = 0, thousand = 1000, cost = 0;

	ck_assert_int_eq(rs_costlearn_observe(l, 5, &thousand), 0);
	for (int k = 0; k < 8; k++)
		ck_assert_int_eq(rs_costlearn_observe(l, 5, &zero), 0);
	ck_assert_int_eq(rs_costlearn_lookup(l, 5, &cost), 1);
	ck_assert_uint_eq(cost, 100);
	ck_assert_int_eq(rs_costlearn_observe(last, 5, &thousand), 0);
	ck_assert_int_eq(rs_costlearn_observe(last, 5, &zero), 0);
	ck_assert_int_eq(rs_costlearn_lookup(last, 5, &cost), 1);
	ck_assert_uint_eq(cost, 0);
	rs_costlearn_free(l);
	rs_costlearn_free(last);
}
END_TEST

/* Three entries: A B C observed, A looked up (B is now the least recently
 * used), D takes B's entry; then E takes C's. */
START_TEST(evicts_least_recently_used)
{
	struct rs_costlearn *l = learner(2, 3, 0.5, 1);
	uint32_t cost[2];
	struct rs_costlearn_stats st;

	observe(l, 'A', 1, 1);
	observe(l, 'B', 2, 2);
	observe(l, 'C', 3, 3);
	ck_assert_int_eq(rs_costlearn_lookup(l, 'A', cost), 1);
	observe(l, 'D', 4, 4);
	ck_assert_int_eq(rs_costlearn_lookup(l, 'B', cost), 0);
	observe(l, 'E', 5, 5);
	ck_assert_int_eq(rs_costlearn_lookup(l, 'C', cost), 0);
	ck_assert_int_eq(rs_costlearn_lookup(l, 'A', cost), 1);
	ck_assert_uint_eq(cost[0], 1);
	ck_assert_int_eq(rs_costlearn_lookup(l, 'D', cost), 1);
	ck_assert_uint_eq(cost[1], 4);
	ck_assert_int_eq(rs_costlearn_lookup(l, 'E', cost), 1);
	ck_assert_uint_eq(cost[0], 5);
	rs_costlearn_get_stats(l, &st);
	ck_assert_uint_eq(st.entries, 3);
	ck_assert_uint_eq(st.evictions, 2);
	ck_assert_uint_eq(st.trusted, 3);
	/* an evicted key starts over: its old average is gone */
	observe(l, 'B', 9, 9);
	ck_assert_int_eq(rs_costlearn_lookup(l, 'B', cost), 1);
	ck_assert_uint_eq(cost[0], 9);
	rs_costlearn_free(l);
}
END_TEST

/* 20,000 random observations and lookups of 40 keys that fall in 4
 * buckets (high ^ low 32 bits = k % 4), in a table of 16: the keys present are exactly the 16 most
 * recently used of a model list, and each holds its last value (weight
 * 1). */
START_TEST(lru_matches_a_model)
{
	enum { N = 16, KEYS = 40 };
	struct rs_costlearn *l = learner(1, N, 1, 1);
	uint64_t model[KEYS];		/* model[0] most recently used */
	uint32_t last[KEYS] = { 0 }, cost, n = 0, x = 12345;
	struct rs_costlearn_stats st;

	for (int step = 0; step < 20000; step++) {
		uint32_t k, pos, v;
		uint64_t key;
		bool present;

		x = x * 1103515245u + 12345u;
		k = (x >> 8) % KEYS;
		key = ((uint64_t)(k + 1) << 32) | ((k + 1) ^ (k % 4));
		for (pos = 0; pos < n && model[pos] != key; pos++)
			;
		present = pos < n;
		if ((x >> 20) & 1) {
			v = x >> 24;
			ck_assert_int_eq(rs_costlearn_observe(l, key, &v), 0);
			last[k] = v;
		} else {
			ck_assert_int_eq(rs_costlearn_lookup(l, key, &cost), present);
			if (present)
				ck_assert_uint_eq(cost, last[k]);
			else
				continue;	/* a miss changes nothing */
		}
		if (!present)
			pos = n < N ? n++ : N - 1;	/* drops model[N-1] */
		for (; pos > 0; pos--)
			model[pos] = model[pos - 1];
		model[0] = key;
	}
	rs_costlearn_get_stats(l, &st);
	ck_assert_uint_eq(st.entries, N);
	for (uint32_t k = 0; k < KEYS; k++) {
		uint64_t key = ((uint64_t)(k + 1) << 32) | ((k + 1) ^ (k % 4));
		bool in_model = false;

		for (uint32_t p = 0; p < n; p++)
			in_model |= model[p] == key;
		ck_assert_int_eq(rs_costlearn_lookup(l, key, &cost), in_model);
	}
	rs_costlearn_free(l);
}
END_TEST

START_TEST(keys)
{
	static const char u[] = "/photos/x.jpg?s=1/2";

	ck_assert_uint_eq(rs_costlearn_key(u, strlen(u), 0), rs_hash(u, strlen(u)));
	ck_assert_uint_eq(rs_costlearn_key(u, strlen(u), 1), rs_hash("/photos/*", 9));
	ck_assert_uint_eq(rs_costlearn_key("/photos/", 8, 1), rs_hash("/photos/*", 9));
	ck_assert_uint_eq(rs_costlearn_key("/a", 2, 1), rs_hash("/*", 2));
	ck_assert_uint_eq(rs_costlearn_key("x?/y", 4, 1), rs_hash("*", 1));
	/* len bounds the path: "/a/b/c" cut at 4 is "/a/b" */
	ck_assert_uint_eq(rs_costlearn_key("/a/b/c", 4, 1), rs_hash("/a/*", 4));
}
END_TEST

START_TEST(bad_configs)
{
	struct rs_costlearn_config c;
	struct rs_costlearn *l = learner(1, 1, 1, 1);
	uint32_t cost = 1;

	rs_costlearn_config_default(&c);
	ck_assert_uint_eq(c.entries, 4096);
	ck_assert(c.weight == 0.25);
	ck_assert_uint_eq(c.min_obs, 3);
	c.entries = 0;
	ck_assert_ptr_null(rs_costlearn_new(&c));
	rs_costlearn_config_default(&c);
	c.weight = 0;
	ck_assert_ptr_null(rs_costlearn_new(&c));
	c.weight = 1.5;
	ck_assert_ptr_null(rs_costlearn_new(&c));
	c.weight = NAN;
	ck_assert_ptr_null(rs_costlearn_new(&c));
	rs_costlearn_config_default(&c);
	c.nres = 0;
	ck_assert_ptr_null(rs_costlearn_new(&c));
	c.nres = RS_MAX_RESOURCES + 1;
	ck_assert_ptr_null(rs_costlearn_new(&c));
	rs_costlearn_config_default(&c);
	c.min_obs = 0;
	ck_assert_ptr_null(rs_costlearn_new(&c));
	ck_assert_ptr_null(rs_costlearn_new(NULL));
	ck_assert_int_eq(rs_costlearn_observe(l, 0, &cost), RS_EINVAL);
	ck_assert_int_eq(rs_costlearn_observe(l, 1, NULL), RS_EINVAL);
	rs_costlearn_free(l);
}
END_TEST

static const char *const res3[] = { "cpu", "disk", "bw" };

static unsigned timing(const char *v, size_t len, double *pct, unsigned *found)
{
	for (int i = 0; i < 3; i++)
		pct[i] = -1;
	return rs_server_timing_parse(v, len, res3, 3, pct, found);
}

START_TEST(server_timing)
{
	double pct[3];
	unsigned found;
	const char *v;

	v = "cpu;dur=12.5, disk;dur=0.3";
	ck_assert_uint_eq(timing(v, strlen(v), pct, &found), 0);
	ck_assert_uint_eq(found, 3);
	ck_assert(pct[0] == 12.5 && pct[1] == 0.3 && pct[2] == -1);
	/* quoted commas and semicolons, an unknown metric, case, OWS */
	v = "db;desc=\"a, b; cpu;dur=9\";dur=3 , CPU ; desc=x ; DUR = 7,bw;dur=\"2.5\"";
	ck_assert_uint_eq(timing(v, strlen(v), pct, &found), 0);
	ck_assert_uint_eq(found, 5);
	ck_assert(pct[0] == 7 && pct[2] == 2.5);
	/* above 100 counts as 100 */
	v = "bw;dur=250";
	ck_assert_uint_eq(timing(v, strlen(v), pct, &found), 0);
	ck_assert(found == 4 && pct[2] == 100);
	/* malformed: not a number, no dur, negative, inf, empty, nan */
	v = "cpu;dur=abc, disk, bw;dur=-1, cpu;dur=inf, disk;dur=, bw;dur=nan, cpu;dur=1e999";
	ck_assert_uint_eq(timing(v, strlen(v), pct, &found), 7);
	ck_assert_uint_eq(found, 0);
	/* only the application's own metrics */
	v = "db;dur=53, app;dur=47.2";
	ck_assert_uint_eq(timing(v, strlen(v), pct, &found), 0);
	ck_assert_uint_eq(found, 0);
	/* len bounds the value */
	v = "cpu;dur=12";
	ck_assert_uint_eq(timing(v, 8, pct, &found), 1);
	ck_assert_uint_eq(timing(v, 9, pct, &found), 0);
	ck_assert(found == 1 && pct[0] == 1);
	/* an unterminated quote ends the header */
	v = "app;desc=\"x, cpu;dur=5";
	ck_assert_uint_eq(timing(v, strlen(v), pct, &found), 0);
	ck_assert_uint_eq(found, 0);
	ck_assert_uint_eq(timing("", 0, pct, &found), 0);
	ck_assert_uint_eq(found, 0);
}
END_TEST

Suite *suite_costlearn(void)
{
	Suite *s = suite_create("costlearn");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, average_by_hand);
	tcase_add_test(tc, relearns_a_change);
	tcase_add_test(tc, evicts_least_recently_used);
	tcase_add_test(tc, lru_matches_a_model);
	tcase_add_test(tc, keys);
	tcase_add_test(tc, bad_configs);
	tcase_add_test(tc, server_timing);
	suite_add_tcase(s, tc);
	return s;
}
