# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-load sessions --procs N: one profile's users over N worker
processes, each with the run's --engine (one process saturates its core:
about 5,000-7,000 transactions/s with the Python engine, 36,000 with the C
one, doc/testbed.md "Scale").

Split: worker k (0 .. N-1) runs ClassLoad.share(k, N) of every class: of the
class's users 1, 2, ... the users k+1, k+1+N, ... on the addresses
addrs[k::N], so at every instant the workers together run round(level) users
(users profiles) or level new sessions per second (sessions_per_s), each user
on an address no other worker uses. Every worker is `reqsched-load sessions
PROFILE --worker k/N --start-at T` (the same profile, seed and options) in
its own session (a terminal's SIGINT reaches only this parent, which passes
it on once); each sleeps until the common wall-clock T and writes its usual
outputs to OUT/workers/k/ plus its users' activity spans in replay.json.

Merge: the workers' transactions, pages, bytes per second and spans are put
back into one Engine, their times moved onto the earliest worker's clock (the
start skews, a few ms, are in replay.json "workers"); that Engine writes
requests.csv, persecond.csv, ... and the summary with the code one process
uses. Bytes per second stay in the worker's own second (a skew of ms moves
no byte more than that). OUT/workers/ is removed after a merge.

Hosts (--hosts H,H,...): worker k runs on host k (a host named twice runs
two workers), started as `RSH HOST COMMAND...` (--rsh, default ssh; `ip
netns exec` makes network namespaces hosts) unless HOST is localhost; it
writes into REMOTE_DIR on its host (/tmp/reqsched-load-PID-K), which the
parent copies back through the same remote shell (`tar -cf -` there,
`tar -xf -` here) and removes. Every host needs the same installation
(this Python at the same path), worker k's addresses (the k-th, (k+N)-th,
... of each class, ClassLoad.share) and a clock in step with the parent's
(the common start is a wall-clock time: NTP). A SIGINT reaches a remote
worker only if the remote shell passes it on (`ip netns exec` does; ssh
does not: such a worker ends at the profile's end).

Progress: workers send their counts (Engine.progress_counts()) as JSON lines
on stdout; when every running worker has sent new counts the parent prints
their sums as the one-process progress line.
A worker that fails stops the others (SIGINT, then SIGKILL after
STOP_GRACE_S) and the run fails; so does a run past its bound.
"""
from __future__ import annotations

import csv
import json
import os
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import time
from typing import Any, Optional

from .loadengine import Engine, Page, Txn, format_progress

START_DELAY_S = 2.0          # workers import and read the profile before T
STOP_GRACE_S = 30.0          # from SIGINT to SIGKILL of a worker that does not stop


def remote_host(args: Any, k: int) -> Optional[str]:
    """The host worker k runs on through --rsh, or None: here."""
    hosts = args.hosts or []
    return hosts[k] if k < len(hosts) and hosts[k] != "localhost" else None


def remote_dir(k: int) -> str:
    return f"/tmp/reqsched-load-{os.getpid()}-{k}"


def worker_argv(args: Any, k: int, n: int, start_at: float) -> list[str]:
    """The command line of worker k of n for the parsed `sessions` args
    (through the remote shell when it runs on another host)."""
    host = remote_host(args, k)
    out = remote_dir(k) if host else worker_dir(args.out, k)
    argv = [sys.executable, "-m", "reqsched_tools.load", "sessions", os.path.abspath(args.profile),
            "--proxy", args.proxy, "--timeout", repr(args.timeout),
            "--progress-s", repr(args.progress_s), "--out", out,
            "--seed", str(args.seed), "--engine", args.engine, "--no-plots",
            "--worker", f"{k}/{n}", "--start-at", repr(start_at)]
    if args.proxy_password is not None:
        argv += ["--proxy-password", args.proxy_password]
    return shlex.split(args.rsh) + [host] + argv if host else argv


def fetch_remote(args: Any, k: int) -> str:
    """Copy remote worker k's outputs into its worker_dir and remove them
    there; returns why it failed, or ""."""
    host = remote_host(args, k)
    assert host is not None
    rsh, src, dst = shlex.split(args.rsh) + [host], remote_dir(k), worker_dir(args.out, k)
    os.makedirs(dst, exist_ok=True)
    with subprocess.Popen(rsh + ["tar", "-C", src, "-cf", "-", "."], stdout=subprocess.PIPE) as tx:
        rx = subprocess.run(["tar", "-C", dst, "-xf", "-"], stdin=tx.stdout)
    subprocess.run(rsh + ["rm", "-rf", src], check=False)
    if tx.returncode or rx.returncode:
        return f"worker {k}: could not copy {host}:{src} (tar exited {tx.returncode}/{rx.returncode})"
    return ""


def worker_dir(out: str, k: int) -> str:
    return os.path.join(out, "workers", str(k))


def summed(counts: list[dict]) -> dict:
    """The sum of the workers' progress counts (t: the latest)."""
    tot: dict[str, Any] = {"t": max(c["t"] for c in counts), "active": {}}
    for key in ("started", "done", "errors", "bytes"):
        tot[key] = sum(c[key] for c in counts)
    for c in counts:
        for cls, v in c["active"].items():
            tot["active"][cls] = tot["active"].get(cls, 0) + v
    return tot


class Workers:
    """The worker processes of one run, their progress and their stopping."""

    def __init__(self, argvs: list[list[str]], bound_s: float):
        self.procs = [subprocess.Popen(a, stdout=subprocess.PIPE, start_new_session=True)
                      for a in argvs]
        self.deadline = time.monotonic() + bound_s
        self.stopping = 0.0                       # monotonic time of stop(), 0: not
        self.counts: dict[int, dict] = {}
        self.failed: list[str] = []

    def stop(self, why: str = "") -> None:
        """SIGINT once to every running worker (their Engine stops early)."""
        if why:
            self.failed.append(why)
        if self.stopping:
            return
        self.stopping = time.monotonic()
        for p in self.procs:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGINT)

    def kill(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()

    def wait(self) -> None:
        """Relay progress until every worker has exited."""
        sel = selectors.DefaultSelector()
        buf: dict[int, bytes] = {}
        for k, p in enumerate(self.procs):
            assert p.stdout is not None
            os.set_blocking(p.stdout.fileno(), False)
            sel.register(p.stdout, selectors.EVENT_READ, k)
            buf[k] = b""
        last = {"t": 0.0, "done": 0, "bytes": 0}
        fresh: set[int] = set()                   # workers that reported since the last line
        while sel.get_map():
            for key, _ in sel.select(timeout=0.2):
                k = key.data
                data = os.read(key.fd, 65536)
                if not data:
                    sel.unregister(key.fileobj)
                    continue
                *lines, buf[k] = (buf[k] + data).split(b"\n")
                for line in lines:
                    self.counts[k] = json.loads(line)
                    fresh.add(k)
            self.check()
            live = {m.data for m in sel.get_map().values()}
            if fresh and live <= fresh:
                cur = summed(list(self.counts.values()))
                print(format_progress(cur, last), file=sys.stderr, flush=True)
                last = cur
                fresh.clear()
        for p in self.procs:
            p.wait()
        self.check()

    def check(self) -> None:
        """Stop all on a failed worker or past the bound; kill after the grace."""
        for k, p in enumerate(self.procs):
            rc = p.poll()
            if rc not in (None, 0, 130) and f"worker {k}" not in " ".join(self.failed):
                self.stop(f"worker {k} exited with {rc}")
        now = time.monotonic()
        if now > self.deadline:
            self.stop("run past its bound")
        if self.stopping and now > self.stopping + STOP_GRACE_S:
            self.kill()


def read_rows(path: str) -> list[dict[str, str]]:
    if not os.path.exists(path):
        return []
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def moved(v: str, dt: float) -> float:
    """A time of a worker's file on the merged clock (-1, never, stays)."""
    x = float(v)
    return x if x < 0 else x + dt


def merge_into(engine: Engine, dirs: list[str]) -> list[dict]:
    """Put the workers' outputs (dirs) into engine; returns their replay.json."""
    infos = []
    for d in dirs:
        with open(os.path.join(d, "replay.json"), encoding="utf-8") as f:
            infos.append(json.load(f))
    t0 = min(i["t0_epoch"] for i in infos)
    engine.t0_epoch = t0
    for d, info in zip(dirs, infos):
        dt = info["t0_epoch"] - t0
        info["t0_offset_s"] = round(dt, 4)
        for r in read_rows(os.path.join(d, "requests.csv")):
            engine.txns.append(Txn(
                r["id"], r["user"], r["class"], r["addr"], r["method"], r["url"],
                moved(r["sched"], dt), moved(r["start"], dt), moved(r["first_byte"], dt),
                moved(r["end"], dt), int(r["bytes"]), int(r["status"]), r["error"],
                int(r["conn"]), r["retried"] == "1", r["page"], r["role"]))
        for r in read_rows(os.path.join(d, "pages.csv")):
            engine.pages.append(Page(r["page"], r["user"], r["class"], moved(r["start"], dt),
                                     moved(r["end"], dt), int(r["objects"]), int(r["bytes"]),
                                     int(r["errors"])))
        for r in read_rows(os.path.join(d, "class_bytes.csv")):
            b = engine.bins.setdefault(r["class"], {})
            sec = int(float(r["bin_start"]))
            b[sec] = b.get(sec, 0) + int(r["bytes"])
        engine.spans += [(c, a + dt, b + dt) for c, a, b in info["spans"]]
        engine.users |= {u["id"]: u for u in info["users"]}
        engine.elapsed = max(engine.elapsed, dt + info["duration_s"])
        engine.interrupted |= info["interrupted"]
    return infos


def run_sessions(args: Any, engine: Engine, bound_s: float) -> tuple[Optional[list[dict]], str]:
    """Run args.procs workers of `sessions` and merge them into engine.
    Returns (the workers' replay.json, "") or (None, why it failed)."""
    n = args.procs
    start_at = time.time() + START_DELAY_S
    if os.path.exists(os.path.join(args.out, "workers")):
        shutil.rmtree(os.path.join(args.out, "workers"))
    w = Workers([worker_argv(args, k, n, start_at) for k in range(n)], START_DELAY_S + bound_s + STOP_GRACE_S)
    old = {s: signal.signal(s, lambda *_: w.stop()) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        w.wait()
    finally:
        w.kill()
        for s, h in old.items():
            signal.signal(s, h)
    w.failed += [why for why in (fetch_remote(args, k) for k in range(n)
                                 if remote_host(args, k)) if why]
    if w.failed:
        return None, "; ".join(w.failed) + f" (outputs in {os.path.join(args.out, 'workers')})"
    infos = merge_into(engine, [worker_dir(args.out, k) for k in range(n)])
    if w.stopping:
        engine.interrupted = True
    shutil.rmtree(os.path.join(args.out, "workers"))
    return infos, ""
