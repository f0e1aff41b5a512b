/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * internal.h - data structures shared by the files of libreqsched.
 *
 * Ownership of a request slot:
 *   FREE -> QUEUED (in its class sub-queue and the global FIFO)
 *        -> HELD (rtc only: dequeued by the policy, waiting for bandwidth;
 *                 still "queued" for the caller, still in the global FIFO)
 *        -> SCHEDULED (rtc only: release time fixed, in the release heap)
 *        -> RELEASED (callback fired; counted in W; in the finish heap for rtc)
 *        -> FREE (cancel/expire from QUEUED, HELD or SCHEDULED; end from RELEASED)
 * Every request in a non-FREE state holds exactly one reference on its
 * (class,user) entry; the entry's count is the paper's ReqFromUser[j], and
 * its waiting counts the references of QUEUED, HELD and SCHEDULED requests
 * (the per-user queue limit, max_queued_user).
 */
#ifndef REQSCHED_INTERNAL_H
#define REQSCHED_INTERNAL_H

#include "reqsched.h"
#include "list.h"		/* RS_NIL */

struct rs_sched;

/*
 * The two decisions, bound once per configuration by select.c (like the
 * kernel's struct Qdisc_ops): a policy decides WHICH queued request goes
 * next, a controller WHEN. The core calls them only through s->pol and
 * s->ctl; an optional operation is NULL when the idea has nothing to do.
 */
struct rs_policy_ops {
	const char *name;		/* directive word: "msf", "rfq", "drr" */
	bool service_counter;		/* response bytes are service (SC) */
	bool per_user;			/* service is shared per (class, user):
					 * SC / UC, one pacer account per user */
	bool resources;			/* a released request holds its cost
					 * (resources.c); needs cfg.nres */
	uint8_t resv_passes;		/* resources: releases of others a head
					 * without room lets pass before its
					 * reservation holds (reservation.c) */
	bool reads_size;		/* charges a request its est_size (drr) */
	void (*ready)(struct rs_sched *s, uint32_t c);	/* nq 0 -> 1 */
	void (*empty)(struct rs_sched *s, uint32_t c);	/* nq 1 -> 0 */
	/* the class whose head goes next (charged for it), or RS_NIL */
	uint32_t (*pick)(struct rs_sched *s);
	double (*service)(const struct rs_sched *s, uint32_t c);  /* stats */
	/* optional */
	void (*refund)(struct rs_sched *s, uint32_t r);	/* taken, not released */
	void (*size_known)(struct rs_sched *s, uint32_t r, uint64_t real);
	void (*users_changing)(struct rs_sched *s, uint32_t c); /* UC +-1 next */
	void (*users_changed)(struct rs_sched *s, uint32_t c);
	void (*rebuild)(struct rs_sched *s);	/* reconfigure: classes renewed */
	void (*sub_ready)(struct rs_sched *s, uint32_t c, unsigned sub);
	void (*sub_empty)(struct rs_sched *s, uint32_t c, unsigned sub);
};

struct rs_controller_ops {
	const char *name;		/* "wrc-mult", "wrc-aimd", "rtc", "fixed" */
	bool window;			/* W+ limits the releases (rtc: bandwidth) */
	bool adaptive;			/* W+ follows U: slow start with pacing,
					 * carried over on reconfigure */
	bool window_from_config;	/* W+ is cfg.fixed_window (times the
					 * link share): re-read on every
					 * reconfigure and share change */
	bool reads_size;		/* plans with est_size and the host's
					 * rate and delay (rtc) */
	void (*start)(struct rs_sched *s, rs_time_ns now);	/* W+ at start */
	void (*release)(struct rs_sched *s, rs_time_ns now);	/* what it allows */
	void (*interval)(struct rs_sched *s, double U);	/* update interval over */
	/* optional */
	int (*reserve)(struct rs_sched *s);	/* memory for one more request */
	void (*ended)(struct rs_sched *s, uint32_t r, rs_time_ns now);
	void (*first_byte)(struct rs_sched *s, uint32_t r, uint64_t size,
			   rs_time_ns now);
	void (*adopt)(struct rs_sched *s, uint32_t r, rs_time_ns now);
	rs_time_ns (*deadline)(const struct rs_sched *s);
	void (*rate_changed)(struct rs_sched *s, double delta);	/* C U+ - exc */
};

enum rs_state {
	RS_ST_FREE = 0,
	RS_ST_QUEUED,
	RS_ST_HELD,
	RS_ST_SCHEDULED,
	RS_ST_RELEASED,
};

#define RS_RF_FIRST_BYTE 0x01	/* rs_on_first_byte() seen */
#define RS_RF_SIZE_KNOWN 0x02	/* drr compensation applied */
#define RS_RF_HOLDS_BW 0x04	/* rtc: holds req.bw out of the link */
#define RS_RF_LONG 0x08		/* long transfer: out of the window (W) */
#define RS_RF_HOLDS_RES 0x10	/* holds its cost (resources.c) */

/* Sub-queues of a class: sff's two, or mqos's one per resource. */
#define RS_NSUBQ (RS_MAX_RESOURCES > 2 ? RS_MAX_RESOURCES : 2)
#define RS_LINE 64	/* a cache line: the per-class arrays are aligned to it */

/* One request. Kept small: it is the per-queued-request memory cost. */
struct rs_req {
	void *cookie;
	uint64_t est_size;	/* size charged to the policy (drr, rtc, sff) */
	uint64_t bytes;		/* response bytes seen so far */
	rs_time_ns t_enq;	/* enqueue time (expire, wait stats) */
	rs_time_ns t_rel;	/* release time; rtc: planned release time */
	rs_time_ns t_first;	/* first byte time */
	uint64_t url_key, host_key, type_key;	/* estimator keys */
	uint32_t gen;		/* generation: part of the id */
	uint32_t cls;
	uint32_t user;		/* index into the user table entries */
	uint32_t next, prev;	/* class sub-queue links, or free list */
	uint32_t gnext, gprev;	/* waiting: the global FIFO (queue.c);
				 * released in the window: the window list
				 * (slotage.c) */
	uint8_t state;
	uint8_t sub;		/* sub-queue: sff 0 priority, 1 best effort;
				 * mqos the resource it needs most */
	uint8_t flags;
	uint8_t pad;
};

/* rtc state of a request, in an array parallel to the requests that
 * exists only while the controller is rtc. */
struct rs_rtcq {
	double bw;		/* estimated rate req.BW, bytes/s */
	rs_time_ns ft;		/* estimated finishing time req.FT */
	rs_time_ns delay;	/* estimated Delay_resp req.D */
	uint32_t hpos_rel;	/* position in H_RELEASE */
	uint32_t hpos_ft;	/* position in H_FT */
};

/* One (class,user) pair: ReqFromUser[j] and the sff recent service. */
struct rs_user {
	uint64_t key;		/* caller's user key */
	uint32_t cls;
	uint32_t count;		/* requests alive (queued..released) */
	uint32_t waiting;	/* of them QUEUED, HELD or SCHEDULED */
	uint8_t idle;		/* on the idle ring (users.c) */
	uint64_t recent;	/* sff: bytes received recently */
	rs_time_ns last_seen;	/* sff: last activity */
	union {
		rs_time_ns idle_since;	/* on the idle ring: its key */
		uint32_t next_free;	/* on the free list */
	};
};

/* Open addressing index slot: entry + 1 (0 = empty) and the entry's hash,
 * so probes and deletions rarely touch the entries themselves. */
struct rs_uslot {
	uint32_t idx1;
	uint32_t hash;
};

struct rs_users {
	struct rs_user *ent;
	uint32_t nent, cap;	/* entries in use / allocated */
	uint32_t free_head;
	struct rs_uslot *slot;	/* linear probing, load <= 1/2 */
	uint32_t nslot;		/* power of two */
	uint32_t *idle;		/* the idle ring: cap entries, oldest first */
	uint32_t idle_head, nidle;
	rs_time_ns idle_last;	/* idle_since of the ring's newest */
	uint32_t alive;		/* entries in use */
};

/* The class name index (names.c): a slot borrows a name pointer (NULL:
 * empty) and holds its class index and 32-bit hash. */
struct rs_nslot {
	const char *name;
	uint32_t idx;
	uint32_t hash;
};

struct rs_names {
	struct rs_nslot *slot;	/* linear probing, load <= 1/2 */
	uint32_t nslot;		/* power of two, or 0 before the first name */
	uint32_t n;		/* names stored */
};

struct rs_subq {
	uint32_t head, tail;
	uint32_t len;
};

/* mqos (mqos.c): a class in the sub-scheduler of one resource j. */
struct rs_mq {
	double dc;		/* deficit counter DC_cj, units of resource j */
	uint64_t seen;		/* rounds of sub-scheduler j credited to dc */
	uint32_t next, prev;	/* sub-scheduler j's list (q[j] not empty) */
};

/* A class's state for the server's resources, in an array parallel to the
 * classes (s->cres) so that struct rs_class, which every policy walks,
 * stays small. */
/* On whole cache lines, as struct rs_class: line 0 is what every release
 * and end under a policy with resources touches (rs_res_take, _give). */
struct rs_cres {
	_Alignas(RS_LINE) uint64_t held[RS_MAX_RESOURCES];	/* held now
							 * (resources.c) */
	uint64_t consumed[RS_MAX_RESOURCES];	/* taken in all */
	double drf_used;	/* drf: dominant shares given / w (key) */
	uint32_t hpos_drf;	/* drf: position in s->drf (nq > 0) */
	struct rs_mq mq[RS_MAX_RESOURCES];	/* mqos */
};

/* The rate of a cumulative byte count over samples of at least a span
 * (pacer.c's rate_take()): the count was mark at t; rate is the last
 * whole sample's, bytes/s. */
struct rs_rate {
	uint64_t mark;
	rs_time_ns t;
	double rate;
};

/* On whole cache lines (rs_line_array() allocates them so). Line 0 holds
 * every field of the class that byte events, rs_on_end() and the SC
 * bookkeeping of msf and rfq (msf.c) touch, but two: aborted (cold: an
 * aborted end) and hpos_active (line 1: the active heap, which only a
 * class leaving msf's pool while active and a class becoming active with
 * the pool empty touch). Line 1 holds the queues, nq and released
 * (enqueue and release). So a request of msf or rfq touches two lines of
 * its class, its byte events and its end line 0 alone; sff and drr add
 * line 2. Line 0 has one byte free, line 1 none: a field added there
 * pushes another out. With 10,000 classes every request misses on its
 * class. */
struct rs_class {
	/* line 0: byte events, ends, the SC bookkeeping of msf and rfq */
	_Alignas(RS_LINE) uint64_t bytes;	/* scheduled + foreign */
	uint64_t sc_pending;	/* bytes not yet folded into sc */
	double sc;		/* service counter SC */
	double weight;
	uint64_t ended;
	uint32_t sc_epoch;	/* sc is valid only in the scheduler's epoch */
	uint32_t uc;		/* active users UC */
	uint32_t hpos_ready;	/* position in the ready heap (nq > 0) */
	uint32_t pending;	/* HELD + SCHEDULED */
	uint32_t outstanding;	/* RELEASED */
	uint8_t dirty;		/* msf/rfq: on the dirty list */
	uint8_t in_pool;	/* msf/rfq: in the pool of msf.c */
	uint8_t next_sub;	/* mqos: the sub-queue its pick chose (0 for
				 * the others: every take reads it) */
	/* line 1: the queues, every enqueue and release */
	uint64_t released;
	struct rs_subq q[RS_NSUBQ];	/* sff: [0] priority (or the only
					 * queue), [1] best effort; mqos: one
					 * per resource */
	uint32_t nq;		/* requests in the sub-queues */
	uint32_t hpos_active;	/* position in the active heap (uc > 0) */
	/* line 2: drr and sff */
	uint8_t in_round;	/* drr: on the active round-robin list */
	uint8_t visiting;	/* drr: quantum already added for this visit */
	uint8_t sff_turn;	/* sff: sub-queue whose turn it is */
	uint32_t rr_next, rr_prev;
	double dc;		/* drr deficit counter */
	double sff_dc[2];	/* sff group deficit counters */
	/* cold: statistics and name */
	char *name;
	uint32_t nflows;	/* open flows of the class */
	uint32_t naccts;	/* pacer accounts of the class */
	uint32_t nbacklog;	/* of them with waiting flows */
	uint32_t npresent;	/* of them present (pacer.c: acct_present) */
	uint64_t foreign_bytes;
	uint64_t cancelled, aborted, expired, rejected;
	uint64_t bytes_at_tick;
	double throughput_bps;
	struct rs_rate rd;	/* bytes per second: admission by share
				 * (pacer.c), sampled while it may apply */
#ifdef RS_DEBUG
	double dbg_sc;		/* check.c: SC at the previous check */
	uint32_t dbg_epoch;
	bool dbg_active;
#endif
};
_Static_assert(offsetof(struct rs_class, released) == RS_LINE &&
	       offsetof(struct rs_class, in_round) == 2 * RS_LINE,
	       "struct rs_class: lines 0 and 1 as the comment above says");

/* Index min-heap of uint32 items; the position of each item is stored by
 * the callbacks so that any item can be fixed or removed in O(log n). */
struct rs_heap {
	uint32_t *item;
	uint32_t n, cap;
};

/* Class heap keyed by a copy of (SC, w*UC) (msf), or of drf_used (drf):
 * comparisons never touch the class structures (cache friendly with
 * 10,000 classes). */
struct rs_kent {
	double sc;		/* the key: SC, or drf_used */
	double wuc;		/* tie break: larger w*UC first (ready heap) */
	uint32_t c;
};

struct rs_kheap {
	struct rs_kent *ent;
	uint32_t n, cap;
};

int rs_kheap_reserve(struct rs_kheap *h, uint32_t cap);
void rs_kheap_free(struct rs_kheap *h);
static inline uint32_t rs_kheap_top(const struct rs_kheap *h)
{
	return h->n ? h->ent[0].c : RS_NIL;
}

/* Response size / rate / delay estimator (bounded memory). */
struct rs_est_ent {
	uint64_t key;
	double size;
	double rate;		/* bytes/s, 0 = unknown */
	double delay;		/* ns, 0 = unknown */
};

#define RS_EST_SLOTS 2048	/* per key kind; 2-way set associative */

struct rs_est {
	struct rs_est_ent *tab[3];	/* url, host, type */
	double rate_avg;	/* global EWMA of measured rates, bytes/s */
	double delay_avg;	/* global EWMA of measured Delay_resp, ns */
	double delay_peak;	/* decaying maximum of Delay_resp, ns */
	uint64_t default_size;
};

/* The byte layer (pacer.c). A flow slot is FREE or open: IDLE (may ask),
 * WAITING (in its account's FIFO, want recorded) or GRANTED (woken with
 * grant bytes already taken from the tokens, on the granted list). */
enum rs_flow_state {
	RS_FL_FREE = 0,
	RS_FL_IDLE,
	RS_FL_WAITING,
	RS_FL_GRANTED,
};

struct rs_flow_ent {
	void *cookie;
	rs_id req;		/* bound request (0: unbound) */
	uint64_t ukey;		/* user key */
	uint64_t want;		/* WAITING: bytes asked for */
	int64_t grant;		/* GRANTED: bytes granted by the dispatch */
	int64_t allowed;	/* allowances returned, not yet read (tokens) */
	double cost;		/* mean tag per byte of its unread bytes */
	rs_time_ns t_grant;	/* GRANTED: when */
	uint32_t gen;		/* generation: part of the handle */
	uint32_t cls;		/* class (of the request when bound) */
	uint32_t acct;		/* account */
	uint32_t next, prev;	/* account FIFO, granted list or free list */
	uint32_t clamp;		/* last rs_flow_clamp() result */
	uint64_t rd_total;	/* bytes read */
	struct rs_rate rd;	/* their rate, over samples of its least RTT */
	rs_time_ns rtt_min;	/* least RTT rs_flow_clamp() was given (0: none) */
	uint8_t state;
	uint8_t gate_from;	/* the gate its last grant or allowance was
				 * taken from (gate.c), for its refunds */
};

/* A pacer account: (class, user) under msf, a class under rfq and drr. It
 * exists while it has open flows. Invariant: an account is in the pacer's
 * heap iff nwait > 0 (but while dispatch() holds it aside for its kept
 * share). */
struct rs_acct {
	uint64_t key;		/* user key (msf) or 0 */
	double tag;		/* bytes it was let read times c_a */
	uint32_t cls;
	uint32_t nflows;	/* open flows (0: slot free) */
	uint32_t nwait;		/* WAITING flows in the FIFO */
	uint32_t head, tail;	/* FIFO of waiting flows */
	uint32_t hpos;		/* position in the heap (RS_NIL: not in it) */
	uint32_t next;		/* free list, or dispatch()'s held accounts */
	uint32_t nreq;		/* open flows bound to a request */
	uint32_t rnext, rprev;	/* list of recent readers */
	rs_time_ns t_read;	/* last read */
	uint8_t recent;		/* read within PRESENT_TTL: on that list */
	/* pace_keep_share: bytes the account may still read within its
	 * share of R (a bucket like the pacer's), refilled up to t_share */
	double share_tokens;
	rs_time_ns t_share;
};

/* A class's gates (gate.c): p_c, its part of R over the whole proxy;
 * p_c n_c / N_c, the part of R this worker's users of it are due (its own
 * gate's rate over R), both set by rs_share_gates() (share.c); the own
 * gate's GCRA time. */
struct rs_gate_cls {
	double part, own;
	uint64_t own_tat;
};

struct rs_pacer {
	struct rs_flow_ent *fl;
	uint32_t nfl, fl_cap, fl_free;
	uint32_t open;		/* open flows */
	uint32_t waiting;	/* WAITING flows */
	struct rs_acct *ac;	/* capacity fl_cap: accounts <= open flows */
	uint32_t nac, ac_free;
	uint32_t *slot;		/* account index: acct + 1, linear probing */
	uint32_t nslot;		/* power of two, >= 2 * fl_cap */
	struct rs_heap act;	/* accounts with waiting flows, least tag
				 * first */
	double vtime;		/* V: the highest tag a take started from */
	uint32_t gr_head, gr_tail;	/* GRANTED flows, oldest grant first */
	uint32_t rc_head, rc_tail;	/* recent readers, oldest read first */
	double tokens;		/* bytes; <= burst; < 0 after over-reads */
	rs_time_ns t;		/* last refill */
	bool t_set;
	double wsum;		/* sum of the weights of accounts */
	rs_time_ns share_refill;	/* pace_keep_share: the last dispatch
					 * stopped as every account in the round
					 * waited for its share; the earliest
					 * refills then (0: it did not) */
	uint64_t window_bytes;	/* sum of the clamps of open flows */
	struct rs_rate read;	/* s->bytes per second, samples of >= 100 ms */
	uint32_t room_run;	/* samples in a row with room and no flow
				 * waiting (pacer_advance()) */
	rs_time_ns base_rtt[2];	/* least RTT rs_flow_clamp() was given in
				 * the BASE_SPAN since base_t and in the one
				 * before it (0: none) */
	rs_time_ns base_t;
	double share_least;	/* least_flow_share() at the last sample
				 * (0: none yet) */
	rs_wake_fn wake;
};

struct rs_sched {
	struct rs_config cfg;
	const struct rs_policy_ops *pol;	/* cfg.policy (select.c) */
	const struct rs_controller_ops *ctl;	/* cfg.controller */
	rs_release_fn release;
	void *ctx;
	int in_callback;

	struct rs_class *cls;
	struct rs_cres *cres;	/* parallel to cls */
	uint32_t ncls, cls_cap;

	struct rs_req *req;
	uint32_t nreq, req_cap, req_free;
	uint32_t ghead, gtail;	/* global FIFO of waiting requests */
	uint32_t whead, wtail;	/* the window list, oldest release first */

	struct rs_users users;

	/* msf / rfq */
	struct rs_kheap ready;	/* classes with nq > 0, by (sc, -w*uc) */
	struct rs_kheap active;	/* classes with uc > 0, by sc; lazy: keys may
				 * lag behind SC, idle classes may remain */
	uint32_t nactive;	/* classes with uc > 0 */
	uint32_t pool_n;	/* active classes whose SC is still pool_sc, */
	double pool_sc;		/* the minimum SC when they became active */
	uint32_t *dirty;	/* classes with sc_pending bytes */
	uint32_t ndirty;
	uint32_t sc_epoch;

	/* drr */
	uint32_t rr_head, rr_tail;	/* round robin; head = current class */
	uint32_t rr_len;

	/* the server's resources (resources.c) */
	uint32_t (*cost)[RS_MAX_RESOURCES];	/* per request slot, req_cap */
	uint64_t res_used[RS_MAX_RESOURCES];	/* held by released requests */
	uint64_t res_excess[RS_MAX_RESOURCES];	/* used above a capacity that
						 * a reconfigure lowered */
	uint64_t res_consumed[RS_MAX_RESOURCES];
	uint64_t res_gen;	/* changes whenever res_used or a capacity
				 * does (take, give, reconfigure) */
	uint32_t res_free_for;	/* bit i: a waiting request may cost 0 of
				 * resource i (every one enqueued since the
				 * last reconfigure, and those it kept) */
	uint32_t resv;		/* the request reserved (reservation.c) */
	uint32_t resv_passed;	/* others released since it was */
	/* mqos: one sub-scheduler per resource */
	struct {
		uint32_t head, tail, len;	/* its classes; head = pointer */
		uint32_t moved;		/* pointer moves in this round */
		uint64_t round;		/* rounds completed */
	} mq[RS_MAX_RESOURCES];
	unsigned mq_order[RS_MAX_RESOURCES];	/* resources by availability */
	uint64_t mq_order_gen;	/* the res_gen mq_order is of */
	/* drf: classes with queued requests by weighted dominant share */
	struct rs_kheap drf;
	double drf_v;		/* drf: drf_used of the last pick (drf.c) */

	/* window */
	uint32_t W;
	double Wmax;
	double part_credit;	/* SMP: s the part slot may still be held,
				 * within +-RS_PART_CREDIT_S (window.c) */
	rs_time_ns part_t;	/* part_credit counted up to here */
	uint32_t waiting;	/* queued + held + scheduled, all classes */
	bool limited;		/* window was the limit in this interval */
	bool release_due;	/* an interval ended (W+ may have grown) with
				 * requests waiting and no release tried since:
				 * rs_next_deadline() is now */
	double U;
	rs_time_ns t_tick;	/* start of the current measurement interval */
	rs_time_ns next_tick;
	uint64_t bytes_at_tick;
	bool started;		/* clock seen at least once */
	/* wrc-aimd */
	uint64_t aimd_ends;
	uint64_t aimd_bytes;
	rs_time_ns aimd_t0;
	bool aimd_limited;

	/* rtc */
	struct rs_rtcq *rq;	/* rtc: per request slot */
	uint32_t rq_cap;
	struct rs_heap h_ft;	/* released/scheduled requests by ft */
	struct rs_heap h_rel;	/* scheduled requests by planned release */
	double bw_avail;	/* BW: bytes/s not promised to responses */
	uint32_t bw_holders;	/* requests holding bandwidth */
	rs_time_ns bw_time;	/* T_minFT: when bw_avail is available */
	uint32_t held;		/* request dequeued by the policy, or RS_NIL */

	struct rs_est est;

	/* long transfers and slow start (window.c) */
	uint64_t lt_thresh;	/* long_transfer, UINT64_MAX when off */
	rs_time_ns fast_until;	/* rs_on_bytes fast path: next_tick, or 0
				 * (not started, long transfers on) */
	uint32_t nlong;		/* released requests out of the window */
	bool ss;		/* slow start phase (wrc-mult, wrc-aimd) */
	rs_time_ns t_active;	/* last time something was queued/released */
	double aimd_exc;	/* exc_total at the aimd interval start */

	/* the link source (link.c) */
	enum rs_link_source link_src;
	rs_time_ns link_t;	/* start of the current sample */
	uint64_t link_mark;	/* bytes at link_t */
	double link_total;	/* link payload bytes (counter), cumulative */
	double exc_total;	/* exceptive bytes, cumulative */
	double exc_rate;	/* EWMA of the exceptive rate, bytes/s */
	double link_diff;	/* cumulative link payload - proxied (D) */
	double link_high;	/* its high-water mark H, >= D */
	bool link_full;		/* the counter's last sample carried >=
				 * LINK_ROOM of U+ * C (false without one) */
	double link_at_tick, exc_at_tick;
	/* the link's payload per wire byte (link.c, frame_scale()): decayed
	 * sums over the counter's busy samples with frames, and the scale of
	 * C they give, in [FRAME_SCALE_MIN, 1]; 1 without them */
	double frame_pay, frame_wire, frame_scale;
	/* this scheduler's share of the link (share.c), 1 alone */
	double link_share;
	rs_time_ns share_t;	/* previous rs_share_sample() */
	uint64_t share_mark;	/* bytes at share_t */
	bool share_users;	/* it had users at share_t */
	struct {		/* SMP: the workers' shared byte gates (gate.c) */
		uint64_t *tat;	/* [0] the proxy's, [1 + c] class c's; the
				 * host's memory; NULL: none */
		struct rs_gate_cls *cls;	/* per class */
		uint32_t ncls;	/* classes cls[] has room for */
	} gate;
	uint64_t st_link, st_proxied, st_exc;	/* last completed interval */
	double st_interval;

	/* the byte layer (pacer.c) */
	struct rs_pacer pc;
	double w_min;		/* smallest class weight */

	/* global statistics */
	uint64_t released, cancelled, ended, aborted, expired, rejected;
	uint64_t rejected_user, rejected_class;
	uint64_t reclaimed;	/* slots taken back by rs_reclaim() */
	uint64_t bytes;

	/* class name -> class index (names.c); cold: here, not with cls,
	 * so that it moves no field of the request path */
	struct rs_names byname;
#ifdef RS_DEBUG
	struct {
		uint32_t W;		/* W at the previous check */
		uint64_t bytes_gone;	/* bytes of classes reconfigure removed */
	} dbg;				/* check.c */
#endif
};

/* heap.c */
typedef bool (*rs_heap_less)(const struct rs_sched *s, uint32_t a, uint32_t b);
typedef void (*rs_heap_setpos)(struct rs_sched *s, uint32_t item, uint32_t pos);
struct rs_heap_ops {
	rs_heap_less less;
	rs_heap_setpos setpos;
};
int rs_heap_reserve(struct rs_heap *h, uint32_t cap);
static inline uint32_t rs_heap_top(const struct rs_heap *h)
{
	return h->n ? h->item[0] : RS_NIL;
}
void rs_heap_free(struct rs_heap *h);

/* users.c */
int rs_users_init(struct rs_users *u);
void rs_users_free(struct rs_users *u);
int rs_users_grow(struct rs_users *u);
/* Make sure one more entry can be added without failing: a free entry or
 * one more slot in ent, and the index at most half full with it (inline:
 * every enqueue asks, the table seldom grows). */
static inline int rs_users_reserve(struct rs_users *u)
{
	if ((u->free_head != RS_NIL || u->nent < u->cap) &&
	    (u->alive + 1) * 2 <= u->nslot)
		return 0;
	return rs_users_grow(u);
}
uint32_t rs_users_get(struct rs_sched *s, uint32_t cls, uint64_t key,
		      rs_time_ns now);		/* after reserve: never fails */
uint32_t rs_users_find(const struct rs_users *u, uint32_t cls, uint64_t key);
void rs_users_put(struct rs_sched *s, uint32_t idx, rs_time_ns now);
void rs_users_expire(struct rs_sched *s, rs_time_ns now);
int rs_users_reserve_n(struct rs_users *u, uint32_t n);
uint32_t rs_users_insert(struct rs_users *u, uint32_t cls, uint64_t key);
void rs_users_idle_add(struct rs_users *u, uint32_t idx);
uint32_t rs_users_idle_at(const struct rs_users *u, uint32_t i);

/* names.c: the class name index */
int rs_names_reserve(struct rs_names *t, uint32_t n);	/* room for n in all */
void rs_names_free(struct rs_names *t);
uint32_t rs_names_find(const struct rs_names *t, const char *name);
uint32_t rs_names_add(struct rs_names *t, const char *name, uint32_t idx);

/* msf.c: service counters and the ready/active class heaps (msf, rfq) */
extern const struct rs_policy_ops rs_msf_ops;
void rs_sc_ready(struct rs_sched *s, uint32_t c);
void rs_sc_empty(struct rs_sched *s, uint32_t c);
uint32_t rs_sc_pick(struct rs_sched *s);
double rs_sc_value(const struct rs_sched *s, uint32_t c);
void rs_sc_users_changing(struct rs_sched *s, uint32_t c);
void rs_sc_users_changed(struct rs_sched *s, uint32_t c);
void rs_sc_rebuild(struct rs_sched *s);
void rs_sc_fold(struct rs_sched *s);
/* The pending bytes of the dirty classes are folded into their SCs before
 * anything reads SC (inline: most decisions find no class dirty). */
static inline void rs_sc_flush(struct rs_sched *s)
{
	if (s->ndirty)
		rs_sc_fold(s);
}
/* The operations of the service counter policies (msf, rfq). */
#define RS_SC_OPS                                                       \
	.service_counter = true,                                        \
	.ready = rs_sc_ready,                                           \
	.empty = rs_sc_empty,                                           \
	.pick = rs_sc_pick,                                             \
	.service = rs_sc_value,                                         \
	.users_changing = rs_sc_users_changing,                         \
	.users_changed = rs_sc_users_changed,                           \
	.rebuild = rs_sc_rebuild

/* rfq.c */
extern const struct rs_policy_ops rs_rfq_ops;

/* drr.c (drr, and sqos over one resource's costs) */
extern const struct rs_policy_ops rs_drr_ops;
void rs_drr_ready(struct rs_sched *s, uint32_t c);
void rs_drr_empty(struct rs_sched *s, uint32_t c);
uint32_t rs_drr_pick(struct rs_sched *s);
double rs_drr_service(const struct rs_sched *s, uint32_t c);
#define RS_DRR_OPS                                                      \
	.service_counter = false,                                       \
	.per_user = false,                                              \
	.ready = rs_drr_ready,                                          \
	.empty = rs_drr_empty,                                          \
	.pick = rs_drr_pick,                                            \
	.service = rs_drr_service

/* queue.c: class sub-queues, the global FIFO and the release */
void rs_q_push(struct rs_sched *s, uint32_t r);
void rs_q_unlink(struct rs_sched *s, uint32_t r);
void rs_fifo_push(struct rs_sched *s, uint32_t r);
uint32_t rs_peek_from(const struct rs_sched *s, uint32_t c);
uint32_t rs_take_from(struct rs_sched *s, uint32_t c);
void rs_release(struct rs_sched *s, uint32_t r, rs_time_ns now);
void rs_q_drop(struct rs_sched *s, uint32_t r);

/* select.c: policy and controller tables, the next request */
const struct rs_policy_ops *rs_policy_ops_of(enum rs_policy p);
const struct rs_controller_ops *rs_controller_ops_of(enum rs_controller c);
void rs_select_bind(struct rs_sched *s);
uint32_t rs_select_next(struct rs_sched *s);	/* dequeue next or RS_NIL */

/* resources.c: the cost vectors and availability counters (RACs) */
int rs_res_reserve(struct rs_sched *s, uint32_t cap, bool nres);
void rs_res_set(struct rs_sched *s, uint32_t r, const uint32_t *cost);	/* s->cost */
void rs_res_take(struct rs_sched *s, uint32_t r);
void rs_res_give(struct rs_sched *s, uint32_t r);	/* RS_RF_HOLDS_RES */
void rs_res_reconfigured(struct rs_sched *s);
unsigned rs_res_tendency(const struct rs_sched *s, uint32_t r);
double rs_res_dominant(const struct rs_sched *s, uint32_t r);
double rs_res_share(const struct rs_sched *s, uint32_t c);
/* Resource i is one the policy manages (inline, as rs_res_cost: every
 * room check of every decision asks, per resource). */
static inline bool rs_res_managed(const struct rs_sched *s, unsigned i)
{
	return s->cfg.policy != RS_POLICY_SQOS || i == s->cfg.sqos_resource;
}

/* Request r's cost of resource i, at most its capacity. */
static inline uint32_t rs_res_cost(const struct rs_sched *s, uint32_t r,
				   unsigned i)
{
	uint32_t cap = s->cfg.res_capacity[i];

	return s->cost[r][i] < cap ? s->cost[r][i] : cap;
}

/* RAC_i / capacity_i: the fraction of resource i not held (mqos orders
 * the resources by it). */
static inline double rs_res_avail(const struct rs_sched *s, unsigned i)
{
	double cap = s->cfg.res_capacity[i];

	return (cap - (double)s->res_used[i]) / cap;
}

/* Every managed resource has room for request r (inline: the room check
 * of reservation.c, several per decision). */
static inline bool rs_res_fits(const struct rs_sched *s, uint32_t r)
{
	unsigned i;

	for (i = 0; i < s->cfg.nres; i++) {
		uint64_t c = rs_res_cost(s, r, i);

		if (c && rs_res_managed(s, i) &&
		    s->res_used[i] + c > s->cfg.res_capacity[i])
			return false;
	}
	return true;
}

/* reservation.c: may a request take its resources now */
bool rs_resv_admit(struct rs_sched *s, uint32_t r);
bool rs_resv_fits_beside(const struct rs_sched *s, uint32_t h, uint32_t r);
bool rs_resv_blocks_all(const struct rs_sched *s);
/* Request r leaves its queue, or is no longer what the policy would serve
 * next (inline: every release out of a queue, under every policy, asks). */
static inline void rs_resv_forget(struct rs_sched *s, uint32_t r)
{
	if (s->resv == r)
		s->resv = RS_NIL;
}

/* mqos.c, sqos.c, drf.c */
extern const struct rs_policy_ops rs_mqos_ops;
extern const struct rs_policy_ops rs_sqos_ops;
extern const struct rs_policy_ops rs_drf_ops;
int rs_drf_reserve(struct rs_sched *s, uint32_t n);

/* sff.c */
uint8_t rs_sff_classify(const struct rs_sched *s, const struct rs_user *u,
			rs_time_ns now);
uint8_t rs_sff_peek(const struct rs_sched *s, const struct rs_class *c);
void rs_sff_charge(struct rs_sched *s, struct rs_class *c, uint8_t sub,
		   uint64_t size);

/* estimator.c */
int rs_est_init(struct rs_est *e, uint64_t default_size);
void rs_est_free(struct rs_est *e);
uint64_t rs_est_size(const struct rs_est *e, const struct rs_req_info *info,
		     bool learned);
void rs_est_path(const struct rs_est *e, uint64_t host_key, double *rate,
		 double *delay);
void rs_est_learn(struct rs_est *e, const struct rs_req *r, bool size_ok,
		  double rate, double delay);

/* window.c: W <= W+, the release loop, long transfers, slow start, the
 * update interval; the fixed window */
extern const struct rs_controller_ops rs_fixed_ops;
void rs_window_start(struct rs_sched *s, rs_time_ns now);	/* W+_0 */
void rs_window_restart(struct rs_sched *s, const struct rs_controller_ops *old,
		       rs_time_ns now);	/* reconfigure */
void rs_window_release(struct rs_sched *s, rs_time_ns now);
void rs_window_measured(struct rs_sched *s, double U);
double rs_window_clamp(const struct rs_sched *s, double w);
double rs_window_limit(const struct rs_sched *s);	/* W <= ceil() */
double rs_window_open(const struct rs_sched *s);	/* slots open now */
bool rs_window_limits(const struct rs_sched *s);	/* waiting, W >= open */
#define RS_PART_CREDIT_S 1.0	/* bound of part_credit (s) */
void rs_part_slot_update(struct rs_sched *s, rs_time_ns now);	/* W moves */
rs_time_ns rs_part_slot_deadline(const struct rs_sched *s);
uint32_t rs_fixed_window(const struct rs_sched *s);	/* fixed W+ of the share */
double rs_utilization(const struct rs_sched *s, double bytes,
		      rs_time_ns elapsed);
void rs_tick(struct rs_sched *s, rs_time_ns now);
void rs_long_check(struct rs_sched *s, uint32_t r, rs_time_ns now);
void rs_window_hand_on(struct rs_sched *s, uint32_t r, rs_time_ns now);
void rs_slow_start_step(struct rs_sched *s);
bool rs_window_holds_back(const struct rs_sched *s);
void rs_window_room(struct rs_sched *s);	/* the pacer saw room */
void rs_window_share(struct rs_sched *s);	/* a class below its share */
void rs_window_params(struct rs_sched *s);	/* after cfg changes */

/* window.c: a slot closes (the one place W falls); leave: W - 1,
 * nlong + 1 */
void rs_window_close(struct rs_sched *s, uint32_t r, rs_time_ns now);
void rs_window_leave(struct rs_sched *s, uint32_t r, rs_time_ns now);
/* slotage.c: the window list of released requests, oldest first, and
 * rs_reclaim() */
size_t rs_slots_reclaim(struct rs_sched *s, rs_time_ns now, rs_time_ns max_age,
			rs_id *ids, void **cookies, size_t n);

/* wrc_mult.c, wrc_aimd.c */
extern const struct rs_controller_ops rs_wrc_mult_ops;
extern const struct rs_controller_ops rs_wrc_aimd_ops;

/* rtc.c */
extern const struct rs_controller_ops rs_rtc_ops;
void rs_rtc_init(struct rs_sched *s);
void rs_rtc_forget(struct rs_sched *s, uint32_t r);	/* cancel/end */
void rs_rtc_reset(struct rs_sched *s, rs_time_ns now);	/* reconfigure */

/* link.c */
static inline double rs_u_bytes(const struct rs_sched *s)
{
	return (double)s->bytes + s->exc_total;	/* proxied + exceptive */
}

/* pacer.c */
void rs_pacer_init(struct rs_sched *s);
void rs_pacer_free(struct rs_sched *s);
void rs_pacer_timer(struct rs_sched *s, rs_time_ns now);
void rs_pacer_refill(struct rs_sched *s, rs_time_ns now);

/* gate.c: SMP byte gates (no-ops without them). Bytes class cls may read
 * now (HUGE_VAL without gates); charge n bytes (returns the gate they were
 * taken from) and give them back to it; when need bytes will be there; use
 * gates, with room for every class's parts (rs_share_gates() sets them);
 * drop them (reconfigure, a class added). */
double rs_gate_left(const struct rs_sched *s, uint32_t cls, rs_time_ns now);
int rs_gate_charge(struct rs_sched *s, uint32_t cls, double n, rs_time_ns now);
void rs_gate_refund(struct rs_sched *s, uint32_t cls, int from, double n,
		    rs_time_ns now);
rs_time_ns rs_gate_ready(const struct rs_sched *s, uint32_t cls, double need,
			 rs_time_ns now);
int rs_gate_attach(struct rs_sched *s, uint64_t *gates);
void rs_gate_detach(struct rs_sched *s);
void rs_pacer_cap(struct rs_sched *s);
rs_time_ns rs_pacer_deadline(const struct rs_sched *s);
void rs_pacer_rebuild(struct rs_sched *s, const uint32_t *map);

/* check.c: the invariants, after every public operation (RS_DEBUG) */
#ifdef RS_DEBUG
void rs_check(struct rs_sched *s, const char *op);
#else
#define rs_check(s, op) ((void)0)
#endif

/* sched.c helpers */
int rs_class_reserve(struct rs_sched *s, uint32_t n);
void rs_class_init(struct rs_class *k, char *name, double weight);
void rs_cres_init(struct rs_cres *r);
bool rs_weight_ok(double w);
#define RS_MSS 1448.0	/* the byte layer's segment: Ethernet's TCP MSS with
			 * timestamps */

/* This scheduler's C, bytes/s of TCP payload: its share of the link
 * (share.c), in segments of the size the link counter's frames carry
 * (link.c; C as configured is of full-size segments). */
static inline double rs_link_Bps(const struct rs_sched *s)
{
	return (double)s->cfg.link_bps / 8.0 * s->link_share * s->frame_scale;
}

/* C * U+ less the exceptive rate of the link counter (link.c), at least
 * 5 % of C: the pacer's R and rtc's bandwidth, bytes/s. */
static inline double rs_full_rate(const struct rs_sched *s)
{
	double c = rs_link_Bps(s);
	double r = c * s->cfg.target_util - s->exc_rate;

	return r > 0.05 * c ? r : 0.05 * c;
}

/* The rate of the pacer's own token bucket: R, or with shared gates the
 * whole proxy's R (the gates bound the proxy; gate.c). */
static inline double rs_pace_rate(const struct rs_sched *s)
{
	double r = rs_full_rate(s);

	return s->gate.tat ? r / s->link_share : r;
}

/* Whether the configuration reads the size estimator: drr's charges, rtc's
 * plans (sizes, the hosts' rates and delays), sff's groups. When nothing
 * does, a request is charged default_size (or the caller's est_size), its
 * end teaches the estimator nothing, and a caller may leave the keys of
 * struct rs_req_info 0 (rs_reads_size_estimates()). */
static inline bool rs_est_read(const struct rs_sched *s)
{
	return s->pol->reads_size || s->ctl->reads_size || s->cfg.sff;
}

/* The sub-queue of request r (new, or requeued by a reconfigure): sff's
 * group, mqos's resource, else 0 (inline: every enqueue asks). */
static inline uint8_t rs_q_sub(const struct rs_sched *s, uint32_t r,
			       rs_time_ns now)
{
	if (s->cfg.sff)
		return rs_sff_classify(s, &s->users.ent[s->req[r].user], now);
	if (s->pol->sub_ready)
		return (uint8_t)rs_res_tendency(s, r);
	return 0;
}

/* Request r was taken from the policy but goes away unreleased. */
static inline void rs_policy_refund(struct rs_sched *s, uint32_t r)
{
	if (s->pol->refund)
		s->pol->refund(s, r);
}

/* The pacer's bucket B at rate R: two segments or 5 ms of R. */
static inline double rs_pacer_burst(double rate)
{
	return rate * 0.005 > 2 * RS_MSS ? rate * 0.005 : 2 * RS_MSS;
}

/* q at rate R: one segment or 2 ms of R, the least a grant is worth
 * waking a flow for (each wait costs the proxy an event-loop pass and a
 * read taken off and put back on epoll). q < B, or a waiting flow would
 * never be served. 4 ms cut Squid's system calls but moved the window
 * (doc/testbed.md, *Larger grants*). */
static inline double rs_grant_least(double rate)
{
	return rate * 0.002 > RS_MSS ? rate * 0.002 : RS_MSS;
}

/* slotage.c's window list (inline: every release and end takes a slot and
 * gives it back). Request r was released: it takes a slot, the newest. */
static inline void rs_slot_open(struct rs_sched *s, uint32_t r)
{
	rs_list_append(RS_LINKS(s->req, gnext, gprev), &s->whead, &s->wtail, r);
}

/* Request r leaves its slot (it ends, or leaves the window). */
static inline void rs_slot_close(struct rs_sched *s, uint32_t r)
{
	rs_list_cut(RS_LINKS(s->req, gnext, gprev), &s->whead, &s->wtail, r);
}

/* Release what the controller allows now. */
static inline void rs_try_release(struct rs_sched *s, rs_time_ns now)
{
	s->release_due = false;
	s->ctl->release(s, now);
}
static inline uint64_t rs_sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Every entry point that returns an error: a scheduler, not called from
 * inside a callback (release or wake). */
static inline int rs_entry_err(const struct rs_sched *s)
{
	if (!s)
		return RS_EINVAL;
	if (s->in_callback)
		return RS_EBUSY;
	return 0;
}

static inline void rs_advance(struct rs_sched *s, rs_time_ns now)
{
	if (!s->started || now >= s->next_tick)
		rs_tick(s, now);
}

/* The id of request slot r: its generation and its index + 1. */
static inline rs_id rs_make_id(const struct rs_sched *s, uint32_t r)
{
	return ((uint64_t)s->req[r].gen << 32) | (uint64_t)(r + 1);
}

/* rs_expire(), rs_reclaim(): request r, timed from since, is at least age
 * old at now; its id and cookie go to ids[i] and cookies[i] (either array
 * may be NULL). False (nothing written) when it is younger. */
static inline bool rs_hand_out_if_old(const struct rs_sched *s, uint32_t r,
				      rs_time_ns since, rs_time_ns now,
				      rs_time_ns age, rs_id *ids,
				      void **cookies, size_t i)
{
	if (since > now || now - since < age)
		return false;
	if (ids)
		ids[i] = rs_make_id(s, r);
	if (cookies)
		cookies[i] = s->req[r].cookie;
	return true;
}

/* Slot of a live request id, or RS_NIL. */
static inline uint32_t rs_lookup(const struct rs_sched *s, rs_id id)
{
	uint32_t low = (uint32_t)id, r;

	if (low == 0)
		return RS_NIL;
	r = low - 1;
	if (r >= s->nreq || s->req[r].state == RS_ST_FREE ||
	    s->req[r].gen != (uint32_t)(id >> 32))
		return RS_NIL;
	return r;
}

/* msf/rfq: bytes of class c (byte events: O(1), no allocation). */
static inline void rs_sc_add_bytes(struct rs_sched *s, uint32_t c, uint64_t n)
{
	struct rs_class *k = &s->cls[c];

	if (!s->pol->service_counter || !n)
		return;
	if (k->sc_epoch != s->sc_epoch) {
		/* idle since the last reset: its SC is 0 */
		k->sc = 0;
		k->sc_pending = 0;
		k->sc_epoch = s->sc_epoch;
	}
	k->sc_pending = rs_sat_add(k->sc_pending, n);
	if (!k->dirty) {
		k->dirty = 1;
		s->dirty[s->ndirty++] = c;
	}
}

/* n bytes of class cls (user: entry index or RS_NIL) read after `before`
 * bytes of the same response or flow: class and global counters, service
 * counter, sff recent service. The bytes a response or flow reads once it
 * has long_transfer bytes are the pacer's to share, not the admission's:
 * they do not count in the service counter, so a class is not made to
 * wait for its next start because the pacer gave its downloads their
 * bytes (without pacing lt_thresh is UINT64_MAX: all count, as MSF-RS). */
static inline void rs_account_bytes(struct rs_sched *s, uint32_t cls,
				    uint32_t user, uint64_t n, uint64_t before,
				    rs_time_ns now)
{
	struct rs_class *k = &s->cls[cls];

	k->bytes = rs_sat_add(k->bytes, n);
	s->bytes = rs_sat_add(s->bytes, n);
	if (before < s->lt_thresh)
		rs_sc_add_bytes(s, cls, n);
	if (user != RS_NIL && s->cfg.sff) {
		struct rs_user *u = &s->users.ent[user];

		if (now > u->last_seen &&
		    now - u->last_seen > s->cfg.sff_flow_timeout)
			u->recent = 0;
		u->recent = rs_sat_add(u->recent, n);
		if (now > u->last_seen)
			u->last_seen = now;
	}
}

/* Response bytes of released request r, counted (calls nothing);
 * returns the request's byte count. */
static inline uint64_t rs_req_count(struct rs_sched *s, uint32_t r,
				    uint64_t n, rs_time_ns now)
{
	struct rs_req *q = &s->req[r];
	uint64_t b = rs_sat_add(q->bytes, n);

	rs_account_bytes(s, q->cls, q->user, n, q->bytes, now);
	q->bytes = b;
	return b;
}

/* Response bytes of released request r (rs_on_bytes, rs_flow_read). A
 * request reaching long_transfer leaves the window (releases may follow). */
static inline void rs_req_bytes(struct rs_sched *s, uint32_t r, uint64_t n,
				rs_time_ns now)
{
	if (__builtin_expect(rs_req_count(s, r, n, now) >= s->lt_thresh, 0))
		rs_long_check(s, r, now);
}

/* Foreign bytes of (cls, user key), read by a flow (a tunnel) after its
 * first `before` bytes (0 without a flow). */
static inline void rs_foreign_bytes(struct rs_sched *s, uint32_t cls,
				    uint64_t user, uint64_t n, uint64_t before,
				    rs_time_ns now)
{
	s->cls[cls].foreign_bytes = rs_sat_add(s->cls[cls].foreign_bytes, n);
	rs_account_bytes(s, cls, rs_users_find(&s->users, cls, user), n,
			 before, now);
}

/* misc.c: an array of cap elements of size bytes (a multiple of RS_LINE)
 * on cache-line boundaries, the first n copied from old (then freed) and
 * the rest zero; NULL when out of memory (old kept) */
void *rs_line_array(void *old, size_t n, size_t cap, size_t size);

/* misc.c: FNV-1a 64 continued from h (rs_hash() is it from the basis,
 * 0 mapped to 1) */
#define RS_FNV_BASIS 0xcbf29ce484222325ULL
uint64_t rs_fnv(uint64_t h, const void *data, size_t len);

#endif /* REQSCHED_INTERNAL_H */
