# SPDX-License-Identifier: GPL-2.0-or-later
"""Faithful log replay (reqsched-load replay): client map, per-client plans,
the log summary, and a replay through a loopback proxy whose start times,
methods, statuses and sizes are the log's."""
import asyncio
import base64
import csv
import io
import json

import pytest

from reqsched_tools import load, logparse, logreplay
from reqsched_tools.loadengine import Engine


def entries(text):
    st = logparse.ParseStats()
    return logparse.parse_access_log(io.StringIO(text), st), st


def native(t, elapsed, client, status, size, method, url):
    return (f"{t:.3f} {elapsed} {client} TCP_MISS/{status} {size} {method} {url} - "
            f"HIER_DIRECT/192.0.2.1 text/html\n")


def test_client_map_rules_and_defaults(tmp_path):
    f = tmp_path / "map"
    f.write_text("# comment\n10.1.0.0/24 gold 10.10.1.1-2\nlogin:bob silver 10.10.2.7\n")
    cm = logreplay.ClientMap.load(str(f), ["10.9.9.9 bronze 10.10.3.1"], "other",
                                  "10.10.4.1-3")
    assert cm.assign("10.1.0.5", "-") == ("gold", "10.10.1.1")
    assert cm.assign("10.1.0.6", "-") == ("gold", "10.10.1.2")
    assert cm.assign("10.1.0.7", "-") == ("gold", "10.10.1.1")   # shared round-robin
    assert cm.shared() == 1
    assert cm.assign("10.2.0.1", "bob") == ("silver", "10.10.2.7")
    assert cm.assign("10.9.9.9", "-") == ("bronze", "10.10.3.1")
    assert cm.assign("host.example", "-") == ("other", "10.10.4.1")
    f.write_text("10.1.0.0/33 gold 10.10.1.1\n")
    with pytest.raises(ValueError, match="map:1"):
        logreplay.ClientMap.load(str(f), [], "d", "10.10.4.1")
    with pytest.raises(ValueError, match="MATCH CLASS ADDRESSES"):
        logreplay.parse_rule("10.1.0.1 gold")


def test_plan_keeps_per_client_order_scaled_times_and_repeats():
    log = (native(1000.5, 500, "10.1.0.1", 200, 5000, "GET", "http://a.example/p?x=1")
           + native(1000.2, 100, "10.1.0.2", 304, 250, "GET", "http://b.example/q")
           + native(1003.0, 1000, "10.1.0.1", 200, 700, "POST", "http://a.example/form")
           + native(1004.0, 0, "10.1.0.2", 0, 0, "GET", "http://b.example/q")
           + native(1006.0, 3000, "10.1.0.1", 200, 9000, "CONNECT", "mail.example:993")
           + native(1006.5, 100, "10.1.0.1", 200, 0, "HEAD", "http://a.example/p?x=1"))
    es, _ = entries(log)
    cm = logreplay.ClientMap([logreplay.parse_rule("10.1.0.1 gold 10.10.1.9")],
                             logreplay.parse_rule("* def 10.10.2.1-5"))
    users = logreplay.plan(es, cm, ["10.20.0.1", "10.20.0.2"], time_scale=0.5,
                           http_port=8080, tunnel_port=8443, post_bytes=77, max_age=60)
    u1, u2 = sorted(users, key=lambda u: u.client)
    assert (u1.cls, u1.addr, u2.cls, u2.addr) == ("gold", "10.10.1.9", "def", "10.10.2.1")
    # starts are logged time - elapsed: 1000.0, 1000.1, 1002.0, 1003.0, 1004.0, 1006.4
    assert [round(s.at, 3) for s in u1.steps] == [0.0, 1.0, 1.5, 3.2]
    assert [round(s.at, 3) for s in u2.steps] == [0.05, 2.0]
    assert [s.spec.method for s in u1.steps] == ["GET", "POST", "CONNECT", "HEAD"]
    # closed-loop think: this start - the previous end (1000.5, 1003.0, 1006.0), scaled
    assert [round(s.think, 3) for s in u1.steps] == [0.0, 0.75, 0.0, 0.2]
    get, post, conn, head = (s.spec for s in u1.steps)
    assert get.url.startswith("http://10.20.0.") and get.url.endswith(":8080/p?x=1")
    assert head.url == get.url                               # a repeat stays a repeat
    assert (get.size, get.status, get.max_age) == (5000, 200, 60)
    assert (post.body, post.status, post.size, post.max_age) == (77, 200, 700, 0)
    assert conn.url.endswith(":8443") and conn.size == 9000
    assert [s.spec.status for s in u2.steps] == [304, 200]  # no status logged: 200


def test_summary_counts_the_log():
    log = (native(10.0, 0, "c1", 200, 100, "GET", "http://a/x")
           + native(12.0, 0, "c2", 200, 300, "GET", "http://a/x")
           + native(15.0, 1000, "c2", 404, 200, "CONNECT", "h:443") + "garbage\n")
    es, st = entries(log)
    s = logreplay.summary(es, st)
    assert (s["clients"], s["requests"], s["bytes"], s["malformed"]) == (2, 3, 600, 1)
    assert s["duration_s"] == 5.0 and s["repeated_requests"] == 1
    assert s["methods"] == {"GET": 2, "CONNECT": 1}
    assert s["statuses"] == {"2xx": 2, "4xx": 1}
    assert s["size_bytes"]["p50"] == 200 and s["size_bytes"]["max"] == 300
    assert "3 requests from 2 clients" in logreplay.format_summary(s)


def replay_log(text, proxy_port, origin_port, tmp_path, *extra):
    log = tmp_path / "access.log"
    log.write_text(text)
    out = tmp_path / "out"
    rc = load.main(["replay", str(log), "--proxy", f"127.0.0.1:{proxy_port}",
                    "--servers", "127.0.0.1", "--http-port", str(origin_port),
                    "--tunnel-port", str(origin_port), "--progress-s", "0.5",
                    "--out", str(out), "--default-addrs", "127.0.0.40-49", *extra])
    assert rc == 0
    return list(csv.DictReader(open(out / "requests.csv"))), out


def test_open_loop_replay_keeps_start_times_methods_statuses_sizes(mini_proxy, tmp_path):
    """Timing fidelity: every request starts within 60 ms of its scaled logged
    start (the loaded 2-core machine's scheduling jitter is a few ms), in the
    log's order per client; statuses, sizes and methods are the log's."""
    lines = []
    clients = [f"10.1.0.{i}" for i in range(1, 5)]
    for k in range(24):
        c = clients[k % 4]
        t = 2000.0 + 0.23 * k + 0.05 * (k % 3)
        method = ("GET", "HEAD", "POST", "GET")[k % 4]
        status = (200, 404, 201, 304)[k % 4] if k % 5 else 200
        lines.append(native(t, 0, c, status, 100 * k + 1, method, f"http://s{k % 3}.example/o{k % 6}"))
    lines.append(native(2001.0, 0, "10.1.0.1", 200, 4321, "CONNECT", "secure.example:443"))
    rows, out = replay_log("".join(lines), mini_proxy.port, mini_proxy.origin_port, tmp_path,
                           "--time-scale", "0.5")
    assert len(rows) == 25 and all(r["error"] == "" for r in rows)
    late = [float(r["start"]) - float(r["sched"]) for r in rows]
    assert max(late) < 0.06 and min(late) >= 0
    es, _ = entries("".join(lines))
    t0 = min(e.start for e in es)
    by_user: dict = {}
    for r in rows:
        by_user.setdefault(r["user"], []).append(r)
    assert len(by_user) == 4
    assert sorted({r["addr"] for r in rows}) == [f"127.0.0.{i}" for i in range(40, 44)]
    logged = sorted(((e.start - t0) * 0.5, e.method, e.status, e.bytes) for e in es)
    got = sorted((float(r["sched"]), r["method"], int(r["status"]), int(r["bytes"]))
                 for r in rows)
    for (at, m, st, size), (sched, gm, gst, gsize) in zip(logged, got):
        assert abs(at - sched) < 1e-3 and m == gm and st == gst
        assert gsize == (0 if m == "HEAD" or st == 304 else size)
    for rs in by_user.values():
        starts = [float(r["start"]) for r in rs]
        assert starts == sorted(starts)
    assert mini_proxy.connects == [f"127.0.0.1:{mini_proxy.origin_port}"]
    summary = json.load(open(out / "replay.json"))
    assert summary["log"]["requests"] == 25 and summary["completed"] == 25
    ps = list(csv.DictReader(open(out / "persecond.csv")))
    assert sum(int(r["transactions"]) for r in ps if r["class"] == "all") == 25
    assert (out / "persecond.png").stat().st_size > 10_000
    assert max(int(r["active_users"]) for r in ps if r["class"] == "all") == 4


def test_closed_loop_waits_the_think_times(mini_proxy, tmp_path):
    """One client, 4 requests whose logged gaps (end to next start) are 0.4 s:
    closed loop at scale 1 starts each >= 0.4 s after the previous end."""
    lines = "".join(native(3000.0 + 0.5 * k + 0.1, 100, "10.1.0.1", 200, 1000, "GET",
                           f"http://a.example/{k}") for k in range(4))
    rows, _ = replay_log(lines, mini_proxy.port, mini_proxy.origin_port, tmp_path,
                         "--closed-loop")
    assert len(rows) == 4 and all(r["error"] == "" for r in rows)
    for a, b in zip(rows, rows[1:]):
        gap = float(b["start"]) - float(a["end"])
        assert 0.38 < gap < 0.5
    assert {r["conn"] for r in rows} == {"1"}                  # one keep-alive connection


def test_replay_cli_rejects_bad_arguments(tmp_path, capsys):
    log = tmp_path / "l"
    log.write_text("garbage only\n")
    assert load.main(["replay", str(log)]) == 2
    assert "no request to replay" in capsys.readouterr().err
    for bad in (["--time-scale", "0"], ["--time-scale", "nan"], ["--max-conns", "0"],
                ["--post-bytes", "-1"]):
        with pytest.raises(SystemExit):
            load.main(["replay", str(log), *bad])
    assert load.main(["replay", str(log), "--map", "bad rule"]) == 2


def test_engine_reads_head_chunked_and_errors(start_origin):
    """The engine against the origin as a proxy: HEAD has no body, a chunked
    answer is counted, a refused connection is an error, not a crash."""
    port = start_origin()[1]
    from reqsched_tools.loadengine import Spec, Txn

    async def main():
        eng = Engine(("127.0.0.1", port), timeout=5, progress_s=60)
        conn = None
        out = []
        for method, url in (("HEAD", "/h"), ("GET", "/c?chunked=1"), ("GET", "/s?status=503")):
            t = Txn(method + url, "u", "c", "127.0.0.1", method, url, 0.0)
            conn = await eng.run_one(conn, "127.0.0.1", lambda: 1,
                                     t, Spec(method, f"http://127.0.0.1:{port}{url}", 3000))
            out.append(t)
        bad = Engine(("127.0.0.1", 1), timeout=2, progress_s=60)
        t = Txn("x", "u", "c", "127.0.0.1", "GET", "/", 0.0)
        assert await bad.run_one(None, "127.0.0.1", lambda: 1, t, Spec("GET", "http://h/", 1)) is None
        return out, t

    (head, chunked, s503), refused = asyncio.run(main())
    assert (head.status, head.bytes) == (200, 0)
    assert (chunked.status, chunked.bytes) == (200, 3000)
    assert (s503.status, s503.bytes) == (503, 3000)
    assert refused.error.startswith(("ConnectionRefusedError", "OSError"))


def test_duration_cuts_the_log_and_later_clients_never_start(mini_proxy, tmp_path):
    """--duration 1 of a log whose second client starts 5 s in: one user ran,
    the other is not counted as active (replay.json users, persecond.csv)."""
    lines = (native(4000.0, 0, "10.1.0.1", 200, 100, "GET", "http://a.example/1")
             + native(4005.0, 0, "10.1.0.2", 200, 100, "GET", "http://a.example/2"))
    rows, out = replay_log(lines, mini_proxy.port, mini_proxy.origin_port, tmp_path,
                           "--duration", "1")
    assert [r["addr"] for r in rows] == ["127.0.0.40"]
    info = json.load(open(out / "replay.json"))
    assert [u["addr"] for u in info["users"]] == ["127.0.0.40"]
    assert 0.9 < info["duration_s"] < 1.5
    ps = list(csv.DictReader(open(out / "persecond.csv")))
    assert max(int(r["active_users"]) for r in ps if r["class"] == "all") == 1


def test_request_on_a_keepalive_connection_the_proxy_closed_is_sent_again():
    """A proxy that closes each connection after one keep-alive answer (an idle
    timeout racing the next request): the second request goes again on a new
    connection instead of failing."""
    from reqsched_tools.loadengine import Spec, Txn

    async def one_answer(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
        await writer.drain()
        writer.close()

    async def main():
        srv = await asyncio.start_server(one_answer, "127.0.0.1", 0)
        eng = Engine(("127.0.0.1", srv.sockets[0].getsockname()[1]), timeout=5, progress_s=60)
        ids = iter(range(1, 10)).__next__
        ts = [Txn(f"r{k}", "u", "c", "127.0.0.1", "GET", "http://h/", 0.0) for k in range(2)]
        conn = None
        for t in ts:
            conn = await eng.run_one(conn, "127.0.0.1", ids, t, Spec("GET", "http://h/x", 5))
            await asyncio.sleep(0.1)
        srv.close()
        return ts

    first, second = asyncio.run(main())
    assert (first.status, first.bytes, first.conn, first.retried) == (200, 5, 1, False)
    assert (second.status, second.bytes, second.error) == (200, 5, "")
    assert second.conn == 2 and second.retried


def test_logged_logins_authenticate_to_the_proxy(mini_proxy, tmp_path):
    """--by-login --proxy-password: a user per logged login, each request with
    Proxy-Authorization Basic LOGIN:PASSWORD; a client without a login sends none."""
    lines = (native(5000.0, 0, "10.1.0.1", 200, 10, "GET", "http://a.example/1")
             .replace(" - HIER", " alice HIER")
             + native(5000.1, 0, "10.1.0.1", 200, 10, "GET", "http://a.example/2")
             .replace(" - HIER", " bob HIER")
             + native(5000.2, 0, "10.1.0.2", 200, 10, "GET", "http://a.example/3"))
    rows, _ = replay_log(lines, mini_proxy.port, mini_proxy.origin_port, tmp_path,
                         "--by-login", "--proxy-password", "s3cret")
    assert len({r["user"] for r in rows}) == 3 and all(r["error"] == "" for r in rows)
    auth = sorted(next((ln.split(b" ")[-1] for ln in h.split(b"\r\n")
                        if ln.startswith(b"Proxy-Authorization:")), b"-")
                  for h in mini_proxy.heads)
    assert auth == [b"-", base64.b64encode(b"alice:s3cret"), base64.b64encode(b"bob:s3cret")]
