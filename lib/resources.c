/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * resources.c - the server's resources: a cost vector per request and the
 * resource availability counters (RACs) of the mQoS paper (§3.3).
 *
 * cfg.nres resources, resource i of capacity cfg.res_capacity[i] units.
 * A request carries cost[i] units of each (rs_enqueue_cost()); under a
 * policy with ops->resources (mqos, sqos, drf) it goes only when every
 * resource the policy manages has room for it (rs_res_fits, and beside a
 * reserved request: reservation.c's rs_resv_admit), takes its
 * cost when it is released (rs_res_take: RAC_i -= cost_i) and gives it back
 * at its end (rs_res_give: RAC_i += cost_i). RAC_i = capacity_i - used_i.
 * sqos manages only cfg.sqos_resource (the paper's single-resource
 * baseline), mqos and drf every resource.
 *
 * A cost above a capacity counts as the whole capacity (it is clamped when
 * taken, and the clamped cost is what goes back), so every request can go
 * once the server is empty.
 *
 * Invariants (check.c):
 *  - used_i = sum of cost_i of the requests flagged RS_RF_HOLDS_RES, and
 *    each class's held_i is the same sum over its requests: a cost is
 *    taken at most once (flag set) and given back exactly once (at the
 *    end, flag cleared);
 *  - 0 <= RAC_i <= capacity_i, i.e. used_i <= capacity_i, except that a
 *    reconfigure that lowers a capacity below what is in use leaves the
 *    excess (res_excess), which only shrinks: while it lasts no request
 *    that needs resource i goes;
 *  - consumed_i (units taken in all, the shares of the report) only grows.
 *
 * The cost slots exist (s->cost) once a configuration has had nres > 0;
 * before that every cost is 0 and rs_enqueue_cost() ignores cost.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Cost slots for cap requests, if there are any (nres: the configuration
 * being applied has resources); zero-filled when first allocated. */
int rs_res_reserve(struct rs_sched *s, uint32_t cap, bool nres)
{
	uint32_t (*p)[RS_MAX_RESOURCES];

	if (!s->cost && !nres)
		return 0;
	if (!s->cost) {
		s->cost = calloc(cap ? cap : 1, sizeof(*s->cost));
		return s->cost ? 0 : RS_ENOMEM;
	}
	p = realloc(s->cost, (size_t)(cap ? cap : 1) * sizeof(*p));
	if (!p)
		return RS_ENOMEM;
	s->cost = p;
	return 0;
}

/* The resources request r costs nothing of (a bit per resource). */
static uint32_t free_for(const struct rs_sched *s, uint32_t r)
{
	uint32_t bits = 0;
	unsigned i;

	for (i = 0; i < RS_MAX_RESOURCES; i++)
		if (!s->cost[r][i])
			bits |= 1u << i;
	return bits;
}

/* Request r (new) costs cost (NULL: nothing). The cost slots exist. */
void rs_res_set(struct rs_sched *s, uint32_t r, const uint32_t *cost)
{
	memset(s->cost[r], 0, sizeof(s->cost[r]));
	if (cost)
		memcpy(s->cost[r], cost, s->cfg.nres * sizeof(*cost));
	s->res_free_for |= free_for(s, r);
}

/* Request r is released: it holds its (clamped) cost of the managed
 * resources; the others it does not hold (cost 0). */
void rs_res_take(struct rs_sched *s, uint32_t r)
{
	struct rs_cres *k = &s->cres[s->req[r].cls];
	unsigned i;

	for (i = 0; i < RS_MAX_RESOURCES; i++) {
		uint32_t c = i < s->cfg.nres && rs_res_managed(s, i) ?
			     rs_res_cost(s, r, i) : 0;

		s->cost[r][i] = c;
		s->res_used[i] += c;
		s->res_consumed[i] += c;
		k->held[i] += c;
		k->consumed[i] += c;
	}
	s->res_gen++;
	s->req[r].flags |= RS_RF_HOLDS_RES;
}

/* Request r, which holds resources, ends: they go back (once). */
void rs_res_give(struct rs_sched *s, uint32_t r)
{
	struct rs_req *q = &s->req[r];
	struct rs_cres *k = &s->cres[q->cls];
	unsigned i;

	q->flags &= (uint8_t)~RS_RF_HOLDS_RES;
	s->res_gen++;
	for (i = 0; i < RS_MAX_RESOURCES; i++) {
		uint64_t cap = i < s->cfg.nres ? s->cfg.res_capacity[i] : 0;

		s->res_used[i] -= s->cost[r][i];
		k->held[i] -= s->cost[r][i];
		if (s->res_excess[i])
			s->res_excess[i] = s->res_used[i] > cap ?
					   s->res_used[i] - cap : 0;
	}
}

/* After a reconfigure: what is in use above a (new) capacity. */
void rs_res_reconfigured(struct rs_sched *s)
{
	uint32_t r;
	unsigned i;

	for (i = 0; i < RS_MAX_RESOURCES; i++) {
		uint64_t cap = i < s->cfg.nres ? s->cfg.res_capacity[i] : 0;

		s->res_excess[i] = s->res_used[i] > cap ? s->res_used[i] - cap : 0;
	}
	s->res_gen++;
	s->res_free_for = 0;
	for (r = s->ghead; s->cost && r != RS_NIL; r = s->req[r].gnext)
		s->res_free_for |= free_for(s, r);
}

/* Request r's largest cost relative to capacity, and the resource of it
 * (ties: the lowest index). Inline in its two wrappers: mqos asks at every
 * enqueue, drf at every release. */
static inline double dominant(const struct rs_sched *s, uint32_t r,
			      unsigned *res)
{
	unsigned i;
	double top = -1;

	*res = 0;
	for (i = 0; s->cost && i < s->cfg.nres; i++) {
		double f = (double)rs_res_cost(s, r, i) / s->cfg.res_capacity[i];

		if (f > top) {
			top = f;
			*res = i;
		}
	}
	return top > 0 ? top : 0;
}

/* The resource request r needs most: its mqos sub-queue. */
unsigned rs_res_tendency(const struct rs_sched *s, uint32_t r)
{
	unsigned res;

	dominant(s, r, &res);
	return res;
}

/* Request r's dominant share: its largest cost / capacity (drf). */
double rs_res_dominant(const struct rs_sched *s, uint32_t r)
{
	unsigned res;

	return dominant(s, r, &res);
}

/* Class c's dominant share of what is held now, divided by its weight. */
double rs_res_share(const struct rs_sched *s, uint32_t c)
{
	double top = 0;
	unsigned i;

	for (i = 0; i < s->cfg.nres; i++) {
		double f = (double)s->cres[c].held[i] / s->cfg.res_capacity[i];

		if (f > top)
			top = f;
	}
	return top / s->cls[c].weight;
}

int rs_get_resource_stats(const struct rs_sched *s, int cls, unsigned res,
			  struct rs_resource_stats *st)
{
	if (!s || !st || res >= s->cfg.nres)
		return RS_EINVAL;
	if (cls >= 0 && (uint32_t)cls >= s->ncls)
		return RS_ENOCLASS;
	st->capacity = s->cfg.res_capacity[res];
	st->in_use = cls < 0 ? s->res_used[res] : s->cres[cls].held[res];
	st->consumed = cls < 0 ? s->res_consumed[res] :
		       s->cres[cls].consumed[res];
	return 0;
}
