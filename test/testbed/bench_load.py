#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Benchmark the load generator (reqsched-load sessions) on one core against
nginx (Debian's nginx-light) on the other, on loopback: is the generator ever
the bottleneck of a scenario? (issue "Avalanche-style load", item 5)

  rate   N backlogged users (one keep-alive connection each, no think time,
         1,000-byte responses): transactions/s and the generator's CPU;
  users  U users with SURGE think times (Pareto 1.5, k 1 s), each on its own
         127.x source address: transactions/s and CPU as U grows (while the
         generator keeps up they grow with U; a saturated core bends them).

nginx answers every request with the same 1,000 bytes (`return 200`); the
generator sends absolute-form requests to it as to a proxy. The generator is
pinned to CPU 0 and nginx to CPU 1 (taskset). Prints one line per run.
Usage: bench_load.py [--seconds S] [--rate-users N,N] [--think-users U,U]
(the think-time runs last max(S, 30) s, 10 s of it a ramp-up)."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from reqsched_tools.nginx import NginxOrigin, nginx_installed

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LOAD = os.path.join(TOP, "build", "bin", "reqsched-load")
BODY = "x" * 1000


def addr_ranges(n: int) -> str:
    """n source addresses 127.1.0.1.. as reqsched-load's 'a.b.c.1-250,...'."""
    parts, third = [], 0
    while n > 0:
        k = min(n, 250)
        parts.append(f"127.1.{third}.1-{k}")
        n -= k
        third += 1
    return ",".join(parts)


def profile(d: str, port: int, users: int, seconds: float, think: bool) -> str:
    path = os.path.join(d, f"profile-{users}-{int(think)}.json")
    ramp = min(10.0, seconds / 3) if think else 1.0
    cls = {"name": "bench", "addrs": addr_ranges(users),
           "users": [[ramp, users], [seconds - ramp, users]],
           "connections": 1, "pages_per_session": "const:1000000",
           "embedded": "const:0", "main_size": "const:1000", "embedded_size": "const:1000",
           "think_s": "pareto:1.5:1" if think else "const:0", "think_max_s": 60}
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"servers": "127.0.0.1", "http_port": port, "classes": [cls]}, f)
    return path


def run_load(d: str, port: int, users: int, seconds: float, think: bool) -> str:
    out = os.path.join(d, f"out-{users}-{int(think)}")
    os.makedirs(out)
    prof = profile(d, port, users, seconds, think)
    argv = ["taskset", "-c", "0", LOAD, "sessions", prof, "--proxy", f"127.0.0.1:{port}",
            "--out", out, "--no-plots", "--progress-s", "1000"]
    t0 = time.time()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = p.stderr.read() if p.stderr else ""    # to its exit: the pipe never fills
    # reaped here for its exact CPU time (taskset execs the generator in place)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall, c = time.time() - t0, usage.ru_utime + usage.ru_stime
    if p.returncode != 0:
        sys.exit(f"bench_load: reqsched-load failed ({p.returncode}): {err[-2000:]}")
    with open(os.path.join(out, "replay.json"), encoding="utf-8") as f:
        rep = json.load(f)
    dur = float(rep["duration_s"])
    kind = "think-time users" if think else "backlogged users"
    return (f"{users:6d} {kind}: {rep['completed'] / dur:8.0f} transactions/s, "
            f"{rep['errors']} errors, generator {c / wall * 100:.0f}% of one core "
            f"({dur:.0f} s)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--rate-users", default="1,10,50,200")
    ap.add_argument("--think-users", default="1000,5000,10000")
    args = ap.parse_args()
    if not nginx_installed() or not os.access(LOAD, os.X_OK):
        sys.exit("bench_load: needs nginx (nginx-light) and build/bin/reqsched-load (make tools)")
    with tempfile.TemporaryDirectory(prefix="rs-bench-load-") as d, NginxOrigin(d, BODY, cpu=1) as ng:
        print(f"bench_load: nginx on CPU 1, reqsched-load on CPU 0, {args.seconds:.0f} s "
              f"per run, 1,000-byte responses", flush=True)
        for n in (int(x) for x in args.rate_users.split(",") if x):
            print(run_load(d, ng.port, n, args.seconds, False), flush=True)
        for n in (int(x) for x in args.think_users.split(",") if x):
            print(run_load(d, ng.port, n, max(args.seconds, 30), True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
