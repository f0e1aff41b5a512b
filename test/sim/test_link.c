/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_link.c - unit tests of the simulator's fluid processor-sharing link,
 * event heap and random numbers. Each expectation is computed by hand in
 * the comment next to it. Exit status 0 = all passed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "heap.h"
#include "link.h"
#include "rng.h"

static int failures;

#define CHECK_NEAR(got, want, tol) check_near(__FILE__, __LINE__, #got, \
					      (got), (want), (tol))

static void check_near(const char *file, int line, const char *what,
		       double got, double want, double tol)
{
	if (got == want || fabs(got - want) <= tol)
		return;
	fprintf(stderr, "%s:%d: %s = %.12g, want %.12g (tol %g)\n", file, line,
		what, got, want, tol);
	failures++;
}

static double rate_of(const struct sim_link *l, uint32_t req)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->flows[i].req == req)
			return l->flows[i].rate;
	return -1;
}

/* C = 100 B/s, flows of 100 and 300 bytes: both at 50 B/s; the first ends
 * at t = 2 (100/50); then the second, with 300 - 100 = 200 left, runs at
 * 100 B/s and ends at t = 4. */
static void test_equal_share(void)
{
	struct sim_link l;
	struct sim_flow f;

	link_init(&l, 100);
	link_add(&l, 1, 100, 0);
	link_add(&l, 2, 300, 0);
	link_set_rates(&l);
	CHECK_NEAR(rate_of(&l, 1), 50, 1e-12);
	CHECK_NEAR(rate_of(&l, 2), 50, 1e-12);
	CHECK_NEAR(link_next_completion(&l), 2, 1e-12);
	link_advance(&l, 2);
	CHECK_NEAR(link_pop_done(&l, &f), 1, 0);
	CHECK_NEAR(f.req, 1, 0);
	CHECK_NEAR(f.delivered, 100, 1e-9);
	CHECK_NEAR(link_pop_done(&l, &f), 0, 0);
	link_set_rates(&l);
	CHECK_NEAR(rate_of(&l, 2), 100, 1e-12);
	CHECK_NEAR(link_next_completion(&l), 4, 1e-12);
	link_advance(&l, 4);
	CHECK_NEAR(link_pop_done(&l, &f), 1, 0);
	CHECK_NEAR(f.req, 2, 0);
	CHECK_NEAR(l.flow_bytes, 400, 1e-9);
	CHECK_NEAR(link_next_completion(&l), INFINITY, 0);
	link_free(&l);
}

/* Water-filling: C = 100, caps 10, 30, none, none. Fair share 25 > 10, so
 * flow 1 gets 10; then 90/3 = 30 >= cap 30, flow 2 gets 30; the last two
 * share 60: 30 each. Sum = 100. */
static void test_caps(void)
{
	struct sim_link l;

	link_init(&l, 100);
	link_add(&l, 1, 1e6, 10);
	link_add(&l, 2, 1e6, 30);
	link_add(&l, 3, 1e6, 0);
	link_add(&l, 4, 1e6, 0);
	link_set_rates(&l);
	CHECK_NEAR(rate_of(&l, 1), 10, 1e-12);
	CHECK_NEAR(rate_of(&l, 2), 30, 1e-12);
	CHECK_NEAR(rate_of(&l, 3), 30, 1e-12);
	CHECK_NEAR(rate_of(&l, 4), 30, 1e-12);
	CHECK_NEAR(link_used_rate(&l), 100, 1e-9);
	link_free(&l);
}

/* All flows capped below their share: C = 100, caps 20 and 30; the link
 * is not full (50), every flow runs at its cap. */
static void test_caps_underload(void)
{
	struct sim_link l;

	link_init(&l, 100);
	link_add(&l, 1, 1e6, 20);
	link_add(&l, 2, 1e6, 30);
	link_set_rates(&l);
	CHECK_NEAR(rate_of(&l, 1), 20, 1e-12);
	CHECK_NEAR(rate_of(&l, 2), 30, 1e-12);
	CHECK_NEAR(link_used_rate(&l), 50, 1e-9);
	link_free(&l);
}

/* Cross traffic at 60 of 100 B/s leaves 40: two flows at 20. After 10 s
 * the CBR carried 600 bytes and each flow 200. CBR above C takes it all. */
static void test_cbr(void)
{
	struct sim_link l;

	link_init(&l, 100);
	link_set_cbr(&l, 60);
	link_add(&l, 1, 1e6, 0);
	link_add(&l, 2, 1e6, 0);
	link_set_rates(&l);
	CHECK_NEAR(rate_of(&l, 1), 20, 1e-12);
	link_advance(&l, 10);
	CHECK_NEAR(l.cbr_bytes, 600, 1e-9);
	CHECK_NEAR(l.flow_bytes, 400, 1e-9);
	link_set_cbr(&l, 150);
	link_set_rates(&l);
	CHECK_NEAR(rate_of(&l, 1), 0, 1e-12);
	CHECK_NEAR(link_used_rate(&l), 100, 1e-9);
	CHECK_NEAR(link_next_completion(&l), INFINITY, 0);
	link_free(&l);
}

/* Three equal flows started together end at the same instant 3L/C and are
 * popped in request order (2 before 5 before 7). */
static void test_simultaneous(void)
{
	struct sim_link l;
	struct sim_flow f;

	link_init(&l, 1000);
	link_add(&l, 7, 500, 0);
	link_add(&l, 2, 500, 0);
	link_add(&l, 5, 500, 0);
	link_set_rates(&l);
	CHECK_NEAR(link_next_completion(&l), 1.5, 1e-12);
	link_advance(&l, link_next_completion(&l));
	CHECK_NEAR(link_pop_done(&l, &f), 1, 0);
	CHECK_NEAR(f.req, 2, 0);
	CHECK_NEAR(link_pop_done(&l, &f), 1, 0);
	CHECK_NEAR(f.req, 5, 0);
	CHECK_NEAR(link_pop_done(&l, &f), 1, 0);
	CHECK_NEAR(f.req, 7, 0);
	CHECK_NEAR(l.n, 0, 0);
	link_free(&l);
}

/* Events pop by time, ties in insertion order. */
static void test_heap(void)
{
	struct sim_heap h = { 0 };
	struct sim_event e;
	const double t[] = { 5, 1, 3, 1, 2 };
	const uint32_t want[] = { 1, 3, 4, 2, 0 };

	for (uint32_t i = 0; i < 5; i++)
		heap_push(&h, t[i], 0, i, 0);
	for (int i = 0; i < 5; i++) {
		CHECK_NEAR(heap_pop(&h, &e), 1, 0);
		CHECK_NEAR(e.a, want[i], 0);
	}
	CHECK_NEAR(heap_pop(&h, &e), 0, 0);
	heap_free(&h);
}

/* Same seed, same stream; lognormal(9.357, 1.318) has mean
 * e^(9.357 + 1.318^2/2) = 27,656 bytes; the mean of 10^6 draws has a
 * standard error of 27,656 * sqrt(e^(1.318^2) - 1) / 1000 = 60 bytes,
 * so 1 % (277 bytes) is more than 4 standard errors. */
static void test_rng(void)
{
	struct sim_rng a, b;
	double sum = 0, esum = 0;
	const int n = 1000000;

	rng_seed(&a, 42);
	rng_seed(&b, 42);
	for (int i = 0; i < 100; i++)
		CHECK_NEAR((double)(rng_next(&a) == rng_next(&b)), 1, 0);
	for (int i = 0; i < n; i++) {
		sum += rng_lognormal(&a, 9.357, 1.318);
		esum += rng_exp(&a, 5.0);
	}
	CHECK_NEAR(sum / n, exp(9.357 + 1.318 * 1.318 / 2), 277);
	CHECK_NEAR(esum / n, 5.0, 0.05);
}

int main(void)
{
	test_equal_share();
	test_caps();
	test_caps_underload();
	test_cbr();
	test_simultaneous();
	test_heap();
	test_rng();
	if (failures) {
		fprintf(stderr, "test_link: %d failures\n", failures);
		return 1;
	}
	printf("test_link: all passed\n");
	return 0;
}
