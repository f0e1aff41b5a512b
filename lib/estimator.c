/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * estimator.c - RQS response recorder (RR): response size, transmission
 * rate and Delay_resp learned from history, in bounded memory.
 *
 * Three tables (URL, host, content type) of RS_EST_SLOTS entries each,
 * 2-way set associative, most recently learned key kept in way 0. Lookup
 * for a new request: URL -> host -> content type -> default_size (27656
 * bytes, the mean of the papers' lognormal sizes). Learning happens when a
 * response ends normally: the URL keeps the last size (a URL usually has
 * one size), host and type keep an EWMA (gain 1/8). Rate (bytes/s after
 * the first byte) and Delay_resp (release -> first byte) are kept per host
 * (EWMA, gain 1/4) and globally (EWMA, gain 1/8); the global decaying
 * maximum of Delay_resp is RTC's T_lookahead.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum { EST_URL, EST_HOST, EST_TYPE };

int rs_est_init(struct rs_est *e, uint64_t default_size)
{
	memset(e, 0, sizeof(*e));
	e->default_size = default_size;
	return 0;
}

/* Tables are allocated at the first lesson (an end event, never a byte
 * event); without memory the estimator simply does not learn. */
static bool tables(struct rs_est *e)
{
	int i;

	for (i = 0; i < 3; i++) {
		if (e->tab[i])
			continue;
		e->tab[i] = calloc(RS_EST_SLOTS, sizeof(struct rs_est_ent));
		if (!e->tab[i])
			return false;
	}
	return true;
}

void rs_est_free(struct rs_est *e)
{
	int i;

	for (i = 0; i < 3; i++) {
		free(e->tab[i]);
		e->tab[i] = NULL;
	}
}

static struct rs_est_ent *lookup(const struct rs_est *e, int t, uint64_t key)
{
	struct rs_est_ent *set;

	if (!key || !e->tab[t])
		return NULL;
	set = &e->tab[t][(key * 0x9e3779b97f4a7c15ULL >> 40) &
			 (RS_EST_SLOTS / 2 - 1) * 2];
	if (set[0].key == key)
		return &set[0];
	if (set[1].key == key)
		return &set[1];
	return NULL;
}

static struct rs_est_ent *insert(struct rs_est *e, int t, uint64_t key)
{
	struct rs_est_ent *set, *hit = lookup(e, t, key);

	if (hit || !key || !e->tab[t])
		return hit;
	set = &e->tab[t][(key * 0x9e3779b97f4a7c15ULL >> 40) &
			 (RS_EST_SLOTS / 2 - 1) * 2];
	set[1] = set[0];
	memset(&set[0], 0, sizeof(set[0]));
	set[0].key = key;
	return &set[0];
}

/* The size a request with info is charged: the caller's est_size, else
 * (if learned, see rs_est_read()) its URL's, host's or type's history,
 * else default_size. */
uint64_t rs_est_size(const struct rs_est *e, const struct rs_req_info *info,
		     bool learned)
{
	const struct rs_est_ent *h;

	if (!info)
		return e->default_size;
	if (info->est_size)
		return info->est_size;
	if (!learned)
		return e->default_size;
	if ((h = lookup(e, EST_URL, info->url_key)) && h->size > 0)
		return (uint64_t)h->size;
	if ((h = lookup(e, EST_HOST, info->host_key)) && h->size > 0)
		return (uint64_t)h->size;
	if ((h = lookup(e, EST_TYPE, info->type_key)) && h->size > 0)
		return (uint64_t)h->size;
	return e->default_size;
}

/* Rate (bytes/s) and Delay_resp (ns) estimates for a response from host;
 * 0 means unknown. */
void rs_est_path(const struct rs_est *e, uint64_t host_key, double *rate,
		 double *delay)
{
	const struct rs_est_ent *h = lookup(e, EST_HOST, host_key);

	*rate = h && h->rate > 0 ? h->rate : e->rate_avg;
	*delay = h && h->delay > 0 ? h->delay : e->delay_avg;
}

static double ewma(double old, double v, double gain)
{
	return old > 0 ? old + (v - old) * gain : v;
}

/* Learn from a finished response. rate <= 0 / delay < 0: not measured. */
void rs_est_learn(struct rs_est *e, const struct rs_req *r, bool size_ok,
		  double rate, double delay)
{
	struct rs_est_ent *h;

	if (!r->url_key && !r->host_key && !r->type_key)
		goto global;	/* nothing to remember per key */
	if (!tables(e))
		return;
	if (size_ok && r->bytes > 0) {
		double size = (double)r->bytes;

		if ((h = insert(e, EST_URL, r->url_key)))
			h->size = size;
		if ((h = insert(e, EST_HOST, r->host_key)))
			h->size = ewma(h->size, size, 1.0 / 8);
		if ((h = insert(e, EST_TYPE, r->type_key)))
			h->size = ewma(h->size, size, 1.0 / 8);
	}
	if (rate > 0 && (h = insert(e, EST_HOST, r->host_key)))
		h->rate = ewma(h->rate, rate, 1.0 / 4);
	if (delay >= 0 && (h = insert(e, EST_HOST, r->host_key)))
		h->delay = ewma(h->delay, delay > 0 ? delay : 1, 1.0 / 4);
global:
	if (rate > 0)
		e->rate_avg = ewma(e->rate_avg, rate, 1.0 / 8);
	if (delay >= 0) {
		e->delay_avg = ewma(e->delay_avg, delay, 1.0 / 8);
		if (delay >= e->delay_peak)
			e->delay_peak = delay;
		else
			e->delay_peak -= (e->delay_peak - delay) / 16;
	}
}
