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

/* Index of str among the n names, or -1 (also for a NULL str). */
static int name_index(const char *str, const char *const *names, int n)
{
	int i;

	for (i = 0; str && i < n; i++)
		if (strcmp(str, names[i]) == 0)
			return i;
	return -1;
}

int rs_policy_parse(const char *str, enum rs_policy *p)
{
	int i = name_index(str, policy_names, RS_POLICY_DRR + 1);

	if (i < 0 || !p)
		return RS_EINVAL;
	*p = (enum rs_policy)i;
	return 0;
}

int rs_controller_parse(const char *str, enum rs_controller *c)
{
	int i = name_index(str, controller_names, RS_WIN_FIXED + 1);

	if (i < 0 || !c)
		return RS_EINVAL;
	*c = (enum rs_controller)i;
	return 0;
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
