# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-from-delay-pools: rewrite a squid.conf that shares the downlink
with delay pools (delay_class 1, 2 or 3) into one that does it with reqsched.

Each pool becomes a request_sched_class named poolN whose weight is the pool's
aggregate refill rate (a pool without an aggregate limit weighs the whole
link); its delay_access lines become request_sched_access lines in the same
order; requests no pool took go to a last class, unpooled, that weighs the
whole link as they were not limited. Pools with per-host buckets (class 2
and 3) make the policy msf with request_sched_user src: every client address
gets an equal part of its class. The delay_* lines are kept as comments.
The mapping, and what has no equivalent, is in doc/delay-pools.md.

    reqsched-from-delay-pools --link "10 Mbit" /etc/squid/squid.conf > new.conf
    squid -k parse -f new.conf
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from typing import Optional

UNITS = {"bit": 1, "kbit": 1_000, "mbit": 1_000_000, "gbit": 1_000_000_000}
MAX_WEIGHT = 1e6        # the largest request_sched_class weight


class ConvertError(ValueError):
    """A line the converter cannot map; the message names it."""


@dataclass
class Pool:
    number: int
    dclass: int = 0
    # restore rates in bytes/s (None: no limit, -1/-1 in delay_parameters)
    aggregate: Optional[int] = None
    individual: Optional[int] = None
    network: Optional[int] = None
    access: list[str] = field(default_factory=list)   # "allow ACL..." / "deny ACL..."

    @property
    def name(self) -> str:
        return f"pool{self.number}"


def link_bps(text: str) -> int:
    """'10 Mbit' -> 10000000 (the units request_sched_link takes)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(bit|kbit|mbit|gbit)(?:/s)?\s*", text, re.IGNORECASE)
    if not m:
        raise ConvertError(f"--link {text!r}: expected a number and bit, kbit, Mbit or Gbit")
    bps = int(float(m.group(1)) * UNITS[m.group(2).lower()])
    if bps < 1:
        raise ConvertError(f"--link {text!r}: must be at least 1 bit/s")
    return bps


def _rate(spec: str, where: str) -> Optional[int]:
    """'restore/max' of delay_parameters -> restore bytes/s (None: -1, no limit)."""
    m = re.fullmatch(r"(-?\d+)/(-?\d+)", spec)
    if not m:
        raise ConvertError(f"{where}: bad bucket {spec!r} (expected restore/max)")
    restore, maximum = int(m.group(1)), int(m.group(2))
    if restore == -1:
        return None
    if restore <= 0 or maximum < 0:
        raise ConvertError(f"{where}: bucket {spec!r}: restore must be > 0 (or -1 for no limit)")
    return restore


def _pool(pools: dict[int, Pool], token: str, where: str) -> Pool:
    if not token.isdigit() or int(token) not in pools:
        raise ConvertError(f"{where}: pool {token!r} is not within delay_pools")
    return pools[int(token)]


def parse(lines: list[str]) -> tuple[list[Pool], list[int]]:
    """The pools of a squid.conf and the indexes of its delay_* lines."""
    pools: dict[int, Pool] = {}
    where_lines: list[int] = []
    for i, raw in enumerate(lines):
        words = raw.split("#", 1)[0].split()
        if not words or not words[0].startswith("delay_"):
            continue
        where = f"line {i + 1}"
        where_lines.append(i)
        d, args = words[0], words[1:]
        if d == "delay_pools":
            if len(args) != 1 or not args[0].isdigit() or int(args[0]) < 1:
                raise ConvertError(f"{where}: delay_pools needs a number of pools >= 1")
            pools = {n: Pool(n) for n in range(1, int(args[0]) + 1)}
        elif d == "delay_class":
            if len(args) != 2:
                raise ConvertError(f"{where}: delay_class needs a pool and a class")
            p = _pool(pools, args[0], where)
            if args[1] not in ("1", "2", "3"):
                raise ConvertError(f"{where}: delay_class {args[1]} has no reqsched mapping "
                                   "(classes 1, 2 and 3 convert; doc/delay-pools.md)")
            p.dclass = int(args[1])
        elif d == "delay_parameters":
            if not args:
                raise ConvertError(f"{where}: delay_parameters needs a pool")
            p = _pool(pools, args[0], where)
            if p.dclass == 0:
                raise ConvertError(f"{where}: delay_parameters before delay_class of pool {p.number}")
            if len(args) != 1 + p.dclass:
                raise ConvertError(f"{where}: a class {p.dclass} pool takes {p.dclass} buckets")
            rates = [_rate(s, where) for s in args[1:]]
            p.aggregate = rates[0]
            if p.dclass == 2:
                p.individual = rates[1]
            elif p.dclass == 3:
                p.network, p.individual = rates[1], rates[2]
        elif d == "delay_access":
            if len(args) < 3 or args[1] not in ("allow", "deny"):
                raise ConvertError(f"{where}: delay_access needs a pool, allow or deny, and ACLs")
            _pool(pools, args[0], where).access.append(" ".join(args[1:]))
        elif d in ("delay_initial_bucket_level", "delay_pool_uses_indirect_client"):
            pass    # no equivalent: kept as a comment (doc/delay-pools.md)
        else:
            raise ConvertError(f"{where}: {d} has no reqsched mapping (doc/delay-pools.md)")
    if not pools:
        raise ConvertError("no delay_pools line")
    for p in pools.values():
        if p.dclass == 0:
            raise ConvertError(f"pool {p.number} has no delay_class")
    return [pools[n] for n in sorted(pools)], where_lines


def _weight(bytes_per_s: float, unit: float) -> str:
    """A weight relative to unit: 4 significant digits, no exponent, at most
    MAX_WEIGHT."""
    w = float(f"{min(bytes_per_s / unit, MAX_WEIGHT):.4g}")
    return f"{w:f}".rstrip("0").rstrip(".")


def reqsched_lines(pools: list[Pool], bps: int) -> list[str]:
    """The request_sched_* lines that replace the pools."""
    link_bytes = bps / 8
    rates = [min(p.aggregate, link_bytes) if p.aggregate else link_bytes for p in pools]
    unit = min(rates)
    per_host = any(p.dclass in (2, 3) for p in pools)
    out = [
        "# converted from delay pools by reqsched-from-delay-pools (doc/delay-pools.md)",
        "request_scheduler on",
        f"request_sched_link {bps} bit",
        f"request_sched_policy {'msf' if per_host else 'rfq'}",
        "request_sched_user src",
    ]
    for p, rate in zip(pools, rates):
        out.append(f"request_sched_class {p.name} {_weight(rate, unit)}")
    out.append(f"request_sched_class unpooled {_weight(link_bytes, unit)}")
    for p in pools:
        access = list(p.access)
        # a pool's closing "deny all" only ends its list (delay_access is
        # first match per pool); in request_sched_access it would say nothing
        while access and access[-1] == "deny all":
            access.pop()
        out.extend(f"request_sched_access {p.name} {a}" for a in access)
    out.append("request_sched_access unpooled allow all")
    return out


def convert(text: str, bps: int) -> str:
    """The whole squid.conf with its delay_* lines turned into comments and
    the reqsched lines after the last of them (where every ACL they name is
    defined)."""
    lines = text.splitlines()
    pools, where = parse(lines)
    out = []
    for i, line in enumerate(lines):
        out.append(f"# {line}" if i in where else line)
        if i == where[-1]:
            out.extend(reqsched_lines(pools, bps))
    return "\n".join(out) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="reqsched-from-delay-pools", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--link", required=True,
                    help='downlink capacity for request_sched_link, e.g. "10 Mbit"')
    ap.add_argument("conf", help="squid.conf with delay_pools (- for stdin)")
    ap.add_argument("-o", "--output", help="write here instead of stdout")
    a = ap.parse_args(argv)
    try:
        text = sys.stdin.read() if a.conf == "-" else open(a.conf, encoding="utf-8").read()
        result = convert(text, link_bps(a.link))
    except (ConvertError, OSError) as e:
        print(f"reqsched-from-delay-pools: {e}", file=sys.stderr)
        return 2
    if a.output:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(result)
    else:
        sys.stdout.write(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
