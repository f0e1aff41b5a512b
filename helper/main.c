/* SPDX-License-Identifier: GPL-2.0-or-later */
/* main.c - ext_reqsched_class_acl: Squid external ACL helper that maps a
 * client key (address, login) to a reqsched class.
 *
 *   external_acl_type rs_class ttl=60 concurrency=50 %SRC \
 *       /usr/lib/squid/ext_reqsched_class_acl -C /etc/squid/reqsched-classes.map
 *
 * Reads requests on stdin, answers on stdout, reports on stderr (Squid's
 * cache.log). One reply per request line, in order; replies of one read()
 * batch are written together before blocking again.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "classmap.h"
#include "linereader.h"
#include "protocol.h"
#include "watch.h"

#define PROG "ext_reqsched_class_acl"
#define INPUT_BUF (64 * 1024)
#define OUTPUT_BUF (64 * 1024)

struct options {
	enum rs_chan_mode chan;
	size_t want_keys;	/* 1, or RS_MAX_KEYS with -F */
	struct rs_classmap_opts map;
	double interval_s;
	bool quiet;
	bool check_only;
	const char *lookup_key;
	const char *path;
};

struct outbuf {
	char buf[OUTPUT_BUF];
	size_t len;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [-C|-N] [-F] [-i] [-r SECONDS] [-q] MAPFILE\n"
		"       " PROG " -t [-i] MAPFILE          check the file, print a summary\n"
		"       " PROG " -l KEY [-i] MAPFILE      print the class of one key\n"
		"  -C  every request starts with a channel ID (external_acl_type concurrency=N, N>0)\n"
		"  -N  requests never carry a channel ID (concurrency=0)\n"
		"      default: a leading all-digit token followed by another token is a channel ID\n"
		"  -F  if the first key has no entry, try the following tokens in order\n"
		"  -i  compare login names ignoring ASCII case\n"
		"  -r  check the file for changes at most every SECONDS (default 1; 0: every batch)\n"
		"  -q  no summary line in cache.log after each (re)load\n"
		"Replies: OK tag=CLASS reqsched_class=CLASS | ERR (no entry, no default) | BH message=...\n");
}

static int parse_args(int argc, char **argv, struct options *o)
{
	int c;
	char *end;

	memset(o, 0, sizeof(*o));
	o->chan = RS_CHAN_AUTO;
	o->want_keys = 1;
	o->interval_s = 1.0;
	while ((c = getopt(argc, argv, "CNFir:qtl:h")) != -1) {
		switch (c) {
		case 'C': o->chan = RS_CHAN_ALWAYS; break;
		case 'N': o->chan = RS_CHAN_NEVER; break;
		case 'F': o->want_keys = RS_MAX_KEYS; break;
		case 'i': o->map.logins_nocase = true; break;
		case 'q': o->quiet = true; break;
		case 't': o->check_only = true; break;
		case 'l': o->lookup_key = optarg; break;
		case 'r':
			errno = 0;
			o->interval_s = strtod(optarg, &end);
			if (errno || *end || o->interval_s < 0 || o->interval_s > 86400) {
				fprintf(stderr, PROG ": -r: bad interval '%s' (seconds, 0..86400)\n", optarg);
				return -1;
			}
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return -1;
	}
	o->path = argv[optind];
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Write everything; false when stdout is gone (Squid closed the pipe). */
static bool flush_out(struct outbuf *out)
{
	size_t off = 0;

	while (off < out->len) {
		ssize_t w = write(STDOUT_FILENO, out->buf + off, out->len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		off += (size_t)w;
	}
	out->len = 0;
	return true;
}

/* Class for a request: the first key with an entry, else the default. */
static long classify(const struct rs_classmap *m, const struct rs_request *req)
{
	for (size_t i = 0; m && i < req->nkeys; i++) {
		long cls = rs_classmap_lookup(m, req->key[i], req->key_len[i]);

		if (cls >= 0)
			return cls;
	}
	return m ? rs_classmap_default(m) : -1;
}

/* With -N, a request that starts with a number followed by more tokens is
 * most likely a channel ID (concurrency= without -C): say so once. */
static void warn_if_channel_like(const struct options *o, const struct rs_request *req,
				 const char *line, size_t len)
{
	static bool warned;
	const char *k = req->key[0], *end = line + len;

	if (warned || o->chan != RS_CHAN_NEVER || req->nkeys == 0 || req->key_len[0] == 0)
		return;
	for (size_t i = 0; i < req->key_len[0]; i++)
		if (k[i] < '0' || k[i] > '9')
			return;
	for (const char *p = k + req->key_len[0]; p < end; p++) {
		if (*p != ' ' && *p != '\t' && *p != '\r') {
			fprintf(stderr, PROG ": request '%.*s ...' starts with a number: if "
				"external_acl_type has concurrency=N (N>0), run the helper with -C\n",
				(int)req->key_len[0], k);
			warned = true;
			return;
		}
	}
}

static bool answer(const struct options *o, const struct rs_classmap *m, char *line,
		   size_t len, bool truncated, struct outbuf *out)
{
	struct rs_request req;
	const char *bh = rs_request_parse(line, len, truncated, o->chan, o->want_keys, &req);
	char reply[256];
	size_t n;

	if (bh) {
		n = rs_reply_format(reply, sizeof(reply), &req, RS_REPLY_BH, bh);
	} else {
		long cls = classify(m, &req);

		warn_if_channel_like(o, &req, line, len);

		n = cls >= 0 ? rs_reply_format(reply, sizeof(reply), &req, RS_REPLY_OK,
					       rs_classmap_class_name(m, cls)) :
			       rs_reply_format(reply, sizeof(reply), &req, RS_REPLY_ERR, NULL);
	}
	if (n == 0)	/* cannot happen: channel <= 10 digits, class <= 64 bytes */
		n = rs_reply_format(reply, sizeof(reply), NULL, RS_REPLY_BH, "reply too long");
	if (out->len + n > sizeof(out->buf) && !flush_out(out))
		return false;
	memcpy(out->buf + out->len, reply, n);
	out->len += n;
	return true;
}

static int serve(const struct options *o, struct rs_watch *w, struct rs_classmap **map)
{
	static struct outbuf out;
	struct rs_linereader lr;
	char *line;
	size_t len;
	bool truncated;

	if (rs_lr_init(&lr, STDIN_FILENO, INPUT_BUF) < 0) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	for (;;) {
		ssize_t r = rs_lr_fill(&lr);

		if (r < 0) {
			fprintf(stderr, PROG ": reading stdin: %s\n", strerror(errno));
			rs_lr_free(&lr);
			return 1;
		}
		rs_watch_poll(w, map, now_ns());
		while (rs_lr_next(&lr, &line, &len, &truncated)) {
			if (!answer(o, *map, line, len, truncated, &out)) {
				rs_lr_free(&lr);
				return 0;
			}
		}
		if (!flush_out(&out) || r == 0)
			break;
	}
	rs_lr_free(&lr);
	return 0;
}

static int lookup_one(const struct options *o, const struct rs_classmap *m)
{
	char key[1024];
	struct rs_request req;
	size_t n = strlen(o->lookup_key);
	long cls;

	if (n >= sizeof(key)) {
		fprintf(stderr, PROG ": -l: key too long\n");
		return 2;
	}
	memcpy(key, o->lookup_key, n + 1);
	if (rs_request_parse(key, n, false, RS_CHAN_NEVER, 1, &req)) {
		fprintf(stderr, PROG ": -l: bad key '%s'\n", o->lookup_key);
		return 2;
	}
	cls = classify(m, &req);
	if (cls < 0) {
		printf("ERR\n");
		return 1;
	}
	printf("%s\n", rs_classmap_class_name(m, cls));
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	struct rs_watch w;
	struct rs_classmap *map = NULL;
	int rc;

	if (parse_args(argc, argv, &o) < 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	rs_watch_init(&w, o.path, &o.map, o.interval_s, stderr,
		      o.quiet || o.lookup_key != NULL);
	/* An unreadable file at start is fatal: Squid reports the dying
	 * helper loudly, which beats silently classifying nobody. */
	if (rs_watch_load(&w, &map) != RS_WATCH_RELOADED) {
		fprintf(stderr, PROG ": cannot start without a readable mapping file\n");
		return 1;
	}
	if (o.check_only)
		rc = map->stats.malformed ? 1 : 0;
	else if (o.lookup_key)
		rc = lookup_one(&o, map);
	else
		rc = serve(&o, &w, &map);
	rs_classmap_free(map);
	return rc;
}
