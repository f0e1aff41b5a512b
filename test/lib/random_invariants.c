/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * random_invariants.c - randomized test of libreqsched against a shadow
 * model of what the caller knows, over every policy and controller.
 *
 * Each sequence builds a scheduler with a random configuration and class
 * set, runs a random mix of events (enqueue, cancel, first byte, bytes,
 * end - also twice -, cancel of released requests, foreign bytes, timers,
 * expire, reclaim of old window slots, link done, reconfigure, and misuse
 * with bad ids and classes), then drains.
 * Checked after every event:
 *   - a request is released at most once, only while queued, and ended
 *     exactly once (second end -> RS_ESTALE);
 *   - at every release W - 1 < W+ (so W <= ceil(W+): the documented
 *     rounding) for the window controllers;
 *   - W, queued, per-class queued/outstanding and UC equal the model;
 *   - a call that returns an error leaves every statistic unchanged;
 *   - after rs_on_timer(now), rs_next_deadline() > now (no busy loop);
 *   - msf/rfq with a window: the released class has the minimum SC among
 *     classes with queued requests (ties: largest w*UC), and a class that
 *     becomes active starts at the minimum SC of the active classes;
 * and at the end of the sequence (liveness): every queued request gets
 * released once responses end and timers fire; then W, queued, UC and the
 * (class,user) entries are back to zero and released == ended,
 * enqueued == released + cancelled + expired.
 *
 * The byte layer (flows, pacer, link source, long transfers) is in the mix
 * too: flows opened bound to requests or to classes, allowances, reads,
 * closes, link counter samples and source switches, stale flow handles.
 * Checked as well:
 *   - W counts the released requests that are not long transfers (the
 *     model marks a request long when its bytes reach long_transfer with
 *     pacing on, and at a reclaim or a link done); long_transfers counts
 *     the others;
 *   - bytes are conserved: global and per class bytes = rs_on_bytes +
 *     flow reads + foreign bytes (per class name, across reconfigures);
 *   - white box (internal.h): tokens <= B; every WAITING flow is in exactly
 *     one FIFO, its account's; the heap holds exactly the accounts with
 *     waiting flows, ordered by tag, and tags are finite; the
 *     granted list is in grant order and every grant is > 0; open flows,
 *     per class flows and window_bytes match the model; per class,
 *     nbacklog counts its accounts with waiting flows and npresent its
 *     accounts with a request-bound flow or on the recent list, which is
 *     in read order;
 *   - an allowance follows the state: a fresh grant is > 0, a waiting flow
 *     gets 0, pacing off grants everything, a flow asking while others wait
 *     waits; wake fires only for waiting flows and cannot re-enter;
 *   - liveness: every waiting flow is woken when timers fire, and after
 *     every flow is closed no account, grant or clamp is left.
 *
 * The server's resources (mqos, sqos, drf; random capacities, costs that
 * may exceed them or be absent, reconfigures that change the policy, the
 * number of resources and the capacities while requests hold them):
 *   - a request is released only when every resource the policy manages
 *     has room for its (clamped) cost: RAC_i = capacity_i - in_use_i
 *     never goes below 0, except by what a reconfigure that lowered a
 *     capacity left in use (the excess, which only shrinks);
 *   - in_use (RAC never above capacity) and consumed, global and per
 *     class, equal the model's: each release takes its cost once, each end
 *     gives back exactly what was taken;
 *   - after the drain every resource is back to 0 in use (RACs at 100 %),
 *     also those a reconfigure took out of the configuration;
 *   - the reservation (reservation.c, white box): the reserved request is
 *     queued; once its reservation holds, every request released took
 *     only room left beside it, and when a call returns it is not still
 *     queued with room for it and room in the window; every queued
 *     request is released in the drain (no arrivals: liveness).
 *
 * Usage: random_invariants [SEQUENCES [SEED]]   (default 1000000, 1)
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"	/* white-box checks of the pacer */

#define MAXREQ 1024	/* long sequences; short ones stop at 48 */
#define MAXCLS 40	/* long sequences; short ones use up to 6 */
#define NAMES 64

static char pool[NAMES][16];	/* class names "c0".."c63" */

enum { S_NONE, S_QUEUED, S_RELEASED, S_GONE };

struct sreq {
	rs_id id;
	int state;
	int name;		/* index into pool: the class by name */
	uint64_t user;
	int first;
	uint64_t bytes;
	int lng;		/* long transfer: out of the window */
	rs_time_ns t_rel;	/* release time */
	uint32_t cost[RS_MAX_RESOURCES];	/* as the library stored it */
	uint32_t took[RS_MAX_RESOURCES];	/* held since its release */
};

#define MAXFLOW 64
enum { F_IDLE = 1, F_WAIT, F_GRANT, F_CLOSED };

struct sflow {
	rs_flow h;
	int state;
	int req;		/* index into req, or -1 */
	int name;		/* class by name */
	uint64_t user;
	rs_time_ns t_grant;
	uint32_t clamp;
};

struct world {
	struct rs_sched *s;
	struct rs_config cfg;
	struct sreq req[MAXREQ];
	int nreq;
	int cls[MAXCLS];	/* scheduler class index -> pool index */
	int ncls;
	int maxreq, maxcls;	/* this sequence's limits */
	rs_time_ns now;
	uint64_t rng;
	uint64_t enqueued, released, ended, cancelled, expired;
	struct sflow fl[MAXFLOW];
	int nfl;
	uint64_t bytes;			/* every byte counted */
	uint64_t share_bytes;		/* bytes at the previous share sample */
	uint64_t gates[RS_SHARE_GATES(MAXCLS)];	/* shared with a phantom
						 * second worker */
	rs_time_ns share_t;		/* its time, 0 before the first */
	uint64_t cbytes[NAMES];		/* per class name */
	enum rs_link_source src;
	int wake_probe;			/* try to re-enter from the next wake */
	bool had_res;			/* a configuration had nres > 0 */
	uint64_t used[RS_MAX_RESOURCES], excess[RS_MAX_RESOURCES];
	uint64_t consumed[RS_MAX_RESOURCES];
	unsigned long seq;
	const char *step;
};

static uint64_t rnd(struct world *w)
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(struct world *w, uint64_t n)
{
	return n ? rnd(w) % n : 0;
}

#define FAIL(w, ...)                                                    \
	do {                                                            \
		fprintf(stderr, "FAIL seq %lu step %s: ", (w)->seq,     \
			(w)->step);                                     \
		fprintf(stderr, __VA_ARGS__);                           \
		fprintf(stderr, "\n");                                  \
		exit(1);                                                \
	} while (0)

static int class_of(const struct world *w, int name);
static void check_pacer(struct world *w);

static rs_flow make_handle(const struct rs_pacer *p, uint32_t f)
{
	return ((uint64_t)p->fl[f].gen << 32) | (uint64_t)(f + 1);
}

/* msf/rfq: the released request's class had the minimum SC among the
 * classes that still have queued requests; on a tie the largest w*UC. */
static void check_min_service(struct world *w, int name)
{
	struct rs_class_stats rel, cs;
	int c, rc = class_of(w, name);

	if (rc < 0)
		FAIL(w, "released request of an unknown class");
	rs_get_class_stats(w->s, rc, &rel);
	for (c = 0; c < w->ncls; c++) {
		if (c == rc)
			continue;
		rs_get_class_stats(w->s, c, &cs);
		if (!cs.queued)
			continue;
		if (cs.service < rel.service ||
		    (cs.service == rel.service &&
		     cs.weight * cs.active_users > rel.weight * rel.active_users))
			FAIL(w, "released class %d (SC %.6f) but class %d has "
			     "SC %.6f", rc, rel.service, c, cs.service);
	}
}

static bool sc_policy(enum rs_policy p)
{
	return p == RS_POLICY_MSF || p == RS_POLICY_RFQ;
}

static bool res_policy(enum rs_policy p)
{
	return p == RS_POLICY_MQOS || p == RS_POLICY_SQOS || p == RS_POLICY_DRF;
}

static uint64_t capacity(const struct world *w, unsigned i)
{
	return i < w->cfg.nres ? w->cfg.res_capacity[i] : 0;
}

/* White box (reservation.c): request r, just released, is not the
 * reserved request; once the reservation holds (more than resv_passes
 * releases of others since it was made, this one counted) r must have
 * fitted beside it on every resource r took. */
static void check_beside(struct world *w, const struct sreq *r)
{
	const struct rs_sched *s = w->s;
	uint32_t h = s->resv;
	unsigned i;

	if (h == RS_NIL || s->resv_passed <= s->pol->resv_passes)
		return;
	if (s->req[h].state != RS_ST_QUEUED)
		FAIL(w, "the reserved request is not queued");
	for (i = 0; i < w->cfg.nres; i++)
		if (r->took[i] && w->used[i] + rs_res_cost(s, h, i) >
				  capacity(w, i))
			FAIL(w, "released into the room of the reserved request:"
			     " resource %u in use %" PRIu64 " + its %u > %"
			     PRIu64, i, w->used[i], rs_res_cost(s, h, i),
			     capacity(w, i));
}

/* Request r is released: under a multi-resource policy it takes its cost
 * (clamped to the capacity) of each resource the policy manages, which
 * must have had room. */
static void take_resources(struct world *w, struct sreq *r)
{
	unsigned i;

	if (!res_policy(w->cfg.policy))
		return;
	for (i = 0; i < w->cfg.nres; i++) {
		uint64_t c = r->cost[i] < capacity(w, i) ? r->cost[i] :
			     capacity(w, i);

		if (w->cfg.policy == RS_POLICY_SQOS && i != w->cfg.sqos_resource)
			c = 0;
		if (c && w->used[i] + c > capacity(w, i))
			FAIL(w, "released without room: resource %u in use "
			     "%" PRIu64 " + %" PRIu64 " > %" PRIu64, i,
			     w->used[i], c, capacity(w, i));
		r->took[i] = (uint32_t)c;
		w->used[i] += c;
		w->consumed[i] += c;
	}
	check_beside(w, r);
}

/* Request r ends: what it took goes back. */
static void give_resources(struct world *w, struct sreq *r)
{
	unsigned i;

	for (i = 0; i < RS_MAX_RESOURCES; i++) {
		w->used[i] -= r->took[i];
		r->took[i] = 0;
		if (w->excess[i])
			w->excess[i] = w->used[i] > capacity(w, i) ?
				       w->used[i] - capacity(w, i) : 0;
	}
}

static void on_release(void *ctx, rs_id id, void *cookie)
{
	struct world *w = ctx;
	struct sreq *r;
	struct rs_stats st;
	int i = (int)(uintptr_t)cookie;

	if (i < 0 || i >= w->nreq)
		FAIL(w, "release with unknown cookie %d", i);
	r = &w->req[i];
	if (r->id == 0)
		r->id = id;	/* released inside rs_enqueue() */
	if (r->id != id)
		FAIL(w, "release id mismatch");
	if (r->state != S_QUEUED)
		FAIL(w, "request %d released in state %d", i, r->state);
	r->state = S_RELEASED;
	r->t_rel = w->now;
	w->released++;
	rs_get_stats(w->s, &st);
	if (w->cfg.controller != RS_WIN_RTC && !((double)st.W - 1 < st.W_max))
		FAIL(w, "release with W %u > W+ %.3f", st.W, st.W_max);
	if (w->cfg.controller == RS_WIN_FIXED && st.W > w->cfg.fixed_window)
		FAIL(w, "fixed window %u exceeded: %u", w->cfg.fixed_window,
		     st.W);
	if (sc_policy(w->cfg.policy) && w->cfg.controller != RS_WIN_RTC)
		check_min_service(w, r->name);
	take_resources(w, r);
}

struct snap {
	struct rs_stats g;
	struct rs_class_stats c[MAXCLS];
};

static void take(const struct world *w, struct snap *sn)
{
	int i;

	rs_get_stats(w->s, &sn->g);
	for (i = 0; i < w->ncls; i++)
		rs_get_class_stats(w->s, i, &sn->c[i]);
}

static bool snap_equal(const struct world *w, const struct snap *a,
		       const struct snap *b)
{
	return memcmp(&a->g, &b->g, sizeof(a->g)) == 0 &&
	       memcmp(a->c, b->c, (size_t)w->ncls * sizeof(a->c[0])) == 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int class_of(const struct world *w, int name)
{
	int i;

	for (i = 0; i < w->ncls; i++)
		if (w->cls[i] == name)
			return i;
	return -1;
}

/* Bytes of request r (rs_on_bytes or a bound flow's read). */
static void model_req_bytes(struct world *w, struct sreq *r, uint64_t n)
{
	r->bytes += n;
	w->bytes += n;
	w->cbytes[r->name] += n;
	if (w->cfg.pacing && w->cfg.long_transfer &&
	    r->bytes >= w->cfg.long_transfer && r->state == S_RELEASED)
		r->lng = 1;
}

static void model_foreign(struct world *w, int name, uint64_t n)
{
	w->bytes += n;
	w->cbytes[name] += n;
}

static struct sflow *flow_of(struct world *w, rs_flow h)
{
	int i;

	for (i = 0; i < w->nfl; i++)
		if (w->fl[i].h == h && w->fl[i].state != F_CLOSED)
			return &w->fl[i];
	return NULL;
}

/* The pacer's internal structure (see the invariants of pacer.c). */
static void check_pacer(struct world *w)
{
	const struct rs_sched *s = w->s;
	const struct rs_pacer *p = &s->pc;
	static uint8_t seen[4 * MAXFLOW];
	uint32_t a, f, waiting = 0, nacc = 0, flows = 0;
	unsigned open = 0, mwait = 0, cf[MAXCLS] = { 0 };
	unsigned nback[MAXCLS] = { 0 }, npres[MAXCLS] = { 0 };
	uint64_t clamps = 0;
	rs_time_ns last = 0;
	int i, c;

	if (p->tokens > fmax(2 * 1448.0, rs_pace_rate(s) * 0.005) + 1e-6)
		FAIL(w, "tokens %.3f above the bucket", p->tokens);
	if (p->nfl > sizeof(seen))
		FAIL(w, "flow slots %u", p->nfl);
	memset(seen, 0, sizeof(seen));
	for (nacc = 0; nacc < p->act.n; nacc++) {
		const struct rs_acct *e = &p->ac[p->act.item[nacc]];
		uint32_t n = 0, up = nacc ? p->act.item[(nacc - 1) / 2] : 0;

		a = p->act.item[nacc];
		if (e->hpos != nacc || !e->nflows || !e->nwait ||
		    !isfinite(e->tag))
			FAIL(w, "account %u in the heap: at %u flows %u waiting %u",
			     a, e->hpos, e->nflows, e->nwait);
		if (nacc && (p->ac[up].tag > e->tag ||
			     (p->ac[up].tag == e->tag && up > a)))
			FAIL(w, "account %u (tag %.3f) above its parent %u (%.3f)",
			     a, e->tag, up, p->ac[up].tag);
		for (f = e->head; f != RS_NIL; f = p->fl[f].next, n++) {
			if (seen[f]++ || p->fl[f].state != RS_FL_WAITING ||
			    p->fl[f].acct != a)
				FAIL(w, "flow %u twice or in the wrong FIFO", f);
		}
		if (n != e->nwait)
			FAIL(w, "account %u: %u in FIFO, nwait %u", a, n, e->nwait);
		waiting += n;
		if (nacc > p->nac)
			FAIL(w, "heap larger than the accounts");
	}
	if (waiting != p->waiting)
		FAIL(w, "waiting %u, in FIFOs %u", p->waiting, waiting);
	last = 0;
	for (a = p->rc_head; a != RS_NIL; a = p->ac[a].rnext) {
		const struct rs_acct *e = &p->ac[a];

		if (!e->recent || !e->nflows || e->t_read < last)
			FAIL(w, "recent list: account %u recent %d read %" PRIu64,
			     a, e->recent, e->t_read);
		last = e->t_read;
	}
	last = 0;
	for (a = 0; a < p->nac; a++) {
		const struct rs_acct *e = &p->ac[a];

		if (e->nflows) {
			nback[e->cls] += e->nwait > 0;
			npres[e->cls] += e->nreq > 0 || e->recent;
		}
		flows += e->nflows;
		if (e->nflows && (e->nwait > 0) != (e->hpos != RS_NIL))
			FAIL(w, "account %u: %u waiting, heap position %u", a,
			     e->nwait, e->hpos);
	}
	for (f = 0; f < p->nfl; f++)
		if (p->fl[f].state == RS_FL_WAITING && !seen[f])
			FAIL(w, "waiting flow %u in no FIFO", f);
	for (f = p->gr_head; f != RS_NIL; f = p->fl[f].next) {
		const struct rs_flow_ent *e = &p->fl[f];
		struct sflow *m = flow_of(w, make_handle(p, f));

		if (e->state != RS_FL_GRANTED || e->grant <= 0 ||
		    e->t_grant < last || !m || m->state != F_GRANT)
			FAIL(w, "granted list: flow %u state %d grant %" PRId64,
			     f, e->state, e->grant);
		last = e->t_grant;
	}
	for (i = 0; i < w->nfl; i++) {
		struct sflow *m = &w->fl[i];

		if (m->state == F_CLOSED)
			continue;
		open++;
		mwait += m->state == F_WAIT;
		clamps += m->clamp;
		c = class_of(w, m->name);
		if (c < 0)
			FAIL(w, "open flow of a class that is gone");
		cf[c]++;
		f = (uint32_t)m->h - 1;
		if ((m->state == F_WAIT) != (p->fl[f].state == RS_FL_WAITING))
			FAIL(w, "flow %d: model %d, lib %d", i, m->state,
			     p->fl[f].state);
	}
	if (p->open != open || flows != open || mwait != p->waiting)
		FAIL(w, "open %u/%u/%u waiting %u/%u", p->open, flows, open,
		     p->waiting, mwait);
	if (p->window_bytes != clamps)
		FAIL(w, "window_bytes %" PRIu64 ", clamps %" PRIu64,
		     p->window_bytes, clamps);
	for (c = 0; c < w->ncls; c++)
		if (s->cls[c].nflows != cf[c] || s->cls[c].nbacklog != nback[c] ||
		    s->cls[c].npresent != npres[c])
			FAIL(w, "class %d flows %u/%u backlogged %u/%u present %u/%u",
			     c, s->cls[c].nflows, cf[c], s->cls[c].nbacklog, nback[c],
			     s->cls[c].npresent, npres[c]);
}

/* Liveness of the reservation (white box): after a public call returns,
 * a reserved request whose reservation holds and that has room is not
 * left queued while the window has room (an open slot, rs_window_open():
 * a closed part slot is no room; it goes in the burst of releases in
 * which it first fits, however many requests arrive), unless a timer is
 * due (a measurement interval that ended inside a call that does not
 * release: the caller's rs_on_timer() releases it). */
static void check_reserved(struct world *w, const struct rs_stats *st)
{
	const struct rs_sched *s = w->s;

	if (s->resv == RS_NIL || !res_policy(w->cfg.policy) ||
	    s->resv_passed < s->pol->resv_passes ||
	    rs_next_deadline(s) <= w->now)
		return;
	if (s->req[s->resv].state != RS_ST_QUEUED)
		FAIL(w, "the reserved request is not queued");
	if (rs_res_fits(s, s->resv) && (double)st->W + 1 <= st->W_max &&
	    (double)st->W + 1 <= rs_window_open(s))
		FAIL(w, "the reserved request fits and is still queued (W %u "
		     "W+ %.2f)", st->W, st->W_max);
}

/* Model and library agree on every counter the caller can see. */
/* in_use and consumed, global and per class, against the model. */
static void check_resources(struct world *w)
{
	uint64_t held[MAXCLS][RS_MAX_RESOURCES];
	struct rs_resource_stats st;
	unsigned i;
	int k, c;

	memset(held, 0, sizeof(held));
	for (k = 0; k < w->nreq; k++)
		if (w->req[k].state == S_RELEASED)
			for (i = 0; i < RS_MAX_RESOURCES; i++)
				held[class_of(w, w->req[k].name)][i] +=
					w->req[k].took[i];
	for (i = 0; i < RS_MAX_RESOURCES; i++) {
		if (w->s->res_used[i] != w->used[i] ||
		    w->s->res_excess[i] != w->excess[i])
			FAIL(w, "resource %u in use %" PRIu64 "/%" PRIu64
			     " excess %" PRIu64 "/%" PRIu64 " (lib/model)", i,
			     w->s->res_used[i], w->used[i], w->s->res_excess[i],
			     w->excess[i]);
		if (w->used[i] > capacity(w, i) + w->excess[i])
			FAIL(w, "resource %u: RAC below 0", i);
		if (i >= w->cfg.nres) {
			if (rs_get_resource_stats(w->s, -1, i, &st) != RS_EINVAL)
				FAIL(w, "stats of resource %u not configured", i);
			continue;
		}
		if (rs_get_resource_stats(w->s, -1, i, &st) ||
		    st.in_use != w->used[i] || st.consumed != w->consumed[i] ||
		    st.capacity != capacity(w, i))
			FAIL(w, "resource %u stats", i);
		for (c = 0; c < w->ncls; c++)
			if (rs_get_resource_stats(w->s, c, i, &st) ||
			    st.in_use != held[c][i])
				FAIL(w, "class %d resource %u in use %" PRIu64
				     ", model %" PRIu64, c, i, st.in_use,
				     held[c][i]);
	}
}

static void check(struct world *w)
{
	struct rs_stats st;
	unsigned q = 0, o = 0, cq[MAXCLS] = { 0 }, co[MAXCLS] = { 0 };
	unsigned uc[MAXCLS] = { 0 }, users = 0, nlong = 0;
	static uint64_t key[MAXREQ];
	int i, c, nkey = 0;

	for (i = 0; i < w->nreq; i++) {
		struct sreq *r = &w->req[i];

		if (r->state != S_QUEUED && r->state != S_RELEASED)
			continue;
		c = class_of(w, r->name);
		if (c < 0)
			FAIL(w, "live request in a class that is gone");
		if (r->state == S_QUEUED) {
			q++;
			cq[c]++;
		} else {
			o += !r->lng;
			nlong += r->lng;
			co[c]++;
		}
		key[nkey++] = (uint64_t)c << 32 | r->user;
	}
	/* distinct (class, user) pairs = UC of each class */
	qsort(key, (size_t)nkey, sizeof(key[0]), cmp_u64);
	for (i = 0; i < nkey; i++)
		if (i == 0 || key[i] != key[i - 1]) {
			uc[key[i] >> 32]++;
			users++;
		}
	rs_get_stats(w->s, &st);
	if (st.W != o || st.queued != q || st.long_transfers != nlong)
		FAIL(w, "W %u/%u queued %u/%u long %u/%u (lib/model)", st.W, o,
		     st.queued, q, st.long_transfers, nlong);
	if (st.bytes != w->bytes)
		FAIL(w, "bytes %" PRIu64 ", model %" PRIu64, st.bytes, w->bytes);
	if (st.released != w->released || st.ended != w->ended ||
	    st.cancelled != w->cancelled || st.expired != w->expired)
		FAIL(w, "global counters differ");
	if (st.users < users || (!w->cfg.sff && st.users != users))
		FAIL(w, "users %u, model %u", st.users, users);
	if (rs_class_count(w->s) != w->ncls)
		FAIL(w, "class count");
	for (c = 0; c < w->ncls; c++) {
		struct rs_class_stats cs;

		rs_get_class_stats(w->s, c, &cs);
		if (strcmp(cs.name, pool[w->cls[c]]) != 0)
			FAIL(w, "class %d name %s", c, cs.name);
		if (cs.queued != cq[c] || cs.outstanding != co[c] ||
		    cs.active_users != uc[c])
			FAIL(w, "class %d queued %u/%u out %u/%u uc %u/%u", c,
			     cs.queued, cq[c], cs.outstanding, co[c],
			     cs.active_users, uc[c]);
		if (!isfinite(cs.service))
			FAIL(w, "class %d service not finite", c);
		if (cs.bytes != w->cbytes[w->cls[c]])
			FAIL(w, "class %d bytes %" PRIu64 ", model %" PRIu64, c,
			     cs.bytes, w->cbytes[w->cls[c]]);
	}
	check_resources(w);
	check_reserved(w, &st);
	check_pacer(w);
}

static void expect_unchanged(struct world *w, const struct snap *before)
{
	struct snap after;

	take(w, &after);
	if (!snap_equal(w, before, &after))
		FAIL(w, "an error return changed the statistics");
}

static void random_config(struct world *w, struct rs_config *cfg)
{
	static const uint64_t links[] = { 64000, 2000000, 10000000, 1000000000 };

	rs_config_default(cfg);
	cfg->policy = (enum rs_policy)below(w, 6);
	cfg->sff = below(w, 3) == 0;
	cfg->controller = (enum rs_controller)below(w, 4);
	cfg->nres = (unsigned)below(w, RS_MAX_RESOURCES + 1);
	for (unsigned i = 0; i < RS_MAX_RESOURCES; i++)
		cfg->res_capacity[i] = 1 + (uint32_t)below(w, 200);
	cfg->res_quantum = (1 + (double)below(w, 100)) / 100;
	if (res_policy(cfg->policy)) {	/* no sff, no rtc, resources */
		cfg->sff = false;
		if (cfg->controller == RS_WIN_RTC)
			cfg->controller = RS_WIN_FIXED;
		if (cfg->nres == 0)
			cfg->nres = 1;
		cfg->sqos_resource = (unsigned)below(w, cfg->nres);
	}
	cfg->link_bps = links[below(w, 4)];
	cfg->target_util = 0.5 + (double)below(w, 51) / 100;
	cfg->update_interval = 1000000 + below(w, 500000000);
	cfg->K = 1 + (double)below(w, 3);
	cfg->F = 1 + (unsigned)below(w, 8);
	cfg->fixed_window = 1 + (unsigned)below(w, 4);
	cfg->initial_window = 1 + (double)below(w, 3) / 2;
	cfg->max_window = below(w, 3) == 0 ? 2 + (double)below(w, 6) : 0;
	cfg->drr_quantum = 100 + below(w, 50000);
	cfg->drr_compensation = below(w, 4) != 0;
	cfg->default_size = 1 + below(w, 60000);
	cfg->sff_threshold = below(w, 30000);
	cfg->sff_flow_timeout = below(w, 2000000000);
	cfg->sff_alpha = 1 + (unsigned)below(w, 4);
	cfg->max_queued = below(w, 4) == 0 ? 1 + below(w, 8) : 0;
	cfg->max_queued_user = below(w, 4) == 0 ? 1 + below(w, 4) : 0;
	cfg->max_queued_class = below(w, 4) == 0 ? 1 + below(w, 6) : 0;
	cfg->pacing = below(w, 2);
	cfg->long_transfer = below(w, 3) == 0 ? 0 : 1448 + below(w, 100000);
	cfg->pace_keep_share = below(w, 2);
}

static void ev_enqueue(struct world *w)
{
	struct rs_req_info info;
	struct sreq *r;
	struct snap before;
	int cls, err, i, want;
	uint64_t queued = 0, quser = 0, qclass = 0;
	uint32_t cost[RS_MAX_RESOURCES];
	bool with_cost;
	rs_id id = 0;
	bool idle_class = false, any_active = false;
	double min_active = 0;

	if (w->nreq >= w->maxreq)
		return;
	cls = (int)below(w, (uint64_t)w->ncls + 1) - (below(w, 8) == 0);
	info.url_key = below(w, 6);
	info.host_key = below(w, 4);
	info.type_key = below(w, 3);
	info.est_size = below(w, 3) ? 0 : 1 + below(w, 100000);
	i = w->nreq;
	r = &w->req[i];
	r->user = below(w, 5);
	r->first = 0;
	r->bytes = 0;
	r->lng = 0;
	r->state = S_QUEUED;	/* the callback may fire inside */
	r->id = 0;
	memset(r->cost, 0, sizeof(r->cost));
	memset(r->took, 0, sizeof(r->took));
	with_cost = below(w, 4) != 0;
	for (unsigned k = 0; with_cost && k < RS_MAX_RESOURCES; k++) {
		cost[k] = (uint32_t)below(w, 160);
		/* the library keeps the first nres, once it has cost slots */
		if (w->had_res && k < w->cfg.nres)
			r->cost[k] = cost[k];
	}
	for (int k = 0; k < w->nreq; k++) {
		const struct sreq *o = &w->req[k];

		if (o->state != S_QUEUED)
			continue;
		queued++;
		if (cls >= 0 && cls < w->ncls && o->name == w->cls[cls]) {
			qclass++;
			quser += o->user == r->user;
		}
	}
	take(w, &before);
	/* MSF-RS: a class becoming active starts at the minimum SC of the
	 * active classes (0 when none is active), or keeps its own SC of this
	 * epoch if that is larger (msf.c, activate()) */
	if (cls >= 0 && cls < w->ncls) {
		idle_class = before.c[cls].active_users == 0;
		for (int c = 0; c < w->ncls; c++)
			if (c != cls && before.c[c].active_users &&
			    (!any_active || before.c[c].service < min_active)) {
				min_active = before.c[c].service;
				any_active = true;
			}
	}
	w->nreq++;
	if (cls >= 0 && cls < w->ncls)
		r->name = w->cls[cls];
	err = rs_enqueue_cost(w->s, cls, r->user, below(w, 4) ? &info : NULL,
			      with_cost ? cost : NULL, (void *)(uintptr_t)i,
			      w->now, &id);
	if (cls < 0 || cls >= w->ncls) {
		w->nreq--;
		if (err != RS_ENOCLASS)
			FAIL(w, "enqueue to class %d: %d", cls, err);
		expect_unchanged(w, &before);
		return;
	}
	/* the queue limits: the user's, the class's, the global one */
	want = w->cfg.max_queued_user && quser >= w->cfg.max_queued_user ?
	       RS_EUSERFULL :
	       w->cfg.max_queued_class && qclass >= w->cfg.max_queued_class ?
	       RS_ECLASSFULL :
	       w->cfg.max_queued && queued >= w->cfg.max_queued ? RS_EFULL : 0;
	if (want) {
		struct snap after;

		w->nreq--;
		if (err != want)
			FAIL(w, "queue limit %d not enforced: %d", want, err);
		take(w, &after);
		if (after.g.rejected != before.g.rejected + 1 ||
		    after.c[cls].rejected != before.c[cls].rejected + 1 ||
		    after.g.rejected_user != before.g.rejected_user +
		    (want == RS_EUSERFULL) ||
		    after.g.rejected_class != before.g.rejected_class +
		    (want == RS_ECLASSFULL) || after.g.queued != before.g.queued)
			FAIL(w, "queue limit %d: rejected counters", want);
		return;
	}
	if (err)
		FAIL(w, "enqueue failed: %d", err);
	if (idle_class && sc_policy(w->cfg.policy)) {
		struct rs_class_stats cs;

		double want_sc = fmax(before.c[cls].service, min_active);

		rs_get_class_stats(w->s, cls, &cs);
		if (cs.service != want_sc)
			FAIL(w, "class %d restarted at SC %.6f, min active %.6f, "
			     "its own %.6f", cls, cs.service, min_active,
			     before.c[cls].service);
	}
	if (r->id != 0 && r->id != id)
		FAIL(w, "released id differs from the returned id");
	r->id = id;
	w->enqueued++;
}

static struct sreq *pick(struct world *w)
{
	return w->nreq ? &w->req[below(w, (uint64_t)w->nreq)] : NULL;
}

/* What a call on request r must return when it is legal only in state
 * ok: 0 there, RS_ESTATE in the other live state, RS_ESTALE otherwise. */
static int want_in(const struct sreq *r, int ok)
{
	if (r->state == S_QUEUED || r->state == S_RELEASED)
		return r->state == ok ? 0 : RS_ESTATE;
	return RS_ESTALE;
}

/* A call on a request in state `state` returned err: it must be want,
 * and an error return must leave every statistic as it was (before). */
static void expect_return(struct world *w, const char *call, int state,
			  int err, int want, const struct snap *before)
{
	if (err != want)
		FAIL(w, "%s in state %d: %d, want %d", call, state, err, want);
	if (err)
		expect_unchanged(w, before);
}

static void ev_cancel(struct world *w)
{
	struct sreq *r = pick(w);
	struct snap before;
	int err;

	if (!r)
		return;
	take(w, &before);
	err = rs_cancel(w->s, r->id, w->now);
	expect_return(w, "cancel", r->state, err, want_in(r, S_QUEUED),
		      &before);
	if (!err) {
		r->state = S_GONE;
		w->cancelled++;
	}
}

static void ev_first_byte(struct world *w)
{
	struct sreq *r = pick(w);
	struct snap before;
	int err, want;

	if (!r)
		return;
	want = want_in(r, S_RELEASED);
	if (want == 0 && r->first)
		want = RS_ESTATE;	/* a second first byte */
	take(w, &before);
	err = rs_on_first_byte(w->s, r->id,
			       below(w, 2) ? (int64_t)below(w, 200000) : -1,
			       w->now);
	expect_return(w, "first byte", r->state, err, want, &before);
	if (!err)
		r->first = 1;
}

static void ev_bytes(struct world *w)
{
	struct sreq *r = pick(w);
	struct snap before;
	int err;
	uint64_t n;

	if (!r)
		return;
	n = below(w, 70000);
	take(w, &before);
	err = rs_on_bytes(w->s, r->id, n, w->now);
	expect_return(w, "bytes", r->state, err, want_in(r, S_RELEASED),
		      &before);
	if (!err)
		model_req_bytes(w, r, n);
}

static void ev_end(struct world *w, struct sreq *r)
{
	struct snap before;
	int err, want, state;

	if (!r)
		return;
	state = r->state;
	want = want_in(r, S_RELEASED);
	take(w, &before);
	if (r->state == S_RELEASED) {
		r->state = S_GONE;	/* releases may fire inside, */
		give_resources(w, r);	/* after what r held went back */
	}
	err = rs_on_end(w->s, r->id, below(w, 4) == 0, w->now);
	expect_return(w, "end", state, err, want, &before);
	if (!err)
		w->ended++;
}

/* The link is done with a response: a released request leaves the window
 * (at once, or it already had) and stays released; in any other state the
 * call changes nothing. */
static void ev_link_done(struct world *w, struct sreq *r)
{
	struct snap before;
	int err, state;

	if (!r)
		return;
	state = r->state;
	take(w, &before);
	if (r->state == S_RELEASED)
		r->lng = 1;	/* releases may fire inside */
	err = rs_on_link_done(w->s, r->id, w->now);
	expect_return(w, "link done", state, err, want_in(r, S_RELEASED),
		      &before);
}

static void ev_timer(struct world *w)
{
	rs_time_ns d = rs_next_deadline(w->s);

	if (d != UINT64_MAX && d > w->now && below(w, 2))
		w->now = d;
	rs_on_timer(w->s, w->now);
	d = rs_next_deadline(w->s);
	if (d <= w->now)
		FAIL(w, "deadline %" PRIu64 " not after now %" PRIu64, d, w->now);
}

static void ev_expire(struct world *w)
{
	rs_id ids[4];
	void *cookies[4];
	size_t n, k;
	rs_time_ns wait = below(w, 2000000000);

	n = rs_expire(w->s, w->now, wait, ids, cookies, 1 + below(w, 4));
	for (k = 0; k < n; k++) {
		int i = (int)(uintptr_t)cookies[k];

		if (i < 0 || i >= w->nreq || w->req[i].id != ids[k] ||
		    w->req[i].state != S_QUEUED)
			FAIL(w, "expired a request that was not queued");
		w->req[i].state = S_GONE;
		w->expired++;
	}
}

/* Slots at least max_age old are taken back, oldest first, and only those
 * of released requests in the window; a call that returns fewer than it
 * may leaves no such slot behind. */
static void ev_reclaim(struct world *w)
{
	rs_id ids[4];
	void *cookies[4];
	size_t n, k, max = 1 + below(w, 4);
	rs_time_ns age = below(w, 2000000000), prev = 0;
	int i;

	n = rs_reclaim(w->s, w->now, age, ids, cookies, max);
	for (k = 0; k < n; k++) {
		struct sreq *r;

		i = (int)(uintptr_t)cookies[k];
		if (i < 0 || i >= w->nreq || w->req[i].id != ids[k])
			FAIL(w, "reclaimed an unknown request");
		r = &w->req[i];
		if (r->state != S_RELEASED || r->lng ||
		    w->now - r->t_rel < age || r->t_rel < prev)
			FAIL(w, "reclaimed request %d: state %d long %d age "
			     "%" PRIu64 " < %" PRIu64 " or out of order", i,
			     r->state, r->lng, w->now - r->t_rel, age);
		prev = r->t_rel;
		r->lng = 1;	/* out of the window, still released */
	}
	if (n < max)
		for (i = 0; i < w->nreq; i++)
			if (w->req[i].state == S_RELEASED && !w->req[i].lng &&
			    w->now - w->req[i].t_rel >= age)
				FAIL(w, "slot of request %d is %" PRIu64
				     " ns old, not reclaimed", i,
				     w->now - w->req[i].t_rel);
}

static void ev_foreign(struct world *w)
{
	struct snap before;
	int cls = (int)below(w, (uint64_t)w->ncls + 1);
	uint64_t n = below(w, 50000);
	int err;

	take(w, &before);
	err = rs_on_foreign_bytes(w->s, cls, below(w, 5), n, w->now);
	if (!err)
		model_foreign(w, w->cls[cls], n);
	if (cls >= w->ncls) {
		if (err != RS_ENOCLASS)
			FAIL(w, "foreign bytes to a bad class: %d", err);
		expect_unchanged(w, &before);
	} else if (err) {
		FAIL(w, "foreign bytes: %d", err);
	}
}

static void ev_reconfigure(struct world *w)
{
	struct rs_config cfg;
	const char *names[MAXCLS];
	double weights[MAXCLS];
	int pick_name[MAXCLS], n = 1 + (int)below(w, (uint64_t)w->maxcls), i, j, def;
	int err, used[NAMES] = { 0 };

	for (i = 0; i < n; i++) {
		do
			j = (int)below(w, NAMES);
		while (used[j]);
		used[j] = 1;
		pick_name[i] = j;
		names[i] = pool[j];
		weights[i] = 0.25 + (double)below(w, 16) / 2;
	}
	def = (int)below(w, (uint64_t)n);
	random_config(w, &cfg);
	if (below(w, 10) == 0) {	/* misuse: bad default */
		struct snap before;

		take(w, &before);
		err = rs_reconfigure(w->s, &cfg, names, weights, n, "nope", w->now);
		if (err != RS_ENOCLASS)
			FAIL(w, "reconfigure with a bad default: %d", err);
		expect_unchanged(w, &before);
		return;
	}
	/* the model: live requests of removed classes go to the default */
	for (i = 0; i < w->nreq; i++) {
		struct sreq *r = &w->req[i];

		if (r->state == S_QUEUED || r->state == S_RELEASED) {
			if (!used[r->name])
				r->name = pick_name[def];
		}
	}
	for (i = 0; i < w->nfl; i++)
		if (w->fl[i].state != F_CLOSED && !used[w->fl[i].name])
			w->fl[i].name = pick_name[def];
	for (i = 0; i < NAMES; i++)
		if (!used[i])
			w->cbytes[i] = 0;	/* a removed class's counters go */
	for (i = 0; i < n; i++)
		w->cls[i] = pick_name[i];
	w->ncls = n;
	w->cfg = cfg;
	w->had_res |= cfg.nres > 0;
	for (i = 0; i < RS_MAX_RESOURCES; i++)
		w->excess[i] = w->used[i] > capacity(w, (unsigned)i) ?
			       w->used[i] - capacity(w, (unsigned)i) : 0;
	err = rs_reconfigure(w->s, &cfg, names, weights, n, names[def], w->now);
	if (err)
		FAIL(w, "reconfigure: %d", err);
	if (!cfg.pacing)
		for (i = 0; i < w->nfl; i++)
			if (w->fl[i].state == F_WAIT)
				FAIL(w, "pacing off but flow %d still waits", i);
}

/* ---- the byte layer ---- */

static void on_wake(void *ctx, rs_flow f, void *cookie)
{
	struct world *w = ctx;
	struct sflow *m = flow_of(w, f);

	if (!m || m != &w->fl[(int)(uintptr_t)cookie] || m->state != F_WAIT)
		FAIL(w, "wake of a flow that does not wait");
	m->state = F_GRANT;
	m->t_grant = w->now;
	if (w->wake_probe) {
		w->wake_probe = 0;
		if (rs_flow_allowance(w->s, f, 1, w->now) != RS_EBUSY ||
		    rs_flow_read(w->s, f, 1, w->now) != RS_EBUSY ||
		    rs_enqueue(w->s, 0, 0, NULL, NULL, w->now, &(rs_id){ 0 }) !=
		    RS_EBUSY)
			FAIL(w, "wake callback re-entered");
	}
}

static struct sflow *pick_flow(struct world *w)
{
	return w->nfl ? &w->fl[below(w, (uint64_t)w->nfl)] : NULL;
}

static void ev_flow_open(struct world *w)
{
	struct snap before;
	struct sflow *m;
	struct sreq *r = below(w, 2) ? pick(w) : NULL;
	int cls = (int)below(w, (uint64_t)w->ncls + 1), want = 0, err;
	rs_flow f = 0;

	if (w->nfl >= MAXFLOW)
		return;
	m = &w->fl[w->nfl];
	if (r)
		want = r->state == S_RELEASED ? 0 :
		       r->state == S_QUEUED ? RS_ESTATE : RS_ESTALE;
	else if (cls >= w->ncls)
		want = RS_ENOCLASS;
	take(w, &before);
	err = rs_flow_open(w->s, r ? r->id : 0, cls, below(w, 5),
			   (void *)(uintptr_t)w->nfl, w->now, &f);
	if (err != want)
		FAIL(w, "flow open: %d, want %d", err, want);
	if (err) {
		expect_unchanged(w, &before);
		return;
	}
	memset(m, 0, sizeof(*m));
	m->h = f;
	m->state = F_IDLE;
	m->req = r ? (int)(r - w->req) : -1;
	m->name = r ? r->name : w->cls[cls];
	w->nfl++;
}

static unsigned waiting_flows(const struct world *w)
{
	unsigned n = 0;
	int i;

	for (i = 0; i < w->nfl; i++)
		n += w->fl[i].state == F_WAIT;
	return n;
}

/* rs_flow_allowance() on m, checked against its state. */
static int64_t allowance(struct world *w, struct sflow *m, uint64_t want)
{
	int64_t got;
	unsigned others = waiting_flows(w);
	int state = m->state;

	got = rs_flow_allowance(w->s, m->h, want, w->now);
	if (got < 0 || (uint64_t)got > want)
		FAIL(w, "allowance %" PRId64 " of %" PRIu64, got, want);
	if (state == F_GRANT && w->now - m->t_grant < RS_NSEC_PER_SEC) {
		if (got == 0)
			FAIL(w, "a fresh grant gave nothing");
	} else if (state == F_WAIT) {
		if (got)
			FAIL(w, "a waiting flow got %" PRId64, got);
	} else if (!w->cfg.pacing) {
		if ((uint64_t)got != want && state != F_GRANT)
			FAIL(w, "pacing off: %" PRId64 " of %" PRIu64, got, want);
	} else if (state == F_IDLE && others && got) {
		FAIL(w, "went ahead of %u waiting flows", others);
	}
	m->state = got ? F_IDLE : F_WAIT;
	return got;
}

/* rs_flow_wait_ahead() on m: it waits from now on, or nothing changed. */
static void wait_ahead(struct world *w, struct sflow *m, uint64_t want)
{
	int state = m->state, got = rs_flow_wait_ahead(w->s, m->h, want, w->now);

	if (got != 0 && got != 1)
		FAIL(w, "wait ahead %d", got);
	if (state == F_WAIT && !got)
		FAIL(w, "a waiting flow may read");
	if (state == F_GRANT && w->now - m->t_grant < RS_NSEC_PER_SEC && got)
		FAIL(w, "a fresh grant waits");
	if (!w->cfg.pacing && got)
		FAIL(w, "pacing off, yet a flow waits");
	if (got)
		m->state = F_WAIT;
}

static void ev_flow_allowance(struct world *w)
{
	struct sflow *m = pick_flow(w);
	struct snap before;

	if (!m)
		return;
	if (m->state == F_CLOSED || below(w, 20) == 0) {
		take(w, &before);
		if (rs_flow_allowance(w->s, m->h, m->state == F_CLOSED, w->now) !=
		    (m->state == F_CLOSED ? RS_ESTALE : RS_EINVAL))
			FAIL(w, "allowance misuse accepted");
		expect_unchanged(w, &before);
		return;
	}
	if (below(w, 4) == 0)
		wait_ahead(w, m, 1 + below(w, 100000));
	else
		allowance(w, m, 1 + below(w, below(w, 2) ? 3000 : 100000));
}

/* Read n bytes on open flow m: counted for its request or its class. */
static void flow_read(struct world *w, struct sflow *m, uint64_t n)
{
	struct sreq *r = m->req >= 0 ? &w->req[m->req] : NULL;

	if (m->state == F_GRANT)
		m->state = F_IDLE;	/* the grant is taken */
	if (r && r->state == S_RELEASED && r->id == w->req[m->req].id)
		model_req_bytes(w, r, n);
	else
		model_foreign(w, m->name, n);
	if (rs_flow_read(w->s, m->h, n, w->now))
		FAIL(w, "flow read failed");
}

static void ev_flow_read(struct world *w)
{
	struct sflow *m = pick_flow(w);
	struct snap before;

	if (!m)
		return;
	if (m->state == F_CLOSED) {
		take(w, &before);
		if (rs_flow_read(w->s, m->h, 1, w->now) != RS_ESTALE)
			FAIL(w, "read on a closed flow accepted");
		expect_unchanged(w, &before);
		return;
	}
	if (m->state == F_WAIT)
		return;		/* a caller reads after an allowance */
	flow_read(w, m, below(w, 4) ? below(w, 5000) : below(w, 100000));
	if (below(w, 4) == 0) {
		uint32_t c = rs_flow_clamp(w->s, m->h,
					   below(w, 2) ? below(w, 500000000) : 0);

		if (c < 2 * 1448 || c > 16 * 1024 * 1024)
			FAIL(w, "clamp %u", c);
		m->clamp = c;
	}
}

static void flow_close(struct world *w, struct sflow *m)
{
	if (rs_flow_close(w->s, m->h, w->now))
		FAIL(w, "close failed");
	m->state = F_CLOSED;
	m->clamp = 0;
}

static void ev_flow_close(struct world *w)
{
	struct sflow *m = pick_flow(w);

	if (!m)
		return;
	if (m->state == F_CLOSED) {
		if (rs_flow_close(w->s, m->h, w->now) != RS_ESTALE ||
		    rs_flow_clamp(w->s, m->h, 0) != 0)
			FAIL(w, "closed flow accepted");
		return;
	}
	flow_close(w, m);
}

static double gstats_share(struct world *w)
{
	struct rs_stats st;

	rs_get_stats(w->s, &st);
	return st.link_share;
}

/* rs_share_of() over n random rows (this instance's classes and policy):
 * every share in (0, 1]; the shares of the workers with users add up to 1
 * but for the idle floors; without users, the idle share. */
static void share_property(struct world *w, uint32_t ncls)
{
	static uint32_t users[8][MAXCLS];
	struct rs_share_row rows[8];
	unsigned n = 1 + (unsigned)below(w, 8), i;
	double sum = 0, idle = rs_share_idle(n);
	bool any = false;

	for (i = 0; i < n; i++) {
		bool has = false;

		for (uint32_t c = 0; c < ncls; c++) {
			users[i][c] = below(w, 3) ? 0 : (uint32_t)below(w, 4);
			has |= users[i][c] > 0;
		}
		rows[i].users = users[i];
		rows[i].used = (double)below(w, 1001) / 1000;
		rows[i].held = below(w, 2) ? 0 : (double)below(w, 1001) / 1000;
		rows[i].limited = below(w, 2);
		any |= has;
	}
	for (i = 0; i < n; i++) {
		double f = rs_share_of(w->s, rows, n, i);
		bool has = false;

		for (uint32_t c = 0; c < ncls; c++)
			has |= users[i][c] > 0;
		if (!(f > 0 && f <= 1))
			FAIL(w, "share %g of worker %u of %u", f, i, n);
		if (any && !has && f != idle)
			FAIL(w, "idle worker %u of %u has share %g", i, n, f);
		if (has)
			sum += f;
	}
	if (any && (sum < 1 - 1e-9 || sum > 1 + n * idle + 1e-9))
		FAIL(w, "shares of %u workers with users add up to %.12f", n, sum);
	if (!any && rs_share_of(w->s, rows, n, 0) != 1.0 / n)
		FAIL(w, "no users: share %g, not 1/%u", rs_share_of(w->s, rows, n, 0), n);
}

/* The byte gates (1 in 4 detached), shared with a phantom second worker
 * whose users are random and whose reads moved some gates up to 200 ms
 * ahead. */
static void share_gates(struct world *w, struct rs_share_row *mine)
{
	uint32_t other[MAXCLS];
	struct rs_share_row rows[2];
	int c, ncls = rs_class_count(w->s);

	if (below(w, 4) == 0) {
		if (rs_share_gates(w->s, NULL, NULL, 0, 0, w->now))
			FAIL(w, "detach gates");
		return;
	}
	for (c = 0; c < ncls; c++)
		other[c] = (uint32_t)below(w, 3);
	for (c = 0; c <= ncls; c++)
		if (below(w, 4) == 0)
			w->gates[c] = w->now + below(w, 200) * 1000000ULL;
	rows[0] = *mine;
	rows[1] = *mine;
	rows[1].users = other;
	if (rs_share_gates(w->s, w->gates, rows, 2, 0, w->now))
		FAIL(w, "share gates");
}

/* One window for the proxy, beside a phantom second worker of a random
 * share and W+ (1 in 4 not adaptive): an adaptive W+ becomes the mean of
 * the two rows' W+ weighted by their shares, within [1, max_window]; any
 * other window does not move. */
static void share_window(struct world *w, const struct rs_share_row *mine)
{
	struct rs_share_row rows[2] = { *mine, *mine };
	double before = rs_window_max(w->s), want = before, slots, shares;

	rows[1].share = (double)(1 + below(w, 1000)) / 1000;
	rows[1].window_max = below(w, 4) ? 1 + (double)below(w, 4000) / 100 : 0;
	if (w->s->ctl->adaptive && mine->window_max >= 1) {
		slots = mine->share * mine->window_max;
		shares = mine->share;
		if (rows[1].window_max >= 1) {
			slots += rows[1].share * rows[1].window_max;
			shares += rows[1].share;
		}
		want = rs_window_clamp(w->s, slots / shares);
	}
	if (rs_share_window(w->s, rows, 2, w->now))
		FAIL(w, "share window");
	if (fabs(rs_window_max(w->s) - want) > 1e-9 * want)
		FAIL(w, "share window: W+ %g, not %g (was %g)", rs_window_max(w->s), want, before);
}

/* An SMP worker's update: sample its row, take a new share of the link
 * (1 in 8: a share out of range, refused without a change); and the
 * shares of random tables. */
static void ev_share(struct world *w)
{
	uint32_t users[MAXCLS];
	struct rs_share_row row;
	struct rs_stats st;
	struct snap before;
	double share, want;
	int ncls = rs_class_count(w->s);

	if (ncls > MAXCLS)
		return;
	share_property(w, (uint32_t)ncls);
	if (rs_share_sample(w->s, w->now, users, &row))
		FAIL(w, "share sample");
	/* used: the model's bytes since its previous sample over the time,
	 * of C scaled to the link's frames (payload_per_wire) */
	rs_get_stats(w->s, &st);
	want = w->share_t && w->now > w->share_t ?
	       (double)(w->bytes - w->share_bytes) /
	       ((double)(w->now - w->share_t) / RS_NSEC_PER_SEC) /
	       ((double)w->s->cfg.link_bps / 8.0 *
		st.payload_per_wire / RS_WIRE_PAYLOAD_RATIO) : 0;
	w->share_t = w->now;
	w->share_bytes = w->bytes;
	if (row.held < 0 || row.held > gstats_share(w) ||
	    (w->s->waiting > 0 && !row.limited) ||
	    fabs(row.used - want) > 1e-9 * (1 + want))
		FAIL(w, "share sample: used %g held %g limited %d", row.used, row.held, row.limited);
	if (below(w, 8) == 0) {
		take(w, &before);
		share = below(w, 2) ? 0 : 1 + (double)(1 + below(w, 100)) / 100;
		if (rs_set_link_share(w->s, share, w->now) != RS_EINVAL)
			FAIL(w, "share %g accepted", share);
		expect_unchanged(w, &before);
		return;
	}
	share = (double)(1 + below(w, 1000)) / 1000;
	if (rs_set_link_share(w->s, share, w->now))
		FAIL(w, "set link share %g", share);
	if (gstats_share(w) != share)
		FAIL(w, "link share not taken");
	share_window(w, &row);
	share_gates(w, &row);
}

static void ev_link(struct world *w)
{
	struct snap before;
	int err;

	if (below(w, 3) == 0) {
		w->src = below(w, 2) ? RS_LINK_COUNTER : RS_LINK_PROXIED;
		if (rs_set_link_source(w->s, w->src, w->now))
			FAIL(w, "set link source");
		return;
	}
	take(w, &before);
	/* frames: none (a counter of bytes alone) or up to 200 per sample,
	 * which may be more than the bytes' headers */
	err = rs_on_link_bytes(w->s, below(w, 200000), below(w, 201), w->now);
	if (w->src == RS_LINK_PROXIED) {
		if (err != RS_ESTATE)
			FAIL(w, "link bytes while proxied: %d", err);
		expect_unchanged(w, &before);
	} else if (err) {
		FAIL(w, "link bytes: %d", err);
	}
}

/* Every waiting flow is woken in time; take every grant; close all. */
static void drain_flows(struct world *w)
{
	int rounds, i;
	struct rs_stats st;

	w->step = "drain flows";
	/* R may be 55 bytes/s (a 0.009 link share) after a 100-KB over-read,
	 * and other deadlines step time by 16 ms: 110,000 rounds */
	for (rounds = 0; waiting_flows(w) && rounds < 1000000; rounds++) {
		rs_time_ns d = rs_next_deadline(w->s);

		if (d == UINT64_MAX)
			FAIL(w, "flows wait but no deadline");
		if (d > w->now)
			w->now = d;
		rs_on_timer(w->s, w->now);
		for (i = 0; i < w->nfl; i++)
			if (w->fl[i].state == F_GRANT) {
				int64_t g = allowance(w, &w->fl[i], 100000);

				if (g)
					flow_read(w, &w->fl[i], (uint64_t)g);
			}
	}
	if (waiting_flows(w))
		FAIL(w, "flows never woken");
	for (i = 0; i < w->nfl; i++)
		if (w->fl[i].state != F_CLOSED)
			flow_close(w, &w->fl[i]);
	check(w);
	rs_get_stats(w->s, &st);
	if (st.flows || st.flows_waiting || st.window_bytes ||
	    w->s->pc.act.n || w->s->pc.gr_head != RS_NIL ||
	    w->s->pc.wsum != 0)
		FAIL(w, "flows left after closing all");
}

static void ev_misuse(struct world *w)
{
	struct snap before;
	rs_id bogus = rnd(w);

	int i;

	for (i = 0; i < w->nreq; i++)
		if (w->req[i].id == bogus)
			return;		/* a 2^-58 coincidence: not misuse */
	take(w, &before);
	if (rs_on_bytes(w->s, bogus, 1, w->now) != RS_ESTALE ||
	    rs_cancel(w->s, bogus, w->now) != RS_ESTALE ||
	    rs_on_end(w->s, bogus, false, w->now) != RS_ESTALE)
		FAIL(w, "bogus id accepted");
	expect_unchanged(w, &before);
}

/* Releases every queued request and ends every response (liveness), then
 * checks that the scheduler is idle and balanced. */
static void drain(struct world *w)
{
	int rounds, i, live, idle = 0;
	struct rs_stats st;

	w->step = "drain";
	for (rounds = 0; rounds < 100000; rounds++) {
		live = 0;
		for (i = 0; i < w->nreq; i++)
			if (w->req[i].state == S_RELEASED) {
				ev_end(w, &w->req[i]);
				live = 1;
			}
		for (i = 0; i < w->nreq; i++)
			live |= w->req[i].state == S_QUEUED;
		if (!live)
			break;
		/* nothing outstanding: timers must make progress. Fire at
		 * the deadline; while nothing is released, fire later and
		 * later (rtc may plan releases far ahead when its Delay_resp
		 * estimates are large; the stats tick fires in between). */
		{
			rs_time_ns d = rs_next_deadline(w->s);
			uint64_t before = w->released;

			if (d == UINT64_MAX)
				FAIL(w, "queued requests but no deadline and W = 0");
			if (d > w->now)
				w->now = d;
			w->now += idle ? (rs_time_ns)1000000 << (idle < 30 ? idle : 30) : 0;
			if (w->now > 4000000000000000000ULL)
				{ struct rs_stats x; rs_get_stats(w->s, &x); FAIL(w, "queued requests never released (time ran out) W %u W+ %.2f q %u long %u ctl %s pacing %d", x.W, x.W_max, x.queued, x.long_transfers, rs_controller_name(w->cfg.controller), w->cfg.pacing); }
			rs_on_timer(w->s, w->now);
			idle = w->released == before ? idle + 1 : 0;
		}
	}
	if (rounds == 100000) {
		struct rs_stats st2;

		rs_get_stats(w->s, &st2);
		FAIL(w, "queued requests never released (policy %s sff %d "
		     "controller %s W %u W+ %.2f queued %u deadline %" PRIu64
		     " now %" PRIu64 " classes %d)",
		     rs_policy_name(w->cfg.policy), w->cfg.sff,
		     rs_controller_name(w->cfg.controller), st2.W, st2.W_max,
		     st2.queued, rs_next_deadline(w->s), w->now, w->ncls);
	}
	check(w);
	w->now += 1000 * RS_NSEC_PER_SEC;	/* past every flow timeout */
	rs_on_timer(w->s, w->now);
	rs_get_stats(w->s, &st);
	if (st.W || st.queued || st.users)
		FAIL(w, "not idle: W %u queued %u users %u", st.W, st.queued,
		     st.users);
	for (i = 0; i < RS_MAX_RESOURCES; i++)
		if (w->s->res_used[i] || w->s->res_excess[i])
			FAIL(w, "resource %d: %" PRIu64 " still in use", i,
			     w->s->res_used[i]);
	if (st.released != st.ended ||
	    w->enqueued != st.released + st.cancelled + st.expired)
		FAIL(w, "unbalanced: enq %" PRIu64 " rel %" PRIu64 " end %" PRIu64,
		     w->enqueued, st.released, st.ended);
	for (i = 0; i < w->ncls; i++) {
		struct rs_class_stats cs;

		rs_get_class_stats(w->s, i, &cs);
		if (cs.active_users || cs.queued || cs.outstanding)
			FAIL(w, "class %d not idle", i);
	}
}

static void one_sequence(struct world *w)
{
	int n, i, events, every;
	bool longseq = below(w, 2000) == 0;

	w->nreq = 0;
	w->maxreq = longseq ? MAXREQ : 48;
	w->maxcls = longseq ? MAXCLS : 6;
	w->enqueued = w->released = w->ended = w->cancelled = w->expired = 0;
	w->nfl = 0;
	w->bytes = 0;
	w->share_bytes = 0;
	w->share_t = 0;
	memset(w->cbytes, 0, sizeof(w->cbytes));
	memset(w->gates, 0, sizeof(w->gates));
	w->src = RS_LINK_PROXIED;
	w->now = below(w, 1000000000);
	w->step = "new";
	random_config(w, &w->cfg);
	w->had_res = w->cfg.nres > 0;
	memset(w->used, 0, sizeof(w->used));
	memset(w->excess, 0, sizeof(w->excess));
	memset(w->consumed, 0, sizeof(w->consumed));
	w->s = rs_new(&w->cfg, on_release, w);
	if (!w->s)
		FAIL(w, "rs_new");
	rs_set_wake(w->s, on_wake);
	n = 1 + (int)below(w, longseq ? 30 : 4);
	w->ncls = 0;
	for (i = 0; i < n; i++) {
		int name = (int)below(w, NAMES), c;

		c = rs_class_add(w->s, pool[name], 0.5 + (double)below(w, 8));
		if (class_of(w, name) >= 0) {
			if (c != RS_EEXIST)
				FAIL(w, "duplicate class accepted");
			continue;
		}
		if (c != w->ncls)
			FAIL(w, "class index %d", c);
		w->cls[w->ncls++] = name;
	}
	events = longseq ? 500 + (int)below(w, 2500) : 4 + (int)below(w, 28);
	every = longseq ? 16 : 1;
	for (i = 0; i < events; i++) {
		uint64_t e = below(w, 128);

		w->now += below(w, 4) ? below(w, 50000000) : 0;
		if (e < 30) {
			w->step = "enqueue";
			ev_enqueue(w);
		} else if (e < 38) {
			w->step = "cancel";
			ev_cancel(w);
		} else if (e < 46) {
			w->step = "first byte";
			ev_first_byte(w);
		} else if (e < 62) {
			w->step = "bytes";
			ev_bytes(w);
		} else if (e < 78) {
			w->step = "end";
			ev_end(w, pick(w));
		} else if (e < 85) {
			w->step = "timer";
			ev_timer(w);
		} else if (e < 87) {
			w->step = "expire";
			ev_expire(w);
		} else if (e < 89) {
			w->step = "reclaim";
			ev_reclaim(w);
		} else if (e < 91) {
			w->step = "link done";
			ev_link_done(w, pick(w));
		} else if (e < 93) {
			w->step = "foreign";
			ev_foreign(w);
		} else if (e < 96) {
			w->step = "reconfigure";
			ev_reconfigure(w);
		} else if (e < 100) {
			w->step = "misuse";
			ev_misuse(w);
		} else if (e < 104) {
			w->step = "flow open";
			ev_flow_open(w);
		} else if (e < 111) {
			w->step = "allowance";
			w->wake_probe = below(w, 8) == 0;
			ev_flow_allowance(w);
		} else if (e < 118) {
			w->step = "flow read";
			ev_flow_read(w);
		} else if (e < 120) {
			w->step = "flow close";
			ev_flow_close(w);
		} else if (e < 125) {
			w->step = "link";
			ev_link(w);
		} else {
			w->step = "share";
			ev_share(w);
		}
		if (i % every == 0)
			check(w);
	}
	drain_flows(w);
	drain(w);
	rs_free(w->s);
	w->s = NULL;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	struct world w;

	memset(&w, 0, sizeof(w));
	for (unsigned i = 0; i < NAMES; i++)
		snprintf(pool[i], sizeof(pool[i]), "c%u", i);
	w.rng = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	printf("random_invariants: %lu sequences, seed %" PRIu64 "\n", n, w.rng);
	fflush(stdout);
	for (w.seq = 0; w.seq < n; w.seq++) {
		one_sequence(&w);
		if ((w.seq + 1) % 100000 == 0) {
			printf("  %lu sequences ok\n", w.seq + 1);
			fflush(stdout);
		}
	}
	printf("random_invariants: all %lu sequences passed\n", n);
	return 0;
}
