# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-load replay through the patched Squid: the access.log Squid writes
holds the replayed log's requests (method, URL, status) from the clients the
client map gave them, and Squid classifies those clients as mapped."""
import collections
import csv
import subprocess
import sys
from pathlib import Path

import rsharness as h

GOLD = [f"127.0.0.{i}" for i in (51, 52, 53)]
BRONZE = [f"127.0.0.{i}" for i in (61, 62, 63)]


def native(t: float, client: str, status: int, size: int, method: str, url: str) -> str:
    return f"{t:.3f} 20 {client} TCP_MISS/{status} {size} {method} {url} - HIER_DIRECT/192.0.2.9 -\n"


def synthetic_log() -> str:
    """6 clients over 6 s: GETs (repeated URLs), HEAD, POST, a 404, CONNECTs."""
    out = []
    clients = ["10.1.0.1", "10.1.0.2", "10.1.0.3", "10.2.0.1", "10.2.0.2", "10.2.0.3"]
    for k in range(30):
        c = clients[k % 6]
        method = ("GET", "GET", "HEAD", "POST", "GET")[k % 5]
        status = 404 if k % 7 == 3 else 200
        out.append(native(5000 + 0.2 * k, c, status, 500 + 300 * k, method,
                          f"http://site{k % 4}.example/page/{k % 9}?v=1"))
    out.append(native(5002.0, clients[0], 200, 20000, "CONNECT", "mail.example:443"))
    out.append(native(5003.0, clients[4], 200, 7000, "CONNECT", "bank.example:443"))
    out.append("this line is garbage\n")
    return "".join(out)


def test_replay_matches_squid_access_log(squid_factory, origin, workdir: Path):
    sq = squid_factory(
        acls=(f"acl gold_src src {GOLD[0]}-{GOLD[-1]}\n"
              f"acl bronze_src src {BRONZE[0]}-{BRONZE[-1]}\n"),
        sched=h.sched_conf(window="fixed 4", classes=[("gold", 3), ("bronze", 1)],
                           access=[("gold", "allow gold_src"), ("bronze", "allow bronze_src")]))
    log = workdir / "replayed.log"
    log.write_text(synthetic_log())
    out = workdir / "load"
    p = subprocess.run(
        [sys.executable, "-m", "reqsched_tools.load", "replay", str(log),
         "--proxy", f"127.0.0.1:{sq.port}", "--servers", "127.0.0.1",
         "--http-port", str(origin.port), "--tunnel-port", str(origin.port),
         "--map", f"10.1.0.0/16 gold {GOLD[0]}-{GOLD[-1].rsplit('.', 1)[1]}",
         "--map", f"10.2.0.0/16 bronze {BRONZE[0]}-{BRONZE[-1].rsplit('.', 1)[1]}",
         "--time-scale", "0.3", "--timeout", "20", "--progress-s", "1", "--out", str(out)],
        capture_output=True, text=True, timeout=90)
    assert p.returncode == 0, p.stderr
    assert "32 requests from 6 clients" in p.stderr and "1 malformed" in p.stderr
    rows = list(csv.DictReader(open(out / "requests.csv")))
    assert len(rows) == 32 and all(r["error"] == "" for r in rows), rows
    # each log client is one user on one address of its class's range
    users = {r["user"]: (r["class"], r["addr"]) for r in rows}
    assert len(users) == 6 and len({a for _, a in users.values()}) == 6
    assert all(a in (GOLD if c == "gold" else BRONZE) for c, a in users.values())

    logged = sq.access_log(quiet=0.5, timeout=10)
    replayed = collections.Counter((r["addr"], r["method"], r["url"], r["status"]) for r in rows)
    seen = collections.Counter((r["src"], r["method"], r["url"], r["status"]) for r in logged)
    assert seen == replayed, (seen - replayed, replayed - seen)
    # Squid classified the mapped clients as the map says
    for r in logged:
        if r["method"] != "CONNECT":
            assert r["class"] == ("gold" if r["src"] in GOLD else "bronze"), r
    # sizes: Squid's logged size is the replayed body plus Squid's reply head
    bodies = collections.defaultdict(list)
    sizes = collections.defaultdict(list)
    for r in rows:
        bodies[(r["addr"], r["method"], r["url"])].append(int(r["bytes"]))
    for r in logged:
        sizes[(r["src"], r["method"], r["url"])].append(int(r["size"]))
    for k, b in bodies.items():
        assert all(0 <= s - n < 1000 for s, n in zip(sorted(sizes[k]), sorted(b))), (k, b, sizes[k])
    # the CONNECTs carried the logged bytes
    tunnels = sorted(int(r["bytes"]) for r in rows if r["method"] == "CONNECT")
    assert tunnels == [7000, 20000]


def test_repeated_urls_hit_the_cache_with_max_age(squid_factory, origin, workdir: Path):
    """--max-age makes the replayed GET 200s cacheable: a URL the log repeats is
    a hit in Squid's memory cache the second time (a cache-on run)."""
    sq = squid_factory(cache=True, sched=h.sched_conf(window="fixed 4"))
    lines = "".join(native(7000 + 0.3 * k, f"10.1.0.{k % 3 + 1}", 200, 4000,
                           "GET", f"http://site.example/obj/{k % 4}") for k in range(12))
    log = workdir / "repeats.log"
    log.write_text(lines)
    p = subprocess.run(
        [sys.executable, "-m", "reqsched_tools.load", "replay", str(log),
         "--proxy", f"127.0.0.1:{sq.port}", "--servers", "127.0.0.1",
         "--http-port", str(origin.port), "--default-addrs", "127.0.0.71-73",
         "--max-age", "300", "--time-scale", "0.5", "--timeout", "20", "--out", str(workdir / "o")],
        capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    rows = [r for r in sq.access_log(quiet=0.5, timeout=10) if "/obj/" in r["url"]]
    assert len(rows) == 12 and all(r["status"] == "200" for r in rows)
    first = {}
    for r in sorted(rows, key=lambda r: float(r["t"])):
        first.setdefault(r["url"], r)
    assert all(r["code"] == "TCP_MISS" for r in first.values())
    hits = [r for r in rows if r not in first.values()]
    assert len(hits) == 8 and all("HIT" in r["code"] for r in hits), [r["code"] for r in hits]


def test_logged_logins_are_classified_by_squids_login_acl(squid_factory, origin, workdir: Path):
    """--by-login --proxy-password through a Squid with Basic auth and a
    proxy_auth class ACL: the log's alice and bob, both behind one logged
    address, are two users, and Squid puts alice's requests in gold and
    bob's in bronze by login."""
    sq = squid_factory(
        acls=(f"auth_param basic program {h.helper_copy('basic_auth_ok', workdir)}\n"
              "auth_param basic children 2\nacl authed proxy_auth REQUIRED\n"
              "acl gold_login proxy_auth alice\n"
              "http_access allow localhost manager\nhttp_access deny !authed\n"),
        sched=h.sched_conf(window="fixed 4", classes=[("gold", 3), ("bronze", 1)],
                           access=[("gold", "allow gold_login"), ("bronze", "allow all")]))
    lines = "".join(native(8000 + 0.2 * k, "10.1.0.1", 200, 3000, "GET",
                           f"http://site.example/u/{k}").replace(" - HIER", f" {who} HIER")
                    for k, who in enumerate(["alice", "bob"] * 4))
    log = workdir / "logins.log"
    log.write_text(lines)
    p = subprocess.run(
        [sys.executable, "-m", "reqsched_tools.load", "replay", str(log),
         "--proxy", f"127.0.0.1:{sq.port}", "--servers", "127.0.0.1",
         "--http-port", str(origin.port), "--default-addrs", "127.0.0.81-82", "--by-login",
         "--proxy-password", "pw", "--time-scale", "0.5", "--timeout", "20",
         "--out", str(workdir / "o")],
        capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    rows = [r for r in sq.access_log(quiet=0.5, timeout=10) if "/u/" in r["url"]]
    assert len(rows) == 8 and all(r["status"] == "200" for r in rows), rows
    by_src = {r["src"]: set() for r in rows}
    for r in rows:
        by_src[r["src"]].add((r["class"], int(r["url"].rsplit("/", 1)[1]) % 2))
    # alice (even k) is one user on one address, in gold; bob (odd k) on the other, in bronze
    assert sorted(by_src.values(), key=sorted) == [{("bronze", 1)}, {("gold", 0)}]
