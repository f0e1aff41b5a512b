/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_mqos.c - the multi-resource policies (mqos, sqos, drf), the cost
 * vectors and the resource availability counters, with a three-class,
 * three-resource example worked by hand for each policy.
 *
 * The example: resources cpu, disk, bw of capacity 100 each; classes gold
 * (weight 6), silver (3), bronze (1), res_quantum 0.05, so the quanta are
 * 30, 15 and 5 units of each resource. Request kinds (cpu, disk, bw):
 * C = (20, 5, 5), D = (5, 20, 5), B = (5, 5, 20). A request of a fourth
 * class "fill" (weight 20: quantum 100) holds the whole server while
 *   gold: C1 C2 D1   silver: C3 D2   bronze: B1 C4
 * are queued in that order; its end lets them go in one release loop,
 * whose order each test traces by hand in its comments.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

enum { GOLD, SILVER, BRONZE, FILL };

static const uint32_t C[3] = { 20, 5, 5 }, D[3] = { 5, 20, 5 },
		      B[3] = { 5, 5, 20 }, ALL[3] = { 100, 100, 100 };

static struct rs_config res_cfg(enum rs_policy p)
{
	struct rs_config cfg = cfg_base(p, RS_WIN_FIXED);

	cfg.fixed_window = 1000;	/* only the RACs hold requests */
	cfg.nres = 3;
	cfg.res_quantum = 0.05;
	return cfg;
}

static rs_id enq_cost(struct rs_sched *s, int cls, const uint32_t *cost,
		      rs_time_ns now)
{
	rs_id id = 0;

	ck_assert_int_eq(rs_enqueue_cost(s, cls, (uint64_t)cls + 1, NULL, cost,
					 NULL, now, &id), 0);
	return id;
}

/* The example's scheduler with the seven requests queued behind "fill";
 * ids[] in the order C1 C2 D1 C3 D2 B1 C4. */
enum { C1, C2, D1, C3, D2, B1, C4, NEX };

static struct rs_sched *example(enum rs_policy p, struct rec *rec,
				rs_id *ids)
{
	struct rs_config cfg = res_cfg(p);
	struct rs_sched *s = rs_new(&cfg, rec_release, rec);
	rs_id fill;

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(rs_class_add(s, "gold", 6), GOLD);
	ck_assert_int_eq(rs_class_add(s, "silver", 3), SILVER);
	ck_assert_int_eq(rs_class_add(s, "bronze", 1), BRONZE);
	ck_assert_int_eq(rs_class_add(s, "fill", 20), FILL);
	fill = enq_cost(s, FILL, ALL, 0);
	ck_assert_int_eq(rec->n, 1);
	ids[C1] = enq_cost(s, GOLD, C, 0);
	ids[C2] = enq_cost(s, GOLD, C, 0);
	ids[D1] = enq_cost(s, GOLD, D, 0);
	ids[C3] = enq_cost(s, SILVER, C, 0);
	ids[D2] = enq_cost(s, SILVER, D, 0);
	ids[B1] = enq_cost(s, BRONZE, B, 0);
	ids[C4] = enq_cost(s, BRONZE, C, 0);
	ck_assert_int_eq(rec->n, 1);	/* the server is full */
	ck_assert_int_eq(rs_on_end(s, fill, false, 1), 0);
	return s;
}

static struct rs_resource_stats rstats(struct rs_sched *s, int cls,
				       unsigned res)
{
	struct rs_resource_stats st;

	ck_assert_int_eq(rs_get_resource_stats(s, cls, res, &st), 0);
	return st;
}

static void expect_order(const struct rec *rec, const rs_id *ids,
			 const int *order, int n)
{
	int i;

	ck_assert_int_eq(rec->n, 1 + n);
	for (i = 0; i < n; i++)
		ck_assert_msg(rec->id[1 + i] == ids[order[i]],
			      "release %d is not request %d", i, order[i]);
}

static void expect_in_use(struct rs_sched *s, int cls, uint64_t cpu,
			  uint64_t disk, uint64_t bw)
{
	ck_assert_uint_eq(rstats(s, cls, 0).in_use, cpu);
	ck_assert_uint_eq(rstats(s, cls, 1).in_use, disk);
	ck_assert_uint_eq(rstats(s, cls, 2).in_use, bw);
}

/* After the example's seven releases every class holds its requests'
 * costs - gold C1 C2 D1, silver C3 D2, bronze B1 C4 - whatever the order
 * (sqos: of the cpu only). */
static void expect_held(struct rs_sched *s, bool cpu_only)
{
	static const uint64_t held[4][3] = {
		{ 95, 65, 50 }, { 45, 30, 15 }, { 25, 25, 10 }, { 25, 10, 25 },
	};
	static const int who[4] = { -1, GOLD, SILVER, BRONZE };

	for (int i = 0; i < 4; i++)
		expect_in_use(s, who[i], held[i][0], cpu_only ? 0 : held[i][1],
			      cpu_only ? 0 : held[i][2]);
}

/* Every request ends: the RACs are full again. */
static void end_all(struct rs_sched *s, const struct rec *rec, int from)
{
	int i;

	for (i = from; i < rec->n; i++)
		ck_assert_int_eq(rs_on_end(s, rec->id[i], false, 2), 0);
	expect_in_use(s, -1, 0, 0, 0);
	ck_assert_uint_eq(gstats(s).W, 0);
}

/*
 * mqos. Quanta on joining: gold DC (30,30,30), silver (15,15,15), bronze
 * (5,5,5). Lists: cpu [gold silver bronze], disk [gold silver], bw
 * [bronze]; a sub-scheduler checks its own DC, charges all. Used (cpu,
 * disk, bw) after each release:
 * 1. all 100% free, cpu first: gold C1 (cpu DC 30), DC (10,25,25);
 *    used (20,5,5)
 * 2. disk most available: gold D1 (disk DC 25), DC (5,5,20), gold leaves
 *    the disk list; (25,25,10)
 * 3. bw: bronze B1 needs bw DC 20 > 5: a bw round (10), the list is short
 *    of deficit: two more rounds at once (20): B1, DC (0,0,0); (30,30,30)
 * 4. all 70 % free, cpu: gold 5, silver 15, bronze 0 < 20: a cpu round;
 *    gold 35: C2, gold is empty; (50,35,35)
 * 5. disk: silver D2 needs 20 > 15: a disk round (30): D2, silver DC
 *    (25,10,10); (55,55,40)
 * 6. bw idle; cpu [silver bronze]: silver C3 (25); (75,60,45)
 * 7. cpu: bronze C4 needs 20 > 5: a round (10), two more at once (20):
 *    C4, bronze DC (0,-5,-5): a debt on disk and bw; (95,65,50).
 */
START_TEST(mqos_example)
{
	static const int order[] = { C1, D1, B1, C2, D2, C3, C4 };
	struct rec rec = { 0 };
	rs_id ids[NEX];
	struct rs_sched *s = example(RS_POLICY_MQOS, &rec, ids);

	expect_order(&rec, ids, order, NEX);
	expect_held(s, false);
	/* another C waits for cpu room: 95 + 20 > 100 */
	enq_cost(s, GOLD, C, 2);
	ck_assert_int_eq(rec.n, 8);
	ck_assert_int_eq(rs_on_end(s, ids[C1], false, 2), 0);	/* 75 */
	ck_assert_int_eq(rec.n, 9);
	expect_in_use(s, -1, 95, 65, 50);
	ck_assert_uint_eq(rstats(s, GOLD, 0).consumed, 65);
	ck_assert_uint_eq(rstats(s, -1, 0).consumed, 100 + 95 + 20);
	end_all(s, &rec, 2);
	rs_free(s);
}
END_TEST

/*
 * sqos over cpu: DRR over the cpu costs (C 20, D 5, B 5), quanta 30, 15,
 * 5; only RAC_cpu gates and only cpu is held. Round [gold silver bronze]:
 * 1. gold +30: C1 (DC 10)         2. C2 20 > 10; silver +15: C3 20 > 15;
 *    bronze +5: B1 (DC 0)         3. C4 20 > 0; gold +30 = 40: C2 (20)
 * 4. gold D1 (15), gold empties   5. silver +15 = 30: C3 (10)
 * 6. silver D2 (5), empties       7. bronze +5: C4 20 > 5, skip two rounds
 *    (15), +5: C4. cpu used 95; disk and bw never held.
 */
START_TEST(sqos_example)
{
	static const int order[] = { C1, B1, C2, D1, C3, D2, C4 };
	struct rec rec = { 0 };
	rs_id ids[NEX];
	struct rs_sched *s = example(RS_POLICY_SQOS, &rec, ids);

	expect_order(&rec, ids, order, NEX);
	expect_held(s, true);
	enq_cost(s, GOLD, C, 2);	/* cpu 95 + 20 > 100: waits */
	enq_cost(s, SILVER, D, 2);	/* behind it in the round */
	ck_assert_int_eq(rec.n, 8);
	ck_assert_int_eq(rs_on_end(s, ids[C1], false, 2), 0);
	ck_assert_int_eq(rec.n, 10);	/* cpu 75 + 20 + 5 */
	expect_in_use(s, -1, 100, 0, 0);
	end_all(s, &rec, 2);
	rs_free(s);
}
END_TEST

/*
 * drf: the smallest drf_used first (the dominant shares given, each / w;
 * every kind's dominant share is 0.2); ties: the lower index.
 * 1. all 0: gold C1, gold .033        2. silver 0: C3, .067
 * 3. bronze 0: B1, .2                 4. gold .033: C2, .067
 * 5. gold .067 = silver .067: gold D1 (.1), gold empties
 * 6. silver .067: D2 (.133)           7. bronze .2: C4 (.4); used (95,65,50).
 * Then gold's C5 (20,5,5) comes back at V = .2 (bronze's key before its
 * charge) and has no cpu room: reserved; silver's D3 (5,20,5), also at .2,
 * comes after it (index) and does not fit beside what C5 needs (cpu 95 +
 * 20 + 5). C3 ends (75,60,45): C5 goes (95,65,50), then D3 (100,85,55).
 */
START_TEST(drf_example)
{
	static const int order[] = { C1, C3, B1, C2, D1, D2, C4 };
	struct rec rec = { 0 };
	rs_id ids[NEX], c5, d3;
	struct rs_sched *s = example(RS_POLICY_DRF, &rec, ids);

	expect_order(&rec, ids, order, NEX);
	expect_held(s, false);
	ck_assert_double_eq_tol(service(s, GOLD), 0.45 / 6, 1e-12);
	c5 = enq_cost(s, GOLD, C, 2);
	d3 = enq_cost(s, SILVER, D, 2);
	ck_assert_int_eq(rec.n, 8);
	ck_assert_int_eq(rs_on_end(s, ids[C3], false, 2), 0);
	ck_assert_int_eq(rec.n, 10);
	ck_assert(rec.id[8] == c5 && rec.id[9] == d3);
	expect_in_use(s, -1, 100, 85, 55);
	for (int i = 1; i < rec.n; i++)
		if (rec.id[i] != ids[C3])
			ck_assert_int_eq(rs_on_end(s, rec.id[i], false, 3), 0);
	expect_in_use(s, -1, 0, 0, 0);
	rs_free(s);
}
END_TEST

/* Index of id among n ids, or -1. */
static int id_index(const rs_id *ids, int n, rs_id id)
{
	int i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return i;
	return -1;
}

/*
 * drf when one request fills the server: at every decision both classes
 * hold nothing, so only drf_used tells them apart. Weights 4:1, every
 * request costs the whole server (dominant share 1): gold's drf_used grows
 * by 0.25 a request, bronze's by 1. Releases: G (tie 0 = 0: index) B (0 <
 * .25) G G G (.5 .75 1) G (1 = 1: index, 1.25) B (1 < 1.25) G G G G B ...:
 * 41 gold and 11 bronze in the first 52. Before drf_used every tie went
 * to gold (Squid: 48:0). Then gold alone for 20: bronze's next request
 * starts at V (gold's drf_used before its last charge), not at its old
 * 12: it gets one turn, not a run of the five it "missed".
 */
START_TEST(drf_one_request_fills_the_server)
{
	static const char want[] = "GBGGGGBGGGGB";
	struct rs_config cfg = res_cfg(RS_POLICY_DRF);
	struct rec *rec = calloc(1, sizeof(*rec));
	rs_id gold[80], bronze[14], last;
	struct rs_sched *s;
	int i, ngold = 0, nbronze = 0;
	rs_time_ns now = 1;

	ck_assert_ptr_nonnull(rec);
	s = rs_new(&cfg, rec_release, rec);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(rs_class_add(s, "gold", 4), 0);
	ck_assert_int_eq(rs_class_add(s, "bronze", 1), 1);
	for (i = 0; i < 80; i++)
		gold[i] = enq_cost(s, 0, ALL, now);
	for (i = 0; i < 12; i++)
		bronze[i] = enq_cost(s, 1, ALL, now);
	for (i = 0; i < 52; i++) {
		ck_assert_int_eq(rec->n, i + 1);	/* one at a time */
		last = rec->id[i];
		if (id_index(gold, 80, last) >= 0) {
			ngold++;
		} else {
			ck_assert_int_ge(id_index(bronze, 12, last), 0);
			nbronze++;
		}
		if (i < 12)
			ck_assert_msg((id_index(gold, 80, last) >= 0) == (want[i] == 'G'),
				      "release %d: want %c", i, want[i]);
		ck_assert_int_eq(rs_on_end(s, last, false, ++now), 0);
	}
	ck_assert_int_eq(ngold, 41);
	ck_assert_int_eq(nbronze, 11);
	/* gold 10.25, bronze 11: G G G G (11.25), then bronze's last (12) */
	for (i = 52; i < 77; i++) {
		if (i == 56)
			ck_assert(rec->id[i] == bronze[11]);
		else
			ck_assert_int_ge(id_index(gold, 80, rec->id[i]), 0);
		ck_assert_int_eq(rs_on_end(s, rec->id[i], false, ++now), 0);
	}
	/* gold alone for 20 (16.25); the 78th release is gold's (16.5, V =
	 * 16.25). Bronze comes back at V, not at 12: one turn, then gold. */
	ck_assert_int_eq(rec->n, 78);
	bronze[12] = enq_cost(s, 1, ALL, now);
	bronze[13] = enq_cost(s, 1, ALL, now);
	ck_assert_int_eq(rs_on_end(s, rec->id[77], false, ++now), 0);
	ck_assert(rec->id[78] == bronze[12]);
	ck_assert_int_eq(rs_on_end(s, rec->id[78], false, ++now), 0);
	ck_assert_int_ge(id_index(gold, 80, rec->id[79]), 0);
	rs_free(s);
	free(rec);
}
END_TEST

/*
 * drf counts what a class was given, not what it holds now. Weights 2:1,
 * every request K = (25, 1, 1) (dominant share .25: four fill the cpu),
 * queued behind a request of "fill" that holds the whole server; gold's
 * requests end as soon as they are released, bronze's never. drf_used
 * grows by .125 a gold request, .25 a bronze one (exact in binary), so
 * once fill ends: G B G G (the cpu full), then one release per gold end:
 * B (.25 < .375) G G (.5 = .5: index) B G G B: bronze holds all four slots
 * after 7 gold and 4 bronze, 2:1 given whatever how long each holds. With
 * the key at what a class holds now (before 2026-11-26) bronze stopped at
 * 2 slots (it went only while it held no more than half of what gold
 * held) and every later slot went to gold.
 */
START_TEST(drf_counts_what_was_given)
{
	static const uint32_t K[3] = { 25, 1, 1 };
	static const char want[] = "GBGGBGGBGGB";
	struct rs_config cfg = res_cfg(RS_POLICY_DRF);
	struct rec *rec = calloc(1, sizeof(*rec));
	rs_id gold[30], bronze[30], fill;
	struct rs_sched *s;
	int i, next = 0, ngold = 0;

	ck_assert_ptr_nonnull(rec);
	s = rs_new(&cfg, rec_release, rec);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(rs_class_add(s, "gold", 2), 0);
	ck_assert_int_eq(rs_class_add(s, "bronze", 1), 1);
	ck_assert_int_eq(rs_class_add(s, "fill", 20), 2);
	fill = enq_cost(s, 2, ALL, 1);
	for (i = 0; i < 30; i++) {
		gold[i] = enq_cost(s, 0, K, 1);
		bronze[i] = enq_cost(s, 1, K, 1);
	}
	ck_assert_int_eq(rec->n, 1);
	ck_assert_int_eq(rs_on_end(s, fill, false, 2), 0);
	ck_assert_int_eq(rec->n, 5);
	/* end each gold request in service, in release order */
	for (next = 1; next < rec->n; next++) {
		bool is_gold = id_index(gold, 30, rec->id[next]) >= 0;

		ck_assert_msg(next - 1 < (int)sizeof(want) - 1,
			      "release %d past the %zu expected", next - 1, sizeof(want) - 1);
		ck_assert_msg(is_gold == (want[next - 1] == 'G'),
			      "release %d: want %c", next - 1, want[next - 1]);
		if (is_gold) {
			ngold++;
			ck_assert_int_eq(rs_on_end(s, rec->id[next], false, 3), 0);
		}
	}
	ck_assert_int_eq(ngold, 7);
	ck_assert_int_eq(rec->n, 12);
	expect_in_use(s, 1, 100, 4, 4);	/* bronze holds every slot */
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(rs_on_end(s, bronze[i], false, 4), 0);
	ck_assert_int_eq(rec->n, 16);
	rs_free(s);
	free(rec);
}
END_TEST

/*
 * The reservation (reservation.c): capacities 100; gold's small requests S
 * = (50, 0, 1) fill the cpu two at a time and hold 1 % of the bandwidth,
 * bronze's media file M = (0, 0, 100) needs the whole bandwidth. S1 S2
 * go, M has no room (bw 2) and is reserved. Then a stream: each step a new
 * S arrives and the older S in service ends. The first `passes` steps (the
 * policy's ops->resv_passes: mqos 4, drf 0) the new S goes (cpu 50 + 50,
 * bw 1 + 1); at the next one it waits, as it does not fit beside M (bw 1 +
 * 100 + 1); at the one after the last S holding bandwidth ends and M goes,
 * the two waiting S behind it. Before the reservation every new S went and
 * M never did.
 */
static void stream(enum rs_policy p)
{
	static const uint32_t S[3] = { 50, 0, 1 }, M[3] = { 0, 0, 100 };
	struct rs_config cfg = res_cfg(p);
	struct rec *rec = calloc(1, sizeof(*rec));
	struct rs_sched *s = rs_new(&cfg, rec_release, rec);
	int k, passes = p == RS_POLICY_MQOS ? 4 : 0;
	rs_id m, old;

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(rs_class_add(s, "gold", 6), GOLD);
	ck_assert_int_eq(rs_class_add(s, "silver", 3), SILVER);
	ck_assert_int_eq(rs_class_add(s, "bronze", 1), BRONZE);
	enq_cost(s, GOLD, S, 0);
	enq_cost(s, GOLD, S, 0);
	m = enq_cost(s, BRONZE, M, 0);
	ck_assert_int_eq(rec->n, 2);
	for (k = 0; k < passes + 2; k++) {
		old = rec->id[k];	/* the older S in service */
		enq_cost(s, GOLD, S, k + 1);
		ck_assert_int_eq(rs_on_end(s, old, false, k + 1), 0);
		ck_assert_int_eq(rec->n, k < passes ? 3 + k :
				 k == passes ? 2 + passes : 3 + passes);
	}
	ck_assert(rec->id[2 + passes] == m);
	expect_in_use(s, -1, 0, 0, 100);
	ck_assert_int_eq(rs_on_end(s, m, false, k + 1), 0);
	ck_assert_int_eq(rec->n, 5 + passes);
	end_all(s, rec, 3 + passes);
	rs_free(s);
	free(rec);
}

START_TEST(reservation_mqos) { stream(RS_POLICY_MQOS); }
END_TEST
START_TEST(reservation_drf) { stream(RS_POLICY_DRF); }
END_TEST

/*
 * drf: a head without room no longer stops everything. Capacities 100;
 * gold's S = (50, 0, 1) twice (used 100, 0, 2); bronze's M = (0, 0, 100)
 * is at the top (key 0) without room: reserved; a fourth class's photo P
 * = (0, 50, 0) (weight 1, after bronze in the tie) needs nothing M needs
 * and goes. Before, nothing went until an end (0.4 of every resource on
 * the testbed with 100-% costs).
 */
START_TEST(drf_reserved_head_lets_others_go)
{
	static const uint32_t S[3] = { 50, 0, 1 }, M[3] = { 0, 0, 100 },
			      P[3] = { 0, 50, 0 };
	struct rs_config cfg = res_cfg(RS_POLICY_DRF);
	struct rec rec = { 0 };
	struct rs_sched *s = rs_new(&cfg, rec_release, &rec);
	rs_id ph;

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(rs_class_add(s, "gold", 6), GOLD);
	ck_assert_int_eq(rs_class_add(s, "silver", 3), SILVER);
	ck_assert_int_eq(rs_class_add(s, "bronze", 1), BRONZE);
	ck_assert_int_eq(rs_class_add(s, "photo", 1), FILL);
	enq_cost(s, GOLD, S, 0);
	enq_cost(s, GOLD, S, 0);
	enq_cost(s, BRONZE, M, 0);
	ck_assert_int_eq(rec.n, 2);
	ph = enq_cost(s, FILL, P, 0);
	ck_assert_int_eq(rec.n, 3);
	ck_assert(rec.id[2] == ph);
	expect_in_use(s, -1, 100, 50, 2);
	rs_free(s);
}
END_TEST

/* Weighted shares over a long backlog: every class keeps 100 requests of
 * each kind queued (C C D B: more cpu) - a request that ends is replaced
 * by one of the same class and kind -, capacities 1,000 (about 60
 * requests at once), requests end in release order. Each class's share of
 * the units taken of the first `exact` resources is checked against 6:3:1
 * (share +- 0.03), the order gold > silver > bronze on every resource
 * taken at all; the shares are printed. Measured (no randomness):
 *   mqos  cpu 0.594 0.301 0.106   disk 0.596 0.301 0.104
 *                                 bw 0.596 0.301 0.103
 *   sqos  cpu 0.596 0.300 0.105   (disk and bw not held)
 *   drf   0.595 0.301 0.104 on each resource
 */
static void long_run(enum rs_policy p, int exact)
{
	struct rs_config cfg = res_cfg(p);
	struct rec *rec = calloc(1, sizeof(*rec));
	struct rs_sched *s;
	const uint32_t *kinds[4] = { C, C, D, B };
	uint64_t sum[3] = { 0 }, per[3][3];
	int c, i, j, next = 0;
	rs_id id;

	ck_assert_ptr_nonnull(rec);
	for (j = 0; j < 3; j++)
		cfg.res_capacity[j] = 1000;
	s = rs_new(&cfg, rec_release, rec);
	rs_class_add(s, "gold", 6);
	rs_class_add(s, "silver", 3);
	rs_class_add(s, "bronze", 1);
	for (i = 0; i < 400; i++)
		for (c = 0; c < 3; c++)
			ck_assert_int_eq(rs_enqueue_cost(s, c, 1, NULL,
				kinds[i % 4], (void *)(uintptr_t)(4 * c + i % 4),
				0, &id), 0);
	while (rec->n < MAXREL - 64 && next < rec->n) {
		uintptr_t ck = (uintptr_t)rec->cookie[next];

		ck_assert_int_eq(rs_on_end(s, rec->id[next++], false, 1), 0);
		ck_assert_int_eq(rs_enqueue_cost(s, (int)(ck / 4), 1, NULL,
				 kinds[ck % 4], (void *)ck, 1, &id), 0);
	}
	for (c = 0; c < 3; c++)
		for (j = 0; j < 3; j++) {
			per[c][j] = rstats(s, c, (unsigned)j).consumed;
			sum[j] += per[c][j];
		}
	for (j = 0; j < 3 && sum[j]; j++) {
		double g = (double)per[0][j] / sum[j];
		double sv = (double)per[1][j] / sum[j];
		double b = (double)per[2][j] / sum[j];

		printf("%s resource %d: %.3f %.3f %.3f\n", rs_policy_name(p), j,
		       g, sv, b);
		ck_assert(g > sv && sv > b);
		ck_assert_msg(j >= exact ||
			      (fabs(g - 0.6) < 0.03 && fabs(sv - 0.3) < 0.03 &&
			       fabs(b - 0.1) < 0.03),
			      "%s resource %d: %.3f %.3f %.3f",
			      rs_policy_name(p), j, g, sv, b);
	}
	rs_free(s);
	free(rec);
}

START_TEST(shares_mqos) { long_run(RS_POLICY_MQOS, 3); }
END_TEST
START_TEST(shares_sqos) { long_run(RS_POLICY_SQOS, 1); }
END_TEST
START_TEST(shares_drf) { long_run(RS_POLICY_DRF, 3); }
END_TEST

/* A cost above a capacity counts as the whole capacity: it goes once the
 * server is empty, and gives back exactly what it took. */
START_TEST(cost_clamped)
{
	static const uint32_t huge[3] = { 1000, 1, 0 };
	struct rs_config cfg = res_cfg(RS_POLICY_MQOS);
	struct rec rec = { 0 };
	struct rs_sched *s = rs_new(&cfg, rec_release, &rec);
	rs_id a, b;

	rs_class_add(s, "c", 1);
	a = enq_cost(s, 0, C, 0);
	b = enq_cost(s, 0, huge, 0);
	ck_assert_int_eq(rec.n, 1);
	ck_assert_int_eq(rs_on_end(s, a, false, 1), 0);
	ck_assert_int_eq(rec.n, 2);
	ck_assert(rec.id[1] == b);
	expect_in_use(s, -1, 100, 1, 0);
	ck_assert_int_eq(rs_on_end(s, b, false, 2), 0);
	expect_in_use(s, -1, 0, 0, 0);
	/* no cost: costs nothing, goes at once */
	ck_assert_int_eq(rs_enqueue(s, 0, 1, NULL, NULL, 3, &a), 0);
	ck_assert_int_eq(rec.n, 3);
	expect_in_use(s, -1, 0, 0, 0);
	rs_free(s);
}
END_TEST

/* A reconfigure that lowers a capacity below what is in use: nothing that
 * needs the resource goes until enough has ended; a class removed while
 * its requests hold resources hands them to the default class. */
START_TEST(reconfigure_capacity)
{
	struct rs_config cfg = res_cfg(RS_POLICY_DRF);
	struct rec rec = { 0 };
	struct rs_sched *s = rs_new(&cfg, rec_release, &rec);
	const char *names[] = { "a" };
	double w[] = { 1 };
	rs_id x, y;

	rs_class_add(s, "a", 1);
	rs_class_add(s, "b", 1);
	x = enq_cost(s, 1, C, 0);
	y = enq_cost(s, 1, C, 0);
	ck_assert_int_eq(rec.n, 2);	/* cpu 40 */
	cfg.res_capacity[0] = 30;
	ck_assert_int_eq(rs_reconfigure(s, &cfg, names, w, 1, "a", 1), 0);
	expect_in_use(s, 0, 40, 10, 10);	/* b's requests moved to a */
	enq_cost(s, 0, C, 1);
	enq_cost(s, 0, D, 1);
	ck_assert_int_eq(rec.n, 2);	/* 40 > 30: cpu is over */
	ck_assert_int_eq(rs_on_end(s, x, false, 2), 0);	/* 20 + 20 > 30 */
	ck_assert_int_eq(rec.n, 2);
	ck_assert_int_eq(rs_on_end(s, y, false, 3), 0);	/* C and D: 25 */
	ck_assert_int_eq(rec.n, 4);
	expect_in_use(s, -1, 25, 25, 10);
	ck_assert_uint_eq(rstats(s, -1, 0).capacity, 30);
	/* to msf: the held resources still go back at the end */
	cfg.policy = RS_POLICY_MSF;
	ck_assert_int_eq(rs_reconfigure(s, &cfg, names, w, 1, "a", 4), 0);
	ck_assert_int_eq(rs_on_end(s, rec.id[2], false, 5), 0);
	ck_assert_int_eq(rs_on_end(s, rec.id[3], false, 5), 0);
	expect_in_use(s, -1, 0, 0, 0);
	rs_free(s);
}
END_TEST

/* rs_config_check() of the resources. */
START_TEST(resource_config)
{
	struct rs_config cfg;
	struct rs_resource_stats st;
	struct rec rec = { 0 };
	struct rs_sched *s;
	enum rs_policy p;

	cfg = res_cfg(RS_POLICY_MQOS);
	ck_assert_int_eq(rs_config_check(&cfg), 0);
	cfg.nres = 0;				/* mqos needs resources */
	ck_assert_int_eq(rs_config_check(&cfg), RS_EINVAL);
	ck_assert_ptr_null(rs_new(&cfg, rec_release, &rec));
	cfg = res_cfg(RS_POLICY_DRF);
	cfg.nres = RS_MAX_RESOURCES + 1;
	ck_assert_int_eq(rs_config_check(&cfg), RS_EINVAL);
	cfg = res_cfg(RS_POLICY_DRF);
	cfg.res_capacity[2] = 0;
	ck_assert_int_eq(rs_config_check(&cfg), RS_EINVAL);
	cfg = res_cfg(RS_POLICY_MQOS);
	cfg.res_quantum = 0;
	ck_assert_int_eq(rs_config_check(&cfg), RS_EINVAL);
	cfg.res_quantum = NAN;
	ck_assert_int_eq(rs_config_check(&cfg), RS_EINVAL);
	cfg.res_quantum = 1.5;
	ck_assert_int_eq(rs_config_check(&cfg), RS_EINVAL);
	cfg = res_cfg(RS_POLICY_MQOS);
	cfg.sff = true;				/* sff's sub-queues */
	ck_assert_int_eq(rs_config_check(&cfg), RS_EINVAL);
	cfg = res_cfg(RS_POLICY_DRF);
	cfg.controller = RS_WIN_RTC;
	ck_assert_int_eq(rs_config_check(&cfg), RS_EINVAL);
	cfg = res_cfg(RS_POLICY_SQOS);
	cfg.sqos_resource = 3;
	ck_assert_int_eq(rs_config_check(&cfg), RS_EINVAL);
	cfg.sqos_resource = 2;
	ck_assert_int_eq(rs_config_check(&cfg), 0);
	/* the other policies accept resources and ignore them */
	cfg = res_cfg(RS_POLICY_MSF);
	ck_assert_int_eq(rs_config_check(&cfg), 0);
	/* names */
	ck_assert_int_eq(rs_policy_parse("mqos", &p), 0);
	ck_assert_int_eq(p, RS_POLICY_MQOS);
	ck_assert_int_eq(rs_policy_parse("sqos", &p), 0);
	ck_assert_int_eq(rs_policy_parse("drf", &p), 0);
	ck_assert_str_eq(rs_policy_name(RS_POLICY_DRF), "drf");
	/* stats of a resource that is not there */
	cfg = res_cfg(RS_POLICY_MQOS);
	s = rs_new(&cfg, rec_release, &rec);
	rs_class_add(s, "c", 1);
	ck_assert_int_eq(rs_get_resource_stats(s, -1, 3, &st), RS_EINVAL);
	ck_assert_int_eq(rs_get_resource_stats(s, 1, 0, &st), RS_ENOCLASS);
	ck_assert_int_eq(rs_get_resource_stats(s, -1, 0, NULL), RS_EINVAL);
	ck_assert_int_eq(rs_get_resource_stats(s, 0, 0, &st), 0);
	ck_assert_uint_eq(st.capacity, 100);
	rs_free(s);
}
END_TEST

Suite *suite_mqos(void)
{
	Suite *su = suite_create("mqos");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, mqos_example);
	tcase_add_test(tc, sqos_example);
	tcase_add_test(tc, drf_example);
	tcase_add_test(tc, drf_one_request_fills_the_server);
	tcase_add_test(tc, drf_counts_what_was_given);
	tcase_add_test(tc, reservation_mqos);
	tcase_add_test(tc, reservation_drf);
	tcase_add_test(tc, drf_reserved_head_lets_others_go);
	tcase_add_test(tc, shares_mqos);
	tcase_add_test(tc, shares_sqos);
	tcase_add_test(tc, shares_drf);
	tcase_add_test(tc, cost_clamped);
	tcase_add_test(tc, reconfigure_capacity);
	tcase_add_test(tc, resource_config);
	suite_add_tcase(su, tc);
	return su;
}
