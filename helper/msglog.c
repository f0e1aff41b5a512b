/* SPDX-License-Identifier: GPL-2.0-or-later */
/* msglog.c - capped "file:line: message" reports. */
#include "msglog.h"

#include <stdarg.h>

void rs_msglog_init(struct rs_msglog *l, FILE *f, const char *fname)
{
	l->f = f;
	l->fname = fname ? fname : "(mapping)";
	l->left = RS_MSGLOG_MAX;
	l->suppressed = 0;
}

void rs_msglog_line(struct rs_msglog *l, unsigned int line, const char *fmt, ...)
{
	va_list ap;

	if (!l->f)
		return;
	if (l->left == 0) {
		l->suppressed++;
		return;
	}
	l->left--;
	fprintf(l->f, "%s:%u: ", l->fname, line);
	va_start(ap, fmt);
	vfprintf(l->f, fmt, ap);
	va_end(ap);
	fputc('\n', l->f);
}

void rs_msglog_finish(struct rs_msglog *l)
{
	if (l->f && l->suppressed)
		fprintf(l->f, "%s: %zu more messages not shown\n", l->fname, l->suppressed);
}
