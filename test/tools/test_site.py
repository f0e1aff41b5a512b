# SPDX-License-Identifier: GPL-2.0-or-later
"""The website-gateway scenario's pieces without the testbed: the page table from
the known capacities, the [site] scenario keys and modes, the accelerator config,
reqsched-siteorigin on loopback (CPU time per CGI page, the FIFO disk, refusal
after the queue timeout, the class header), reqsched-siteload against it, and
the report on a hand-made run directory."""
import csv
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from reqsched_tools import scenario, siteload, sitereport, squidconf
from reqsched_tools.siteorigin import SiteConfig, kind_patterns, page_kind, page_table

SCENARIO = os.path.join(scenario.SCENARIO_DIR, "website-gateway.toml")


def test_page_table_from_known_capacities():
    cfg = SiteConfig(cpu_quota=0.5, cgi_cpu_ms=8, cgi_bytes=1800, disk_Bps=1e6,
                     photo_bytes=50_000, media_bytes=199_800)
    rows = {ln.split()[0]: [float(x) for x in ln.split()[1:]]
            for ln in page_table(cfg, 4e6, 0.5).splitlines() if ln.startswith("/")}
    # cost = demand / (capacity x 0.5 s), in %: 8 ms of 0.5 core -> 3.2 %,
    # 2,000 B (1,800 + a 200-B head) of 4 MB/s -> 0.1 %, 50 KB of 1 MB/s -> 10 %
    assert rows == {"/cgi/*": [3.2, 0.0, 0.1], "/photos/*": [0.0, 10.0, 2.51],
                    "/media/*": [0.0, 0.0, 10.0]}
    assert "resources cpu disk bw" in page_table(cfg, 4e6, 0.5)
    big = page_table(SiteConfig(cgi_cpu_ms=1000), 4e6, 0.5)
    assert "/cgi/* 100.000" in big                 # clamped at the whole capacity


def test_kind_patterns_of_a_probed_table():
    rows = {"http://10.20.0.1/": (0.0, 0.0, 0.0), "http://10.20.0.1/cgi/1": (100.0, 0.0, 4.0),
            "http://10.20.0.1/photos/1.jpg": (0.0, 86.2, 18.1),
            "http://10.20.0.1/about.html": (1.0, 0.0, 0.5)}
    assert kind_patterns(rows) == [("/", (0.0, 0.0, 0.0)), ("/cgi/*", (100.0, 0.0, 4.0)),
                                   ("/photos/*", (0.0, 86.2, 18.1)),
                                   ("/about.html", (1.0, 0.0, 0.5))]


def test_page_kind():
    assert [page_kind(t) for t in ("/cgi/3", "/photos/1.jpg", "http://h/media/2.mp4",
                                   "/ready?size=1", "/", "/cgi")] == \
        ["cgi", "photos", "media", "other", "other", "cgi"]


def test_site_scenario_modes_and_errors():
    sc = scenario.load(spec=SCENARIO)
    assert sc.site is not None and [m.name for m in sc.modes] == ["nqos", "sqos", "mqos", "drf"]
    assert sc.modes[0].kind == "stock"
    assert all(m.kind == "reqsched" and not m.pacing and m.window == "fixed-150"
               for m in sc.modes[1:])
    assert sc.site.origin.cpu_quota == 0.5 and sc.site.mix["cgi"] == 0.6
    raw = scenario.load_file(SCENARIO)
    for change, msg in ((dict(modes=["msf"]), "only they"),
                        (dict(site=dict(raw["site"], bogus=1)), "unknown key"),
                        (dict(site=dict(raw["site"], disk_Bps=0)), "must be > 0"),
                        (dict(site=dict(raw["site"], cgi_workers="four")), "cgi_workers"),
                        (dict(site=dict(raw["site"], page_table="probe")), "prober"),
                        (dict(site=dict(raw["site"], mix={"cgi": 1, "video": 1})), "site.mix"),
                        (dict(reqsched={"window": "wrc-mult"}), "fixed window")):
        with pytest.raises(scenario.ScenarioError, match=msg):
            scenario.build(dict(raw, **change))
    no_site = {k: v for k, v in raw.items() if k != "site"}
    with pytest.raises(scenario.ScenarioError, match="only they"):
        scenario.build(no_site)
    assert scenario.build(dict(raw, modes=["mqos:fixed-20"])).modes[0].window == "fixed-20"


def test_accelerator_config(tmp_path):
    sc = scenario.load(spec=SCENARIO)
    conf = open(squidconf.write(sc, sc.modes[2], str(tmp_path), "nobody", True)).read()
    assert "http_port 80 accel defaultsite=www.example.test no-vhost" in conf
    assert "cache_peer 10.20.0.1 parent 80 0 no-query no-digest originserver name=site" in conf
    for line in ("request_sched_policy mqos", "request_sched_window fixed 150",
                 "request_sched_resource cpu", "request_sched_resource bw",
                 f"request_sched_page_table {tmp_path}/site.table",
                 "request_sched_queue_timeout 2 seconds", "request_sched_pacing off"):
        assert line in conf.splitlines(), line
    assert (tmp_path / "site.table").read_text().startswith("# the site's pages")
    nq = open(squidconf.write(sc, sc.modes[0], str(tmp_path), "nobody", True)).read()
    assert "request_scheduler off" in nq and "accel" in nq and "request_sched_resource" not in nq


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def site(tmp_path):
    """start(*args) -> (port, log path): reqsched-siteorigin without a cgroup."""
    procs = []

    def start(*args: str):
        port = free_port()
        log = tmp_path / f"site-{port}.log"
        p = subprocess.Popen([sys.executable, "-m", "reqsched_tools.siteorigin", "--listen",
                              f"127.0.0.1:{port}", "--cpu-quota", "0", "--cgi-workers", "2",
                              "--log", str(log), "--max-runtime", "60", *args],
                             stderr=subprocess.PIPE, text=True)
        procs.append(p)
        assert p.stderr is not None
        assert "listening" in p.stderr.readline()
        return port, log

    yield start
    for p in procs:
        p.terminate()
        p.communicate(timeout=10)


def get(port: int, path: str, cls: str = "gold") -> tuple[int, int, float]:
    t = time.monotonic()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"X-Class": cls})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, len(r.read()), time.monotonic() - t
    except urllib.error.HTTPError as e:
        return e.code, 0, time.monotonic() - t


def log_lines(log, n: int) -> list[list[str]]:
    for _ in range(100):
        lines = [ln.split() for ln in open(log)] if os.path.exists(log) else []
        if len(lines) >= n:
            return lines
        time.sleep(0.05)
    raise AssertionError(f"{log}: fewer than {n} lines")


def test_site_pages_spend_what_they_say(site):
    port, log = site("--cgi-cpu-ms", "20", "--disk-Bps", "500000", "--photo-bytes", "50000",
                     "--media-bytes", "123456")
    assert get(port, "/cgi/1", "silver")[:2] == (200, 2000)
    assert get(port, "/media/1.mp4")[:2] == (200, 123456)
    # four photos at once from a FIFO disk of 500 KB/s: 0.1 s each, one after another
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        res = list(ex.map(lambda i: get(port, f"/photos/{i}.jpg", "bronze"), range(4)))
    assert all(r[:2] == (200, 50000) for r in res)
    assert max(r[2] for r in res) >= 0.39, res
    lines = log_lines(log, 6)
    cgi = next(ln for ln in lines if ln[3] == "cgi")
    assert cgi[2] == "silver" and 0.020 <= float(cgi[4]) < 0.1 and cgi[5] == "0"
    photos = [ln for ln in lines if ln[3] == "photos"]
    assert len(photos) == 4 and all(ln[2] == "bronze" and ln[5] == "50000" for ln in photos)
    media = next(ln for ln in lines if ln[3] == "media")
    assert int(media[6]) > 123456 and media[8] == "ok"


def test_site_index_and_counters_for_the_prober(site):
    port, log = site("--cgi-cpu-ms", "20", "--disk-Bps", "1e6", "--photo-bytes", "30000")
    base = f"http://127.0.0.1:{port}"
    with urllib.request.urlopen(base + "/") as r:
        assert r.headers["Content-Type"] == "text/html"
        index = r.read().decode()
    assert all(f'href="{p}"' in index for p in ("/cgi/1", "/photos/1.jpg", "/media/1.mp4"))

    def counters():
        with urllib.request.urlopen(base + "/counters") as r:
            return json.loads(r.read())
    a = counters()
    get(port, "/cgi/1")
    get(port, "/photos/2.jpg")
    b = counters()
    assert set(b) == {"t", "cpu_s", "disk_read_bytes", "net_tx_bytes"} and b["t"] > a["t"]
    assert 0.020 <= b["cpu_s"] - a["cpu_s"] < 0.1
    assert b["disk_read_bytes"] - a["disk_read_bytes"] == 30000
    assert 32000 < b["net_tx_bytes"] - a["net_tx_bytes"] < 33000     # 2,000 + 30,000 + heads
    assert len(log_lines(log, 2)) == 2          # / and /counters are not pages: not logged


def test_site_refuses_after_the_queue_timeout(site):
    port, log = site("--max-clients", "1", "--queue-timeout", "0.2", "--disk-Bps", "100000",
                     "--photo-bytes", "100000")
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        slow = ex.submit(get, port, "/photos/1.jpg")
        time.sleep(0.2)
        refused = get(port, "/media/1.mp4", "bronze")
    assert slow.result()[0] == 200 and refused[0] == 503 and refused[2] < 0.7
    rej = next(ln for ln in log_lines(log, 2) if ln[8] == "rejected")
    assert rej[2:4] == ["bronze", "media"] and rej[7] == "503" and rej[6] == "0"


def test_siteload_open_load_through_its_classes(site, tmp_path):
    port, log = site("--cgi-cpu-ms", "1", "--disk-Bps", "5e6", "--photo-bytes", "5000",
                     "--media-bytes", "20000")
    out = tmp_path / "load"
    rc = siteload.main(["--gateway", f"127.0.0.1:{port}", "--class", "gold:127.0.0.2-3:30",
                        "--class", "bronze:127.0.0.4:10", "--duration", "2", "--seed", "3",
                        "--out", str(out)])
    assert rc == 0
    rows = list(csv.DictReader(open(out / "requests.csv")))
    by = {c: [r for r in rows if r["class"] == c] for c in ("gold", "bronze")}
    # Poisson arrivals: 60 and 20 expected in 2 s
    assert 35 <= len(by["gold"]) <= 90 and 8 <= len(by["bronze"]) <= 36, {
        k: len(v) for k, v in by.items()}
    assert all(r["status"] == "200" and float(r["end"]) > float(r["start"]) for r in rows)
    assert {r["addr"] for r in by["gold"]} == {"127.0.0.2", "127.0.0.3"}
    assert {r["kind"] for r in rows} == {"cgi", "photos", "media"}
    logged = log_lines(log, len(rows))
    assert sum(ln[2] == "gold" for ln in logged) == len(by["gold"])
    summary = json.load(open(out / "load.json"))
    assert summary["classes"]["bronze"]["answered"] == len(by["bronze"])


def test_siteload_stops_on_sigterm_and_writes(site, tmp_path):
    port, _ = site("--cgi-cpu-ms", "1")
    out = tmp_path / "load"
    p = subprocess.Popen([sys.executable, "-m", "reqsched_tools.siteload", "--gateway",
                          f"127.0.0.1:{port}", "--class", "gold:127.0.0.2:20", "--duration", "60",
                          "--out", str(out)], stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    t = time.monotonic()
    p.send_signal(signal.SIGTERM)
    assert p.wait(10) == 130 and time.monotonic() - t < 5
    summary = json.load(open(out / "load.json"))
    assert summary["interrupted"] and 5 <= summary["classes"]["gold"]["sent"] <= 80
    assert len(list(csv.DictReader(open(out / "requests.csv")))) == \
        summary["classes"]["gold"]["sent"]


def test_report_on_a_hand_made_run(tmp_path):
    sc = {"name": "t", "warmup_s": 2, "duration_s": 12, "downlink_bps": 8e6 / (1448 / 1514),
          "modes": ["mqos"], "classes": [{"name": "gold", "weight": 6},
                                         {"name": "bronze", "weight": 1}],
          "site": {"rate": 50, "origin": {"cpu_quota": 0.5, "disk_Bps": 1e6}}}
    (tmp_path / "scenario.json").write_text(json.dumps(sc))
    m = tmp_path / "mqos"
    m.mkdir()
    (m / "load.json").write_text(json.dumps({"start_epoch": 1000.0}))
    # window [1002, 1012): 10 s. cpu: gold 3 s, bronze 0.5 s of 0.5 core -> 0.7;
    # disk: gold 6 MB, bronze 1 MB of 1 MB/s -> 0.7; bw: 5 MB of 1 MB/s -> 0.5
    (m / "site.log").write_text(
        "1003.0 1002.5 gold cgi 3.0 0 2000000 200 ok\n"
        "1004.0 1003.0 bronze cgi 0.5 0 500000 200 ok\n"
        "1005.0 1004.0 gold photos 0 6000000 2000000 200 ok\n"
        "1006.0 1005.0 bronze photos 0 1000000 500000 200 aborted\n"
        "1007.0 1007.0 bronze media 0 0 0 503 rejected\n"
        "1001.0 1000.5 gold cgi 9.0 0 0 200 ok\n"          # before the window
        "1012.5 1011.0 gold cgi 9.0 0 0 200 ok\n")         # after it
    with open(m / "requests.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["class", "kind", "addr", "start", "end", "status", "bytes", "error"])
        w.writerows([["gold", "cgi", "a", 2.5, 3.0, 200, 2000, ""],
                     ["gold", "photos", "a", 3.0, 4.5, 200, 50000, ""],
                     ["gold", "cgi", "a", 1.0, 2.5, 200, 2000, ""],     # ended in the window
                     ["bronze", "cgi", "b", 4.0, 5.0, 200, 2000, ""],
                     ["bronze", "media", "b", 6.0, 6.1, 503, 0, ""],
                     ["bronze", "media", "b", 7.0, -1, 0, 0, "abandoned"]])
    r = sitereport.make_report(str(tmp_path), plots=False, quiet=True)[0]
    res = r["resources"]
    assert res["cpu"]["utilization"] == pytest.approx(0.7)
    assert res["cpu"]["share"] == pytest.approx({"gold": 3 / 3.5, "bronze": 0.5 / 3.5})
    assert res["disk"]["utilization"] == pytest.approx(0.7)
    assert res["bw"]["utilization"] == pytest.approx(0.5)      # no tc.csv: the origin's bytes
    assert res["bw"]["share"]["gold"] == pytest.approx(0.8)
    assert r["origin_aborted"] == 1
    gold, bronze = r["classes"]
    assert gold["throughput_rps"] == pytest.approx(0.3) and gold["sent"] == 2
    assert gold["latency_ms"] == pytest.approx(1000.0)
    assert bronze == {"name": "bronze", "weight": 1, "sent": 3, "refused": 1, "abandoned": 1,
                      "answered": 1, "throughput_rps": pytest.approx(0.1),
                      "latency_ms": pytest.approx(1000.0)}
    assert r["throughput_rps"] == pytest.approx(0.4)
    table = (tmp_path / "table.txt").read_text()
    assert " 6.0:1" in table and "mqos: use of cpu, disk, bw by class" in table
    md = sitereport.paper_table([r], ["gold", "bronze"], md=True).splitlines()
    assert md[:2] == ["| quantity | paper | here |", "|---|---|---|"]
    assert "| mqos: use of cpu, disk, bw by class | 6:3:1 on each (Fig. 4c) | 6.0:1, 6.0:1, 4.0:1 |" \
        in md
