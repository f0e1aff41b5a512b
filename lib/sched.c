/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sched.c - scheduler instance, classes, request handles and the event
 * entry points of reqsched.h.
 *
 * Every entry point validates all of its arguments before it changes
 * anything, so an error return leaves every counter as it was.
 * A request id is (generation << 32) | (slot index + 1); the generation of
 * a slot changes when the slot is freed, so an old id never matches again.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define CHECK_ENTRY(s)                                                  \
	do {                                                            \
		int entry_err_ = rs_entry_err(s);                          \
									\
		if (entry_err_)                                         \
			return entry_err_;                              \
	} while (0)

void rs_config_default(struct rs_config *cfg)
{
	unsigned i;

	memset(cfg, 0, sizeof(*cfg));
	cfg->policy = RS_POLICY_MSF;
	cfg->sff = false;
	cfg->controller = RS_WIN_WRC_MULT;
	cfg->link_bps = 0;
	cfg->target_util = 0.98;
	cfg->update_interval = 5 * RS_NSEC_PER_SEC;
	cfg->K = 2;
	cfg->F = 4;
	cfg->fixed_window = 1;
	cfg->initial_window = 1;
	cfg->max_window = 0;
	cfg->drr_quantum = 27656;
	cfg->drr_compensation = true;
	cfg->default_size = 27656;
	cfg->sff_threshold = 20 * 1024;
	cfg->sff_flow_timeout = 10 * RS_NSEC_PER_SEC;
	cfg->sff_alpha = 2;
	cfg->max_queued_user = 0;
	cfg->max_queued_class = 0;
	cfg->max_queued = 0;
	cfg->pacing = false;
	cfg->long_transfer = 0;		/* long transfers keep their slot */
	cfg->pace_keep_share = false;
	cfg->nres = 0;
	for (i = 0; i < RS_MAX_RESOURCES; i++)
		cfg->res_capacity[i] = 100;
	cfg->res_quantum = 0.05;
	cfg->sqos_resource = 0;
}

/* The resources: capacities, quantum; the multi-resource policies need
 * them and neither sff (its sub-queues) nor rtc (bandwidth, not RACs). */
static int resources_check(const struct rs_config *cfg)
{
	unsigned i;

	if (cfg->nres > RS_MAX_RESOURCES)
		return RS_EINVAL;
	for (i = 0; i < cfg->nres; i++)
		if (cfg->res_capacity[i] == 0)
			return RS_EINVAL;
	if (!(cfg->res_quantum > 0 && cfg->res_quantum <= 1))
		return RS_EINVAL;
	if (!rs_policy_ops_of(cfg->policy)->resources)
		return 0;
	if (cfg->nres == 0 || cfg->sff || cfg->controller == RS_WIN_RTC)
		return RS_EINVAL;
	if (cfg->policy == RS_POLICY_SQOS && cfg->sqos_resource >= cfg->nres)
		return RS_EINVAL;
	return 0;
}

int rs_config_check(const struct rs_config *cfg)
{
	if (!cfg)
		return RS_EINVAL;
	if (!rs_policy_ops_of(cfg->policy) ||
	    !rs_controller_ops_of(cfg->controller))
		return RS_EINVAL;
	if (cfg->link_bps == 0)
		return RS_EINVAL;
	if (!(cfg->target_util > 0 && cfg->target_util <= 1))
		return RS_EINVAL;
	if (cfg->update_interval == 0 || !(cfg->K >= 1) || cfg->F < 1)
		return RS_EINVAL;
	if (cfg->controller == RS_WIN_FIXED && cfg->fixed_window < 1)
		return RS_EINVAL;
	if (!(cfg->initial_window >= 1))
		return RS_EINVAL;
	if (cfg->max_window != 0 && !(cfg->max_window >= 1))
		return RS_EINVAL;
	if (cfg->drr_quantum == 0 || cfg->default_size == 0)
		return RS_EINVAL;
	if (cfg->sff_alpha < 1)
		return RS_EINVAL;
	/* a response shorter than one full segment is never "long" */
	if (cfg->long_transfer != 0 && cfg->long_transfer < 1448)
		return RS_EINVAL;
	return resources_check(cfg);
}

struct rs_sched *rs_new(const struct rs_config *cfg, rs_release_fn release,
			void *ctx)
{
	struct rs_sched *s;

	if (rs_config_check(cfg) || !release)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->cfg = *cfg;
	s->release = release;
	s->ctx = ctx;
	s->link_share = 1;
	s->frame_scale = 1;
	s->req_free = RS_NIL;
	s->ghead = s->gtail = RS_NIL;
	s->whead = s->wtail = RS_NIL;
	s->rr_head = s->rr_tail = RS_NIL;
	s->resv = RS_NIL;
	s->res_gen = 1;		/* mqos's order (mq_order_gen 0) is not known */
	for (unsigned j = 0; j < RS_MAX_RESOURCES; j++)
		s->mq[j].head = s->mq[j].tail = RS_NIL;
	if (rs_users_init(&s->users) || rs_est_init(&s->est, cfg->default_size)) {
		rs_free(s);
		return NULL;
	}
	rs_select_bind(s);
	s->ctl->start(s, 0);
	rs_window_params(s);
	rs_rtc_init(s);
	rs_pacer_init(s);
	if (rs_res_reserve(s, s->req_cap, cfg->nres > 0)) {
		rs_free(s);
		return NULL;
	}
	rs_check(s, "rs_new");
	return s;
}

void rs_free(struct rs_sched *s)
{
	uint32_t c;

	if (!s)
		return;
	for (c = 0; c < s->ncls; c++)
		free(s->cls[c].name);
	free(s->cls);
	free(s->cres);
	free(s->gate.cls);
	rs_names_free(&s->byname);
	free(s->req);
	free(s->rq);
	free(s->cost);
	rs_kheap_free(&s->drf);
	free(s->dirty);
	rs_users_free(&s->users);
	rs_kheap_free(&s->ready);
	rs_kheap_free(&s->active);
	rs_heap_free(&s->h_ft);
	rs_heap_free(&s->h_rel);
	rs_est_free(&s->est);
	rs_pacer_free(s);
	free(s);
}

/* ---- classes ---- */

void rs_class_init(struct rs_class *k, char *name, double weight)
{
	unsigned j;

	memset(k, 0, sizeof(*k));
	k->name = name;
	k->weight = weight;
	for (j = 0; j < RS_NSUBQ; j++)
		k->q[j].head = k->q[j].tail = RS_NIL;
	k->hpos_ready = k->hpos_active = RS_NIL;
	k->rr_next = k->rr_prev = RS_NIL;
}

void rs_cres_init(struct rs_cres *r)
{
	unsigned j;

	memset(r, 0, sizeof(*r));
	for (j = 0; j < RS_MAX_RESOURCES; j++)
		r->mq[j].next = r->mq[j].prev = RS_NIL;
	r->hpos_drf = RS_NIL;
}

/* Room for n classes in every per-class structure. */
int rs_class_reserve(struct rs_sched *s, uint32_t n)
{
	if (n > s->cls_cap) {
		uint32_t cap = s->cls_cap ? s->cls_cap : 8;
		struct rs_class *k;
		struct rs_cres *r;
		uint32_t *d;

		while (cap < n)
			cap *= 2;
		k = rs_line_array(s->cls, s->ncls, cap, sizeof(*k));
		if (!k)
			return RS_ENOMEM;
		s->cls = k;
		r = rs_line_array(s->cres, s->ncls, cap, sizeof(*r));
		if (!r)
			return RS_ENOMEM;
		s->cres = r;
		d = realloc(s->dirty, (size_t)cap * sizeof(*d));
		if (!d)
			return RS_ENOMEM;
		s->dirty = d;
		s->cls_cap = cap;
	}
	if (rs_kheap_reserve(&s->ready, n) || rs_kheap_reserve(&s->active, n) ||
	    rs_drf_reserve(s, n))
		return RS_ENOMEM;
	return 0;
}

bool rs_weight_ok(double w)
{
	return w > 0 && w < 1e12;	/* also rejects NaN */
}

int rs_class_add(struct rs_sched *s, const char *name, double weight)
{
	char *copy;

	CHECK_ENTRY(s);
	if (!name || !*name || !rs_weight_ok(weight))
		return RS_EINVAL;
	if (rs_class_find(s, name) >= 0)
		return RS_EEXIST;
	if (s->ncls >= (uint32_t)INT32_MAX)
		return RS_ENOMEM;
	if (rs_class_reserve(s, s->ncls + 1) ||
	    rs_names_reserve(&s->byname, s->ncls + 1))
		return RS_ENOMEM;
	copy = strdup(name);
	if (!copy)
		return RS_ENOMEM;
	rs_names_add(&s->byname, copy, s->ncls);
	rs_class_init(&s->cls[s->ncls], copy, weight);
	rs_cres_init(&s->cres[s->ncls]);
	s->cls[s->ncls].sc_epoch = s->sc_epoch - 1;	/* idle */
	if (s->ncls == 0 || weight < s->w_min)
		s->w_min = weight;
	s->ncls++;
	if (s->gate.tat) {	/* indexed by class: the host attaches again */
		rs_gate_detach(s);
		rs_pacer_cap(s);
	}
	rs_check(s, "rs_class_add");
	return (int)s->ncls - 1;
}

int rs_class_find(const struct rs_sched *s, const char *name)
{
	uint32_t c;

	if (!s || !name)
		return RS_EINVAL;
	c = rs_names_find(&s->byname, name);
	return c == RS_NIL ? RS_ENOCLASS : (int)c;
}

int rs_class_count(const struct rs_sched *s)
{
	return s ? (int)s->ncls : RS_EINVAL;
}

/* ---- request slots ---- */

static int req_reserve(struct rs_sched *s)
{
	if (s->req_free != RS_NIL || s->nreq < s->req_cap)
		return 0;
	if (s->req_cap >= UINT32_MAX / 2)
		return RS_ENOMEM;
	{
		uint32_t cap = s->req_cap ? s->req_cap * 2 : 64;
		struct rs_req *p;

		if (rs_res_reserve(s, cap, s->cfg.nres > 0))
			return RS_ENOMEM;
		p = realloc(s->req, (size_t)cap * sizeof(*p));
		if (!p)
			return RS_ENOMEM;
		s->req = p;
		s->req_cap = cap;
	}
	return 0;
}

static uint32_t req_alloc(struct rs_sched *s)
{
	uint32_t r, gen = 1;

	if (s->req_free != RS_NIL) {
		r = s->req_free;
		s->req_free = s->req[r].next;
		gen = s->req[r].gen;
	} else {
		r = s->nreq++;
	}
	s->req[r] = (struct rs_req){ .gen = gen, .next = RS_NIL,
				     .prev = RS_NIL, .gnext = RS_NIL,
				     .gprev = RS_NIL };
	return r;
}

static void req_release_slot(struct rs_sched *s, uint32_t r)
{
	struct rs_req *q = &s->req[r];

	q->state = RS_ST_FREE;
	if (++q->gen == 0)
		q->gen = 1;
	q->next = s->req_free;
	s->req_free = r;
}

/* ---- events ---- */

/* The real size of released request r is known: the Content-Length at
 * the first byte, then the bytes received at the end. The policy is
 * charged the difference to what it was charged so far (est_size), which
 * becomes the real size; so a response charges what it received, also
 * when that is not what its first byte announced (a body cut short, a
 * caller passing a Content-Length that has no body). */
static inline void size_known(struct rs_sched *s, uint32_t r, uint64_t real)
{
	struct rs_req *q = &s->req[r];

	if ((q->flags & RS_RF_SIZE_KNOWN) && q->est_size == real)
		return;
	q->flags |= RS_RF_SIZE_KNOWN;
	if (s->pol->size_known)
		s->pol->size_known(s, r, real);
	q->est_size = real;
}

/* The first queue limit a new request of (c, user) would exceed, counted
 * in the rejected counters, or 0: the user's own limit first, so that one
 * user's flood is refused before it fills its class's or the whole queue. */
static int queue_limit(struct rs_sched *s, uint32_t c, uint64_t user)
{
	const struct rs_class *k = &s->cls[c];
	uint32_t e;
	int err = 0;

	if (s->cfg.max_queued_user &&
	    (e = rs_users_find(&s->users, c, user)) != RS_NIL &&
	    s->users.ent[e].waiting >= s->cfg.max_queued_user) {
		s->rejected_user++;
		err = RS_EUSERFULL;
	} else if (s->cfg.max_queued_class &&
		   k->nq + k->pending >= s->cfg.max_queued_class) {
		s->rejected_class++;
		err = RS_ECLASSFULL;
	} else if (s->cfg.max_queued && s->waiting >= s->cfg.max_queued) {
		err = RS_EFULL;
	}
	if (err) {
		s->cls[c].rejected++;
		s->rejected++;
	}
	return err;
}

int rs_enqueue(struct rs_sched *s, int cls, uint64_t user,
	       const struct rs_req_info *info, void *cookie, rs_time_ns now,
	       rs_id *id)
{
	return rs_enqueue_cost(s, cls, user, info, NULL, cookie, now, id);
}

int rs_enqueue_cost(struct rs_sched *s, int cls, uint64_t user,
		    const struct rs_req_info *info, const uint32_t *cost,
		    void *cookie, rs_time_ns now, rs_id *id)
{
	struct rs_req *q;
	uint32_t r;
	int err;

	CHECK_ENTRY(s);
	if (!id)
		return RS_EINVAL;
	if (cls < 0 || (uint32_t)cls >= s->ncls)
		return RS_ENOCLASS;
	__builtin_prefetch(&s->cls[cls]);	/* overlap its likely miss */
	if ((err = queue_limit(s, (uint32_t)cls, user)))
		return err;
	if (req_reserve(s) || rs_users_reserve(&s->users) ||
	    (s->ctl->reserve && s->ctl->reserve(s)))
		return RS_ENOMEM;
	rs_advance(s, now);
	if (s->users.nidle)	/* else nothing to expire */
		rs_users_expire(s, now);
	r = req_alloc(s);
	q = &s->req[r];
	q->cookie = cookie;
	q->cls = (uint32_t)cls;
	q->t_enq = now;
	q->state = RS_ST_QUEUED;
	if (info) {
		q->url_key = info->url_key;
		q->host_key = info->host_key;
		q->type_key = info->type_key;
	}
	q->est_size = rs_est_size(&s->est, info, rs_est_read(s));
	q->user = rs_users_get(s, (uint32_t)cls, user, now);
	if (s->cost)
		rs_res_set(s, r, cost);
	q->sub = rs_q_sub(s, r, now);
	rs_q_push(s, r);
	rs_fifo_push(s, r);
	*id = rs_make_id(s, r);
	rs_try_release(s, now);
	rs_check(s, "rs_enqueue");
	return 0;
}

/* Remove a request that was never released (cancel or expire). */
static void drop_waiting(struct rs_sched *s, uint32_t r, rs_time_ns now)
{
	struct rs_req *q = &s->req[r];

	switch (q->state) {
	case RS_ST_QUEUED:
		rs_q_unlink(s, r);
		break;
	case RS_ST_HELD:
		s->held = RS_NIL;
		s->cls[q->cls].pending--;
		rs_policy_refund(s, r);
		break;
	case RS_ST_SCHEDULED:
		rs_rtc_forget(s, r);
		s->cls[q->cls].pending--;
		rs_policy_refund(s, r);
		break;
	default:
		break;
	}
	rs_q_drop(s, r);
	s->t_active = now;
	rs_users_put(s, q->user, now);
	req_release_slot(s, r);
}

int rs_cancel(struct rs_sched *s, rs_id id, rs_time_ns now)
{
	uint32_t r;

	CHECK_ENTRY(s);
	r = rs_lookup(s, id);
	if (r == RS_NIL)
		return RS_ESTALE;
	if (s->req[r].state == RS_ST_RELEASED)
		return RS_ESTATE;
	rs_advance(s, now);
	s->cls[s->req[r].cls].cancelled++;
	s->cancelled++;
	drop_waiting(s, r, now);
	rs_try_release(s, now);
	rs_check(s, "rs_cancel");
	return 0;
}

/* Entry checks of the calls on a released request (first byte, bytes,
 * end): entry_err(), then id must name a live released request *r. */
static inline int released_entry(const struct rs_sched *s, rs_id id,
				 uint32_t *r)
{
	int err = rs_entry_err(s);

	if (err)
		return err;
	*r = rs_lookup(s, id);
	if (*r == RS_NIL)
		return RS_ESTALE;
	if (s->req[*r].state != RS_ST_RELEASED)
		return RS_ESTATE;
	return 0;
}

int rs_on_first_byte(struct rs_sched *s, rs_id id, int64_t content_length,
		     rs_time_ns now)
{
	struct rs_req *q;
	uint32_t r;
	int err;

	if ((err = released_entry(s, id, &r)))
		return err;
	q = &s->req[r];
	if (q->flags & RS_RF_FIRST_BYTE)
		return RS_ESTATE;
	rs_advance(s, now);
	q->flags |= RS_RF_FIRST_BYTE;
	q->t_first = now;
	if (content_length >= 0)
		size_known(s, r, (uint64_t)content_length);
	if (s->ctl->first_byte)
		s->ctl->first_byte(s, r, content_length >= 0 ?
				   (uint64_t)content_length : q->est_size, now);
	rs_check(s, "rs_on_first_byte");
	return 0;
}

/* rs_on_bytes() for everything but the common case: errors, the end of a
 * measurement interval (the tick comes before the bytes are counted), and
 * every byte event while long transfers are on (pacing). */
static __attribute__((noinline)) int on_bytes_slow(struct rs_sched *s,
		rs_id id, uint64_t n, rs_time_ns now)
{
	uint32_t r;
	int err;

	if ((err = released_entry(s, id, &r)))
		return err;
	rs_advance(s, now);
	rs_req_bytes(s, r, n, now);
	rs_check(s, "rs_on_bytes");
	return 0;
}

/* The common case - a live released request, inside the current
 * measurement interval, long transfers off - is tested in one go and calls
 * nothing, so the most frequent event needs no stack frame. fast_until is
 * next_tick, or 0 before the first time and while long transfers are on
 * (window.c). (uint32_t)id - 1 wraps for a low half of 0 and then fails
 * the nreq test. */
int rs_on_bytes(struct rs_sched *s, rs_id id, uint64_t n, rs_time_ns now)
{
	uint32_t r = (uint32_t)id - 1;

	if (__builtin_expect(s && !s->in_callback && r < s->nreq &&
			     s->req[r].state == RS_ST_RELEASED &&
			     s->req[r].gen == (uint32_t)(id >> 32) &&
			     now < s->fast_until, 1)) {
		rs_req_count(s, r, n, now);
		rs_check(s, "rs_on_bytes");
		return 0;
	}
	return on_bytes_slow(s, id, n, now);
}

int rs_on_link_done(struct rs_sched *s, rs_id id, rs_time_ns now)
{
	uint32_t r;
	int err;

	if ((err = released_entry(s, id, &r)))
		return err;
	if (s->req[r].flags & RS_RF_LONG)
		return 0;	/* already out of the window */
	rs_advance(s, now);
	rs_window_hand_on(s, r, now);
	rs_check(s, "rs_on_link_done");
	return 0;
}

int rs_on_end(struct rs_sched *s, rs_id id, bool aborted, rs_time_ns now)
{
	struct rs_req *q;
	struct rs_class *k;
	double rate = 0, delay = -1;
	uint32_t r;
	int err;

	if ((err = released_entry(s, id, &r)))
		return err;
	rs_advance(s, now);
	q = &s->req[r];
	k = &s->cls[q->cls];
	size_known(s, r, q->bytes);
	if (q->flags & RS_RF_FIRST_BYTE) {
		if (q->t_first >= q->t_rel)
			delay = (double)(q->t_first - q->t_rel);
		if (now > q->t_first && q->bytes > 0)
			rate = (double)q->bytes * RS_NSEC_PER_SEC /
			       (double)(now - q->t_first);
	}
	if (!aborted && rs_est_read(s))
		rs_est_learn(&s->est, q, true, rate, delay);
	if (q->flags & RS_RF_LONG) {
		s->nlong--;	/* already out of the window */
	} else {
		if (s->ss)
			rs_slow_start_step(s);
		rs_window_close(s, r, now);
	}
	s->t_active = now;
	k->outstanding--;
	k->ended++;
	s->ended++;
	if (aborted) {
		k->aborted++;
		s->aborted++;
	}
	if (s->ctl->ended)
		s->ctl->ended(s, r, now);
	if (q->flags & RS_RF_HOLDS_RES)
		rs_res_give(s, r);
	rs_users_put(s, q->user, now);
	req_release_slot(s, r);
	rs_try_release(s, now);
	rs_check(s, "rs_on_end");
	return 0;
}

int rs_on_foreign_bytes(struct rs_sched *s, int cls, uint64_t user,
			uint64_t n, rs_time_ns now)
{
	CHECK_ENTRY(s);
	if (cls < 0 || (uint32_t)cls >= s->ncls)
		return RS_ENOCLASS;
	rs_advance(s, now);
	rs_foreign_bytes(s, (uint32_t)cls, user, n, 0, now);
	rs_check(s, "rs_on_foreign_bytes");
	return 0;
}

rs_time_ns rs_next_deadline(const struct rs_sched *s)
{
	rs_time_ns t = UINT64_MAX, ctl;

	if (!s)
		return UINT64_MAX;
	if (s->release_due)
		return s->t_tick;	/* already passed */
	if (s->started)
		t = s->next_tick;
	ctl = s->ctl->deadline ? s->ctl->deadline(s) : UINT64_MAX;
	if (ctl < t)
		t = ctl;
	ctl = rs_part_slot_deadline(s);
	if (ctl < t)
		t = ctl;
	ctl = rs_pacer_deadline(s);
	return ctl < t ? ctl : t;
}

void rs_on_timer(struct rs_sched *s, rs_time_ns now)
{
	if (!s || s->in_callback)
		return;
	rs_advance(s, now);
	rs_users_expire(s, now);
	rs_try_release(s, now);
	rs_pacer_timer(s, now);
	if (s->release_due)	/* the pacer's sample opened the window */
		rs_try_release(s, now);
	rs_check(s, "rs_on_timer");
}

size_t rs_expire(struct rs_sched *s, rs_time_ns now, rs_time_ns max_wait,
		 rs_id *ids, void **cookies, size_t n)
{
	size_t done = 0;

	if (!s || s->in_callback)
		return 0;
	rs_advance(s, now);
	while (done < n && s->ghead != RS_NIL) {
		uint32_t r = s->ghead;

		if (!rs_hand_out_if_old(s, r, s->req[r].t_enq, now, max_wait,
					ids, cookies, done))
			break;
		s->cls[s->req[r].cls].expired++;
		s->expired++;
		drop_waiting(s, r, now);
		done++;
	}
	if (done)
		rs_try_release(s, now);
	rs_check(s, "rs_expire");
	return done;
}

size_t rs_reclaim(struct rs_sched *s, rs_time_ns now, rs_time_ns max_age,
		  rs_id *ids, void **cookies, size_t n)
{
	size_t done;

	if (!s || s->in_callback)
		return 0;
	rs_advance(s, now);
	done = rs_slots_reclaim(s, now, max_age, ids, cookies, n);
	if (done)
		rs_try_release(s, now);
	rs_check(s, "rs_reclaim");
	return done;
}

uint64_t rs_estimate_size(const struct rs_sched *s,
			  const struct rs_req_info *info)
{
	return s ? rs_est_size(&s->est, info, rs_est_read(s)) : 0;
}

int rs_reads_size_estimates(const struct rs_sched *s)
{
	return s && rs_est_read(s);
}

/* ---- statistics ---- */

void rs_get_stats(const struct rs_sched *s, struct rs_stats *st)
{
	if (!s || !st)
		return;
	memset(st, 0, sizeof(*st));
	st->W = s->W;
	st->W_max = s->ctl->window ? rs_window_limit(s) : (double)s->W;
	st->U = s->U;
	st->link_bps = s->cfg.link_bps;
	st->payload_per_wire = RS_WIRE_PAYLOAD_RATIO * s->frame_scale;
	st->link_share = s->link_share;
	st->queued = s->waiting;
	st->released = s->released;
	st->cancelled = s->cancelled;
	st->ended = s->ended;
	st->aborted = s->aborted;
	st->expired = s->expired;
	st->rejected = s->rejected;
	st->rejected_user = s->rejected_user;
	st->rejected_class = s->rejected_class;
	st->bytes = s->bytes;
	st->users = s->users.alive;
	st->link_source = s->link_src;
	st->link_bytes = s->st_link;
	st->proxied_bytes = s->st_proxied;
	st->exceptive_bytes = s->st_exc;
	st->interval_s = s->st_interval;
	st->pace_bps = s->cfg.pacing ? rs_full_rate(s) * 8 :
		       rs_link_Bps(s) * 8 * s->cfg.target_util;
	st->flows = s->pc.open;
	st->flows_waiting = s->pc.waiting;
	st->window_bytes = s->pc.window_bytes;
	st->long_transfers = s->nlong;
	st->reclaimed = s->reclaimed;
}

int rs_get_class_stats(const struct rs_sched *s, int cls,
		   struct rs_class_stats *st)
{
	const struct rs_class *k;

	if (!s || !st)
		return RS_EINVAL;
	if (cls < 0 || (uint32_t)cls >= s->ncls)
		return RS_ENOCLASS;
	k = &s->cls[cls];
	memset(st, 0, sizeof(*st));
	st->name = k->name;
	st->weight = k->weight;
	st->active_users = k->uc;
	st->queued = k->nq + k->pending;
	st->outstanding = k->outstanding;
	st->service = s->pol->service(s, (uint32_t)cls);
	st->bytes = k->bytes;
	st->foreign_bytes = k->foreign_bytes;
	st->released = k->released;
	st->cancelled = k->cancelled;
	st->ended = k->ended;
	st->aborted = k->aborted;
	st->expired = k->expired;
	st->rejected = k->rejected;
	st->throughput_bps = k->throughput_bps;
	st->flows = k->nflows;
	if (k->naccts && s->pc.wsum > 0) {
		double pace = s->cfg.pacing ? rs_full_rate(s) * 8 :
			      rs_link_Bps(s) * 8 * s->cfg.target_util;

		st->share_bps = pace * k->weight * k->naccts / s->pc.wsum;
	}
	return 0;
}
