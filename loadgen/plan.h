/* SPDX-License-Identifier: GPL-2.0-or-later */
/* plan.h - one line of the plan reqsched-load writes to reqsched-loadc.
 *
 * The plan is lines of space-separated tokens (tokens are printable ASCII,
 * never empty; a line is at most PLAN_LINE_MAX bytes):
 *   class NAME CONNECTIONS          a class; CONNECTIONS (1..64) per user
 *   addr CLASS IPV4                 a source address of CLASS's pool (in order)
 *   user ID CLASS START LEAVE AUTH ARRIVAL
 *                                   a user: starts START s after `start`, told
 *                                   to leave at LEAVE s (-1: never); AUTH: its
 *                                   Basic credential (base64) or -; ARRIVAL 1:
 *                                   refused without a free address (0: waits)
 *   page USER PAGEID SESSION THINK OBJECTS
 *                                   USER's next page: think THINK s first; a
 *                                   SESSION (1, 2, ...) other than the previous
 *                                   page's starts on new connections; the
 *                                   page's OBJECTS (>= 1) follow as obj lines
 *   obj METHOD SIZE STATUS BODY MAXAGE URL
 *                                   an object of the last page (first: main)
 *   end USER                        USER has no more pages
 *   replay ID CLASS ADDR MODE CONNS START
 *                                   a user replaying a log's requests (its
 *                                   step lines) from ADDR: MODE open (each when
 *                                   due, at most CONNS at once) or closed (one
 *                                   after the other, THINK s between); START:
 *                                   its first request's AT
 *   step USER AT THINK AUTH METHOD SIZE STATUS BODY MAXAGE URL
 *                                   USER's next request: due AT s after start
 *                                   (open), or THINK s after the previous one
 *                                   ended (closed); AUTH as for user
 *   start                           the clock starts: every user line is read
 * Blank lines and lines starting with # are skipped. NAME, ID, PAGEID:
 * [A-Za-z0-9._:@+-]; plan_parse() checks every field, so any input is safe. */
#ifndef RS_LOADC_PLAN_H
#define RS_LOADC_PLAN_H

#include <netinet/in.h>
#include <stddef.h>

#define PLAN_LINE_MAX 8192
#define PLAN_MAX_CONNECTIONS 64

enum plan_kind { PL_SKIP, PL_CLASS, PL_ADDR, PL_USER, PL_PAGE, PL_OBJ, PL_END, PL_START,
		 PL_REPLAY, PL_STEP };

struct plan_line {
	enum plan_kind kind;
	const char *name;         /* class: NAME; addr, user, replay: CLASS; page, end, step: USER */
	const char *id;           /* user, replay: ID; page: PAGEID */
	const char *text;         /* user, step: AUTH (NULL for -); obj, step: URL */
	const char *auth;         /* step: AUTH (NULL for -) */
	const char *method;       /* obj, step */
	struct in_addr addr;      /* addr, replay */
	double t1, t2;            /* user: START, LEAVE; page: THINK in t1; replay: START
				     in t1; step: AT, THINK */
	int closed;               /* replay: MODE closed */
	long n;                   /* class: CONNECTIONS; user: ARRIVAL; page: SESSION; obj,
				     step: SIZE; replay: CONNS */
	long status, body, max_age;   /* obj */
	long objects;             /* page: OBJECTS */
};

/* Parse line (NUL-terminated, no newline; its spaces are overwritten) into
 * pl. Returns 0, or -1 with *err naming what is wrong. */
int plan_parse(char *line, struct plan_line *pl, const char **err);

#endif
