/* SPDX-License-Identifier: GPL-2.0-or-later */
/* loadc.c - reqsched-loadc, the hot path of reqsched-load sessions
 * --engine c (doc/testbed.md "Load"): it reads the plan (plan.h) on stdin,
 * runs its users' pages through the proxy as loadengine.py and sessions.py
 * do, and writes the records (out.c). On stdout: "more USER" when a user's
 * queue of pages runs low, "progress {json}" every --progress-s.
 *
 * A user: at START it takes the first free address of its class (none:
 * waits for one, or an arrival is refused), then loads its pages: the main
 * object on connection slot 0, then the embedded objects over up to the
 * class's CONNECTIONS keep-alive connections, each taking the next object
 * when free; it thinks THINK s before a page; a new SESSION starts on new
 * connections; once told to leave (LEAVE) it finishes its page and leaves.
 * Every transaction is bounded by --timeout; errors are recorded, never
 * fatal; a reused connection that fails before any byte of the answer is
 * retried once on a new one. SIGINT/SIGTERM or --duration stop the run:
 * transactions in flight are cut ("cancelled at end of run"). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "loadc.h"

#define QUEUE_LOW 4               /* ask for more pages below this many */
#define TICK_S 0.1                /* timeout sweep */
#define MAX_EVENTS 256
#define TAG_PLAN ((void *)1)
#define TAG_OUT ((void *)2)
#define TAG_SIG ((void *)3)

enum tkind { T_START, T_THINK, T_LEAVE };

struct timer {
	double when;
	struct user *u;
	unsigned wake;
	enum tkind kind;
};

static struct run R;
static int ep, plan_open = 1, clock_on, stopping;
static struct sockaddr_in proxy;
static double progress_s = 5;
static struct timer *heap;
static long nheap, cheap;
static struct user **users;       /* hash table by id */
static long nusers, nbuckets, ndone_users;
static struct conn *busy;
static struct page *plan_page;    /* the page obj lines go to */
static long lineno;
static char *obuf;                /* stdout not yet written */
static size_t olen, ocap;
static unsigned out_events;
static char rbuf[262144];
static struct conn **failed, *graveyard;  /* connect failures to report; closed, to free */
static long nfailed, cfailed;
static char pblock[65536];        /* request body bytes: 'p's, as loadengine sends */

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p) {
		fputs("reqsched-loadc: out of memory\n", stderr);
		exit(2);
	}
	return p;
}

static void *grow(void *p, long *cap, long need, size_t size)
{
	if (need <= *cap)
		return p;
	*cap = *cap ? *cap * 2 : 64;
	if (*cap < need)
		*cap = need;
	p = realloc(p, (size_t)*cap * size);
	if (!p) {
		fputs("reqsched-loadc: out of memory\n", stderr);
		exit(2);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d) {
		fputs("reqsched-loadc: out of memory\n", stderr);
		exit(2);
	}
	return d;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_on ? mono() - R.t0 : 0;
}

static void plan_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "reqsched-loadc: plan line %ld: ", lineno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* -- stdout: "more" and "progress" lines, never blocking the loop -------- */
static void out_events_set(unsigned ev)
{
	struct epoll_event e = { .events = ev, .data.ptr = TAG_OUT };

	if (ev != out_events && !epoll_ctl(ep, EPOLL_CTL_MOD, 1, &e))
		out_events = ev;
}

static void out_flush(void)
{
	while (olen) {
		ssize_t n = write(1, obuf, olen);

		if (n < 0) {
			if (errno == EAGAIN)
				break;
			olen = 0;           /* the reader is gone: nothing to tell */
			break;
		}
		memmove(obuf, obuf + n, olen - (size_t)n);
		olen -= (size_t)n;
	}
	out_events_set(olen ? EPOLLOUT : 0);
}

static void out_printf(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (olen + (size_t)n + 1 > ocap) {
		ocap = (olen + (size_t)n + 1) * 2;
		obuf = realloc(obuf, ocap);
		if (!obuf)
			exit(2);
	}
	va_start(ap, fmt);
	vsnprintf(obuf + olen, (size_t)n + 1, fmt, ap);
	va_end(ap);
	olen += (size_t)n;
}

/* -- timers: a min-heap; a think timer is valid while its wake matches --- */
static void heap_swap(long a, long b)
{
	struct timer t = heap[a];

	heap[a] = heap[b];
	heap[b] = t;
}

static void timer_add(double when, struct user *u, enum tkind kind)
{
	long i = nheap++;

	heap = grow(heap, &cheap, nheap, sizeof(*heap));
	heap[i] = (struct timer){ when, u, u->wake, kind };
	while (i && heap[(i - 1) / 2].when > heap[i].when) {
		heap_swap(i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static struct timer timer_pop(void)
{
	struct timer t = heap[0];
	long i = 0;

	heap[0] = heap[--nheap];
	for (;;) {
		long l = 2 * i + 1, m = i;

		if (l < nheap && heap[l].when < heap[m].when)
			m = l;
		if (l + 1 < nheap && heap[l + 1].when < heap[m].when)
			m = l + 1;
		if (m == i)
			break;
		heap_swap(i, m);
		i = m;
	}
	return t;
}

/* -- classes and users ---------------------------------------------------- */
static struct klass *class_of(const char *name)
{
	for (int i = 0; i < R.nclasses; i++)
		if (!strcmp(R.classes[i].name, name))
			return &R.classes[i];
	return NULL;
}

static unsigned long hash(const char *s)
{
	unsigned long h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

static struct user *user_of(const char *id)
{
	struct user *u;

	if (!nbuckets)
		return NULL;
	for (u = users[hash(id) & (nbuckets - 1)]; u; u = u->hnext)
		if (!strcmp(u->id, id))
			return u;
	return NULL;
}

static void user_insert(struct user *u)
{
	if (nusers + 1 > nbuckets) {
		long n = nbuckets ? nbuckets * 2 : 1024;
		struct user **t = xmalloc((size_t)n * sizeof(*t));

		for (long i = 0; i < nbuckets; i++)
			while (users[i]) {
				struct user *v = users[i];

				users[i] = v->hnext;
				v->hnext = t[hash(v->id) & (n - 1)];
				t[hash(v->id) & (n - 1)] = v;
			}
		free(users);
		users = t;
		nbuckets = n;
	}
	u->hnext = users[hash(u->id) & (nbuckets - 1)];
	users[hash(u->id) & (nbuckets - 1)] = u;
	nusers++;
}

static void free_page(struct page *p)
{
	while (p->objs) {
		struct obj *o = p->objs;

		p->objs = o->next;
		free(o->url);
		free(o);
	}
	free(p->pid);
	free(p);
}

static void ask(struct user *u)
{
	if (u->ended || u->asked || !plan_open)
		return;
	u->asked = 1;
	out_printf("more %s\n", u->id);
	out_flush();
}

/* -- connections ---------------------------------------------------------- */
static void conn_events(struct conn *c, unsigned ev)
{
	struct epoll_event e = { .events = ev, .data.ptr = c };

	if (ev != c->events) {
		epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
		c->events = ev;
	}
}

static void busy_add(struct conn *c)
{
	c->bprev = NULL;
	c->bnext = busy;
	if (busy)
		busy->bprev = c;
	busy = c;
}

static void busy_del(struct conn *c)
{
	if (c->bprev)
		c->bprev->bnext = c->bnext;
	else
		busy = c->bnext;
	if (c->bnext)
		c->bnext->bprev = c->bprev;
	c->bnext = c->bprev = NULL;
}

static void conn_close(struct conn *c)
{
	if (c->st != C_IDLE)
		busy_del(c);
	if (c->u->slot[c->slot] == c)
		c->u->slot[c->slot] = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;                 /* events already fetched for it are skipped */
	c->bnext = graveyard;
	graveyard = c;
}

static void bury(void)
{
	while (graveyard) {
		struct conn *c = graveyard;

		graveyard = c->bnext;
		resp_free(&c->resp);
		free(c->wbuf);
		free(c);
	}
}

static void close_slots(struct user *u)
{
	for (int s = 0; s < u->nslots; s++)
		if (u->slot[s])
			conn_close(u->slot[s]);
}

static void request(struct conn *c);
static void fetch_done(struct user *u, int slot, long rec);
static void next_page(struct user *u);
static void replay_next(struct user *u);

/* A new connection in c's user's slot for record rec (its number: the
 * session's next). Returns it, or NULL with the record's error set. */
static struct conn *conn_open(struct user *u, int slot, long rec)
{
	struct conn *c = xmalloc(sizeof(*c));
	struct sockaddr_in src = { .sin_family = AF_INET, .sin_addr = u->a };
	struct epoll_event e = { .events = EPOLLOUT, .data.ptr = c };
	int one = 1;

	c->u = u;
	c->slot = slot;
	c->rec = rec;
	c->id = ++u->next_conn;
	c->events = EPOLLOUT;
	c->st = C_CONNECTING;
	c->deadline = now() + R.timeout;
	u->slot[slot] = c;
	R.recs[rec].conn = c->id;
	busy_add(c);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		goto fail;
	setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (bind(c->fd, (struct sockaddr *)&src, sizeof(src)) ||
	    (connect(c->fd, (struct sockaddr *)&proxy, sizeof(proxy)) && errno != EINPROGRESS) ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &e))
		goto fail;
	return c;
fail:
	/* reported from the loop (conn_fail()), never from inside fetch() */
	c->err = errno ? errno : EIO;
	failed = grow(failed, &cfailed, nfailed + 1, sizeof(*failed));
	failed[nfailed++] = c;
	return c;
}

static void rec_error(struct rec *t, const char *what, int err)
{
	char buf[160];

	if (err) {
		snprintf(buf, sizeof(buf), "%s: %s", what, strerror(err));
		t->error = xstrdup(buf);
		t->err_owned = 1;
	} else {
		t->error = what;
	}
	R.nerrors++;
}

/* The transaction on c failed (err: errno, or 0 and what says). A reused
 * connection that ended before any byte of the answer (stale) gets the
 * request again, once, on a new connection. */
static void conn_fail(struct conn *c, const char *what, int err, int stale)
{
	struct user *u = c->u;
	int slot = c->slot, reused = c->reused;
	long rec = c->rec;
	struct rec *t = &R.recs[rec];
	struct obj *o = c->o;

	conn_close(c);
	if (reused && stale && t->first < 0 && !t->retried) {
		t->retried = 1;
		c = conn_open(u, slot, rec);
		c->o = o;
		return;
	}
	rec_error(t, what, err);
	t->end = now();
	R.ndone++;
	u->active--;
	fetch_done(u, slot, rec);
}

/* the request of c's object into c->wbuf */
static void build_request(struct conn *c)
{
	const struct obj *o = c->o;
	const struct rec *t = &R.recs[c->rec];
	const char *pid = t->prec >= 0 ? R.precs[t->prec].pid : c->u->id;
	const char *auth = o->auth ? o->auth : c->u->auth;
	char ma[48] = "", cl[48] = "", host[1024];
	const char *h = o->url + 7;
	size_t hl = strcspn(h, "/");
	int n;

	free(c->wbuf);
	if (o->max_age > 0)
		snprintf(ma, sizeof(ma), "X-Reqsched-Max-Age: %ld\r\n", o->max_age);
	if (c->tunnel == 1) {
		n = asprintf(&c->wbuf, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s%s%s"
			     "User-Agent: reqsched-load\r\nX-Replay-Id: %s.%d\r\n\r\n",
			     o->url, o->url, auth ? "Proxy-Authorization: Basic " : "",
			     auth ? auth : "", auth ? "\r\n" : "", pid, t->k);
	} else if (c->tunnel == 2) {
		n = asprintf(&c->wbuf, "GET /tunnel HTTP/1.1\r\nHost: %s\r\nX-Reqsched-Size: %ld\r\n"
			     "X-Reqsched-Status: %ld\r\n%sConnection: close\r\n\r\n",
			     o->url, o->size, o->status, ma);
	} else {
		if (hl >= sizeof(host))
			hl = sizeof(host) - 1;
		memcpy(host, h, hl);
		host[hl] = '\0';
		if (o->body || !strcmp(o->method, "POST"))
			snprintf(cl, sizeof(cl), "Content-Length: %ld\r\n", o->body);
		n = asprintf(&c->wbuf, "%s %s HTTP/1.1\r\nHost: %s\r\n%s%s%s"
			     "User-Agent: reqsched-load\r\nX-Replay-Id: %s.%d\r\nAccept: */*\r\n"
			     "X-Reqsched-Size: %ld\r\nX-Reqsched-Status: %ld\r\n%s%s\r\n",
			     o->method, o->url, host, auth ? "Proxy-Authorization: Basic " : "",
			     auth ? auth : "", auth ? "\r\n" : "", pid, t->k, o->size, o->status,
			     ma, cl);
	}
	if (n < 0) {
		fputs("reqsched-loadc: out of memory\n", stderr);
		exit(2);
	}
	c->wlen = (size_t)n;
	c->woff = 0;
	c->body_left = c->tunnel ? 0 : (uint64_t)o->body;
}

static void on_writable(struct conn *c);

/* send c's transaction (or, in a tunnel, its GET) */
static void request(struct conn *c)
{
	int is_connect = !strcmp(c->o->method, "CONNECT");

	if (is_connect && !c->tunnel)
		c->tunnel = 1;
	build_request(c);
	resp_start(&c->resp, c->tunnel == 1 || !strcmp(c->o->method, "HEAD"));
	c->st = C_SENDING;
	on_writable(c);
}

static void on_writable(struct conn *c)
{
	if (c->st == C_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err) {
			conn_fail(c, "OSError", err, 0);
			return;
		}
		request(c);
		return;
	}
	while (c->woff < c->wlen || c->body_left) {
		const char *p = c->woff < c->wlen ? c->wbuf + c->woff : pblock;
		size_t n = c->woff < c->wlen ? c->wlen - c->woff
			   : (c->body_left < sizeof(pblock) ? c->body_left : sizeof(pblock));
		ssize_t k = send(c->fd, p, n, MSG_NOSIGNAL);

		if (k < 0) {
			if (errno == EAGAIN) {
				conn_events(c, EPOLLIN | EPOLLOUT);
				return;
			}
			conn_fail(c, "ConnectionError", errno, 1);
			return;
		}
		if (c->woff < c->wlen)
			c->woff += (size_t)k;
		else
			c->body_left -= (uint64_t)k;
	}
	c->st = C_READING;
	conn_events(c, EPOLLIN);
}

/* the answer on c is complete */
static void answered(struct conn *c)
{
	struct rec *t = &R.recs[c->rec];
	struct user *u = c->u;
	int slot = c->slot;
	long rec = c->rec;

	if (c->tunnel == 1) {
		t->status = c->resp.status;
		if (t->status != 200) {
			conn_fail(c, "ConnectionError: CONNECT answered, not 200", 0, 1);
			return;
		}
		c->tunnel = 2;
		request(c);
		return;
	}
	t->status = c->resp.status;
	t->end = now();
	R.ndone++;
	u->active--;
	if (c->resp.keep && !c->tunnel && c->st == C_READING) {
		busy_del(c);
		c->st = C_IDLE;
		c->reused = 1;
		c->o = NULL;
	} else {
		conn_close(c);
	}
	fetch_done(u, slot, rec);
}

static void account(struct klass *k, size_t n)
{
	double t = now();
	long s = t < 0 ? 0 : (long)t;

	if (s >= k->nbins) {
		long cap = k->nbins, need = s + 1;

		k->bins = grow(k->bins, &cap, need, sizeof(*k->bins));
		memset(k->bins + k->nbins, 0, (size_t)(cap - k->nbins) * sizeof(*k->bins));
		k->nbins = (int)cap;
	}
	k->bins[s] += n;
	R.bytes += n;
}

static void on_readable(struct conn *c)
{
	struct rec *t;
	ssize_t n = recv(c->fd, rbuf, sizeof(rbuf), 0);
	const char *err = NULL;
	uint64_t before;
	long used;

	if (c->st == C_IDLE) {
		/* an idle keep-alive connection the proxy closed: the next request
		 * on it is sent again on a new one (fetch()), as loadengine finds
		 * out by sending it; one that spoke unasked is dropped */
		if (n < 0 && errno == EAGAIN)
			return;
		if (n > 0) {
			conn_close(c);
			return;
		}
		epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
		c->peer_closed = 1;
		return;
	}
	if (n < 0) {
		if (errno != EAGAIN)
			conn_fail(c, "ConnectionError", errno, 1);
		return;
	}
	t = &R.recs[c->rec];
	if (n == 0) {
		if (resp_eof(&c->resp))
			conn_fail(c, "IncompleteReadError: connection closed", 0, 1);
		else
			answered(c);
		return;
	}
	if (t->first < 0)
		t->first = now();
	account(c->u->k, (size_t)n);
	before = c->resp.body;
	used = resp_feed(&c->resp, rbuf, (size_t)n, &err);
	if (used < 0) {
		conn_fail(c, err, 0, 0);
		return;
	}
	if (c->tunnel != 1)
		t->bytes += c->resp.body - before;
	if (c->resp.state == R_DONE)
		answered(c);
}

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

static void fetch_done(struct user *u, int slot, long rec)
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

static void user_done(struct user *u);
static void replay_send(struct user *u);

static void next_page(struct user *u)
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
static void span_add(struct klass *k, double since, double until)
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

static void user_done(struct user *u)
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

static void on_timer(struct timer t)
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

/* -- the plan ------------------------------------------------------------- */
static void plan_class(const struct plan_line *pl)
{
	struct klass *k;
	long cap = R.nclasses;

	if (class_of(pl->name))
		plan_error("class %s given twice", pl->name);
	R.classes = grow(R.classes, &cap, R.nclasses + 1, sizeof(*R.classes));
	k = &R.classes[R.nclasses++];
	memset(k, 0, sizeof(*k));
	k->name = xstrdup(pl->name);
	k->conns = (int)pl->n;
	k->ptail = &k->pending;
}

static void plan_addr(const struct plan_line *pl)
{
	struct klass *k = class_of(pl->name);
	long cap, cap2;

	if (!k)
		plan_error("addr of unknown class %s", pl->name);
	cap = cap2 = k->cap;
	k->addrs = grow(k->addrs, &cap, k->naddr + 1, sizeof(*k->addrs));
	k->pool = grow(k->pool, &cap2, k->naddr + 1, sizeof(*k->pool));
	k->cap = (int)cap;
	k->addrs[k->naddr] = pl->addr;
	k->pool[k->naddr] = k->naddr;
	k->naddr++;
	k->nfree++;
}

static struct user *new_user(const char *id, struct klass *k, int nslots)
{
	struct user *u;

	if (user_of(id))
		plan_error("user %s given twice", id);
	u = xmalloc(sizeof(*u));
	u->id = xstrdup(id);
	u->k = k;
	u->nslots = nslots;
	u->addr = -1;
	u->leave = -1;
	u->qtail = &u->q;
	u->stail = &u->steps;
	u->st = U_WAIT_START;
	u->slot = xmalloc((size_t)nslots * sizeof(*u->slot));
	user_insert(u);
	return u;
}

static void plan_user(const struct plan_line *pl)
{
	struct klass *k = class_of(pl->name);
	struct user *u;

	if (!k)
		plan_error("user of unknown class %s", pl->name);
	if (pl->t2 >= 0 && pl->t2 < pl->t1)
		plan_error("user %s leaves before it starts", pl->id);
	u = new_user(pl->id, k, k->conns);
	u->auth = pl->text ? xstrdup(pl->text) : NULL;
	u->start = pl->t1;
	u->leave = pl->t2;
	u->arrival = (int)pl->n;
	timer_add(u->start, u, T_START);
	if (u->leave >= 0)
		timer_add(u->leave, u, T_LEAVE);
}

static void plan_replay(const struct plan_line *pl)
{
	struct klass *k = class_of(pl->name);
	struct user *u;

	if (!k)
		plan_error("replay user of unknown class %s", pl->name);
	u = new_user(pl->id, k, (int)pl->n);
	u->mode = pl->closed ? M_CLOSED : M_OPEN;
	u->a = pl->addr;
	u->start = pl->t1;
	timer_add(u->start, u, T_START);
}

static void plan_step(const struct plan_line *pl)
{
	struct user *u = user_of(pl->name);
	struct obj *o;

	if (!u || u->mode == M_SESSIONS)
		plan_error("step of unknown replay user %s", pl->name);
	o = xmalloc(sizeof(*o));
	snprintf(o->method, sizeof(o->method), "%s", pl->method);
	o->url = xstrdup(pl->text);
	o->auth = pl->auth ? xstrdup(pl->auth) : NULL;
	o->size = pl->n;
	o->status = pl->status;
	o->body = pl->body;
	o->max_age = pl->max_age;
	o->at = pl->t1;
	o->think = pl->t2;
	*u->stail = o;
	u->stail = &o->next;
}

static void plan_page_line(const struct plan_line *pl)
{
	struct user *u = user_of(pl->name);
	struct page *p;

	if (!u || u->mode != M_SESSIONS)
		plan_error("page of unknown user %s", pl->name);
	if (u->ended)
		plan_error("page of user %s after its end", pl->name);
	p = xmalloc(sizeof(*p));
	p->u = u;
	p->pid = xstrdup(pl->id);
	p->session = pl->n;
	p->think = pl->t1;
	p->want = pl->objects;
	p->tail = &p->objs;
	plan_page = p;
}

static void plan_obj(const struct plan_line *pl)
{
	struct page *p = plan_page;
	struct obj *o;
	struct user *u;

	if (!p)
		plan_error("obj without its page");
	o = xmalloc(sizeof(*o));
	snprintf(o->method, sizeof(o->method), "%s", pl->method);
	o->url = xstrdup(pl->text);
	o->size = pl->n;
	o->status = pl->status;
	o->body = pl->body;
	o->max_age = pl->max_age;
	*p->tail = o;
	p->tail = &o->next;
	if (++p->nobj < p->want)
		return;
	/* the page is whole: to its user's queue */
	plan_page = NULL;
	u = p->u;
	u->asked = 0;
	*u->qtail = p;
	u->qtail = &p->next;
	u->qlen++;
	if (u->st == U_WAIT_PLAN && clock_on)
		next_page(u);
}

static void plan_line(char *line)
{
	struct plan_line pl;
	const char *err;
	struct user *u;

	lineno++;
	if (plan_parse(line, &pl, &err))
		plan_error("%s", err);
	if (plan_page && pl.kind != PL_OBJ && pl.kind != PL_SKIP)
		plan_error("page %s has fewer objects than announced", plan_page->pid);
	if (clock_on && (pl.kind == PL_CLASS || pl.kind == PL_ADDR || pl.kind == PL_USER ||
			 pl.kind == PL_START || pl.kind == PL_REPLAY || pl.kind == PL_STEP))
		plan_error("class, addr, user, replay, step and start come before start");
	switch (pl.kind) {
	case PL_CLASS:
		plan_class(&pl);
		break;
	case PL_ADDR:
		plan_addr(&pl);
		break;
	case PL_USER:
		plan_user(&pl);
		break;
	case PL_PAGE:
		plan_page_line(&pl);
		break;
	case PL_OBJ:
		plan_obj(&pl);
		break;
	case PL_REPLAY:
		plan_replay(&pl);
		break;
	case PL_STEP:
		plan_step(&pl);
		break;
	case PL_END:
		if (!(u = user_of(pl.name)) || u->mode != M_SESSIONS)
			plan_error("end of unknown user %s", pl.name);
		u->ended = 1;
		if (u->st == U_WAIT_PLAN && !u->q && clock_on)
			next_page(u);
		break;
	case PL_START:
		R.t0 = mono();
		{
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			R.t0_epoch = (double)ts.tv_sec + ts.tv_nsec / 1e9;
		}
		clock_on = 1;
		break;
	case PL_SKIP:
		break;
	}
}

static void plan_closed(void)
{
	plan_open = 0;
	epoll_ctl(ep, EPOLL_CTL_DEL, 0, NULL);
	if (!clock_on)
		plan_error("the plan ended before start");
	/* users waiting for pages get none */
	for (long b = 0; b < nbuckets; b++)
		for (struct user *u = users[b]; u; u = u->hnext)
			if (u->st == U_WAIT_PLAN && !u->q)
				next_page(u);
}

static void on_plan(void)
{
	static char line[PLAN_LINE_MAX + 1];
	static size_t len;
	ssize_t n = read(0, rbuf, sizeof(rbuf));

	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		if (len) {
			lineno++;
			plan_error("the last line has no newline");
		}
		plan_closed();
		return;
	}
	for (ssize_t i = 0; i < n; i++) {
		if (rbuf[i] != '\n') {
			if (len == PLAN_LINE_MAX) {
				lineno++;
				plan_error("longer than %d bytes", PLAN_LINE_MAX);
			}
			line[len++] = rbuf[i];
			continue;
		}
		line[len] = '\0';
		len = 0;
		plan_line(line);
	}
}

/* -- the run -------------------------------------------------------------- */
static void progress(void)
{
	out_printf("progress {\"t\": %.3f, \"active\": {", now());
	for (int i = 0; i < R.nclasses; i++)
		out_printf("%s\"%s\": %d", i ? ", " : "", R.classes[i].name, R.classes[i].active);
	out_printf("}, \"started\": %ld, \"done\": %ld, \"errors\": %ld, \"bytes\": %llu}\n",
		   R.nrecs, R.ndone, R.nerrors, (unsigned long long)R.bytes);
	out_flush();
}

static void sweep(double t)
{
	struct conn *c, *next;

	for (long i = 0; i < nfailed; i++) {
		c = failed[i];
		conn_fail(c, "OSError", c->err, 0);
	}
	nfailed = 0;
	for (c = busy; c; c = next) {
		next = c->bnext;
		if (c->deadline <= t)
			conn_fail(c, "TimeoutError", 0, 0);
	}
}

/* cut what is in flight; close the spans of the users still there */
static void stop_run(void)
{
	double t = now();

	stopping = 1;
	R.elapsed = t;
	while (busy) {
		struct rec *r = &R.recs[busy->rec];

		if (!r->error) {
			r->error = "cancelled at end of run";
			R.nerrors++;
		}
		conn_close(busy);
	}
	for (long i = 0; i < R.nstarted; i++)
		if (R.started[i]->st != U_DONE)
			span_add(R.started[i]->k, R.started[i]->since, t);
}

static void on_event(struct epoll_event *e, int sfd)
{
	struct conn *c = e->data.ptr;

	if (e->data.ptr == TAG_PLAN) {
		on_plan();
	} else if (e->data.ptr == TAG_OUT) {
		out_flush();
	} else if (e->data.ptr == TAG_SIG) {
		struct signalfd_siginfo si;

		if (read(sfd, &si, sizeof(si)) > 0)
			R.interrupted = 1;
	} else if (c->fd < 0) {
		return;             /* closed by an earlier event of this batch */
	} else if ((e->events & EPOLLOUT) && (c->st == C_CONNECTING || c->st == C_SENDING)) {
		on_writable(c);
	} else if (e->events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
		on_readable(c);
	}
}

static void loop(int sfd)
{
	struct epoll_event evs[MAX_EVENTS];
	double next_sweep = 0, next_progress = progress_s;

	for (;;) {
		double t = now(), until;
		int n, ms;

		if (clock_on) {
			while (nheap && heap[0].when <= t)
				on_timer(timer_pop());
			if (t >= next_sweep || nfailed) {
				sweep(t);
				next_sweep = t + TICK_S;
			}
			if (t >= next_progress) {
				progress();
				next_progress += progress_s;
			}
			if (t >= R.duration || ndone_users == nusers || R.interrupted)
				break;
		} else if (R.interrupted) {
			break;
		}
		bury();
		until = clock_on ? next_sweep : t + TICK_S;
		if (clock_on && nheap && heap[0].when < until)
			until = heap[0].when;
		ms = nfailed ? 0 : (int)((until - t) * 1000) + 1;
		n = epoll_wait(ep, evs, MAX_EVENTS, ms < 0 ? 0 : ms);
		for (int i = 0; i < n; i++)
			on_event(&evs[i], sfd);
	}
}

static void usage(void)
{
	fputs("usage: reqsched-loadc --proxy HOST:PORT --out DIR [--timeout S] [--duration S]\n"
	      "                      [--progress-s S] < PLAN\n", stderr);
	exit(2);
}

static double positive(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v > 0 && v < 1e9))
		usage();
	return v;
}

static void proxy_of(char *arg)
{
	char *colon = strrchr(arg, ':');
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;

	if (!colon)
		usage();
	*colon = '\0';
	if (getaddrinfo(arg, colon + 1, &hints, &ai)) {
		fprintf(stderr, "reqsched-loadc: --proxy %s:%s: no IPv4 address\n", arg, colon + 1);
		exit(2);
	}
	memcpy(&proxy, ai->ai_addr, sizeof(proxy));
	freeaddrinfo(ai);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "proxy", required_argument, NULL, 'p' }, { "out", required_argument, NULL, 'o' },
		{ "timeout", required_argument, NULL, 't' },
		{ "duration", required_argument, NULL, 'd' },
		{ "progress-s", required_argument, NULL, 'g' }, { NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = TAG_PLAN };
	sigset_t sigs;
	int opt, sfd;

	R.timeout = 120;
	R.duration = 1e9;
	memset(pblock, 'p', sizeof(pblock));
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'p': proxy_of(optarg); break;
		case 'o': out = optarg; break;
		case 't': R.timeout = positive(optarg); break;
		case 'd': R.duration = positive(optarg); break;
		case 'g': progress_s = positive(optarg); break;
		default: usage();
		}
	}
	if (!out || !proxy.sin_port || optind != argc)
		usage();
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	ep = epoll_create1(EPOLL_CLOEXEC);
	fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
	fcntl(1, F_SETFL, fcntl(1, F_GETFL) | O_NONBLOCK);
	if (sfd < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, 0, &e)) {
		perror("reqsched-loadc: stdin (the plan, a pipe)");
		return 2;
	}
	e = (struct epoll_event){ .events = 0, .data.ptr = TAG_OUT };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, 1, &e)) {
		perror("reqsched-loadc: stdout (a pipe)");
		return 2;
	}
	e = (struct epoll_event){ .events = EPOLLIN, .data.ptr = TAG_SIG };
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &e);
	loop(sfd);
	stop_run();
	{
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		R.cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	}
	bury();
	if (write_outputs(&R, out)) {
		fprintf(stderr, "reqsched-loadc: writing %s: %s\n", out, strerror(errno));
		return 2;
	}
	fcntl(1, F_SETFL, fcntl(1, F_GETFL) & ~O_NONBLOCK);
	out_flush();
	return 0;
}
