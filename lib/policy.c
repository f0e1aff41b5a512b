/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * policy.c - service counters of msf (MSF-RS MOA) and rfq (FQRS RFQ).
 *
 *   msf: SC_i += L / (w_i * UC_i)        rfq: SC_i += L / w_i
 *
 * The selection takes the class with the minimum SC among classes with
 * queued requests (the "ready" heap); ties go to the largest w_i * UC_i.
 * A class that becomes active (UC_i 0 -> 1) restarts at the minimum SC of
 * the active classes (the "active" heap, UC > 0); when every class is idle
 * all SCs are reset to 0 (lazily: sc_epoch changes and stale SCs read 0).
 *
 * Byte events only add to sc_pending and put the class on the dirty list
 * (O(1), no allocation); the pending bytes are folded into SC before any
 * decision that reads SC and before UC changes, so the result is the same
 * as updating SC on every byte event.
 */
#include "internal.h"

static double divisor(const struct rs_sched *s, const struct rs_class *c)
{
	if (s->cfg.policy == RS_POLICY_MSF)
		return c->weight * (c->uc ? c->uc : 1);
	return c->weight;
}

static bool ready_less(const struct rs_sched *s, uint32_t a, uint32_t b)
{
	const struct rs_class *ca = &s->cls[a], *cb = &s->cls[b];
	double pa, pb;

	if (ca->sc != cb->sc)
		return ca->sc < cb->sc;
	pa = ca->weight * ca->uc;
	pb = cb->weight * cb->uc;
	if (pa != pb)
		return pa > pb;
	return a < b;
}

static void ready_setpos(struct rs_sched *s, uint32_t c, uint32_t pos)
{
	s->cls[c].hpos_ready = pos;
}

static bool active_less(const struct rs_sched *s, uint32_t a, uint32_t b)
{
	if (s->cls[a].sc != s->cls[b].sc)
		return s->cls[a].sc < s->cls[b].sc;
	return a < b;
}

static void active_setpos(struct rs_sched *s, uint32_t c, uint32_t pos)
{
	s->cls[c].hpos_active = pos;
}

const struct rs_heap_ops rs_ready_ops = { ready_less, ready_setpos };
const struct rs_heap_ops rs_active_ops = { active_less, active_setpos };

static void refix(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];

	if (k->hpos_ready != RS_NIL)
		rs_heap_fix(s, &s->ready, &rs_ready_ops, k->hpos_ready);
	if (k->hpos_active != RS_NIL)
		rs_heap_fix(s, &s->active, &rs_active_ops, k->hpos_active);
}

void rs_sc_flush_class(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];

	if (!k->sc_pending)
		return;
	k->sc += (double)k->sc_pending / divisor(s, k);
	k->sc_pending = 0;
	refix(s, c);
}

void rs_sc_flush(struct rs_sched *s)
{
	while (s->ndirty) {
		uint32_t c = s->dirty[--s->ndirty];

		s->cls[c].dirty = 0;
		rs_sc_flush_class(s, c);
	}
}

void rs_sc_add_bytes(struct rs_sched *s, uint32_t c, uint64_t n)
{
	struct rs_class *k = &s->cls[c];

	if (!rs_uses_sc(s) || !n)
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

/* Value of SC as if every byte had been applied (for statistics). */
double rs_sc_value(const struct rs_sched *s, uint32_t c)
{
	const struct rs_class *k = &s->cls[c];

	if (k->sc_epoch != s->sc_epoch)
		return 0;
	return k->sc + (double)k->sc_pending / divisor(s, k);
}

/* UC of class c is about to change: fold pending bytes with the old UC. */
void rs_sc_class_activate(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];

	if (!rs_uses_sc(s))
		return;
	rs_sc_flush(s);
	/* MSF-RS Fig. 3: if (UC_i = 0) SC_i <- GetMinSC() */
	if (s->active.n)
		k->sc = s->cls[rs_heap_top(&s->active)].sc;
	else
		k->sc = 0;
	k->sc_pending = 0;
	k->sc_epoch = s->sc_epoch;
}

void rs_sc_class_deactivate(struct rs_sched *s, uint32_t c)
{
	if (!rs_uses_sc(s))
		return;
	rs_sc_flush_class(s, c);
}

/* Called after UC changed (the caller flushed before the change). */
void rs_sc_uc_changed(struct rs_sched *s, uint32_t c)
{
	struct rs_class *k = &s->cls[c];

	if (!rs_uses_sc(s))
		return;
	if (k->uc > 0 && k->hpos_active == RS_NIL)
		rs_heap_push(s, &s->active, &rs_active_ops, c);
	else if (k->uc == 0 && k->hpos_active != RS_NIL) {
		rs_heap_remove(s, &s->active, &rs_active_ops, k->hpos_active);
		if (s->active.n == 0)
			s->sc_epoch++;	/* all idle: every SC resets to 0 */
	}
	if (k->hpos_ready != RS_NIL)
		rs_heap_fix(s, &s->ready, &rs_ready_ops, k->hpos_ready);
}
