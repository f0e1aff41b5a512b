/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * random_costlearn.c - randomized test of the learned costs, compiled with
 * the library's sources under AddressSanitizer and UBSan (test/lib/Makefile,
 * `make check-lib`):
 *
 *  - costlearn.c against a model (an LRU-ordered array of keys with their
 *    averages): random sizes, weights, trust thresholds, nres, and keys
 *    drawn from a set a few times the table's size (so entries are evicted
 *    and chains share buckets); every lookup's answer and cost, and the
 *    stats, equal the model's;
 *  - servertiming.c on random bytes from the header's alphabet, each
 *    value in a buffer of exactly its length (an overread is an ASan
 *    report): found names only the resources, pct within 0..100; and on
 *    generated well-formed headers (random white space, extra parameters,
 *    quoted strings, unknown metrics): exactly the values written.
 *
 * Usage: random_costlearn [SEQUENCES [SEED]]
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reqsched.h"

static uint64_t state;

static uint64_t rnd(void)
{
	uint64_t z = (state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
	return rnd() % n;
}

#define fail(...)                                                        \
	do {                                                             \
		fprintf(stderr, "random_costlearn: " __VA_ARGS__);       \
		fputc('\n', stderr);                                     \
		exit(1);                                                 \
	} while (0)

#define MAXE 64

struct mentry {
	uint64_t key;
	double avg[RS_MAX_RESOURCES];
	uint32_t n;
};

/* model[0] is the most recently used */
static struct mentry model[MAXE];
static uint32_t used;

static void model_touch(uint32_t pos)
{
	struct mentry e = model[pos];

	memmove(&model[1], &model[0], pos * sizeof(model[0]));
	model[0] = e;
}

static int model_find(uint64_t key)
{
	for (uint32_t i = 0; i < used; i++)
		if (model[i].key == key)
			return (int)i;
	return -1;
}

static void learner_sequence(unsigned long seq)
{
	struct rs_costlearn_config c;
	struct rs_costlearn *l;
	struct rs_costlearn_stats st;
	uint64_t observations = 0, evictions = 0;
	uint32_t nkeys;

	rs_costlearn_config_default(&c);
	c.nres = 1 + (unsigned)below(RS_MAX_RESOURCES);
	c.entries = 1 + (uint32_t)below(MAXE);
	c.weight = below(4) ? (double)(1 + below(1000)) / 1000 : 1;
	c.min_obs = 1 + (uint32_t)below(5);
	l = rs_costlearn_new(&c);
	if (!l)
		fail("seq %lu: rs_costlearn_new refused a good config", seq);
	used = 0;
	nkeys = c.entries * (1 + (uint32_t)below(4));
	for (int op = 0; op < 200; op++) {
		/* small keys, and keys that differ only in their high bits */
		uint64_t k = 1 + below(nkeys);
		uint64_t key = below(2) ? k : (k << 40) | (k & 3);
		int pos = model_find(key);
		uint32_t cost[RS_MAX_RESOURCES], got[RS_MAX_RESOURCES] = { 0 };

		if (below(2)) {
			for (unsigned j = 0; j < c.nres; j++)
				cost[j] = (uint32_t)below(below(8) ? 10001 : UINT32_MAX);
			if (rs_costlearn_observe(l, key, cost))
				fail("seq %lu: observe failed", seq);
			observations++;
			if (pos < 0) {
				if (used == c.entries) {
					used--;		/* the least recently used */
					evictions++;
				}
				pos = (int)used++;
				memset(&model[pos], 0, sizeof(model[pos]));
				model[pos].key = key;
			}
			for (unsigned j = 0; j < c.nres; j++)
				model[pos].avg[j] = model[pos].n ?
					model[pos].avg[j] + c.weight * (cost[j] - model[pos].avg[j]) :
					cost[j];
			model[pos].n++;
			model_touch((uint32_t)pos);
		} else {
			int want = pos >= 0 && model[pos].n >= c.min_obs;
			int have = rs_costlearn_lookup(l, key, got);

			if (have != want)
				fail("seq %lu op %d: lookup of %" PRIx64 " = %d, model %d",
				     seq, op, key, have, want);
			for (unsigned j = 0; want && j < c.nres; j++)
				if (got[j] != (uint32_t)lround(model[pos].avg[j]))
					fail("seq %lu op %d: cost[%u] %" PRIu32 ", model %.3f",
					     seq, op, j, got[j], model[pos].avg[j]);
			if (pos >= 0)
				model_touch((uint32_t)pos);
		}
		rs_costlearn_get_stats(l, &st);
		uint32_t trusted = 0;

		for (uint32_t i = 0; i < used; i++)
			trusted += model[i].n >= c.min_obs;
		if (st.entries != used || st.capacity != c.entries ||
		    st.trusted != trusted || st.observations != observations ||
		    st.evictions != evictions)
			fail("seq %lu op %d: stats %u/%u/%u/%" PRIu64 "/%" PRIu64
			     ", model %u/%u/%u/%" PRIu64 "/%" PRIu64, seq, op,
			     st.entries, st.capacity, st.trusted, st.observations,
			     st.evictions, used, c.entries, trusted, observations,
			     evictions);
	}
	rs_costlearn_free(l);
}

static const char *const names[] = { "cpu", "disk", "bw" };

/* Random bytes of the header's alphabet, in a buffer of their length. */
static void parser_noise(unsigned long seq)
{
	static const char alpha[] = " \t,;=\"\\cpudiskbwr0123456789.-+eE";
	size_t len = (size_t)below(48);
	char *v = malloc(len ? len : 1);
	double pct[3] = { -1, -1, -1 };
	unsigned found = 99, malformed;

	if (!v)
		fail("out of memory");
	for (size_t i = 0; i < len; i++)
		v[i] = alpha[below(sizeof(alpha) - 1)];
	malformed = rs_server_timing_parse(v, len, names, 3, pct, &found);
	if (found > 7)
		fail("seq %lu: found %#x for %.*s", seq, found, (int)len, v);
	for (int i = 0; i < 3; i++)
		if ((found >> i & 1) && !(pct[i] >= 0 && pct[i] <= 100))
			fail("seq %lu: pct[%d] %g for %.*s", seq, i, pct[i], (int)len, v);
	if (malformed > len / 3 + 1)
		fail("seq %lu: %u malformed in %zu bytes", seq, malformed, len);
	free(v);
}

static const char *ows(void)
{
	static const char *const w[] = { "", " ", "\t", "  " };

	return w[below(4)];
}

/* A well-formed header of up to 3 resource metrics and unknown ones. */
static void parser_wellformed(unsigned long seq)
{
	char buf[512], *v;
	size_t n = 0;
	double want[3] = { 0 }, pct[3] = { -1, -1, -1 };
	unsigned want_found = 0, found, metrics = 1 + (unsigned)below(5);

	for (unsigned m = 0; m < metrics; m++) {
		int res = below(3) ? (int)below(3) : -1;
		const char *name = res < 0 ? "app" : res == 0 && below(2) ? "CPU" : names[res];
		const char *q = below(4) ? "" : "\"";
		double val = (double)below(200000) / 1000;

		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s%s", m ? "," : "", ows(), name);
		if (below(2))
			n += (size_t)snprintf(buf + n, sizeof(buf) - n,
					      "%s;%sdesc=\"a, b; dur=7\"", ows(), ows());
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s;%s%s%s=%s%s%.3f%s%s",
				      ows(), ows(), below(2) ? "dur" : "Dur", ows(), ows(),
				      q, val, q, ows());
		if (res >= 0) {
			want[res] = val > 100 ? 100 : val;
			want_found |= 1u << res;
		}
	}
	v = malloc(n);
	if (!v)
		fail("out of memory");
	memcpy(v, buf, n);
	if (rs_server_timing_parse(v, n, names, 3, pct, &found))
		fail("seq %lu: malformed in %.*s", seq, (int)n, buf);
	if (found != want_found)
		fail("seq %lu: found %#x, want %#x in %.*s", seq, found, want_found, (int)n, buf);
	for (int i = 0; i < 3; i++)
		if ((found >> i & 1) && fabs(pct[i] - want[i]) > 1e-9)
			fail("seq %lu: pct[%d] %g, want %g in %.*s", seq, i, pct[i], want[i],
			     (int)n, buf);
	free(v);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;

	state = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	printf("random_costlearn: %lu sequences, seed %" PRIu64 "\n", n, state);
	for (unsigned long seq = 0; seq < n; seq++) {
		learner_sequence(seq);
		for (int k = 0; k < 10; k++) {
			parser_noise(seq);
			parser_wellformed(seq);
		}
	}
	printf("random_costlearn: all %lu sequences passed\n", n);
	return 0;
}
