# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-prober and reqsched-monitor (the mQoS paper's server prober and
resource monitor): link extraction, the crawl one request at a time between
two counter readings, costs, capacities by saturation, the page table, and
the monitor's counters from /proc, cgroup v1 and sysfs trees."""
from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from reqsched_tools import monitor, prober
from reqsched_tools.monitor import Counters

# the site: path -> (content type, body, what serving it costs: cpu s, disk B, sent B)
SITE = {
    "/": ("text/html", '<a href="/a.html">a</a> <img src="/p.jpg"> <a href="#top">x</a>'
          '<a href="http://elsewhere.test/">off site</a> <script src="/s.js"></script>',
          (0.01, 0, 1000)),
    "/a.html": ("text/html; charset=utf-8", '<a href="/">home</a><a href="b.html#frag">b</a>'
                '<link rel="stylesheet" href="/s.css">', (0.2, 0, 2000)),
    "/b.html": ("text/html", "<p>no links</p>", (0.05, 4096, 500)),
    "/p.jpg": ("image/jpeg", "x" * 100, (0.001, 65536, 70000)),
    "/s.js": ("application/javascript", "<a href='/never.html'>", (0.0, 0, 300)),
    "/s.css": ("text/css", "body{}", (0.0, 0, 200)),
}


class Server:
    """The site on a loopback port; every request adds its cost to the
    counters that read() returns, as reqsched-monitor would see it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.cpu, self.disk, self.tx, self.hits = 0.0, 0, 0, 0
        outer = self

        class H(BaseHTTPRequestHandler):
            def do_GET(self) -> None:   # noqa: N802
                page = SITE.get(self.path)
                with outer.lock:
                    outer.hits += 1
                    if page:
                        c = page[2]
                        outer.cpu += c[0]
                        outer.disk += c[1]
                        outer.tx += c[2]
                if not page:
                    self.send_error(404)
                    return
                body = page[1].encode()
                self.send_response(200)
                self.send_header("Content-Type", page[0])
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, fmt: str, *args: object) -> None:
                pass

        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.base = f"http://127.0.0.1:{self.srv.server_address[1]}"
        self.thread = threading.Thread(target=self.srv.serve_forever, daemon=True)
        self.thread.start()

    def read(self) -> Counters:
        with self.lock:
            return Counters(0.0, self.cpu, self.disk, self.tx)


@pytest.fixture
def site() -> Iterator[Server]:
    s = Server()
    yield s
    s.srv.shutdown()
    s.srv.server_close()


def test_links_same_site_objects_no_fragments() -> None:
    got = prober.links("http://w.test/dir/page.html",
                       '<a href="x.html#f">1</a><a href="x.html">2</a><img src="/i.png">'
                       '<a href="https://w.test/tls">3</a><a href="http://o.test/">4</a>'
                       '<iframe src="f.html"></iframe><source src="v.mp4"><a>none</a>')
    assert got == ["http://w.test/dir/x.html", "http://w.test/i.png",
                   "http://w.test/dir/f.html", "http://w.test/dir/v.mp4"]


def test_crawl_measures_each_page_alone(site: Server) -> None:
    samples = prober.crawl(site.base + "/", prober.http_fetch(), site.read)
    urls = [s.url[len(site.base):] for s in samples]
    # breadth first: the home page's links, then a.html's; /s.js is fetched
    # but not parsed (not HTML); elsewhere.test and #top are not followed
    assert urls == ["/", "/a.html", "/p.jpg", "/s.js", "/b.html", "/s.css"]
    # one request between two readings: each consumed exactly its page's cost
    assert site.hits == len(urls)
    for s in samples:
        want = SITE[s.url[len(site.base):]][2]
        assert s.consumed == pytest.approx((want[0], float(want[1]), float(want[2])))
        assert s.seconds > 0


def test_crawl_stops_at_max_pages(site: Server) -> None:
    assert len(prober.crawl(site.base + "/", prober.http_fetch(), site.read, max_pages=2)) == 2


def test_costs_percent_of_capacity_while_served() -> None:
    s = prober.Sample("u", 0.5, (0.25, 1e6, 5e6))
    # 0.5 core of 2, 2 MB/s of 80 MB/s, 10 MB/s of 12.5 MB/s
    assert prober.costs(s, (2.0, 80e6, 12.5e6)) == pytest.approx((25.0, 2.5, 80.0))
    assert prober.costs(prober.Sample("u", 0.1, (1.0, 0, 0)), (2.0, 1, 1))[0] == 100.0


def test_saturate_and_capacity(site: Server) -> None:
    t = [0.0]

    def clock() -> float:       # each fetch advances time by 10 ms
        return t[0]

    fetch = prober.http_fetch()

    def timed_fetch(url: str) -> tuple[bytes, str]:
        t[0] += 0.01
        return fetch(url)

    def read() -> Counters:
        c = site.read()
        return Counters(t[0], c.cpu_s, c.disk_read_bytes, c.net_tx_bytes)

    rates = prober.saturate(site.base + "/p.jpg", timed_fetch, read, clients=1, seconds=0.5,
                            clock=clock)
    # 50 fetches of /p.jpg in 0.5 s: 100 per second
    assert rates == pytest.approx((0.1, 65536 * 100.0, 70000 * 100.0), rel=0.03)
    samples = [prober.Sample(site.base + "/a.html", 1.0, (0.2, 0, 2000)),
               prober.Sample(site.base + "/p.jpg", 1.0, (0.001, 65536, 70000))]
    t[0] = 0.0
    cap = prober.measure_capacity(samples, timed_fetch, read, 1, 0.2)
    assert cap[0] == pytest.approx(0.2 * 100, rel=0.06)       # a.html saturated the CPU
    assert cap[1] == pytest.approx(65536 * 100.0, rel=0.06)   # p.jpg the disk and bandwidth


def test_table_round_trip_and_errors(tmp_path: Path) -> None:
    p = tmp_path / "pages.table"
    prober.write_table(p, (2.0, 8e7, 1.25e7), [("http://w.test/", (1.5, 0.0, 33.333)),
                                               ("http://w.test/p.jpg", (0.1, 40.0, 9.0))])
    cap, rows = prober.read_table(p)
    assert cap == (2.0, 8e7, 1.25e7)
    assert rows == {"http://w.test/": (1.5, 0.0, 33.333), "http://w.test/p.jpg": (0.1, 40.0, 9.0)}
    for bad, why in (("capacity 2 0 1", "one capacity > 0"),
                     ("http://w.test/ 1 2", "URL and one cost in 0..100"),
                     ("http://w.test/ 1 2 101", "URL and one cost in 0..100"),
                     ("resources cpu gpu bw", "resources must be")):
        p.write_text("resources cpu disk bw\ncapacity 1 1 1\n" + bad + "\n")
        with pytest.raises(ValueError, match=f":3: {why}"):
            prober.read_table(p)
    p.write_text("resources cpu disk bw\n")
    with pytest.raises(ValueError, match="no capacity line"):
        prober.read_table(p)


@pytest.mark.parametrize("text", ["cpu=2,disk=1", "cpu=2,disk=1,bw=0", "cpu=2,disk=1,bw=nan",
                                  "cpu=2,cpu=1,disk=1,bw=1", "gpu=1,disk=1,bw=1",
                                  "cpu=2,disk=1,bw=inf"])
def test_bad_capacity_refused(text: str) -> None:
    with pytest.raises(ValueError):
        prober.parse_capacity(text)


def test_main_writes_the_table(site: Server, tmp_path: Path) -> None:
    fake = monitor.serve(site.read, "127.0.0.1", 0)
    threading.Thread(target=fake.serve_forever, daemon=True).start()
    try:
        out = tmp_path / "t"
        rc = prober.main(["--site", site.base + "/", "--monitor",
                          f"http://127.0.0.1:{fake.server_address[1]}",
                          "--capacity", "cpu=1,disk=1e9,bw=1e9", "--out", str(out)])
        assert rc == 0
        cap, rows = prober.read_table(out)
        assert cap == (1.0, 1e9, 1e9) and len(rows) == 6
        assert rows[site.base + "/a.html"][0] > rows[site.base + "/s.css"][0]
    finally:
        fake.shutdown()
        fake.server_close()


# ---- the monitor ----

def fake_proc(root: Path, procs: dict[int, tuple[int, int, int, int]]) -> None:
    """procs: pid -> (ppid, utime ticks, stime ticks, read_bytes)."""
    for pid, (ppid, ut, st, rb) in procs.items():
        d = root / str(pid)
        d.mkdir(parents=True)
        # comm with a space and a ')' as the kernel allows
        fields = ["S", str(ppid)] + ["0"] * 9 + [str(ut), str(st)] + ["0"] * 10
        (d / "stat").write_text(f"{pid} (ap ache) ) " + " ".join(fields) + "\n")
        (d / "io").write_text(f"rchar: 99\nread_bytes: {rb}\nwrite_bytes: 7\n")
    (root / "self").mkdir(exist_ok=True)


def test_monitor_process_tree(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    fake_proc(proc, {100: (1, 50, 30, 4096), 101: (100, 100, 20, 8192),
                     102: (101, 10, 0, 0), 200: (1, 999, 999, 999)})
    sysfs = tmp_path / "sys"
    (sysfs / "class/net/eth9/statistics").mkdir(parents=True)
    (sysfs / "class/net/eth9/statistics/tx_bytes").write_text("123456\n")
    assert monitor.descendants(proc, 100) == [100, 101, 102]
    c = monitor.reader(pid=100, iface="eth9", proc=proc, sysfs=sysfs, ticks=100)()
    assert c.cpu_s == pytest.approx(2.1)            # (80 + 120 + 10) ticks / 100
    assert c.disk_read_bytes == 12288 and c.net_tx_bytes == 123456


def test_monitor_cgroup_v1(tmp_path: Path) -> None:
    cg = tmp_path / "cgroup"
    (cg / "cpuacct/web").mkdir(parents=True)
    (cg / "blkio/web").mkdir(parents=True)
    (cg / "cpuacct/web/cpuacct.usage").write_text("2500000000\n")
    (cg / "blkio/web/blkio.throttle.io_service_bytes").write_text(
        "8:0 Read 1000\n8:0 Write 5\n8:16 Read 24\n8:0 Total 1005\nTotal 1029\n")
    c = monitor.reader(cgroup="web", cgroup_root=cg)()
    assert c.cpu_s == 2.5 and c.disk_read_bytes == 1024 and c.net_tx_bytes == 0
    with pytest.raises(ValueError):
        monitor.reader()


def test_monitor_http(tmp_path: Path) -> None:
    n = [0]

    def read() -> Counters:
        n[0] += 1
        return Counters(1.5, 0.25 * n[0], 10, 20)

    srv = monitor.serve(read, "127.0.0.1", 0, str(tmp_path / "port"))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        hostport = (tmp_path / "port").read_text().strip()
        with urllib.request.urlopen(f"http://{hostport}/counters", timeout=5) as r:
            assert json.loads(r.read()) == {"t": 1.5, "cpu_s": 0.25, "disk_read_bytes": 10,
                                            "net_tx_bytes": 20}
        assert prober.monitor_read(f"http://{hostport}")().cpu_s == 0.5
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f"http://{hostport}/other", timeout=5)
    finally:
        srv.shutdown()
        srv.server_close()
