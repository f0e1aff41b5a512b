/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench.c - core benchmark of libreqsched (make bench-lib).
 *
 * Time: ns per request for the whole life of a request - enqueue (it
 * waits in the queue), release (from inside the end of an earlier
 * response), 10 byte events, end - in steady state with a backlog of
 * 1,000 queued requests, a window of 64 outstanding responses, classes
 * of 10 / 100 / 1,000 / 10,000 / 100,000, users picked uniformly among
 * 100,000, each in one class, for every policy (with and without sff).
 * Multi-resource policies (mqos, sqos, drf): the same life of a request
 * with a cost vector over 3 resources of capacity 1,000 (kinds cpu-, disk-
 * and bandwidth-heavy, costs 4..38 units: about 60 requests hold them at
 * once; no window), over the same class counts.
 * Memory: heap bytes per queued request (mallinfo2 before/after queueing
 * 1,000,000 requests of 100,000 users in 100 and in 10,000 classes).
 *
 * Each cell is the fastest of 5 timed segments of REQUESTS/5 requests.
 * Usage: bench [REQUESTS [MODE [CLASSES]]]   (default 2,000,000 per cell,
 *        all modes and class counts; MODE is a row name such as
 *        "msf fixed" or "mqos", CLASSES one of the row's class counts).
 * Wall time by default; RS_BENCH_CLOCK=cpu times with the process CPU
 * clock instead (steadier on a shared machine: preemption is not counted).
 */
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reqsched.h"

#define USERS 100000
#define WINDOW 64
#define BACKLOG 1000
#define RING (1 << 12)
#define NRES 3
#define CAPACITY 1000

struct ring {
	rs_id id[RING];
	unsigned head, tail;
};

static void on_release(void *ctx, rs_id id, void *cookie)
{
	struct ring *r = ctx;

	(void)cookie;
	r->id[r->tail++ % RING] = id;
}

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(bench_clock, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* nres > 0: NRES resources of CAPACITY, and no window to speak of. */
static struct rs_sched *make(enum rs_policy p, enum rs_controller c, bool sff,
			     int classes, bool nres, struct ring *ring)
{
	struct rs_config cfg;
	struct rs_sched *s;
	char name[32];
	int i;

	rs_config_default(&cfg);
	cfg.policy = p;
	cfg.controller = c;
	cfg.sff = sff;
	cfg.link_bps = 1000000000;
	cfg.fixed_window = WINDOW;
	cfg.initial_window = WINDOW;
	cfg.max_window = WINDOW;
	if (nres) {
		cfg.nres = NRES;
		for (int j = 0; j < NRES; j++)
			cfg.res_capacity[j] = CAPACITY;
		cfg.fixed_window = RING / 2;
	}
	s = rs_new(&cfg, on_release, ring);
	if (!s) {
		fprintf(stderr, "bench: rs_new failed\n");
		exit(1);
	}
	for (i = 0; i < classes; i++) {
		snprintf(name, sizeof(name), "class%d", i);
		if (rs_class_add(s, name, 1 + i % 7) != i) {
			fprintf(stderr, "bench: rs_class_add %s failed\n", name);
			exit(1);
		}
	}
	return s;
}

/* A request of a random user, in its class: user u is in class u %
 * classes, as a client address is in the class its request_sched_class
 * line gives it (USERS / classes users per class; before 2026-11-29 the
 * class was drawn apart from the user, so the USERS users made up to
 * USERS * classes (class, user) pairs). With nres a cost vector: one
 * resource (by turn) 16..38 units, the others 4..11. */
static void enqueue_one(struct rs_sched *s, uint64_t *seed, int classes,
			bool nres, rs_time_ns t)
{
	uint64_t x = xs(seed), user = (x >> 20) % USERS;
	int cls = (int)(user % (uint64_t)classes);
	uint32_t cost[NRES];
	rs_id id;
	int j;

	for (j = 0; nres && j < NRES; j++)
		cost[j] = (uint32_t)(x >> (40 + 3 * j) & 7) +
			  (j == (int)(x >> 60) % NRES ? 16 + (x >> 50 & 15) : 4);
	if (nres ? rs_enqueue_cost(s, cls, user, NULL, cost, NULL, t, &id) :
		   rs_enqueue(s, cls, user, NULL, NULL, t, &id)) {
		fprintf(stderr, "bench: rs_enqueue failed\n");
		exit(1);
	}
}

/* Completes the oldest outstanding response: 10 byte events and the end,
 * which releases the next queued request. */
static void complete_one(struct rs_sched *s, struct ring *ring, rs_time_ns t)
{
	rs_id id = ring->id[ring->head++ % RING];
	int k;

	for (k = 0; k < 10; k++)
		rs_on_bytes(s, id, 1460, t);
	rs_on_end(s, id, false, t);
}

/* The fastest of SEGMENTS timed segments of n/SEGMENTS requests each: the
 * machine's noise (another tenant, a migration) only ever adds time. */
#define SEGMENTS 5
static double run(enum rs_policy p, enum rs_controller c, bool sff,
		  int classes, bool nres, long n)
{
	struct ring *ring = calloc(1, sizeof(*ring));
	struct rs_sched *s = make(p, c, sff, classes, nres, ring);
	uint64_t seed = 88172645463325252ULL;
	long i, per = n / SEGMENTS > 0 ? n / SEGMENTS : 1;
	double best = 0;
	rs_time_ns t = 1;
	int k;

	for (i = 0; i < WINDOW + BACKLOG; i++)
		enqueue_one(s, &seed, classes, nres, t);
	for (i = 0; i < 200000; i++, t += 1000) {	/* warm up */
		enqueue_one(s, &seed, classes, nres, t);
		complete_one(s, ring, t);
	}
	for (k = 0; k < SEGMENTS; k++) {
		double t0 = now_ns(), ns;

		for (i = 0; i < per; i++, t += 1000) {
			enqueue_one(s, &seed, classes, nres, t);
			complete_one(s, ring, t);
		}
		ns = (now_ns() - t0) / (double)per;
		if (k == 0 || ns < best)
			best = ns;
	}
	rs_free(s);
	free(ring);
	return best;
}

static double bytes_per_queued(long n, int classes)
{
	struct ring *ring = calloc(1, sizeof(*ring));
	struct mallinfo2 a, b;
	struct rs_sched *s;
	uint64_t seed = 12345;
	long i;

	a = mallinfo2();
	s = make(RS_POLICY_MSF, RS_WIN_FIXED, false, classes, false, ring);
	for (i = 0; i < n; i++)
		enqueue_one(s, &seed, classes, false, 1);
	b = mallinfo2();
	rs_free(s);
	free(ring);
	return (double)((b.uordblks + b.hblkhd) - (a.uordblks + a.hblkhd)) /
	       (double)n;
}

struct mode {
	enum rs_policy p;
	enum rs_controller c;
	bool sff;
	const char *what;
};

/* One table: a row per mode (only argv[2]'s if given), a column per class
 * count (only argv[3]'s). */
static void table(const struct mode *modes, unsigned nmodes,
		  const int *classes, unsigned ncls, bool nres, long n,
		  int argc, char **argv)
{
	unsigned m, k;

	printf("%-14s", "mode");
	for (k = 0; k < ncls; k++)
		printf(" %6d cls", classes[k]);
	printf("\n");
	for (m = 0; m < nmodes; m++) {
		if (argc > 2 && strcmp(argv[2], modes[m].what) != 0)
			continue;
		printf("%-14s", modes[m].what);
		for (k = 0; k < ncls; k++) {
			if (argc > 3 && atoi(argv[3]) != classes[k]) {
				printf(" %10s", "-");
				continue;
			}
			printf(" %10.1f", run(modes[m].p, modes[m].c,
					      modes[m].sff, classes[k], nres, n));
			fflush(stdout);
		}
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 2000000;
	static const int classes[] = { 10, 100, 1000, 10000, 100000 };
	static const struct mode modes[] = {
		{ RS_POLICY_MSF, RS_WIN_FIXED, false, "msf fixed" },
		{ RS_POLICY_RFQ, RS_WIN_FIXED, false, "rfq fixed" },
		{ RS_POLICY_DRR, RS_WIN_FIXED, false, "drr fixed" },
		{ RS_POLICY_MSF, RS_WIN_FIXED, true, "msf+sff fixed" },
		{ RS_POLICY_DRR, RS_WIN_FIXED, true, "drr+sff fixed" },
		{ RS_POLICY_MSF, RS_WIN_WRC_MULT, false, "msf wrc-mult" },
	};
	static const struct mode res_modes[] = {
		{ RS_POLICY_MQOS, RS_WIN_FIXED, false, "mqos" },
		{ RS_POLICY_SQOS, RS_WIN_FIXED, false, "sqos" },
		{ RS_POLICY_DRF, RS_WIN_FIXED, false, "drf" },
	};
	static const int mem_classes[2] = { 100, 10000 };
	const unsigned ncls = sizeof(classes) / sizeof(classes[0]);
	const char *clk = getenv("RS_BENCH_CLOCK");

	if (clk && strcmp(clk, "cpu") == 0)
		bench_clock = CLOCK_PROCESS_CPUTIME_ID;
	printf("libreqsched core benchmark: %ld requests per cell, %d users, "
	       "window %d, backlog %d\n", n, USERS, WINDOW, BACKLOG);
	printf("ns per request = enqueue + release + 10 byte events + end, "
	       "fastest of %d segments%s\n", SEGMENTS,
	       bench_clock == CLOCK_MONOTONIC ? "" : " (CPU time)");
	table(modes, sizeof(modes) / sizeof(modes[0]), classes, ncls, false, n,
	      argc, argv);
	printf("%d resources of %d units, costs 4..38, no window\n", NRES,
	       CAPACITY);
	table(res_modes, sizeof(res_modes) / sizeof(res_modes[0]), classes,
	      ncls, true, n, argc, argv);
	for (unsigned k = 0; k < 2; k++)
		printf("memory: %.1f bytes per queued request (1,000,000 queued, "
		       "%d classes, %d users)\n",
		       bytes_per_queued(1000000, mem_classes[k]), mem_classes[k],
		       USERS);
	return 0;
}
