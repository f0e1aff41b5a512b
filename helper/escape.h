/* SPDX-License-Identifier: GPL-2.0-or-later */
/* escape.h - RFC 1738 %XX decoding of helper input tokens and mapping keys. */
#ifndef RS_HELPER_ESCAPE_H
#define RS_HELPER_ESCAPE_H

#include <stddef.h>
#include <sys/types.h>

/* Decode %XX escapes of s[0..len) in place ('+' is left alone: Squid does
 * not form-encode). Returns the new length, or -1 when a '%' is not followed
 * by two hex digits. The result may contain any byte, including NUL. */
ssize_t rs_url_decode(char *s, size_t len);

#endif
