/* SPDX-License-Identifier: GPL-2.0-or-later */
/* http.h - incremental parser of one HTTP/1.x response as loadengine.py
 * reads it: the head (at most HTTP_HEAD_MAX bytes), then a body framed by
 * Content-Length, chunked Transfer-Encoding, or the connection's end; none
 * for HEAD, 1xx, 204 and 304. Reusable: "Connection: close" absent and
 * HTTP/1.1 (a body up to EOF never is). */
#ifndef RS_LOADC_HTTP_H
#define RS_LOADC_HTTP_H

#include <stddef.h>
#include <stdint.h>

#define HTTP_HEAD_MAX 65536
#define HTTP_LINE_MAX 4096

enum resp_state { R_HEAD, R_LEN, R_EOF, R_CHUNK_SIZE, R_CHUNK_DATA, R_CHUNK_CRLF,
		  R_TRAILER, R_DONE };

struct resp {
	enum resp_state state;
	int head_only;            /* the request was HEAD or CONNECT: no body */
	int status;
	int keep;
	uint64_t left;            /* R_LEN, R_CHUNK_DATA: body bytes to come; R_CHUNK_CRLF: 2, 1 */
	uint64_t body;            /* body bytes so far */
	char *buf;                /* the head, or a chunk-size/trailer line, so far */
	size_t len, cap;
};

/* Ready for a response (head_only: to HEAD or CONNECT). */
void resp_start(struct resp *r, int head_only);
void resp_free(struct resp *r);

/* Feed n bytes. Returns the bytes used (< n only at R_DONE), or -1 with *err. */
long resp_feed(struct resp *r, const char *p, size_t n, const char **err);

/* The connection ended: 0 if that completes the response (R_EOF), else -1. */
int resp_eof(struct resp *r);

#endif
