/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rs-sim - run one simulator spec: rs-sim SPEC|-  (result JSON on stdout).
 * Scenarios, tables and the report JSON are made by reqsched-sim (tools/).
 */
#include <stdio.h>
#include <string.h>

#include "sim.h"

int main(int argc, char **argv)
{
	struct spec sp;
	FILE *in;
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
	rc = spec_read(&sp, in, argv[1], stderr);
	if (in != stdin)
		fclose(in);
	if (rc)
		return 2;
	return sim_run(&sp, stdout, stderr) ? 1 : 0;
}
