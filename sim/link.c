/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * link.c - fluid processor sharing with per-flow caps (water-filling).
 *
 * Between two events every rate is constant, so advancing is exact:
 * delivered += rate * dt. Rates are recomputed only when the set of flows
 * or the cross traffic changes; the caller does that with link_set_rates().
 */
#include <math.h>
#include <stdlib.h>

#include "link.h"

void link_init(struct sim_link *l, double capacity)
{
	*l = (struct sim_link){ .capacity = capacity };
}

void link_free(struct sim_link *l)
{
	free(l->flows);
	free(l->order);
	*l = (struct sim_link){ 0 };
}

int link_add(struct sim_link *l, uint32_t req, double size, double cap)
{
	if (l->n == l->alloc) {
		size_t na = l->alloc ? 2 * l->alloc : 64;
		struct sim_flow *f = realloc(l->flows, na * sizeof(*f));
		size_t *o = realloc(l->order, na * sizeof(*o));

		if (f)
			l->flows = f;
		if (o)
			l->order = o;
		if (!f || !o)
			return -1;
		l->alloc = na;
	}
	l->flows[l->n++] = (struct sim_flow){
		.req = req, .remaining = size, .cap = cap > 0 ? cap : 0,
	};
	return 0;
}

void link_set_cbr(struct sim_link *l, double rate)
{
	l->cbr_rate = rate > 0 ? rate : 0;
	l->cbr_used = fmin(l->cbr_rate, l->capacity);
}

static double flow_cap(const struct sim_flow *f)
{
	return f->cap > 0 ? f->cap : INFINITY;
}

/* Insertion sort of flow indices by cap: n is small (tens to hundreds) and
 * the order is mostly unchanged between calls. Ties keep index order so
 * the result is deterministic. */
static void sort_by_cap(struct sim_link *l)
{
	for (size_t i = 0; i < l->n; i++)
		l->order[i] = i;
	for (size_t i = 1; i < l->n; i++) {
		size_t v = l->order[i], j = i;

		while (j > 0 && flow_cap(&l->flows[l->order[j - 1]]) >
				flow_cap(&l->flows[v])) {
			l->order[j] = l->order[j - 1];
			j--;
		}
		l->order[j] = v;
	}
}

void link_set_rates(struct sim_link *l)
{
	double avail = l->capacity - l->cbr_used;
	size_t left = l->n;

	sort_by_cap(l);
	for (size_t k = 0; k < l->n; k++) {
		struct sim_flow *f = &l->flows[l->order[k]];
		double share = avail / (double)left;
		double cap = flow_cap(f);

		f->rate = cap < share ? cap : share;
		avail -= f->rate;
		if (avail < 0)
			avail = 0;
		left--;
	}
}

void link_advance(struct sim_link *l, double t)
{
	double dt = t - l->now;

	if (dt <= 0)
		return;
	for (size_t i = 0; i < l->n; i++) {
		struct sim_flow *f = &l->flows[i];
		double d = f->rate * dt;

		if (d > f->remaining)
			d = f->remaining;
		f->remaining -= d;
		f->delivered += d;
		l->flow_bytes += d;
	}
	l->cbr_bytes += l->cbr_used * dt;
	l->now = t;
}

double link_next_completion(const struct sim_link *l)
{
	double best = INFINITY;

	for (size_t i = 0; i < l->n; i++) {
		const struct sim_flow *f = &l->flows[i];
		double t;

		if (f->remaining <= LINK_DONE_EPS)
			return l->now;
		if (f->rate <= 0)
			continue;
		t = l->now + f->remaining / f->rate;
		if (t < best)
			best = t;
	}
	return best;
}

int link_pop_done(struct sim_link *l, struct sim_flow *out)
{
	/* Lowest request index first, so simultaneous completions are
	 * reported in a deterministic order (the order they were started). */
	size_t pick = l->n;

	for (size_t i = 0; i < l->n; i++)
		if (l->flows[i].remaining <= LINK_DONE_EPS &&
		    (pick == l->n || l->flows[i].req < l->flows[pick].req))
			pick = i;
	if (pick == l->n)
		return 0;
	*out = l->flows[pick];
	l->flows[pick] = l->flows[--l->n];
	return 1;
}

double link_used_rate(const struct sim_link *l)
{
	double r = l->cbr_used;

	for (size_t i = 0; i < l->n; i++)
		r += l->flows[i].rate;
	return r;
}
