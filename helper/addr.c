/* SPDX-License-Identifier: GPL-2.0-or-later */
/* addr.c - parse addresses and CIDR prefixes into left-aligned 128-bit keys. */
#include "addr.h"

#include <arpa/inet.h>
#include <string.h>

/* Longest textual IPv6 address with an embedded IPv4 tail is 45 chars. */
#define ADDR_TEXT_MAX 64

unsigned int rs_family_bits(enum rs_family f)
{
	switch (f) {
	case RS_AF_INET4:
		return 32;
	case RS_AF_INET6:
		return 128;
	default:
		return 0;
	}
}

struct rs_key128 rs_key_mask(struct rs_key128 k, unsigned int len)
{
	if (len == 0) {
		k.hi = 0;
		k.lo = 0;
	} else if (len < 64) {
		k.hi &= ~UINT64_C(0) << (64 - len);
		k.lo = 0;
	} else if (len == 64) {
		k.lo = 0;
	} else if (len < 128) {
		k.lo &= ~UINT64_C(0) << (128 - len);
	}
	return k;
}

static uint64_t load_be64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

static void key_from_v4(const unsigned char b[4], struct rs_key128 *k)
{
	k->hi = ((uint64_t)b[0] << 56) | ((uint64_t)b[1] << 48) |
		((uint64_t)b[2] << 40) | ((uint64_t)b[3] << 32);
	k->lo = 0;
}

static bool is_v4_mapped(const unsigned char b[16])
{
	static const unsigned char pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(b, pfx, sizeof(pfx)) == 0;
}

/* Copy s[0..n) to buf as a C string; false if it does not fit or has a NUL. */
static bool copy_text(char *buf, size_t cap, const char *s, size_t n)
{
	if (n == 0 || n >= cap || memchr(s, '\0', n))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return true;
}

/* Parse a bare address (no /len) into out with a full-width length.
 * map_v4: turn ::ffff:a.b.c.d into IPv4. */
static bool parse_bare(char *text, bool map_v4, struct rs_prefix *out)
{
	unsigned char b[16];

	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, text, b) == 1) {
		out->family = RS_AF_INET4;
		key_from_v4(b, &out->key);
		out->len = 32;
		return true;
	}
	if (inet_pton(AF_INET6, text, b) == 1) {
		if (map_v4 && is_v4_mapped(b)) {
			out->family = RS_AF_INET4;
			key_from_v4(b + 12, &out->key);
			out->len = 32;
			return true;
		}
		out->family = RS_AF_INET6;
		out->key.hi = load_be64(b);
		out->key.lo = load_be64(b + 8);
		out->len = 128;
		return true;
	}
	return false;
}

bool rs_parse_addr(const char *s, size_t n, struct rs_prefix *out)
{
	char buf[ADDR_TEXT_MAX];
	char *text = buf;
	char *p;

	if (!copy_text(buf, sizeof(buf), s, n))
		return false;
	if (text[0] == '[') {
		p = strchr(text, ']');
		if (!p || p[1] != '\0')
			return false;
		*p = '\0';
		text++;
	}
	p = strchr(text, '%');		/* IPv6 zone id, e.g. fe80::1%eth0 */
	if (p && strchr(text, ':'))
		*p = '\0';
	return parse_bare(text, true, out);
}

/* Parse a decimal prefix length no larger than max. */
static bool parse_len(const char *s, unsigned int max, unsigned int *len)
{
	unsigned int v = 0;

	if (!*s || strlen(s) > 3)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (unsigned int)(*s - '0');
	}
	if (v > max)
		return false;
	*len = v;
	return true;
}

const char *rs_parse_prefix(const char *s, size_t n, struct rs_prefix *out)
{
	char buf[ADDR_TEXT_MAX];
	char *slash;
	unsigned int len;
	struct rs_key128 masked;

	if (!copy_text(buf, sizeof(buf), s, n))
		return "not an address or prefix";
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	if (!parse_bare(buf, false, out))
		return "not an IPv4/IPv6 address";
	if (slash) {
		if (!parse_len(slash + 1, rs_family_bits(out->family), &len))
			return out->family == RS_AF_INET4 ?
				"bad prefix length (IPv4: 0..32)" :
				"bad prefix length (IPv6: 0..128)";
		out->len = len;
	}
	masked = rs_key_mask(out->key, out->len);
	out->host_bits_set = rs_key_cmp(masked, out->key) != 0;
	out->key = masked;
	return NULL;
}
