/* SPDX-License-Identifier: GPL-2.0-or-later */
/* loadc.c - reqsched-loadc, the hot path of reqsched-load sessions
 * --engine c (doc/testbed.md "Load"): it reads the plan (plan.h) on stdin,
 * runs its users' pages (sessions) or logged requests (replay) through the
 * proxy as loadengine.py, sessions.py and logreplay.py do, and writes the
 * records (out.c). On stdout: "more USER" when a user's
 * queue of pages runs low, "progress {json}" every --progress-s.
 *
 * Here: the plan's lines into classes and users, the timers, the loop, the
 * progress and the end of the run; users and their pages or replayed
 * requests in user.c; a transaction on a connection in conn.c. Every
 * transaction is bounded by --timeout (swept every TICK_S). SIGINT/SIGTERM
 * or --duration stop the run: transactions in flight are cut ("cancelled
 * at end of run"), the users still there leave at that instant. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
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

#define TICK_S 0.1                /* timeout sweep */
#define MAX_EVENTS 256
#define TAG_PLAN ((void *)1)
#define TAG_OUT ((void *)2)
#define TAG_SIG ((void *)3)

struct run R;
int ep, plan_open = 1, clock_on, stopping;
struct sockaddr_in proxy;
long ndone_users;
char rbuf[262144];
static double progress_s = 5;
static struct timer *heap;
static long nheap, cheap;
static struct user **users;       /* hash table by id */
static long nusers, nbuckets;
static struct page *plan_page;    /* the page obj lines go to */
static long lineno;
static char *obuf;                /* stdout not yet written */
static size_t olen, ocap;
static unsigned out_events;

void *xmalloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p) {
		fputs("reqsched-loadc: out of memory\n", stderr);
		exit(2);
	}
	return p;
}

void *grow(void *p, long *cap, long need, size_t size)
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

char *xstrdup(const char *s)
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

double now(void)
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

void timer_add(double when, struct user *u, enum tkind kind)
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

void free_page(struct page *p)
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

void ask(struct user *u)
{
	if (u->ended || u->asked || !plan_open)
		return;
	u->asked = 1;
	out_printf("more %s\n", u->id);
	out_flush();
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
	conn_setup();
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
