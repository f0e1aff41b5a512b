#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Two analyses behind doc/link-control.md's few-users limit (issue "Control bytes
on the whole link", shares with few users per class).

  oracle   what an ideal byte scheduler could give the few-users load: a fluid
           link of rate C shared by weighted GPS among the users whose response
           is being transferred (a class's share, its weight times its users as
           msf gives it, split evenly among its transferring users, so a user
           waiting for its server lends its share to its own class at once, and
           other classes get it only when none of the class transfers);
           closed-loop users with one request at a time: wait
           a first-byte delay U(a, b) plus a fixed per-response overhead, then
           receive a lognormal size. No TCP: prints the class throughput ratio.
  busy     from a testbed run's RUN/MODE/requests.csv: per class, how much of
           the measured window it had a response in transfer (first byte to end),
           and the class rates conditional on which classes were transferring
           (each response's bytes spread evenly over its transfer time).

Usage: few_users_analysis.py oracle [--overhead S,S] [--mu M,M] [--seconds T]
                                   [--users N[,N,N]] [--weights W,W,W]
       few_users_analysis.py busy RUN/msf/requests.csv [--from S] [--to S]
"""
from __future__ import annotations

import argparse
import collections
import csv
import random
import sys
from dataclasses import dataclass


@dataclass
class User:
    cls: int
    waiting: bool       # first-byte delay (+ overhead) in progress
    until: float        # end of the wait
    left: float         # bytes left to receive


def oracle(weights: list[float], users: list[int], rate: float, delay: tuple[float, float],
           overhead: float, mu: float, sigma: float, seconds: float, seed: int
           ) -> list[float]:
    """Bytes per class over `seconds` of the fluid model (exact between events)."""
    rnd = random.Random(seed)

    def wait_until(t: float) -> float:
        return t + rnd.uniform(*delay) + overhead

    share = [w * n for w, n in zip(weights, users)]     # msf: a class's weight x its users
    us = [User(c, True, wait_until(0.0), 0.0) for c in range(len(weights)) for _ in range(users[c])]
    got = [0.0] * len(weights)
    t = 0.0
    while t < seconds:
        busy = collections.Counter(u.cls for u in us if not u.waiting)
        wsum = sum(share[c] for c in busy)
        rates = [rate * share[u.cls] / wsum / busy[u.cls] if not u.waiting else 0.0 for u in us]
        dt = min([u.until - t for u in us if u.waiting]
                 + [u.left / r for u, r in zip(us, rates) if not u.waiting])
        dt = max(dt, 1e-9)
        for u, r in zip(us, rates):
            if not u.waiting:
                u.left -= r * dt
                got[u.cls] += r * dt
        t += dt
        for u in us:
            if u.waiting and u.until <= t + 1e-12:
                u.waiting, u.left = False, rnd.lognormvariate(mu, sigma)
            elif not u.waiting and u.left <= 1e-6:
                u.waiting, u.until = True, wait_until(t)
    return got


def cmd_oracle(args: argparse.Namespace) -> int:
    weights = args.weights
    users = args.users * len(weights) if len(args.users) == 1 else args.users
    if len(users) != len(weights):
        print(f"--users: one count, or one per class ({len(weights)})", file=sys.stderr)
        return 2
    due = [w * n / sum(v * m for v, m in zip(weights, users)) for w, n in zip(weights, users)]
    print("weighted fair shares (weight x users): "
          + ":".join(f"{d / due[-1]:.2f}" for d in due[:-1]) + ":1")
    for mu in args.mu:
        for o in args.overhead:
            got = oracle(weights, users, args.rate, (args.delay_min, args.delay_max),
                         o, mu, args.sigma, args.seconds, args.seed)
            ratio = ":".join(f"{g / got[-1]:.2f}" for g in got[:-1])
            err = " ".join(f"{100 * (g / sum(got) / d - 1):+.1f}" for g, d in zip(got, due))
            print(f"mu {mu:.1f}  overhead {o * 1e3:4.0f} ms  gold:silver:bronze {ratio}:1"
                  f"  errors % {err}")
    return 0


def cmd_busy(args: argparse.Namespace) -> int:
    with open(args.requests, newline="") as f:
        rows = [r for r in csv.DictReader(f) if float(r["first_byte"]) >= 0
                and float(r["end"]) > float(r["first_byte"])]
    classes = sorted({r["class"] for r in rows}, key=lambda c: [r["class"] for r in rows].index(c))
    dt, lo = 0.01, args.start
    n = int((args.end - lo) / dt)
    rate = {c: [0.0] * n for c in classes}
    busy = {c: [0] * n for c in classes}
    for r in rows:
        a, b, size = float(r["first_byte"]), float(r["end"]), int(r["bytes"])
        for i in range(max(0, int((a - lo) / dt)), min(n, int((b - lo) / dt))):
            rate[r["class"]][i] += size / (b - a)
            busy[r["class"]][i] += 1
    for c in classes:
        frac = sum(1 for x in busy[c] if x) / n
        print(f"{c:8s} transferring {frac:.2f} of the window, {sum(busy[c]) / n:.2f} responses on average")
    groups: dict[str, list] = collections.defaultdict(lambda: [0, [0.0] * len(classes)])
    for i in range(n):
        key = "".join(c[0] if busy[c][i] else "-" for c in classes)
        g = groups[key]
        g[0] += 1
        for k, c in enumerate(classes):
            g[1][k] += rate[c][i]
    for key, (cnt, s) in sorted(groups.items(), key=lambda kv: -kv[1][0]):
        per = "  ".join(f"{c} {s[k] / cnt / 1e3:.0f}" for k, c in enumerate(classes))
        print(f"{key}  {cnt / n:.2f} of the time  KB/s: {per}")
    return 0


def floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",")]


def ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",")]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    o = sub.add_parser("oracle", help="weighted-GPS fluid model of the few-users load")
    o.add_argument("--overhead", type=floats, default=[0.0, 0.1, 0.2, 0.4],
                   help="fixed seconds added to every first-byte delay (comma list)")
    o.add_argument("--mu", type=floats, default=[9.5, 11.8], help="lognormal mu of sizes")
    o.add_argument("--sigma", type=float, default=1.6)
    o.add_argument("--delay-min", type=float, default=0.02)
    o.add_argument("--delay-max", type=float, default=0.4)
    o.add_argument("--users", type=ints, default=[3],
                   help="users per class: one count for every class, or a comma list")
    o.add_argument("--weights", type=floats, default=[4.0, 2.0, 1.0],
                   help="class weights (comma list)")
    o.add_argument("--rate", type=float, default=250e3 * 0.98, help="bytes/s (U+ x C)")
    o.add_argument("--seconds", type=float, default=3000.0)
    o.add_argument("--seed", type=int, default=1)
    o.set_defaults(func=cmd_oracle)
    b = sub.add_parser("busy", help="transfer-time analysis of a run's requests.csv")
    b.add_argument("requests")
    b.add_argument("--from", dest="start", type=float, default=10.0)
    b.add_argument("--to", dest="end", type=float, default=60.0)
    b.set_defaults(func=cmd_busy)
    args = p.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
