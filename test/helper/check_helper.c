/* SPDX-License-Identifier: GPL-2.0-or-later */
/* check_helper.c - Check unit tests of the ext_reqsched_class_acl library:
 * address parsing, mapping file parsing, longest-prefix match (IPv4, IPv6),
 * logins, defaults, malformed lines, reload (also a failed one), protocol
 * (channel IDs, BH on garbage, long lines) and a 100,000-entry table. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "addr.h"
#include "classmap.h"
#include "escape.h"
#include "linereader.h"
#include "msglog.h"
#include "protocol.h"
#include "watch.h"

/* ---------- helpers ---------- */

static struct rs_classmap *parse_str(const char *text, char **log_out)
{
	char *logbuf = NULL;
	size_t loglen = 0;
	FILE *log = open_memstream(&logbuf, &loglen);
	struct rs_classmap *m;

	ck_assert_ptr_nonnull(log);
	m = rs_classmap_parse(text, strlen(text), "test.map", NULL, log);
	fclose(log);
	if (log_out)
		*log_out = logbuf;
	else
		free(logbuf);
	ck_assert_ptr_nonnull(m);
	return m;
}

/* Class name for a key, the default applied; "ERR" when none. */
static const char *class_of(const struct rs_classmap *m, const char *key)
{
	long c = rs_classmap_lookup(m, key, strlen(key));

	if (c < 0)
		c = rs_classmap_default(m);
	return c < 0 ? "ERR" : rs_classmap_class_name(m, c);
}

static void write_file(const char *path, const char *text)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(rename(tmp, path), 0);	/* atomic, as documented */
}

static char *make_tmpdir(void)
{
	char *d = strdup("/tmp/rs-check-helper-XXXXXX");

	ck_assert_ptr_nonnull(mkdtemp(d));
	return d;
}

/* ---------- addresses ---------- */

START_TEST(test_addr_parse)
{
	struct rs_prefix p;

	ck_assert(rs_parse_addr("10.1.2.3", 8, &p));
	ck_assert_int_eq(p.family, RS_AF_INET4);
	ck_assert_uint_eq(p.key.hi, UINT64_C(0x0a01020300000000));
	ck_assert_uint_eq(p.len, 32);

	ck_assert(rs_parse_addr("2001:db8::1", 11, &p));
	ck_assert_int_eq(p.family, RS_AF_INET6);
	ck_assert_uint_eq(p.key.hi, UINT64_C(0x20010db800000000));
	ck_assert_uint_eq(p.key.lo, 1);

	ck_assert(rs_parse_addr("::ffff:10.1.2.3", 15, &p));	/* mapped -> IPv4 */
	ck_assert_int_eq(p.family, RS_AF_INET4);
	ck_assert_uint_eq(p.key.hi, UINT64_C(0x0a01020300000000));

	ck_assert(rs_parse_addr("[fe80::1]", 9, &p));
	ck_assert_int_eq(p.family, RS_AF_INET6);
	ck_assert(rs_parse_addr("fe80::1%eth0", 12, &p));
	ck_assert_uint_eq(p.key.lo, 1);

	ck_assert(!rs_parse_addr("alice", 5, &p));
	ck_assert(!rs_parse_addr("10.1.2", 6, &p));
	ck_assert(!rs_parse_addr("10.1.2.256", 10, &p));
	ck_assert(!rs_parse_addr("", 0, &p));
	ck_assert(!rs_parse_addr("10.1.2.3\0x", 10, &p));
}
END_TEST

START_TEST(test_prefix_parse)
{
	struct rs_prefix p;

	ck_assert_ptr_null(rs_parse_prefix("10.1.0.0/16", 11, &p));
	ck_assert_uint_eq(p.len, 16);
	ck_assert(!p.host_bits_set);

	ck_assert_ptr_null(rs_parse_prefix("10.1.2.3/16", 11, &p));
	ck_assert(p.host_bits_set);
	ck_assert_uint_eq(p.key.hi, UINT64_C(0x0a01000000000000));

	ck_assert_ptr_null(rs_parse_prefix("0.0.0.0/0", 9, &p));
	ck_assert_uint_eq(p.len, 0);

	ck_assert_ptr_null(rs_parse_prefix("2001:db8::/32", 13, &p));
	ck_assert_uint_eq(p.len, 32);
	ck_assert_ptr_null(rs_parse_prefix("2001:db8::ff/120", 16, &p));
	ck_assert_uint_eq(p.key.lo, 0);
	ck_assert(p.host_bits_set);

	ck_assert_ptr_nonnull(rs_parse_prefix("10.0.0.0/33", 11, &p));
	ck_assert_ptr_nonnull(rs_parse_prefix("2001:db8::/129", 14, &p));
	ck_assert_ptr_nonnull(rs_parse_prefix("10.0.0.0/", 9, &p));
	ck_assert_ptr_nonnull(rs_parse_prefix("10.0.0.0/8x", 11, &p));
	ck_assert_ptr_nonnull(rs_parse_prefix("10.0.0.0/-1", 11, &p));
	ck_assert_ptr_nonnull(rs_parse_prefix("::ffff:10.0.0.0/999", 19, &p));
}
END_TEST

START_TEST(test_key_mask)
{
	struct rs_key128 k = { ~UINT64_C(0), ~UINT64_C(0) }, m;

	m = rs_key_mask(k, 0);
	ck_assert(m.hi == 0 && m.lo == 0);
	m = rs_key_mask(k, 1);
	ck_assert(m.hi == UINT64_C(0x8000000000000000) && m.lo == 0);
	m = rs_key_mask(k, 64);
	ck_assert(m.hi == ~UINT64_C(0) && m.lo == 0);
	m = rs_key_mask(k, 65);
	ck_assert(m.hi == ~UINT64_C(0) && m.lo == UINT64_C(0x8000000000000000));
	m = rs_key_mask(k, 128);
	ck_assert(m.hi == ~UINT64_C(0) && m.lo == ~UINT64_C(0));
}
END_TEST

START_TEST(test_url_decode)
{
	char a[] = "John%20Smith", b[] = "100%", c[] = "%zz", d[] = "%41%2f+";

	ck_assert_int_eq(rs_url_decode(a, strlen(a)), 10);
	ck_assert_mem_eq(a, "John Smith", 10);
	ck_assert_int_eq(rs_url_decode(b, strlen(b)), -1);
	ck_assert_int_eq(rs_url_decode(c, strlen(c)), -1);
	ck_assert_int_eq(rs_url_decode(d, strlen(d)), 3);
	ck_assert_mem_eq(d, "A/+", 3);
}
END_TEST

/* ---------- mapping file ---------- */

static const char *MAP1 =
	"# reqsched classes\n"
	"\n"
	"10.0.0.0/8        bronze\n"
	"10.1.0.0/16       silver   # staff\n"
	"10.1.2.0/24       gold\n"
	"10.1.2.3          bronze\n"
	"192.168.0.0/16    silver\n"
	"2001:db8::/32     bronze\n"
	"2001:db8:1::/48   silver\n"
	"2001:db8:1:2::/64 gold\n"
	"2001:db8:1:2::7   bronze\n"
	"user:alice        gold\n"
	"user:John%20Smith silver\n"
	"\t user:bob \t bronze\r\n";

START_TEST(test_parse_counts)
{
	char *log;
	struct rs_classmap *m = parse_str(MAP1, &log);

	ck_assert_uint_eq(m->stats.lines, 14);
	ck_assert_uint_eq(m->stats.v4, 5);
	ck_assert_uint_eq(m->stats.v6, 4);
	ck_assert_uint_eq(m->stats.logins, 3);
	ck_assert_uint_eq(m->stats.malformed, 0);
	ck_assert_uint_eq(m->nclasses, 3);
	ck_assert_int_eq(rs_classmap_default(m), -1);
	ck_assert_str_eq(log, "");
	free(log);
	rs_classmap_free(m);
}
END_TEST

START_TEST(test_longest_prefix_v4)
{
	struct rs_classmap *m = parse_str(MAP1, NULL);

	ck_assert_str_eq(class_of(m, "10.200.0.1"), "bronze");	/* /8 */
	ck_assert_str_eq(class_of(m, "10.1.200.1"), "silver");	/* /16 */
	ck_assert_str_eq(class_of(m, "10.1.2.4"), "gold");	/* /24 */
	ck_assert_str_eq(class_of(m, "10.1.2.3"), "bronze");	/* /32 */
	ck_assert_str_eq(class_of(m, "10.1.3.0"), "silver");
	ck_assert_str_eq(class_of(m, "10.1.1.255"), "silver");
	ck_assert_str_eq(class_of(m, "192.168.255.255"), "silver");
	ck_assert_str_eq(class_of(m, "11.0.0.0"), "ERR");	/* no default */
	ck_assert_str_eq(class_of(m, "9.255.255.255"), "ERR");
	ck_assert_str_eq(class_of(m, "::ffff:10.1.2.3"), "bronze");
	rs_classmap_free(m);
}
END_TEST

START_TEST(test_longest_prefix_v6)
{
	struct rs_classmap *m = parse_str(MAP1, NULL);

	ck_assert_str_eq(class_of(m, "2001:db8:ffff::1"), "bronze");
	ck_assert_str_eq(class_of(m, "2001:db8:1:ffff::1"), "silver");
	ck_assert_str_eq(class_of(m, "2001:db8:1:2:ffff:ffff:ffff:ffff"), "gold");
	ck_assert_str_eq(class_of(m, "2001:db8:1:2::7"), "bronze");
	ck_assert_str_eq(class_of(m, "2001:db8:1:2::8"), "gold");
	ck_assert_str_eq(class_of(m, "2001:db9::1"), "ERR");
	/* An IPv4 prefix never matches an IPv6 address and vice versa. */
	ck_assert_str_eq(class_of(m, "::a01:203"), "ERR");
	rs_classmap_free(m);
}
END_TEST

START_TEST(test_default_routes)
{
	struct rs_classmap *m = parse_str("0.0.0.0/0 bronze\n::/0 silver\n10.0.0.0/8 gold\n",
					  NULL);

	ck_assert_str_eq(class_of(m, "1.2.3.4"), "bronze");
	ck_assert_str_eq(class_of(m, "10.9.9.9"), "gold");
	ck_assert_str_eq(class_of(m, "2001::1"), "silver");
	ck_assert_str_eq(class_of(m, "alice"), "ERR");	/* logins do not use prefixes */
	rs_classmap_free(m);
}
END_TEST

START_TEST(test_logins)
{
	struct rs_classmap *m = parse_str(MAP1, NULL);
	struct rs_classmap_opts nocase = { .logins_nocase = true };
	struct rs_classmap *mi;

	ck_assert_str_eq(class_of(m, "alice"), "gold");
	ck_assert_str_eq(class_of(m, "John Smith"), "silver");
	ck_assert_str_eq(class_of(m, "bob"), "bronze");
	ck_assert_str_eq(class_of(m, "Alice"), "ERR");	/* case-sensitive by default */
	ck_assert_str_eq(class_of(m, "alic"), "ERR");
	ck_assert_str_eq(class_of(m, "-"), "ERR");
	rs_classmap_free(m);

	mi = rs_classmap_parse(MAP1, strlen(MAP1), "t", &nocase, NULL);
	ck_assert_ptr_nonnull(mi);
	ck_assert_str_eq(class_of(mi, "ALICE"), "gold");
	ck_assert_str_eq(class_of(mi, "john smith"), "silver");
	rs_classmap_free(mi);
}
END_TEST

START_TEST(test_default)
{
	struct rs_classmap *m = parse_str("user:alice gold\ndefault bronze\n10.0.0.0/8 silver\n",
					  NULL);

	ck_assert_str_eq(class_of(m, "alice"), "gold");
	ck_assert_str_eq(class_of(m, "carol"), "bronze");
	ck_assert_str_eq(class_of(m, "10.0.0.1"), "silver");
	ck_assert_str_eq(class_of(m, "172.16.0.1"), "bronze");
	ck_assert_str_eq(class_of(m, "-"), "bronze");
	ck_assert(m->stats.has_default);
	rs_classmap_free(m);
}
END_TEST

START_TEST(test_malformed_lines)
{
	char *log;
	char longline[RS_MAP_LINE_MAX + 100];
	char text[RS_MAP_LINE_MAX + 1000];
	struct rs_classmap *m;

	memset(longline, 'x', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	snprintf(text, sizeof(text),
		 "10.0.0.0/8 gold\n"		/* 1 ok */
		 "10.0.0.0/33 gold\n"		/* 2 bad length */
		 "alice gold\n"			/* 3 bare word */
		 "10.1.0.0/16\n"		/* 4 missing class */
		 "10.2.0.0/16 gold extra\n"	/* 5 extra field */
		 "10.3.0.0/16 go!d\n"		/* 6 bad class */
		 "user: gold\n"			/* 7 empty login */
		 "user:a%%zz gold\n"		/* 8 bad escape */
		 "%s gold\n"			/* 9 long line */
		 "10.4.0.0/16 silver\n"		/* 10 ok */
		 "user:- gold\n"		/* 11 placeholder login */
		 "default\n",			/* 12 default without class */
		 longline);
	m = parse_str(text, &log);
	ck_assert_uint_eq(m->stats.malformed, 10);
	ck_assert_uint_eq(m->stats.v4, 2);
	ck_assert_ptr_nonnull(strstr(log, "test.map:2: malformed line skipped: bad prefix length"));
	ck_assert_ptr_nonnull(strstr(log, "test.map:3: malformed line skipped: not an IPv4/IPv6"));
	ck_assert_ptr_nonnull(strstr(log, "test.map:4: malformed line skipped: expected two fields"));
	ck_assert_ptr_nonnull(strstr(log, "test.map:5: malformed"));
	ck_assert_ptr_nonnull(strstr(log, "test.map:6: malformed line skipped: bad class name"));
	ck_assert_ptr_nonnull(strstr(log, "test.map:7: malformed"));
	ck_assert_ptr_nonnull(strstr(log, "test.map:8: malformed line skipped: bad %XX"));
	ck_assert_ptr_nonnull(strstr(log, "test.map:9: malformed line skipped: line too long"));
	ck_assert_ptr_nonnull(strstr(log, "test.map:11: malformed"));
	ck_assert_ptr_nonnull(strstr(log, "test.map:12: malformed"));
	ck_assert_ptr_null(strstr(log, "test.map:1:"));
	ck_assert_ptr_null(strstr(log, "test.map:10:"));
	/* The good lines around the bad ones still work. */
	ck_assert_str_eq(class_of(m, "10.9.9.9"), "gold");
	ck_assert_str_eq(class_of(m, "10.4.1.1"), "silver");
	ck_assert_str_eq(class_of(m, "10.2.1.1"), "gold");	/* line 5 skipped: /8 applies */
	free(log);
	rs_classmap_free(m);
}
END_TEST

START_TEST(test_message_cap)
{
	char *log, *text = malloc(300 * 16), *p = text;
	struct rs_classmap *m;
	size_t nlines = 0;

	for (int i = 0; i < 300; i++)
		p += sprintf(p, "bad line %d\n", i);
	m = parse_str(text, &log);
	ck_assert_uint_eq(m->stats.malformed, 300);
	for (const char *q = log; (q = strchr(q, '\n')); q++)
		nlines++;
	ck_assert_uint_eq(nlines, RS_MSGLOG_MAX + 1);
	ck_assert_ptr_nonnull(strstr(log, "test.map: 250 more messages not shown"));
	free(log);
	free(text);
	rs_classmap_free(m);
}
END_TEST

START_TEST(test_nul_byte_line)
{
	static const char text[] = "10.0.0.0/8 gold\n10.1.0.0/16 sil\0ver\n10.2.0.0/16 bronze\n";
	struct rs_classmap *m = rs_classmap_parse(text, sizeof(text) - 1, "t", NULL, NULL);

	ck_assert_uint_eq(m->stats.malformed, 1);
	ck_assert_str_eq(class_of(m, "10.1.0.1"), "gold");
	ck_assert_str_eq(class_of(m, "10.2.0.1"), "bronze");
	rs_classmap_free(m);
}
END_TEST

START_TEST(test_duplicates_later_wins)
{
	char *log;
	struct rs_classmap *m = parse_str("10.0.0.0/8 gold\n10.0.0.0/8 silver\n"
					  "user:a gold\nuser:a bronze\n"
					  "default gold\ndefault silver\n"
					  "10.0.0.0/8 bronze\n", &log);

	ck_assert_str_eq(class_of(m, "10.1.1.1"), "bronze");
	ck_assert_str_eq(class_of(m, "a"), "bronze");
	ck_assert_str_eq(class_of(m, "zz"), "silver");
	ck_assert_uint_eq(m->stats.duplicates, 4);
	ck_assert_uint_eq(m->stats.v4, 1);
	ck_assert_ptr_nonnull(strstr(log, "test.map:7: duplicate IPv4 prefix"));
	ck_assert_ptr_nonnull(strstr(log, "test.map:4: duplicate login"));
	free(log);
	rs_classmap_free(m);
}
END_TEST

START_TEST(test_host_bits_warning)
{
	char *log;
	struct rs_classmap *m = parse_str("10.1.2.3/16 gold\n", &log);

	ck_assert_uint_eq(m->stats.malformed, 0);
	ck_assert_str_eq(class_of(m, "10.1.99.99"), "gold");
	ck_assert_ptr_nonnull(strstr(log, "test.map:1: warning: host bits"));
	free(log);
	rs_classmap_free(m);
}
END_TEST

START_TEST(test_empty_map)
{
	struct rs_classmap *m = parse_str("", NULL);

	ck_assert_str_eq(class_of(m, "10.0.0.1"), "ERR");
	ck_assert_str_eq(class_of(m, "alice"), "ERR");
	rs_classmap_free(m);
}
END_TEST

/* ---------- reload ---------- */

START_TEST(test_reload)
{
	char *dir = make_tmpdir(), path[512];
	struct rs_watch w;
	struct rs_classmap *m = NULL;
	uint64_t t = 1000000000u;

	snprintf(path, sizeof(path), "%s/classes.map", dir);
	write_file(path, "10.0.0.0/8 gold\ndefault bronze\n");
	rs_watch_init(&w, path, NULL, 1.0, NULL, true);
	ck_assert_int_eq(rs_watch_load(&w, &m), RS_WATCH_RELOADED);
	ck_assert_str_eq(class_of(m, "10.1.1.1"), "gold");

	/* First poll, file unchanged. */
	ck_assert_int_eq(rs_watch_poll(&w, &m, t), RS_WATCH_UNCHANGED);

	/* Changed file, but within the interval: not looked at yet. */
	write_file(path, "10.0.0.0/8 silver\ndefault bronze\n");
	ck_assert_int_eq(rs_watch_poll(&w, &m, t + 500000000u), RS_WATCH_UNCHANGED);
	ck_assert_str_eq(class_of(m, "10.1.1.1"), "gold");

	/* After the interval: reloaded. */
	ck_assert_int_eq(rs_watch_poll(&w, &m, t + 1000000000u), RS_WATCH_RELOADED);
	ck_assert_str_eq(class_of(m, "10.1.1.1"), "silver");
	ck_assert_int_eq(rs_watch_poll(&w, &m, t + 2100000000u), RS_WATCH_UNCHANGED);

	/* Same size, new contents (rename gives a new inode). */
	write_file(path, "10.0.0.0/8 bronze\ndefault silver\n");
	ck_assert_int_eq(rs_watch_poll(&w, &m, t + 3200000000u), RS_WATCH_RELOADED);
	ck_assert_str_eq(class_of(m, "10.1.1.1"), "bronze");
	ck_assert_str_eq(class_of(m, "1.1.1.1"), "silver");

	rs_classmap_free(m);
	unlink(path);
	rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(test_failed_reload_keeps_table)
{
	char *dir = make_tmpdir(), path[512], *logbuf = NULL;
	size_t loglen = 0;
	FILE *log = open_memstream(&logbuf, &loglen);
	struct rs_watch w;
	struct rs_classmap *m = NULL;
	uint64_t t = 5000000000u;

	snprintf(path, sizeof(path), "%s/classes.map", dir);
	write_file(path, "10.0.0.0/8 gold\nuser:alice silver\n");
	rs_watch_init(&w, path, NULL, 1.0, log, true);
	ck_assert_int_eq(rs_watch_load(&w, &m), RS_WATCH_RELOADED);

	/* File removed: the reload fails, the old table stays. */
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(rs_watch_poll(&w, &m, t), RS_WATCH_FAILED);
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(class_of(m, "10.1.1.1"), "gold");
	ck_assert_str_eq(class_of(m, "alice"), "silver");

	/* Path now a directory: stat works, reading fails (EISDIR). */
	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_int_eq(rs_watch_poll(&w, &m, t + 2000000000u), RS_WATCH_FAILED);
	ck_assert_str_eq(class_of(m, "10.1.1.1"), "gold");
	/* Retried at the next check, still failing, still the old table. */
	ck_assert_int_eq(rs_watch_poll(&w, &m, t + 4000000000u), RS_WATCH_FAILED);
	ck_assert_str_eq(class_of(m, "alice"), "silver");
	ck_assert_int_eq(rmdir(path), 0);

	/* A good file again: picked up. */
	write_file(path, "10.0.0.0/8 bronze\n");
	ck_assert_int_eq(rs_watch_poll(&w, &m, t + 6000000000u), RS_WATCH_RELOADED);
	ck_assert_str_eq(class_of(m, "10.1.1.1"), "bronze");
	ck_assert_str_eq(class_of(m, "alice"), "ERR");

	fclose(log);
	ck_assert_ptr_nonnull(strstr(logbuf, "cannot read mapping file (No such file or directory)"));
	ck_assert_ptr_nonnull(strstr(logbuf, "cannot read mapping file (Is a directory)"));
	ck_assert_ptr_nonnull(strstr(logbuf, "keeping the previous table"));
	/* The same error is reported once, not at every check. */
	ck_assert_ptr_null(strstr(strstr(logbuf, "Is a directory") + 1, "Is a directory"));
	free(logbuf);
	rs_classmap_free(m);
	unlink(path);
	rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(test_malformed_reload_still_loads)
{
	char *dir = make_tmpdir(), path[512];
	struct rs_watch w;
	struct rs_classmap *m = NULL;

	snprintf(path, sizeof(path), "%s/classes.map", dir);
	write_file(path, "10.0.0.0/8 gold\n");
	rs_watch_init(&w, path, NULL, 0, NULL, true);
	ck_assert_int_eq(rs_watch_load(&w, &m), RS_WATCH_RELOADED);
	/* A file with bad lines is readable: the good lines replace the table. */
	write_file(path, "garbage\n10.0.0.0/8 silver\n10.1.0.0/99 gold\n");
	ck_assert_int_eq(rs_watch_poll(&w, &m, 1), RS_WATCH_RELOADED);
	ck_assert_str_eq(class_of(m, "10.1.1.1"), "silver");
	ck_assert_uint_eq(m->stats.malformed, 2);
	rs_classmap_free(m);
	unlink(path);
	rmdir(dir);
	free(dir);
}
END_TEST

/* ---------- protocol ---------- */

static const char *parse_req(const char *in, enum rs_chan_mode mode, size_t want,
			     struct rs_request *req, char *buf, size_t cap)
{
	size_t n = strlen(in);

	ck_assert_uint_lt(n, cap);
	memcpy(buf, in, n + 1);
	return rs_request_parse(buf, n, false, mode, want, req);
}

START_TEST(test_channel_ids)
{
	char buf[256];
	struct rs_request r;

	ck_assert_ptr_null(parse_req("0 10.1.2.3 -", RS_CHAN_AUTO, 1, &r, buf, sizeof(buf)));
	ck_assert_ptr_nonnull(r.channel);
	ck_assert_mem_eq(r.channel, "0", 1);
	ck_assert_mem_eq(r.key[0], "10.1.2.3", 8);

	ck_assert_ptr_null(parse_req("10.1.2.3 -", RS_CHAN_AUTO, 1, &r, buf, sizeof(buf)));
	ck_assert_ptr_null(r.channel);
	ck_assert_uint_eq(r.key_len[0], 8);

	/* One token alone is a key in auto mode (a numeric login). */
	ck_assert_ptr_null(parse_req("42", RS_CHAN_AUTO, 1, &r, buf, sizeof(buf)));
	ck_assert_ptr_null(r.channel);
	ck_assert_mem_eq(r.key[0], "42", 2);

	/* -N: a numeric first token is the key. */
	ck_assert_ptr_null(parse_req("12345 -", RS_CHAN_NEVER, 1, &r, buf, sizeof(buf)));
	ck_assert_ptr_null(r.channel);
	ck_assert_mem_eq(r.key[0], "12345", 5);

	/* -C: channel required. */
	ck_assert_ptr_null(parse_req("17 alice", RS_CHAN_ALWAYS, 1, &r, buf, sizeof(buf)));
	ck_assert_mem_eq(r.channel, "17", 2);
	ck_assert_ptr_nonnull(parse_req("alice", RS_CHAN_ALWAYS, 1, &r, buf, sizeof(buf)));
	ck_assert_ptr_nonnull(parse_req("3", RS_CHAN_ALWAYS, 1, &r, buf, sizeof(buf)));
	ck_assert_mem_eq(r.channel, "3", 1);	/* the BH still goes to channel 3 */
	ck_assert_ptr_nonnull(parse_req("12345678901 x", RS_CHAN_ALWAYS, 1, &r, buf, sizeof(buf)));
}
END_TEST

START_TEST(test_keys_decoded)
{
	char buf[256];
	struct rs_request r;

	ck_assert_ptr_null(parse_req("5 John%20Smith 10.0.0.1 -", RS_CHAN_AUTO, RS_MAX_KEYS,
				     &r, buf, sizeof(buf)));
	ck_assert_uint_eq(r.nkeys, 3);
	ck_assert_uint_eq(r.key_len[0], 10);
	ck_assert_mem_eq(r.key[0], "John Smith", 10);
	ck_assert_mem_eq(r.key[1], "10.0.0.1", 8);
	ck_assert_mem_eq(r.key[2], "-", 1);

	/* Only the first key is decoded (and can fail) without -F. */
	ck_assert_ptr_null(parse_req("alice %zz", RS_CHAN_AUTO, 1, &r, buf, sizeof(buf)));
	ck_assert_uint_eq(r.nkeys, 1);
	ck_assert_ptr_null(parse_req("2001%3adb8%3a%3a1", RS_CHAN_AUTO, 1, &r, buf, sizeof(buf)));
	ck_assert_mem_eq(r.key[0], "2001:db8::1", 11);
	/* Trailing CR is not part of the key. */
	ck_assert_ptr_null(parse_req("alice\r", RS_CHAN_AUTO, 1, &r, buf, sizeof(buf)));
	ck_assert_uint_eq(r.key_len[0], 5);
}
END_TEST

START_TEST(test_bh_on_garbage)
{
	char buf[256];
	struct rs_request r;
	static const char ctl[] = "1 al\x01ice";

	ck_assert_str_eq(parse_req("", RS_CHAN_AUTO, 1, &r, buf, sizeof(buf)), "empty request");
	ck_assert_str_eq(parse_req("   \t ", RS_CHAN_AUTO, 1, &r, buf, sizeof(buf)), "empty request");
	ck_assert_str_eq(parse_req("%4", RS_CHAN_AUTO, 1, &r, buf, sizeof(buf)),
			 "bad %XX escape in key");
	ck_assert_str_eq(parse_req(ctl, RS_CHAN_AUTO, 1, &r, buf, sizeof(buf)),
			 "control character in request");
	ck_assert_mem_eq(r.channel, "1", 1);
	/* A NUL inside the line is garbage too. */
	memcpy(buf, "alice\0bob", 9);
	ck_assert_ptr_nonnull(rs_request_parse(buf, 9, false, RS_CHAN_AUTO, 1, &r));
}
END_TEST

START_TEST(test_truncated_line)
{
	char buf[64];
	struct rs_request r;

	/* Cut inside the second token: the key (first token) is complete. */
	memcpy(buf, "4 10.0.0.1 Mozilla/5.0-very-lo", 30);
	ck_assert_ptr_null(rs_request_parse(buf, 30, true, RS_CHAN_AUTO, RS_MAX_KEYS, &r));
	ck_assert_mem_eq(r.channel, "4", 1);
	ck_assert_uint_eq(r.nkeys, 1);
	ck_assert_mem_eq(r.key[0], "10.0.0.1", 8);

	/* Cut inside the key itself: BH, routed to the channel. */
	memcpy(buf, "4 aaaaaaaaaaaaaaaaaaaaaaa", 25);
	ck_assert_str_eq(rs_request_parse(buf, 25, true, RS_CHAN_AUTO, 1, &r),
			 "request line too long");
	ck_assert_mem_eq(r.channel, "4", 1);
}
END_TEST

START_TEST(test_reply_format)
{
	char buf[256], out[128];
	struct rs_request r;
	size_t n;

	parse_req("7 10.0.0.1", RS_CHAN_AUTO, 1, &r, buf, sizeof(buf));
	n = rs_reply_format(out, sizeof(out), &r, RS_REPLY_OK, "gold");
	ck_assert_uint_eq(n, strlen("7 OK tag=gold reqsched_class=gold\n"));
	ck_assert_mem_eq(out, "7 OK tag=gold reqsched_class=gold\n", n);
	n = rs_reply_format(out, sizeof(out), &r, RS_REPLY_ERR, NULL);
	ck_assert_mem_eq(out, "7 ERR\n", n);
	n = rs_reply_format(out, sizeof(out), NULL, RS_REPLY_BH, "say \"hi\"\\\n");
	ck_assert_mem_eq(out, "BH message=\"say \\\"hi\\\"\\\\\"\n", n);
	ck_assert_uint_eq(rs_reply_format(out, 5, &r, RS_REPLY_OK, "gold"), 0);
}
END_TEST

/* ---------- line reader ---------- */

START_TEST(test_linereader_long_lines)
{
	int p[2];
	struct rs_linereader lr;
	char *line;
	size_t len;
	bool trunc;
	char big[1000];

	ck_assert_int_eq(pipe(p), 0);
	memset(big, 'a', sizeof(big));
	ck_assert_int_eq(write(p[1], "short\n", 6), 6);
	ck_assert_int_eq(write(p[1], big, sizeof(big)), (int)sizeof(big));
	ck_assert_int_eq(write(p[1], "\nafter\nlast", 11), 11);
	close(p[1]);
	ck_assert_int_eq(rs_lr_init(&lr, p[0], 32), 0);

	int lines = 0, truncs = 0;
	bool saw_after = false, saw_last = false, saw_short = false;

	for (int iter = 0; iter < 1000; iter++) {
		ssize_t r = rs_lr_fill(&lr);

		ck_assert_int_ge(r, 0);
		while (rs_lr_next(&lr, &line, &len, &trunc)) {
			lines++;
			ck_assert_uint_le(len, 32);
			if (trunc) {
				truncs++;
				ck_assert_uint_eq(len, 32);
				ck_assert_mem_eq(line, big, 32);
			}
			saw_short |= len == 5 && !memcmp(line, "short", 5);
			saw_after |= len == 5 && !memcmp(line, "after", 5);
			saw_last |= len == 4 && !memcmp(line, "last", 4);
		}
		if (r == 0)
			break;
	}
	ck_assert_int_eq(lines, 4);
	ck_assert_int_eq(truncs, 1);
	ck_assert(saw_short && saw_after && saw_last);
	rs_lr_free(&lr);
	close(p[0]);
}
END_TEST

/* ---------- 100,000 entries ---------- */

#define BIG_N 100000
#define BIG_QUERIES 3000

struct big_entry {
	uint32_t addr;
	unsigned int len;
	int cls;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint32_t rnd(void)
{
	/* xorshift64*: deterministic, so a failure is reproducible */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 2685821657736338717u) >> 32);
}

static uint32_t mask32(unsigned int len)
{
	return len == 0 ? 0 : ~UINT32_C(0) << (32 - len);
}

/* Reference longest-prefix match by linear scan (later line wins ties). */
static int brute_lpm(const struct big_entry *e, size_t n, uint32_t a)
{
	int best = -1, best_len = -1;

	for (size_t i = 0; i < n; i++)
		if ((a & mask32(e[i].len)) == e[i].addr && (int)e[i].len >= best_len) {
			best_len = (int)e[i].len;
			best = e[i].cls;
		}
	return best;
}

START_TEST(test_100k_entries)
{
	static const char *cls_names[] = { "gold", "silver", "bronze", "c3", "c4", "c5", "c6" };
	struct big_entry *e = calloc(BIG_N, sizeof(*e));
	size_t cap = (size_t)BIG_N * 48, pos = 0;
	char *text = malloc(cap);
	struct rs_classmap *m;
	size_t nv4 = 0;

	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(text);
	/* 60% IPv4 prefixes (lengths 8..32, clustered in 10/8 so they nest),
	 * 20% IPv6 /64s, 20% logins. */
	for (size_t i = 0; i < BIG_N; i++) {
		int cls = (int)(rnd() % 7);
		unsigned int kind = rnd() % 10;

		if (kind < 6) {
			unsigned int len = 8 + rnd() % 25;
			uint32_t a = (UINT32_C(10) << 24 | (rnd() & 0x00ffffff)) & mask32(len);

			e[nv4++] = (struct big_entry){ a, len, cls };
			pos += (size_t)snprintf(text + pos, cap - pos, "%u.%u.%u.%u/%u %s\n",
						a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255,
						len, cls_names[cls]);
		} else if (kind < 8) {
			pos += (size_t)snprintf(text + pos, cap - pos, "2001:db8:%x:%zx::/64 %s\n",
						(unsigned)(i >> 16), i & 0xffff, cls_names[cls]);
		} else {
			pos += (size_t)snprintf(text + pos, cap - pos, "user:u%zu %s\n", i,
						cls_names[cls]);
		}
		ck_assert_uint_lt(pos, cap);
	}
	m = rs_classmap_parse(text, pos, "big.map", NULL, NULL);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->stats.lines, BIG_N);
	ck_assert_uint_eq(m->stats.malformed, 0);
	ck_assert_uint_eq(m->stats.v4 + m->stats.duplicates + m->stats.v6 + m->stats.logins,
			  BIG_N);

	/* Addresses inside random entries (deep hits) and fully random ones. */
	for (int q = 0; q < BIG_QUERIES; q++) {
		uint32_t a;
		char key[32];
		long got;
		int want;

		if (q % 3 != 2) {
			const struct big_entry *be = &e[rnd() % nv4];

			a = be->addr | (rnd() & ~mask32(be->len));
		} else {
			a = rnd();
		}
		snprintf(key, sizeof(key), "%u.%u.%u.%u", a >> 24, (a >> 16) & 255,
			 (a >> 8) & 255, a & 255);
		want = brute_lpm(e, nv4, a);
		got = rs_classmap_lookup(m, key, strlen(key));
		if (want < 0)
			ck_assert_int_eq(got, -1);
		else
			ck_assert_str_eq(rs_classmap_class_name(m, got), cls_names[want]);
	}
	/* Every IPv6 /64 and every login that was written can be found. */
	rng_state = 0x9e3779b97f4a7c15u;
	for (size_t i = 0; i < BIG_N; i++) {
		int cls = (int)(rnd() % 7);
		unsigned int kind = rnd() % 10;
		char key[64];

		if (kind < 6) {
			unsigned int len = 8 + rnd() % 25;

			(void)len;
			rnd();
			continue;
		}
		if (kind < 8)
			snprintf(key, sizeof(key), "2001:db8:%x:%zx:1:2:3:4", (unsigned)(i >> 16),
				 i & 0xffff);
		else
			snprintf(key, sizeof(key), "u%zu", i);
		ck_assert_str_eq(rs_classmap_class_name(m, rs_classmap_lookup(m, key, strlen(key))),
				 cls_names[cls]);
	}
	ck_assert_int_eq(rs_classmap_lookup(m, "2001:db8:ffff::1", 16), -1);
	ck_assert_int_eq(rs_classmap_lookup(m, "u100000", 7), -1);
	rs_classmap_free(m);
	free(text);
	free(e);
}
END_TEST

static Suite *helper_suite(void)
{
	Suite *s = suite_create("ext_reqsched_class_acl");
	TCase *tc;

	tc = tcase_create("addresses");
	tcase_add_test(tc, test_addr_parse);
	tcase_add_test(tc, test_prefix_parse);
	tcase_add_test(tc, test_key_mask);
	tcase_add_test(tc, test_url_decode);
	suite_add_tcase(s, tc);

	tc = tcase_create("mapping");
	tcase_add_test(tc, test_parse_counts);
	tcase_add_test(tc, test_longest_prefix_v4);
	tcase_add_test(tc, test_longest_prefix_v6);
	tcase_add_test(tc, test_default_routes);
	tcase_add_test(tc, test_logins);
	tcase_add_test(tc, test_default);
	tcase_add_test(tc, test_malformed_lines);
	tcase_add_test(tc, test_nul_byte_line);
	tcase_add_test(tc, test_message_cap);
	tcase_add_test(tc, test_duplicates_later_wins);
	tcase_add_test(tc, test_host_bits_warning);
	tcase_add_test(tc, test_empty_map);
	suite_add_tcase(s, tc);

	tc = tcase_create("reload");
	tcase_add_test(tc, test_reload);
	tcase_add_test(tc, test_failed_reload_keeps_table);
	tcase_add_test(tc, test_malformed_reload_still_loads);
	suite_add_tcase(s, tc);

	tc = tcase_create("protocol");
	tcase_add_test(tc, test_channel_ids);
	tcase_add_test(tc, test_keys_decoded);
	tcase_add_test(tc, test_bh_on_garbage);
	tcase_add_test(tc, test_truncated_line);
	tcase_add_test(tc, test_reply_format);
	tcase_add_test(tc, test_linereader_long_lines);
	suite_add_tcase(s, tc);

	tc = tcase_create("scale");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_100k_entries);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(helper_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
