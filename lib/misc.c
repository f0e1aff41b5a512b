/* SPDX-License-Identifier: GPL-2.0-or-later */
/* misc.c - error strings, the key hash, cache-line aligned arrays. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *rs_strerror(int err)
{
	switch (err) {
	case RS_OK: return "success";
	case RS_EINVAL: return "invalid argument";
	case RS_ENOCLASS: return "unknown class";
	case RS_ESTALE: return "unknown, ended or cancelled request id";
	case RS_ESTATE: return "request is in the wrong state for this call";
	case RS_ENOMEM: return "out of memory";
	case RS_EEXIST: return "class name already exists";
	case RS_EFULL: return "too many queued requests";
	case RS_EBUSY: return "called from inside the release callback";
	case RS_EUSERFULL: return "too many queued requests of this user";
	case RS_ECLASSFULL: return "too many queued requests of this class";
	default: return "unknown error";
	}
}

/* FNV-1a 64 of data, continued from h (RS_FNV_BASIS for a new hash). */
uint64_t rs_fnv(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; p && i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* FNV-1a 64; 0 is reserved for "unknown key". */
uint64_t rs_hash(const void *data, size_t len)
{
	uint64_t h = rs_fnv(RS_FNV_BASIS, data, len);

	return h ? h : 1;
}

/* The per-class arrays (struct rs_class, rs_cres) keep each element on
 * whole cache lines, so a request's class touches the lines its layout
 * says (internal.h). */
void *rs_line_array(void *old, size_t n, size_t cap, size_t size)
{
	char *p = aligned_alloc(RS_LINE, cap * size);

	if (!p)
		return NULL;
	if (n)
		memcpy(p, old, n * size);
	memset(p + n * size, 0, (cap - n) * size);
	free(old);
	return p;
}
