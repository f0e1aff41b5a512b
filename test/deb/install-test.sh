#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# install-test.sh DEBDIR  -- `make check-deb` (mk/deb.mk, doc/debian.md)
#
# Installs the packages of `make deb` (DEBDIR/reqsched/*.deb, DEBDIR/squid/*.deb)
# into a throwaway Debian 12 root made by mmdebstrap from Debian's packages
# (the host's apt sources), and there:
#   - squid -v names --enable-request-scheduler and squid links the packaged
#     libreqsched.so.0;
#   - test/helper/conf-parse.sh runs `squid -k parse` on every snippet of
#     squid-conf/ (and a misspelt directive must fail), with squid (GnuTLS) and
#     squid-openssl;
#   - ext_reqsched_class_acl is started once with the packaged example map and
#     must answer two lookups;
#   - no squid process runs in the root (host processes are told apart by
#     their /proc/PID/root).
# mmdebstrap writes the root to /dev/null: it builds it in a temporary
# directory and removes it at the end, whatever happened; its policy-rc.d
# keeps the squid package from starting a daemon. KEEP=DIR keeps the root as a
# tarball DIR/root.tar for inspection.
set -euo pipefail
debdir=$(realpath "${1:?usage: install-test.sh DEBDIR}")
top=$(cd "$(dirname "$0")/../.." && pwd)
suite=${SUITE:-bookworm}
log() { echo "install-test: $*"; }

command -v mmdebstrap >/dev/null || { log "mmdebstrap missing: run 'make deps-deb'"; exit 1; }
[ "$(id -u)" -eq 0 ] || { log "needs root (mmdebstrap root mode, chroot)"; exit 1; }

arch=$(dpkg --print-architecture)
debs=()
for p in reqsched/libreqsched0 reqsched/squid-reqsched-helper squid/squid squid/squid-common squid/squid-openssl; do
	f=$(ls "$debdir/${p%/*}/${p#*/}"_*_"$arch".deb "$debdir/${p%/*}/${p#*/}"_*_all.deb 2>/dev/null | head -1 || true)
	[ -n "$f" ] || { log "no $debdir/${p}_*.deb: run 'make deb'"; exit 1; }
	debs+=("$f")
done
# one --include per .deb file: a list may not mix paths and package names
includes=(--include=procps)
for f in "${debs[@]}"; do includes+=(--include="$f"); done
# the host's apt sources (bookworm, -updates, -security): the packages were
# built against them
sources=()
for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list; do
	# binary entries only (not the deb-src entry fetch-squid adds)
	[ -s "$f" ] && grep -qE '^(Types:( .*)? deb( |$)|deb )' "$f" && sources+=("$f")
done
[ ${#sources[@]} -gt 0 ] || sources=(http://deb.debian.org/debian)

# the tests, run inside the root by a customize hook
t=$(mktemp -d /tmp/rs-deb-test.XXXXXX)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/test/helper" "$t/squid-conf"
cp "$top/test/helper/conf-parse.sh" "$t/test/helper/"
cp "$top"/squid-conf/* "$t/squid-conf/"
cat >"$t/run.sh" <<'EOF'
#!/bin/bash
set -u
fails=0
# as on an installed system, the host name resolves (else squid -k parse warns)
grep -qw "$(hostname)" /etc/hosts 2>/dev/null || echo "127.0.1.1 $(hostname)" >>/etc/hosts
ok()   { echo "  ok   $*"; }
fail() { echo "  FAIL $*"; fails=$((fails + 1)); }
v=$(dpkg-query -W -f='${Version}' squid)
echo "inside the root: squid $v, libreqsched0 $(dpkg-query -W -f='${Version}' libreqsched0)," \
	"squid-reqsched-helper $(dpkg-query -W -f='${Version}' squid-reqsched-helper)"
for sq in /usr/sbin/squid /usr/sbin/squid-openssl; do
	if "$sq" -v | grep -q -- '--enable-request-scheduler'; then ok "$sq -v: --enable-request-scheduler"
	else fail "$sq -v does not name --enable-request-scheduler"; fi
	# merged /usr: the loader may name /lib/..., the same file
	lib=$(readlink -f "$(ldd "$sq" | awk '$1 ~ /^libreqsched\.so/ { print $3 }')")
	case $lib in
	/usr/lib/*/libreqsched.so.0*) ok "$sq links $lib" ;;
	*) fail "$sq: libreqsched resolved to '$lib'" ;;
	esac
	echo "  squid -k parse of squid-conf/ with $sq:"
	/reqsched-test/test/helper/conf-parse.sh "$sq" /usr/lib/squid/ext_reqsched_class_acl || fail "conf-parse with $sq"
done
map=/usr/share/doc/squid-reqsched-helper/examples/reqsched-classes.map
reply=$(printf '10.10.1.5\n10.10.2.7\n' | timeout 10 /usr/lib/squid/ext_reqsched_class_acl "$map" 2>/tmp/helper.err | tr '\n' '|')
if [ "$reply" = "OK tag=gold reqsched_class=gold|OK tag=silver reqsched_class=silver|" ]; then
	ok "ext_reqsched_class_acl $map: 10.10.1.5 -> gold, 10.10.2.7 -> silver"
else
	fail "ext_reqsched_class_acl replied '$reply'"; cat /tmp/helper.err
fi
[ "$fails" -eq 0 ] && echo "inside the root: all checks passed" || echo "inside the root: $fails check(s) failed"
exit "$fails"
EOF
chmod 755 "$t/run.sh"

target=/dev/null
[ -z "${KEEP:-}" ] || { mkdir -p "$KEEP"; target=$KEEP/root.tar; }
t0=$(date +%s)
log "mmdebstrap $suite with ${debs[*]##*/} (sources: ${sources[*]})"
# --variant=apt: Essential + apt; squid's dependencies come from the mirror
mmdebstrap --variant=apt --quiet \
	--hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
	"${includes[@]}" \
	--customize-hook="copy-in $t /" \
	--customize-hook="mv \"\$1\"/${t##*/} \"\$1\"/reqsched-test" \
	--customize-hook='chroot "$1" /reqsched-test/run.sh' \
	--customize-hook='rm -rf "$1"/reqsched-test' \
	--customize-hook='r=$(realpath "$1"); for p in $(pgrep squid); do
		[ "$(realpath /proc/$p/root 2>/dev/null)" != "$r" ] && continue
		echo "  FAIL squid (pid $p) is running in the root after the install"; exit 1
	done; echo "  ok   no squid process running in the root"' \
	"$suite" "$target" "${sources[@]}"
log "passed in $(( $(date +%s) - t0 ))s (root built, tested and removed)"
