/* SPDX-License-Identifier: GPL-2.0-or-later */
/* protocol.h - Squid external ACL helper protocol (request and reply lines).
 *
 * Request:  [channel-ID] KEY [more tokens ...]\n
 *           every token URL-escaped (RFC 1738) by Squid; the channel ID is
 *           present when external_acl_type has concurrency=N (N > 0).
 * Reply:    [channel-ID] OK tag=CLASS reqsched_class=CLASS\n
 *           [channel-ID] ERR\n
 *           [channel-ID] BH message="reason"\n
 *
 * Squid turns BH into "dunno", which ends the http_access check with a
 * denial: BH is reserved for input no Squid would send.
 */
#ifndef RS_HELPER_PROTOCOL_H
#define RS_HELPER_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>

#define RS_MAX_KEYS 8		/* tokens considered after the channel ID */
#define RS_CHANNEL_MAX_DIGITS 10

enum rs_chan_mode {
	RS_CHAN_AUTO,		/* leading all-digit token followed by another token */
	RS_CHAN_ALWAYS,		/* -C: every line starts with a channel ID */
	RS_CHAN_NEVER,		/* -N: no channel IDs */
};

struct rs_request {
	const char *channel;	/* NULL when the line carries none */
	size_t channel_len;
	const char *key[RS_MAX_KEYS];	/* %XX-decoded in place */
	size_t key_len[RS_MAX_KEYS];
	size_t nkeys;
};

/* Parse a request line (without its '\n') in place. want_keys (1..RS_MAX_KEYS)
 * is how many tokens after the channel ID to decode; the rest of the line is
 * ignored. truncated says the line was longer than the reader's buffer and
 * was cut: its last token is then dropped as possibly partial.
 * Returns NULL, or the reason for a BH reply (req->channel is still filled in
 * when a channel ID was recognised, so the BH can be routed back). */
const char *rs_request_parse(char *line, size_t len, bool truncated, enum rs_chan_mode mode,
			     size_t want_keys, struct rs_request *req);

enum rs_verdict { RS_REPLY_OK, RS_REPLY_ERR, RS_REPLY_BH };

/* Format one reply line including '\n' into out. arg is the class name for
 * OK, the message for BH, ignored for ERR. Returns the length written, or 0
 * if it does not fit in cap. */
size_t rs_reply_format(char *out, size_t cap, const struct rs_request *req,
		       enum rs_verdict v, const char *arg);

#endif
