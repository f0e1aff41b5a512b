/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench_helper.c - time to load a 100,000-entry mapping file and time per
 * lookup (IPv4 longest-prefix, IPv6, login). Prints one line per measure.
 * usage: bench_helper [ENTRIES] [LOOKUPS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "classmap.h"

static uint64_t rng = 0x2545f4914f6cdd1du;

static uint32_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 2685821657736338717u) >> 32);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 60% IPv4 prefixes /16../32 anywhere (they nest, few duplicates),
 * 20% IPv6 /64s, 20% logins. */
static char *make_map(size_t n, size_t *len)
{
	static const char *cls[] = { "gold", "silver", "bronze", "c3", "c4", "c5", "c6" };
	size_t cap = n * 48 + 64, pos = 0;
	char *t = malloc(cap);

	if (!t)
		exit(1);
	for (size_t i = 0; i < n; i++) {
		const char *c = cls[rnd() % 7];
		unsigned int kind = rnd() % 10;

		if (kind < 6) {
			unsigned int l = 16 + rnd() % 17;
			uint32_t a = rnd() & (~UINT32_C(0) << (32 - l));

			pos += (size_t)snprintf(t + pos, cap - pos, "%u.%u.%u.%u/%u %s\n", a >> 24,
						(a >> 16) & 255, (a >> 8) & 255, a & 255, l, c);
		} else if (kind < 8) {
			pos += (size_t)snprintf(t + pos, cap - pos, "2001:db8:%x:%zx::/64 %s\n",
						(unsigned)(i >> 16), i & 0xffff, c);
		} else {
			pos += (size_t)snprintf(t + pos, cap - pos, "user:u%zu %s\n", i, c);
		}
	}
	pos += (size_t)snprintf(t + pos, cap - pos, "default bronze\n");
	*len = pos;
	return t;
}

typedef void (*keygen)(char *key, size_t cap, size_t n);

static void key_v4(char *k, size_t cap, size_t n)
{
	(void)n;
	uint32_t a = rnd();

	snprintf(k, cap, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

static const struct rs_classmap *bench_map;

/* An address inside a random IPv4 entry: every lookup is a hit. */
static void key_v4_hit(char *k, size_t cap, size_t n)
{
	const struct rs_pentry *e = &bench_map->v4.e[rnd() % bench_map->v4.n];
	uint32_t a = (uint32_t)(e->key.hi >> 32);

	(void)n;
	if (e->len < 32)
		a |= rnd() & (~UINT32_C(0) >> e->len);
	snprintf(k, cap, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

static void key_v6(char *k, size_t cap, size_t n)
{
	size_t i = rnd() % n;

	snprintf(k, cap, "2001:db8:%x:%zx::1", (unsigned)(i >> 16), i & 0xffff);
}

static void key_login(char *k, size_t cap, size_t n)
{
	snprintf(k, cap, "u%u", (unsigned)(rnd() % n));
}

#define KEYS 4096

static void bench_lookup(const struct rs_classmap *m, const char *name, keygen gen, size_t n,
			 size_t lookups)
{
	static char keys[KEYS][64];
	static size_t lens[KEYS];
	volatile long sink = 0;
	long hits = 0;
	double t0, t1;

	for (size_t i = 0; i < KEYS; i++) {
		gen(keys[i], sizeof(keys[i]), n);
		lens[i] = strlen(keys[i]);
	}
	t0 = now_s();
	for (size_t i = 0; i < lookups; i++) {
		long c = rs_classmap_lookup(m, keys[i % KEYS], lens[i % KEYS]);

		hits += c >= 0;
		sink += c;
	}
	t1 = now_s();
	(void)sink;
	printf("lookup %-7s: %8.0f ns/lookup  (%zu lookups, %.0f%% matched an entry)\n", name,
	       (t1 - t0) / (double)lookups * 1e9, lookups, 100.0 * (double)hits / (double)lookups);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	size_t lookups = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000000;
	char path[] = "/tmp/rs-bench-helper-XXXXXX";
	size_t len;
	char *text = make_map(n, &len);
	int fd = mkstemp(path);
	struct rs_classmap *m = NULL;
	double best = 1e9;

	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		perror("bench_helper: writing the mapping file");
		return 1;
	}
	close(fd);
	for (int rep = 0; rep < 5; rep++) {	/* best of 5: file read + parse + sort */
		double t0 = now_s(), t1;

		rs_classmap_free(m);
		m = rs_classmap_load(path, NULL, NULL);
		t1 = now_s();
		if (!m) {
			perror("bench_helper: loading");
			return 1;
		}
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	unlink(path);
	printf("load   %zu entries (%.1f MB file): %.1f ms (best of 5; %zu IPv4, %zu IPv6, %zu logins)\n",
	       n, (double)len / 1e6, best * 1e3, m->stats.v4, m->stats.v6, m->stats.logins);
	printf("ipv4 prefix lengths present: %u\n", m->v4.nlengths);
	bench_map = m;
	bench_lookup(m, "ipv4", key_v4, n, lookups);
	bench_lookup(m, "ipv4hit", key_v4_hit, n, lookups);
	bench_lookup(m, "ipv6", key_v6, n, lookups);
	bench_lookup(m, "login", key_login, n, lookups);
	rs_classmap_free(m);
	free(text);
	return 0;
}
