/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_classmap.c - libFuzzer target: the class helper's mapping file
 * (helper/classmap.c with the prefix and string tables it fills).
 *
 * Input: a mapping file. It is parsed twice (login names with and without
 * ASCII case), then every token of the input is looked up as a key. The
 * map must stay consistent: counts add up, every class index names a class
 * of at most RS_CLASS_NAME_MAX bytes, the default is one of them or -1.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "classmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_class(const struct rs_classmap *m, long cls)
{
	const char *name;

	if (cls < 0)
		return;
	name = rs_classmap_class_name(m, cls);
	if (!name || !*name || strlen(name) > RS_CLASS_NAME_MAX)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;

	for (int nocase = 0; nocase < 2; nocase++) {
		const struct rs_classmap_opts opts = { .logins_nocase = nocase };
		struct rs_classmap *m = rs_classmap_parse(buf, size, NULL, &opts, NULL);
		const struct rs_load_stats *st;
		size_t i = 0;

		if (!m)
			abort();
		st = &m->stats;
		if (st->malformed > st->lines || st->v4 + st->v6 + st->logins > st->lines)
			abort();
		if (m->default_cls >= (long)m->nclasses || st->has_default != (m->default_cls >= 0))
			abort();
		check_class(m, m->default_cls);
		while (i < size) {
			size_t j = i;

			while (j < size && buf[j] != ' ' && buf[j] != '\t' && buf[j] != '\n')
				j++;
			check_class(m, rs_classmap_lookup(m, buf + i, j - i));
			i = j + 1;
		}
		rs_classmap_free(m);
	}
	return 0;
}
