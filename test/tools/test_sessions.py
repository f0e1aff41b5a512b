# SPDX-License-Identifier: GPL-2.0-or-later
"""Sessions of page loads and load profiles (reqsched-load sessions): the
distributions, profile files, page semantics (embedded objects only after the
main object, at most N connections per user) and the profile's shape (users
over time), through a loopback proxy."""
import asyncio
import base64
import collections
import csv
import json
import random

import pytest

from reqsched_tools import load, sessions
from reqsched_tools.loadengine import Engine


def test_distributions_parse_and_draw():
    rng = random.Random(3)
    surge = sessions.Dist("surge")
    xs = [surge.draw(rng) for _ in range(20000)]
    med = sorted(xs)[len(xs) // 2]
    assert 10_500 < med < 12_800                      # e^9.357 = 11,580
    tail = sum(1 for x in xs if x > 133_000) / len(xs)
    assert 0.024 < tail < 0.040                       # P(lognormal > 133 kB) = 3.2%
    emb = sessions.Dist("pareto:2.43:1")
    n = [emb.count(rng) for _ in range(20000)]
    assert min(n) >= 1 and 1.30 < sum(n) / len(n) < 1.41   # E floor(Pareto(2.43, 1)) = zeta(2.43) = 1.354
    assert sessions.Dist("const:5").count(rng) == 5
    assert 2 <= sessions.Dist("uniform:2:3").draw(rng) <= 3
    assert sessions.Dist("surge").size(rng) >= 1
    for bad in ("", "zipf:1", "const", "const:1:2", "exp:0", "uniform:3:2", "pareto:nan:1",
                "lognormal:1:-1", "const:x"):
        with pytest.raises(ValueError, match="distribution"):
            sessions.Dist(bad)


def test_profile_level_is_piecewise_linear():
    c = sessions.ClassLoad("g", ["10.0.0.1"], [(10, 50), (20, 50), (10, 0)])
    assert [c.level(t) for t in (0, 5, 10, 20, 30, 35, 40, 41)] == [0, 25, 50, 50, 50, 25, 0, 0]
    assert c.duration == 40


def test_profile_file_validation(tmp_path):
    good = {"servers": "10.20.0.1-2", "http_port": 8080,
            "classes": [{"name": "g", "addrs": "10.10.1.1-5", "users": [[1, 2]],
                         "connections": 3, "embedded": "const:2"}]}
    classes, servers, port = sessions.load_profile(good)
    assert servers == ["10.20.0.1", "10.20.0.2"] and port == 8080
    assert classes[0].model.connections == 3 and classes[0].model.embedded.spec == "const:2"
    bads = [({"classes": []}, "needs"),
            ({"classes": [{"name": "g", "addrs": "10.0.0.1"}]}, "users or sessions_per_s"),
            ({"classes": [{"name": "g", "addrs": "10.0.0.1", "users": [[1, 1]],
                           "sessions_per_s": [[1, 1]]}]}, "not both"),
            ({"classes": [{"name": "g", "addrs": "10.0.0.1", "users": [[-1, 1]]}]}, "duration"),
            ({"classes": [{"name": "g", "addrs": "10.0.0.1", "users": [[1, 1]],
                           "connections": 0}]}, "connections"),
            ({"classes": [{"name": "g", "addrs": "10.0.0.1", "users": [[1, 1]],
                           "think_s": "exp:-1"}]}, "distribution"),
            ({"classes": [{"name": "g", "users": [[1, 1]]}]}, "missing key"),
            ({"classes": [{"name": "g", "addrs": "10.0.0.1", "users": [[1, 1]]}] * 2}, "twice"),
            ({"classes": [{"name": "g", "addrs": "10.0.0.1", "users": [[1, 1]],
                           "login": "fixed"}]}, "needs {n}")]
    for raw, msg in bads:
        with pytest.raises(ValueError, match=msg):
            sessions.load_profile(raw)
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"classes": [{"name": "g", "addrs": "10.0.0.1", "users": "x"}]}))
    assert load.main(["sessions", str(f)]) == 2


def run_sessions(proxy_port, origin_port, classes, seconds, password=None):
    async def main():
        eng = Engine(("127.0.0.1", proxy_port), timeout=10, progress_s=60, password=password)
        sl = sessions.SessionLoad(eng, classes, ["127.0.0.1"], origin_port, seed=4)
        await eng.run(sl.tasks(), seconds)
        return eng, sl
    return asyncio.run(main())


def test_pages_embedded_after_main_and_at_most_n_connections(mini_proxy, tmp_path):
    m = sessions.PageModel(connections=2, pages_per_session=sessions.Dist("const:3"),
                           embedded=sessions.Dist("uniform:4:7"),
                           main_size=sessions.Dist("const:20000"),
                           embedded_size=sessions.Dist("uniform:1000:60000"),
                           think_s=sessions.Dist("exp:0.1"))
    c = sessions.ClassLoad("g", [f"127.0.0.{i}" for i in range(70, 74)], [(2.5, 4)], "users", m)
    eng, _ = run_sessions(mini_proxy.port, mini_proxy.origin_port, [c], 8)
    eng.write(str(tmp_path))
    assert len(eng.pages) >= 8 and all(t.ok for t in eng.txns)
    by_page = collections.defaultdict(list)
    for t in eng.txns:
        by_page[t.page].append(t)
    for pid, ts in by_page.items():
        main = [t for t in ts if t.role == "main"]
        emb = [t for t in ts if t.role == "embedded"]
        assert len(main) == 1 and 4 <= len(emb) <= 6, pid
        assert all(e.start >= main[0].end for e in emb), pid        # only after the main object
        pg = next(p for p in eng.pages if p.pid == pid)
        assert pg.end >= max(t.end for t in ts) and pg.start <= main[0].start
        assert pg.objects == len(ts)
    by_user = collections.defaultdict(list)
    for t in eng.txns:
        by_user[t.user].append(t)
    for u, ts in by_user.items():
        # never more than N = 2 transactions (connections) at once
        events = sorted([(t.start, 1) for t in ts] + [(t.end, -1) for t in ts])
        level = peak = 0
        for _, d in events:
            level += d
            peak = max(peak, level)
        assert peak <= 2, u
        # within a session, keep-alive: two connections carry all its pages
        for s in {t.page.rsplit(".", 1)[0] for t in ts}:
            assert {t.conn for t in ts if t.page.startswith(s + ".")} <= {1, 2}
    # the proxy saw at most 2 connections per user session
    sessions_of = collections.Counter(t.addr for t in eng.txns if t.role == "main"
                                      and t.page.endswith(".1"))
    for addr, n in collections.Counter(mini_proxy.accepted).items():
        assert n <= 2 * sessions_of[addr], addr
    rows = list(csv.DictReader(open(tmp_path / "pages.csv")))
    assert len(rows) == len(eng.pages) and all(float(r["load_ms"]) > 0 for r in rows)
    rep = eng.report()
    assert rep["g"]["pages"] == len(eng.pages) and rep["g"]["page_p95_ms"] > 0


def test_load_profile_shape_users_over_time(mini_proxy, tmp_path):
    """Ramp-up to 8 users in 2 s, 2 s steady, ramp-down in 2 s: the users active
    in each second follow the profile (users active at any time of second s:
    the profile's highest level in [s, s + 1], less 1 for the 100-ms tick, plus
    1 for a user finishing its page while told to leave)."""
    m = sessions.PageModel(connections=2, pages_per_session=sessions.Dist("const:1000"),
                           embedded=sessions.Dist("const:1"),
                           main_size=sessions.Dist("const:2000"),
                           embedded_size=sessions.Dist("const:2000"),
                           think_s=sessions.Dist("exp:0.2"))
    c = sessions.ClassLoad("g", [f"127.0.0.{i}" for i in range(80, 100)],
                           [(2, 8), (2, 8), (2, 0)], "users", m)
    s = sessions.ClassLoad("s", [f"127.0.0.{i}" for i in range(100, 140)], [(6, 4)],
                           "sessions_per_s", sessions.PageModel(
                               pages_per_session=sessions.Dist("const:1"),
                               embedded=sessions.Dist("const:0"),
                               main_size=sessions.Dist("const:100")))
    eng, sl = run_sessions(mini_proxy.port, mini_proxy.origin_port, [c, s], 10)
    eng.write(str(tmp_path))
    rows = [r for r in csv.DictReader(open(tmp_path / "persecond.csv")) if r["class"] == "g"]
    got = [int(r["active_users"]) for r in rows][:6]
    want = [max(c.level(sec + k / 10) for k in range(11)) for sec in range(6)]
    assert want == [4, 8, 8, 8, 8, 4]
    for g, w in zip(got, want):
        assert w - 1 <= g <= w + 1, (got, want)
    assert sl.no_address == 0
    # sessions per second: 0 -> 4 /s over 6 s is 12 sessions (+-1 for the tick)
    started = {t.user for t in eng.txns if t.cls == "s"}
    assert 11 <= len(started) <= 13


def test_page_composition_from_a_log(tmp_path):
    """A client's GET more than 1 s after its previous request ended starts a
    page; the GETs before the next such one are its embedded objects."""
    def line(t, elapsed, client, size, method="GET", url="http://s/x"):
        return f"{t:.3f} {elapsed} {client} TCP_MISS/200 {size} {method} {url} - HIER_DIRECT/1.2.3.4 -\n"
    log = (line(1000.5, 500, "a", 5000) + line(1000.8, 300, "a", 40)      # page 1 + 1 embedded
           + line(1001.0, 200, "a", 60) + line(1001.6, 100, "b", 100)      # + 1 more; b's page
           + line(1002.0, 300, "b", 300) + line(1006.0, 500, "a", 7000)    # b's embedded; a page 3
           + line(1006.2, 0, "a", 1, "CONNECT", "h:443"))                  # not a GET: ignored
    (tmp_path / "a.log").write_text(log)
    d = sessions.log_pages("a.log", str(tmp_path))
    assert sorted(d["main_size"].values) == [100, 5000, 7000]
    assert sorted(d["embedded"].values) == [0, 1, 2]
    assert sorted(d["embedded_size"].values) == [40, 60, 300]
    assert [round(x, 3) for x in d["think_s"].values] == [4.5]       # 1001.0 -> 1005.5
    rng = random.Random(1)
    assert d["embedded"].count(rng) in (0, 1, 2) and d["main_size"].size(rng) in (100, 5000, 7000)
    classes, _, _ = sessions.load_profile(
        {"classes": [{"name": "g", "addrs": "10.0.0.1", "users": [[1, 1]],
                      "page_log": "a.log", "think_s": "const:2"}]}, str(tmp_path))
    m = classes[0].model
    assert m.embedded.kind == "empirical" and m.think_s.spec == "const:2"   # a key given wins
    with pytest.raises(ValueError, match="no main object sizes"):
        sessions.pages_of_log([])


def test_users_beyond_the_address_range_are_counted_not_started_and_log_in(mini_proxy):
    m = sessions.PageModel(connections=1, pages_per_session=sessions.Dist("const:1000"),
                           embedded=sessions.Dist("const:0"), main_size=sessions.Dist("const:10"),
                           think_s=sessions.Dist("const:0.2"))
    c = sessions.ClassLoad("g", ["127.0.0.150", "127.0.0.151"], [(0.2, 5), (1, 5)], "users", m)
    c.login = "g{n}"
    eng, sl = run_sessions(mini_proxy.port, mini_proxy.origin_port, [c], 5, password="pw")
    assert {t.addr for t in eng.txns} == {"127.0.0.150", "127.0.0.151"}
    creds = {h.split(b"Proxy-Authorization: Basic ")[1].split(b"\r\n")[0]
             for h in mini_proxy.heads}
    assert creds == {base64.b64encode(b"g1:pw"), base64.b64encode(b"g2:pw")}
    assert len(eng.users) == 2 and sl.no_address == 3
