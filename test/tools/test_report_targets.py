# SPDX-License-Identifier: GPL-2.0-or-later
"""The report's additions (small-object latency, queue delay, fair shares, cross
traffic on/off periods, restart, byte layer, idle reference) and the targets, on
hand-made run directories: every number checked."""
import json
import math

import pytest

from reqsched_tools import report, targets


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def test_queue_delay_and_interval_link_stats():
    assert report.queue_delay_ms(25_000, 2_000_000) == pytest.approx(100.0)
    # (t, bytes, drops, backlog): 250 kB/s for 4 s in [0, 4], 2 drops; then a gap
    samples = [(float(t), 250_000 * t, t // 2, 12_500) for t in range(10)]
    st = report.interval_link_stats(samples, [(0.0, 4.0)], 2_000_000)
    assert st["utilization"] == pytest.approx(1.0) and st["drops"] == 2
    assert st["seconds"] == 4 and st["queue_delay_ms"]["mean"] == pytest.approx(50.0)
    both = report.interval_link_stats(samples, [(0.0, 2.0), (6.0, 8.0)], 2_000_000)
    assert both["seconds"] == 4 and both["drops"] == 2          # 0->1 (+0, +1) and 6->7->8
    assert report.interval_link_stats(samples, [(20.0, 30.0)], 2e6)["utilization"] is None


def test_class_fair_bps_think_demand_and_backlogged_rest():
    classes = [{"name": "i", "weight": 4, "users": 6, "pattern": "think"},
               {"name": "b", "weight": 1, "users": 2, "pattern": "backlogged"},
               {"name": "x", "weight": 1, "users": 1, "pattern": "backlogged"}]
    fair = report.class_fair_bps(classes, {"i": 200.0, "b": 1500.0, "x": 0.0})
    assert fair == {"i": 200.0, "b": 1500.0, "x": 0.0}
    # all backlogged: weight x users shares of the total
    cl = [{"name": "g", "weight": 4, "users": 3}, {"name": "s", "weight": 2, "users": 3},
          {"name": "z", "weight": 1, "users": 3}]
    fair = report.class_fair_bps(cl, {"g": 500.0, "s": 300.0, "z": 200.0})
    assert fair["g"] == pytest.approx(1000 * 4 / 7) and fair["z"] == pytest.approx(1000 / 7)


def test_period_class_stats_whole_bins_only():
    classes = [{"name": "a", "weight": 2, "users": 1}, {"name": "b", "weight": 1, "users": 1}]
    bins = {"a": {float(t): 200 for t in range(20)}, "b": {float(t): 100 for t in range(20)}}
    ps = report.period_class_stats(classes, bins, [(2.5, 6.0), (10.0, 12.0)])
    assert ps["seconds"] == 5                    # bins 3,4,5 and 10,11
    a, b = ps["classes"]
    assert a["throughput_bps"] == 1600 and b["throughput_bps"] == 800
    assert a["share"] == pytest.approx(2 / 3, abs=1e-4) and a["share_error"] == 0
    assert report.period_class_stats(classes, bins, [(3.2, 3.9)])["seconds"] == 0


def test_cross_periods_on_the_replay_clock(tmp_path):
    # the CBR started 0.5 s after the replay: on at 10..20, 30..end(45) in its clock
    write(tmp_path / "cbr.log", "t0_epoch 1000.500\n10.000 on\n20.000 off\n30.000 on\n"
                                "45.000 end sent=10\njunk\n")
    p = report.cross_periods(str(tmp_path), 1000.0, 5.0, 40.0)
    assert p["on"] == [(10.5, 20.5), (30.5, 40.0)]
    assert p["off"] == [(5.0, 10.5), (20.5, 30.5)]
    assert report.cross_periods(str(tmp_path / "none"), 0, 0, 1) == {}


def test_byte_layer_intervals_dedupe_and_old_squid():
    g = {"link_bytes": 500_000, "proxied_bytes": 400_000, "exceptive_bytes": 100_000,
         "interval_s": 2.0, "U": 0.98, "W_max": 3.0, "pace_bps": 1.5e6, "window_bytes": 4e4,
         "flows": 5, "flows_waiting": 1, "link_counter_state": "ok"}
    mgr = [{"t_epoch": 100.0 + k, "global": dict(g, link_bytes=500_000 + 1000 * (k // 2))}
           for k in range(6)]
    rows = report.byte_layer_intervals(mgr, 100.0, 0.0, 10.0)
    assert [r["t"] for r in rows] == [0, 2, 4]                 # one row per interval
    assert rows[0]["link_bps"] == 2_000_000 and rows[0]["exceptive_bps"] == 400_000
    assert rows[0]["pace_bps"] == 1.5e6 and rows[0]["link_counter_state"] == "ok"
    s = report.summarize_intervals(rows)
    assert s["intervals"] == 3 and s["U"] == pytest.approx(0.98)
    assert report.byte_layer_intervals([{"t_epoch": 1, "global": {"U": 0.9, "W": 1}}],
                                       0, 0, 9) == []
    assert report.summarize_intervals([]) is None


def test_worker_split_reads_against_the_weighted_due():
    """Two workers, 10 s: kid 1 has a gold user (weight 4) and a bronze user
    (1), kid 2 a bronze user. They read 640 + 240 and 120 kbit/s of 1 Mbit/s:
    per user the due is w / (4 + 1 + 1) of it, so gold 667, each bronze 167."""
    def kid(share, gold, bronze, gb, bb):
        return {"global": {"link_share": share, "W": 2, "W_max": 2.5},
                "classes": [{"name": "gold", "users": gold, "bytes": gb},
                            {"name": "bronze", "users": bronze, "bytes": bb}]}
    mgr = [{"t_epoch": 100.0 + t,
            "kids": {"1": kid(0.8, 1, 1, 80_000 * t, 30_000 * t),
                     "2": kid(0.2, 0, 1, 0, 15_000 * t)}} for t in range(11)]
    w = report.worker_split(mgr, 100.0, 0.0, 10.0, {"gold": 4, "bronze": 1})
    assert [x["kid"] for x in w] == [1, 2]
    assert w[0]["link_share"] == pytest.approx(0.8) and w[0]["W_max"] == pytest.approx(2.5)
    g, b1, b2 = w[0]["classes"]["gold"], w[0]["classes"]["bronze"], w[1]["classes"]["bronze"]
    assert (g["bps"], b1["bps"], b2["bps"]) == (640_000, 240_000, 120_000)
    assert g["due_bps"] == round(1e6 * 4 / 6) and b1["due_bps"] == b2["due_bps"] == round(1e6 / 6)
    assert w[1]["classes"]["gold"] == {"users": 0.0, "bps": 0, "due_bps": 0}
    assert report.worker_split([{"t_epoch": 100.0, "global": {}}], 100.0, 0.0, 10.0, {}) == []


def make_mode(root, mode, t0, lat_small_ms, drops, restart=None, mgr=None, cbr=False):
    m = root / mode
    m.mkdir()
    write(m / "replay.json", json.dumps({
        "t0_epoch": t0, "duration_s": 40, "bin_s": 1,
        "users": [{"id": "i-1", "class": "i", "addr": "a"}, {"id": "b-1", "class": "b",
                                                            "addr": "b"}]}))
    rows = ["bin_start,class,bytes"]
    rows += [f"{t}.000,i,{2500}" for t in range(40)]          # 20 kbit/s interactive
    rows += [f"{t}.000,b,{200_000}" for t in range(40)]       # 1.6 Mbit/s bulk
    write(m / "class_bytes.csv", "\n".join(rows) + "\n")
    req = ["id,user,class,addr,url,start,first_byte,end,bytes,status,error"]
    for k in range(20):                                        # 20 small fetches from t=10
        s = 10 + k
        req.append(f"i-1.{k},i-1,i,a,u,{s},{s},{s + lat_small_ms / 1000},1000,200,")
    req.append("i-1.99,i-1,i,a,u,12,12,14,50000,200,")        # not small
    for k in range(10):                                        # bulk completions every 3 s
        s = 10 + 3 * k
        req.append(f"b-1.{k},b-1,b,b,u,{s},{s},{s + 3},600000,200,")
    write(m / "requests.csv", "\n".join(req) + "\n")
    tc = ["t_epoch,bytes,packets,drops,backlog,qlen"]
    for k in range(0, 401):                                    # 100-ms samples, 0.97 x C
        t = k / 10
        tc.append(f"{t0 + t:.3f},{int(242_500 * t)},{k},{int(drops * t / 40)},"
                  f"{2500 if mode != 'stock' else 250_000},1")
    write(m / "tc.csv", "\n".join(tc) + "\n")
    info = {"squid_cpu_s": 1.0}
    if restart:
        info.update(restart_stop_epoch=t0 + 20, restart_start_epoch=t0 + 21,
                    restart_ready_epoch=t0 + 21.5)
    write(m / "run.json", json.dumps(info))
    if mgr:
        write(m / "mgr.jsonl", "\n".join(json.dumps(x) for x in mgr) + "\n")
    if cbr:
        write(m / "cbr.log", f"t0_epoch {t0:.3f}\n15.000 on\n25.000 off\n40.000 end sent=1\n")


@pytest.fixture
def run_dir(tmp_path):
    sc = {"name": "unit-bb", "downlink_bps": 2_000_000, "warmup_s": 10, "timeline_bin_s": 5,
          "buffer_ms": 1000, "modes": ["stock", "msf"], "small_object_bytes": 16384,
          "classes": [{"name": "i", "weight": 4, "users": 1, "pattern": "think"},
                      {"name": "b", "weight": 1, "users": 1, "pattern": "backlogged"}],
          "targets": {"interactive": "i", "small_p95_vs_idle": 1.5, "small_p95_vs_stock": 0.3,
                      "queue_delay_mean_ms": 20, "utilization": 0.95, "bulk_rest": 0.95,
                      "drops_vs_stock": 0.1, "restart_rps_vs_stock": 0.95,
                      "restart_recovery_vs_stock": 0.95, "never_worse_than_stock": True}}
    write(tmp_path / "scenario.json", json.dumps(sc))
    mgr = [{"t_epoch": 2_000_012.0, "global": {"W": 1, "W_max": 2.0, "U": 0.97,
                                               "link_bytes": 485_000, "proxied_bytes": 480_000,
                                               "exceptive_bytes": 5_000, "interval_s": 2,
                                               "pace_bps": 1.9e6, "window_bytes": 30_000}}]
    make_mode(tmp_path, "stock", 1_000_000.0, 1000, 400, restart=True)
    make_mode(tmp_path, "msf", 2_000_000.0, 100, 20, restart=True, mgr=mgr, cbr=True)
    idle = tmp_path / "idle"
    idle.mkdir()
    req = ["id,user,class,addr,url,start,first_byte,end,bytes,status,error"]
    req += [f"x.{k},x,i,a,u,{k},{k},{k + 0.08},2000,200," for k in range(20)]
    write(idle / "requests.csv", "\n".join(req) + "\n")
    return tmp_path


def test_report_additions_and_targets(run_dir):
    stock, msf = report.make_report(str(run_dir), plots=False, quiet=True)
    i, b = msf["classes"]
    assert i["small_requests"] == 20 and i["small_latency_ms"]["p95"] == pytest.approx(100)
    assert stock["classes"][0]["small_latency_ms"]["p50"] == pytest.approx(1000)
    assert i["fair_bps"] == 20_000 and i["share_error"] == 0      # think: demand = got
    assert b["fair_bps"] == 1_600_000
    assert msf["queue_delay_ms"]["mean"] == pytest.approx(10.0)   # 2500 B at 2 Mbit/s
    assert stock["queue_delay_ms"]["p95"] == pytest.approx(1000.0)
    assert msf["utilization"] == pytest.approx(0.97)
    assert msf["idle_reference"]["small_latency_ms"]["p95"] == pytest.approx(80)
    rs = msf["restart"]
    assert (rs["stop_s"], rs["start_s"], rs["ready_s"], rs["after_from_s"]) == (20, 21, 21.5, 23)
    # completions in [23, 40): small ends 23.1..29.1 (7), bulk ends 25, 28, 31, 34, 37 (5)
    assert rs["rps_after"] == pytest.approx(12 / 17, abs=1e-3)
    # their bytes: 7 x 1,000 + 5 x 600,000 in 17 s
    assert rs["mbps_after"] == pytest.approx(3_007_000 * 8 / 17 / 1e6, abs=1e-4)
    on, off = msf["periods"]["on"], msf["periods"]["off"]
    assert on["intervals"] == [[15, 25]] and off["intervals"] == [[10, 15], [25, 40]]
    assert on["utilization"] == pytest.approx(0.97) and on["seconds"] == pytest.approx(10)
    assert msf["byte_layer"]["intervals"] == 1
    assert msf["byte_layer"]["exceptive_bps"] == 20_000
    assert stock["byte_layer"] is None and stock["periods"] == {}

    rows = {r["target"]: r for r in msf["targets"]}
    assert rows["i small p95 / idle"]["measured"] == pytest.approx(1.25)
    assert rows["i small p95 / idle"]["ok"] is True
    assert rows["i small p95 / stock"]["measured"] == pytest.approx(0.1)
    assert rows["ISP queue delay mean ms"]["ok"] is True
    assert rows["utilization (CBR incl.)"]["ok"] is True
    payload = 2e6 * 1448 / 1514
    assert rows["bulk bit/s / (payload C - interactive)"]["measured"] == \
        pytest.approx(1.6e6 / (payload - 20_000), abs=1e-4)
    # window [10, 40] +- 0.3 s of samples: about 15 of 300 drops
    assert rows["drops / stock drops"]["measured"] == pytest.approx(15 / 300, rel=0.08)
    # stock: small fetches take 1 s, so ends 23.0..30.0 (8) + bulk 5 = 13 in [23, 40)
    assert rows["req/s after restart / stock"]["measured"] == pytest.approx(12 / 13, abs=1e-3)
    assert rows["req/s after restart / stock"]["ok"] is False
    # stock completed the same bulk bytes and one more small response: 3,007,000 / 3,008,000
    assert "completed bytes 1.000x" in rows["req/s after restart / stock"]["note"]
    # the restart's own cost: each mode's after/before, msf's over stock's
    srs = stock["restart"]
    recovery = (rs["rps_after"] / rs["rps_before"]) / (srs["rps_after"] / srs["rps_before"])
    assert rows["req/s after/before restart / stock's"]["measured"] == pytest.approx(recovery, abs=1e-3)
    assert rows["req/s after/before restart / stock's"]["ok"] is (recovery >= 0.95)
    assert rows["not worse: b bit/s / min(stock, fair)"]["ok"] is True
    assert rows["not worse: i small p95 / stock"]["ok"] is True
    assert rows["not worse: i bit/s / stock"]["measured"] == pytest.approx(1.0)
    assert all(r["mode"] == "msf" for r in json.load(open(run_dir / "targets.json")))
    text = open(run_dir / "table.txt").read()
    assert "idle-link fetch" in text and "PASS" in text and "proxy restart" in text
    assert "byte layer" in text and "cross traffic on / off" in text


def test_targets_miss_and_na_are_never_hidden():
    sc = {"downlink_bps": 1e6, "targets": {"utilization": 0.95, "share_error": 0.05,
                                           "drops_vs_stock": 0.1, "periods": True,
                                           "small_p95_vs_idle": 1.5, "interactive": "a",
                                           "bogus": 1}}
    cls = [{"name": "a", "throughput_bps": 10, "fair_bps": 10, "share_error": 0.2,
            "small_latency_ms": {"p95": 300}}]
    per = {"on": {"classes": cls, "utilization": 0.9, "drops": 5},
           "off": {"classes": cls, "utilization": 0.99, "drops": 0}}
    res = [{"mode": "msf", "classes": cls, "periods": per}]
    rows = targets.evaluate(res, sc, None)
    by = {(r["period"], r["target"]): r for r in rows}
    assert by[("on", "utilization (CBR incl.)")]["ok"] is False
    assert by[("off", "utilization (CBR incl.)")]["ok"] is True
    assert by[("on", "share_error")]["ok"] is False
    assert by[("on", "drops / stock drops")]["ok"] is None          # no stock run: N/A
    assert by[("all", "a small p95 / idle")]["ok"] is None          # no idle reference
    assert by[("all", "unknown target keys")]["note"] == "bogus"
    text = targets.format_rows(rows)
    assert "MISS" in text and "N/A" in text and "pass" in text
    assert targets._ratio(0, 0) == 0 and math.isinf(targets._ratio(3, 0))


def test_markdown_summary(run_dir):
    res = report.make_report(str(run_dir), plots=False, quiet=True)
    sc = json.load(open(run_dir / "scenario.json"))
    md = report.markdown(res, sc)
    lines = md.splitlines()
    assert lines[2].startswith("| mode | period | i / b Mbit/s")
    stock = next(x for x in lines if x.startswith("| stock | all"))
    assert "(reference)" in stock and "1000 / 1000" in stock
    msf = next(x for x in lines if x.startswith("| msf | all"))
    assert "0.020 / 1.600" in msf and "100 / 100" in msf and "pass" in msf
    assert any(x.startswith("| msf | on") for x in lines)
    assert "idle-link fetch: small p50 80 ms" in md
