#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# snmp-link-counter.sh - write the router's downlink byte counter into a file
# for `request_sched_link_counter file PATH` (squid-conf/link-counter-snmp.conf).
#
# Reads IF-MIB::ifHCInOctets.IFINDEX (the 64-bit count of octets the router's
# WAN interface received: the downlink) with net-snmp's snmpget and writes the
# number, in decimal, to OUTFILE atomically (a temporary file in the same
# directory, then mv), so Squid never reads half a number. When the router
# does not answer, the file is left alone: it goes stale and Squid falls back
# to its own bytes until the poller succeeds again.
#
# usage: snmp-link-counter.sh [-c COMMUNITY] [-i IFINDEX] [-o OUTFILE]
#                             [-O OID] [-l SECONDS] HOST[:PORT]
#   -c COMMUNITY  SNMPv2c read-only community (default: $SNMP_COMMUNITY or public)
#   -i IFINDEX    the router's ifIndex of its Internet-facing interface (default 1;
#                 list them with: snmpwalk -v2c -c COMMUNITY HOST .1.3.6.1.2.1.2.2.1.2)
#   -o OUTFILE    default /var/lib/reqsched/downlink-octets
#   -O OID        what to read instead (default .1.3.6.1.2.1.31.1.1.1.6.IFINDEX, which is
#                 IF-MIB::ifHCInOctets.IFINDEX; Debian's snmp package loads no IF-MIB
#                 file, so the numeric form works without snmp-mibs-downloader; a router
#                 without 64-bit counters: .1.3.6.1.2.1.2.2.1.10.IFINDEX, ifInOctets,
#                 whose 32-bit wrap Squid handles)
#   -l SECONDS    poll forever every SECONDS (for a systemd service); without -l
#                 poll once (for a systemd timer or cron)
# Exit status: 0 written, 1 the poll failed or returned no number, 2 usage.
#
# Poll at least once per request_sched_update_interval (default 5 s): every
# second is a good choice, so cron's one-minute granularity is too coarse.
# A systemd service that polls every second:
#   [Service]
#   ExecStart=/usr/local/bin/snmp-link-counter.sh -l 1 -c reqsched -i 2 -o /var/lib/reqsched/downlink-octets 192.0.2.1
#   Restart=always
set -u
community=${SNMP_COMMUNITY:-public}
ifindex=1
out=/var/lib/reqsched/downlink-octets
oid=""
loop=""
usage() { echo "usage: $0 [-c COMMUNITY] [-i IFINDEX] [-o OUTFILE] [-O OID] [-l SECONDS] HOST[:PORT]" >&2; exit 2; }
while getopts c:i:o:O:l: opt; do
	case $opt in
	c) community=$OPTARG ;;
	i) ifindex=$OPTARG ;;
	o) out=$OPTARG ;;
	O) oid=$OPTARG ;;
	l) loop=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
host=$1
case $ifindex in ''|*[!0-9]*) echo "$0: -i needs a numeric ifIndex" >&2; exit 2 ;; esac
[ -n "$oid" ] || oid=.1.3.6.1.2.1.31.1.1.1.6.$ifindex
case $out in /*) ;; *) echo "$0: -o needs an absolute path (request_sched_link_counter file wants one)" >&2; exit 2 ;; esac

poll() {
	# -Oqv: the value only; -t/-r: never block longer than about 2 s
	# (snmpget's own complaints go to stderr, not into the value)
	value=$(snmpget -v2c -c "$community" -Oqv -t 1 -r 1 "$host" "$oid") || {
		echo "$0: snmpget $host $oid failed" >&2
		return 1
	}
	case $value in
	''|*[!0-9]*) echo "$0: $host $oid is not a counter: $value" >&2; return 1 ;;
	esac
	dir=$(dirname "$out")
	tmp=$(mktemp "$dir/.$(basename "$out").XXXXXX") || return 1
	printf '%s\n' "$value" > "$tmp" && chmod 644 "$tmp" && mv -f "$tmp" "$out" || {
		rm -f "$tmp"
		return 1
	}
}

if [ -z "$loop" ]; then
	poll
	exit
fi
case $loop in ''|*[!0-9.]*) echo "$0: -l needs a number of seconds" >&2; exit 2 ;; esac
while :; do
	poll || :
	sleep "$loop"
done
