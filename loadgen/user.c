/* SPDX-License-Identifier: GPL-2.0-or-later */
/* user.c - the users of a run, as sessions.SessionLoad and
 * logreplay.LogReplay run them. A session user: at START it takes the
 * first free address of its class (none: waits for one, or an arrival is
 * refused), then loads its pages: the main object on connection slot 0,
 * then the embedded objects over up to the class's CONNECTIONS keep-alive
 * connections, each taking the next object when free; it thinks THINK s
 * before a page; a new SESSION starts on new connections; once told to
 * leave (LEAVE) it finishes its page and leaves. A replay user sends its
 * logged requests from its own address, each when due (open loop, at most
 * CONNS at once) or after the previous one and its think time (closed).
 * Invariant: u->active counts the user's transactions in flight; a page
 * ends when its last object's does. */
#include <stdlib.h>
#include <string.h>

#include "loadc.h"

#define QUEUE_LOW 4               /* ask for more pages below this many */

static void replay_next(struct user *u);
static void replay_send(struct user *u);

/* -- pages ---------------------------------------------------------------- */
static void fetch(struct user *u, int slot, struct obj *o, char role)
{
	struct conn *c = u->slot[slot];
	long i = R.nrecs++;
	struct rec *t;

	R.recs = grow(R.recs, &R.crecs, R.nrecs, sizeof(*R.recs));
	t = &R.recs[i];
	memset(t, 0, sizeof(*t));
	t->u = u;
	t->url = o->url;            /* the record owns it; the obj borrows it */
	memcpy(t->method, o->method, sizeof(t->method));
	t->sched = t->start = now();
	t->first = t->end = -1;
	t->prec = u->prec;
	t->k = u->next_k++;
	t->role = role;
	u->active++;
	if (c && (c->peer_closed || !strcmp(o->method, "CONNECT"))) {
		t->retried = c->peer_closed;
		conn_close(c);      /* a tunnel takes a connection of its own */
		c = NULL;
	}
	if (c) {
		c->rec = i;
		c->o = o;
		c->tunnel = 0;
		t->conn = c->id;
		c->deadline = now() + R.timeout;
		busy_add(c);
		request(c);
		return;
	}
	c = conn_open(u, slot, i);
	c->o = o;
}

static void page_done(struct user *u)
{
	struct page *p = u->cur;

	R.precs[u->prec].end = now();
	for (struct obj *o = p->objs; o; o = o->next)
		o->url = NULL;      /* owned by the records */
	u->cur = NULL;
	free_page(p);
	u->st = U_WAIT_PLAN;
	next_page(u);
}

void fetch_done(struct user *u, int slot, long rec)
{
	const struct rec *t = &R.recs[rec];
	struct prec *p;

	if (u->mode != M_SESSIONS) {
		replay_next(u);
		return;
	}
	p = &R.precs[t->prec];
	p->objects++;
	p->bytes += t->bytes;
	p->errors += t->error != NULL;
	if (stopping || u->st != U_FETCH)
		return;
	if (t->role == 'm') {
		/* the embedded objects over up to CONNECTIONS slots */
		u->todo = u->cur->objs->next;
		for (int s = 0; s < u->nslots && u->todo; s++) {
			struct obj *o = u->todo;

			u->todo = o->next;
			fetch(u, s, o, 'e');
		}
	} else if (u->todo) {
		struct obj *o = u->todo;

		u->todo = o->next;
		fetch(u, slot, o, 'e');
	}
	if (!u->active)
		page_done(u);
}

static void start_page(struct user *u)
{
	struct page *p = u->cur;
	struct prec *r;

	R.precs = grow(R.precs, &R.cprecs, R.nprecs + 1, sizeof(*R.precs));
	u->prec = R.nprecs++;
	r = &R.precs[u->prec];
	r->pid = p->pid;
	p->pid = NULL;
	r->u = u;
	r->start = now();
	r->end = -1;
	r->objects = r->errors = 0;
	r->bytes = 0;
	u->st = U_FETCH;
	u->next_k = 0;
	u->todo = NULL;
	fetch(u, 0, p->objs, 'm');
}


void next_page(struct user *u)
{
	struct page *p;

	if (stopping || u->st == U_DONE)
		return;
	if (u->leave >= 0 && now() >= u->leave) {
		user_done(u);
		return;
	}
	if (!u->q) {
		if (u->ended || !plan_open)
			user_done(u);
		else
			ask(u);
		return;
	}
	p = u->q;
	u->q = p->next;
	if (!u->q)
		u->qtail = &u->q;
	u->qlen--;
	if (u->qlen < QUEUE_LOW)
		ask(u);
	if (p->session != u->session) {
		close_slots(u);
		u->next_conn = 0;
		u->session = p->session;
	}
	u->cur = p;
	if (p->think > 0) {
		u->st = U_THINK;
		u->wake++;
		timer_add(now() + p->think, u, T_THINK);
		return;
	}
	start_page(u);
}

/* -- replayed requests: a log's, per user in order (reqsched-load replay) -- */
/* a slot not in flight for a request: one with an idle connection (not for
 * a CONNECT, which takes a new one), else one without, else an idle one
 * (fetch() closes it for a CONNECT) */
static int free_slot(struct user *u, int connect)
{
	int empty = -1, idle = -1;

	for (int s = 0; s < u->nslots; s++) {
		if (!u->slot[s])
			empty = empty < 0 ? s : empty;
		else if (u->slot[s]->st == C_IDLE)
			idle = s;
	}
	if (!connect && idle >= 0)
		return idle;
	return empty >= 0 ? empty : idle;
}

/* the user's next request, now */
static void replay_send(struct user *u)
{
	struct obj *o = u->steps;

	u->steps = o->next;
	if (!u->steps)
		u->stail = &u->steps;
	u->st = U_FETCH;
	u->prec = -1;
	u->next_k = ++u->nsteps;
	fetch(u, u->mode == M_CLOSED ? 0 : free_slot(u, !strcmp(o->method, "CONNECT")), o, 0);
	if (u->mode == M_OPEN)
		R.recs[R.nrecs - 1].sched = o->at;
}

/* open: send what is due while a connection is free, wake up for the next;
 * closed: the next request after its think time; done after the last */
static void replay_next(struct user *u)
{
	if (stopping || u->st == U_DONE)
		return;
	if (!u->steps) {
		if (!u->active)
			user_done(u);
		return;
	}
	if (u->mode == M_CLOSED) {
		if (u->active)
			return;
		if (u->nsteps && u->steps->think > 0) {
			u->st = U_THINK;
			u->wake++;
			timer_add(now() + u->steps->think, u, T_THINK);
			return;
		}
		replay_send(u);
		return;
	}
	while (u->steps && u->steps->at <= now() && u->active < u->nslots)
		replay_send(u);
	if (u->steps && u->steps->at > now()) {
		u->st = U_THINK;
		u->wake++;
		timer_add(u->steps->at, u, T_THINK);
	}
}

/* -- users arriving and leaving ------------------------------------------- */
void span_add(struct klass *k, double since, double until)
{
	R.spans = grow(R.spans, &R.cspans, R.nspans + 1, sizeof(*R.spans));
	R.spans[R.nspans++] = (struct span){ k, since, until };
}

static void enter(struct user *u)
{
	u->k->active++;
	u->since = now();
	R.started = grow(R.started, &R.cstarted, R.nstarted + 1, sizeof(*R.started));
	R.started[R.nstarted++] = u;
}

static void user_start(struct user *u)
{
	struct klass *k = u->k;

	if (u->mode != M_SESSIONS) {
		enter(u);
		replay_next(u);
		return;
	}
	if (!k->nfree) {
		if (u->arrival) {
			R.refused++;
			u->st = U_DONE;
			ndone_users++;
			return;
		}
		u->st = U_PENDING;
		u->pnext = NULL;
		*k->ptail = u;
		k->ptail = &u->pnext;
		if (++k->npending > R.no_address)
			R.no_address = k->npending;
		return;
	}
	u->addr = k->pool[k->head];
	u->a = k->addrs[u->addr];
	k->head = (k->head + 1) % k->naddr;
	k->nfree--;
	enter(u);
	u->st = U_WAIT_PLAN;
	next_page(u);
}

static void unpend(struct user *u)
{
	struct klass *k = u->k;
	struct user **pp = &k->pending;

	while (*pp != u)
		pp = &(*pp)->pnext;
	*pp = u->pnext;
	if (k->ptail == &u->pnext)
		k->ptail = pp;
	k->npending--;
}

void user_done(struct user *u)
{
	struct klass *k = u->k;
	enum ustate was = u->st;

	if (was == U_DONE)
		return;
	u->st = U_DONE;
	ndone_users++;
	if (was == U_PENDING)
		unpend(u);
	if (was == U_PENDING || was == U_WAIT_START)
		return;
	close_slots(u);
	if (u->cur)
		free_page(u->cur);
	u->cur = NULL;
	while (u->q) {
		struct page *p = u->q;

		u->q = p->next;
		free_page(p);
	}
	u->qtail = &u->q;
	span_add(k, u->since, now());
	k->active--;
	if (u->mode != M_SESSIONS)
		return;
	k->pool[(k->head + k->nfree) % k->naddr] = u->addr;
	k->nfree++;
	/* the address goes to the first user waiting for one */
	while (k->pending && k->nfree) {
		struct user *v = k->pending;

		unpend(v);
		if (v->leave >= 0 && now() >= v->leave) {
			v->st = U_DONE;
			ndone_users++;
		} else {
			user_start(v);
		}
	}
}

void on_timer(struct timer t)
{
	struct user *u = t.u;

	switch (t.kind) {
	case T_START:
		if (u->st == U_WAIT_START)
			user_start(u);
		break;
	case T_THINK:
		if (u->st != U_THINK || t.wake != u->wake)
			break;
		if (u->mode == M_SESSIONS)
			start_page(u);
		else if (u->mode == M_CLOSED)
			replay_send(u);
		else
			replay_next(u);
		break;
	case T_LEAVE:
		/* a user loading a page finishes it (next_page()) */
		if (u->st != U_FETCH)
			user_done(u);
		break;
	}
}
