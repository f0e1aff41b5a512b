#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# End-to-end test of the built ext_reqsched_class_acl over stdin/stdout, the
# way Squid drives it: replies with and without channel IDs, BH on garbage,
# a very long line, pipelined requests, reload on change, a failed reload
# keeping the old table, malformed lines reported with file:line.
# usage: test/helper/e2e.sh build/bin/ext_reqsched_class_acl
set -u
BIN=${1:?usage: e2e.sh PATH/TO/ext_reqsched_class_acl}
BIN=$(readlink -f "$BIN")
TMP=$(mktemp -d /tmp/rs-helper-e2e.XXXXXX)
HPID=""
fails=0
cleanup() {
	[ -n "$HPID" ] && kill "$HPID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

ok()   { echo "  ok   $*"; }
fail() { echo "  FAIL $*"; fails=$((fails + 1)); }
expect_eq() { # name got want
	if [ "$2" == "$3" ]; then ok "$1"; else fail "$1: got '$2', want '$3'"; fi
}

MAP=$TMP/classes.map
put_map() { # atomically replace the mapping file (write + rename)
	printf '%s\n' "$@" > "$MAP.new" && mv -f "$MAP.new" "$MAP"
}

# Start the helper as a coprocess; ask() sends one line, reads one reply.
start() {
	coproc HELPER { exec "$BIN" "$@" "$MAP" 2>>"$TMP/stderr"; }
	HPID=$HELPER_PID
}
ask() {
	local reply=""
	printf '%s\n' "$1" >&"${HELPER[1]}"
	IFS= read -r -t 5 reply <&"${HELPER[0]}" || reply="(no reply)"
	printf '%s' "$reply"
}
stop() {
	exec {HELPER[1]}>&-
	local i
	for i in $(seq 50); do kill -0 "$HPID" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$HPID" 2>/dev/null; then fail "helper did not exit at EOF"; kill "$HPID"; fi
	wait "$HPID" 2>/dev/null
	HPID=""
}

put_map '# test mapping' \
	'10.0.0.0/8 bronze' '10.1.0.0/16 silver' '10.1.2.0/24 gold' \
	'2001:db8::/32 silver' '2001:db8:1::/48 gold' \
	'user:alice gold' 'user:John%20Smith silver' 'default bronze'

echo "e2e: basic replies, no channel IDs"
start -N
expect_eq "v4 /24"      "$(ask '10.1.2.99 -')"       "OK tag=gold reqsched_class=gold"
expect_eq "v4 /16"      "$(ask '10.1.7.1 -')"        "OK tag=silver reqsched_class=silver"
expect_eq "v6 /48"      "$(ask '2001:db8:1::9 -')"   "OK tag=gold reqsched_class=gold"
expect_eq "v6 escaped"  "$(ask '2001%3adb8%3a2%3a%3a1')" "OK tag=silver reqsched_class=silver"
expect_eq "login"       "$(ask 'alice')"             "OK tag=gold reqsched_class=gold"
expect_eq "login esc"   "$(ask 'John%20Smith -')"    "OK tag=silver reqsched_class=silver"
expect_eq "default"     "$(ask '192.0.2.1')"         "OK tag=bronze reqsched_class=bronze"
expect_eq "numeric -N"  "$(ask '12345 -')"           "OK tag=bronze reqsched_class=bronze"
expect_eq "BH empty"    "$(ask '')"                  'BH message="empty request"'
expect_eq "BH escape"   "$(ask '%G1 x')"             'BH message="bad %XX escape in key"'
expect_eq "BH control"  "$(ask $'al\x02ice')"        'BH message="control character in request"'
expect_eq "alive after garbage" "$(ask 'alice')"     "OK tag=gold reqsched_class=gold"
stop
n=$(grep -c 'starts with a number: .* run the helper with -C' "$TMP/stderr")
expect_eq "-N: numeric first token warned once" "$n" "1"

echo "e2e: channel IDs (-C, auto)"
start -C
expect_eq "-C id 0"     "$(ask '0 10.1.2.3 -')"      "0 OK tag=gold reqsched_class=gold"
expect_eq "-C id 41"    "$(ask '41 alice')"          "41 OK tag=gold reqsched_class=gold"
expect_eq "-C BH"       "$(ask '7 %zz')"             '7 BH message="bad %XX escape in key"'
expect_eq "-C no id"    "$(ask 'alice')"             'BH message="missing or bad channel ID"'
stop
start
expect_eq "auto id"     "$(ask '3 10.9.9.9 -')"      "3 OK tag=bronze reqsched_class=bronze"
expect_eq "auto no id"  "$(ask '10.9.9.9 -')"        "OK tag=bronze reqsched_class=bronze"
stop
put_map '10.0.0.0/8 silver'	# no default
start -C
expect_eq "ERR no default" "$(ask '5 192.0.2.1 -')"  "5 ERR"
expect_eq "ERR no key"     "$(ask '6 - -')"          "6 ERR"
stop

echo "e2e: fallback keys (-F)"
put_map '10.0.0.0/8 silver' 'user:alice gold'
start -C -F
expect_eq "-F first"    "$(ask '1 alice 10.1.1.1')"  "1 OK tag=gold reqsched_class=gold"
expect_eq "-F second"   "$(ask '2 - 10.1.1.1')"      "2 OK tag=silver reqsched_class=silver"
expect_eq "-F none"     "$(ask '3 carol 192.0.2.9')" "3 ERR"
stop

echo "e2e: very long line (1 MiB) and pipelining"
put_map '10.0.0.0/8 silver' 'default bronze'
out=$( { printf '9 10.1.1.1 '; head -c 1048576 /dev/zero | tr '\0' 'A'; printf '\n10 10.2.2.2 -\n'; } |
	timeout 10 "$BIN" -C "$MAP" 2>/dev/null)
expect_eq "long line + next" "$out" $'9 OK tag=silver reqsched_class=silver\n10 OK tag=silver reqsched_class=silver'
out=$( { printf '9 '; head -c 1048576 /dev/zero | tr '\0' 'A'; printf '\n10 alice\n'; } |
	timeout 10 "$BIN" -C "$MAP" 2>/dev/null)
expect_eq "long key -> BH" "$out" $'9 BH message="request line too long"\n10 OK tag=bronze reqsched_class=bronze'
n=20000
out=$(for i in $(seq 0 $((n - 1))); do echo "$((i % 200)) 10.0.$((i % 250)).1 -"; done |
	timeout 20 "$BIN" -C "$MAP" 2>/dev/null)
got=$(printf '%s\n' "$out" | grep -c ' OK tag=silver reqsched_class=silver$')
expect_eq "pipelined $n replies" "$got" "$n"
expect_eq "pipelined order" "$(printf '%s\n' "$out" | sed -n '201p' | cut -d' ' -f1)" "0"
out=$(head -c 200000 /dev/urandom | timeout 10 "$BIN" -C "$MAP" 2>/dev/null; echo "rc=$?")
case $out in *rc=0) ok "random bytes: clean exit" ;; *) fail "random bytes: ${out##*rc=}" ;; esac
printf '%s\n' "$out" | grep -qv '^\([0-9]* \)\?\(OK\|ERR\|BH\)\|^rc=' &&
	fail "random bytes: a reply line that is not OK/ERR/BH" || ok "random bytes: only OK/ERR/BH replies"

echo "e2e: reload on change, malformed lines, failed reload"
: > "$TMP/stderr"
put_map '10.0.0.0/8 silver' 'default bronze'
start -C
expect_eq "before change" "$(ask '1 10.5.5.5 -')" "1 OK tag=silver reqsched_class=silver"
put_map '10.0.0.0/8 gold' 'this is not valid' '10.5.0.0/16 b@d' 'default bronze'
sleep 1.2
expect_eq "after change"  "$(ask '2 10.5.5.5 -')" "2 OK tag=gold reqsched_class=gold"
grep -q "$MAP:2: malformed line skipped" "$TMP/stderr" && ok "malformed line 2 reported" ||
	fail "malformed line 2 not reported: $(cat "$TMP/stderr")"
grep -q "$MAP:3: malformed line skipped: bad class name" "$TMP/stderr" &&
	ok "malformed line 3 reported" || fail "malformed line 3 not reported"
rm -f "$MAP"
sleep 1.2
expect_eq "file gone: old table" "$(ask '3 10.5.5.5 -')" "3 OK tag=gold reqsched_class=gold"
grep -q "cannot read mapping file" "$TMP/stderr" && ok "failed reload reported" ||
	fail "failed reload not reported"
put_map '10.0.0.0/8 silver'
sleep 1.2
expect_eq "file back" "$(ask '4 10.5.5.5 -')" "4 OK tag=silver reqsched_class=silver"
expect_eq "no default now" "$(ask '5 192.0.2.1 -')" "5 ERR"
stop

echo "e2e: start-up and check modes"
rm -f "$MAP"
timeout 5 "$BIN" "$MAP" </dev/null 2>/dev/null
expect_eq "unreadable at start exits 1" "$?" "1"
put_map '10.0.0.0/8 silver' 'bad line'
timeout 5 "$BIN" -t "$MAP" 2>/dev/null
expect_eq "-t with a malformed line exits 1" "$?" "1"
put_map '10.0.0.0/8 silver'
expect_eq "-l lookup" "$(timeout 5 "$BIN" -l 10.1.1.1 "$MAP" 2>/dev/null)" "silver"

echo "e2e: the cookbook's example mapping file"
EXAMPLE=$(dirname "$(readlink -f "$0")")/../../squid-conf/reqsched-classes.map
timeout 5 "$BIN" -t "$EXAMPLE" 2>"$TMP/example.err"
expect_eq "example map has no malformed line" "$?" "0"
expect_eq "example: print server"  "$(timeout 5 "$BIN" -l 10.10.2.250 "$EXAMPLE" 2>/dev/null)" "bronze"
expect_eq "example: staff"         "$(timeout 5 "$BIN" -l 10.10.2.7 "$EXAMPLE" 2>/dev/null)" "silver"
expect_eq "example: mgmt IPv6"     "$(timeout 5 "$BIN" -l 2001:db8:10:1::99 "$EXAMPLE" 2>/dev/null)" "gold"
expect_eq "example: login"         "$(timeout 5 "$BIN" -l alice "$EXAMPLE" 2>/dev/null)" "gold"
expect_eq "example: default"       "$(timeout 5 "$BIN" -l 192.0.2.1 "$EXAMPLE" 2>/dev/null)" "bronze"

if [ "$fails" -ne 0 ]; then
	echo "e2e: $fails failure(s)"
	exit 1
fi
echo "e2e: all passed"
