/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rs-sim - run one simulator spec: rs-sim SPEC|-  (result JSON on stdout).
 * A spec whose first directive is "model gateway" runs the website-gateway
 * model (gateway.c), any other the access-link model (sim.c).
 * Scenarios, tables and the report JSON are made by reqsched-sim (tools/).
 */
#define _POSIX_C_SOURCE 200809L	/* fmemopen */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "sim.h"

/* The whole spec, NUL-terminated, or NULL. */
static char *slurp(FILE *in)
{
	size_t n = 0, cap = 4096;
	char *buf = malloc(cap);

	while (buf) {
		size_t got = fread(buf + n, 1, cap - n - 1, in);

		n += got;
		if (n < cap - 1) {
			buf[n] = '\0';
			return buf;
		}
		cap *= 2;
		buf = realloc(buf, cap);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct spec sp;
	FILE *in, *mem;
	char *text;
	int rc;

	if (argc != 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(stderr, "usage: rs-sim SPEC_FILE|-\n"
			"  runs one simulation; result JSON on stdout\n");
		return 2;
	}
	in = strcmp(argv[1], "-") ? fopen(argv[1], "r") : stdin;
	if (!in) {
		perror(argv[1]);
		return 2;
	}
	text = slurp(in);
	if (in != stdin)
		fclose(in);
	if (!text) {
		perror(argv[1]);
		return 2;
	}
	if (gateway_spec(text)) {
		rc = gateway_run(text, argv[1], stdout, stderr) ? 1 : 0;
		free(text);
		return rc;
	}
	mem = fmemopen(text, strlen(text), "r");
	rc = mem ? spec_read(&sp, mem, argv[1], stderr) : -1;
	if (mem)
		fclose(mem);
	free(text);
	if (rc)
		return 2;
	return sim_run(&sp, stdout, stderr) ? 1 : 0;
}
