/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * msf.c - the minimum-service-first arbiter of MSF-RS (Computer Networks
 * 2008, Eq. 1, Fig. 3/4): service counters and the class heaps, shared
 * with rfq (rfq.c), which only normalizes differently:
 *
 *   msf: SC_i += L / (w_i * UC_i)        rfq: SC_i += L / w_i
 *
 * The selection takes the class with the minimum SC among classes with
 * queued requests (the "ready" heap); ties go to the largest w_i * UC_i.
 * A class that becomes active (UC_i 0 -> 1) restarts at the minimum SC of
 * the active classes (the "active" heap, UC > 0), or keeps its own SC if
 * that is larger (activate()); when every class is idle all SCs are reset
 * to 0 (lazily: sc_epoch changes and stale SCs read 0).
 *
 * Byte events only add to sc_pending and put the class on the dirty list
 * (O(1), no allocation); the pending bytes are folded into SC before any
 * decision that reads SC and before UC changes, so the result is the same
 * as updating SC on every byte event.
 *
 * Both heaps are keyed heaps of heap.h (RS_KH_READY, RS_KH_ACTIVE).
 */
#include "heap.h"

static double divisor(const struct rs_sched *s, const struct rs_class *c)
{
	if (s->pol->per_user)
		return c->weight * (c->uc ? c->uc : 1);
	return c->weight;
}

RS_HOT struct rs_kent key_of(const struct rs_sched *s, uint32_t c)
{
	const struct rs_class *k = &s->cls[c];
	struct rs_kent e = { k->sc, k->weight * k->uc, c };

	return e;
}

/* Refresh the key of the entry of class c at pos from the class and
 * restore order (c is passed: no dependent load of the entry first). */
RS_HOT void kfix(struct rs_sched *s, enum rs_kh h, uint32_t pos, uint32_t c)
{
	struct rs_kent e = key_of(s, c);

	rs_kmove(s, h, pos, &e);
}

RS_HOT void kpush(struct rs_sched *s, enum rs_kh h, uint32_t c)
{
	struct rs_kent e = key_of(s, c);

	rs_kpush(s, h, &e);
}

/* Class c has queued requests: it enters the ready heap. */
void rs_sc_ready(struct rs_sched *s, uint32_t c)
{
	rs_sc_flush(s);
	kpush(s, RS_KH_READY, c);
}

void rs_sc_empty(struct rs_sched *s, uint32_t c)
{
	if (s->cls[c].hpos_ready != RS_NIL)
		rs_kremove(s, RS_KH_READY, s->cls[c].hpos_ready);
}

/* The class with the minimum SC among those with queued requests. */
uint32_t rs_sc_pick(struct rs_sched *s)
{
	rs_sc_flush(s);
	return rs_kheap_top(&s->ready);
}

/* SC grew: only the ready heap is fixed now (the active heap is lazy). */
static void refix(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];

	if (k->hpos_ready != RS_NIL)
		kfix(s, RS_KH_READY, k->hpos_ready, c);
}

/* Class c leaves the pool (its SC changed, or it went idle); an active
 * class goes into the active heap keyed by pool_sc, its SC before the
 * change (<= its SC, as the lazy heap requires). An idle one does not
 * read hpos_active (line 1 of the class: struct rs_class). */
static void pool_leave(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];
	struct rs_kent e = { s->pool_sc, 0, c };
	uint32_t pos;

	k->in_pool = 0;
	s->pool_n--;
	if (k->uc == 0)
		return;
	pos = k->hpos_active;
	if (pos == RS_NIL)
		rs_kpush(s, RS_KH_ACTIVE, &e);
	else if (rs_ksift_up(s, RS_KH_ACTIVE, pos, &e) == pos)	/* an old entry */
		rs_ksift_down(s, RS_KH_ACTIVE, pos, &e);
}

static void flush_class(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];

	if (!k->sc_pending)
		return;
	k->sc += (double)k->sc_pending / divisor(s, k);
	k->sc_pending = 0;
	if (k->in_pool)
		pool_leave(s, c);
	refix(s, c);
}

/* rs_sc_flush() with classes dirty: each one's pending bytes into SC. */
void rs_sc_fold(struct rs_sched *s)
{
	while (s->ndirty) {
		uint32_t c = s->dirty[--s->ndirty];

		s->cls[c].dirty = 0;
		flush_class(s, c);
	}
}

/* Value of SC as if every byte had been applied (for statistics). */
double rs_sc_value(const struct rs_sched *s, uint32_t c)
{
	const struct rs_class *k = &s->cls[c];

	if (k->sc_epoch != s->sc_epoch)
		return 0;
	return k->sc + (double)k->sc_pending / divisor(s, k);
}

/*
 * The minimum SC of the active classes, for a class that becomes active.
 *
 * Pool: a class that becomes active starts at the minimum SC; it joins
 * the pool of such classes (pool_n of them, all with SC == pool_sc) and
 * leaves it, into the active heap, when its SC changes or it goes idle.
 * While the pool is not empty, pool_sc is the minimum: every other active
 * class had an SC >= the minimum when pool_sc was taken, and SCs only grow
 * while a class is active. So activations cost no heap operation.
 *
 * Active heap, used when the pool is empty, and lazy: SCs only grow
 * while a class is active, so an entry is not fixed when its class's SC
 * grows and not removed when the class goes idle. Invariant: every class
 * with UC > 0 outside the pool has an entry whose key is <= its SC;
 * entries of idle classes and stale entries of pooled classes may
 * remain (a class leaving the pool fixes its entry). With the pool empty
 * the minimum SC of the active classes is the key of the top entry once
 * the top belongs to an active class and its key is up to date.
 */
static double active_min_sc(struct rs_sched *s)
{
	for (;;) {
		const struct rs_kent *top = &s->active.ent[0];
		const struct rs_class *k = &s->cls[top->c];

		if (k->uc == 0)
			rs_kremove(s, RS_KH_ACTIVE, 0);	/* idle: drop the entry */
		else if (top->sc != k->sc)
			kfix(s, RS_KH_ACTIVE, 0, top->c);	/* SC grew since */
		else
			return top->sc;
	}
}

/* Class c becomes active (UC 0 -> 1). */
static void activate(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];
	double min_sc;

	rs_sc_flush(s);		/* k->sc_pending is 0 from here */
	if (s->pool_n)
		min_sc = s->pool_sc;
	else if (s->nactive)
		min_sc = active_min_sc(s);
	else
		min_sc = 0;
	/* MSF-RS Fig. 3: if (UC_i = 0) SC_i <- GetMinSC(), which the paper
	 * gives so that a long-idle class does not come back far below the
	 * others; but never below the SC the class has in this epoch. A class
	 * whose only user is between two requests (a backlogged user, alone
	 * in its class or its SMP worker) would else come back at the minimum
	 * at every request and win the tie (larger w*UC) against a class
	 * that has waited at that minimum all along: starved. Such a class
	 * keeps its SC and its active heap entry (key <= SC: SCs do not
	 * fall within an epoch), or gets a new one. */
	if (k->sc_epoch == s->sc_epoch && k->sc > min_sc) {
		s->nactive++;
		if (k->hpos_active == RS_NIL)
			kpush(s, RS_KH_ACTIVE, c);
		return;
	}
	k->sc = min_sc;
	k->sc_epoch = s->sc_epoch;
	s->pool_sc = k->sc;
	s->pool_n++;
	k->in_pool = 1;
	s->nactive++;
}

/* UC of class c is about to change by one: a class becoming active
 * restarts its SC, else its pending bytes are folded with the old UC. The
 * heaps are fixed once, by rs_sc_users_changed(), right after. */
void rs_sc_users_changing(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];

	if (k->uc == 0) {
		activate(s, c);
		return;
	}
	if (!k->sc_pending)
		return;
	k->sc += (double)k->sc_pending / divisor(s, k);
	k->sc_pending = 0;
}

/* Called after UC changed. */
void rs_sc_users_changed(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];

	if (k->in_pool && (k->uc == 0 || k->sc != s->pool_sc))
		pool_leave(s, c);
	if (k->uc == 0 && --s->nactive == 0)
		s->sc_epoch++;	/* all idle: every SC resets to 0 */
	if (k->hpos_ready != RS_NIL)
		kfix(s, RS_KH_READY, k->hpos_ready, c);
}

/* rs_reconfigure(): the classes were renewed with their UC and no heap
 * entry. A class active before keeps its SC, one that becomes active
 * starts at the minimum SC of those; the active heap is built anew. */
void rs_sc_rebuild(struct rs_sched *s)
{
	double min_sc = 0;
	bool any = false;
	uint32_t c;

	for (c = 0; c < s->ncls; c++) {
		struct rs_class *k = &s->cls[c];

		if (k->uc && k->sc_epoch == s->sc_epoch &&
		    (!any || k->sc < min_sc)) {
			min_sc = k->sc;
			any = true;
		}
	}
	for (c = 0; c < s->ncls; c++) {
		struct rs_class *k = &s->cls[c];

		if (!k->uc)
			continue;
		if (k->sc_epoch != s->sc_epoch) {
			k->sc = any ? min_sc : 0;
			k->sc_epoch = s->sc_epoch;
		}
		kpush(s, RS_KH_ACTIVE, c);
		s->nactive++;
	}
	if (!s->nactive)
		s->sc_epoch++;
}

const struct rs_policy_ops rs_msf_ops = {
	.name = "msf",
	.per_user = true,	/* SC_i += L / (w_i * UC_i) */
	RS_SC_OPS,
};
