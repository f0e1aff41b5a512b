/* SPDX-License-Identifier: GPL-2.0-or-later */
/* linereader.h - bounded line reader over a file descriptor.
 *
 * Memory stays at one fixed buffer whatever Squid sends: a line longer than
 * the buffer is returned cut to the buffer size with *truncated set, and the
 * rest of it, up to its '\n', is read and thrown away.
 * Invariant: start <= end <= cap; buf[start..end) is unconsumed input.
 */
#ifndef RS_HELPER_LINEREADER_H
#define RS_HELPER_LINEREADER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct rs_linereader {
	int fd;
	char *buf;
	size_t cap, start, end;
	bool discarding;	/* inside the tail of an over-long line */
	bool eof;
};

int rs_lr_init(struct rs_linereader *lr, int fd, size_t cap);
void rs_lr_free(struct rs_linereader *lr);

/* Read once (blocking) into the buffer. Returns bytes read, 0 at end of
 * input, -1 on error (errno set; EINTR is retried). */
ssize_t rs_lr_fill(struct rs_linereader *lr);

/* Next line from the buffer, without its '\n'; the pointer is valid until
 * the next rs_lr_fill(). After end of input a last unterminated line is
 * returned too. Returns false when no whole line is buffered. */
bool rs_lr_next(struct rs_linereader *lr, char **line, size_t *len, bool *truncated);

#endif
