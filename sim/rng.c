/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rng.c - xoshiro256** (Blackman and Vigna) seeded with splitmix64.
 *
 * Normal deviates use the Box-Muller transform without caching the second
 * value, so the number of draws per call is fixed (2) and a stream never
 * depends on hidden state beyond s[].
 */
#include <math.h>

#include "rng.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void rng_seed(struct sim_rng *r, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

uint64_t rng_next(struct sim_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double rng_uniform(struct sim_rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

double rng_exp(struct sim_rng *r, double mean)
{
	return -mean * log1p(-rng_uniform(r));
}

double rng_normal(struct sim_rng *r)
{
	double u1 = 1.0 - rng_uniform(r);	/* (0, 1]: log is finite */
	double u2 = rng_uniform(r);

	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}

double rng_lognormal(struct sim_rng *r, double mu, double sigma)
{
	return exp(mu + sigma * rng_normal(r));
}

uint32_t rng_below(struct sim_rng *r, uint32_t n)
{
	return (uint32_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}
