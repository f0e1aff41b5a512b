/* SPDX-License-Identifier: GPL-2.0-or-later */
/* classmap.h - the mapping file: client key -> reqsched class name.
 *
 * File format (one entry per line, '#' starts a comment anywhere):
 *
 *     10.1.0.0/16       gold      # IPv4 prefix
 *     10.1.2.3          silver    # single address (= /32)
 *     2001:db8:1::/48   gold      # IPv6 prefix (single address = /128)
 *     user:alice        silver    # login name (%XX escapes allowed: user:John%20Smith)
 *     default           bronze    # used when nothing else matches
 *
 * Longest prefix wins; an address never falls back to a login entry (keys are
 * typed by their text). A malformed line is reported as "file:line: reason"
 * and skipped; a duplicate key is reported and the later line wins.
 * A loaded map is immutable: reload builds a new one and swaps pointers.
 */
#ifndef RS_HELPER_CLASSMAP_H
#define RS_HELPER_CLASSMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "prefix_table.h"
#include "str_table.h"

#define RS_CLASS_NAME_MAX 64	/* bytes, without the NUL */
#define RS_MAP_LINE_MAX 4096	/* longer mapping-file lines are malformed */

struct rs_classmap_opts {
	bool logins_nocase;	/* compare login names ignoring ASCII case */
};

struct rs_load_stats {
	size_t lines;		/* lines read */
	size_t v4, v6, logins;	/* entries kept, per kind */
	size_t malformed;	/* lines skipped */
	size_t duplicates;	/* entries overridden by a later line */
	bool has_default;
};

struct rs_classmap {
	char **class_names;	/* index -> name, in order of first use */
	size_t nclasses;
	struct rs_strtable class_ids;	/* name -> index */
	struct rs_ptable v4, v6;
	struct rs_strtable logins;	/* login -> class index */
	long default_cls;	/* -1: no default line */
	bool logins_nocase;
	struct rs_load_stats stats;
};

/* Parse a mapping from memory. fname only labels messages on log (may be
 * NULL to stay silent). Returns NULL only when out of memory. */
struct rs_classmap *rs_classmap_parse(const char *buf, size_t len, const char *fname,
				      const struct rs_classmap_opts *opts, FILE *log);

/* Read and parse a mapping file. Returns NULL when the file cannot be read
 * (errno set, nothing printed) or memory runs out. */
struct rs_classmap *rs_classmap_load(const char *path, const struct rs_classmap_opts *opts,
				     FILE *log);

void rs_classmap_free(struct rs_classmap *m);

/* Class of a key as received from Squid (already %XX-decoded): an address is
 * looked up among the prefixes of its family, anything else among logins;
 * "-" and "" (Squid's "no value") match nothing. Returns the class index or
 * -1; the default is NOT applied here (see rs_classmap_default()). */
long rs_classmap_lookup(const struct rs_classmap *m, const char *key, size_t len);

static inline long rs_classmap_default(const struct rs_classmap *m)
{
	return m->default_cls;
}

static inline const char *rs_classmap_class_name(const struct rs_classmap *m, long cls)
{
	return (cls >= 0 && (size_t)cls < m->nclasses) ? m->class_names[cls] : NULL;
}

#endif
