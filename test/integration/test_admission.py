# SPDX-License-Identifier: GPL-2.0-or-later
"""Admission: which requests the scheduler takes, and which it refuses.

request_sched_access deny lines rule a class out; request_sched_bypass
exempts requests from scheduling; the per-user and per-class queue limits
refuse only the offender's requests (issue 12, items 5 and 11)."""
from __future__ import annotations

import re
import selectors
import socket
import threading
import time
from pathlib import Path
from typing import Dict, List

import pytest

import rsharness as h
from rsharness import http_get, sched_conf, wait_until
from test_sched import connect_and_read, idle, rows_of

GUEST_SRC, STAFF_SRC, HOG_SRC = "127.0.0.3", "127.0.0.2", "127.0.0.9"


# --------------------------------------------------------------------------
# request_sched_access CLASS deny ACL
# --------------------------------------------------------------------------
def test_access_deny_rules_class_out(squid_factory, origin):
    """`gold deny guests` then `gold allow all`: guests skip gold's allow
    line and, with no other allow line, land in the first class; everybody
    else is in gold. A deny line that does not match rules nothing out."""
    acls = f"acl guests src {GUEST_SRC}\nacl nobody src 127.0.0.250\n"
    sq = squid_factory(acls=acls, sched=sched_conf(
        window="fixed 4", classes=[("bronze", 1), ("silver", 2), ("gold", 3)],
        access=[("gold", "deny guests"), ("silver", "deny nobody"), ("gold", "allow all")]))
    for src, tag in ((GUEST_SRC, "guest"), (STAFF_SRC, "staff")):
        r = http_get(sq.port, origin.url(f"/deny/{tag}", size=100), src=src, timeout=10)
        assert r.status == 200, r
    rows = {r["url"].rsplit("/", 1)[-1].split("?")[0]: r["class"] for r in rows_of(sq, "/deny/")}
    assert rows == {"guest": "bronze", "staff": "gold"}, rows
    rp = idle(sq)
    assert rp.c("bronze", "released") == 1 and rp.c("gold", "released") == 1, rp.text


# --------------------------------------------------------------------------
# request_sched_bypass allow|deny ACL
# --------------------------------------------------------------------------
BYPASS_ACLS = "acl lan urlpath_regex ^/lan/\nacl lan_slow urlpath_regex ^/lan/slow\n"


def test_bypass_forwards_at_once_and_counts(squid_factory, origin):
    """While a slow response holds the only window slot, a request that a
    request_sched_bypass allow line matches is forwarded at once and counted
    (bypassed), one that an earlier deny line matches waits, and one that no
    line matches waits (no implicit allow)."""
    sq = squid_factory(acls=BYPASS_ACLS, sched=sched_conf(
        window="fixed 1", more="request_sched_bypass deny lan_slow\nrequest_sched_bypass allow lan\n"))
    blocker = h.Background([lambda: http_get(sq.port, origin.url("/blk/0", size=100, delay_ms=3000), timeout=20)])
    wait_until(lambda: sq.report().g("W") == 1, 5, what="the blocker to hold the window")
    waiting = h.Background([lambda: http_get(sq.port, origin.url("/lan/slow1", size=100), timeout=20),
                            lambda: http_get(sq.port, origin.url("/wan/1", size=100), timeout=20)])
    wait_until(lambda: sq.report().g("queued") == 2, 5, what="the deny-matched and unmatched requests to queue")
    r = http_get(sq.port, origin.url("/lan/fast", size=5000), timeout=10)
    assert r.ok and r.t_end - r.t_start < 1.5, r
    rp = sq.report()
    assert rp.g("bypassed") == 1 and rp.g("queued") == 2 and rp.g("W") == 1, rp.text
    res = waiting.join(20) + blocker.join(20)
    assert all(x.ok for x in res), res
    rows = {r["url"].split("/", 3)[-1].split("?")[0]: r["class"] for r in sq.access_log()}
    assert rows["lan/fast"] == "-" and rows["lan/slow1"] == "a" and rows["wan/1"] == "a", rows
    rp = idle(sq)
    assert rp.g("released") == 3 and rp.g("ended") == 3 and rp.g("bypassed") == 1, rp.text
    assert rp.c("a", "bytes") < 5000, "a bypassed response counts for no class"


def test_bypass_exempts_connect_tunnels(squid_factory, origin, streamer_factory):
    """With request_sched_tunnels schedule, a CONNECT that request_sched_bypass
    allows does not wait for the full window, and its bytes count for no
    class."""
    nbytes = 500_000
    st = streamer_factory(nbytes)
    sq = squid_factory(acls=f"acl lan_port port {st.port}\n", sched=sched_conf(
        window="fixed 1", more="request_sched_tunnels schedule\nrequest_sched_bypass allow lan_port\n"))
    blocker = h.Background([lambda: http_get(sq.port, origin.url("/blk/t", size=100, delay_ms=3000), timeout=20)])
    wait_until(lambda: sq.report().g("W") == 1, 5, what="the blocker to hold the window")
    t0 = time.monotonic()
    assert connect_and_read(sq.port, st.port, "127.0.0.1") == nbytes
    assert time.monotonic() - t0 < 1.5, "the bypassed CONNECT waited for the window"
    assert blocker.join(20)[0].ok
    rp = idle(sq)
    assert rp.g("bypassed") == 1 and rp.g("released") == 1, rp.text
    assert rp.c("a", "foreign_bytes") == 0 and rp.g("bytes") < nbytes, rp.text


# --------------------------------------------------------------------------
# per-user queue limit: one client must not deny service to the others
# --------------------------------------------------------------------------
class Flood:
    """n requests from one source address, each on its own connection, all
    sent at once; one thread (epoll) reads the status line of every answer.
    close() drops the connections that are still open (client aborts)."""

    def __init__(self, port: int, urls: List[str], src: str, limit_s: float):
        self.status: List[int] = [0] * len(urls)
        self._stop = False
        self._t = threading.Thread(target=self._run, args=(port, urls, src, limit_s), daemon=True)
        self._t.start()

    def _run(self, port: int, urls: List[str], src: str, limit_s: float) -> None:
        sel = selectors.DefaultSelector()
        deadline = time.monotonic() + limit_s
        for i, url in enumerate(urls):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((src, 0))
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            sel.register(s, selectors.EVENT_WRITE, (i, url))
        while sel.get_map() and not self._stop and time.monotonic() < deadline:
            for key, ev in sel.select(0.2):
                conn, (i, url) = key.fileobj, key.data
                assert isinstance(conn, socket.socket)
                try:
                    if ev & selectors.EVENT_WRITE:
                        conn.send(f"GET {url} HTTP/1.0\r\nHost: origin\r\n\r\n".encode())
                        sel.modify(conn, selectors.EVENT_READ, (i, url))
                        continue
                    data = conn.recv(65536)
                except OSError:
                    data = b""
                    self.status[i] = self.status[i] or -1
                if data and not self.status[i] and data.startswith(b"HTTP/"):
                    self.status[i] = int(data.split()[1])
                if not data:
                    sel.unregister(conn)
                    conn.close()
        for key in list(sel.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        sel.close()

    def close(self, timeout: float = 30) -> None:
        self._stop = True
        self._t.join(timeout)
        assert not self._t.is_alive(), "flood thread did not stop"


def test_one_client_cannot_fill_the_queue(squid_factory, origin):
    """The issue's case, at its size: one address opens 5,000 connections
    with a request each, against request_sched_max_queued 2000 and the
    default per-user limit (1000). Only its requests beyond its own limit
    are refused (503 + Retry-After, rejected_user, cache.log lines naming its
    address and class, at most one a second); two other users' requests, in
    a class of weight 3, are all served."""
    hog_n = 5000
    acls = f"acl hog src {HOG_SRC}\n"
    sq = squid_factory(acls=acls, sched=sched_conf(
        window="fixed 4", classes=[("gold", 3), ("bronze", 1)], access=[("bronze", "allow hog")],
        more="request_sched_max_queued 2000\n"))
    t0 = time.monotonic()
    hog = Flood(sq.port, [origin.url(f"/hog/{i}", size=100, delay_ms=2000) for i in range(hog_n)], HOG_SRC, 180)
    try:
        wait_until(lambda: (lambda rp: rp.g("rejected") + rp.g("queued") + rp.g("released") >= hog_n)(sq.report()),
                   90, step=0.5, what="every hog request to be queued, released or refused")
        rp = sq.report()
        # at most the user's limit got into the queue; the rest was refused
        assert rp.c("bronze", "queued") <= 1000 and rp.g("released") < 100, rp.text
        assert rp.g("rejected_user") >= hog_n - 1000 - rp.g("released"), rp.text
        victims = h.Background([lambda i=i, src=src: http_get(sq.port, origin.url(f"/victim/{src}/{i}", size=1000),
                                                               src=src, timeout=60)
                                for src in ("127.0.0.2", "127.0.0.4") for i in range(5)])
        res = victims.join(90)
        bad = [r for r in res if not r.ok]
        assert not bad, f"{len(bad)} of the other users' requests failed: {bad[:3]}"
        refused = sum(1 for s in hog.status if s == 503)
        rp = sq.report()
        assert refused == rp.g("rejected_user"), (refused, rp.text)
        assert rp.g("rejected_user") == rp.g("rejected") and rp.g("rejected_class") == 0, rp.text
        assert rp.c("bronze", "rejected") == rp.g("rejected") and rp.c("gold", "rejected") == 0, rp.text
    finally:
        hog.close()
    lines = [ln for ln in sq.cache_log().splitlines() if "refused a request of" in ln]
    assert lines and all(HOG_SRC in ln and "class bronze" in ln and "request_sched_max_queued_per_user 1000" in ln
                         for ln in lines), lines[:3]
    assert len(lines) <= time.monotonic() - t0 + 2, f"{len(lines)} lines: not rate-limited"
    rp = idle(sq, timeout=60)
    assert rp.g("released") == rp.g("ended"), rp.text
    refused_row = next(r for r in sq.access_log() if "/hog/" in r["url"] and r["status"] == "503")
    assert refused_row["class"] == "bronze", refused_row


def test_class_limit_refuses_only_that_class(squid_factory, origin):
    """request_sched_max_queued_per_class 3: the fourth queued request of
    class bronze is refused at once (rejected_class), while gold still
    queues; a user at request_sched_max_queued_per_user 2 is refused first."""
    acls = "acl b src 127.0.0.3 127.0.0.5\n"
    sq = squid_factory(acls=acls, sched=sched_conf(
        window="fixed 1", classes=[("gold", 3), ("bronze", 1)], access=[("bronze", "allow b")],
        more="request_sched_max_queued_per_class 3\nrequest_sched_max_queued_per_user 2\n"))
    blocker = h.Background([lambda: http_get(sq.port, origin.url("/cl/blk", size=100, delay_ms=3000), timeout=20)])
    wait_until(lambda: sq.report().g("W") == 1, 5, what="the blocker to hold the window")
    jobs = [lambda i=i: http_get(sq.port, origin.url(f"/cl/b3/{i}", size=100), src="127.0.0.3", timeout=20)
            for i in range(2)]
    jobs.append(lambda: http_get(sq.port, origin.url("/cl/b5/0", size=100), src="127.0.0.5", timeout=20))
    jobs += [lambda i=i: http_get(sq.port, origin.url(f"/cl/g/{i}", size=100), src="127.0.0.2", timeout=20)
             for i in range(2)]
    queued = h.Background(jobs)
    wait_until(lambda: sq.report().g("queued") == 5, 5, what="5 queued requests")
    over_user = http_get(sq.port, origin.url("/cl/b3/over", size=100), src="127.0.0.3", timeout=5)
    over_class = http_get(sq.port, origin.url("/cl/b5/over", size=100), src="127.0.0.5", timeout=5)
    for r in (over_user, over_class):
        assert r.status == 503 and "retry-after" in r.headers and r.t_end - r.t_start < 1, r
    rp = sq.report()
    assert rp.g("rejected_user") == 1 and rp.g("rejected_class") == 1 and rp.g("rejected") == 2, rp.text
    assert rp.c("bronze", "rejected") == 2 and rp.c("gold", "rejected") == 0, rp.text
    res = queued.join(30) + blocker.join(20)
    assert all(r.ok for r in res), res
    log = sq.cache_log()
    assert "request_sched_max_queued_per_user 2 reached" in log or \
        "request_sched_max_queued_per_class 3 reached" in log, log[-2000:]
    idle(sq)


# --------------------------------------------------------------------------
# squid -k parse: the new directives' bad values, each naming its line
# --------------------------------------------------------------------------
BASE = ["request_scheduler on", "request_sched_link 10 Mbit", "request_sched_class gold 4",
        "request_sched_class bronze 1"]
ACLS = "acl vip src 127.0.0.2\n"
# name -> (bad lines, good lines): the last bad line is the one to blame
PARSE_BAD: Dict[str, tuple] = {
    "bypass-action": (["request_sched_bypass maybe vip"], ["request_sched_bypass allow vip"]),
    "bypass-unknown-acl": (["request_sched_bypass allow nosuchacl"], ["request_sched_bypass allow vip"]),
}
for _d in ("user", "class"):
    _good = [f"request_sched_max_queued_per_{_d} 10"]
    for _name, _value in (("negative", "-1"), ("garbage", "lots"), ("fraction", "2.5"), ("huge", "10000001"),
                          ("overflow", "99999999999999999999"), ("nan", "nan"), ("unit", "10 KB"),
                          ("missing", "")):
        PARSE_BAD[f"per-{_d}-{_name}"] = ([f"request_sched_max_queued_per_{_d} {_value}".strip()], _good)
    PARSE_BAD[f"per-{_d}-duplicate"] = (_good + [f"request_sched_max_queued_per_{_d} 20"], _good)


def _conf(workdir: Path, lines: List[str], name: str) -> tuple:
    sq = h.Squid(workdir / name, sched="\n".join(BASE + lines), acls=ACLS)
    return sq.conf, sq.conf.read_text().splitlines()


@pytest.mark.parametrize("case", sorted(PARSE_BAD))
def test_parse_rejects_bad_admission_lines(case: str, workdir: Path) -> None:
    if not h.SQUID_BIN.exists():
        pytest.skip(f"{h.SQUID_BIN} not built (make squid)")
    bad, good = PARSE_BAD[case]
    conf, _ = _conf(workdir, good, "good")
    p = h.Squid.run_parse(conf)
    assert p.returncode == 0 and not re.search(r"\bERROR\b|FATAL|unrecognized", p.stdout), p.stdout[-2000:]
    conf, lines = _conf(workdir, bad, "bad")
    n = max(i + 1 for i, ln in enumerate(lines) if ln.strip() == bad[-1])
    p = h.Squid.run_parse(conf)
    assert p.returncode != 0, f"squid -k parse accepted {bad!r}:\n{p.stdout[-1500:]}"
    assert re.search(rf"(\bline {n}\b|\({n}\))", p.stdout), f"{bad!r}: line {n} not named:\n{p.stdout[-1500:]}"


def test_limit_defaults_on_report_page(squid_factory) -> None:
    """The limits' defaults and the new counters, as the report page shows them."""
    sq = squid_factory(sched=sched_conf())
    rp = sq.report()
    assert rp.g("max_queued_per_user") == 1000 and rp.g("max_queued_per_class") == 0, rp.text
    assert rp.g("bypassed") == 0 and rp.g("rejected_user") == 0 and rp.g("lib_errors") == 0, rp.text
