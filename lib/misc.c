/* SPDX-License-Identifier: BSD-2-Clause */
/* misc.c - names, parsing, error strings and the key hash. */
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
	default: return "unknown error";
	}
}

static const char *const policy_names[] = { "msf", "rfq", "drr" };
static const char *const controller_names[] = {
	"wrc-mult", "wrc-aimd", "rtc", "fixed"
};

const char *rs_policy_name(enum rs_policy p)
{
	return (unsigned)p <= RS_POLICY_DRR ? policy_names[p] : "?";
}

const char *rs_controller_name(enum rs_controller c)
{
	return (unsigned)c <= RS_WIN_FIXED ? controller_names[c] : "?";
}

int rs_policy_parse(const char *str, enum rs_policy *p)
{
	unsigned i;

	if (!str || !p)
		return RS_EINVAL;
	for (i = 0; i <= RS_POLICY_DRR; i++)
		if (strcmp(str, policy_names[i]) == 0) {
			*p = (enum rs_policy)i;
			return 0;
		}
	return RS_EINVAL;
}

int rs_controller_parse(const char *str, enum rs_controller *c)
{
	unsigned i;

	if (!str || !c)
		return RS_EINVAL;
	for (i = 0; i <= RS_WIN_FIXED; i++)
		if (strcmp(str, controller_names[i]) == 0) {
			*c = (enum rs_controller)i;
			return 0;
		}
	return RS_EINVAL;
}

/* FNV-1a 64; 0 is reserved for "unknown key". */
uint64_t rs_hash(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; p && i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h ? h : 1;
}
