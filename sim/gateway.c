/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gateway.c - the website-gateway model: a web server with fixed resource
 * capacities behind a gateway that schedules requests (mQoS paper §4).
 *
 * Spec (one directive per line, '#' starts a comment):
 *   model gateway               (first directive)
 *   seed N     duration S       (measured, after the warm-up)
 *   warmup S   sample S         (self-check period)
 *   mode nqos|sqos|mqos|drf     quantum Q (res_quantum, 0 < Q <= 1)
 *   sqos_resource NAME          patience S (0 = never give up)
 *                               (sqos_resource: default the first)
 *   server_max N                (requests the server serves at once; more
 *                                wait in its FIFO; 0 = no limit)
 *   resource NAME               (capacity 100 %; up to RS_MAX_RESOURCES)
 *   kind NAME SERVICE_S COST...  (mean service time at full speed, and the
 *                                % of each resource it holds meanwhile)
 *   class NAME WEIGHT
 *   load CLASS RATE P...        (open loop: Poisson RATE req/s, the
 *                                probability of each kind)
 *   users CLASS COUNT THINK P... (closed loop: exp(THINK) between a
 *                                response and the next request)
 *   pages N                     (URLs per kind, /KIND/0 ... /KIND/N-1,
 *                                drawn uniformly; default 1)
 *   learn ENTRIES               (the gateway has no table: it learns costs
 *                                in a table of ENTRIES URLs and patterns;
 *                                0 = off, the default)
 *   default_cost P...           (learn: % of each resource of a URL
 *                                nothing was learned for; default 1)
 *
 * Server: processor sharing per resource. A request of kind k holds
 * cost_kj % of resource j while served; with L_j = the sum of what the
 * requests in service hold of j (in units of capacity), each runs at speed
 * 1 / max(1, max_j L_j over the resources it uses), so an overloaded
 * resource slows every request that needs it and the others idle. Between
 * events every speed is constant: the completion times are exact.
 * Utilization of j by a class = the integral of its requests' cost_kj *
 * speed over the measured period / the period.
 *
 * Gateway: nqos forwards at once (the server's FIFO holds what exceeds
 * server_max); sqos, mqos and drf enqueue each request in libreqsched with
 * its cost vector (units of 0.1 % of capacity) and forward it from the
 * release callback, with a window too large to matter. A request that has
 * not started service after `patience` seconds is dropped (rs_expire()
 * at the gateway, the server's FIFO for nqos). Self-check every sample:
 * what the library holds of each resource it manages equals the costs of
 * the requests in service that it released.
 *
 * Learning (learn ENTRIES): a request is enqueued with the cost the
 * library's learner (rs_costlearn_*) has for its URL, else for its kind's
 * pattern "/KIND/" + "*", else default_cost; when it is served, the cost it was
 * observed to hold is fed back for both keys, as a web server would report
 * it (Server-Timing): what it consumed of each resource over its time in
 * service, i.e. cost_kj times its mean speed there, at most 100 %.
 */
#define _POSIX_C_SOURCE 200809L	/* fmemopen, strtok_r */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "heap.h"
#include "reqsched.h"
#include "rng.h"
#include "spec.h"

#define GW_MAX_KINDS 8
#define GW_MAX_CLASSES 16
#define GW_MAX_LOADS 32
#define GW_NAME 32
#define GW_UNITS 1000.0		/* library units per 100 % */

enum gw_mode { GW_NQOS, GW_SQOS, GW_MQOS, GW_DRF };
static const char *const mode_names[] = { "nqos", "sqos", "mqos", "drf" };

struct gw_kind {
	char name[GW_NAME];
	double service;			/* mean, seconds at full speed */
	double cost[RS_MAX_RESOURCES];	/* fraction of capacity */
};

struct gw_load {
	int cls;
	bool closed;			/* users (closed) or load (open) */
	unsigned users;
	double rate, think;
	double p[GW_MAX_KINDS];		/* cumulative kind probabilities */
};

struct gw_spec {
	uint64_t seed;
	double duration, warmup, sample, quantum, patience;
	enum gw_mode mode;
	unsigned server_max, pages;
	uint32_t learn;			/* learner entries; 0 = the kinds' costs */
	double default_cost[RS_MAX_RESOURCES];	/* fraction of capacity */
	int sqos_res;
	char sqos_name[GW_NAME];
	char res[RS_MAX_RESOURCES][GW_NAME];
	int nres;
	struct gw_kind kinds[GW_MAX_KINDS];
	int nkinds;
	char cls[GW_MAX_CLASSES][GW_NAME];
	double weight[GW_MAX_CLASSES];
	int ncls;
	struct gw_load loads[GW_MAX_LOADS];
	int nloads;
};

enum { RQ_GATEWAY, RQ_FIFO, RQ_SERVED, RQ_DONE, RQ_DROPPED };

struct gw_req {
	int cls, kind, load;
	uint32_t user;			/* closed loop: its user; else 0 */
	uint32_t page;
	double t_arr, work;		/* work: remaining seconds at speed 1 */
	double t_srv;			/* when its service began */
	double used[RS_MAX_RESOURCES];	/* integral of cost * speed, s */
	uint32_t cost[RS_MAX_RESOURCES];	/* enqueued with, GW_UNITS */
	rs_id id;
	int state;
	bool lib;			/* released by the library */
};

struct gw_class_out {
	uint64_t done, dropped, kind_done[GW_MAX_KINDS];
	double lat_sum;
	double use[RS_MAX_RESOURCES];	/* integral of cost * speed, s */
};

struct gw {
	const struct gw_spec *sp;
	FILE *err;
	struct rs_sched *rs;
	struct sim_heap ev;
	struct sim_rng rng[GW_MAX_LOADS];
	struct gw_req *rq;
	uint32_t nrq, rq_cap;
	uint32_t *served;		/* requests in service */
	uint32_t nserved, served_cap;
	uint32_t *fifo;			/* nqos: the server's FIFO */
	uint32_t fifo_head, fifo_tail, fifo_cap;
	uint32_t *started;		/* released, to start (callback) */
	uint32_t nstarted, started_cap;
	double t;
	double load[RS_MAX_RESOURCES];	/* sum of cost of the served */
	struct gw_class_out out[GW_MAX_CLASSES];
	double t_end;
	struct rs_costlearn *learn;
	uint64_t costed[3];		/* by a URL, a pattern, the default */
};

enum { EV_ARRIVAL, EV_SAMPLE, EV_EXPIRE };

/* ---- spec ---- */

static int find(char names[][GW_NAME], int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

static int num(const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	return end != s && *end == '\0' && isfinite(*v) ? 0 : -1;
}

/* kind probabilities from tok[0..nkinds-1], cumulative */
static const char *probs(const struct gw_spec *sp, char **tok, int n,
			 double *p)
{
	double sum = 0, v;

	if (n != sp->nkinds)
		return "one probability per kind";
	for (int k = 0; k < n; k++) {
		if (num(tok[k], &v) || v < 0)
			return "bad probability";
		sum += v;
		p[k] = sum;
	}
	if (!(sum > 0))
		return "probabilities sum to 0";
	for (int k = 0; k < n; k++)
		p[k] /= sum;
	return NULL;
}

static const char *directive(struct gw_spec *sp, char **tok, int n)
{
	const char *k = tok[0];
	double v = 0;
	int i;

	if (n >= 2 && strcmp(k, "mode") && strcmp(k, "sqos_resource") &&
	    strcmp(k, "resource") && strcmp(k, "kind") && strcmp(k, "class") &&
	    strcmp(k, "load") && strcmp(k, "users") && strcmp(k, "model") &&
	    strcmp(k, "default_cost") && num(tok[1], &v))
		return "bad number";
	if (!strcmp(k, "model") && n == 2 && !strcmp(tok[1], "gateway"))
		return NULL;
	if (!strcmp(k, "seed") && n == 2 && v >= 0)
		sp->seed = (uint64_t)v;
	else if (!strcmp(k, "duration") && n == 2 && v > 0)
		sp->duration = v;
	else if (!strcmp(k, "warmup") && n == 2 && v >= 0)
		sp->warmup = v;
	else if (!strcmp(k, "sample") && n == 2 && v > 0)
		sp->sample = v;
	else if (!strcmp(k, "quantum") && n == 2 && v > 0 && v <= 1)
		sp->quantum = v;
	else if (!strcmp(k, "patience") && n == 2 && v >= 0)
		sp->patience = v;
	else if (!strcmp(k, "server_max") && n == 2 && v >= 0 && v < 1e6)
		sp->server_max = (unsigned)v;
	else if (!strcmp(k, "pages") && n == 2 && v >= 1 && v < 1e6)
		sp->pages = (unsigned)v;
	else if (!strcmp(k, "learn") && n == 2 && v >= 0 && v <= 1e6)
		sp->learn = (uint32_t)v;
	else if (!strcmp(k, "default_cost") && n == 1 + sp->nres && sp->nres) {
		for (i = 0; i < sp->nres; i++)
			if (num(tok[1 + i], &v) || v < 0 || v > 100)
				return "default_cost: a % of capacity per resource";
			else
				sp->default_cost[i] = v / 100;
	}
	else if (!strcmp(k, "mode") && n == 2) {
		for (i = 0; i < 4 && strcmp(tok[1], mode_names[i]); i++)
			;
		if (i == 4)
			return "mode: nqos, sqos, mqos or drf";
		sp->mode = (enum gw_mode)i;
	} else if (!strcmp(k, "sqos_resource") && n == 2) {
		snprintf(sp->sqos_name, GW_NAME, "%s", tok[1]);
	} else if (!strcmp(k, "resource") && n == 2) {
		if (sp->nres == RS_MAX_RESOURCES || sp->nkinds)
			return "resource: too many, or after a kind";
		snprintf(sp->res[sp->nres++], GW_NAME, "%s", tok[1]);
	} else if (!strcmp(k, "kind") && n == 3 + sp->nres) {
		struct gw_kind *kd = &sp->kinds[sp->nkinds];

		if (sp->nkinds == GW_MAX_KINDS || sp->nloads)
			return "kind: too many, or after a load";
		snprintf(kd->name, GW_NAME, "%s", tok[1]);
		if (num(tok[2], &kd->service) || !(kd->service > 0))
			return "kind: bad service time";
		for (i = 0; i < sp->nres; i++)
			if (num(tok[3 + i], &v) || v < 0 || v > 100)
				return "kind: cost is a % of capacity";
			else
				kd->cost[i] = v / 100;
		sp->nkinds++;
	} else if (!strcmp(k, "class") && n == 3) {
		if (sp->ncls == GW_MAX_CLASSES || find(sp->cls, sp->ncls, tok[1]) >= 0)
			return "class: too many, or a duplicate";
		if (num(tok[2], &v) || !(v > 0))
			return "class: bad weight";
		snprintf(sp->cls[sp->ncls], GW_NAME, "%s", tok[1]);
		sp->weight[sp->ncls++] = v;
	} else if ((!strcmp(k, "load") && n >= 3) ||
		   (!strcmp(k, "users") && n >= 4)) {
		struct gw_load *l = &sp->loads[sp->nloads];
		bool closed = !strcmp(k, "users");
		const char *why;

		if (sp->nloads == GW_MAX_LOADS)
			return "too many load lines";
		l->cls = find(sp->cls, sp->ncls, tok[1]);
		if (l->cls < 0)
			return "unknown class";
		l->closed = closed;
		if (num(tok[2], &v) || !(v > 0))
			return "bad rate or user count";
		if (closed) {
			l->users = (unsigned)v;
			if (num(tok[3], &l->think) || l->think < 0)
				return "bad think time";
		} else {
			l->rate = v;
		}
		why = probs(sp, tok + (closed ? 4 : 3), n - (closed ? 4 : 3), l->p);
		if (why)
			return why;
		sp->nloads++;
	} else {
		return "unknown directive or wrong arguments";
	}
	return NULL;
}

bool gateway_spec(const char *text)
{
	const char *p = text;

	for (;;) {
		p += strspn(p, " \t\r\n");
		if (*p != '#')
			break;
		p += strcspn(p, "\n");
	}
	return !strncmp(p, "model", 5) && strspn(p + 5, " \t") > 0 &&
	       !strncmp(p + 5 + strspn(p + 5, " \t"), "gateway", 7);
}

static int spec_parse(struct gw_spec *sp, const char *text, const char *name,
		      FILE *err)
{
	FILE *in = fmemopen((void *)(uintptr_t)text, strlen(text), "r");
	char line[1024];
	int lineno = 0, rc = 0;

	memset(sp, 0, sizeof(*sp));
	sp->seed = 1;
	sp->duration = 60;
	sp->sample = 1;
	sp->quantum = 0.05;
	sp->pages = 1;
	for (int j = 0; j < RS_MAX_RESOURCES; j++)
		sp->default_cost[j] = 0.01;
	if (!in)
		return -1;
	while (fgets(line, sizeof(line), in)) {
		char *tok[4 + RS_MAX_RESOURCES + GW_MAX_KINDS];
		const char *why;
		int n;

		lineno++;
		n = spec_split(line, tok, (int)(sizeof(tok) / sizeof(tok[0])));
		if (!n)
			continue;
		why = directive(sp, tok, n);
		if (why) {
			fprintf(err, "%s:%d: %s\n", name, lineno, why);
			rc = -1;
		}
	}
	fclose(in);
	if (!rc && (!sp->nres || !sp->nkinds || !sp->ncls || !sp->nloads)) {
		fprintf(err, "%s: needs resources, kinds, classes and a load\n",
			name);
		rc = -1;
	}
	if (!rc && *sp->sqos_name) {
		sp->sqos_res = find(sp->res, sp->nres, sp->sqos_name);
		if (sp->sqos_res < 0) {
			fprintf(err, "%s: sqos_resource %s: no such resource\n",
				name, sp->sqos_name);
			rc = -1;
		}
	}
	return rc;
}

/* ---- the server ---- */

static double speed(const struct gw *g, const struct gw_req *r)
{
	const struct gw_kind *kd = &g->sp->kinds[r->kind];
	double worst = 1;

	for (int j = 0; j < g->sp->nres; j++)
		if (kd->cost[j] > 0 && g->load[j] > worst)
			worst = g->load[j];
	return 1 / worst;
}

static void *grow(void *p, uint32_t *cap, size_t size)
{
	uint32_t n = *cap ? *cap * 2 : 256;
	void *q = realloc(p, (size_t)n * size);

	if (!q) {
		fprintf(stderr, "rs-sim: out of memory\n");
		exit(1);
	}
	*cap = n;
	return q;
}

static void serve(struct gw *g, uint32_t i)
{
	struct gw_req *r = &g->rq[i];

	if (g->nserved == g->served_cap)
		g->served = grow(g->served, &g->served_cap, sizeof(*g->served));
	g->served[g->nserved++] = i;
	r->state = RQ_SERVED;
	r->t_srv = g->t;
	for (int j = 0; j < g->sp->nres; j++)
		g->load[j] += g->sp->kinds[r->kind].cost[j];
}

/* The server or its FIFO takes request i (nqos, or a release). */
static void forward(struct gw *g, uint32_t i)
{
	if (!g->sp->server_max || g->nserved < g->sp->server_max) {
		serve(g, i);
		return;
	}
	if (g->fifo_tail - g->fifo_head == g->fifo_cap) {
		uint32_t n = g->fifo_tail - g->fifo_head, *q, cap = g->fifo_cap;

		q = grow(NULL, &cap, sizeof(*q));
		for (uint32_t k = 0; k < n; k++)
			q[k] = g->fifo[(g->fifo_head + k) % g->fifo_cap];
		free(g->fifo);
		g->fifo = q;
		g->fifo_cap = cap;
		g->fifo_head = 0;
		g->fifo_tail = n;
	}
	g->fifo[g->fifo_tail++ % g->fifo_cap] = i;
	g->rq[i].state = RQ_FIFO;
}

/* Time passes: every served request progresses, usage is integrated
 * over the part of [warmup, t_end) that dt covers. */
static void advance(struct gw *g, double t)
{
	double dt = t - g->t;
	double a = g->t > g->sp->warmup ? g->t : g->sp->warmup;
	double b = t < g->t_end ? t : g->t_end;
	double in = b > a ? b - a : 0;

	for (uint32_t k = 0; k < g->nserved && dt > 0; k++) {
		struct gw_req *r = &g->rq[g->served[k]];
		double v = speed(g, r);

		r->work -= v * dt;
		for (int j = 0; j < g->sp->nres; j++) {
			r->used[j] += g->sp->kinds[r->kind].cost[j] * v * dt;
			if (in > 0)
				g->out[r->cls].use[j] +=
					g->sp->kinds[r->kind].cost[j] * v * in;
		}
	}
	g->t = t;
}

static double next_completion(const struct gw *g, uint32_t *which)
{
	double best = INFINITY;

	for (uint32_t k = 0; k < g->nserved; k++) {
		const struct gw_req *r = &g->rq[g->served[k]];
		double t = g->t + (r->work > 0 ? r->work : 0) / speed(g, r);

		if (t < best) {
			best = t;
			*which = k;
		}
	}
	return best;
}

/* ---- requests ---- */

static rs_time_ns ns(double t)
{
	return (rs_time_ns)llround(t * 1e9) + 1;
}

static void on_release(void *ctx, rs_id id, void *cookie)
{
	struct gw *g = ctx;
	uint32_t i = (uint32_t)(uintptr_t)cookie;

	(void)id;
	if (g->nstarted == g->started_cap)
		g->started = grow(g->started, &g->started_cap,
				  sizeof(*g->started));
	g->started[g->nstarted++] = i;
}

/* Forward what the library released inside the last call. */
static void start_released(struct gw *g)
{
	for (uint32_t k = 0; k < g->nstarted; k++) {
		g->rq[g->started[k]].lib = true;
		forward(g, g->started[k]);
	}
	g->nstarted = 0;
}

/* After a library call: its error (-1), or forward what it released. */
static int after_lib(struct gw *g, int err, const char *call)
{
	if (err) {
		fprintf(g->err, "%s: %s\n", call, rs_strerror(err));
		return -1;
	}
	start_released(g);
	return 0;
}

/* Request r's URL key (pattern 0) or its kind's pattern key (1). */
static uint64_t url_key(const struct gw *g, const struct gw_req *r,
			int pattern)
{
	char url[GW_NAME + 16];
	int n = snprintf(url, sizeof(url), "/%s/%" PRIu32,
			 g->sp->kinds[r->kind].name, r->page);

	return rs_costlearn_key(url, (size_t)n, pattern);
}

/* The cost r is enqueued with: its kind's, or what was learned. */
static void cost_of(struct gw *g, struct gw_req *r)
{
	int j;

	if (!g->learn) {
		for (j = 0; j < g->sp->nres; j++)
			r->cost[j] = (uint32_t)lround(g->sp->kinds[r->kind].cost[j] *
						      GW_UNITS);
		return;
	}
	if (rs_costlearn_lookup(g->learn, url_key(g, r, 0), r->cost)) {
		g->costed[0]++;
	} else if (rs_costlearn_lookup(g->learn, url_key(g, r, 1), r->cost)) {
		g->costed[1]++;
	} else {
		g->costed[2]++;
		for (j = 0; j < g->sp->nres; j++)
			r->cost[j] = (uint32_t)lround(g->sp->default_cost[j] *
						      GW_UNITS);
	}
}

/* What served request r was observed to hold, fed back for its keys. */
static void learn_cost(struct gw *g, const struct gw_req *r)
{
	uint32_t seen[RS_MAX_RESOURCES] = { 0 };
	double held = g->t - r->t_srv;

	if (!g->learn || !(held > 0))
		return;
	for (int j = 0; j < g->sp->nres; j++)
		seen[j] = (uint32_t)lround(fmin(r->used[j] / held, 1) * GW_UNITS);
	rs_costlearn_observe(g->learn, url_key(g, r, 0), seen);
	rs_costlearn_observe(g->learn, url_key(g, r, 1), seen);
}

static int pick_kind(struct sim_rng *rng, const double *p, int n)
{
	double u = rng_uniform(rng);
	int k = 0;

	while (k < n - 1 && u >= p[k])
		k++;
	return k;
}

static int arrive(struct gw *g, int load, uint32_t user)
{
	const struct gw_load *l = &g->sp->loads[load];
	struct gw_req *r;
	uint32_t i = g->nrq;

	if (g->nrq == g->rq_cap)
		g->rq = grow(g->rq, &g->rq_cap, sizeof(*g->rq));
	r = &g->rq[g->nrq++];
	memset(r, 0, sizeof(*r));
	r->cls = l->cls;
	r->load = load;
	r->user = user;
	r->kind = pick_kind(&g->rng[load], l->p, g->sp->nkinds);
	r->work = rng_exp(&g->rng[load], g->sp->kinds[r->kind].service);
	if (g->sp->pages > 1)	/* (one draw fewer: pages 1 keeps old runs) */
		r->page = (uint32_t)(rng_uniform(&g->rng[load]) * g->sp->pages) %
			  g->sp->pages;
	r->t_arr = g->t;
	r->state = RQ_GATEWAY;
	if (g->sp->mode == GW_NQOS) {
		forward(g, i);
		return 0;
	}
	cost_of(g, r);
	return after_lib(g, rs_enqueue_cost(g->rs, r->cls, user, NULL, r->cost,
					    (void *)(uintptr_t)i, ns(g->t),
					    &r->id),
			 "rs_enqueue_cost");
}

/* A response is over (or request i was dropped): its user thinks. */
static void next_of_user(struct gw *g, uint32_t i)
{
	const struct gw_req *r = &g->rq[i];
	const struct gw_load *l = &g->sp->loads[r->load];

	if (l->closed)
		heap_push(&g->ev, g->t + rng_exp(&g->rng[r->load], l->think > 0 ?
						 l->think : 1e-9),
			  EV_ARRIVAL, (uint32_t)r->load, r->user);
}

static bool measured(const struct gw *g)
{
	return g->t >= g->sp->warmup && g->t < g->t_end;
}

static int complete(struct gw *g, uint32_t k)
{
	uint32_t i = g->served[k];
	struct gw_req *r = &g->rq[i];

	g->served[k] = g->served[--g->nserved];
	for (int j = 0; j < g->sp->nres; j++) {
		g->load[j] -= g->sp->kinds[r->kind].cost[j];
		if (g->load[j] < 1e-12)
			g->load[j] = 0;
	}
	r->state = RQ_DONE;
	learn_cost(g, r);
	if (measured(g)) {
		struct gw_class_out *o = &g->out[r->cls];

		o->done++;
		o->kind_done[r->kind]++;
		o->lat_sum += g->t - r->t_arr;
	}
	next_of_user(g, i);
	if (g->fifo_head != g->fifo_tail)
		serve(g, g->fifo[g->fifo_head++ % g->fifo_cap]);
	if (r->lib)
		return after_lib(g, rs_on_end(g->rs, r->id, false, ns(g->t)),
				 "rs_on_end");
	return 0;
}

static void drop(struct gw *g, uint32_t i)
{
	g->rq[i].state = RQ_DROPPED;
	if (measured(g))
		g->out[g->rq[i].cls].dropped++;
	next_of_user(g, i);
}

/* Requests waiting longer than patience for service are dropped. */
static void expire(struct gw *g)
{
	double limit = g->t - g->sp->patience;

	while (g->fifo_head != g->fifo_tail &&
	       g->rq[g->fifo[g->fifo_head % g->fifo_cap]].t_arr < limit)
		drop(g, g->fifo[g->fifo_head++ % g->fifo_cap]);
	if (g->rs) {
		void *cookies[64];
		size_t n;

		do {
			n = rs_expire(g->rs, ns(g->t),
				      (rs_time_ns)llround(g->sp->patience * 1e9),
				      NULL, cookies, 64);
			for (size_t k = 0; k < n; k++)
				drop(g, (uint32_t)(uintptr_t)cookies[k]);
		} while (n == 64);
		start_released(g);
	}
}

/* What the library holds of each resource it manages = the costs of the
 * served requests it released. */
static int self_check(struct gw *g)
{
	for (int j = 0; g->rs && j < g->sp->nres; j++) {
		struct rs_resource_stats st;
		uint64_t want = 0;

		if (g->sp->mode == GW_SQOS && j != g->sp->sqos_res)
			continue;
		for (uint32_t k = 0; k < g->nserved; k++) {
			const struct gw_req *r = &g->rq[g->served[k]];

			if (r->lib)
				want += r->cost[j];
		}
		if (rs_get_resource_stats(g->rs, -1, (unsigned)j, &st) ||
		    st.in_use != want || st.in_use > st.capacity) {
			fprintf(g->err, "self-check: resource %d in use %" PRIu64
				", served %" PRIu64 "\n", j, st.in_use, want);
			return -1;
		}
	}
	return 0;
}

/* ---- run ---- */

static int setup(struct gw *g)
{
	const struct gw_spec *sp = g->sp;
	struct rs_config cfg;
	static const enum rs_policy pol[] = {
		[GW_SQOS] = RS_POLICY_SQOS, [GW_MQOS] = RS_POLICY_MQOS,
		[GW_DRF] = RS_POLICY_DRF,
	};

	for (int l = 0; l < sp->nloads; l++) {
		rng_seed(&g->rng[l], sp->seed * 1000003ULL + (uint64_t)l);
		if (sp->loads[l].closed)
			for (uint32_t u = 0; u < sp->loads[l].users; u++)
				heap_push(&g->ev, rng_uniform(&g->rng[l]) *
					  (sp->loads[l].think + 0.01),
					  EV_ARRIVAL, (uint32_t)l, u + 1);
		else
			heap_push(&g->ev, rng_exp(&g->rng[l], 1 / sp->loads[l].rate),
				  EV_ARRIVAL, (uint32_t)l, 0);
	}
	heap_push(&g->ev, sp->sample, EV_SAMPLE, 0, 0);
	if (sp->patience > 0)
		heap_push(&g->ev, 0.01, EV_EXPIRE, 0, 0);
	if (sp->mode == GW_NQOS)
		return 0;
	rs_config_default(&cfg);
	cfg.policy = pol[sp->mode];
	cfg.controller = RS_WIN_FIXED;
	cfg.fixed_window = 1000000;	/* the resources hold the requests */
	cfg.link_bps = 1000000000;
	cfg.update_interval = RS_NSEC_PER_SEC;
	cfg.nres = (unsigned)sp->nres;
	for (int j = 0; j < sp->nres; j++)
		cfg.res_capacity[j] = (uint32_t)GW_UNITS;
	cfg.res_quantum = sp->quantum;
	cfg.sqos_resource = (unsigned)sp->sqos_res;
	g->rs = rs_new(&cfg, on_release, g);
	if (!g->rs) {
		fprintf(g->err, "rs_new: bad configuration\n");
		return -1;
	}
	if (sp->learn) {
		struct rs_costlearn_config lc;

		rs_costlearn_config_default(&lc);
		lc.nres = (unsigned)sp->nres;
		lc.entries = sp->learn;
		g->learn = rs_costlearn_new(&lc);
		if (!g->learn) {
			fprintf(g->err, "rs_costlearn_new failed\n");
			return -1;
		}
	}
	for (int c = 0; c < sp->ncls; c++)
		if (rs_class_add(g->rs, sp->cls[c], sp->weight[c]) != c) {
			fprintf(g->err, "rs_class_add %s failed\n", sp->cls[c]);
			return -1;
		}
	return 0;
}

static int event(struct gw *g, const struct sim_event *e)
{
	const struct gw_spec *sp = g->sp;

	switch (e->type) {
	case EV_ARRIVAL:
		if (!sp->loads[e->a].closed)
			heap_push(&g->ev, g->t + rng_exp(&g->rng[e->a],
							 1 / sp->loads[e->a].rate),
				  EV_ARRIVAL, e->a, 0);
		return arrive(g, (int)e->a, e->b);
	case EV_SAMPLE:
		heap_push(&g->ev, g->t + sp->sample, EV_SAMPLE, 0, 0);
		if (g->rs) {
			rs_on_timer(g->rs, ns(g->t));
			start_released(g);
		}
		return self_check(g);
	case EV_EXPIRE:
		heap_push(&g->ev, g->t + 0.01, EV_EXPIRE, 0, 0);
		expire(g);
		return 0;
	}
	return 0;
}

static void report(const struct gw *g, FILE *out)
{
	const struct gw_spec *sp = g->sp;
	double total = 0, lat = 0, use[RS_MAX_RESOURCES] = { 0 };
	uint64_t done = 0;

	fprintf(out, "{\"model\": \"gateway\", \"mode\": \"%s\", \"seed\": %"
		PRIu64 ", \"duration\": %g, \"warmup\": %g,\n \"resources\": [",
		mode_names[sp->mode], sp->seed, sp->duration, sp->warmup);
	for (int j = 0; j < sp->nres; j++)
		fprintf(out, "%s\"%s\"", j ? ", " : "", sp->res[j]);
	fprintf(out, "],\n \"kinds\": [");
	for (int k = 0; k < sp->nkinds; k++)
		fprintf(out, "%s\"%s\"", k ? ", " : "", sp->kinds[k].name);
	fprintf(out, "],\n \"classes\": [");
	for (int c = 0; c < sp->ncls; c++) {
		const struct gw_class_out *o = &g->out[c];

		fprintf(out, "%s\n  {\"name\": \"%s\", \"weight\": %g, \"done\": %"
			PRIu64 ", \"dropped\": %" PRIu64 ", \"throughput\": %.3f, "
			"\"latency_mean\": %.6f, \"kind_done\": [", c ? "," : "",
			sp->cls[c], sp->weight[c], o->done, o->dropped,
			(double)o->done / sp->duration,
			o->done ? o->lat_sum / (double)o->done : 0);
		for (int k = 0; k < sp->nkinds; k++)
			fprintf(out, "%s%" PRIu64, k ? ", " : "", o->kind_done[k]);
		fprintf(out, "], \"utilization\": [");
		for (int j = 0; j < sp->nres; j++) {
			fprintf(out, "%s%.6f", j ? ", " : "",
				o->use[j] / sp->duration);
			use[j] += o->use[j] / sp->duration;
		}
		fprintf(out, "]}");
		done += o->done;
		lat += o->lat_sum;
	}
	total = (double)done / sp->duration;
	fprintf(out, "],\n \"throughput\": %.3f, \"latency_mean\": %.6f, "
		"\"utilization\": [", total, done ? lat / (double)done : 0);
	for (int j = 0; j < sp->nres; j++)
		fprintf(out, "%s%.6f", j ? ", " : "", use[j]);
	fprintf(out, "]");
	if (g->learn) {
		struct rs_costlearn_stats st;

		rs_costlearn_get_stats(g->learn, &st);
		fprintf(out, ",\n \"learned\": {\"costed_url\": %" PRIu64
			", \"costed_pattern\": %" PRIu64 ", \"costed_default\": %"
			PRIu64 ", \"entries\": %" PRIu32 ", \"trusted\": %" PRIu32
			", \"evictions\": %" PRIu64 ", \"pattern_cost\": [",
			g->costed[0], g->costed[1], g->costed[2], st.entries,
			st.trusted, st.evictions);
		/* what each kind's pattern was learned to cost, % (null: not
		 * trusted) */
		for (int k = 0; k < sp->nkinds; k++) {
			struct gw_req r = { .kind = k };
			uint32_t c[RS_MAX_RESOURCES];

			fprintf(out, "%s", k ? ", " : "");
			if (!rs_costlearn_lookup(g->learn, url_key(g, &r, 1), c)) {
				fprintf(out, "null");
				continue;
			}
			for (int j = 0; j < sp->nres; j++)
				fprintf(out, "%s%g", j ? ", " : "[",
					c[j] * 100 / GW_UNITS);
			fprintf(out, "]");
		}
		fprintf(out, "]}");
	}
	fprintf(out, "}\n");
}

int gateway_run(const char *text, const char *name, FILE *out, FILE *err)
{
	struct gw_spec sp;
	struct gw g;
	int rc = 0;

	if (spec_parse(&sp, text, name, err))
		return -1;
	memset(&g, 0, sizeof(g));
	g.sp = &sp;
	g.err = err;
	g.t_end = sp.warmup + sp.duration;
	if (setup(&g))
		rc = -1;
	while (!rc) {
		uint32_t k = 0;
		double tc = next_completion(&g, &k), te = heap_top_time(&g.ev);
		struct sim_event e;

		if ((tc < te ? tc : te) >= g.t_end)
			break;
		if (tc <= te) {
			advance(&g, tc);
			rc = complete(&g, k);
		} else {
			heap_pop(&g.ev, &e);
			advance(&g, e.t);
			rc = event(&g, &e);
		}
	}
	if (!rc) {
		advance(&g, g.t_end);
		rc = self_check(&g);
	}
	if (!rc)
		report(&g, out);
	rs_free(g.rs);
	rs_costlearn_free(g.learn);
	heap_free(&g.ev);
	free(g.rq);
	free(g.served);
	free(g.fifo);
	free(g.started);
	return rc;
}
