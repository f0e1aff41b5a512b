#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What the patch series costs when the link is not congested (issue "Scale and
cost", item 2): stock Squid 6.13 (the same Debian source, the series not
applied; mk/squid_stock.mk) against the patched Squid with the scheduler on
(msf, pacing on, a link of --link-mbit far above the load), on loopback, nginx
(Debian's nginx-light) as the origin, wrk (Debian) as the client.

For each case (object size x client keep-alive x workers) both Squids run side
by side on their own ports; after a warm-up of each, --reps rounds run wrk for
--seconds against one then the other (the order alternates every round, ABBA,
so a drift of the machine falls on both). Every run gives requests/s, p50 and
p99 latency (wrk's own histogram) and Squid's CPU-seconds per 1,000 requests
(cpuacct of a cgroup that holds the Squid's master, kids and log daemon). A
round's ratio is patched / stock; the summary is the median ratio and the
spread (min-max) over the rounds. Goals (issue): >= 0.98x requests/s, <= 1.02x
CPU per request.

Placement on the two cores: with 1 worker, Squid (all its processes) has CPU 1
and wrk and nginx CPU 0; with 4 workers nothing is pinned (6 busy processes on
2 cores: the ratios then include the scheduler's effect on contention).
Squid's cache is off (`cache deny all`): every request goes to the origin and
through the scheduler. Client without keep-alive = `Connection: close` on
every request (a TCP connection per request); Squid keeps its server
connections (its default) in both builds.

Writes OUT/runs.jsonl (every run) and OUT/summary.txt (the table it prints).

--instructions counts instead of timing (exact, whatever else the machine
runs): for each size x keep-alive, stock, the patched Squid without
request_sched_* lines and the patched Squid with the scheduler run as one
process (-N) under callgrind, once serving N requests and once 2N (--requests,
over --connections clients, default 8); instructions per request = (Ir(2N) -
Ir(N)) / N, so start-up and shut-down cancel. The access log is written
with the stdio module here: the daemon module's 32 KB buffers are allocated
(and zeroed) once per write to the log daemon, a count that follows how the
requests happened to batch in the event loop, not what the build does.
Writes OUT/instructions.txt (the table) and the callgrind profiles
OUT/callgrind.BUILD.SIZE-ka|close.N (callgrind_annotate reads them).

Usage: bench_overhead.py --stock SQUID --patched SQUID [--seconds 10]
       [--warmup 5] [--reps 3] [--sizes 1024,16384] [--workers 1,4]
       [--keepalive on,off] [--connections 32] [--out DIR]
       bench_overhead.py --instructions --stock SQUID --patched SQUID
       [--requests 1000] [--sizes ...] [--keepalive ...] [--connections 8]"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from reqsched_tools.localnet import LOOPBACK, free_port, wait_port
from reqsched_tools.nginx import NginxOrigin, nginx_installed
from reqsched_tools.paths import squid_state_dir

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CGROUP = "/sys/fs/cgroup/cpuacct"
SQUID_USER = "nobody"
SQUID_GROUP = "nogroup"

WRK_SCRIPT = """\
wrk.path = "{url}"
{close}
done = function(summary, latency, requests)
  io.write(string.format('RESULT {{"requests": %d, "duration_us": %d, "errors": %d,'
    .. ' "status_errors": %d, "p50_us": %d, "p99_us": %d}}\\n',
    summary.requests, summary.duration,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status, latency:percentile(50), latency:percentile(99)))
end
"""


def progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


SCHEDULER_CONF = """\
request_scheduler on
request_sched_link {link_mbit} Mbit
request_sched_policy msf
request_sched_user src
request_sched_class gold 4
request_sched_class silver 2
request_sched_class bronze 1
acl rs_gold src 10.10.1.0/24
acl rs_silver src 10.10.2.0/24
request_sched_access gold allow rs_gold
request_sched_access silver allow rs_silver
request_sched_access bronze allow all
"""


@dataclass
class Squid:
    """One Squid (daemon mode: master + kids) in its own directory and cpuacct
    cgroup, `workers N`, cache off."""
    name: str
    binary: str
    base: str
    workers: int
    scheduler_conf: str
    log_module: str = "daemon"
    port: int = field(default_factory=free_port)

    def __post_init__(self) -> None:
        self.dir = os.path.join(self.base, f"{self.name}-w{self.workers}")
        os.makedirs(self.dir)
        os.chmod(self.dir, 0o777)
        self.service = f"rsbench{self.port}"
        self.cgroup = os.path.join(CGROUP, self.service)
        self.conf = os.path.join(self.dir, "squid.conf")
        with open(self.conf, "w", encoding="utf-8") as f:
            f.write(f"""# generated by test/squid/bench_overhead.py
http_port 127.0.0.1:{self.port}
workers {self.workers}
pid_filename {self.dir}/squid.pid
cache_log {self.dir}/cache.log
access_log {self.log_module}:{self.dir}/access.log squid
cache_store_log none
logfile_rotate 0
coredump_dir {self.dir}
cache_effective_user {SQUID_USER}
cache deny all
cache_mem 0 MB
shutdown_lifetime 0 seconds
dns_nameservers 127.0.0.1
max_filedescriptors 16384
acl rs_loopback src 127.0.0.0/8
http_access allow rs_loopback
http_access deny all
{self.scheduler_conf}""")

    def start(self) -> None:
        os.makedirs(self.cgroup, exist_ok=True)
        squid_state_dir(Path(self.binary), SQUID_USER)
        pin = "taskset -c 1 " if self.workers == 1 else ""
        # the shell joins the cgroup, then becomes Squid: every process it
        # forks (kids, log daemons) is counted there
        cmd = (f"echo $$ > {self.cgroup}/cgroup.procs && exec {pin}{self.binary} "
               f"-n {self.service} -f {self.conf}")
        subprocess.run(["sh", "-c", cmd], check=True, timeout=30)
        wait_port(self.port, f"squid {self.name}")
        time.sleep(0.5 * self.workers)          # every worker listening

    def start_callgrind(self, out_file: str) -> subprocess.Popen:
        """Squid as one process (-N: no master, no kids) under callgrind,
        started as SQUID_USER (a Squid started as root would switch to it
        before callgrind writes its profile), its profile in out_file,
        a file of self.dir, when it exits."""
        squid_state_dir(Path(self.binary), SQUID_USER)
        with open(os.path.join(self.dir, "valgrind.log"), "w", encoding="utf-8") as log:
            proc = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}",
                                     self.binary, "-N", "-n", self.service, "-f", self.conf],
                                    stdout=log, stderr=subprocess.STDOUT, user=SQUID_USER,
                                    group=SQUID_GROUP, extra_groups=[])
        try:
            wait_port(self.port, f"squid {self.name} under callgrind", timeout=180, proc=proc)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        return proc

    def cpu_s(self) -> float:
        with open(os.path.join(self.cgroup, "cpuacct.usage"), encoding="ascii") as f:
            return int(f.read()) / 1e9

    def stop(self) -> None:
        subprocess.run([self.binary, "-n", self.service, "-f", self.conf, "-k", "shutdown"],
                       timeout=30, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and self.pids():
            time.sleep(0.2)
        for pid in self.pids():
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
        try:
            os.rmdir(self.cgroup)
        except OSError:
            pass

    def pids(self) -> list[int]:
        try:
            with open(os.path.join(self.cgroup, "cgroup.procs"), encoding="ascii") as f:
                return [int(x) for x in f.read().split()]
        except FileNotFoundError:
            return []


@dataclass
class Run:
    squid: str
    size: int
    keepalive: bool
    workers: int
    rnd: int
    rps: float
    p50_ms: float
    p99_ms: float
    cpu_ms_per_kreq: float
    errors: int


def wrk_script(d: str, url: str, keepalive: bool) -> str:
    """wrk's Lua script for one case: the proxied URL, Connection: close
    without keep-alive, and a done() that prints the run as JSON."""
    path = os.path.join(d, "wrk.lua")
    with open(path, "w", encoding="utf-8") as f:
        f.write(WRK_SCRIPT.format(url=url, close="" if keepalive else 'wrk.headers["Connection"] = "close"'))
    return path


def wrk(script: str, sq: Squid, seconds: float, connections: int) -> dict:
    pin = ["taskset", "-c", "0"] if sq.workers == 1 else []
    out = subprocess.run(pin + ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "-s", script,
                                f"http://127.0.0.1:{sq.port}/"],
                         capture_output=True, text=True, timeout=seconds + 60, check=True).stdout
    line = next((x for x in out.splitlines() if x.startswith("RESULT ")), None)
    if line is None:
        raise RuntimeError(f"wrk printed no result:\n{out}")
    return json.loads(line[len("RESULT "):])


def measure(script: str, sq: Squid, keepalive: bool, args: argparse.Namespace,
            size: int, rnd: int) -> Run:
    c0 = sq.cpu_s()
    r = wrk(script, sq, args.seconds, args.connections)
    cpu = sq.cpu_s() - c0
    n = max(1, r["requests"])
    return Run(sq.name, size, keepalive, sq.workers, rnd, r["requests"] / (r["duration_us"] / 1e6),
               r["p50_us"] / 1e3, r["p99_us"] / 1e3, cpu / n * 1e6,
               r["errors"] + r["status_errors"])


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.3f} ({min(xs):.3f}-{max(xs):.3f})"


def summarize(runs: list[Run]) -> list[str]:
    cases = sorted({(r.workers, r.size, r.keepalive) for r in runs}, key=lambda c: (c[0], c[1], not c[2]))
    lines = [f"{'workers':>7} {'size':>6} {'keep-alive':>10} | {'stock req/s':>11} {'p50':>5} {'p99':>5} "
             f"{'cpu':>5} | {'ours req/s':>10} {'p50':>5} {'p99':>5} {'cpu':>5} | "
             f"{'req/s ratio':>19} {'cpu/req ratio':>19} {'p99 ratio':>19} {'errors':>6}"]
    for w, size, ka in cases:
        by = {name: sorted((r for r in runs if (r.workers, r.size, r.keepalive, r.squid) == (w, size, ka, name)),
                           key=lambda r: r.rnd) for name in ("stock", "patched")}
        st, ou = by["stock"], by["patched"]

        def med(rs: list[Run], attr: str) -> float:
            return statistics.median(getattr(r, attr) for r in rs)
        ratio = {a: [getattr(o, a) / getattr(s, a) for s, o in zip(st, ou) if getattr(s, a) > 0]
                 for a in ("rps", "cpu_ms_per_kreq", "p99_ms")}
        lines.append(
            f"{w:>7} {size:>6} {'on' if ka else 'off':>10} | {med(st, 'rps'):>11.0f} {med(st, 'p50_ms'):>5.2f} "
            f"{med(st, 'p99_ms'):>5.2f} {med(st, 'cpu_ms_per_kreq'):>5.0f} | {med(ou, 'rps'):>10.0f} "
            f"{med(ou, 'p50_ms'):>5.2f} {med(ou, 'p99_ms'):>5.2f} {med(ou, 'cpu_ms_per_kreq'):>5.0f} | "
            f"{spread(ratio['rps']):>19} {spread(ratio['cpu_ms_per_kreq']):>19} {spread(ratio['p99_ms']):>19} "
            f"{sum(r.errors for r in st + ou):>6}")
    lines.append("(latencies in ms; cpu = Squid CPU ms per 1,000 requests; ratios = patched / stock per round: "
                 "median (min-max); goals >= 0.98 req/s, <= 1.02 cpu/req)")
    return lines


def object_files(d: str, sizes: list[int]) -> str:
    """Directory d/nginx with an object SIZE.bin of every size: nginx's root."""
    root = os.path.join(d, "nginx")
    os.makedirs(root)
    for n in sizes:
        with open(os.path.join(root, f"{n}.bin"), "wb") as f:
            f.write(b"x" * n)
    return root


def bench_case(d: str, nginx: NginxOrigin, args: argparse.Namespace, workers: int, size: int,
               keepalive: bool, out) -> list[Run]:
    squids = [Squid("stock", args.stock, d, workers, ""),
              Squid("patched", args.patched, d, workers, SCHEDULER_CONF.format(link_mbit=args.link_mbit))]
    runs: list[Run] = []
    try:
        for sq in squids:
            sq.start()
        script = wrk_script(d, nginx.url(f"/{size}.bin"), keepalive)
        for sq in squids:
            wrk(script, sq, args.warmup, args.connections)
        for rnd in range(args.reps):
            for sq in (squids if rnd % 2 == 0 else squids[::-1]):
                run = measure(script, sq, keepalive, args, size, rnd)
                runs.append(run)
                out.write(json.dumps(run.__dict__) + "\n")
                out.flush()
                progress(f"  workers {workers} size {size} keep-alive {'on' if keepalive else 'off'} "
                         f"round {rnd + 1}/{args.reps} {run.squid}: {run.rps:.0f} req/s, p99 {run.p99_ms:.2f} ms, "
                         f"{run.cpu_ms_per_kreq:.0f} CPU ms/kreq, {run.errors} errors")
    finally:
        for sq in squids:
            sq.stop()
        shutil.rmtree(os.path.join(d, f"stock-w{workers}"), ignore_errors=True)
        shutil.rmtree(os.path.join(d, f"patched-w{workers}"), ignore_errors=True)
    return runs


def fetch(port: int, url: str, size: int, n: int, connections: int, keepalive: bool) -> None:
    """Exactly n GETs of url through the proxy on port, spread over
    `connections` clients (without keep-alive each request sends
    `Connection: close` and the next opens a new connection). Raise unless
    every answer is 200 with size bytes."""
    errors: list[str] = []
    headers: dict[str, str] = {} if keepalive else {"Connection": "close"}

    def client(count: int) -> None:
        conn = http.client.HTTPConnection(LOOPBACK, port, timeout=120)
        try:
            for _ in range(count):
                conn.request("GET", url, headers=headers)   # reconnects after a close
                r = conn.getresponse()
                body = r.read()
                if r.status != 200 or len(body) != size:
                    errors.append(f"{r.status} with {len(body)} bytes")
                    return
        except OSError as e:
            errors.append(str(e))
        finally:
            conn.close()
    threads = [threading.Thread(target=client, args=(n // connections + (i < n % connections),))
               for i in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(f"{len(errors)} clients failed, first: {errors[0]}")


def callgrind_total(path: str) -> int:
    """Instructions executed (Ir) of a callgrind profile: its totals line."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("totals:"):
                return int(line.split()[1])
    raise RuntimeError(f"{path}: no totals line")


INSTR_BUILDS = ("stock", "patched-off", "patched")


def instructions_case(d: str, nginx: NginxOrigin, args: argparse.Namespace, size: int,
                      keepalive: bool) -> dict[str, float]:
    """Instructions per request of each build for one case (see the module's
    comment)."""
    conf = {"stock": (args.stock, ""), "patched-off": (args.patched, ""),
            "patched": (args.patched, SCHEDULER_CONF.format(link_mbit=args.link_mbit))}
    tag = f"{size}-{'ka' if keepalive else 'close'}"
    per_req: dict[str, float] = {}
    for name in INSTR_BUILDS:
        binary, sched = conf[name]
        ir: dict[int, int] = {}
        for n in (args.requests, 2 * args.requests):
            sq = Squid(f"{name}-{tag}-{n}", binary, d, 1, sched, log_module="stdio")
            out_file = os.path.join(sq.dir, "callgrind.out")
            proc = sq.start_callgrind(out_file)
            try:
                fetch(sq.port, nginx.url(f"/{size}.bin"), size, n, args.connections, keepalive)
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=300)
            ir[n] = callgrind_total(out_file)
            shutil.move(out_file, os.path.join(args.out, f"callgrind.{name}.{tag}.{n}"))
            shutil.rmtree(sq.dir, ignore_errors=True)
        per_req[name] = (ir[2 * args.requests] - ir[args.requests]) / args.requests
        progress(f"  size {size} keep-alive {'on' if keepalive else 'off'} {name}: "
                 f"{per_req[name]:.0f} instructions per request")
    return per_req


def instructions_table(results: dict[tuple[int, bool], dict[str, float]]) -> list[str]:
    """The table --instructions prints: per case each build's instructions
    per request and the ratios to stock."""
    lines = [f"{'size':>6} {'keep-alive':>10} | {'stock':>8} {'sched off':>9} {'patched':>8} | "
             f"{'off/stock':>9} {'patched/stock':>13} {'patched-stock':>13}"]
    for (size, ka), r in results.items():
        st, off, on = r["stock"], r["patched-off"], r["patched"]
        lines.append(f"{size:>6} {'on' if ka else 'off':>10} | {st:>8.0f} {off:>9.0f} {on:>8.0f} | "
                     f"{off / st:>9.4f} {on / st:>13.4f} {on - st:>13.0f}")
    lines.append("(instructions per request of Squid's one process under callgrind; sched off = the patched "
                 "binary without request_sched_* lines)")
    return lines


def int_list(s: str) -> list[int]:
    return [int(x) for x in s.split(",") if x]


def onoff_list(s: str) -> list[bool]:
    vals = [x for x in s.split(",") if x]
    if any(v not in ("on", "off") for v in vals):
        raise argparse.ArgumentTypeError("give on, off or on,off")
    return [v == "on" for v in vals]


def main_instructions(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if shutil.which("valgrind") is None:
        ap.error("valgrind not found (make deps installs it)")
    if not nginx_installed():
        ap.error("nginx not found (make deps installs nginx-light)")
    args.connections = args.connections or 8
    os.makedirs(args.out, exist_ok=True)
    progress(f"bench-squid --instructions: {len(args.sizes) * len(args.keepalive)} cases, "
             f"{2 * len(INSTR_BUILDS)} runs each; callgrind profiles in {args.out}")
    results: dict[tuple[int, bool], dict[str, float]] = {}
    d = tempfile.mkdtemp(prefix="rs-bench-squid-")
    os.chmod(d, 0o755)
    try:
        with NginxOrigin(object_files(d, args.sizes)) as nginx:
            for s in args.sizes:
                for k in args.keepalive:
                    results[(s, k)] = instructions_case(d, nginx, args, s, k)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    publish(instructions_table(results), os.path.join(args.out, "instructions.txt"))
    return 0


def publish(table: list[str], path: str) -> None:
    """Prints the table and writes it to path."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(table) + "\n")
    print("\n".join(table))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stock", required=True, help="stock Squid binary (make squid-stock)")
    ap.add_argument("--patched", required=True, help="patched Squid binary (make squid)")
    ap.add_argument("--seconds", type=float, default=10.0, help="length of a measured run (default 10)")
    ap.add_argument("--warmup", type=float, default=5.0, help="warm-up of each Squid per case (default 5)")
    ap.add_argument("--reps", type=int, default=3, help="rounds per case (default 3)")
    ap.add_argument("--sizes", type=int_list, default=[1024, 16384], help="object sizes (default 1024,16384)")
    ap.add_argument("--workers", type=int_list, default=[1, 4], help="Squid workers (default 1,4)")
    ap.add_argument("--keepalive", type=onoff_list, default=[True, False], help="client keep-alive (default on,off)")
    ap.add_argument("--connections", type=int, help="wrk connections (default 32); clients of "
                    "--instructions (default 8)")
    ap.add_argument("--link-mbit", type=int, default=10000, help="request_sched_link of the patched Squid")
    ap.add_argument("--instructions", action="store_true",
                    help="instead of timing: instructions per request of stock, the patched Squid "
                    "without the scheduler and with it, under callgrind (one process, -N)")
    ap.add_argument("--requests", type=int, default=1000,
                    help="--instructions: N, the runs serve N and 2N requests (default 1000)")
    ap.add_argument("--out", default=os.path.join(TOP, "results", time.strftime("bench-squid-%Y%m%d-%H%M%S")))
    args = ap.parse_args()
    if args.instructions:
        return main_instructions(ap, args)
    args.connections = args.connections or 32
    for tool in ("wrk", "taskset"):
        if shutil.which(tool) is None:
            ap.error(f"{tool} not found (make deps installs it)")
    if not nginx_installed():
        ap.error("nginx not found (make deps installs nginx-light)")
    if not os.path.isdir(CGROUP):
        ap.error(f"{CGROUP}: the cgroup v1 cpuacct controller is needed for Squid's CPU time")
    os.makedirs(args.out, exist_ok=True)
    cases = [(w, s, k) for w in args.workers for s in args.sizes for k in args.keepalive]
    minutes = len(cases) * (2 * args.warmup + 2 * args.reps * args.seconds + 10) / 60
    progress(f"bench-squid: {len(cases)} cases, about {minutes:.0f} min; results in {args.out}")
    runs: list[Run] = []
    d = tempfile.mkdtemp(prefix="rs-bench-squid-")
    os.chmod(d, 0o755)
    try:
        with NginxOrigin(object_files(d, args.sizes), cpu=0) as nginx, \
                open(os.path.join(args.out, "runs.jsonl"), "w", encoding="utf-8") as out:
            for w, s, k in cases:
                runs += bench_case(d, nginx, args, w, s, k, out)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    publish(summarize(runs), os.path.join(args.out, "summary.txt"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
