# SPDX-License-Identifier: GPL-2.0-or-later
"""Each client address in one SMP worker (patch 39, request_sched_smp_affinity).

With `http_port ... worker-queues` every worker listens on a socket of its
own in one SO_REUSEPORT group; by default the kernel spreads a client's
connections over the workers, so each worker counts the client as a user.
With request_sched_smp_affinity src (the default) the group runs a BPF
program that picks the socket by the source address only: every connection
of one address goes to one worker, and the workers' share table (patch 34,
test_smp.py) counts every user once.

Which worker served a request: each kid writes an access log of its own
(`kid${process_number}.log`)."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Set, Tuple

import pytest

import rsharness as h
from rsharness import http_get, sched_conf, wait_until
from reqsched_tools.localnet import free_port
from reqsched_tools.mgrpage import parse_mgr_kids
from test_pacing import Reader

ON_LINE = "connections from one client address go to one of the"
NO_QUEUES = "no http_port has worker-queues"

pytestmark = pytest.mark.skipif(not h.squid_supports("request_sched_smp_affinity"),
                                reason="this Squid has no request_sched_smp_affinity (patch 39)")


class QueuesSquid:
    """The patched Squid in daemon mode with `workers` workers and one more
    http_port (self.port) with worker-queues, if queues."""

    def __init__(self, squid_factory, workers: int, affinity: str, queues: bool = True,
                 classes=(("gold", 3), ("bronze", 1)), acls: str = "", access=(), more: str = ""):
        self.port = free_port()
        self.workers = workers
        self.listeners = workers * (2 if queues else 1)   # the shared port, the queues port
        self.steered = workers if queues and affinity == "src" else 0
        self.sq = squid_factory(start=False, acls=acls,
                                sched=sched_conf(policy="msf", classes=classes, access=access,
                                                 more=f"request_sched_smp_affinity {affinity}\n" + more))
        # (the kids' access logs are in the Squid's directory, known now)
        self.sq.extra = (f"workers {workers}\n"
                         + (f"http_port 127.0.0.1:{self.port} worker-queues\n" if queues else "")
                         + f"access_log stdio:{self.sq.dir}/kid${{process_number}}.log rstest\n")
        self.sq.write_config()
        self.daemon = h.DaemonSquid(self.sq)

    def __enter__(self) -> "QueuesSquid":
        self.daemon.start()
        # every worker listens on every port and has steered its socket
        wait_until(lambda: self.sq.cache_log().count("connections at conn") >= self.listeners and
                   self.sq.cache_log().count(ON_LINE) >= self.steered, 20,
                   what="every worker's listening sockets")
        wait_until(lambda: len(self.pages()) == self.workers, 20, what="every worker's report page")
        return self

    def __exit__(self, *exc: object) -> None:
        self.daemon.stop()

    def pages(self) -> Dict[int, Dict]:
        return {kid: p for kid, p in parse_mgr_kids(self.sq.mgr("request_sched")).items()
                if kid <= self.workers}

    def logged(self, urls: Set[str]) -> Dict[str, Tuple[str, int]]:
        """URL -> (client address, kid) for the URLs of urls the kids logged."""
        out: Dict[str, Tuple[str, int]] = {}
        for kid in range(1, self.workers + 1):
            log = Path(self.sq.dir) / f"kid{kid}.log"
            for ln in log.read_text().splitlines() if log.exists() else []:
                f = ln.split()
                if len(f) > 6 and f[6] in urls:
                    out[f[6]] = (f[2], kid)
        return out


SRCS = [f"127.0.0.{i}" for i in range(2, 10)]


def _many_connections(port: int, origin, tag: str, per_src: int) -> Set[str]:
    """per_src requests from every address of SRCS, each on a connection of
    its own, some at once; returns the URLs."""
    urls = [origin.url(f"/aff/{tag}/{src}/{i}", size=100) for src in SRCS for i in range(per_src)]
    jobs = [lambda u=u, s=s: http_get(port, u, src=s, timeout=30)
            for u, s in zip(urls, [src for src in SRCS for _ in range(per_src)])]
    res = h.run_parallel(jobs, 8)
    assert all(r.ok for r in res), [(r.src, r.status) for r in res if not r.ok][:4]
    return set(urls)


def _wait_logged(smp: QueuesSquid, urls: Set[str]) -> Dict[str, Set[int]]:
    """Client address -> the kids that logged its requests of urls, once
    every one of them is logged."""
    wait_until(lambda: len(smp.logged(urls)) == len(urls), 10, what="every request in the kids' access logs")
    by_src: Dict[str, Set[int]] = {}
    for src, kid in smp.logged(urls).values():
        by_src.setdefault(src, set()).add(kid)
    return by_src


@pytest.mark.parametrize("workers", [2, 4])
def test_each_address_is_served_by_one_worker(squid_factory, origin, workers):
    """8 client addresses, 12 connections each, on the worker-queues port:
    every address's requests are logged by one kid only, more than one kid
    serves, and each worker logged that it steers the port."""
    with QueuesSquid(squid_factory, workers, "src") as smp:
        urls = _many_connections(smp.port, origin, f"src{workers}", 12)
        by_src = _wait_logged(smp, urls)
        log = smp.sq.cache_log()
    print(f"{workers} workers, kids by address:", {s: sorted(k) for s, k in by_src.items()})
    assert all(len(kids) == 1 for kids in by_src.values()), by_src
    assert len(set().union(*by_src.values())) >= 2, by_src
    # one line per worker for the worker-queues port, none for the shared one
    assert log.count(ON_LINE) == workers, log[-2000:]


def test_without_affinity_an_address_reaches_several_workers(squid_factory, origin):
    """request_sched_smp_affinity none: the kernel's hash of both addresses
    and ports spreads one address's 12 connections over the 2 workers (the
    chance that all 12 of one address, let alone of all 8, land on one
    worker is 2^-11 per address); no steering line is logged."""
    with QueuesSquid(squid_factory, 2, "none") as smp:
        urls = _many_connections(smp.port, origin, "none", 12)
        by_src = _wait_logged(smp, urls)
        log = smp.sq.cache_log()
    print("kids by address:", {s: sorted(k) for s, k in by_src.items()})
    assert any(len(kids) == 2 for kids in by_src.values()), by_src
    assert ON_LINE not in log


# joins the port's SO_REUSEPORT group (the kernel groups only sockets of one
# uid: Squid opens its listening sockets as root), accepts nothing, leaves
# when stdin closes
GROUP_MEMBER = """
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
print("listening", flush=True)
sys.stdin.read()
"""


def test_reconfigure_to_none_takes_the_steering_off(squid_factory, origin):
    """src, then `squid -k reconfigure` with none. Each worker closes its
    socket and opens a new one; a group that some socket outlives (here a
    third member that accepts nothing, as a worker that has not closed yet
    would) keeps its program unless a worker detaches it. After the third
    member left, one address's connections spread over both workers again.
    (Without the third member the group dies with the workers' sockets,
    and the program with it, whether or not they detach.)"""
    with QueuesSquid(squid_factory, 2, "src") as smp:
        before = _wait_logged(smp, _many_connections(smp.port, origin, "before", 12))
        member = subprocess.Popen([sys.executable, "-c", GROUP_MEMBER, str(smp.port)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert member.stdout is not None and member.stdout.readline().strip() == "listening"
            smp.sq.sched = smp.sq.sched.replace("request_sched_smp_affinity src", "request_sched_smp_affinity none")
            smp.sq.write_config()
            assert smp.sq.reconfigure().returncode == 0
            wait_until(lambda: smp.sq.cache_log().count("connections at conn") >= 2 * smp.listeners, 20,
                       what="every worker listening again after the reconfigure")
            time.sleep(0.5)     # the workers' calls after listen()
        finally:
            member.communicate(timeout=10)
        after = _wait_logged(smp, _many_connections(smp.port, origin, "after", 12))
    print("before:", {s: sorted(k) for s, k in before.items()}, "after:", {s: sorted(k) for s, k in after.items()})
    assert all(len(kids) == 1 for kids in before.values()), before
    assert any(len(kids) == 2 for kids in after.values()), after


def test_warns_without_worker_queues(squid_factory):
    """workers 2, the scheduler on and no http_port with worker-queues: the
    workers share one listening queue and Squid says the shares are
    approximate (once per worker)."""
    with QueuesSquid(squid_factory, 2, "src", queues=False) as smp:
        log = smp.sq.cache_log()
    assert log.count(NO_QUEUES) == 2, log[-2000:]
    assert ON_LINE not in log


GOLD = "127.0.0.2"
BRONZE = ["127.0.0.3", "127.0.0.4", "127.0.0.5"]


def test_user_weights_hold_over_the_shared_port(squid_factory, origin):
    """One gold user (weight 3) with eight bulk downloads and three bronze
    users (weight 1) with one each, all on the one worker-queues port of 2
    workers with pacing at 16 Mbit/s: msf gives the gold user 3 bytes per
    byte of each bronze user over the whole proxy. Without the steering the
    gold user's downloads reach both workers (all eight on one: 2^-7), it
    counts as a user of weight 3 in each, and the shares give it 2/3 of the
    link, 6 bytes per bronze byte."""
    acls = f"acl gold_src src {GOLD}\nacl bronze_src src {' '.join(BRONZE)}\n"
    with QueuesSquid(squid_factory, 2, "src", acls=acls,
                     access=(("gold", "allow gold_src"), ("bronze", "allow bronze_src")),
                     more="request_sched_link 16 Mbit\nrequest_sched_window fixed 16\n"
                          "request_sched_pacing on\nrequest_sched_long_transfer 64 KB\n") as smp:
        readers = [Reader(smp.port, GOLD, url=origin.url(f"/aff-w/gold/{i}", size="200m")) for i in range(8)]
        readers += [Reader(smp.port, src, url=origin.url(f"/aff-w/{src}", size="200m")) for src in BRONZE]
        time.sleep(3.0)
        got0 = {r: r.got for r in readers}
        t0 = time.monotonic()
        time.sleep(6.0)
        got = {r: r.got - got0[r] for r in readers}
        dt = time.monotonic() - t0
        rows = smp.pages()[1]["workers"]
        for r in readers:
            r.stop()
    by_src: Dict[str, float] = {}
    for r, n in got.items():
        by_src[r.src] = by_src.get(r.src, 0) + n
    bronze_mean = sum(by_src[s] for s in BRONZE) / len(BRONZE)
    total_bps = sum(by_src.values()) * 8 / dt
    ratio = by_src[GOLD] / max(1, bronze_mean)
    print(f"bytes by address {by_src}, gold:bronze {ratio:.2f}, total {total_bps / 1e6:.2f} Mbit/s, "
          f"workers' rows {rows}")
    assert 2.4 <= ratio <= 3.6, by_src
    assert total_bps >= 0.75 * h.pace_rate_bps(16e6), total_bps
