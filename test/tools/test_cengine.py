# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-load sessions --engine c (reqsched-loadc, cengine.py) against
the Python engine, through a local forward proxy; the plan parser's errors."""
import collections
import csv
import json
import random
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import MiniProxy
from reqsched_tools import cengine, load

pytestmark = pytest.mark.skipif(not cengine.installed(), reason="make loadgen first")

# class s: a deterministic run (every arrival's one session ends before the
# profile does); class g: users that come and go (timing decides how many pages)
PROFILE = {"servers": "127.0.0.1", "classes": [
    {"name": "s", "addrs": "127.0.0.100-139", "sessions_per_s": [[1, 6], [1, 6], [1, 0], [1, 0]],
     "connections": 2, "pages_per_session": "const:2", "embedded": "uniform:1:6",
     "main_size": "uniform:100:30000", "embedded_size": "uniform:100:80000",
     "think_s": "const:0.05"},
    {"name": "g", "addrs": "127.0.0.70-73", "users": [[1, 4], [2, 4], [1, 0]],
     "connections": 3, "pages_per_session": "const:3", "embedded": "uniform:2:8",
     "main_size": "const:20000", "embedded_size": "uniform:1000:60000",
     "think_s": "exp:0.1", "login": "g{n}"}]}


def run(tmp_path, proxy_port: int, origin_port: int, engine: str, profile=None) -> dict:
    prof = tmp_path / "profile.json"
    prof.write_text(json.dumps(dict(profile or PROFILE, http_port=origin_port)))
    out = tmp_path / engine
    rc = load.main(["sessions", str(prof), "--proxy", f"127.0.0.1:{proxy_port}", "--out",
                    str(out), "--no-plots", "--timeout", "10", "--seed", "7", "--engine", engine,
                    "--proxy-password", "pw"])
    assert rc == 0
    rows = list(csv.DictReader(open(out / "requests.csv")))
    pages = list(csv.DictReader(open(out / "pages.csv")))
    per = list(csv.DictReader(open(out / "persecond.csv")))
    return {"rows": rows, "pages": pages, "persecond": per,
            "replay": json.load(open(out / "replay.json"))}


def content(rows: list[dict], cls: str) -> list[tuple]:
    keys = ("id", "user", "class", "url", "bytes", "status", "error", "method", "page", "role")
    return sorted(tuple(r[k] for k in keys) for r in rows if r["class"] == cls)


def page_order(rows: list[dict], cls: str) -> dict[str, list[str]]:
    out = collections.defaultdict(list)
    for r in sorted((r for r in rows if r["class"] == cls and r["role"] == "main"),
                    key=lambda r: float(r["start"])):
        out[r["user"]].append(r["page"])
    return dict(out)


def check_pages_and_connections(rows: list[dict], n_of: dict[str, int]) -> None:
    """Embedded objects only after their main object; never more than the
    class's N transactions at once per user; N connections per session."""
    by_page = collections.defaultdict(list)
    for r in rows:
        by_page[r["page"]].append(r)
    for pid, rs in by_page.items():
        main = [r for r in rs if r["role"] == "main"]
        assert len(main) == 1, pid
        assert all(float(r["start"]) >= float(main[0]["end"]) for r in rs
                   if r["role"] == "embedded"), pid
    by_user = collections.defaultdict(list)
    for r in rows:
        by_user[r["user"]].append(r)
    for u, rs in by_user.items():
        n = n_of[rs[0]["class"]]
        level = peak = 0
        for _, d in sorted([(float(r["start"]), 1) for r in rs] +
                           [(float(r["end"]), -1) for r in rs]):
            level += d
            peak = max(peak, level)
        assert peak <= n, u
        for s in {r["page"].rsplit(".", 1)[0] for r in rs}:
            assert {int(r["conn"]) for r in rs if r["page"].startswith(s + ".")} \
                <= set(range(1, n + 1)), (u, s)


def test_c_engine_gives_the_python_engines_requests(mini_proxy, tmp_path):
    py = run(tmp_path, mini_proxy.port, mini_proxy.origin_port, "python")
    heads_py = len(mini_proxy.heads)
    c = run(tmp_path, mini_proxy.port, mini_proxy.origin_port, "c")
    # the deterministic class: the same transactions (methods, URLs, sizes,
    # statuses, pages, roles), the same pages in the same order per user
    assert content(c["rows"], "s") == content(py["rows"], "s")
    assert len(content(c["rows"], "s")) > 40
    assert page_order(c["rows"], "s") == page_order(py["rows"], "s")
    key = ("page", "user", "class", "objects", "bytes", "errors")
    assert (sorted(tuple(p[k] for k in key) for p in c["pages"] if p["class"] == "s") ==
            sorted(tuple(p[k] for k in key) for p in py["pages"] if p["class"] == "s"))
    for run_ in (py, c):
        rows = run_["rows"]
        assert all(r["error"] == "" and r["status"] == "200" for r in rows)
        assert all(int(r["bytes"]) > 0 and r["method"] == "GET" for r in rows)
        check_pages_and_connections(rows, {"s": 2, "g": 3})
        # every user on its own address of its class while it runs
        addrs = {r["user"]: r["addr"] for r in rows}
        assert all(a.startswith("127.0.0.") for a in addrs.values())
        assert {r["class"] for r in rows} == {"s", "g"}
        # the per-second table sums to the transactions
        assert sum(int(p["transactions"]) for p in run_["persecond"] if p["class"] == "all") \
            == len(rows)
        assert run_["replay"]["completed"] == len(rows)
    # class g's users log in; users of both engines ramp to 4 at once
    creds = [h for h in mini_proxy.heads[heads_py:] if b"Proxy-Authorization" in h]
    assert creds and all(b"/page/g-" in h for h in creds)
    assert max(int(p["active_users"]) for p in c["persecond"] if p["class"] == "g") in (4, 5)


def test_chunked_answers_count_as_their_bodies(start_origin, tmp_path):
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"default": {"chunked": True}}))
    px = MiniProxy(start_origin("--server-config", str(cfg))[1])
    try:
        prof = {"servers": "127.0.0.1", "classes": [PROFILE["classes"][0]]}
        c = run(tmp_path, px.port, px.origin_port, "c", prof)
    finally:
        px.close()
    rows = c["rows"]
    assert rows and all(r["error"] == "" for r in rows)
    # the body is the size asked for (X-Reqsched-Size), without the chunk framing
    sizes = {r["id"]: int(r["bytes"]) for r in rows}
    assert len(set(sizes.values())) > 10 and min(sizes.values()) >= 100


PLAN_HEAD = "class g 2\naddr g 127.0.0.1\nuser u1 g 0 -1 - 0\n"


@pytest.mark.parametrize("plan,line,msg", [
    ("class g 0\n", 1, "CONNECTIONS"),
    ("class g 2\nclass g 3\n", 2, "twice"),
    ("class g 2\naddr g 300.0.0.1\n", 2, "IPv4"),
    ("class g 2\nuser u1 x 0 1 - 0\n", 2, "unknown class"),
    (PLAN_HEAD + "bogus line\n", 4, "unknown line kind"),
    (PLAN_HEAD + "obj GET 10 200 0 0 http://h/\n", 4, "without its page"),
    (PLAN_HEAD + "page u1 u1.1.1 1 0 2\nobj GET 10 200 0 0 http://h/\nend u1\n", 6, "fewer"),
    (PLAN_HEAD + "page u1 u1.1.1 1 0 1\nobj GET -5 200 0 0 http://h/\n", 5, "SIZE"),
    (PLAN_HEAD + "page u1 u1.1.1 1 0 1\nobj GET 5 200 0 0 ftp://h/\n", 5, "URL"),
    (PLAN_HEAD + "page u2 u2.1.1 1 0 1\n", 4, "unknown user"),
    (PLAN_HEAD + "user u2 g 5 1 - 0\n", 4, "leaves before"),
    (PLAN_HEAD + "user u3 g nan -1 - 0\n", 4, "START"),
    (PLAN_HEAD + "start\nuser u2 g 0 -1 - 0\n", 5, "before start"),
    (PLAN_HEAD + "page u1 u1.1.1 1 0 1\x07\n", 4, "printable"),
    (PLAN_HEAD + "end  u1\n", 4, "empty field"),
    (PLAN_HEAD + "end " + "u" * 9000 + "\n", 4, "longer than"),
    (PLAN_HEAD, 3, "ended before start"),
])
def test_bad_plan_lines_are_reported_with_their_line_number(plan, line, msg, tmp_path):
    p = subprocess.run([str(cengine.LOADC), "--proxy", "127.0.0.1:9", "--out", str(tmp_path),
                        "--duration", "5"], input=plan.encode(), capture_output=True,
                       timeout=10)
    assert p.returncode == 2
    err = p.stderr.decode()
    assert f"plan line {line}: " in err and msg in err, err


def test_mutated_plans_never_crash_the_parser(tmp_path):
    """Random byte changes of a good plan: a parse error (2) or a run (0),
    never a signal, within the run's bound."""
    good = (PLAN_HEAD + "page u1 u1.1.1 1 0 2\nobj GET 10 200 0 0 http://127.0.0.1:9/a\n"
            "obj HEAD 0 204 0 5 http://127.0.0.1:9/b\nend u1\nstart\n").encode()
    rng = random.Random(14)
    for _ in range(60):
        b = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(b))
            b[i] = rng.choice(b" \n-0123456789.x\x00\xff:/")
        p = subprocess.run([str(cengine.LOADC), "--proxy", "127.0.0.1:9", "--out",
                            str(tmp_path), "--duration", "1", "--timeout", "0.5"],
                           input=bytes(b), capture_output=True, timeout=10)
        assert p.returncode in (0, 2), (bytes(b), p.returncode, p.stderr[-300:])


def test_a_keepalive_connection_the_proxy_closed_is_retried(tmp_path):
    """A proxy that closes each connection after one keep-alive answer: the
    replay's second request goes on a new connection, marked retried, as the
    Python engine does (test_logreplay.py)."""
    srv = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        for _ in range(2):
            c, _ = srv.accept()
            with c:
                head = b""
                while b"\r\n\r\n" not in head:
                    head += c.recv(4096)
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
    th = threading.Thread(target=serve, daemon=True)
    th.start()
    log = tmp_path / "access.log"
    log.write_text("".join(f"{6000.0 + 0.3 * k:.3f} 100 10.1.0.1 TCP_MISS/200 5 GET "
                           f"http://a.example/{k} - HIER_DIRECT/1.2.3.4 -\n" for k in range(2)))
    out = tmp_path / "out"
    assert load.main(["replay", str(log), "--proxy", f"127.0.0.1:{srv.getsockname()[1]}",
                      "--servers", "127.0.0.1", "--out", str(out), "--no-plots",
                      "--default-addrs", "127.0.0.40", "--closed-loop", "--timeout", "5"]) == 0
    th.join(5)
    srv.close()
    rows = list(csv.DictReader(open(out / "requests.csv")))
    assert [(r["status"], r["bytes"], r["error"], r["conn"], r["retried"]) for r in rows] == \
        [("200", "5", "", "1", "0"), ("200", "5", "", "2", "1")]


@pytest.mark.parametrize("mode", [[], ["--closed-loop"]])
def test_c_engine_replays_a_log_as_the_python_engine(mini_proxy, tmp_path, mode):
    """The same requests (ids, users, methods, URLs, sizes, statuses, their
    due times when open loop) in the same order per user, CONNECT included."""
    lines = []
    for k in range(30):
        method = ("GET", "HEAD", "POST", "GET", "CONNECT")[k % 5]
        url = "s.example:443" if method == "CONNECT" else f"http://s{k % 3}.example/o{k % 7}"
        lines.append(f"{7000.0 + 0.05 * k:.3f} 20 10.1.0.{k % 4} TCP_MISS/"
                     f"{(200, 404, 201, 304, 200)[k % 5]} {100 * k + 1} {method} {url} - "
                     "HIER_DIRECT/1.2.3.4 -\n")
    log = tmp_path / "access.log"
    log.write_text("".join(lines))
    got = {}
    for engine in ("python", "c"):
        out = tmp_path / engine
        assert load.main(["replay", str(log), "--proxy", f"127.0.0.1:{mini_proxy.port}",
                          "--servers", "127.0.0.1", "--http-port", str(mini_proxy.origin_port),
                          "--tunnel-port", str(mini_proxy.origin_port), "--out", str(out),
                          "--no-plots", "--default-addrs", "127.0.0.40-49", "--engine", engine,
                          *mode]) == 0
        rows = list(csv.DictReader(open(out / "requests.csv")))
        assert len(rows) == 30 and all(r["error"] == "" for r in rows)
        by_user = collections.defaultdict(list)
        for r in sorted(rows, key=lambda r: float(r["start"])):
            by_user[r["user"]].append(r["id"])
        keys = ("id", "user", "class", "addr", "url", "method", "bytes", "status")
        got[engine] = (sorted(tuple(r[k] for k in keys) +
                              ((r["sched"],) if not mode else ()) for r in rows), dict(by_user))
    assert got["c"] == got["python"]


def test_sigint_stops_the_c_engine_and_the_run_is_written(mini_proxy, tmp_path):
    """SIGINT to reqsched-load (the terminal's goes to both processes; this
    one only to the Python process, which passes it on): the engine cuts what
    is in flight, the run is written and marked interrupted, exit 130."""
    prof = tmp_path / "profile.json"
    prof.write_text(json.dumps(dict(PROFILE, classes=[PROFILE["classes"][1]],
                                    http_port=mini_proxy.origin_port)))
    out = tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-m", "reqsched_tools.load", "sessions", str(prof),
                          "--proxy", f"127.0.0.1:{mini_proxy.port}", "--out", str(out),
                          "--no-plots", "--timeout", "5", "--engine", "c"],
                         stderr=subprocess.PIPE, text=True)
    time.sleep(2.0)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    info = json.load(open(out / "replay.json"))
    # cut at the signal, 2 s after the start of the command (the run's own
    # clock starts after the plan is drawn: 0.9 s later on a loaded VM)
    assert info["interrupted"] and 0 < info["duration_s"] < 3.0
    rows = list(csv.DictReader(open(out / "requests.csv")))
    assert rows and all(float(r["start"]) <= info["duration_s"] for r in rows)
    assert not (out / "engine").exists()
