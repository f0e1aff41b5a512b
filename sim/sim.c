/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim.c - event loop of the request-scheduling simulator.
 *
 * Time is a double in seconds; the library gets it as monotonic ns. The next
 * thing to happen is the earliest of: the heap's top event, the link's next
 * flow completion (fluid model, exact) and the library's timer deadline.
 *
 * Invariants:
 *  - a request is released exactly once (callback or ordinary mode) and
 *    ended exactly once (its flow completes) unless the run ends first;
 *  - bytes reported to the library for a request sum to its size;
 *  - user->inflight = requests of the user issued and not completed,
 *    cancelled or expired;
 *  - queued/outstanding per class equal the library's own counts (checked
 *    at every timeline sample; a difference is reported as an error).
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "link.h"
#include "reqsched.h"
#include "rng.h"
#include "sim.h"

#define SIM_MSS 1448.0	/* the payload of a full-size frame on the link counter */

enum ev_type {
	EV_CLASS_ON, EV_CLASS_OFF, EV_ARRIVAL, EV_FIRST_BYTE, EV_REPORT,
	EV_SAMPLE, EV_CBR, EV_CANCEL, EV_REWEIGHT,
};

enum req_state {
	REQ_QUEUED, REQ_RELEASED, REQ_TRANSFER, REQ_DONE, REQ_LOST,
	REQ_CANCELLED, REQ_EXPIRED,
};

struct sim_req {
	uint32_t user;
	uint32_t server;
	double size;		/* Content-Length */
	double xfer;		/* bytes actually sent (< size: aborted) */
	int cls;
	double t_req, t_rel, t_first, t_end;
	rs_id id;
	uint64_t reported;
	enum req_state state;
};

struct sim_user {
	int group, cls;
	uint64_t key;
	unsigned inflight;
	uint32_t gen;
	uint64_t bytes;
	uint32_t done;
	struct sim_rng rng;
};

struct sim_bin {
	double t;
	double class_bytes[SPEC_MAX_CLASSES];
	double cbr_bytes, link_bytes;
	double W, W_max, U;
	uint32_t queued;
};

struct pending {
	rs_id id;
	uint32_t req;
};

struct sim {
	const struct spec *sp;
	FILE *err;
	struct rs_sched *rs;
	struct rs_config cfg;
	double weights[SPEC_MAX_CLASSES + 1];	/* current, + cross class */
	int cross_cls;
	struct sim_link link;
	struct sim_heap heap;
	double now;
	rs_time_ns last_ns;
	double timer_at;
	double timer_floor;		/* no timer before this (stall guard) */
	rs_time_ns timer_ns;
	struct sim_user *users;
	uint32_t n_users;
	struct sim_req *reqs;
	uint32_t n_reqs, alloc_reqs;
	bool active[SPEC_MAX_CLASSES];
	bool cbr_on;
	struct pending *pend;
	size_t n_pend, alloc_pend;
	bool rates_dirty;
	uint32_t outstanding;		/* released, not ended */
	uint32_t queued;		/* enqueued, not released or removed */
	uint32_t cls_out[SPEC_MAX_CLASSES], cls_queued[SPEC_MAX_CLASSES];
	uint64_t n_cancelled, n_expired, n_aborted;
	double cbr_seen, cbr_unreported;
	double link_unreported;	/* link counter: payload bytes not reported */
	double bin_class[SPEC_MAX_CLASSES];
	double bin_link0, bin_cbr0;
	struct sim_bin *bins;
	size_t n_bins, alloc_bins;
	uint64_t lib_errors, timer_stalls;
	int oom;
};

static double link_Bps(const struct spec *sp)
{
	return sp->link_bps / 8.0;
}

static rs_time_ns now_ns(struct sim *s)
{
	double v = nearbyint(s->now * 1e9);
	rs_time_ns ns = v > 0 ? (rs_time_ns)v : 0;

	if (ns < s->last_ns)
		ns = s->last_ns;
	s->last_ns = ns;
	return ns;
}

static void lib_check(struct sim *s, int rc, const char *what)
{
	if (rc >= 0)
		return;
	if (s->lib_errors++ < 10)
		fprintf(s->err, "rs-sim: t=%.6f %s: %s\n", s->now, what,
			rs_strerror(rc));
}

static void push(struct sim *s, double t, int type, uint32_t a, uint32_t b)
{
	if (heap_push(&s->heap, t, type, a, b))
		s->oom = 1;
}

static void on_release(void *ctx, rs_id id, void *cookie)
{
	struct sim *s = ctx;

	if (s->n_pend == s->alloc_pend) {
		size_t na = s->alloc_pend ? 2 * s->alloc_pend : 64;
		struct pending *p = realloc(s->pend, na * sizeof(*p));

		if (!p) {
			s->oom = 1;
			return;
		}
		s->pend = p;
		s->alloc_pend = na;
	}
	s->pend[s->n_pend++] = (struct pending){
		.id = id, .req = (uint32_t)(uintptr_t)cookie,
	};
}

static void release_req(struct sim *s, uint32_t ri, rs_id id)
{
	struct sim_req *r = &s->reqs[ri];

	if (r->state != REQ_QUEUED) {
		if (s->lib_errors++ < 10)
			fprintf(s->err, "rs-sim: request %u released twice\n",
				ri);
		return;
	}
	r->id = id;
	r->state = REQ_RELEASED;
	r->t_rel = s->now;
	if (s->rs) {
		s->queued--;
		s->cls_queued[r->cls]--;
	}
	s->outstanding++;
	s->cls_out[r->cls]++;
	push(s, s->now + s->sp->servers[r->server].delay, EV_FIRST_BYTE, ri, 0);
}

static void drain_releases(struct sim *s)
{
	for (size_t i = 0; i < s->n_pend; i++)
		release_req(s, s->pend[i].req, s->pend[i].id);
	s->n_pend = 0;
}

static double draw_size(struct sim *s, struct sim_user *u)
{
	const struct spec_group *g = &s->sp->groups[u->group];
	double v;

	if (g->size_kind == SIZE_FIXED)
		return g->size_a;
	v = nearbyint(rng_lognormal(&u->rng, g->size_a, g->size_b));
	return v < 1 ? 1 : v;
}

static void issue(struct sim *s, uint32_t ui)
{
	struct sim_user *u = &s->users[ui];
	const struct spec_group *g = &s->sp->groups[u->group];
	struct rs_req_info info = { 0 };
	struct sim_req *r;
	uint32_t ri;
	rs_id id = 0;
	int rc;

	if (s->n_reqs == s->alloc_reqs) {
		uint32_t na = s->alloc_reqs ? 2 * s->alloc_reqs : 4096;
		struct sim_req *p = realloc(s->reqs, na * sizeof(*p));

		if (!p) {
			s->oom = 1;
			return;
		}
		s->reqs = p;
		s->alloc_reqs = na;
	}
	ri = s->n_reqs++;
	r = &s->reqs[ri];
	*r = (struct sim_req){
		.user = ui, .t_req = s->now, .t_rel = -1, .t_first = -1,
		.t_end = -1, .state = REQ_QUEUED,
	};
	r->size = draw_size(s, u);
	r->xfer = r->size;
	r->cls = u->cls;
	r->server = rng_below(&u->rng, (uint32_t)s->sp->n_servers);
	if (s->sp->abort_fraction > 0 &&
	    rng_uniform(&u->rng) < s->sp->abort_fraction)
		r->xfer = floor(rng_uniform(&u->rng) * r->size);
	if (s->sp->patience_fraction > 0 &&
	    rng_uniform(&u->rng) < s->sp->patience_fraction)
		push(s, s->now + rng_exp(&u->rng, s->sp->patience_mean),
		     EV_CANCEL, ri, 0);
	u->inflight++;
	if (!s->rs) {
		release_req(s, ri, 0);
		return;
	}
	if (g->bias > 0) {
		double e = nearbyint(g->bias * r->size);

		info.est_size = e < 1 ? 1 : (uint64_t)e;
	}
	rc = rs_enqueue(s->rs, u->cls, u->key, &info,
			(void *)(uintptr_t)ri, now_ns(s), &id);
	lib_check(s, rc, "rs_enqueue");
	if (rc < 0) {
		s->reqs[ri].state = REQ_LOST;
		u->inflight--;
	} else {
		s->reqs[ri].id = id;
		s->queued++;
		s->cls_queued[u->cls]++;
	}
	drain_releases(s);
}

static void account(struct sim *s, struct sim_req *r, uint64_t n)
{
	struct sim_user *u = &s->users[r->user];

	r->reported += n;
	s->link_unreported += (double)n;
	u->bytes += n;
	s->bin_class[u->cls] += (double)n;
}

/* The link counter (spec cbr_accounting counter): every byte that crossed
 * the link since the last report - responses and cross traffic - as
 * interface counters count them, in full-size frames of SIM_MSS payload
 * bytes and the library's RS_FRAME_OVERHEAD each; the fraction of a frame
 * waits. Called right after the proxied bytes of the same instant are
 * reported, so the library's exceptive bytes are the cross traffic. */
static void report_link(struct sim *s)
{
	double frames = floor(s->link_unreported / SIM_MSS);

	if (!s->rs || !s->sp->link_counter || frames < 1)
		return;
	lib_check(s, rs_on_link_bytes(s->rs, (uint64_t)(frames * (SIM_MSS + RS_FRAME_OVERHEAD)),
				      (uint64_t)frames, now_ns(s)),
		  "rs_on_link_bytes");
	s->link_unreported -= frames * SIM_MSS;
}

/* Report bytes delivered since the last report of every flow, and the
 * cross traffic as foreign bytes of the hidden class (or on the link
 * counter). */
static void flush_bytes(struct sim *s)
{
	for (size_t i = 0; i < s->link.n; i++) {
		struct sim_flow *f = &s->link.flows[i];
		struct sim_req *r = &s->reqs[f->req];
		uint64_t have = (uint64_t)floor(f->delivered + 1e-9);

		if (have > (uint64_t)r->xfer)
			have = (uint64_t)r->xfer;
		if (have <= r->reported)
			continue;
		if (s->rs)
			lib_check(s, rs_on_bytes(s->rs, r->id,
						 have - r->reported,
						 now_ns(s)), "rs_on_bytes");
		account(s, r, have - r->reported);
	}
	s->cbr_unreported += s->link.cbr_bytes - s->cbr_seen;
	s->link_unreported += s->link.cbr_bytes - s->cbr_seen;
	s->cbr_seen = s->link.cbr_bytes;
	if (s->cbr_unreported >= 1) {
		uint64_t n = (uint64_t)floor(s->cbr_unreported);

		if (s->rs && s->cross_cls >= 0)
			lib_check(s, rs_on_foreign_bytes(s->rs, s->cross_cls, 1,
							 n, now_ns(s)),
				  "rs_on_foreign_bytes");
		s->cbr_unreported -= (double)n;
	}
	report_link(s);
}

static void user_next(struct sim *s, uint32_t ui)
{
	struct sim_user *u = &s->users[ui];
	const struct spec_group *g = &s->sp->groups[u->group];

	if (!s->active[u->cls])
		return;
	if (g->kind == USER_BACKLOG) {
		while (u->inflight < g->depth && !s->oom)
			issue(s, ui);
	} else if (g->kind == USER_THINK) {
		push(s, s->now + rng_exp(&u->rng, g->param), EV_ARRIVAL, ui,
		     u->gen);
	}
}

static void complete_flows(struct sim *s)
{
	struct sim_flow f;

	while (link_pop_done(&s->link, &f)) {
		struct sim_req *r = &s->reqs[f.req];
		uint64_t rest = (uint64_t)r->xfer - r->reported;
		bool aborted = r->xfer < r->size;

		if (s->rs) {
			rs_time_ns t = now_ns(s);

			if (rest)
				lib_check(s, rs_on_bytes(s->rs, r->id, rest, t),
					  "rs_on_bytes");
			lib_check(s, rs_on_end(s->rs, r->id, aborted, t),
				  "rs_on_end");
		}
		account(s, r, rest);
		report_link(s);
		s->n_aborted += aborted;
		r->state = REQ_DONE;
		r->t_end = s->now;
		s->outstanding--;
		s->cls_out[r->cls]--;
		s->users[r->user].inflight--;
		s->users[r->user].done++;
		s->rates_dirty = true;
		drain_releases(s);
		user_next(s, r->user);
	}
}

static void first_byte(struct sim *s, uint32_t ri)
{
	struct sim_req *r = &s->reqs[ri];
	const struct spec_server *sv = &s->sp->servers[r->server];

	r->state = REQ_TRANSFER;
	r->t_first = s->now;
	if (s->rs)
		lib_check(s, rs_on_first_byte(s->rs, r->id, (int64_t)r->size,
					      now_ns(s)), "rs_on_first_byte");
	if (link_add(&s->link, ri, r->xfer, sv->cap_bps / 8.0))
		s->oom = 1;
	s->rates_dirty = true;
}

static void class_on(struct sim *s, int cls)
{
	s->active[cls] = true;
	for (uint32_t ui = 0; ui < s->n_users; ui++) {
		struct sim_user *u = &s->users[ui];
		const struct spec_group *g = &s->sp->groups[u->group];

		if (u->cls != cls)
			continue;
		u->gen++;
		switch (g->kind) {
		case USER_BACKLOG:
			user_next(s, ui);
			break;
		case USER_THINK:
			if (!u->inflight)
				user_next(s, ui);
			break;
		case USER_INTERVAL:
			push(s, s->now + rng_exp(&u->rng, g->param),
			     EV_ARRIVAL, ui, u->gen);
			break;
		case USER_BATCH:
			for (unsigned k = 0; k < g->depth && !s->oom; k++)
				issue(s, ui);
			break;
		}
	}
}

static void class_off(struct sim *s, int cls)
{
	s->active[cls] = false;
	for (uint32_t ui = 0; ui < s->n_users; ui++)
		if (s->users[ui].cls == cls)
			s->users[ui].gen++;	/* cancels pending arrivals */
}

static void arrival(struct sim *s, uint32_t ui, uint32_t gen)
{
	struct sim_user *u = &s->users[ui];
	const struct spec_group *g = &s->sp->groups[u->group];

	if (gen != u->gen || !s->active[u->cls])
		return;
	issue(s, ui);
	if (g->kind == USER_INTERVAL)
		push(s, s->now + rng_exp(&u->rng, g->param), EV_ARRIVAL, ui,
		     u->gen);
}

/* A queued request left the library without release (cancel, expiry). */
static void drop_queued(struct sim *s, uint32_t ri, enum req_state why)
{
	struct sim_req *r = &s->reqs[ri];

	r->state = why;
	r->t_end = s->now;
	s->queued--;
	s->cls_queued[r->cls]--;
	s->users[r->user].inflight--;
	if (why == REQ_CANCELLED)
		s->n_cancelled++;
	else
		s->n_expired++;
	user_next(s, r->user);
}

/* The client of request ri gives up (patience ran out). */
static void cancel(struct sim *s, uint32_t ri)
{
	struct sim_req *r = &s->reqs[ri];
	int rc;

	if (!s->rs || r->state != REQ_QUEUED)
		return;
	rc = rs_cancel(s->rs, r->id, now_ns(s));
	lib_check(s, rc, "rs_cancel");
	if (rc == 0)
		drop_queued(s, ri, REQ_CANCELLED);
	drain_releases(s);
}

/* Requests queued longer than queue_timeout (Squid answers 503). */
static void expire(struct sim *s)
{
	rs_time_ns max_wait = (rs_time_ns)(s->sp->queue_timeout * 1e9);
	rs_id ids[64];
	void *cookies[64];
	size_t n;

	if (!s->rs || s->sp->queue_timeout <= 0)
		return;
	do {
		n = rs_expire(s->rs, now_ns(s), max_wait, ids, cookies, 64);
		for (size_t i = 0; i < n; i++) {
			uint32_t ri = (uint32_t)(uintptr_t)cookies[i];

			if (ri >= s->n_reqs || s->reqs[ri].state != REQ_QUEUED ||
			    s->reqs[ri].id != ids[i]) {
				lib_check(s, RS_ESTATE, "rs_expire result");
				continue;
			}
			drop_queued(s, ri, REQ_EXPIRED);
		}
		drain_releases(s);
	} while (n == 64);
}

/* The library's counts must equal the simulator's. */
static void check_counts(struct sim *s)
{
	struct rs_stats st;

	if (!s->rs)
		return;
	rs_get_stats(s->rs, &st);
	if (st.W != s->outstanding || st.queued != s->queued) {
		lib_check(s, RS_ESTATE, "count check");
		if (s->lib_errors <= 10)
			fprintf(s->err, "rs-sim: library W=%u queued=%u, "
				"simulator W=%u queued=%u\n", st.W, st.queued,
				s->outstanding, s->queued);
	}
	for (int c = 0; c < s->sp->n_classes; c++) {
		struct rs_class_stats cs;

		if (rs_get_class_stats(s->rs, c, &cs) < 0 ||
		    cs.outstanding != s->cls_out[c] ||
		    cs.queued != s->cls_queued[c]) {
			lib_check(s, RS_ESTATE, "class count check");
			if (s->lib_errors <= 10)
				fprintf(s->err, "rs-sim: class %d library "
					"out=%u queued=%u, simulator out=%u "
					"queued=%u\n", c, cs.outstanding,
					cs.queued, s->cls_out[c],
					s->cls_queued[c]);
		}
	}
}

static void sample(struct sim *s)
{
	struct sim_bin *b;
	double link = s->link.flow_bytes + s->link.cbr_bytes;

	flush_bytes(s);
	check_counts(s);
	if (s->n_bins == s->alloc_bins) {
		size_t na = s->alloc_bins ? 2 * s->alloc_bins : 256;
		struct sim_bin *p = realloc(s->bins, na * sizeof(*p));

		if (!p) {
			s->oom = 1;
			return;
		}
		s->bins = p;
		s->alloc_bins = na;
	}
	b = &s->bins[s->n_bins++];
	memset(b, 0, sizeof(*b));
	b->t = s->now;
	memcpy(b->class_bytes, s->bin_class, sizeof(b->class_bytes));
	memset(s->bin_class, 0, sizeof(s->bin_class));
	b->link_bytes = link - s->bin_link0;
	b->cbr_bytes = s->link.cbr_bytes - s->bin_cbr0;
	s->bin_link0 = link;
	s->bin_cbr0 = s->link.cbr_bytes;
	if (s->rs) {
		struct rs_stats st;

		rs_get_stats(s->rs, &st);
		b->W = st.W;
		b->W_max = st.W_max;
		b->U = st.U;
		b->queued = st.queued;
	} else {
		b->W = s->outstanding;
		b->W_max = -1;
		b->U = -1;
		b->queued = s->queued;
	}
}

/* Reconfigure with one class's weight changed (same config, same names). */
static void reweight(struct sim *s, const struct spec_reweight *rw)
{
	const char *names[SPEC_MAX_CLASSES + 1];
	int n = s->sp->n_classes;

	s->weights[rw->cls] = rw->weight;
	for (int c = 0; c < n; c++)
		names[c] = s->sp->classes[c].name;
	if (s->cross_cls >= 0)
		names[n++] = "cross-traffic";
	lib_check(s, rs_reconfigure(s->rs, &s->cfg, names, s->weights, n,
				    names[0], now_ns(s)), "rs_reconfigure");
	drain_releases(s);
}

static void handle(struct sim *s, const struct sim_event *e)
{
	switch (e->type) {
	case EV_CLASS_ON:
		class_on(s, (int)e->a);
		break;
	case EV_CLASS_OFF:
		class_off(s, (int)e->a);
		break;
	case EV_ARRIVAL:
		arrival(s, e->a, e->b);
		break;
	case EV_FIRST_BYTE:
		first_byte(s, e->a);
		break;
	case EV_REPORT:
		flush_bytes(s);
		expire(s);
		push(s, (e->a + 1.0) * s->sp->report_gran, EV_REPORT,
		     e->a + 1, 0);
		break;
	case EV_SAMPLE:
		sample(s);
		push(s, (e->a + 1.0) * s->sp->sample, EV_SAMPLE, e->a + 1, 0);
		break;
	case EV_CANCEL:
		cancel(s, e->a);
		break;
	case EV_REWEIGHT:
		if (s->rs)
			reweight(s, &s->sp->reweights[e->a]);
		break;
	case EV_CBR:
		s->cbr_on = !s->cbr_on;
		link_set_cbr(&s->link, s->cbr_on ? s->sp->cbr_bps / 8.0 : 0);
		s->rates_dirty = true;
		push(s, (e->a + 1.0) * s->sp->cbr_period, EV_CBR, e->a + 1, 0);
		break;
	}
}

static void update_timer(struct sim *s)
{
	rs_time_ns ns;

	if (!s->rs) {
		s->timer_at = INFINITY;
		return;
	}
	ns = rs_next_deadline(s->rs);
	s->timer_ns = ns;
	s->timer_at = ns == UINT64_MAX ? INFINITY : (double)ns / 1e9;
}

static void fire_timer(struct sim *s)
{
	rs_time_ns t = now_ns(s), due = s->timer_ns;

	if (t < due)
		t = due;
	s->last_ns = t;
	rs_on_timer(s->rs, t);
	drain_releases(s);
	update_timer(s);
	if (s->timer_ns <= t) {
		/* the library asked for a timer that is already due and did
		 * not move it: poll again 1 ms later instead of spinning */
		s->timer_stalls++;
		s->timer_floor = s->now + 1e-3;
	}
}

static int make_sched(struct sim *s)
{
	const struct spec *sp = s->sp;
	struct rs_config cfg;
	int rc;

	rs_config_default(&cfg);
	cfg.link_bps = (uint64_t)sp->link_bps;
	if (rs_policy_parse(sp->policy, &cfg.policy) < 0) {
		fprintf(s->err, "rs-sim: unknown policy '%s'\n", sp->policy);
		return -1;
	}
	if (rs_controller_parse(sp->window, &cfg.controller) < 0) {
		fprintf(s->err, "rs-sim: unknown window '%s'\n", sp->window);
		return -1;
	}
	cfg.fixed_window = sp->fixed_window ? sp->fixed_window : 1;
	cfg.sff = sp->sff;
	cfg.target_util = sp->target_util;
	cfg.update_interval = (rs_time_ns)(sp->update_interval * 1e9);
	cfg.K = sp->K;
	cfg.max_window = sp->max_window;
	if (sp->compensation >= 0)
		cfg.drr_compensation = sp->compensation;
	rc = rs_config_check(&cfg);
	if (rc < 0) {
		fprintf(s->err, "rs-sim: rs_config_check: %s\n",
			rs_strerror(rc));
		return -1;
	}
	s->cfg = cfg;
	s->rs = rs_new(&cfg, on_release, s);
	if (!s->rs) {
		fprintf(s->err, "rs-sim: rs_new failed\n");
		return -1;
	}
	for (int i = 0; i < sp->n_classes; i++) {
		s->weights[i] = sp->classes[i].weight;
		rc = rs_class_add(s->rs, sp->classes[i].name,
				  sp->classes[i].weight);
		if (rc != i) {
			fprintf(s->err, "rs-sim: rs_class_add(%s): %d\n",
				sp->classes[i].name, rc);
			return -1;
		}
	}
	if (sp->link_counter) {
		rc = rs_set_link_source(s->rs, RS_LINK_COUNTER, 0);
		if (rc < 0) {
			fprintf(s->err, "rs-sim: rs_set_link_source: %s\n",
				rs_strerror(rc));
			return -1;
		}
	}
	s->cross_cls = -1;
	if (sp->cbr_bps > 0 && sp->cbr_foreign) {
		/* unclassified cross traffic: a class that never queues, so
		 * the window controller sees the whole downlink (MSF-RS §6) */
		rc = rs_class_add(s->rs, "cross-traffic", 1);
		if (rc < 0) {
			fprintf(s->err, "rs-sim: rs_class_add(cross): %d\n",
				rc);
			return -1;
		}
		s->cross_cls = rc;
		s->weights[rc] = 1;
	}
	return 0;
}

static int make_users(struct sim *s)
{
	const struct spec *sp = s->sp;
	uint32_t n = 0, k = 0;

	for (int g = 0; g < sp->n_groups; g++)
		n += sp->groups[g].count;
	s->users = calloc(n, sizeof(*s->users));
	if (!s->users)
		return -1;
	s->n_users = n;
	for (int g = 0; g < sp->n_groups; g++) {
		for (unsigned i = 0; i < sp->groups[g].count; i++, k++) {
			struct sim_user *u = &s->users[k];

			u->group = g;
			u->cls = sp->groups[g].cls;
			u->key = k + 1;
			/* one stream per user: the same user draws the same
			 * sizes and servers whatever the gateway mode */
			rng_seed(&u->rng, sp->seed * 1000003ULL + k);
		}
	}
	return 0;
}

static void schedule_start(struct sim *s)
{
	const struct spec *sp = s->sp;

	for (int c = 0; c < sp->n_classes; c++) {
		const struct spec_class *cl = &sp->classes[c];

		if (!cl->n_active)
			push(s, 0, EV_CLASS_ON, (uint32_t)c, 0);
		for (int i = 0; i < cl->n_active; i++) {
			push(s, cl->active[i].start, EV_CLASS_ON, (uint32_t)c,
			     0);
			push(s, cl->active[i].end, EV_CLASS_OFF, (uint32_t)c,
			     0);
		}
	}
	push(s, sp->report_gran, EV_REPORT, 1, 0);
	push(s, sp->sample, EV_SAMPLE, 1, 0);
	if (sp->cbr_bps > 0)
		push(s, sp->cbr_period, EV_CBR, 1, 0);
	for (int i = 0; i < sp->n_reweights; i++)
		push(s, sp->reweights[i].t, EV_REWEIGHT, (uint32_t)i, 0);
}

static void run_loop(struct sim *s)
{
	const double end = s->sp->duration;
	struct sim_event e;

	while (!s->oom) {
		double te = heap_top_time(&s->heap);
		double tl = link_next_completion(&s->link);
		double tt = fmax(s->timer_at, s->timer_floor);
		double t = fmin(fmin(te, tl), tt);

		if (t > end) {
			link_advance(&s->link, end);
			s->now = end;
			break;
		}
		if (t > s->now)
			s->now = t;
		link_advance(&s->link, s->now);
		if (tl <= te && tl <= tt)
			complete_flows(s);
		else if (tt <= te)
			fire_timer(s);
		else if (heap_pop(&s->heap, &e))
			handle(s, &e);
		if (s->rates_dirty) {
			link_set_rates(&s->link);
			s->rates_dirty = false;
		}
		update_timer(s);
	}
}

static void json_str(FILE *out, const char *str)
{
	fputc('"', out);
	for (; *str; str++) {
		if (*str == '"' || *str == '\\')
			fputc('\\', out);
		if ((unsigned char)*str >= 0x20)
			fputc(*str, out);
	}
	fputc('"', out);
}

static void write_classes(struct sim *s, FILE *out)
{
	const struct spec *sp = s->sp;

	fputs("\"classes\": [", out);
	for (int c = 0; c < sp->n_classes; c++) {
		struct rs_class_stats cs = { 0 };

		if (s->rs)
			rs_get_class_stats(s->rs, c, &cs);
		fprintf(out, "%s\n  {\"name\": ", c ? "," : "");
		json_str(out, sp->classes[c].name);
		fprintf(out, ", \"weight\": %g, \"lib_released\": %" PRIu64
			", \"lib_ended\": %" PRIu64 ", \"lib_bytes\": %" PRIu64
			", \"lib_service\": %.6g}",
			s->rs ? s->weights[c] : sp->classes[c].weight,
			cs.released, cs.ended, cs.bytes, cs.service);
	}
	fputs("],\n", out);
}

static void write_users(struct sim *s, FILE *out)
{
	fputs("\"users\": [", out);
	for (uint32_t i = 0; i < s->n_users; i++) {
		const struct sim_user *u = &s->users[i];

		fprintf(out, "%s\n  {\"class\": %d, \"group\": %d, \"label\": ",
			i ? "," : "", u->cls, u->group);
		json_str(out, s->sp->groups[u->group].label);
		fprintf(out, ", \"bytes\": %" PRIu64 ", \"done\": %u}",
			u->bytes, u->done);
	}
	fputs("],\n", out);
}

static void write_timeline(struct sim *s, FILE *out)
{
	fputs("\"timeline\": [", out);
	for (size_t i = 0; i < s->n_bins; i++) {
		const struct sim_bin *b = &s->bins[i];

		fprintf(out, "%s\n  {\"t\": %.6f, \"class_bytes\": [",
			i ? "," : "", b->t);
		for (int c = 0; c < s->sp->n_classes; c++)
			fprintf(out, "%s%.0f", c ? ", " : "", b->class_bytes[c]);
		fprintf(out, "], \"cbr_bytes\": %.0f, \"link_bytes\": %.0f, "
			"\"W\": %g, \"W_max\": %.4f, \"U\": %.4f, "
			"\"queued\": %u}", b->cbr_bytes, b->link_bytes, b->W,
			b->W_max, b->U, b->queued);
	}
	fputs("],\n", out);
}

/* Completed requests: [user, size, t_request, t_release, t_first, t_end] */
static void write_requests(struct sim *s, FILE *out)
{
	int first = 1;

	fputs("\"requests\": [", out);
	for (uint32_t i = 0; s->sp->emit_requests && i < s->n_reqs; i++) {
		const struct sim_req *r = &s->reqs[i];

		if (r->state != REQ_DONE)
			continue;
		fprintf(out, "%s\n  [%u, %.0f, %.6f, %.6f, %.6f, %.6f]",
			first ? "" : ",", r->user, r->size, r->t_req, r->t_rel,
			r->t_first, r->t_end);
		first = 0;
	}
	fputs("],\n", out);
}

static void write_result(struct sim *s, FILE *out)
{
	const struct spec *sp = s->sp;
	uint32_t done = 0, unfinished = 0;

	for (uint32_t i = 0; i < s->n_reqs; i++) {
		if (s->reqs[i].state == REQ_DONE)
			done++;
		else if (s->reqs[i].state < REQ_DONE)
			unfinished++;
	}
	fprintf(out, "{\"mode\": \"%s\", \"window\": \"%s\", \"sff\": %s, "
		"\"link_bps\": %.0f, \"duration_s\": %g, \"seed\": %" PRIu64
		",\n", sp->ordinary ? "ordinary" : sp->policy,
		sp->ordinary ? "none" : sp->window, sp->sff ? "true" : "false",
		sp->link_bps, sp->duration, sp->seed);
	fprintf(out, "\"flow_bytes\": %.0f, \"cbr_bytes\": %.0f, "
		"\"utilization\": %.6f, \"requests_done\": %u, "
		"\"requests_unfinished\": %u, \"cancelled\": %" PRIu64
		", \"expired\": %" PRIu64 ", \"aborted\": %" PRIu64
		", \"lib_errors\": %" PRIu64
		", \"timer_stalls\": %" PRIu64 ",\n", s->link.flow_bytes,
		s->link.cbr_bytes, (s->link.flow_bytes + s->link.cbr_bytes) /
		(link_Bps(sp) * sp->duration), done, unfinished,
		s->n_cancelled, s->n_expired, s->n_aborted, s->lib_errors,
		s->timer_stalls);
	write_classes(s, out);
	write_users(s, out);
	write_timeline(s, out);
	write_requests(s, out);
	fputs("\"end\": true}\n", out);
}

int sim_run(const struct spec *sp, FILE *out, FILE *err)
{
	struct sim *s = calloc(1, sizeof(*s));
	int rc = -1;

	if (!s)
		return -1;
	s->sp = sp;
	s->err = err;
	s->timer_at = INFINITY;
	s->cross_cls = -1;
	link_init(&s->link, link_Bps(sp));
	if (make_users(s))
		goto out;
	if (!sp->ordinary && make_sched(s))
		goto out;
	schedule_start(s);
	run_loop(s);
	check_counts(s);
	if (s->oom) {
		fprintf(err, "rs-sim: out of memory\n");
		goto out;
	}
	write_result(s, out);
	rc = s->lib_errors ? -1 : 0;
	if (s->lib_errors)
		fprintf(err, "rs-sim: %" PRIu64 " library errors\n",
			s->lib_errors);
out:
	if (s->rs)
		rs_free(s->rs);
	link_free(&s->link);
	heap_free(&s->heap);
	free(s->users);
	free(s->reqs);
	free(s->pend);
	free(s->bins);
	free(s);
	return rc;
}
