/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spec.h - one simulator run, as read from a line-based spec file.
 *
 * The spec is written by reqsched-sim (one per scenario run); the grammar is
 * documented in doc/sim.md and at the top of spec.c. Every value is checked
 * and a bad line is reported with its number.
 */
#ifndef SIM_SPEC_H
#define SIM_SPEC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SPEC_MAX_CLASSES 16
#define SPEC_MAX_GROUPS 32
#define SPEC_MAX_SERVERS 256
#define SPEC_MAX_ACTIVE 8
#define SPEC_NAME 64

enum user_kind {
	USER_BACKLOG,		/* keeps `depth` requests in the system */
	USER_THINK,		/* closed loop: exp(think) after each response */
	USER_INTERVAL,		/* open loop: Poisson requests, mean interval */
	USER_BATCH,		/* `depth` requests at activation, nothing more */
};

enum size_kind { SIZE_LOGNORMAL, SIZE_FIXED };

struct spec_interval {
	double start, end;	/* [start, end), seconds */
};

struct spec_class {
	char name[SPEC_NAME];
	double weight;
	struct spec_interval active[SPEC_MAX_ACTIVE];
	int n_active;		/* 0 = active for the whole run */
};

struct spec_group {
	int cls;
	unsigned count;
	enum user_kind kind;
	double param;		/* think / interval mean, seconds */
	unsigned depth;		/* backlog depth or batch size */
	enum size_kind size_kind;
	double size_a, size_b;	/* lognormal mu, sigma | fixed bytes */
	double bias;		/* > 0: est_size = bias * real size */
	char label[SPEC_NAME];
};

struct spec_reweight {
	double t;		/* seconds */
	int cls;
	double weight;
};

#define SPEC_MAX_REWEIGHT 32

struct spec_server {
	double delay;		/* first-byte delay, seconds */
	double cap_bps;		/* server bandwidth, bits/s, 0 = unlimited */
};

struct spec {
	uint64_t seed;
	double link_bps;
	double duration;
	bool ordinary;			/* release everything at once */
	char policy[16];
	char window[16];
	unsigned fixed_window;
	bool sff;
	double target_util;
	double update_interval;
	double K;
	double max_window;
	int compensation;		/* -1 = library default */
	double cbr_bps, cbr_period;	/* off first, then on/off */
	bool cbr_foreign;		/* report cross traffic as foreign bytes */
	bool link_counter;		/* feed rs_on_link_bytes() with every
					 * byte on the link (RS_LINK_COUNTER) */
	double sample;			/* timeline bin, seconds */
	double report_gran;		/* rs_on_bytes period, seconds */
	bool emit_requests;
	double queue_timeout;		/* rs_expire() max wait, 0 = none */
	double abort_fraction;		/* responses cut short (aborted) */
	double patience_fraction;	/* requests whose client may give up */
	double patience_mean;		/* exp. patience before rs_cancel() */
	struct spec_class classes[SPEC_MAX_CLASSES];
	int n_classes;
	struct spec_group groups[SPEC_MAX_GROUPS];
	int n_groups;
	struct spec_reweight reweights[SPEC_MAX_REWEIGHT];
	int n_reweights;
	struct spec_server servers[SPEC_MAX_SERVERS];
	int n_servers;
};

/* The words of a spec line (up to max; a '#' starts a comment): their
 * number, tok[] pointing into line. */
int spec_split(char *line, char **tok, int max);

/* 0 on success; on error prints "NAME:LINE: reason" to err, returns -1. */
int spec_read(struct spec *sp, FILE *in, const char *name, FILE *err);

#endif /* SIM_SPEC_H */
