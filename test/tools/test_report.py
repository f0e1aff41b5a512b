# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-report on a small hand-made run directory: every number checked."""
import json
import os

import pytest

from reqsched_tools import report


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


@pytest.fixture
def run_dir(tmp_path):
    sc = {"name": "unit", "downlink_bps": 1_000_000, "warmup_s": 10, "timeline_bin_s": 5,
          "modes": ["msf"], "classes": [
              {"name": "a", "weight": 2, "users": 1, "pattern": "backlogged"},
              {"name": "b", "weight": 1, "users": 1, "pattern": "backlogged"}]}
    write(tmp_path / "scenario.json", json.dumps(sc))
    m = tmp_path / "msf"
    m.mkdir()
    t0 = 1_000_000.0
    write(m / "replay.json", json.dumps({
        "t0_epoch": t0, "duration_s": 30, "bin_s": 1,
        "users": [{"id": "a-1", "class": "a", "addr": "10.10.1.1"},
                  {"id": "b-1", "class": "b", "addr": "10.10.2.1"}]}))
    # measured window [10, 30): class a 1000 B/s, class b 500 B/s; bins before 10 ignored
    rows = ["bin_start,class,bytes"]
    rows += [f"{t}.000,a,{99999 if t < 10 else 1000}" for t in range(30)]
    rows += [f"{t}.000,b,500" for t in range(30)]
    rows += ["broken,row"]
    write(m / "class_bytes.csv", "\n".join(rows) + "\n")
    write(m / "requests.csv", "\n".join([
        "id,user,class,addr,url,start,first_byte,end,bytes,status,error",
        # a: two requests in the window, 1 s and 3 s; b: one of 2 s; one before the window
        "a-1.1,a-1,a,10.10.1.1,u,12.0,12.1,13.0,10000,200,",
        "a-1.2,a-1,a,10.10.1.1,u,14.0,14.5,17.0,10000,200,",
        "b-1.1,b-1,b,10.10.2.1,u,20.0,20.2,22.0,5000,200,",
        "b-1.0,b-1,b,10.10.2.1,u,5.0,5.1,6.0,5000,200,",
        "b-1.9,b-1,b,10.10.2.1,u,25.0,-1,-1,0,0,ConnectionResetError: x",
        "b-1.10,b-1,b,10.10.2.1,u,29.0,-1,-1,0,0,cancelled at end of run",
    ]) + "\n")
    write(m / "access.log", "\n".join([
        "1000012.9 900 10.10.1.1 TCP_MISS/200 10000 GET http://s/u a-1.1 a 400",
        "1000017.0 3000 10.10.1.1 TCP_MISS/200 10000 GET http://s/u a-1.2 a 1000",
        "1000022.0 2000 10.10.2.1 TCP_MISS/200 5000 GET http://s/u b-1.1 b -",
        "malformed",
    ]) + "\n")
    # tbf: 100,000 bytes/s through a 1 Mbit/s link = utilization 0.8; 7 drops in the window
    tc = ["t_epoch,bytes,packets,drops,backlog,qlen"]
    for t in range(0, 31):
        tc.append(f"{t0 + t:.3f},{100000 * t},{t},{0 if t < 10 else 7 if t >= 30 else 3},1250,1")
    write(m / "tc.csv", "\n".join(tc) + "\n")
    write(m / "mgr.jsonl", json.dumps({"t_epoch": t0 + 12, "global": {"W": 3, "W_max": 4.0,
                                                                     "U": 0.97}}) + "\n")
    write(m / "run.json", json.dumps({"squid_cpu_s": 1.25}))
    return tmp_path


def test_report_numbers(run_dir):
    (r,) = report.make_report(str(run_dir), plots=False, quiet=True)
    assert r["mode"] == "msf" and r["duration_s"] == 20 and r["squid_cpu_s"] == 1.25
    a, b = r["classes"]
    assert a["throughput_bps"] == 8000 and b["throughput_bps"] == 4000
    assert a["per_user_bps"] == 8000
    assert a["share"] == pytest.approx(2 / 3, abs=1e-4)
    assert a["target_share"] == pytest.approx(2 / 3, abs=1e-4)
    assert a["requests"] == 2 and b["requests"] == 1
    assert a["latency_ms"]["mean"] == pytest.approx(2000)
    assert a["latency_ms"]["p50"] == pytest.approx(2000)
    assert a["latency_ms"]["p95"] == pytest.approx(2900)
    assert a["queue_wait_ms"]["mean"] == pytest.approx(700)
    assert a["service_ms"]["mean"] == pytest.approx(1300)
    assert b["queue_wait_ms"]["mean"] == 0 and b["service_ms"]["mean"] == pytest.approx(2000)
    assert b["failed"] == 1                      # the reset, not the one cut at the end
    assert r["utilization"] == pytest.approx(0.8)
    assert r["bottleneck_drops"] == 4
    assert r["bottleneck_queue_delay_ms_mean"] == pytest.approx(10.0)
    # users got 20000 B and 5000 B in the window; fair shares of 25000 B are 2:1
    x_a, x_b = 20000 / (25000 * 2 / 3), 5000 / (25000 / 3)
    assert r["jain_index"] == pytest.approx((x_a + x_b) ** 2 / (2 * (x_a ** 2 + x_b ** 2)),
                                            abs=1e-4)
    assert r["parse_skipped"] == 2
    tl = r["timeline"]
    assert [e["t"] for e in tl] == [5, 10, 15, 20, 25, 30]
    assert tl[2]["W"] == 3 and tl[2]["W_max"] == 4.0 and tl[2]["U"] == 0.97
    assert tl[3]["class_bps"] == {"a": 8000, "b": 4000}
    assert json.load(open(os.path.join(run_dir, "report.json")))[0]["mode"] == "msf"
    assert "msf" in open(os.path.join(run_dir, "table.txt")).read()


def test_user_bytes_spread_over_transfer():
    reqs = [report.Req("1", "u", "a", 0.0, 0.0, 10.0, 1000, 200),
            report.Req("2", "u", "a", 8.0, 9.0, -1.0, 500, 0)]
    got = report.user_bytes_in_window(reqs, 5.0, 15.0)
    assert got["u"] == pytest.approx(500 + 500)


def test_plots_are_written(run_dir):
    pytest.importorskip("matplotlib")
    report.make_report(str(run_dir), plots=True, quiet=True)
    for name in ("throughput", "window", "latency", "latency_cdf", "shares"):
        assert os.path.getsize(os.path.join(run_dir, f"{name}.png")) > 5000
