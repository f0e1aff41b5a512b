/* SPDX-License-Identifier: GPL-2.0-or-later */
/* conn.c - one transaction of a user on one of its connections to the
 * proxy, as loadengine.Engine.run_one() does it: a connection opened from
 * the user's address (IP_BIND_ADDRESS_NO_PORT), the request in absolute
 * form (CONNECT: the tunnel, then one GET inside it), the answer parsed
 * (http.c) and counted, the connection kept if it may be. Invariant: a
 * connection is on the busy list while it carries a transaction, idle in
 * its user's slot otherwise; a closed one is freed only by bury(), after
 * the events fetched with it. A failure is recorded on the transaction and
 * reported to the user (fetch_done()), never fatal; a connect failure is
 * reported from the loop (failed[]), never from inside fetch(). */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loadc.h"

struct conn *busy, **failed;
long nfailed;
static long cfailed;
static struct conn *graveyard;    /* closed, to free */
static char pblock[65536];        /* request body bytes: 'p's, as loadengine sends */

void conn_setup(void)
{
	memset(pblock, 'p', sizeof(pblock));
}
static void conn_events(struct conn *c, unsigned ev)
{
	struct epoll_event e = { .events = ev, .data.ptr = c };

	if (ev != c->events) {
		epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
		c->events = ev;
	}
}

void busy_add(struct conn *c)
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

void conn_close(struct conn *c)
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

void bury(void)
{
	while (graveyard) {
		struct conn *c = graveyard;

		graveyard = c->bnext;
		resp_free(&c->resp);
		free(c->wbuf);
		free(c);
	}
}

void close_slots(struct user *u)
{
	for (int s = 0; s < u->nslots; s++)
		if (u->slot[s])
			conn_close(u->slot[s]);
}


/* A new connection in c's user's slot for record rec (its number: the
 * session's next). Returns it, or NULL with the record's error set. */
struct conn *conn_open(struct user *u, int slot, long rec)
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
void conn_fail(struct conn *c, const char *what, int err, int stale)
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


/* send c's transaction (or, in a tunnel, its GET) */
void request(struct conn *c)
{
	int is_connect = !strcmp(c->o->method, "CONNECT");

	if (is_connect && !c->tunnel)
		c->tunnel = 1;
	build_request(c);
	resp_start(&c->resp, c->tunnel == 1 || !strcmp(c->o->method, "HEAD"));
	c->st = C_SENDING;
	on_writable(c);
}

void on_writable(struct conn *c)
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

void on_readable(struct conn *c)
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
