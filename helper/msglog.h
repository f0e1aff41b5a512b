/* SPDX-License-Identifier: GPL-2.0-or-later */
/* msglog.h - "file:line: message" reports with a cap per load, so a
 * 100,000-line file full of mistakes cannot flood cache.log. */
#ifndef RS_HELPER_MSGLOG_H
#define RS_HELPER_MSGLOG_H

#include <stddef.h>
#include <stdio.h>

#define RS_MSGLOG_MAX 50	/* messages printed per load; the rest are counted */

struct rs_msglog {
	FILE *f;		/* NULL: silent */
	const char *fname;
	unsigned int left;
	size_t suppressed;
};

void rs_msglog_init(struct rs_msglog *l, FILE *f, const char *fname);

/* Print "fname:line: <formatted>\n" unless the cap is reached. */
void rs_msglog_line(struct rs_msglog *l, unsigned int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Print how many messages were not shown, if any. */
void rs_msglog_finish(struct rs_msglog *l);

#endif
