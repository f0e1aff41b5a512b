/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rng.h - deterministic random numbers for the simulator.
 *
 * xoshiro256** seeded through splitmix64: the same seed gives the same
 * stream on every platform, so a scenario run is exactly reproducible.
 */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <stdint.h>

struct sim_rng {
	uint64_t s[4];
};

void rng_seed(struct sim_rng *r, uint64_t seed);
uint64_t rng_next(struct sim_rng *r);
double rng_uniform(struct sim_rng *r);			/* [0, 1) */
double rng_exp(struct sim_rng *r, double mean);		/* mean > 0 */
double rng_normal(struct sim_rng *r);			/* N(0, 1) */
double rng_lognormal(struct sim_rng *r, double mu, double sigma);
uint32_t rng_below(struct sim_rng *r, uint32_t n);	/* [0, n), n > 0 */

#endif /* SIM_RNG_H */
