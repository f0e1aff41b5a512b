# SPDX-License-Identifier: GPL-2.0-or-later
"""One schedule across SMP workers (issue 15, patch 34): every worker's
scheduler schedules a share of the link, computed every 250 ms from every
worker's users per class and use of the link (libreqsched share.c, Squid's
reqsched/LinkShares.cc), so the weights, the pacer's total rate and a fixed
window hold for the whole proxy, not per worker.

Each worker also listens on a port of its own (`if ${process_number} = N`),
so a test decides which worker serves which client; classes come from the
client's address, as in every other test."""
from __future__ import annotations

import os
import signal
import statistics
import threading
import time
from typing import Any, Dict, List, NamedTuple, Tuple

import pytest

import rsharness as h
from rsharness import http_get, sched_conf, wait_until
from reqsched_tools.localnet import free_port
from reqsched_tools.mgrpage import parse_mgr_kids
from test_pacing import Reader

GOLD_SRCS = ["127.0.0.2", "127.0.0.4"]
GOLD_SRC = GOLD_SRCS[0]
BRONZE_SRCS = ["127.0.0.3", "127.0.0.5", "127.0.0.6"]
LINK_BPS = 16e6
R_BPS = h.pace_rate_bps(LINK_BPS)   # the pacers' R: U+ of the payload

pytestmark = pytest.mark.skipif(not h.squid_supports("request_sched_pacing"),
                                reason="this Squid has no request_sched_pacing (patches 10-12)")


class SmpSquid:
    """The patched Squid in daemon mode with `workers` workers, each also on
    a port of its own (ports[kid])."""

    def __init__(self, squid_factory, workers: int, window: str, link: str = "16 Mbit",
                 policy: str = "msf", more: str = ""):
        self.ports = {kid: free_port() for kid in range(1, workers + 1)}
        per_worker = "".join(f"if ${{process_number}} = {kid}\nhttp_port 127.0.0.1:{port}\nendif\n"
                             for kid, port in self.ports.items())
        acls = f"acl gold_src src {' '.join(GOLD_SRCS)}\nacl bronze_src src {' '.join(BRONZE_SRCS)}\n"
        sched = sched_conf(window=window, policy=policy, classes=(("gold", 3), ("bronze", 1)),
                           access=(("gold", "allow gold_src"), ("bronze", "allow bronze_src")),
                           link=link, more="request_sched_pacing on\nrequest_sched_long_transfer 64 KB\n" + more)
        self.sq = squid_factory(start=False, acls=acls, sched=sched,
                                extra=f"workers {workers}\n" + per_worker)
        self.daemon = h.DaemonSquid(self.sq)
        self.workers = workers

    def __enter__(self) -> "SmpSquid":
        self.daemon.start()
        for port in self.ports.values():
            h.wait_port(port, "a worker's http_port", 20)
        wait_until(lambda: len(self.pages()) == self.workers, 20, what="every worker's report page")
        return self

    def __exit__(self, *exc: object) -> None:
        self.daemon.stop()

    def pages(self) -> Dict[int, Dict[str, Any]]:
        """Each worker's request_sched page, by kid."""
        return {kid: p for kid, p in parse_mgr_kids(self.sq.mgr("request_sched")).items()
                if kid <= self.workers}

    def window_sums(self) -> Tuple[float, float, float]:
        """(sum of W, sum of W+, the largest sum of the claims on the fixed
        window's budget that a worker's page shows) over the workers' own
        pages."""
        pages = self.pages()
        return (sum(float(p["global"]["W"]) for p in pages.values()),
                sum(float(p["global"]["W_max"]) for p in pages.values()),
                max(float(p["proxy"]["claimed"]) for p in pages.values()))


class Span(NamedTuple):
    by_src: Dict[str, float]    # bytes per client address
    dt: float                   # seconds
    shares: Dict[int, float]    # each worker's median link_share
    used: Dict[int, float]      # each worker's row's median `used`, as kid1 reads it
    gates: Dict[int, str]       # each worker's gates=yes|no on the span's last page, readers still running


def _per_address(smp: SmpSquid, readers: List[Reader], warmup: float, span: float) -> Span:
    """Bytes per client address over span after warmup, and each worker's
    link_share and row's `used` over the span: the median of the report
    pages read every half second (one page can catch a worker in its
    one-update jump to its full share when a read of its had to wait,
    share.c). Everything is read before the readers stop: a worker whose
    users have all left goes idle and leaves the gates."""
    time.sleep(warmup)
    got0 = {r: r.got for r in readers}
    t0 = time.monotonic()
    samples: List[Dict[int, Dict[str, Any]]] = []
    while time.monotonic() - t0 < span:
        time.sleep(min(0.5, max(0.0, span - (time.monotonic() - t0))))
        samples.append(smp.pages())
    got = {r: r.got - got0[r] for r in readers}
    dt = time.monotonic() - t0
    gates = {int(w["kid"]): str(w["gates"]) for w in samples[-1][1]["workers"]}
    for r in readers:
        r.stop()
    shares = {kid: statistics.median(float(p[kid]["global"]["link_share"]) for p in samples)
              for kid in samples[0]}
    # every worker's row as kid1 reads the table: what each read of the link
    used = {kid: statistics.median(float(w["used"]) for p in samples for w in p[1]["workers"]
                                   if int(w["kid"]) == kid)
            for kid in samples[0]}
    by_src: Dict[str, float] = {}
    for r, n in got.items():
        by_src[r.src] = by_src.get(r.src, 0) + n
    return Span(by_src, dt, shares, used, gates)


@pytest.mark.parametrize("workers", [2, 4])
def test_byte_shares_hold_across_workers(squid_factory, origin, workers):
    """The gold user (weight 3) on kid1, one bronze user (weight 1) on each
    other worker, two bulk downloads each: msf gives every gold byte three
    bronze bytes per bronze user and the whole proxy reads U+ C. Before
    patch 34 every worker paced the whole link: (workers) x U+ C, 1:1."""
    with SmpSquid(squid_factory, workers, window="fixed 4") as smp:
        bronze = BRONZE_SRCS[:workers - 1]
        readers = [Reader(smp.ports[1], GOLD_SRC, url=origin.url(f"/smp-a/gold/{i}", size="200m"))
                   for i in range(2)]
        readers += [Reader(smp.ports[kid], src, url=origin.url(f"/smp-a/{src}/{i}", size="200m"))
                    for kid, src in enumerate(bronze, start=2) for i in range(2)]
        by_src, dt, shares, used, _ = _per_address(smp, readers, warmup=2.5, span=6.0)
    gold = by_src[GOLD_SRC]
    bronze_mean = sum(by_src[s] for s in bronze) / len(bronze)
    total_bps = sum(by_src.values()) * 8 / dt
    print(f"{workers} workers: gold {gold:.0f} B, bronze {[by_src[s] for s in bronze]}, "
          f"ratio {gold / max(1, bronze_mean):.2f}, total {total_bps / 1e6:.2f} Mbit/s, shares {shares}")
    assert 2.2 <= gold / max(1, bronze_mean) <= 4.0, by_src
    assert 0.75 * R_BPS <= total_bps <= 1.15 * R_BPS, total_bps
    assert 0.95 <= sum(shares.values()) <= 1.1, shares
    # the rows say what each worker read: about its share of U+ C
    assert all(used[kid] >= 0.5 * 0.98 * shares[kid] for kid in shares), (used, shares)


def test_bandwidth_a_worker_leaves_goes_to_the_others(squid_factory, origin):
    """kid2's bronze user reads from a server that sends 1 Mbit/s (its
    weighted share would be 3.9 Mbit/s): kid2 wants no more than that, so
    kid1's gold user gets the rest of U+ C, not only its 3/4 (11.8 Mbit/s)."""
    with SmpSquid(squid_factory, 2, window="fixed 4") as smp:
        readers = [Reader(smp.ports[1], GOLD_SRC, url=origin.url(f"/smp-w/gold/{i}", size="200m"))
                   for i in range(2)]
        readers.append(Reader(smp.ports[2], BRONZE_SRCS[0],
                              url=origin.url("/smp-w/bronze", size="200m", rate_bps=1_000_000)))
        by_src, dt, shares, used, _ = _per_address(smp, readers, warmup=3.0, span=6.0)
    gold_bps = by_src[GOLD_SRC] * 8 / dt
    bronze_bps = by_src[BRONZE_SRCS[0]] * 8 / dt
    print(f"gold {gold_bps / 1e6:.2f} Mbit/s, bronze {bronze_bps / 1e6:.2f} Mbit/s, shares {shares}, "
          f"used {used}")
    assert bronze_bps <= 1.2e6, bronze_bps
    assert gold_bps >= R_BPS - bronze_bps - 1.5e6, gold_bps     # well above 11.8
    assert shares[1] > 0.85, shares


def test_a_class_share_holds_while_its_user_in_one_worker_waits(squid_factory, origin):
    """Gold's user on kid1 reads from a server that sends 1 Mbit/s; gold's
    other user, on kid2, and a bronze user on kid1 read bulk downloads. The
    proxy's weights: gold 6/7 of U+ C (two users of weight 3), bronze 1/7.
    With the shared byte gates (patch 48) what kid1's gold user leaves goes
    to gold's user on kid2 and kid1's gold user keeps its 1 Mbit/s (measured
    12.44, 1.00, bronze 2.24 Mbit/s); without them kid1's pacer lent it to
    its own bronze user (kid1's share 4/7: gold on kid2 6.72, bronze 7.96),
    and with the two shared gates alone kid2's user, which needs less for a
    grant, took all of gold's gate (kid1's gold user: 0.00)."""
    with SmpSquid(squid_factory, 2, window="fixed 4") as smp:
        readers = [Reader(smp.ports[1], GOLD_SRC, url=origin.url("/smp-g/gold-slow", size="200m",
                                                                 rate_bps=1_000_000)),
                   Reader(smp.ports[2], GOLD_SRCS[1], url=origin.url("/smp-g/gold/0", size="200m")),
                   Reader(smp.ports[2], GOLD_SRCS[1], url=origin.url("/smp-g/gold/1", size="200m"))]
        readers += [Reader(smp.ports[1], BRONZE_SRCS[0], url=origin.url(f"/smp-g/bronze/{i}", size="200m"))
                    for i in range(2)]
        by_src, dt, shares, used, gated = _per_address(smp, readers, warmup=3.0, span=6.0)
    slow_bps = by_src[GOLD_SRC] * 8 / dt
    gold_bps = by_src[GOLD_SRCS[1]] * 8 / dt
    bronze_bps = by_src[BRONZE_SRCS[0]] * 8 / dt
    print(f"gold on kid1 {slow_bps / 1e6:.2f} Mbit/s, gold on kid2 {gold_bps / 1e6:.2f} Mbit/s, "
          f"bronze on kid1 {bronze_bps / 1e6:.2f} Mbit/s, shares {shares}, gates {gated}")
    assert gated == {1: "yes", 2: "yes"}, gated
    assert slow_bps >= 0.85e6, slow_bps                       # 0.00 with the shared gates alone
    assert gold_bps >= 0.6 * R_BPS, gold_bps        # 6.72 Mbit/s without the gates
    assert bronze_bps <= 0.25 * R_BPS, bronze_bps   # 7.96 Mbit/s without them


def _slow_requests(port: int, src: str, origin, tag: str, n: int, hold_ms: int) -> h.Background:
    return h.Background([lambda i=i: http_get(port, origin.url(f"/smp-b/{tag}/{i}", size=100, delay_ms=hold_ms),
                                              src=src, tag=tag, timeout=60) for i in range(n)])


def test_fixed_window_holds_for_the_whole_proxy(squid_factory, origin):
    """request_sched_window fixed 4 with 2 workers, both with more requests
    than slots: once the shares settled (gold's user weighs 3, bronze's 1:
    shares 0.75 and 0.25), the workers' windows add up to 4 (3 + 1), not 4
    each. Before patch 34 each worker had 4 (8 in all). The shares come from
    one budget (patch 43): the claims add up to 1 at most, and to about 1
    while both workers are busy."""
    with SmpSquid(squid_factory, 2, window="fixed 4", link="1 Gbit") as smp:
        gold = _slow_requests(smp.ports[1], GOLD_SRC, origin, "gold", 16, 1000)
        time.sleep(0.5)
        bronze = _slow_requests(smp.ports[2], BRONZE_SRCS[0], origin, "bronze", 16, 1000)
        time.sleep(2.5)             # the first releases (up to 4 + 2) have ended
        samples = []
        for _ in range(12):
            samples.append(smp.window_sums())
            time.sleep(0.15)
        res = gold.join(60) + bronze.join(60)
    print("(sum W, sum W+, claimed):", samples)
    assert all(r.ok for r in res), [r for r in res if not r.ok][:3]
    assert all(w <= 4 and wmax <= 4 and claimed <= 1 for w, wmax, claimed in samples), samples
    assert max(w for w, _, _ in samples) >= 3, samples     # both workers were serving
    assert max(claimed for _, _, claimed in samples) >= 0.9, samples   # the budget is in use


def test_one_adaptive_window_for_the_proxy(squid_factory, origin):
    """wrc-mult with 2 workers: kid1's gold user keeps 16 slow requests
    queued (1 s each, 100 bytes), so kid1 reads almost nothing of its share
    and its controller keeps growing its W+; kid2's bronze user reads two
    bulk downloads at its share, so kid2's does not grow. Each worker's W+
    is the proxy's window (patch 55, libreqsched's rs_share_window(): the
    rows' W+ weighted by their shares), so the two rows' W+ agree but for
    what a worker's own controller moved since its last update."""
    with SmpSquid(squid_factory, 2, window="wrc-mult") as smp:
        gold = _slow_requests(smp.ports[1], GOLD_SRC, origin, "gold-w", 16, 1000)
        readers = [Reader(smp.ports[2], BRONZE_SRCS[0], url=origin.url(f"/smp-o/bronze/{i}", size="200m"))
                   for i in range(2)]
        time.sleep(4.0)
        ratios = []
        for _ in range(12):
            rows = {int(w["kid"]): float(w["proxy_W_max"]) for w in smp.pages()[1]["workers"]}
            ratios.append(rows[1] / max(rows[2], 1e-9))
            time.sleep(0.25)
        for r in readers:
            r.stop()
        res = gold.join(60)
    print("kid1 / kid2 W+ in the proxy's units:", [round(r, 2) for r in ratios])
    assert all(r.ok for r in res), [r for r in res if not r.ok][:3]
    assert 0.67 <= statistics.median(ratios) <= 1.5, ratios


def test_an_idle_worker_shows_the_idle_share_from_the_start(squid_factory):
    """A worker that has had no request yet schedules the idle share (5 % of
    1/N) from its start, and its page says so: W+ 1 of a fixed window of 4,
    not the whole window. The workers' table can attach after the scheduler
    read its configuration (Squid runs its runners in no set order), and an
    idle worker has no housekeeping timer to take the share later; before
    patch 43 took it at the first housekeeping (2026-11-27) a worker showed
    share 1 and W+ 4 until its first request (the first sample of a CI run
    that day: the sum of W+ was 8)."""
    with SmpSquid(squid_factory, 2, window="fixed 4", link="1 Gbit") as smp:
        time.sleep(1.0)
        pages = smp.pages()
    for kid, page in pages.items():
        assert float(page["global"]["link_share"]) == pytest.approx(0.025, abs=1e-3), (kid, page["global"])
        assert float(page["global"]["W_max"]) <= 1, (kid, page["global"])


def test_fixed_window_holds_while_demand_moves(squid_factory, origin):
    """Gold's requests on kid1 come in waves of 4 (1 s each; the next wave
    when the last is answered), so kid1's queue empties near the end of
    every wave and kid2's bronze backlog takes kid1's share and fills the
    slots it brings; at the next wave kid1 computes its share back at once.
    Without one budget (before patch 43) it took it while kid2 still held
    those slots for their 1-s responses: the sums reached 6 and 7 (in 12 to
    34 of 79 samples, three runs). With it, kid1 gets only what kid2 gives
    back: the claims stay within 1 and the sums of W and W+ within 5, the 4
    slots of the budget and the one slot every busy worker has, claimed or
    not (kid1 waking up while kid2 holds all 4), in every sample over 8 s."""
    with SmpSquid(squid_factory, 2, window="fixed 4", link="1 Gbit") as smp:
        bronze = _slow_requests(smp.ports[2], BRONZE_SRCS[0], origin, "bronze-m", 24, 1000)
        gold: List[h.Result] = []

        def waves() -> None:
            for wave in range(5):
                gold.extend(_slow_requests(smp.ports[1], GOLD_SRC, origin, f"gold-m{wave}", 4, 1000).join(30))
        time.sleep(0.5)
        waver = threading.Thread(target=waves, daemon=True)
        waver.start()
        samples = []
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            samples.append(smp.window_sums())
            time.sleep(0.1)
        waver.join(60)
        res = gold + bronze.join(60)
    print("(sum W, sum W+, claimed):", samples)
    assert len(gold) == 20 and all(r.ok for r in res), [r for r in res if not r.ok][:3]
    assert all(w <= 5 and wmax <= 5 and claimed <= 1 for w, wmax, claimed in samples), samples
    assert max(w for w, _, _ in samples) >= 3, samples     # both workers were serving


def test_dead_worker_leaves_no_share_and_no_slot(squid_factory, origin):
    """kid2 is killed while it holds window slots (W+ 3 + 1): its row stops
    being updated, and a second later kid1 takes the whole window (4) and
    link (share 1); the master restarts kid2, which starts with W = 0.
    (The test can only see it once the cache manager answers again.)"""
    with SmpSquid(squid_factory, 2, window="fixed 4", link="1 Gbit") as smp:
        # enough gold work to outlast the cache manager's stall: while a kid
        # is dead or restarting, the coordinator's answer waits for it
        gold = _slow_requests(smp.ports[1], GOLD_SRC, origin, "gold", 100, 800)
        bronze = _slow_requests(smp.ports[2], BRONZE_SRCS[0], origin, "bronze", 40, 800)
        wait_until(lambda: smp.pages()[1]["global"]["W_max"] == 3, 10,
                   what="kid1 to share the fixed window with kid2")
        dead = smp.daemon.kid_pid(2)
        os.kill(dead, signal.SIGKILL)
        seen: List[Any] = []

        def kid1_takes_all() -> bool:
            p = smp.pages().get(1)
            seen.append(p and (p["global"]["W_max"], p["global"]["link_share"], p["workers"]))
            return bool(p) and p["global"]["W_max"] == 4
        try:
            wait_until(kid1_takes_all, 30, what="kid1 to take the whole window after kid2 died")
        except AssertionError as e:
            raise AssertionError(f"{e}; kid1 (W+, share, rows) last: {seen[-2:]}") from None
        p1 = smp.pages()[1]
        assert p1["global"]["link_share"] >= 0.95, p1["global"]
        assert [w["live"] for w in p1["workers"]] == ["yes", "no"], p1["workers"]
        wait_until(lambda: smp.daemon.kid_pid(2) != dead, 20, what="the master to restart kid2")
        gold.join(120)
        bronze.join(120)

        def idle() -> bool:
            pages = smp.pages()
            return len(pages) == 2 and all(p["global"]["W"] == 0 and p["global"]["queued"] == 0
                                           for p in pages.values())
        wait_until(idle, 20, what="both workers idle: W = 0, queued = 0")


def test_reconfigure_with_queued_requests_in_every_worker(squid_factory, origin):
    """Both workers have queued requests when squid -k reconfigure runs:
    every request is still answered, and the shares still add up to 1."""
    with SmpSquid(squid_factory, 2, window="fixed 2", link="1 Gbit") as smp:
        gold = _slow_requests(smp.ports[1], GOLD_SRC, origin, "gold", 8, 700)
        bronze = _slow_requests(smp.ports[2], BRONZE_SRCS[0], origin, "bronze", 8, 700)
        wait_until(lambda: all(p["global"]["queued"] > 0 for p in smp.pages().values()), 10,
                   what="requests queued in both workers")
        assert smp.sq.reconfigure().returncode == 0
        time.sleep(1.0)
        pages: Dict[int, Dict[str, Any]] = {}

        def settled() -> bool:
            # the shares add up to 1 once both workers wrote their rows again
            # (at once here; a worker whose reconfigure takes more than the
            # 1 s a row stays live, as under the sanitizers, is missed a moment)
            nonlocal pages
            pages = smp.pages()
            return 0.9 <= sum(float(p["global"]["link_share"]) for p in pages.values()) <= 1.1
        wait_until(settled, 3, what="the shares add up to 1 after the reconfigure")
        res = gold.join(60) + bronze.join(60)
    assert all(r.ok for r in res), [(r.status, r.tag) for r in res if not r.ok][:4]
    assert len(res) == 16
    assert all(p["global"]["queued"] > 0 for p in pages.values()), pages   # still queued after it
    assert smp.sq.cache_log().count("Request scheduler: 2 classes") >= 4   # 2 workers x (start, reconfigure)


def test_each_worker_keeps_its_own_window_file(squid_factory, workdir):
    """request_sched_window_file with SMP workers (patch 52): worker N reads
    and writes PATH.kidN, so each starts at its own saved W+ and a shutdown
    rewrites both files with W+ in the proxy's units, not the worker's part
    of it that its page shows as W_max (1 here: an idle worker's share)."""
    path = workdir / "reqsched.window"
    saved = {1: 3.0, 2: 5.0}
    for kid, w in saved.items():
        h.write_window_file(workdir / f"reqsched.window.kid{kid}", w, int(LINK_BPS), age_s=1)
    with SmpSquid(squid_factory, 2, window="wrc-mult", more=f"request_sched_window_file {path}\n") as smp:
        pages = smp.pages()
        for kid, w in saved.items():
            g = pages[kid]["global"]
            # W_max is the worker's part of W+ (its share; idle here): the
            # file holds W+ in the proxy's units, rs_window_max()
            assert str(g["window_file"]).startswith(f"{path}.kid{kid}: restored W+ {w:.1f}"), (kid, g)
        for kid in saved:
            (workdir / f"reqsched.window.kid{kid}").unlink()
    for kid, w in saved.items():
        window, link, written = h.read_window_file(workdir / f"reqsched.window.kid{kid}")
        assert link == int(LINK_BPS)
        assert window == pytest.approx(w, abs=0.01), kid
        assert abs(written - time.time()) < 60
    assert not path.exists()
