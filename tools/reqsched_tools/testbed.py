# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-testbed: run a scenario on the namespace testbed in every gateway mode.

  reqsched-testbed run --scenario NAME | --spec FILE [--modes stock,msf,...]
                      [--duration S] [--out DIR] [--json FILE]
  reqsched-testbed setup --id ID [--scenario NAME]   (build the network, leave it up)
  reqsched-testbed teardown --id ID | --all          (remove it and its processes)
  reqsched-testbed list                              (scenarios, and testbed namespaces up)

One run = one network (ids rsXXXX), the same load and seed for every mode, modes
one after another; results in results/<scenario>-<UTC timestamp>/<mode>/ and the
report (table, report.json, PNGs) in the run directory.
"""
from __future__ import annotations

import argparse
import json
import os
import pwd
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Optional

from . import monitor, netns, paths, prober, scenario, siteorigin, squidconf
from .netns import Topology
from .scenario import ModeSpec, Scenario

TOP = str(paths.TOP)
PATCHED_SQUID = str(paths.PATCHED_SQUID)
DELAYLINE = str(paths.DELAYLINE)
paths.use_build_lib()
SQUID_USER = "nobody"


def log(msg: str) -> None:
    print(f"testbed: {msg}", file=sys.stderr, flush=True)


class Interrupted(Exception):
    pass


def _raise_interrupt(signum, frame):
    raise Interrupted(f"signal {signum}")


class Sampler:
    """Samples the bottleneck tbf every TC_INTERVAL_S (byte/drop counters and the
    backlog, whose /C is the ISP queue delay) and, for reqsched modes, the
    request_sched cache manager page every second, each in its own thread until
    stopped (a slow cache manager answer never delays the queue samples)."""
    TC_INTERVAL_S = 0.1
    MGR_INTERVAL_S = 1.0

    def __init__(self, topo: Topology, mode_dir: str, mgr: bool):
        self.topo, self.dir, self.mgr = topo, mode_dir, mgr
        self.halt = threading.Event()
        self.mgr_errors = 0
        self.threads = [threading.Thread(target=self.run_tc, daemon=True)]
        if mgr:
            self.threads.append(threading.Thread(target=self.run_mgr, daemon=True))

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def stop(self) -> None:
        self.halt.set()
        for t in self.threads:
            t.join(5)

    def run_tc(self) -> None:
        with open(os.path.join(self.dir, "tc.csv"), "w", encoding="utf-8") as tcf:
            tcf.write("t_epoch,bytes,packets,drops,backlog,qlen\n")
            nxt = time.monotonic()
            while not self.halt.is_set():
                t = time.time()
                q = self.topo.tc_stats()
                if q:
                    tcf.write(f"{t:.3f},{q.get('bytes', 0)},{q.get('packets', 0)},"
                              f"{q.get('drops', 0)},{q.get('backlog', 0)},{q.get('qlen', 0)}\n")
                nxt += self.TC_INTERVAL_S
                self.halt.wait(max(0.0, nxt - time.monotonic()))
            tcf.flush()

    def run_mgr(self) -> None:
        from .mgrpage import parse_mgr_proxy
        with open(os.path.join(self.dir, "mgr.jsonl"), "w", encoding="utf-8") as mf:
            while not self.halt.is_set():
                t = time.time()
                page = self.fetch_mgr()
                if page is not None:
                    d = parse_mgr_proxy(page)
                    d["t_epoch"] = t
                    mf.write(json.dumps(d) + "\n")
                    mf.flush()
                self.halt.wait(max(0.0, self.MGR_INTERVAL_S - (time.time() - t)))

    def fetch_mgr(self) -> Optional[str]:
        argv = self.topo.exec_argv("gw", ["curl", "-s", "-m", "2", "-f",
                                          "http://127.0.0.1:3128/squid-internal-mgr/request_sched"])
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0:
            self.mgr_errors += 1
            return None
        return p.stdout


def rejects(parse_output: str, directive: str) -> bool:
    """Whether `squid -k parse` output rejects a directive: a line naming it that
    is an error ("unrecognized: 'X'", "Bungled ... X", FATAL/ERROR), not Squid's
    "Processing: X ..." echo of every line."""
    for ln in parse_output.splitlines():
        if directive not in ln or "Processing:" in ln:
            continue
        low = ln.lower()
        if any(w in low for w in ("unrecognized", "unknown", "bungled", "fatal", "error")):
            return True
    return False


class Runner:
    def __init__(self, sc: Scenario, out: str, run_id: str, squid: Optional[str],
                 verbose: bool = False):
        self.sc, self.out, self.id = sc, out, run_id
        self.topo = Topology(run_id)
        self.procs: list[subprocess.Popen] = []
        self.delay_line: Optional[subprocess.Popen] = None
        self.verbose = verbose
        self.patched = os.path.exists(PATCHED_SQUID) and os.access(PATCHED_SQUID, os.X_OK)
        self.squid = squid or (PATCHED_SQUID if self.patched else None)
        if squid:
            self.patched = self.squid_has_reqsched(squid)
        # byte-layer directives this Squid knows (squidconf.BYTE_LAYER_DIRECTIVES,
        # WINDOW_FILE_DIRECTIVE)
        self.known: frozenset[str] = (self.probe_directives(self.squid) if self.squid
                                      and self.patched else frozenset())
        self.servers = [netns.server_addr(i) for i in range(sc.server_count)]
        self.users: list[dict] = []
        self.entries: Optional[list[tuple[str, int]]] = None

    @staticmethod
    def squid_has_reqsched(path: str) -> bool:
        """A squid binary knows request_scheduler iff -k parse accepts it."""
        conf = f"/tmp/reqsched-probe-{os.getpid()}.conf"
        with open(conf, "w", encoding="utf-8") as f:
            f.write("http_port 127.0.0.1:1\nrequest_scheduler off\n")
        p = subprocess.run([path, "-k", "parse", "-f", conf], capture_output=True, text=True)
        os.unlink(conf)
        return p.returncode == 0 and not rejects(p.stderr + p.stdout, "request_scheduler")

    @staticmethod
    def probe_directives(path: str) -> frozenset[str]:
        """The byte-layer directives (request_sched_pacing, ..._link_counter) and
        request_sched_window_file that `squid -k parse` accepts: each is tried
        alone after request_scheduler off."""
        known = set()
        for d, value in (("request_sched_pacing", "off"), ("request_sched_link_counter", "none"),
                         (squidconf.WINDOW_FILE_DIRECTIVE, "none")):
            conf = f"/tmp/reqsched-probe-{os.getpid()}.conf"
            with open(conf, "w", encoding="utf-8") as f:
                f.write(f"http_port 127.0.0.1:1\nrequest_scheduler off\n{d} {value}\n")
            p = subprocess.run([path, "-k", "parse", "-f", conf], capture_output=True, text=True)
            os.unlink(conf)
            if p.returncode == 0 and not rejects(p.stderr + p.stdout, d):
                known.add(d)
        return frozenset(known)

    def check_conf(self, mode: ModeSpec, conf: str) -> None:
        """`squid -k parse` the generated config in the gateway namespace (where
        wan0 exists). A byte-layer directive the Squid does not know is named
        ("this Squid has no request_sched_pacing"), so a pacing mode never runs
        silently as something else."""
        assert self.squid is not None
        p = subprocess.run(self.topo.exec_argv("gw", [self.squid, "-k", "parse", "-f", conf]),
                           capture_output=True, text=True)
        out = p.stderr + p.stdout
        missing = [d for d in squidconf.BYTE_LAYER_DIRECTIVES if rejects(out, d)]
        if mode.needs_pacing_squid:
            missing += [d for d in squidconf.BYTE_LAYER_DIRECTIVES
                        if d not in self.known and d not in missing]
        if missing:
            raise RuntimeError(
                f"this Squid has no {missing[0]} ({self.squid}): mode {mode.name} needs the "
                f"byte layer (request_sched_pacing, request_sched_link_counter); run "
                f"{mode.name}/nopacing for admission only, or build a Squid with the pacing "
                f"and link counter patches (merge main, make squid)")
        bad = [ln for ln in out.splitlines() if "FATAL" in ln or "Bungled" in ln]
        if p.returncode != 0 or bad:
            raise RuntimeError(f"squid -k parse rejects {conf} for mode {mode.name}: "
                               + " | ".join(bad[:3] or out.strip().splitlines()[-3:]))

    # -- preparation -----------------------------------------------------------
    def prepare(self) -> None:
        os.makedirs(self.out, exist_ok=True)
        sc = self.sc
        rng = random.Random(sc.seed)
        for ci, c in enumerate(sc.classes):
            for u in range(c.users):
                self.users.append({"id": f"{c.name}-{u + 1}", "class": c.name,
                                   "addr": netns.user_addr(ci, u), "pattern": c.pattern,
                                   "parallel": c.parallel, "think_s": c.think_s,
                                   "phases": [list(p) for p in c.phases],
                                   "sizes": class_sizes(c), "tunnel": c.tunnel,
                                   "requests_per_tunnel": c.requests_per_tunnel})
        with open(os.path.join(self.out, "users.json"), "w", encoding="utf-8") as f:
            json.dump({"users": self.users}, f, indent=1)
        servers = {}
        for s in self.servers:
            lo, hi = sc.server_rate_bps
            servers[s] = {"delay_ms": list(sc.server_delay_ms),
                          "rate_bps": round(rng.uniform(lo, hi)) if hi > 0 else 0}
        with open(os.path.join(self.out, "servers.json"), "w", encoding="utf-8") as f:
            json.dump(servers, f, indent=1)
        if sc.replay_log or sc.replay_urls:
            from .logparse import ParseStats
            from .replay import load_entries, write_size_map
            stats = ParseStats()
            self.entries = load_entries(self.resolve(sc.replay_log), self.resolve(sc.replay_urls),
                                        self.servers, stats)
            assert self.entries is not None        # load_entries() raises without URLs
            write_size_map(self.entries, os.path.join(self.out, "sizes.map"))
            log(f"replay log: {stats.parsed} URLs, {stats.skipped} malformed lines skipped")
        if sc.replay_access_log:
            with open(os.path.join(self.out, "clients.map"), "w", encoding="utf-8") as f:
                f.write(client_map(sc))
        with open(os.path.join(self.out, "scenario.json"), "w", encoding="utf-8") as f:
            json.dump(sc.to_json(), f, indent=1, default=str)

    def resolve(self, p: Optional[str]) -> Optional[str]:
        return self.input_path(p) if p else p

    def input_path(self, p: str) -> str:
        """A scenario's input file: absolute, or found next to the scenario file,
        in the checkout or in the working directory."""
        if os.path.isabs(p):
            return p
        for base in (os.path.dirname(self.sc.source or "."), TOP, os.getcwd()):
            if os.path.exists(os.path.join(base, p)):
                return os.path.join(base, p)
        raise scenario.ScenarioError(f"replay input {p!r} not found")

    def setup_network(self) -> dict:
        sc = self.sc
        self.topo.setup([c.users for c in sc.classes], sc.server_count, sc.downlink_bps,
                        sc.uplink_bps, sc.buffer_ms, sc.proxy_initrwnd)
        shaping = self.topo.shape(sc.downlink_bps, sc.uplink_bps, sc.buffer_ms)
        if sc.propagation_rtt_ms > 0:
            self.start_delay_line(sc.propagation_rtt_ms)
            shaping["propagation_rtt_ms"] = sc.propagation_rtt_ms
        return shaping

    def start_delay_line(self, rtt_ms: float) -> None:
        """Every packet the ISP forwards waits rtt_ms / 2 (reqsched-delayline
        behind an NFQUEUE rule; up to every mode's end)."""
        if not os.access(DELAYLINE, os.X_OK):
            raise netns.NetError(f"{DELAYLINE} is missing (run `make loadgen`)")
        p = self.spawn("isp", [DELAYLINE, "--queue", "0", "--delay-ms", f"{rtt_ms / 2:g}"],
                       os.path.join(self.out, "delayline.log"))
        self.topo.queue_forwarded("isp", 0)
        self.delay_line = p
        time.sleep(0.2)
        self.check_delay_line()

    def check_delay_line(self) -> None:
        """A delay line that exited lets packets pass undelayed (--queue-bypass):
        whatever ran since is not the scenario."""
        if self.delay_line is not None and self.delay_line.poll() is not None:
            raise netns.NetError(f"reqsched-delayline exited; see {self.out}/delayline.log")

    # -- processes -------------------------------------------------------------
    def spawn(self, role: str, argv: list[str], logfile: str) -> subprocess.Popen:
        f = open(logfile, "w", encoding="utf-8")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        p = subprocess.Popen(self.topo.exec_argv(role, argv), stdout=f, stderr=subprocess.STDOUT,
                             env=env, start_new_session=True)
        self.procs.append(p)
        return p

    def stop(self, p: subprocess.Popen, sig: int = signal.SIGTERM, wait: float = 5.0) -> None:
        if p.poll() is None:
            try:
                p.send_signal(sig)
                p.wait(wait)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(2)
        if p in self.procs:
            self.procs.remove(p)

    def stop_all(self) -> None:
        for p in list(self.procs):
            self.stop(p, wait=3.0)

    def wait_proxy(self, timeout: float = 30.0) -> bool:
        """The proxy answers a tiny request through the whole path."""
        url = f"http://{self.servers[0]}/ready?size=1"
        argv = self.topo.exec_argv("cli", ["curl", "-s", "-o", "/dev/null", "-m", "3",
                                           "-w", "%{http_code}", "-x", "10.10.0.1:3128", url])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            p = subprocess.run(argv, capture_output=True, text=True)
            if p.stdout.strip() == "200":
                return True
            time.sleep(0.5)
        return False

    @staticmethod
    def cpu_seconds(pid: int) -> Optional[float]:
        """User + system CPU seconds of pid and the processes below it (an
        SMP master's kids), None when pid is gone."""
        return monitor.tree_cpu_seconds(Path("/proc"), pid, os.sysconf("SC_CLK_TCK"))

    # -- one mode --------------------------------------------------------------
    def start_origin(self, mdir: str, duration: float) -> subprocess.Popen:
        sc = self.sc
        if sc.site:
            o = sc.site.origin
            return self.spawn("srv", [
                sys.executable, "-m", "reqsched_tools.siteorigin", "--listen", "0.0.0.0:80",
                "--cpu-quota", str(o.cpu_quota), "--cgi-workers", str(o.cgi_workers),
                "--cgi-cpu-ms", str(o.cgi_cpu_ms), "--cgi-bytes", str(o.cgi_bytes),
                "--disk-Bps", str(o.disk_Bps), "--photo-bytes", str(o.photo_bytes),
                "--media-bytes", str(o.media_bytes), "--max-clients", str(o.max_clients),
                "--queue-timeout", str(o.queue_timeout),
                "--log", os.path.join(mdir, "site.log"), "--max-runtime", str(duration + 600)],
                os.path.join(mdir, "origin.log"))
        origin = [sys.executable, "-m", "reqsched_tools.origin", "--listen", "0.0.0.0:80",
                  "--listen", f"0.0.0.0:{squidconf.TUNNEL_PORT}",
                  "--server-config", os.path.join(self.out, "servers.json"),
                  "--seed", str(sc.seed), "--mu", str(sc.size_mu), "--sigma", str(sc.size_sigma),
                  "--max-runtime", str(duration + 600)]
        if self.entries:
            origin += ["--size-map", os.path.join(self.out, "sizes.map")]
        return self.spawn("srv", origin, os.path.join(mdir, "origin.log"))

    def start_squid(self, conf: str, mdir: str, suffix: str = "") -> subprocess.Popen:
        # -n: Squid names its /dev/shm segments after the service name, and /dev/shm
        # is shared by every namespace: a per-run name keeps parallel runs apart
        assert self.squid is not None
        # SMP workers need daemon mode: the master stays in the foreground
        # (--foreground) so that it is ours to stop, its kids serve
        mode = ["-N"]
        if self.sc.proxy_workers > 1:
            paths.squid_state_dir(Path(self.squid), SQUID_USER)
            mode = ["--foreground"]
        return self.spawn("gw", [self.squid, *mode, "-n", self.id.replace("-", ""), "-f", conf],
                          os.path.join(mdir, f"squid{suffix}.out"))

    def replay_argv(self, users_file: str, out: str, duration: float,
                    seed: Optional[int] = None) -> list[str]:
        sc = self.sc
        argv = [sys.executable, "-m", "reqsched_tools.replay", "--users-file", users_file,
                "--proxy", f"{netns.GW_LAN}:{netns.PROXY_PORT}",
                "--servers", ",".join(self.servers), "--mu", str(sc.size_mu),
                "--sigma", str(sc.size_sigma), "--duration", str(duration),
                "--seed", str(sc.seed if seed is None else seed), "--out", out, "--bin-s", "1"]
        if sc.replay_log:
            argv += ["--access-log", self.input_path(sc.replay_log)]
        elif sc.replay_urls:
            argv += ["--url-list", self.input_path(sc.replay_urls)]
        return argv

    def probe_site(self) -> None:
        """[site] page_table = "prober": before the modes, reqsched-prober crawls the
        origin from the gateway's namespace through the link, one request at a
        time, reading the origin's own counters (GET /counters), with the known
        capacities, as an administrator would; the page probed for each kind then
        stands for its kind (/cgi/1 -> /cgi/*). RUN/probe/ holds the prober's own
        table (prober.table) and the origin's log; RUN/site.table is what Squid loads."""
        sc = self.sc
        assert sc.site is not None
        o = sc.site.origin
        mdir = os.path.join(self.out, "probe")
        os.makedirs(mdir, exist_ok=True)
        raw = os.path.join(mdir, "prober.table")
        site = f"http://{netns.server_addr(0)}"
        op = self.start_origin(mdir, 60)
        try:
            up = self.topo.exec_argv("gw", ["curl", "-s", "-f", "-o", "/dev/null", "-m", "2",
                                            f"{site}/counters"])
            deadline = time.monotonic() + 20
            while subprocess.run(up).returncode != 0:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the origin did not come up; see {mdir}/origin.log")
                time.sleep(0.3)
            p = subprocess.run(self.topo.exec_argv("gw", [
                sys.executable, "-m", "reqsched_tools.prober", "--site", site + "/",
                "--monitor", site, "--capacity",
                f"cpu={o.cpu_quota:g},disk={o.disk_Bps:g},bw={sc.payload_bps / 8:g}",
                "--out", raw]), capture_output=True, text=True, timeout=120)
            if p.returncode != 0:
                raise RuntimeError(f"reqsched-prober failed: {p.stderr.strip()[-300:]}")
            log(p.stderr.strip())
        finally:
            self.stop(op)
        capacity, rows = prober.read_table(Path(raw))
        prober.write_table(Path(self.out, "site.table"), capacity, siteorigin.kind_patterns(rows))
        log("probed page table: " + "; ".join(
            ln for ln in Path(self.out, "site.table").read_text().splitlines()
            if ln.startswith("/")))

    def site_load_argv(self, out: str, duration: float) -> list[str]:
        """reqsched-siteload: each class's open load on the accelerator port."""
        sc = self.sc
        assert sc.site is not None
        argv = [sys.executable, "-m", "reqsched_tools.siteload",
                "--gateway", f"{netns.GW_LAN}:{squidconf.SITE_PORT}", "--host", squidconf.SITE_NAME,
                "--mix", ",".join(f"{k}={v:g}" for k, v in sc.site.mix.items()),
                "--patience", str(sc.site.patience_s), "--duration", str(duration),
                "--seed", str(sc.seed), "--out", out]
        for ci, c in enumerate(sc.classes):
            argv += ["--class", f"{c.name}:{netns.user_addr(ci, 0)}-{c.users}:{sc.site.rate:g}"]
        return argv

    def load_argv(self, out: str, duration: float) -> list[str]:
        """reqsched-load replay of the scenario's [replay] access log."""
        sc = self.sc
        last = sc.classes[-1]
        assert sc.replay_access_log is not None
        argv = [sys.executable, "-m", "reqsched_tools.load", "replay",
                self.input_path(sc.replay_access_log),
                "--proxy", f"{netns.GW_LAN}:{netns.PROXY_PORT}",
                "--servers", ",".join(self.servers), "--tunnel-port", str(squidconf.TUNNEL_PORT),
                "--client-map", os.path.join(self.out, "clients.map"),
                "--default-class", last.name,
                "--default-addrs", f"{netns.user_addr(len(sc.classes) - 1, 0)}-{last.users}",
                "--time-scale", str(sc.replay_time_scale), "--duration", str(duration),
                "--max-conns", str(sc.replay_max_conns), "--out", out]
        return argv + (["--closed-loop"] if sc.replay_closed_loop else [])

    def run_replay(self, argv: list[str], tag: str, logpath: str, duration: float) -> int:
        rp = subprocess.Popen(self.topo.exec_argv("cli", argv), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              env=dict(os.environ, PYTHONUNBUFFERED="1"),
                              start_new_session=True)
        self.procs.append(rp)
        with open(logpath, "w", encoding="utf-8") as rl:
            assert rp.stdout is not None
            for line in rp.stdout:
                rl.write(line)
                print(f"  [{tag}] {line.rstrip()}", file=sys.stderr, flush=True)
        rp.wait(duration + 120)
        self.procs.remove(rp)
        return rp.returncode

    def idle_probe(self) -> Optional[dict]:
        """The idle-link reference: one user of the first think-time class (else the
        first class) fetches its objects one at a time (think 0.05 s) through stock
        Squid with no other load, for idle_probe_s. Written to RUN/idle/."""
        sc = self.sc
        if sc.idle_probe_s <= 0:
            return None
        ci = next((i for i, c in enumerate(sc.classes) if c.pattern == "think"), 0)
        c = sc.classes[ci]
        mdir = os.path.join(self.out, "idle")
        if os.path.isdir(mdir):
            shutil.rmtree(mdir)
        os.makedirs(mdir)
        pw = pwd.getpwnam(SQUID_USER)
        os.chown(mdir, pw.pw_uid, pw.pw_gid)
        users = [{"id": f"idle-{c.name}", "class": c.name, "addr": netns.user_addr(ci, 0),
                  "pattern": "think", "parallel": 1, "think_s": 0.05,
                  "phases": [[0, sc.idle_probe_s]], "sizes": class_sizes(c),
                  "tunnel": c.tunnel, "requests_per_tunnel": c.requests_per_tunnel}]
        uf = os.path.join(mdir, "users.json")
        with open(uf, "w", encoding="utf-8") as f:
            json.dump({"users": users}, f, indent=1)
        stock = ModeSpec(name="stock", kind="stock")
        conf = squidconf.write(sc, stock, mdir, SQUID_USER, self.patched, self.known)
        log(f"idle-link reference: {c.name}'s objects, one at a time, {sc.idle_probe_s:.0f}s")
        op = self.start_origin(mdir, sc.idle_probe_s)
        sq = self.start_squid(conf, mdir)
        try:
            if not self.wait_proxy():
                raise RuntimeError(f"squid did not come up; see {mdir}/cache.log")
            time.sleep(0.5)
            sampler = Sampler(self.topo, mdir, False)
            sampler.start()
            rc = self.run_replay(self.replay_argv(uf, mdir, sc.idle_probe_s, seed=sc.seed + 1000),
                                 "idle", os.path.join(mdir, "replay.log"), sc.idle_probe_s)
            sampler.stop()
            if rc != 0:
                raise RuntimeError(f"idle replay exited with {rc}; see {mdir}/replay.log")
        finally:
            self.stop(sq, signal.SIGTERM, 10.0)
            self.stop(op)
        time.sleep(1.0)
        return {"class": c.name}

    def restart_squid(self, holder: dict, conf: str, mdir: str, t_replay0: float,
                      info: dict) -> None:
        """At restart_at_s of the replay: stop Squid (SIGTERM, shutdown_lifetime 1 s)
        and start it again with the same configuration; record the epochs."""
        delay = t_replay0 + self.sc.restart_at_s - time.time()
        if holder["halt"].wait(max(0.0, delay)):
            return
        old = holder["sq"]
        info["restart_stop_epoch"] = time.time()
        holder["cpu_before"] = (self.cpu_seconds(old.pid) or 0.0) - holder["cpu0"]
        self.stop(old, signal.SIGTERM, 15.0)
        info["restart_stopped_epoch"] = time.time()
        holder["sq"] = self.start_squid(conf, mdir, ".restart")
        info["restart_start_epoch"] = time.time()
        if self.wait_proxy(30.0):
            info["restart_ready_epoch"] = time.time()
        holder["cpu0"] = 0.0
        log(f"squid restarted: down {info['restart_start_epoch'] - info['restart_stop_epoch']:.1f}s"
            f", answering again after "
            f"{info.get('restart_ready_epoch', float('nan')) - info['restart_start_epoch']:.1f}s")

    def run_mode(self, mode: ModeSpec, duration: float) -> dict:
        sc = self.sc
        mdir = os.path.join(self.out, safe_name(mode.name))
        if os.path.isdir(mdir):
            shutil.rmtree(mdir)
        os.makedirs(mdir)
        pw = pwd.getpwnam(SQUID_USER)
        os.chown(mdir, pw.pw_uid, pw.pw_gid)
        info: dict = {"mode": mode.name, "kind": mode.kind, "squid": self.squid,
                      "duration_s": duration, "pacing": mode.kind == "reqsched" and mode.pacing,
                      "squid_directives": sorted(self.known)}
        if sc.site and sc.site.page_table == "prober":
            shutil.copyfile(os.path.join(self.out, "site.table"), os.path.join(mdir, "site.table"))
        conf = squidconf.write(sc, mode, mdir, SQUID_USER, self.patched, self.known)
        if mode.kind == "reqsched":
            self.check_conf(mode, conf)
        op = self.start_origin(mdir, duration)
        if mode.kind == "htb":
            self.topo.htb_on(0.95 * sc.downlink_bps, [c.weight for c in sc.classes])
        holder: dict[str, Any] = {"sq": self.start_squid(conf, mdir), "halt": threading.Event(),
                                  "cpu0": 0.0, "cpu_before": 0.0}
        restarter = None
        try:
            if not self.wait_proxy():
                raise RuntimeError(f"squid did not come up; see {mdir}/cache.log and squid.out")
            time.sleep(0.5)
            holder["cpu0"] = self.cpu_seconds(holder["sq"].pid) or 0.0
            sampler = Sampler(self.topo, mdir, mode.kind == "reqsched")
            sampler.start()
            cross = []
            if sc.cross_rate_bps > 0:
                cross.append(self.spawn("cli", [sys.executable, "-m", "reqsched_tools.cbr", "sink",
                                                "--bind", f"{netns.CROSS_SINK}:9",
                                                "--duration", str(duration + 5)],
                                        os.path.join(mdir, "cbr-sink.log")))
                cross.append(self.spawn("srv", [
                    sys.executable, "-m", "reqsched_tools.cbr", "send", "--src", netns.CROSS_SOURCE,
                    "--dst", f"{netns.CROSS_SINK}:9", "--rate-bps", str(sc.cross_rate_bps),
                    "--period-s", str(sc.cross_period_s), "--start-s", str(sc.cross_start_s),
                    "--duration", str(duration), "--log", os.path.join(mdir, "cbr.log")],
                    os.path.join(mdir, "cbr-send.out")))
            if sc.restart_at_s > 0:
                restarter = threading.Thread(target=self.restart_squid, daemon=True,
                                             args=(holder, conf, mdir, time.time(), info))
                restarter.start()
            if sc.site:
                argv = self.site_load_argv(mdir, duration)
            elif sc.replay_access_log:
                argv = self.load_argv(mdir, duration)
            else:
                argv = self.replay_argv(os.path.join(self.out, "users.json"), mdir, duration)
            rc = self.run_replay(argv, mode.name, os.path.join(mdir, "replay.log"), duration)
            self.check_delay_line()
            holder["halt"].set()
            if restarter is not None:
                restarter.join(60)
            cpu1 = self.cpu_seconds(holder["sq"].pid)
            sampler.stop()
            info["squid_cpu_s"] = (round(holder["cpu_before"] + cpu1 - holder["cpu0"], 3)
                                   if cpu1 is not None else None)
            info["replay_rc"] = rc
            info["mgr_fetch_errors"] = sampler.mgr_errors
            for p in cross:
                self.stop(p)
            if rc not in (0,):
                raise RuntimeError(f"replay exited with {rc}; see {mdir}/replay.log")
        finally:
            holder["halt"].set()
            if restarter is not None:
                restarter.join(60)
            self.stop(holder["sq"], signal.SIGTERM, 10.0)
            self.stop(op)
            if mode.kind == "htb":
                self.topo.htb_off()
        with open(os.path.join(mdir, "run.json"), "w", encoding="utf-8") as f:
            json.dump(info, f, indent=1)
        return info


def client_map(sc: Scenario) -> str:
    """The client map of a [replay] scenario (logreplay.py): each class's log
    clients replay from its users' addresses 10.10.(class+1).1-users."""
    lines = []
    for ci, c in enumerate(sc.classes):
        for match in c.clients:
            lines.append(f"{match} {c.name} {netns.user_addr(ci, 0)}-{c.users}\n")
    return "".join(lines)


def class_sizes(c: scenario.ClassSpec) -> Optional[dict]:
    """A class's own size distribution for users.json (None: the scenario's [sizes])."""
    if c.size_uniform:
        return {"uniform": list(c.size_uniform), "max": c.size_max}
    if c.size_mu is not None:
        return {"mu": c.size_mu, "sigma": c.size_sigma, "max": c.size_max}
    if c.size_max < 100_000_000:
        return {"max": c.size_max}
    return None


def safe_name(mode: str) -> str:
    return re.sub(r"[^A-Za-z0-9+._-]", "_", mode)


def new_run_id() -> str:
    return "rs" + "".join(random.choice("0123456789abcdef") for _ in range(5))


def apply_overrides(sc: Scenario, args: argparse.Namespace) -> None:
    """--modes, --time-scale, --update-interval, --duration, --warmup, --buffer-ms,
    --proxy-initrwnd, --proxy-workers, --propagation-rtt-ms."""
    if args.modes:
        sc.modes = [scenario.parse_mode(m, sc.reqsched_window, sc.reqsched_target_utilization)
                    for m in args.modes.split(",") if m.strip()]
    if args.time_scale:
        f = args.time_scale
        if not 0.01 <= f <= 100:
            raise scenario.ScenarioError("--time-scale must be in [0.01, 100]")
        sc.duration_s *= f
        sc.warmup_s *= f
        sc.cross_period_s *= f
        sc.cross_start_s *= f
        sc.restart_at_s *= f
        sc.timeline_bin_s = max(1.0, round(sc.timeline_bin_s * f))
        for c in sc.classes:
            c.phases = [(a * f, b * f) for a, b in c.phases]
    if args.update_interval:
        sc.reqsched_update_interval_s = args.update_interval
    if args.duration:
        if sc.restart_at_s:
            sc.restart_at_s = sc.restart_at_s * args.duration / sc.duration_s
        sc.warmup_s = min(sc.warmup_s, args.duration / 4)
        sc.duration_s = args.duration
        for c in sc.classes:
            c.phases = [(min(a, args.duration), min(b, args.duration)) for a, b in c.phases]
    if args.warmup is not None:
        if not 0 <= args.warmup < sc.duration_s:
            raise scenario.ScenarioError("--warmup must be in [0, duration)")
        sc.warmup_s = args.warmup
    if args.buffer_ms is not None:
        if not 1 <= args.buffer_ms <= 10_000:
            raise scenario.ScenarioError("--buffer-ms must be in [1, 10000]")
        sc.buffer_ms = args.buffer_ms
    if args.proxy_initrwnd is not None:
        sc.proxy_initrwnd = scenario.initrwnd_of({"proxy_initrwnd": args.proxy_initrwnd})
    if args.proxy_workers is not None:
        sc.proxy_workers = scenario.workers_of({"workers": args.proxy_workers})
    if args.propagation_rtt_ms is not None:
        sc.propagation_rtt_ms = scenario.propagation_of(
            {"propagation_rtt_ms": args.propagation_rtt_ms})


def select_points(points: list[Scenario], args: argparse.Namespace) -> list[Scenario]:
    """--sweep-values a,b keeps those points of a sweep; --buffer-ms replaces a buffer sweep."""
    if args.buffer_ms is not None and points[0].sweep_key == "link.buffer_ms":
        points = points[:1]
        points[0].sweep_label = ""
    if args.sweep_values:
        want = {v.strip() for v in args.sweep_values.split(",") if v.strip()}
        keep = [p for p in points if p.sweep_label.rsplit("-", 1)[-1] in want]
        if not keep:
            raise scenario.ScenarioError(
                f"--sweep-values {args.sweep_values}: the sweep has "
                f"{', '.join(p.sweep_label for p in points) or 'no points'}")
        points = keep
    return points


def run_point(sc: Scenario, out: str, run_id: str, args: argparse.Namespace) -> int:
    """One scenario (one point of a sweep) in every mode, then its report.
    Returns 0, 1 (a mode failed, or no mode ran) or 130 (interrupted)."""
    runner = Runner(sc, out, run_id, args.squid)
    old = {s: signal.signal(s, _raise_interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    results = {}
    rc = 0
    try:
        if runner.squid is None:
            log(f"no Squid: {PATCHED_SQUID} is missing (run `make squid`) and no --squid given")
            return 2
        log(f"run {run_id}: scenario {sc.name}{' ' + sc.sweep_label if sc.sweep_label else ''}, "
            f"{len(sc.modes)} modes x {sc.duration_s:.0f}s, buffer {sc.buffer_ms:g} ms, "
            f"proxy initrwnd {sc.proxy_initrwnd or 'kernel default'}, "
            f"propagation RTT {sc.propagation_rtt_ms:g} ms, "
            f"{sc.proxy_workers} worker{'s' if sc.proxy_workers > 1 else ''}, "
            f"squid {runner.squid}{'' if runner.patched else ' (no request_scheduler)'}"
            f" (byte layer: {', '.join(sorted(runner.known)) or 'none'}) -> {out}")
        runner.prepare()
        shaping = runner.setup_network()
        with open(os.path.join(out, "network.json"), "w", encoding="utf-8") as f:
            json.dump({"run_id": run_id, "namespaces": runner.topo.ns, "shaping": shaping}, f,
                      indent=1)
        skipped = []
        if sc.site and sc.site.page_table == "prober":
            try:
                runner.probe_site()
            except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as e:
                log(f"probing the site failed: {e}")
                skipped.append({"mode": "probe", "reason": f"probing the site failed: {e}"})
                rc = 1
        try:
            runner.idle_probe()
        except (RuntimeError, OSError, netns.NetError) as e:
            log(f"idle-link reference failed: {e}")
            skipped.append({"mode": "idle", "reason": f"idle-link reference failed: {e}"})
            rc = 1
        for i, mode in enumerate(sc.modes):
            if mode.needs_patched_squid and not runner.patched:
                msg = (f"mode {mode.name} skipped: needs the patched Squid ({PATCHED_SQUID} "
                       f"with request_scheduler; run `make squid`)")
                log(msg)
                skipped.append({"mode": mode.name, "reason": msg})
                continue
            log(f"mode {i + 1}/{len(sc.modes)}: {mode.name} for {sc.duration_s:.0f}s")
            try:
                results[mode.name] = runner.run_mode(mode, sc.duration_s)
            except (RuntimeError, OSError, netns.NetError) as e:
                log(f"mode {mode.name} failed: {e}")
                skipped.append({"mode": mode.name, "reason": f"failed: {e}"})
                rc = 1
            time.sleep(2.0)      # let the bottleneck queue drain between modes
        with open(os.path.join(out, "skipped.json"), "w", encoding="utf-8") as f:
            json.dump(skipped, f, indent=1)
    except Interrupted as e:
        log(f"interrupted ({e}); tearing down")
        rc = 130
    except (netns.NetError, OSError, scenario.ScenarioError) as e:
        log(f"error: {e}")
        rc = 1
    finally:
        runner.stop_all()
        runner.topo.teardown()
        for s, h in old.items():
            signal.signal(s, h)
    if rc == 130:
        return rc
    if not results:
        log("no mode ran; nothing to report")
        return rc or 1
    from . import report
    try:
        report.make_report(out, json_out=None, plots=not args.no_plots)
    except Exception as e:  # the raw data stays in the run directory either way
        log(f"report failed: {e!r}; raw data in {out}")
        return 1
    log(f"results in {out}")
    return rc


def cmd_run(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        log("needs root (network namespaces, tc)")
        return 2
    try:
        points = scenario.load_sweep(args.scenario, args.spec)
        points = select_points(points, args)
        for sc in points:
            apply_overrides(sc, args)
    except scenario.ScenarioError as e:
        log(f"bad scenario: {e}")
        return 2
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    name = points[0].name
    out = os.path.abspath(args.out or os.path.join(TOP, "results", f"{name}-{stamp}"))
    run_id = args.id or new_run_id()
    if len(points) == 1 and not points[0].sweep_label:
        rc = run_point(points[0], out, run_id, args)
        if rc in (0, 1) and args.json and os.path.exists(os.path.join(out, "report.json")):
            shutil.copyfile(os.path.join(out, "report.json"), args.json)
        return rc
    rc = 0
    done = []
    for k, sc in enumerate(points):
        log(f"sweep point {k + 1}/{len(points)}: {sc.sweep_label}")
        sub = os.path.join(out, sc.sweep_label)
        r = run_point(sc, sub, run_id, args)
        if r == 130 or r == 2:
            return r
        rc = rc or r
        if os.path.exists(os.path.join(sub, "report.json")):
            done.append(sub)
    if not done:
        return rc or 1
    from . import report
    report.sweep_summary(out, done, json_out=args.json)
    log(f"sweep results in {out}")
    return rc


def cmd_setup(args: argparse.Namespace) -> int:
    sc = scenario.load(args.scenario)
    topo = Topology(args.id)
    topo.setup([c.users for c in sc.classes], sc.server_count, sc.downlink_bps, sc.uplink_bps,
               sc.buffer_ms, sc.proxy_initrwnd)
    log(f"namespaces up: {' '.join(topo.ns.values())} (teardown: reqsched-testbed teardown "
        f"--id {args.id})")
    if sc.propagation_rtt_ms > 0:
        # the delay line is a process: setup leaves nothing running
        topo.queue_forwarded("isp", 0)
        log(f"the {sc.propagation_rtt_ms:g}-ms propagation delay needs its delay line: "
            f"ip netns exec {topo.ns['isp']} {DELAYLINE} --queue 0 "
            f"--delay-ms {sc.propagation_rtt_ms / 2:g} &")
    return 0


def cmd_teardown(args: argparse.Namespace) -> int:
    ids = set()
    if args.all:
        ids = {n.rsplit("-", 1)[0] for n in netns.existing_namespaces()
               if re.fullmatch(r"rs[0-9a-f]{5}-(cli|gw|isp|srv)", n)}
    if args.id:
        ids.add(args.id)
    for i in sorted(ids):
        Topology(i).teardown()
        log(f"removed {i}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    for f in sorted(os.listdir(scenario.SCENARIO_DIR)):
        if f.endswith((".toml", ".json")):
            sc = scenario.load(spec=os.path.join(scenario.SCENARIO_DIR, f))
            print(f"{os.path.splitext(f)[0]:20s} {sc.description}")
    up = [n for n in netns.existing_namespaces() if re.fullmatch(r"rs[0-9a-f]{5}-\w+", n)]
    if up:
        print("testbed namespaces up: " + " ".join(up))
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="reqsched-testbed", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a scenario in every mode and report")
    g = r.add_mutually_exclusive_group(required=True)
    g.add_argument("--scenario", help="name in reqsched_tools/scenarios/")
    g.add_argument("--spec", help="scenario file (TOML or JSON)")
    r.add_argument("--modes", help="comma-separated: stock,delay-pools,htb,msf,msf/nopacing,msf/keep,"
                                   "rfq,drr,msf+sff, POLICY[+sff][:WINDOW][@U][/nopacing|/keep]")
    r.add_argument("--duration", type=float, help="override duration_s (phases are clipped)")
    r.add_argument("--time-scale", type=float,
                   help="multiply every time of the scenario (duration, warm-up, phases, "
                        "cross-traffic periods) by this factor, e.g. 0.25")
    r.add_argument("--warmup", type=float, help="override warmup_s (not measured)")
    r.add_argument("--update-interval", type=int,
                   help="override reqsched.update_interval_s (seconds)")
    r.add_argument("--buffer-ms", type=float,
                   help="override the ISP buffer depth (ms at C; replaces a buffer sweep)")
    r.add_argument("--proxy-initrwnd", type=int, metavar="SEGMENTS",
                   help="override link.proxy_initrwnd: the initial receive window of the "
                        "proxy host's route to the servers (0 = the kernel's)")
    r.add_argument("--propagation-rtt-ms", type=float, metavar="MS",
                   help="override link.propagation_rtt_ms: a round-trip delay between the "
                        "gateway and the servers (0 = none)")
    r.add_argument("--proxy-workers", type=int, metavar="N",
                   help="override proxy.workers: Squid SMP workers (1 = one process, -N)")
    r.add_argument("--sweep-values",
                   help="run only these values of the scenario's [sweep], e.g. 250,1000")
    r.add_argument("--out", help="run directory (default results/<scenario>-<timestamp>; "
                                 "a sweep writes one sub-directory per value)")
    r.add_argument("--json", help="also write the report JSON here")
    r.add_argument("--squid", help="squid binary (default build/squid/sbin/squid)")
    r.add_argument("--id", help="run id / namespace prefix (default random rsXXXXX)")
    r.add_argument("--no-plots", action="store_true")
    s = sub.add_parser("setup", help="create the network only")
    s.add_argument("--id", required=True)
    s.add_argument("--scenario", default="field-trial")
    t = sub.add_parser("teardown", help="remove a run's namespaces and processes")
    t.add_argument("--id")
    t.add_argument("--all", action="store_true", help="every rsXXXXX testbed left over")
    sub.add_parser("list", help="scenarios and live testbeds")
    args = ap.parse_args(argv)
    try:
        return {"run": cmd_run, "setup": cmd_setup, "teardown": cmd_teardown,
                "list": cmd_list}[args.cmd](args)
    except scenario.ScenarioError as e:
        log(f"bad scenario: {e}")
        return 2
    except netns.NetError as e:
        log(str(e))
        return 1
