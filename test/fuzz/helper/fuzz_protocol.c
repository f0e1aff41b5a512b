/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_protocol.c - libFuzzer target: the class helper's request stream
 * (helper/linereader.c, protocol.c, classmap.c lookups), driven as
 * helper/main.c's serve() drives it.
 *
 * Input: byte 0 picks the channel mode (-C, -N or auto) and -F, byte 1 the
 * line reader's buffer size (16..271 bytes, so long lines are cut), the rest
 * is what Squid writes to the helper's stdin. Every reply must be one line
 * ending in '\n', start with the request's channel ID when it had one, and
 * carry the verdict OK, ERR or BH.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "classmap.h"
#include "linereader.h"
#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char map_text[] =
	"10.1.0.0/16 gold\n"
	"10.1.2.3 silver\n"
	"2001:db8:1::/48 gold\n"
	"user:alice silver\n"
	"user:John%20Smith gold\n"
	"default bronze\n";

static void check_reply(const char *reply, size_t n, const struct rs_request *req)
{
	const char *verdict = reply;

	if (n == 0 || reply[n - 1] != '\n' || memchr(reply, '\n', n - 1))
		abort();
	if (req->channel) {
		if (n < req->channel_len + 1 || memcmp(reply, req->channel, req->channel_len) ||
		    reply[req->channel_len] != ' ')
			abort();
		verdict = reply + req->channel_len + 1;
	}
	if (strncmp(verdict, "OK ", 3) && strncmp(verdict, "ERR\n", 4) && strncmp(verdict, "BH ", 3))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rs_classmap *map;
	static const enum rs_chan_mode modes[] = { RS_CHAN_AUTO, RS_CHAN_ALWAYS, RS_CHAN_NEVER };
	struct rs_linereader lr;
	struct rs_request req;
	char reply[256], *line;
	size_t len, want_keys;
	bool truncated;
	enum rs_chan_mode mode;
	int fd;

	if (!map) {
		const struct rs_classmap_opts opts = { .logins_nocase = false };

		map = rs_classmap_parse(map_text, sizeof(map_text) - 1, NULL, &opts, NULL);
		if (!map)
			abort();
	}
	if (size < 2)
		return 0;
	mode = modes[data[0] % 3];
	want_keys = (data[0] & 4) ? RS_MAX_KEYS : 1;
	fd = memfd_create("fuzz_protocol", 0);
	if (fd < 0 || write(fd, data + 2, size - 2) != (ssize_t)(size - 2) || lseek(fd, 0, SEEK_SET))
		abort();
	if (rs_lr_init(&lr, fd, 16 + data[1]) < 0)
		abort();
	for (;;) {
		ssize_t r = rs_lr_fill(&lr);

		if (r < 0)
			abort();
		while (rs_lr_next(&lr, &line, &len, &truncated)) {
			const char *bh = rs_request_parse(line, len, truncated, mode, want_keys, &req);
			size_t n;

			if (bh) {
				n = rs_reply_format(reply, sizeof(reply), &req, RS_REPLY_BH, bh);
			} else {
				long cls = -1;

				for (size_t i = 0; i < req.nkeys && cls < 0; i++)
					cls = rs_classmap_lookup(map, req.key[i], req.key_len[i]);
				if (cls < 0)
					cls = rs_classmap_default(map);
				n = rs_reply_format(reply, sizeof(reply), &req, RS_REPLY_OK,
						    rs_classmap_class_name(map, cls));
			}
			check_reply(reply, n, &req);
		}
		if (r == 0)
			break;
	}
	rs_lr_free(&lr);
	close(fd);
	return 0;
}
