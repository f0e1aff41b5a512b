/* SPDX-License-Identifier: GPL-2.0-or-later */
/* addr.h - IPv4/IPv6 addresses and CIDR prefixes as left-aligned 128-bit keys.
 *
 * An IPv4 address occupies the top 32 bits of .hi (so 10.0.0.0/8 and
 * 2001:db8::/32 mask the same way); IPv4 and IPv6 never share a table, the
 * family says which one to use.
 */
#ifndef RS_HELPER_ADDR_H
#define RS_HELPER_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rs_family { RS_AF_NONE = 0, RS_AF_INET4 = 4, RS_AF_INET6 = 6 };

struct rs_key128 {
	uint64_t hi;
	uint64_t lo;
};

struct rs_prefix {
	enum rs_family family;
	struct rs_key128 key;	/* masked to len bits */
	unsigned int len;	/* 0..32 (IPv4) or 0..128 (IPv6) */
	bool host_bits_set;	/* the text had bits beyond len (they were cleared) */
};

/* Width in bits of an address of this family (32 or 128, 0 for NONE). */
unsigned int rs_family_bits(enum rs_family f);

/* Clear every bit after the first len bits. */
struct rs_key128 rs_key_mask(struct rs_key128 k, unsigned int len);

static inline int rs_key_cmp(struct rs_key128 a, struct rs_key128 b)
{
	if (a.hi != b.hi)
		return a.hi < b.hi ? -1 : 1;
	if (a.lo != b.lo)
		return a.lo < b.lo ? -1 : 1;
	return 0;
}

/* Parse a client address as Squid prints it for %SRC: dotted IPv4, IPv6
 * (optionally in [brackets] and with a %zone suffix). An IPv4-mapped IPv6
 * address (::ffff:a.b.c.d) is returned as IPv4. Returns false when the text
 * is not an address. len is a full-width prefix. */
bool rs_parse_addr(const char *s, size_t n, struct rs_prefix *out);

/* Parse "ADDR" or "ADDR/LEN" from a mapping file. Host bits beyond LEN are
 * cleared and reported in host_bits_set. Returns NULL on success or a static
 * string describing the problem. */
const char *rs_parse_prefix(const char *s, size_t n, struct rs_prefix *out);

#endif
