/* SPDX-License-Identifier: GPL-2.0-or-later */
/* escape.c - RFC 1738 %XX decoding. */
#include "escape.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

ssize_t rs_url_decode(char *s, size_t len)
{
	size_t in = 0, out = 0;

	while (in < len) {
		if (s[in] != '%') {
			s[out++] = s[in++];
			continue;
		}
		if (len - in < 3)
			return -1;
		int hi = hexval(s[in + 1]), lo = hexval(s[in + 2]);

		if (hi < 0 || lo < 0)
			return -1;
		s[out++] = (char)(hi << 4 | lo);
		in += 3;
	}
	return (ssize_t)out;
}
