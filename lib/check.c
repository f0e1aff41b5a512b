/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check.c - the core's invariants, checked after every public operation
 * in a debug build (-DRS_DEBUG; rs_check() is empty otherwise). A
 * violation prints the invariant's name and the operation and aborts.
 *
 *   binding      s->pol, s->ctl are the tables of cfg.policy, cfg.controller
 *   names        the name index maps every class's name (its own string)
 *                to the class's index and holds nothing else; load <= 1/2
 *   ticket       every request slot is in exactly one place for its state:
 *                FREE on the free list; QUEUED in its class's sub-queue;
 *                QUEUED, HELD, SCHEDULED on the global FIFO (= waiting);
 *                HELD is s->held; SCHEDULED in H_RELEASE; RELEASED in
 *                W or, as a long transfer or a reclaimed slot, in nlong
 *   window-list  the window list holds exactly the RELEASED requests in W,
 *                in release order (t_rel never decreases)
 *   class-count  nq, pending, outstanding, UC of each class match its
 *                requests and (class, user) entries; each entry's waiting
 *                is the number of its QUEUED, HELD, SCHEDULED requests;
 *                every entry with count 0 is once on the idle ring, which
 *                is in the order of idle_since
 *   policy       msf/rfq: a class is in the ready heap iff nq > 0, heaps
 *                ordered; drr, sqos: in the round iff nq > 0, rr_len
 *                right; mqos: on list j iff q[j] not empty, lens right,
 *                DCs finite, the kept order of the resources that of
 *                their availabilities; drf: in the heap iff nq > 0,
 *                keys current, heap ordered
 *   resources    used_i = the costs held by requests flagged as holding,
 *                per class too; used_i <= capacity_i + excess_i; a
 *                request holding resources is RELEASED
 *   window       1 <= W+ (<= max_window when adaptive, = N when fixed);
 *                W grows only while W < W+: W <= max(W before, ceil(W+))
 *   sc-monotone  msf/rfq: SC of a class that stays active in the same
 *                epoch never decreases
 *   bytes        every byte counted for the scheduler is counted for one
 *                class: bytes = sum of class bytes (+ classes removed by
 *                rs_reconfigure); foreign <= bytes for every class
 *   rtc          held bandwidth + free bandwidth = C U+ - exceptive; H_FT
 *                holds exactly the holders; heaps ordered
 *   pacer        tokens <= B; every WAITING flow in its account's FIFO
 *                once; waiting = sum nwait; the heap holds exactly the
 *                accounts with waiting flows, ordered by tag; granted list
 *                in grant order with grants > 0;
 *                open = sum of account flows = sum of class flows;
 *                window_bytes = sum of the clamps; per class nbacklog =
 *                its accounts with waiting flows, npresent = its present
 *                accounts; the recent list holds the recent accounts,
 *                oldest read first; kept shares: an account's share tokens
 *                <= 20 ms of C * max(U+, 0.05) (or 2 MSS), no recorded
 *                refill without the flag
 * Cost: O(requests + classes + users + flows) per operation.
 */
#ifdef RS_DEBUG
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void fail(const char *invariant, const char *op, const char *what)
{
	fprintf(stderr, "reqsched: RS_DEBUG: invariant \"%s\" violated after "
		"%s: %s\n", invariant, op, what);
	abort();
}

#define ASSERT(inv, cond)                                               \
	do {                                                            \
		if (!(cond))                                            \
			fail(inv, op, #cond);                           \
	} while (0)

static void check_names(const struct rs_sched *s, const char *op)
{
	const struct rs_names *t = &s->byname;
	uint32_t i, c, n = 0;

	for (i = 0; i < t->nslot; i++) {
		const struct rs_nslot *e = &t->slot[i];

		if (!e->name)
			continue;
		n++;
		ASSERT("names", e->idx < s->ncls && e->name == s->cls[e->idx].name);
	}
	ASSERT("names", n == t->n && n == s->ncls &&
	       (uint64_t)n * 2 <= t->nslot);
	for (c = 0; c < s->ncls; c++)
		ASSERT("names", rs_names_find(t, s->cls[c].name) == c);
}

/* Walk a list of request slots, marking each; returns its length. */
static uint32_t walk(const struct rs_sched *s, uint32_t head, size_t next,
		     uint8_t *seen, uint8_t mark, const char *op)
{
	uint32_t r, n = 0;

	for (r = head; r != RS_NIL; n++) {
		ASSERT("ticket", r < s->nreq && n <= s->nreq);
		ASSERT("ticket", !(seen[r] & mark));
		seen[r] |= mark;
		memcpy(&r, (const char *)&s->req[r] + next, sizeof(r));
	}
	return n;
}

enum { IN_FREE = 1, IN_SUBQ = 2, IN_FIFO = 4, IN_WIN = 8 };

static void check_tickets(const struct rs_sched *s, const char *op)
{
	uint8_t *seen = calloc(s->nreq ? s->nreq : 1, 1);
	uint32_t *cnt = calloc(s->ncls ? 4 * (size_t)s->ncls : 1, sizeof(*cnt));
	uint32_t r, c, nfree = 0, nwait = 0, nrel = 0, nlong = 0, nheld = 0;

	ASSERT("ticket", seen && cnt);
	walk(s, s->req_free, offsetof(struct rs_req, next), seen, IN_FREE, op);
	ASSERT("ticket", walk(s, s->ghead, offsetof(struct rs_req, gnext),
			      seen, IN_FIFO, op) == s->waiting);
	ASSERT("window-list", walk(s, s->whead, offsetof(struct rs_req, gnext),
				   seen, IN_WIN, op) == s->W);
	for (r = s->whead; r != RS_NIL && s->req[r].gnext != RS_NIL;
	     r = s->req[r].gnext)
		ASSERT("window-list", s->req[r].t_rel <=
		       s->req[s->req[r].gnext].t_rel);
	for (c = 0; c < s->ncls; c++) {
		const struct rs_class *k = &s->cls[c];
		int sub;

		uint32_t nq = 0;

		for (sub = 0; sub < RS_NSUBQ; sub++) {
			uint32_t n = walk(s, k->q[sub].head,
					  offsetof(struct rs_req, next), seen,
					  IN_SUBQ, op);

			ASSERT("ticket", n == k->q[sub].len);
			for (r = k->q[sub].head; r != RS_NIL; r = s->req[r].next)
				ASSERT("ticket", s->req[r].cls == c &&
				       s->req[r].sub == sub);
			nq += n;
		}
		ASSERT("class-count", k->nq == nq);
	}
	for (r = 0; r < s->nreq; r++) {
		const struct rs_req *q = &s->req[r];
		uint8_t where = seen[r];

		switch (q->state) {
		case RS_ST_FREE:
			nfree++;
			ASSERT("ticket", where == IN_FREE);
			continue;
		case RS_ST_QUEUED:
			ASSERT("ticket", where == (IN_SUBQ | IN_FIFO));
			nwait++;
			break;
		case RS_ST_HELD:
			ASSERT("ticket", where == IN_FIFO && s->held == r);
			nheld++;
			nwait++;
			cnt[4 * q->cls + 1]++;
			break;
		case RS_ST_SCHEDULED:
			ASSERT("ticket", where == IN_FIFO && s->rq &&
			       s->rq[r].hpos_rel < s->h_rel.n &&
			       s->h_rel.item[s->rq[r].hpos_rel] == r);
			nwait++;
			cnt[4 * q->cls + 1]++;
			break;
		case RS_ST_RELEASED:
			ASSERT("window-list", where ==
			       ((q->flags & RS_RF_LONG) ? 0 : IN_WIN));
			if (q->flags & RS_RF_LONG)
				nlong++;
			else
				nrel++;
			cnt[4 * q->cls + 2]++;
			break;
		default:
			ASSERT("ticket", !"a known state");
		}
		ASSERT("ticket", q->cls < s->ncls && q->user < s->users.nent &&
		       s->users.ent[q->user].cls == q->cls);
	}
	ASSERT("ticket", nwait == s->waiting && nrel == s->W &&
	       nlong == s->nlong && nheld == (s->held != RS_NIL));
	for (c = 0; c < s->ncls; c++)
		ASSERT("class-count", s->cls[c].pending == cnt[4 * c + 1] &&
		       s->cls[c].outstanding == cnt[4 * c + 2]);
	free(seen);
	free(cnt);
}

/* The idle ring (users.c): each entry on it once, with its idle flag, in
 * the order of idle_since; every entry of the index with count 0 on it. */
static void check_idle_ring(const struct rs_users *u, const char *op)
{
	uint32_t i, flagged = 0;

	ASSERT("class-count", u->nidle <= u->cap);
	for (i = 0; i < u->nidle; i++) {
		const struct rs_user *e = &u->ent[rs_users_idle_at(u, i)];

		ASSERT("class-count", e->idle);
		ASSERT("class-count", i == 0 || e->idle_since >=
		       u->ent[rs_users_idle_at(u, i - 1)].idle_since);
	}
	for (i = 0; i < u->nslot; i++) {
		const struct rs_user *e;

		if (!u->slot[i].idx1)
			continue;
		e = &u->ent[u->slot[i].idx1 - 1];
		flagged += e->idle;
		ASSERT("class-count", e->count > 0 || e->idle);
	}
	ASSERT("class-count", flagged == u->nidle);
}

/* UC of each class = its entries with requests; counts = live requests;
 * each entry's waiting = its waiting requests. */
static void check_users(const struct rs_sched *s, const char *op)
{
	uint32_t *uc = calloc(s->ncls ? s->ncls : 1, sizeof(*uc));
	uint32_t *wait = calloc(s->users.nent ? s->users.nent : 1, sizeof(*wait));
	uint64_t refs = 0, live = 0;
	uint32_t i, c;

	ASSERT("class-count", uc && wait);
	for (i = 0; i < s->nreq; i++) {
		const struct rs_req *q = &s->req[i];

		live += q->state != RS_ST_FREE;
		if (q->state != RS_ST_FREE && q->state != RS_ST_RELEASED)
			wait[q->user]++;
	}
	for (i = 0; i < s->users.nent; i++) {
		const struct rs_user *e = &s->users.ent[i];

		refs += e->count;
		if (e->count)
			uc[e->cls]++;
		ASSERT("class-count", e->waiting <= e->count &&
		       (e->count == 0 || e->waiting == wait[i]));
	}
	free(wait);
	check_idle_ring(&s->users, op);
	ASSERT("class-count", refs == live);
	for (c = 0; c < s->ncls; c++)
		ASSERT("class-count", s->cls[c].uc == uc[c]);
	free(uc);
}

static bool kent_less(const struct rs_kent *a, const struct rs_kent *b,
		      bool ready)
{
	if (a->sc != b->sc)
		return a->sc < b->sc;
	if (ready && a->wuc != b->wuc)
		return a->wuc > b->wuc;
	return a->c < b->c;
}

static void check_mqos(const struct rs_sched *s, const char *op)
{
	unsigned j, seen = 0;
	uint32_t c, n;

	/* the kept order, while no availability changed, is the order of
	 * the availabilities now: most available first, ties lower first */
	for (j = 0; s->mq_order_gen == s->res_gen && j < s->cfg.nres; j++) {
		unsigned i = s->mq_order[j], p = j ? s->mq_order[j - 1] : 0;

		ASSERT("policy", i < s->cfg.nres && !(seen & (1u << i)));
		seen |= 1u << i;
		ASSERT("policy", !j || rs_res_avail(s, p) > rs_res_avail(s, i) ||
		       (rs_res_avail(s, p) == rs_res_avail(s, i) && p < i));
	}
	for (j = 0; j < RS_MAX_RESOURCES; j++) {
		n = 0;
		for (c = s->mq[j].head; c != RS_NIL; c = s->cres[c].mq[j].next, n++)
			ASSERT("policy", n < s->ncls && s->cls[c].q[j].len > 0);
		ASSERT("policy", n == s->mq[j].len);
		for (c = 0, n = 0; c < s->ncls; c++) {
			n += s->cls[c].q[j].len > 0;
			ASSERT("policy", isfinite(s->cres[c].mq[j].dc));
		}
		ASSERT("policy", n == s->mq[j].len);
	}
}

static void check_drf(const struct rs_sched *s, const char *op)
{
	uint32_t c, i;

	for (c = 0; c < s->ncls; c++) {
		const struct rs_cres *k = &s->cres[c];

		ASSERT("policy", (k->hpos_drf != RS_NIL) == (s->cls[c].nq > 0));
		ASSERT("policy", k->hpos_drf == RS_NIL ||
		       (k->hpos_drf < s->drf.n && s->drf.ent[k->hpos_drf].c == c &&
			s->drf.ent[k->hpos_drf].sc == k->drf_used));
	}
	for (i = 1; i < s->drf.n; i++)
		ASSERT("policy", kent_less(&s->drf.ent[(i - 1) / 2],
					   &s->drf.ent[i], false));
}

static void check_resources(const struct rs_sched *s, const char *op)
{
	uint64_t used[RS_MAX_RESOURCES] = { 0 };
	uint64_t *held = calloc(s->ncls ? (size_t)s->ncls * RS_MAX_RESOURCES : 1,
				sizeof(*held));
	uint32_t r, c;
	unsigned i;

	ASSERT("resources", held);
	for (r = 0; r < s->nreq; r++) {
		const struct rs_req *q = &s->req[r];

		if (!(q->flags & RS_RF_HOLDS_RES))
			continue;
		ASSERT("resources", q->state == RS_ST_RELEASED && s->cost);
		for (i = 0; i < RS_MAX_RESOURCES; i++) {
			used[i] += s->cost[r][i];
			held[(size_t)q->cls * RS_MAX_RESOURCES + i] += s->cost[r][i];
		}
	}
	for (i = 0; i < RS_MAX_RESOURCES; i++) {
		uint64_t cap = i < s->cfg.nres ? s->cfg.res_capacity[i] : 0;

		ASSERT("resources", used[i] == s->res_used[i]);
		ASSERT("resources", s->res_used[i] <= cap + s->res_excess[i]);
		for (c = 0; c < s->ncls; c++)
			ASSERT("resources", s->cres[c].held[i] ==
			       held[(size_t)c * RS_MAX_RESOURCES + i]);
	}
	free(held);
	/* a waiting request that costs nothing of resource i has bit i of
	 * res_free_for (rs_resv_blocks_all() relies on it) */
	for (r = s->ghead; s->cost && r != RS_NIL; r = s->req[r].gnext)
		for (i = 0; i < RS_MAX_RESOURCES; i++)
			ASSERT("resources", s->cost[r][i] ||
			       (s->res_free_for & (1u << i)));
	/* reservation.c: the reserved request is a queued one */
	ASSERT("resources", s->resv == RS_NIL ||
	       (s->resv < s->nreq && s->req[s->resv].state == RS_ST_QUEUED));
	/* when rs_resv_blocks_all() says so, no waiting request fits beside
	 * the reserved one: the look-ahead it stops would have found none */
	if (!s->cost || !rs_resv_blocks_all(s))
		return;
	for (r = s->ghead; r != RS_NIL; r = s->req[r].gnext)
		ASSERT("resources", r == s->resv ||
		       !rs_resv_fits_beside(s, s->resv, r));
}

static void check_policy(struct rs_sched *s, const char *op, bool renewed)
{
	uint32_t c, i, n = 0;

	if (s->pol == &rs_mqos_ops) {
		check_mqos(s, op);
		return;
	}
	if (s->pol == &rs_drf_ops) {
		check_drf(s, op);
		return;
	}
	if (!s->pol->service_counter) {
		for (c = s->rr_head; c != RS_NIL; c = s->cls[c].rr_next, n++)
			ASSERT("policy", n < s->ncls && s->cls[c].in_round);
		ASSERT("policy", n == s->rr_len);
		for (c = 0; c < s->ncls; c++)
			ASSERT("policy", s->cls[c].in_round == (s->cls[c].nq > 0));
		return;
	}
	for (i = 1; i < s->ready.n; i++)
		ASSERT("policy", !kent_less(&s->ready.ent[i],
					    &s->ready.ent[(i - 1) / 2], true));
	for (i = 1; i < s->active.n; i++)
		ASSERT("policy", !kent_less(&s->active.ent[i],
					    &s->active.ent[(i - 1) / 2], false));
	for (c = 0; c < s->ncls; c++) {
		struct rs_class *k = &s->cls[c];
		uint32_t pos = k->hpos_ready;
		double sc = rs_sc_value(s, c);
		bool active = k->uc > 0;

		ASSERT("policy", (pos != RS_NIL) == (k->nq > 0));
		ASSERT("policy", pos == RS_NIL ||
		       (pos < s->ready.n && s->ready.ent[pos].c == c));
		if (!renewed && active && k->dbg_active &&
		    k->dbg_epoch == s->sc_epoch)
			ASSERT("sc-monotone", sc >= k->dbg_sc);
		k->dbg_sc = sc;
		k->dbg_epoch = s->sc_epoch;
		k->dbg_active = active;
	}
}

static void check_window(struct rs_sched *s, const char *op)
{
	const struct rs_controller_ops *ctl = s->ctl;

	ASSERT("share", s->link_share > 0 && s->link_share <= 1);
	/* C's frame scale (link.c): within [0.5, 1], 1 on the proxy's bytes */
	ASSERT("link", s->frame_scale >= 0.5 && s->frame_scale <= 1);
	ASSERT("link", s->link_src == RS_LINK_COUNTER || s->frame_scale == 1);
	if (ctl->window) {
		ASSERT("window", s->Wmax >= 1);
		ASSERT("window", !ctl->window_from_config ||
		       s->Wmax == rs_fixed_window(s));
		ASSERT("window", !ctl->adaptive || s->cfg.max_window < 1 ||
		       s->Wmax <= s->cfg.max_window);
		ASSERT("window", s->W <= s->dbg.W ||
		       s->W <= ceil(rs_window_limit(s)));
		/* the part slot's credit (window.c) */
		ASSERT("window",
		       fabs(s->part_credit) <= RS_PART_CREDIT_S + 1e-9);
	}
	s->dbg.W = s->W;
}

static void check_bytes(struct rs_sched *s, const char *op, bool renewed)
{
	uint64_t sum = 0;
	uint32_t c;

	for (c = 0; c < s->ncls; c++) {
		ASSERT("bytes", s->cls[c].foreign_bytes <= s->cls[c].bytes);
		sum += s->cls[c].bytes;
	}
	if (renewed)	/* the bytes of removed classes stay in s->bytes */
		s->dbg.bytes_gone = s->bytes - sum;
	ASSERT("bytes", s->bytes == sum + s->dbg.bytes_gone);
}

static bool heap_ordered(const struct rs_sched *s, const struct rs_heap *h,
			 bool by_ft)
{
	uint32_t i;

	for (i = 1; i < h->n; i++) {
		uint32_t a = h->item[i], b = h->item[(i - 1) / 2];
		rs_time_ns ka = by_ft ? s->rq[a].ft : s->req[a].t_rel;
		rs_time_ns kb = by_ft ? s->rq[b].ft : s->req[b].t_rel;

		if (ka < kb || (ka == kb && a < b))
			return false;
	}
	return true;
}

static void check_rtc(const struct rs_sched *s, const char *op)
{
	double held = 0, full = rs_full_rate(s);
	uint32_t r, holders = 0;

	if (s->ctl != &rs_rtc_ops)
		return;
	for (r = 0; r < s->nreq; r++) {
		if (s->req[r].state == RS_ST_FREE ||
		    !(s->req[r].flags & RS_RF_HOLDS_BW))
			continue;
		holders++;
		held += s->rq[r].bw;
		ASSERT("rtc", s->rq[r].hpos_ft < s->h_ft.n &&
		       s->h_ft.item[s->rq[r].hpos_ft] == r);
	}
	ASSERT("rtc", holders == s->bw_holders && s->h_ft.n == holders);
	ASSERT("rtc", fabs(held + s->bw_avail - full) <= 1e-6 * full);
	ASSERT("rtc", heap_ordered(s, &s->h_ft, true) &&
	       heap_ordered(s, &s->h_rel, false));
}

/* The pacer's per class backlogged and present accounts. */
static void check_presence(const struct rs_sched *s, const char *op)
{
	const struct rs_pacer *p = &s->pc;
	uint32_t *cnt = calloc(s->ncls ? 2 * (size_t)s->ncls : 1, sizeof(*cnt));
	uint32_t a, n, c, recent = 0;
	rs_time_ns last = 0;

	ASSERT("pacer", cnt);
	for (a = p->rc_head, n = 0; a != RS_NIL; a = p->ac[a].rnext, n++) {
		ASSERT("pacer", n < p->nac && p->ac[a].recent &&
		       p->ac[a].nflows && p->ac[a].t_read >= last);
		last = p->ac[a].t_read;
	}
	for (a = 0; a < p->nac; a++) {
		const struct rs_acct *e = &p->ac[a];

		if (!e->nflows)
			continue;
		recent += e->recent;
		cnt[2 * e->cls] += e->nwait > 0;
		cnt[2 * e->cls + 1] += e->nreq > 0 || e->recent;
	}
	ASSERT("pacer", recent == n);
	for (c = 0; c < s->ncls; c++)
		ASSERT("pacer", s->cls[c].nbacklog == cnt[2 * c] &&
		       s->cls[c].npresent == cnt[2 * c + 1]);
	free(cnt);
}

static void check_pacer(const struct rs_sched *s, const char *op)
{
	const struct rs_pacer *p = &s->pc;
	uint32_t a, f, n, waiting = 0, flows = 0, cflows = 0;
	uint64_t clamps = 0;
	rs_time_ns last = 0;
	/* kept shares: S_a <= R <= C * max(U+, 0.05), 20 ms of it */
	double share_max = fmax(2 * RS_MSS, (double)s->cfg.link_bps / 8 *
				fmax(s->cfg.target_util, 0.05) * 0.02);

	ASSERT("pacer", p->tokens <=
	       rs_pacer_burst(rs_pace_rate(s)) + 1e-6);
	ASSERT("pacer", p->act.n <= p->nac);
	for (n = 0; n < p->act.n; n++) {
		const struct rs_acct *e = &p->ac[p->act.item[n]];
		uint32_t k = 0;

		a = p->act.item[n];
		ASSERT("pacer", e->hpos == n && e->nflows && e->nwait &&
		       isfinite(e->tag));
		if (n) {	/* no child before its parent */
			uint32_t up = p->act.item[(n - 1) / 2];

			ASSERT("pacer", p->ac[up].tag < e->tag ||
			       (p->ac[up].tag == e->tag && up < a));
		}
		for (f = e->head; f != RS_NIL; f = p->fl[f].next, k++)
			ASSERT("pacer", k < p->nfl &&
			       p->fl[f].state == RS_FL_WAITING &&
			       p->fl[f].acct == a);
		ASSERT("pacer", k == e->nwait);
		waiting += k;
	}
	ASSERT("pacer", waiting == p->waiting);
	ASSERT("pacer", s->cfg.pace_keep_share || s->gate.tat ||
	       !p->share_refill);
	ASSERT("pacer", !s->gate.tat || s->gate.ncls == s->ncls);
	for (a = 0; a < p->nac; a++) {
		const struct rs_acct *e = &p->ac[a];

		flows += e->nflows;
		ASSERT("pacer", !e->nflows ||
		       (e->nwait > 0) == (e->hpos != RS_NIL));
		ASSERT("pacer", !e->nflows || !s->cfg.pace_keep_share ||
		       e->share_tokens <= share_max + 1e-6);
	}
	for (f = p->gr_head, n = 0; f != RS_NIL; f = p->fl[f].next, n++) {
		ASSERT("pacer", n < p->nfl && p->fl[f].state == RS_FL_GRANTED &&
		       p->fl[f].grant > 0 && p->fl[f].t_grant >= last);
		last = p->fl[f].t_grant;
	}
	for (f = 0, n = 0; f < p->nfl; f++) {
		if (p->fl[f].state == RS_FL_FREE)
			continue;
		n++;
		clamps += p->fl[f].clamp;
	}
	for (a = 0; a < s->ncls; a++)
		cflows += s->cls[a].nflows;
	ASSERT("pacer", n == p->open && flows == p->open && cflows == p->open);
	ASSERT("pacer", clamps == p->window_bytes);
	check_presence(s, op);
}

void rs_check(struct rs_sched *s, const char *op)
{
	bool renewed = strcmp(op, "rs_reconfigure") == 0 ||
		       strcmp(op, "rs_new") == 0;

	ASSERT("binding", s->pol == rs_policy_ops_of(s->cfg.policy) &&
	       s->ctl == rs_controller_ops_of(s->cfg.controller));
	check_names(s, op);
	check_tickets(s, op);
	check_users(s, op);
	check_policy(s, op, renewed);
	check_window(s, op);
	check_bytes(s, op, renewed);
	check_resources(s, op);
	check_rtc(s, op);
	check_pacer(s, op);
}
#endif /* RS_DEBUG */
