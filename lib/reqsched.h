/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reqsched.h - request scheduling for a proxy at the user side of a congested
 * access link (MSF-RS, FQRS, RQS, DRR-SFF).
 *
 * The library decides WHICH queued request goes next (the selection policy)
 * and WHEN (the window controller, which caps the number of outstanding
 * responses W at W+). It does no I/O, keeps no global state and reads no
 * clock: every entry point takes the caller's time in nanoseconds. An
 * instance is not thread safe: use it from one thread (or lock around it).
 *
 * Requests are named by rs_id handles (index + generation), never by
 * pointers, so a stale or repeated call is detected and returns an error
 * instead of touching freed memory. Every function that can fail returns
 * 0 or a negative RS_E* code and leaves all counters unchanged on error.
 *
 * Lifecycle of one request:
 *   rs_enqueue()  -> QUEUED ---- rs_cancel() ----------------> gone
 *                      |
 *                  release callback (inside rs_enqueue/rs_on_end/rs_on_timer)
 *                      v
 *                   RELEASED -- rs_on_first_byte/rs_on_bytes* -- rs_on_end() -> gone
 * The release callback is the only way a request leaves the queue towards the
 * network; the caller must eventually call rs_on_end() exactly once for it.
 */
#ifndef REQSCHED_H
#define REQSCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t rs_time_ns;	/* caller's monotonic clock */
typedef uint64_t rs_id;		/* request handle; 0 is never valid */

#define RS_NSEC_PER_SEC 1000000000ULL

enum rs_error {
	RS_OK = 0,
	RS_EINVAL = -1,		/* bad argument (weight <= 0, NULL, bad config) */
	RS_ENOCLASS = -2,	/* unknown class index or name */
	RS_ESTALE = -3,		/* id unknown or already ended/cancelled */
	RS_ESTATE = -4,		/* wrong state (cancel of a released request, ...) */
	RS_ENOMEM = -5,
	RS_EEXIST = -6,		/* duplicate class name */
	RS_EFULL = -7,		/* max_queued reached (counted in rejected) */
	RS_EBUSY = -8,		/* called from inside the release callback */
	RS_EUSERFULL = -9,	/* max_queued_user reached for the request's
				 * (class, user) (counted in rejected_user) */
	RS_ECLASSFULL = -10,	/* max_queued_class reached for its class
				 * (counted in rejected_class) */
};

enum rs_policy {
	RS_POLICY_MSF,		/* MSF-RS: SC += L / (w * UC), user-based fairness */
	RS_POLICY_RFQ,		/* FQRS:   SC += L / w, class-based fairness */
	RS_POLICY_DRR,		/* RQS: DRR over estimated response sizes */
	RS_POLICY_MQOS,		/* mQoS: multi-resource DRR, every resource
				 * (website gateway; needs cfg.nres) */
	RS_POLICY_SQOS,		/* single-resource DRR over the cost of
				 * resource sqos_resource (mQoS's baseline) */
	RS_POLICY_DRF,		/* Dominant Resource Fairness (Ghodsi et al.,
				 * NSDI 2011) over the resources held */
};

/* Most resources a request can cost (CPU, disk, bandwidth, ...). */
#define RS_MAX_RESOURCES 4

enum rs_controller {
	RS_WIN_WRC_MULT,	/* MSF-RS Eq. 3, every update_interval */
	RS_WIN_WRC_AIMD,	/* FQRS: every F*W+ completions, fast start */
	RS_WIN_RTC,		/* RQS release-time controller */
	RS_WIN_FIXED,		/* constant window fixed_window */
};

struct rs_config {
	enum rs_policy policy;
	bool sff;			/* DRR-SFF modifier on top of policy */
	enum rs_controller controller;
	uint64_t link_bps;		/* downlink capacity C, bits/s of TCP
					 * payload in full-size segments, > 0 */
	double target_util;		/* U+, (0, 1] */
	rs_time_ns update_interval;	/* wrc-mult interval T */
	double K;			/* wrc-mult max growth factor, >= 1 */
	unsigned F;			/* wrc-aimd: interval = F * W+ completions */
	unsigned fixed_window;		/* RS_WIN_FIXED: N >= 1 */
	double initial_window;		/* W+_0 (>= 1) */
	double max_window;		/* upper clamp of W+ (0 = none) */
	/* drr */
	uint64_t drr_quantum;		/* bytes per unit of weight per round */
	bool drr_compensation;		/* RQS Fig. 8 compensation */
	uint64_t default_size;		/* estimator default, bytes */
	/* sff */
	uint64_t sff_threshold;		/* bytes of recent service, th */
	rs_time_ns sff_flow_timeout;	/* recent service resets after idle */
	unsigned sff_alpha;		/* quantum ratio priority:best-effort */
	/* limits on waiting (queued, not yet released) requests, checked
	 * in this order by rs_enqueue(), so that a request over a user's or
	 * a class's limit is refused before it can fill the global queue */
	size_t max_queued_user;		/* per (class, user); 0 = unlimited */
	size_t max_queued_class;	/* per class; 0 = unlimited */
	size_t max_queued;		/* all classes; 0 = unlimited */
	/* the byte layer (pacer.c): weighted-fair, paced reads of responses */
	bool pacing;			/* false: every allowance is granted at once */
	uint64_t long_transfer;		/* pacing: a released response that has
					 * received this many bytes leaves the
					 * window (0 = never) */
	bool pace_keep_share;		/* pacing: an account reads at most its
					 * weighted share of R among the accounts
					 * with open flows (its class's absent
					 * users' shares lent to it), even while
					 * the others wait for their servers;
					 * false: the pacer is work-conserving */
	/* the server's resources (mqos, sqos, drf; the other policies
	 * ignore them): a released request holds its cost vector of them
	 * until its end, and goes only when the resources it needs are
	 * available (resources.c) */
	unsigned nres;			/* 1..RS_MAX_RESOURCES; 0 = none */
	uint32_t res_capacity[RS_MAX_RESOURCES];	/* units, >= 1 */
	double res_quantum;		/* mqos, sqos: fraction of each
					 * capacity per unit of weight per
					 * DRR round, (0, 1] */
	unsigned sqos_resource;		/* sqos: the resource it schedules */
};

/* Fill *cfg with the papers' defaults: msf, wrc-mult, U+ = 0.98, T = 5 s,
 * K = 2, F = 4, W+_0 = 1, default_size = 27656, th = 20 KB, flow timeout
 * 10 s, alpha = 2, compensation on; no resources (nres = 0, capacities
 * 100, res_quantum 0.05, sqos_resource 0). link_bps must still be set.
 * mqos, sqos and drf need nres >= 1 and refuse sff and rtc. */
void rs_config_default(struct rs_config *cfg);
int rs_config_check(const struct rs_config *cfg);	/* 0 or RS_EINVAL */

/* Called when a request is released (the window had room). It may fire
 * inside rs_enqueue(), rs_cancel(), rs_on_end(), rs_on_timer(),
 * rs_expire() and rs_reconfigure(). The callback must not re-enter the
 * scheduler instance that called it: it records the release (e.g. schedules
 * an AsyncCall) and returns. */
typedef void (*rs_release_fn)(void *ctx, rs_id id, void *cookie);

struct rs_sched;

struct rs_sched *rs_new(const struct rs_config *cfg, rs_release_fn release,
			void *ctx);
void rs_free(struct rs_sched *s);

/* Classes: returns the class index (>= 0) or a negative RS_E* code. */
int rs_class_add(struct rs_sched *s, const char *name, double weight);
int rs_class_find(const struct rs_sched *s, const char *name);
int rs_class_count(const struct rs_sched *s);

/* Response size estimation keys (caller hashes strings with rs_hash()). A
 * zero key is "unknown". est_size > 0 overrides the learned estimate. */
struct rs_req_info {
	uint64_t url_key;
	uint64_t host_key;
	uint64_t type_key;		/* content type, when known in advance */
	uint64_t est_size;
};
uint64_t rs_hash(const void *data, size_t len);	/* FNV-1a, never 0 */
/* The response size the scheduler would assume for a request with info
 * (URL -> host -> content type history, else default_size). */
uint64_t rs_estimate_size(const struct rs_sched *s,
			  const struct rs_req_info *info);
/* 1 if the configured policy or controller reads size estimates (drr,
 * sff, rtc), else 0: then the scheduler neither looks the keys up nor learns
 * from ends, and a caller may skip hashing them (leave them 0). */
int rs_reads_size_estimates(const struct rs_sched *s);

/* Queue a request. On success *id is set and the release callback may fire
 * before this returns. info may be NULL. A queue limit refuses it with
 * RS_EUSERFULL, RS_ECLASSFULL or RS_EFULL (the first limit reached, in that
 * order) and counts it in rejected (and the class's rejected). */
int rs_enqueue(struct rs_sched *s, int cls, uint64_t user,
	       const struct rs_req_info *info, void *cookie, rs_time_ns now,
	       rs_id *id);
/* The same with the request's cost: cost[i] units of resource i (i <
 * cfg.nres) held from its release to its end. cost may be NULL (nothing);
 * a cost above a capacity counts as the whole capacity. rs_enqueue() is
 * rs_enqueue_cost() with cost NULL. */
int rs_enqueue_cost(struct rs_sched *s, int cls, uint64_t user,
		    const struct rs_req_info *info, const uint32_t *cost,
		    void *cookie, rs_time_ns now, rs_id *id);
int rs_cancel(struct rs_sched *s, rs_id id, rs_time_ns now);	/* queued only */

/* Response events of a released request. content_length < 0 = unknown.
 * A second rs_on_first_byte() for the same request returns RS_ESTATE.
 * Events on a queued request return RS_ESTATE, on an ended, cancelled or
 * expired one RS_ESTALE. rs_on_end() counts in ended (and aborted). */
int rs_on_first_byte(struct rs_sched *s, rs_id id, int64_t content_length,
		     rs_time_ns now);
/* With cfg.pacing and cfg.long_transfer > 0, the byte event that brings a
 * response to long_transfer bytes takes it out of the window (it stays
 * RELEASED; rs_on_end() is still due) and the release callback may fire
 * inside rs_on_bytes() (and rs_flow_read()) for the requests that take its
 * place. A reconfigure that turns pacing off leaves long transfers out of
 * the window until they end. */
int rs_on_bytes(struct rs_sched *s, rs_id id, uint64_t n, rs_time_ns now);
/* The response has wholly crossed the link (the server side is done) but
 * the request cannot end yet: the proxy still holds it (an adaptation
 * service has not answered). It leaves the window as a long transfer does
 * (its slot goes to the next request: the release callback may fire
 * inside); its bytes still count and rs_on_end() is still due. 0 also when
 * it had already left the window. */
int rs_on_link_done(struct rs_sched *s, rs_id id, rs_time_ns now);
int rs_on_end(struct rs_sched *s, rs_id id, bool aborted, rs_time_ns now);
/* Bytes of a class not caused by a scheduled request (CONNECT tunnels). */
int rs_on_foreign_bytes(struct rs_sched *s, int cls, uint64_t user,
			uint64_t n, rs_time_ns now);

/* Timer-driven controllers: the caller calls rs_on_timer() at or after
 * rs_next_deadline() (UINT64_MAX = no timer needed). Releases happen in
 * the calls that say so; when a measurement interval ends inside another
 * call (the window may have grown) while requests wait, the deadline is
 * one already passed, so that the next timer releases them. */
rs_time_ns rs_next_deadline(const struct rs_sched *s);
void rs_on_timer(struct rs_sched *s, rs_time_ns now);

/* Requests queued for at least max_wait: returns up to n cookies/ids of
 * the oldest such queued requests and removes them (counted in expired,
 * not cancelled). ids and cookies may be NULL. */
size_t rs_expire(struct rs_sched *s, rs_time_ns now, rs_time_ns max_wait,
		 rs_id *ids, void **cookies, size_t n);

/* Window slots held for at least max_age (released that long ago, still
 * in the window): returns up to n cookies/ids of the oldest such requests
 * and takes their slots back, releasing queued requests in their place
 * (counted in reclaimed). A reclaimed request stays released, out of the
 * window as a long transfer is: its bytes still count and rs_on_end() is
 * still due. ids and cookies may be NULL. */
size_t rs_reclaim(struct rs_sched *s, rs_time_ns now, rs_time_ns max_age,
		  rs_id *ids, void **cookies, size_t n);

/* Reconfiguration: replaces config and class set, keeps every queued and
 * outstanding request. Classes are matched by name; requests of a removed
 * class move to class default_name (which must be in names). */
int rs_reconfigure(struct rs_sched *s, const struct rs_config *cfg,
		   const char *const *names, const double *weights, int n,
		   const char *default_name, rs_time_ns now);

/*
 * The whole link. By default U (every controller) and the pacer's rate see
 * only the bytes the proxy reads itself. A caller that can read a counter of
 * the whole downlink (an interface, the router's ifHCInOctets) switches the
 * source to RS_LINK_COUNTER and reports every increment of that counter with
 * rs_on_link_bytes(). The exceptive bytes (the traffic that bypasses the
 * proxy) are the new highs of the cumulative difference link bytes - bytes
 * the proxy read, so bytes that cross the link a little before the proxy
 * reads them are not counted as exceptive (link.c). Switching back to RS_LINK_PROXIED (the
 * counter went stale, wrapped or vanished) forgets the exceptive rate.
 */
enum rs_link_source {
	RS_LINK_PROXIED,		/* U from the proxy's own bytes */
	RS_LINK_COUNTER,		/* U from rs_on_link_bytes() */
};
int rs_set_link_source(struct rs_sched *s, enum rs_link_source src,
		       rs_time_ns now);
/* n bytes in `frames` frames crossed the downlink since the previous call,
 * as interface counters count them (a frame: its link, IP and TCP headers
 * and its payload); the caller takes the differences of its cumulative
 * counters and handles wrap and reset. link_bps and every byte the proxy
 * reports are TCP payload, so the library takes RS_FRAME_OVERHEAD bytes
 * off every frame (a frame without payload, an ACK, counts 0), or, from a
 * counter of bytes alone (frames 0: an SNMP octet counter), converts n with
 * RS_WIRE_PAYLOAD_RATIO, which holds for full-size segments only. link_bps
 * is of full-size segments (a line rate times RS_WIRE_PAYLOAD_RATIO); with
 * frames the library measures the payload the link's frames carry and
 * scales C to it (rs_stats.payload_per_wire). */
#define RS_FRAME_OVERHEAD 66	/* Ethernet 14 + IPv4 20 + TCP 20 + timestamps 12 */
#define RS_WIRE_PAYLOAD_RATIO (1448.0 / 1514.0)
int rs_on_link_bytes(struct rs_sched *s, uint64_t n, uint64_t frames,
		     rs_time_ns now);

/*
 * The byte layer: flows and the pacer. A flow is one stream of response
 * bytes that the proxy reads from a server: a released request's response
 * (bound to its rs_id), a CONNECT tunnel's server side or an upgraded
 * connection (bound to a class and user only). Before every read the caller
 * asks rs_flow_allowance(); after it, rs_flow_read() with what it read. With
 * cfg.pacing the pacer grants reads at rate R = U+ * C - exceptive rate, in
 * weighted fair order of what accounts read (msf: one account per (class,
 * user) of weight w; rfq and drr: one per class), so the bytes on the link
 * follow the weights whatever the window is. A flow
 * refused now waits; the wake callback fires (from rs_on_timer()) when it may
 * read, and the caller then asks again. Without cfg.pacing every allowance is
 * granted at once and flows only count bytes.
 *
 * rs_flow_clamp() is the receive window (TCP_WINDOW_CLAMP) the caller should
 * keep on the flow's connection: enough for the flow's weighted share of R
 * over the measured RTT, so that the senders' bytes in flight stay near the
 * bandwidth-delay product and the access link's queue stays short.
 *
 * Bytes read through a flow bound to a request count for that request as
 * rs_on_bytes() would (do not call both); bytes of an unbound flow count as
 * rs_on_foreign_bytes() of its class and user. With pacing, the bytes a
 * response or a flow reads past long_transfer are the pacer's to share:
 * they count in the class's bytes but not in its service counter, so
 * admission does not hold a class back for its downloads.
 */
typedef uint64_t rs_flow;	/* flow handle; 0 is never valid */
typedef void (*rs_wake_fn)(void *ctx, rs_flow f, void *cookie);
void rs_set_wake(struct rs_sched *s, rs_wake_fn wake);	/* ctx of rs_new() */
/* req != 0: bound to a released request (cls and user are ignored). */
int rs_flow_open(struct rs_sched *s, rs_id req, int cls, uint64_t user,
		 void *cookie, rs_time_ns now, rs_flow *f);
int rs_flow_close(struct rs_sched *s, rs_flow f, rs_time_ns now);
/* How many of want bytes the flow may read now: > 0, or 0 (the flow now
 * waits; wake fires later), or a negative RS_E* code. */
int64_t rs_flow_allowance(struct rs_sched *s, rs_flow f, uint64_t want,
			  rs_time_ns now);
/* The allowance's test asked ahead, before the bytes are there (e.g. right
 * after a read): 1 when rs_flow_allowance() would refuse now, and the flow
 * then waits as if it had been refused (the caller waits for the wake
 * instead of polling its socket first); 0 when it may read now, nothing
 * taken (also when it holds a grant or an allowance it has not read);
 * or a negative RS_E* code. */
int rs_flow_wait_ahead(struct rs_sched *s, rs_flow f, uint64_t want,
		       rs_time_ns now);
/* Inside rs_flow_read() (and rs_flow_close(), rs_on_timer(),
 * rs_reconfigure()) the wake callback may fire for other flows, and the
 * release callback as for rs_on_bytes(). A wake callback must not re-enter
 * the instance (RS_EBUSY). A grant not asked for within 1 s is reclaimed;
 * reading without asking takes a pending grant first; bytes beyond the
 * allowance are counted and taken from the pacer's tokens. n = 0 (the
 * socket had nothing yet): the allowance goes back whole, nothing counts. */
int rs_flow_read(struct rs_sched *s, rs_flow f, uint64_t n, rs_time_ns now);
/* rtt = 0: unknown (a nominal 100 ms is assumed). Bytes, >= 2 segments;
 * 0 for a stale flow handle. */
uint32_t rs_flow_clamp(const struct rs_sched *s, rs_flow f, rs_time_ns rtt);

struct rs_class_stats {
	const char *name;
	double weight;
	uint32_t active_users;		/* UC */
	uint32_t queued;
	uint32_t outstanding;
	double service;			/* SC (msf/rfq) or deficit (drr) */
	uint64_t bytes;			/* scheduled + foreign */
	uint64_t foreign_bytes;
	uint64_t released, cancelled, ended, aborted, expired;
	uint64_t rejected;		/* refused by any queue limit */
	double throughput_bps;		/* over the last update interval */
	uint32_t flows;			/* open flows */
	double share_bps;		/* its weighted share of the pacer rate
					 * among classes with open flows */
};

struct rs_stats {
	uint32_t W;			/* outstanding responses */
	double W_max;			/* W+ (rtc has no window: W_max = W) */
	double U;			/* last measured utilization (bytes incl.
					 * foreign / interval / C) */
	uint64_t link_bps;		/* C, as configured */
	double payload_per_wire;	/* the link's TCP payload per wire byte
					 * that C is scaled by: measured from
					 * the counter's frames (link.c), else
					 * RS_WIRE_PAYLOAD_RATIO */
	double link_share;		/* of C this scheduler schedules (SMP) */
	uint32_t queued;
	uint64_t released, cancelled, ended, aborted, expired;
	uint64_t rejected;		/* refused by a queue limit: all kinds */
	uint64_t rejected_user;		/* of them by max_queued_user */
	uint64_t rejected_class;	/* of them by max_queued_class */
	uint64_t bytes;
	uint32_t users;			/* (class,user) entries alive */
	/* the link, over the last completed update interval */
	enum rs_link_source link_source;
	uint64_t link_bytes;		/* = proxied_bytes with RS_LINK_PROXIED */
	uint64_t proxied_bytes;
	uint64_t exceptive_bytes;
	double interval_s;
	/* the byte layer, now */
	double pace_bps;		/* R (bits/s); with pacing off, C * U+ */
	uint32_t flows, flows_waiting;
	uint64_t window_bytes;		/* sum of the clamps last computed for
					 * open flows: the senders' bytes in
					 * flight can be at most this */
	uint32_t long_transfers;	/* released responses out of the window
					 * (long transfers and reclaimed slots) */
	uint64_t reclaimed;		/* slots taken back by rs_reclaim() */
};

void rs_get_stats(const struct rs_sched *s, struct rs_stats *st);

/* W+ of the window controller in the proxy's units: rs_stats.W_max is what
 * this scheduler releases up to, with SMP workers its link share's part of
 * W+. What a restarted proxy starts from (cfg.initial_window); without a
 * window (rtc) the outstanding responses, as W_max. */
double rs_window_max(const struct rs_sched *s);

/* ---- SMP: one link, one scheduler per worker (share.c) ----
 * A proxy with several worker processes runs one scheduler in each; each
 * schedules a share f of the link (C, the pacer's rate, the fixed window
 * and a link counter's bytes times f). The host keeps a table of rows, one
 * per worker, where every worker reads it (shared memory), and at every
 * update each worker:
 *   rs_share_sample(s, now, users, &rows[self]);   its own row
 *   f = rs_share_of(s, rows, nworkers, self);       every row
 *   rs_set_link_share(s, f, now);
 *   rs_share_window(s, rows, nworkers, now);         one W+ for the proxy
 * rs_share_sample() fills users[rs_class_count(s)] with each class's users
 * (a request queued or outstanding, or a flow open) and points row->users
 * at it. rs_share_of() reads only the rows (the same table gives every
 * worker the same shares); rows must be indexed by the same classes as s. */
#define RS_SHARE_MAX_WORKERS 64
struct rs_share_row {
	const uint32_t *users;		/* per class */
	double used;			/* fraction of C read since the
					 * previous sample */
	double held;			/* fraction of C its outstanding
					 * responses hold: W / W+ times its
					 * share (rtc: its promised bandwidth),
					 * at most its share */
	bool limited;			/* requests or flows wait at the
					 * sample, or it is waking up (no
					 * sample for a second, or no users at
					 * the previous one) */
	double share;			/* its share of the link at the sample */
	double window_max;		/* an adaptive controller's W+ in the
					 * proxy's units; 0 otherwise */
};
int rs_share_sample(struct rs_sched *s, rs_time_ns now, uint32_t *users,
		    struct rs_share_row *row);
double rs_share_of(const struct rs_sched *s, const struct rs_share_row *rows,
		   unsigned n, unsigned self);
/* The share of a worker without users among n live rows (5 % of 1/n): what
 * a worker that goes idle takes, so that its next first request is read
 * slowly until its next update rather than at a share it had before. */
double rs_share_idle(unsigned n);
/* Bounded shares (a fixed window: its slots bound the whole proxy). The
 * host keeps one budget of 1 and each worker's claim on it, and moves a
 * claim with an atomic compare-and-swap on the sum of the claims, so that
 * a claim grows only out of what is left and the claims never add up to
 * more than 1; a dead worker's claim goes back when its row expires.
 * After rs_share_of():
 *   want = rs_share_claim(s, f);     the claim to hold (0: not bounded)
 *   claimed = the claim the budget let it hold (a smaller want: all)
 *   rs_set_link_share(s, rs_share_granted(s, f, claimed, n), now);
 * rs_share_claim() is max(f, W / fixed window) (f when W is the one slot
 * every busy worker has), at most 1;
 * rs_share_granted() is min(f, claimed), at least rs_share_idle(n), or f
 * unchanged when shares are not bounded. */
double rs_share_claim(const struct rs_sched *s, double f);
double rs_share_granted(const struct rs_sched *s, double f, double claimed,
			unsigned n);
int rs_set_link_share(struct rs_sched *s, double share, rs_time_ns now);
/* One adaptive window for the proxy: W+ becomes the mean of the n rows'
 * W+ weighted by their shares (the proxy's slots, sum f_j W+_j, over the
 * shares they were held at), so that every worker holds its share of one
 * window. Each worker's controller still moves its own W+ between two
 * updates (its signals are its own); the mean keeps the workers' views of
 * the proxy's window from drifting apart. A fixed window or rtc, or no row
 * with an adaptive W+: nothing changes. */
int rs_share_window(struct rs_sched *s, const struct rs_share_row *rows,
		    unsigned n, rs_time_ns now);
/* Shared byte gates (the byte layer, gate.c): the workers' pacers read
 * through one gate per class and one for the proxy, so that a class's share
 * holds whichever worker serves its users. gates: RS_SHARE_GATES(classes)
 * uint64_t, zeroed once, 8-byte aligned, where every worker reads and
 * writes them (shared memory; the library changes them only with atomic
 * compare-and-swap; the workers' clocks must agree). After
 * rs_set_link_share(), at every update, with the rows rs_share_of() read:
 *   rs_share_gates(s, gates, rows, n, self, now);
 * NULL detaches them (so does a reconfigure); without gates each worker's
 * pacer reads its share f of R, lending what its users leave to its own
 * users only. */
#define RS_SHARE_GATES(classes) (1 + (classes))
int rs_share_gates(struct rs_sched *s, uint64_t *gates,
		   const struct rs_share_row *rows, unsigned n, unsigned self,
		   rs_time_ns now);

/* Resource res of the server (cls < 0) or of class cls: capacity, units
 * held now by released requests (the resource availability counter RAC is
 * capacity - in_use) and units taken since rs_new() (consumed / elapsed
 * time is the class's share of the resource, as the mQoS paper's Fig. 4).
 * Returns RS_EINVAL for res >= cfg.nres. */
struct rs_resource_stats {
	uint32_t capacity;
	uint64_t in_use;
	uint64_t consumed;
};
int rs_get_resource_stats(const struct rs_sched *s, int cls, unsigned res,
			  struct rs_resource_stats *st);
int rs_get_class_stats(const struct rs_sched *s, int cls,
		       struct rs_class_stats *st);

/* Learned request costs (costlearn.c): a table of at most `entries` keys
 * (a URL, a URL pattern: rs_costlearn_key()), each with an exponentially
 * weighted moving average of the cost vectors observed for it (units are
 * the caller's, as in rs_enqueue_cost()). A key is trusted, and
 * rs_costlearn_lookup() returns its average, from its min_obs-th
 * observation on. When the table is full, a new key takes the entry of
 * the least recently used one (looked up or observed). Lookups and
 * observations are O(1) expected (a hash of the 64-bit keys); nothing is
 * allocated after rs_costlearn_new(): about 64 bytes per entry. Keys are
 * 64-bit hashes: two keys with one hash share an entry (2^-64 per pair). */
struct rs_costlearn;
struct rs_costlearn_config {
	unsigned nres;		/* cost vector length, 1..RS_MAX_RESOURCES */
	uint32_t entries;	/* 1..2^24; default 4096 */
	double weight;		/* a new observation's weight, (0, 1]; default
				 * 0.25: avg += 0.25 * (observed - avg) */
	uint32_t min_obs;	/* observations before the average is
				 * trusted, >= 1; default 3 */
};
struct rs_costlearn_stats {
	uint32_t entries, capacity;	/* keys held, the bound */
	uint32_t trusted;		/* keys with min_obs observations */
	uint64_t observations, evictions;
};
void rs_costlearn_config_default(struct rs_costlearn_config *c);
/* NULL on a bad configuration or no memory. */
struct rs_costlearn *rs_costlearn_new(const struct rs_costlearn_config *c);
void rs_costlearn_free(struct rs_costlearn *l);
/* The key of a URL path (with its query) or, pattern != 0, of its
 * directory: rs_hash() of the path up to its last '/' before any '?',
 * followed by '*' (the page table's pattern syntax: the key of
 * "/photos/x.jpg?s=1" is rs_hash() of "/photos/" and "*"). */
uint64_t rs_costlearn_key(const char *path, size_t len, int pattern);
/* cost[0..nres-1] observed for key (0 is no key: RS_EINVAL). */
int rs_costlearn_observe(struct rs_costlearn *l, uint64_t key,
			 const uint32_t *cost);
/* 1 and cost[0..nres-1] = the key's average rounded, if it is trusted;
 * else 0 and cost untouched. Either way the key becomes the most recently
 * used. */
int rs_costlearn_lookup(struct rs_costlearn *l, uint64_t key, uint32_t *cost);
void rs_costlearn_get_stats(const struct rs_costlearn *l,
			    struct rs_costlearn_stats *st);

/* A Server-Timing response header value (servertiming.c; the W3C Server
 * Timing syntax: metric *( ";" param ), metrics separated by ","), as a web
 * server reports what a request cost it: a metric named as resource i
 * (names[i], case-insensitive) gives in its dur parameter the % of the
 * resource's capacity the request held while it was served (the page
 * table's unit), e.g. "cpu;dur=12.5, disk;dur=0.3". pct[i] gets it (a
 * value above 100 counts as 100) and bit i of *found is set; other metrics
 * are ignored. Returns how many metrics named as a resource had a dur
 * that is missing, not a number, negative or not finite (those are
 * ignored). */
unsigned rs_server_timing_parse(const char *value, size_t len,
				const char *const *names, unsigned n,
				double *pct, unsigned *found);

const char *rs_strerror(int err);
const char *rs_policy_name(enum rs_policy p);
const char *rs_controller_name(enum rs_controller c);
int rs_policy_parse(const char *str, enum rs_policy *p);	/* "msf" ... */
int rs_controller_parse(const char *str, enum rs_controller *c);

#ifdef __cplusplus
}
#endif
#endif /* REQSCHED_H */
