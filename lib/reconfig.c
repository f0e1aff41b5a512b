/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reconfig.c - rs_reconfigure(): new configuration and class set, keeping
 * every queued and outstanding request.
 *
 * Classes are matched by name, through the name indexes (names.c: O(1)
 * expected per name): a kept class keeps its service counter, deficit,
 * statistics and requests and takes the new weight; a new class starts
 * idle; the requests and users of a removed class move to the default
 * class (their (class,user) entries merge with existing ones).
 * Waiting requests are re-queued in their original enqueue order; a
 * request that rtc had already taken from the policy (held or scheduled,
 * not yet released) goes back to the queue (drr refunds its charge).
 * Released requests stay released (W unchanged); under rtc each of them
 * holds its estimated rate until its estimated finishing time (remaining
 * estimated bytes / rate from now).
 *
 * Resources (resources.c): a released request keeps what it holds (its
 * class's held counts follow it to the default class) and gives it back at
 * its end whatever the new policy; a lowered capacity leaves an excess.
 * A kept class's deficits restart (DRR's ready); its consumed stay.
 *
 * Flows stay open: a flow of a removed class moves to the default class,
 * the pacer's accounts are rebuilt for the new policy (pacer.c). Long
 * transfers stay out of the window until they end, even if pacing is
 * turned off. Slow start begins again (wrc-mult, wrc-aimd).
 *
 * All memory is allocated before anything changes, so an error return
 * leaves the scheduler exactly as it was.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct plan {
	struct rs_class *cls;
	struct rs_cres *cres;
	uint32_t *dirty;
	uint32_t *map;		/* old class -> new class */
	struct rs_users users;
	struct rs_kheap ready, active;
	char **names;		/* copies for new classes, NULL for kept */
	int *from;		/* new class -> kept old class, or -1 */
	struct rs_names byname;	/* the new classes' names: the kept
				 * classes' strings and the copies */
};

/* Checks the arguments; returns the default class's index among the new
 * classes, or an error. A temporary index of the new names finds the
 * duplicates and the default. */
static int validate(const struct rs_sched *s, const struct rs_config *cfg,
		    const char *const *names, const double *weights, int n,
		    const char *default_name)
{
	struct rs_names seen = { 0 };
	uint32_t def;
	int i, err = 0;

	if (!s || rs_config_check(cfg) || !names || !weights || n < 1 ||
	    !default_name)
		return RS_EINVAL;
	if (rs_names_reserve(&seen, (uint32_t)n))
		return RS_ENOMEM;
	for (i = 0; i < n && !err; i++) {
		if (!names[i] || !*names[i] || !rs_weight_ok(weights[i]))
			err = RS_EINVAL;
		else if (rs_names_add(&seen, names[i], (uint32_t)i) != (uint32_t)i)
			err = RS_EEXIST;
	}
	def = rs_names_find(&seen, default_name);
	rs_names_free(&seen);
	if (err)
		return err;
	return def == RS_NIL ? RS_ENOCLASS : (int)def;
}

static void plan_free(struct plan *p, int n)
{
	int i;

	if (p->names)
		for (i = 0; i < n; i++)
			free(p->names[i]);
	free(p->names);
	free(p->from);
	free(p->cls);
	free(p->cres);
	free(p->dirty);
	free(p->map);
	rs_users_free(&p->users);
	rs_kheap_free(&p->ready);
	rs_kheap_free(&p->active);
	rs_names_free(&p->byname);
}

static int plan_alloc(struct plan *p, struct rs_sched *s,
		      const struct rs_config *cfg, const char *const *names,
		      int n, int def)
{
	const struct rs_controller_ops *ctl;
	uint32_t c;
	int i;

	memset(p, 0, sizeof(*p));
	p->cls = rs_line_array(NULL, 0, (size_t)n, sizeof(*p->cls));
	p->cres = rs_line_array(NULL, 0, (size_t)n, sizeof(*p->cres));
	p->dirty = calloc((size_t)n, sizeof(*p->dirty));
	p->map = calloc(s->ncls ? s->ncls : 1, sizeof(*p->map));
	p->names = calloc((size_t)n, sizeof(*p->names));
	p->from = calloc((size_t)n, sizeof(*p->from));
	if (!p->cls || !p->cres || !p->dirty || !p->map || !p->names ||
	    !p->from || rs_names_reserve(&p->byname, (uint32_t)n))
		return RS_ENOMEM;
	/* new class i takes the name of its kept class, else a copy */
	for (i = 0; i < n; i++) {
		const char *name;

		p->from[i] = rs_class_find(s, names[i]);
		if (p->from[i] >= 0) {
			name = s->cls[p->from[i]].name;
		} else {
			name = p->names[i] = strdup(names[i]);
			if (!name)
				return RS_ENOMEM;
		}
		rs_names_add(&p->byname, name, (uint32_t)i);
	}
	for (c = 0; c < s->ncls; c++) {
		uint32_t j = rs_names_find(&p->byname, s->cls[c].name);

		p->map[c] = j != RS_NIL ? j : (uint32_t)def;
	}
	if (rs_users_init(&p->users) ||
	    rs_users_reserve_n(&p->users, s->users.alive + 1) ||
	    rs_kheap_reserve(&p->ready, (uint32_t)n) ||
	    rs_kheap_reserve(&p->active, (uint32_t)n))
		return RS_ENOMEM;
	ctl = rs_controller_ops_of(cfg->controller);
	if (ctl->reserve && ctl->reserve(s))
		return RS_ENOMEM;
	if (rs_drf_reserve(s, (uint32_t)n) ||
	    rs_res_reserve(s, s->req_cap, cfg->nres > 0))
		return RS_ENOMEM;
	return 0;
}

/* New class j: the kept old class of that name, or a fresh idle one. */
static void build_classes(struct rs_sched *s, struct plan *p,
			  const double *weights, int n)
{
	unsigned i;
	int j;

	for (j = 0; j < n; j++) {
		struct rs_class *k = &p->cls[j];
		struct rs_cres *r = &p->cres[j];
		int old = p->from[j];

		rs_cres_init(r);
		if (old < 0) {
			rs_class_init(k, p->names[j], weights[j]);
			p->names[j] = NULL;
			k->sc_epoch = s->sc_epoch - 1;	/* idle */
			continue;
		}
		*k = s->cls[old];
		s->cls[old].name = NULL;	/* moved */
		k->weight = weights[j];
		k->uc = k->nq = k->pending = k->outstanding = 0;
		for (i = 0; i < RS_NSUBQ; i++) {
			k->q[i].head = k->q[i].tail = RS_NIL;
			k->q[i].len = 0;
		}
		for (i = 0; i < RS_MAX_RESOURCES; i++) {	/* held: rebuild_queues() */
			r->mq[i].dc = s->cres[old].mq[i].dc;
			r->mq[i].seen = s->cres[old].mq[i].seen;
			r->consumed[i] = s->cres[old].consumed[i];
		}
		k->sc_pending = 0;
		k->hpos_ready = k->hpos_active = RS_NIL;
		k->dirty = k->in_round = k->visiting = k->in_pool = 0;
		k->next_sub = 0;
		k->rr_next = k->rr_prev = RS_NIL;
	}
}

static void merge_user(struct rs_user *to, const struct rs_user *from)
{
	if (from->recent > to->recent)
		to->recent = from->recent;
	if (from->last_seen > to->last_seen)
		to->last_seen = from->last_seen;
}

/* New (class,user) table: one reference per live request, idle entries
 * kept in their order when sff stays on. */
static void build_users(struct rs_sched *s, struct plan *p, bool sff)
{
	struct rs_users *old = &s->users, *nu = &p->users;
	uint32_t r, i;

	for (r = 0; r < s->nreq; r++) {
		struct rs_req *q = &s->req[r];
		const struct rs_user *e;

		if (q->state == RS_ST_FREE)
			continue;
		e = &old->ent[q->user];
		q->cls = p->map[q->cls];
		q->user = rs_users_insert(nu, q->cls, e->key);
		merge_user(&nu->ent[q->user], e);
		nu->ent[q->user].count++;
		if (q->state != RS_ST_RELEASED)
			nu->ent[q->user].waiting++;
	}
	for (i = 0; sff && i < old->nidle; i++) {
		const struct rs_user *e = &old->ent[rs_users_idle_at(old, i)];
		uint32_t idx;

		if (e->count > 0)
			continue;	/* used again (the ring is lazy): added above */
		idx = rs_users_insert(nu, p->map[e->cls], e->key);
		merge_user(&nu->ent[idx], e);
		if (nu->ent[idx].count == 0 && !nu->ent[idx].idle)
			rs_users_idle_add(nu, idx);
	}
	for (i = 0; i < nu->nent; i++)
		if (nu->ent[i].count > 0)
			p->cls[nu->ent[i].cls].uc++;
}

static void swap_in(struct rs_sched *s, struct plan *p, int n)
{
	uint32_t c;

	for (c = 0; c < s->ncls; c++)
		free(s->cls[c].name);	/* names of removed classes */
	free(s->cls);
	free(s->cres);
	free(s->dirty);
	rs_users_free(&s->users);
	rs_kheap_free(&s->ready);
	rs_kheap_free(&s->active);
	rs_names_free(&s->byname);
	s->cls = p->cls;
	s->cres = p->cres;
	s->dirty = p->dirty;
	s->users = p->users;
	s->ready = p->ready;
	s->active = p->active;
	s->byname = p->byname;
	s->ncls = s->cls_cap = (uint32_t)n;
	s->ndirty = 0;
	s->nactive = 0;		/* rebuild_queues() adds the active classes */
	s->pool_n = 0;
	p->cls = NULL;
	p->cres = NULL;
	p->dirty = NULL;
	memset(&p->users, 0, sizeof(p->users));
	memset(&p->ready, 0, sizeof(p->ready));
	memset(&p->active, 0, sizeof(p->active));
	memset(&p->byname, 0, sizeof(p->byname));
}

/* The policy's state first (msf, rfq: the active heap, SCs of newly
 * active classes restart at the minimum), the resources the classes hold,
 * then the queues in enqueue order, then the released requests. */
static void rebuild_queues(struct rs_sched *s, bool old_sff, rs_time_ns now)
{
	unsigned i;
	uint32_t r;

	s->resv = RS_NIL;
	if (s->pol->rebuild)
		s->pol->rebuild(s);
	s->rr_head = s->rr_tail = RS_NIL;
	s->rr_len = 0;
	rs_rtc_reset(s, now);
	/* what the classes hold, before drf's keys are computed */
	for (r = 0; r < s->nreq; r++)
		for (i = 0; (s->req[r].flags & RS_RF_HOLDS_RES) &&
			    i < RS_MAX_RESOURCES; i++)
			s->cres[s->req[r].cls].held[i] += s->cost[r][i];
	for (r = s->ghead; r != RS_NIL; r = s->req[r].gnext) {
		struct rs_req *q = &s->req[r];

		q->state = RS_ST_QUEUED;
		q->flags &= (uint8_t)~RS_RF_HOLDS_BW;
		if (!s->cfg.sff || !old_sff)	/* sff keeps its groups */
			q->sub = rs_q_sub(s, r, now);
		rs_q_push(s, r);
	}
	for (r = 0; r < s->nreq; r++) {
		struct rs_req *q = &s->req[r];

		if (q->state != RS_ST_RELEASED)
			continue;
		q->flags &= (uint8_t)~RS_RF_HOLDS_BW;
		s->cls[q->cls].outstanding++;
		if (s->ctl->adopt)
			s->ctl->adopt(s, r, now);
	}
}

int rs_reconfigure(struct rs_sched *s, const struct rs_config *cfg,
		   const char *const *names, const double *weights, int n,
		   const char *default_name, rs_time_ns now)
{
	const struct rs_controller_ops *old_ctl;
	struct rs_config old;
	struct plan p;
	uint32_t r;
	int def, err;

	if (s && s->in_callback)
		return RS_EBUSY;
	def = validate(s, cfg, names, weights, n, default_name);
	if (def < 0)
		return def;
	err = plan_alloc(&p, s, cfg, names, n, def);
	if (err) {
		plan_free(&p, n);
		return err;
	}
	rs_tick(s, now);
	rs_pacer_refill(s, now);	/* tokens up to now at the old rate */
	rs_gate_detach(s);	/* by class index: the host attaches again */
	rs_sc_flush(s);
	/* give back what the old policy charged for taken, unreleased ones */
	for (r = s->ghead; r != RS_NIL; r = s->req[r].gnext)
		if (s->req[r].state == RS_ST_HELD ||
		    s->req[r].state == RS_ST_SCHEDULED)
			rs_policy_refund(s, r);
	old = s->cfg;
	old_ctl = s->ctl;
	build_classes(s, &p, weights, n);
	build_users(s, &p, cfg->sff);
	swap_in(s, &p, n);
	s->cfg = *cfg;
	rs_select_bind(s);
	s->est.default_size = cfg->default_size;
	s->waiting = 0;
	for (r = s->ghead; r != RS_NIL; r = s->req[r].gnext)
		s->waiting++;
	rs_res_reconfigured(s);
	rebuild_queues(s, old.sff, now);
	rs_pacer_rebuild(s, p.map);
	plan_free(&p, n);
	rs_window_restart(s, old_ctl, now);
	rs_window_params(s);	/* long_transfer; slow start again */
	rs_users_expire(s, now);
	rs_try_release(s, now);
	rs_pacer_timer(s, now);	/* pacing turned off: wake every waiter */
	rs_check(s, "rs_reconfigure");
	return 0;
}
