#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Benchmark the load generator (reqsched-load sessions with the C engine
or the Python one, one process or --procs N, and reqsched-load tsung)
against nginx (Debian's nginx-light, one worker) on loopback: is the
generator ever the bottleneck of a scenario? (issue "Avalanche-style load",
item 5)

  ceiling  wrk (2 threads, 100 connections) on CPU 0: what nginx answers here;
  rate   N backlogged users (one keep-alive connection each, no think time,
         1,000-byte responses): transactions/s, the generator's CPU and its
         CPU per transaction (the C engine's own too); the C engine with
         --c-users, then over --c-procs processes; the Python engine with
         --rate-users, then 200 of them over --procs 1, 2, 4 processes and by
         Tsung (with and without its per-request log, and with its client in
         an Erlang VM of its own, started as on another host), not pinned;
  users  U users with SURGE think times (Pareto 1.5, k 1 s), each on its own
         127.x source address: transactions/s and CPU as U grows (while the
         generator keeps up they grow with U; a saturated core bends them),
         the C engine with the largest U, then the Python engine's rows: the
         largest U over 2 processes and by Tsung (both ways).
  squid  through the patched Squid (--squid; one worker on CPU 1 beside
         nginx, scheduler on, msf, a link far above the load, cache off, as
         test/squid/bench_overhead.py runs it): wrk's rate through it with
         200 connections (the ceiling), then the C engine's 200 backlogged
         users and --squid-think-users think-time users (5,000: about 1,800
         requests/s, under what one Squid worker answers here); the generator
         is not the bottleneck when it gets what wrk gets.

nginx answers every request with the same 1,000 bytes (`return 200`); the
generator sends absolute-form requests to it as to a proxy. nginx is pinned
to CPU 1 (taskset), one generator process to CPU 0 (with the C engine, the
reqsched-load process that draws the plan and the engine both); --procs N
and Tsung run on both CPUs. Prints one line per run; Tsung rows need tsung,
the ceiling wrk. Usage: bench_load.py [--seconds S] [--c-users N,N]
[--c-procs N,N] [--rate-users N,N] [--think-users U,U] [--procs N,N]
[--think-procs N,N] [--no-tsung] [--no-python] [--squid PATH | --no-squid]
(the think-time runs last max(S, 30) s, 10 s of it a ramp-up)."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from reqsched_tools.monitor import tree_cpu_seconds
from reqsched_tools.nginx import NginxOrigin, nginx_installed

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "test", "squid"))
from bench_overhead import SCHEDULER_CONF, Squid, wrk, wrk_script  # noqa: E402

PATCHED_SQUID = os.path.join(TOP, "build", "squid", "sbin", "squid")
LOAD = os.path.join(TOP, "build", "bin", "reqsched-load")
BODY = "x" * 1000
TICKS = os.sysconf("SC_CLK_TCK")


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


# Tsung's "remote" shell for a client on this host in an Erlang VM of its own
# (tsung -r): it drops the host name and runs the command here
LOCAL_RSH = '#!/bin/sh\nshift\nexec sh -c "$*"\n'


def run_load(d: str, port: int, users: int, seconds: float, think: bool, procs: int = 0,
             engine: str = "sessions", dump: bool = True, own_vm: bool = False,
             ceng: str = "python", squid: Squid | None = None) -> str:
    """One run; procs 0: one generator process pinned to CPU 0, N: N processes
    (--procs N) on both CPUs, shared with nginx; engine tsung: Tsung
    (reqsched-load tsung, Erlang on both CPUs); ceng: sessions --engine;
    squid: the requests go through it to nginx (else to nginx as a proxy)."""
    tag = f"{users}-{int(think)}-{procs}-{engine}-{int(dump)}-{int(own_vm)}-{ceng}-{int(bool(squid))}"
    out = os.path.join(d, f"out-{tag}")
    os.makedirs(out)
    prof = profile(d, port, users, seconds, think)
    pin = ["taskset", "-c", "0"] if procs == 0 and engine == "sessions" else []
    argv = pin + [LOAD, engine, prof, "--proxy", f"127.0.0.1:{squid.port if squid else port}",
                  "--out", out,
                  "--no-plots", "--timeout", "10"]
    argv += ["--progress-s", "1000", "--engine", ceng] if engine == "sessions" else []
    argv += ["--procs", str(procs)] if procs else []
    argv += [] if dump else ["--no-dump"]
    if own_vm:
        rsh = os.path.join(d, "local-rsh")
        with open(rsh, "w", encoding="utf-8") as f:
            f.write(LOCAL_RSH)
        os.chmod(rsh, 0o755)
        argv += ["--hosts", socket.gethostname(), "--rsh", rsh]
    t0 = time.time()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    errs: list[str] = []
    reader = threading.Thread(target=lambda: errs.append(p.stderr.read() if p.stderr else ""))
    reader.start()                               # to its exit: the pipe never fills
    # CPU: reaped here, its waited-for children's included (taskset execs the
    # generator in place; the workers of --procs); Tsung's Erlang VM is killed,
    # not waited for: its tree is sampled every 0.5 s (the largest sum counts)
    sampled = 0.0
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        sampled = max(sampled, tree_cpu_seconds(Path("/proc"), p.pid, TICKS) or 0.0)
        time.sleep(0.5)
    reader.join()
    err = errs[0]
    p.returncode = os.waitstatus_to_exitcode(status)
    wall, c = time.time() - t0, max(usage.ru_utime + usage.ru_stime, sampled)
    if p.returncode != 0:
        sys.exit(f"bench_load: reqsched-load failed ({p.returncode}): {err[-2000:]}")
    with open(os.path.join(out, "replay.json"), encoding="utf-8") as f:
        rep = json.load(f)
    dur = float(rep["duration_s"])
    kind = "think-time users" if think else "backlogged users"
    how = (f"Tsung{', client VM of its own' if own_vm else ''}"
           f"{'' if dump else ' without its per-request log'}" if engine == "tsung" else
           f"{ceng} engine, " + (f"--procs {procs}, both CPUs" if procs else "1 process on CPU 0"))
    how += ", through the patched Squid" if squid else ""
    shutil.rmtree(out)
    done = max(rep["completed"], 1)
    own = (f", the C engine's own {rep['engine_cpu_s'] / done * 1e6:.0f}"
           if "engine_cpu_s" in rep else "")
    return (f"{users:6d} {kind}, {how}: {rep['completed'] / dur:8.0f} transactions/s, "
            f"{rep['errors']} errors, generator {c / wall * 100:.0f}% of one core, "
            f"{c / done * 1e6:.0f} CPU us per transaction{own} ({dur:.0f} s, "
            f"{wall:.0f} s with the outputs)")


def run_wrk(port: int, seconds: float) -> str:
    """wrk (2 threads, 100 connections) pinned to CPU 0: nginx's ceiling here."""
    r = subprocess.run(["taskset", "-c", "0", "wrk", "-t2", "-c100", f"-d{seconds:.0f}s",
                        f"http://127.0.0.1:{port}/"], capture_output=True, text=True, check=True)
    rate = [ln.split()[1] for ln in r.stdout.splitlines() if ln.startswith("Requests/sec")]
    return f"   100 connections, wrk on CPU 0: {float(rate[0]):8.0f} transactions/s (ceiling)"


def run_wrk_squid(d: str, port: int, squid: Squid, seconds: float) -> str:
    """wrk (1 thread, 200 connections: as many as the backlogged users) on
    CPU 0 through Squid: its ceiling."""
    r = wrk(wrk_script(d, f"http://127.0.0.1:{port}/", True), squid, seconds, 200)
    rate = r["requests"] / (r["duration_us"] / 1e6)
    return (f"   200 connections, wrk on CPU 0, through the patched Squid: {rate:8.0f} "
            f"transactions/s (ceiling), {r['errors'] + r['status_errors']} errors")


def squid_rows(d: str, port: int, binary: str, seconds: float, think_users: int) -> None:
    """The rows through the patched Squid (one worker on CPU 1)."""
    os.chmod(d, 0o755)                           # Squid's kids run as nobody
    sq = Squid("patched", binary, d, 1, SCHEDULER_CONF.format(link_mbit=10000))
    sq.start()
    try:
        print(run_wrk_squid(d, port, sq, seconds), flush=True)
        print(run_load(d, port, 200, seconds, False, ceng="c", squid=sq), flush=True)
        if think_users:
            print(run_load(d, port, think_users, max(seconds, 30), True, ceng="c", squid=sq),
                  flush=True)
    finally:
        sq.stop()


def ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--c-users", default="200", help="C engine rows, 1 process")
    ap.add_argument("--c-procs", default="2", help="--procs N rows of the C engine "
                    "(200 backlogged users)")
    ap.add_argument("--no-python", action="store_true", help="no Python engine or Tsung rows")
    ap.add_argument("--rate-users", default="1,10,50,200")
    ap.add_argument("--think-users", default="1000,5000,10000")
    ap.add_argument("--procs", default="1,2,4", help="--procs N rows (200 backlogged users)")
    ap.add_argument("--think-procs", default="2", help="--procs N rows of the largest "
                    "--think-users")
    ap.add_argument("--no-tsung", action="store_true", help="no Tsung rows")
    ap.add_argument("--squid", default=PATCHED_SQUID, help="the patched Squid of the rows "
                    "through it (default: the build tree's)")
    ap.add_argument("--no-squid", action="store_true", help="no rows through Squid")
    ap.add_argument("--squid-think-users", type=int, default=5000,
                    help="think-time users of the row through Squid (0: none)")
    args = ap.parse_args()
    if not nginx_installed() or not os.access(LOAD, os.X_OK):
        sys.exit("bench_load: needs nginx (nginx-light) and build/bin/reqsched-load (make tools)")
    tsung = not args.no_tsung and shutil.which("tsung") is not None
    with tempfile.TemporaryDirectory(prefix="rs-bench-load-") as d, NginxOrigin(d, BODY, cpu=1) as ng:
        print(f"bench_load: nginx on CPU 1, {args.seconds:.0f} s per run, 1,000-byte responses",
              flush=True)
        if shutil.which("wrk"):
            print(run_wrk(ng.port, args.seconds), flush=True)
        for n in ints(args.c_users):
            print(run_load(d, ng.port, n, args.seconds, False, ceng="c"), flush=True)
        for k in ints(args.c_procs):
            print(run_load(d, ng.port, 200, args.seconds, False, procs=k, ceng="c"), flush=True)
        think = max(args.seconds, 30)
        big = max(ints(args.think_users) or [0])
        if big:
            print(run_load(d, ng.port, big, think, True, ceng="c"), flush=True)
        if not args.no_squid:
            if not os.access(args.squid, os.X_OK):
                sys.exit(f"bench_load: {args.squid} missing (make squid, or --no-squid)")
            squid_rows(d, ng.port, args.squid, args.seconds, args.squid_think_users)
        if args.no_python:
            return 0
        for n in ints(args.rate_users):
            print(run_load(d, ng.port, n, args.seconds, False), flush=True)
        for k in ints(args.procs):
            print(run_load(d, ng.port, 200, args.seconds, False, procs=k), flush=True)
        if tsung:
            print(run_load(d, ng.port, 200, args.seconds, False, engine="tsung"), flush=True)
            print(run_load(d, ng.port, 200, args.seconds, False, engine="tsung", dump=False),
                  flush=True)
            print(run_load(d, ng.port, 200, args.seconds, False, engine="tsung", own_vm=True),
                  flush=True)
        for n in ints(args.think_users):
            print(run_load(d, ng.port, n, think, True), flush=True)
        for k in ints(args.think_procs) if big else []:
            print(run_load(d, ng.port, big, think, True, procs=k), flush=True)
        if tsung and big:
            print(run_load(d, ng.port, big, think, True, engine="tsung"), flush=True)
            print(run_load(d, ng.port, big, think, True, engine="tsung", own_vm=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
