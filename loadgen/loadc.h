/* SPDX-License-Identifier: GPL-2.0-or-later */
/* loadc.h - the state of reqsched-loadc: classes with their address pools,
 * users, their pages and connections, and the records the run writes
 * (out.c). One thread, one epoll loop (loadc.c); users in user.c, a
 * transaction on a connection in conn.c. */
#ifndef RS_LOADC_H
#define RS_LOADC_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "http.h"
#include "plan.h"

struct obj {
	struct obj *next;
	char method[17];
	char *url;                /* handed to the record when fetched */
	char *auth;               /* a replayed request's credential, NULL: the user's */
	long size, status, body, max_age;
	double at, think;         /* a replayed request: due at, or think after the last */
};

struct page {
	struct page *next;
	struct user *u;
	long nobj, want;          /* obj lines read, and announced */
	char *pid;                /* handed to the page record when loaded */
	long session;
	double think;
	struct obj *objs, **tail;
};

struct user;

struct klass {
	char *name;
	int conns;                /* connections per user */
	struct in_addr *addrs;
	int naddr, cap;
	int *pool, head, nfree;   /* free addresses: a FIFO ring of indices */
	struct user *pending, **ptail;   /* users waiting for an address */
	int npending, active;
	uint64_t *bins;           /* bytes received per second */
	int nbins;
};

enum ustate { U_WAIT_START, U_PENDING, U_WAIT_PLAN, U_THINK, U_FETCH, U_DONE };
enum umode { M_SESSIONS, M_OPEN, M_CLOSED };   /* pages, or a log's requests (replay_next()) */

struct conn;

struct user {
	char *id, *auth;
	struct klass *k;
	enum umode mode;
	struct in_addr a;         /* its source address while it runs */
	int nslots;               /* connections at most */
	struct obj *steps, **stail;   /* a replay user's requests to come */
	int nsteps;               /* requests sent so far */
	double start, leave, since;
	int arrival;              /* refused, not pending, without a free address */
	enum ustate st;
	int addr;                 /* index into k->addrs, -1: none */
	struct page *q, **qtail, *cur;
	int qlen, ended, asked;
	struct obj *todo;         /* the current page's embedded objects to fetch */
	int next_k, active;       /* the next object's number in the page, fetches on */
	long prec;                /* the current page's record */
	long session;
	int next_conn;            /* the last connection number of this session */
	unsigned wake;            /* the valid think timer */
	struct conn **slot;
	struct user *hnext, *pnext;
};

enum cstate { C_CONNECTING, C_SENDING, C_READING, C_IDLE };

struct conn {
	int fd, id, slot;
	int err;                  /* the errno of a failed connect, reported from the loop */
	unsigned events;
	struct user *u;
	enum cstate st;
	int reused;               /* carried a transaction before this one */
	int peer_closed;          /* idle, and closed by the proxy */
	int tunnel;               /* 1: awaiting CONNECT's answer, 2: inside the tunnel */
	struct obj *o;
	long rec;
	char *wbuf;
	size_t wlen, woff;
	uint64_t body_left;
	struct resp resp;
	double deadline;
	struct conn *bnext, *bprev;      /* the busy list (timeouts, stop) */
};

struct rec {
	struct user *u;
	char *url;
	const char *error;        /* NULL, a static string, or errbuf-owned */
	char method[17];
	double sched, start, first, end;
	uint64_t bytes;
	long prec;                /* the page record, -1: none (replay, id USER.k) */
	int k, status, conn;
	char role;                /* 'm' main, 'e' embedded */
	char retried, err_owned;
};

struct prec {
	char *pid;
	struct user *u;
	double start, end;
	int objects, errors;
	uint64_t bytes;
};

struct span {
	struct klass *k;
	double since, until;
};

struct run {
	double t0, t0_epoch, elapsed, duration, timeout;
	double cpu;               /* the engine's CPU seconds to the end of the run */
	int interrupted;
	struct klass *classes;
	int nclasses;
	struct user **started;    /* users in start order (replay.json) */
	long nstarted, cstarted;
	struct rec *recs;
	long nrecs, crecs, ndone, nerrors;
	struct prec *precs;
	long nprecs, cprecs;
	struct span *spans;
	long nspans, cspans;
	long no_address, refused;
	uint64_t bytes;
};

enum tkind { T_START, T_THINK, T_LEAVE };

struct timer {
	double when;
	struct user *u;
	unsigned wake;            /* a think timer is valid while it is its user's */
	enum tkind kind;
};

/* loadc.c: the run, the clock (s since `start`), timers, the plan's pages */
extern struct run R;
extern int ep, plan_open, clock_on, stopping;
extern struct sockaddr_in proxy;
extern long ndone_users;
extern char rbuf[262144];
void *xmalloc(size_t n);
void *grow(void *p, long *cap, long need, size_t size);
char *xstrdup(const char *s);
double now(void);
void timer_add(double when, struct user *u, enum tkind kind);
void ask(struct user *u);
void free_page(struct page *p);

/* conn.c: connections and the transactions on them */
extern struct conn *busy, **failed;
extern long nfailed;
void conn_setup(void);
struct conn *conn_open(struct user *u, int slot, long rec);
void conn_close(struct conn *c);
void conn_fail(struct conn *c, const char *what, int err, int stale);
void close_slots(struct user *u);
void busy_add(struct conn *c);
void request(struct conn *c);
void on_writable(struct conn *c);
void on_readable(struct conn *c);
void bury(void);

/* user.c: users, their pages and replayed requests */
void fetch_done(struct user *u, int slot, long rec);
void next_page(struct user *u);
void user_done(struct user *u);
void span_add(struct klass *k, double since, double until);
void on_timer(struct timer t);

/* out.c: requests.csv, pages.csv, class_bytes.csv and replay.json in dir */
int write_outputs(const struct run *r, const char *dir);

#endif
