#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Throughput of the built helper over a pipe, as Squid drives it with
# concurrency: N requests with channel IDs against a 100,000-entry map.
# usage: test/helper/bench-pipe.sh build/bin/ext_reqsched_class_acl [N]
set -eu
BIN=$(readlink -f "${1:?usage: bench-pipe.sh HELPER [N]}")
N=${2:-1000000}
TMP=$(mktemp -d /tmp/rs-helper-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
python3 - "$TMP" "$N" <<'PY'
import random, sys
tmp, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(7)
with open(f"{tmp}/map", "w") as f:
    for i in range(100000):
        ln = rnd.randint(16, 32)
        a = rnd.getrandbits(32) & ((0xffffffff << (32 - ln)) & 0xffffffff)
        f.write(f"{a>>24}.{(a>>16)&255}.{(a>>8)&255}.{a&255}/{ln} c{rnd.randint(0,6)}\n")
    f.write("default bronze\n")
with open(f"{tmp}/in", "w") as f:
    for i in range(n):
        a = rnd.getrandbits(32)
        f.write(f"{i % 100} {a>>24}.{(a>>16)&255}.{(a>>8)&255}.{a&255} -\n")
PY
start=$(date +%s.%N)
"$BIN" -C -q "$TMP/map" 2>"$TMP/err" < "$TMP/in" > "$TMP/out"
end=$(date +%s.%N)
replies=$(wc -l < "$TMP/out")
[ "$replies" -eq "$N" ] || { echo "bench-pipe: $replies replies for $N requests" >&2; exit 1; }
awk -v n="$N" -v s="$start" -v e="$end" 'BEGIN {
	printf "pipe   %d requests (IPv4, channel IDs, 100,000-entry map): %.2f s incl. load, %.0f requests/s, %.2f us/request\n",
	       n, e - s, n / (e - s), (e - s) / n * 1e6 }'
