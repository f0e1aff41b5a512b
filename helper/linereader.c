/* SPDX-License-Identifier: GPL-2.0-or-later */
/* linereader.c - bounded line reader over a file descriptor. */
#include "linereader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rs_lr_init(struct rs_linereader *lr, int fd, size_t cap)
{
	memset(lr, 0, sizeof(*lr));
	lr->fd = fd;
	lr->cap = cap < 16 ? 16 : cap;
	lr->buf = malloc(lr->cap);
	return lr->buf ? 0 : -1;
}

void rs_lr_free(struct rs_linereader *lr)
{
	free(lr->buf);
	lr->buf = NULL;
}

ssize_t rs_lr_fill(struct rs_linereader *lr)
{
	ssize_t r;

	if (lr->start > 0) {
		memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
		lr->end -= lr->start;
		lr->start = 0;
	}
	if (lr->end == lr->cap)
		return (ssize_t)-1;	/* cannot happen: rs_lr_next() empties a full buffer */
	do
		r = read(lr->fd, lr->buf + lr->end, lr->cap - lr->end);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		lr->eof = true;
	if (r > 0)
		lr->end += (size_t)r;
	return r;
}

bool rs_lr_next(struct rs_linereader *lr, char **line, size_t *len, bool *truncated)
{
	for (;;) {
		char *p = lr->buf + lr->start;
		size_t avail = lr->end - lr->start;
		char *nl = memchr(p, '\n', avail);

		if (lr->discarding) {
			if (!nl) {
				lr->start = lr->end = 0;	/* drop it all, keep waiting */
				return false;
			}
			lr->start += (size_t)(nl - p) + 1;
			lr->discarding = false;
			continue;
		}
		if (nl) {
			*line = p;
			*len = (size_t)(nl - p);
			*truncated = false;
			lr->start += *len + 1;
			return true;
		}
		if (avail == lr->cap) {		/* over-long: hand out the head */
			*line = p;
			*len = avail;
			*truncated = true;
			lr->start = lr->end;
			lr->discarding = true;
			return true;
		}
		if (lr->eof && avail > 0) {	/* last line without '\n' */
			*line = p;
			*len = avail;
			*truncated = false;
			lr->start = lr->end;
			return true;
		}
		return false;
	}
}
