# SPDX-License-Identifier: GPL-2.0-or-later
"""A short field-trial-shaped run on the namespace testbed (about 2 minutes; 8 Mbit/s
so that enough responses are measured, see check-field-trial.toml): the scheduler,
not the testbed, must make the difference. This checks the admission layer alone
(msf/nopacing, the papers' scheduler); test_byte_layer.py checks pacing.

- msf/nopacing: every class share within 15% of its weight share (4:2:1), link
  utilization >= 0.90;
- stock: the shares are NOT 4:2:1 (some class more than 15% off);
- the report JSON is complete (every field of doc/report-json.md, timeline with W+).
Needs root and build/squid/sbin/squid (make squid).
"""
import json
import os
import shutil
import subprocess
import tempfile

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TESTBED = os.path.join(TOP, "build", "bin", "reqsched-testbed")
SQUID = os.path.join(TOP, "build", "squid", "sbin", "squid")
SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check-field-trial.toml")
DURATION = 55
MSF = "msf/nopacing"


def rel_errors(mode):
    return {c["name"]: c["share"] / c["target_share"] - 1.0 for c in mode["classes"]}


@pytest.fixture(scope="module")
def report():
    assert os.geteuid() == 0, "the testbed needs root (network namespaces, tc)"
    assert os.access(SQUID, os.X_OK), f"{SQUID} missing: run `make squid`"
    out = tempfile.mkdtemp(prefix="rs-check-testbed-")
    os.chmod(out, 0o755)
    try:
        p = subprocess.run([TESTBED, "run", "--spec", SPEC, "--modes", f"stock,{MSF}",
                            "--duration", str(DURATION), "--warmup", "15",
                            "--update-interval", "2", "--out", out, "--no-plots"],
                           timeout=DURATION * 2 + 240)
        assert p.returncode == 0, f"reqsched-testbed failed ({p.returncode}); see {out}"
        with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
            data = {r["mode"]: r for r in json.load(f)}
        yield data
    finally:
        if os.environ.get("RS_KEEP_TMP"):
            print(f"kept {out}")
        else:
            shutil.rmtree(out, ignore_errors=True)


def test_msf_shares_follow_weights(report):
    msf = report[MSF]
    errs = rel_errors(msf)
    print("msf shares vs weight shares:", {k: round(v, 3) for k, v in errs.items()})
    assert all(abs(e) <= 0.15 for e in errs.values()), errs


def test_msf_keeps_link_utilized(report):
    assert report[MSF]["utilization"] >= 0.90, report[MSF]["utilization"]


def test_stock_shares_are_not_weighted(report):
    errs = rel_errors(report["stock"])
    print("stock shares vs weight shares:", {k: round(v, 3) for k, v in errs.items()})
    assert max(abs(e) for e in errs.values()) > 0.15, errs


def test_report_json_complete(report):
    top = ["scenario", "mode", "link_bps", "duration_s", "utilization", "bottleneck_drops",
           "jain_index", "squid_cpu_s", "classes", "timeline"]
    per_class = ["name", "weight", "users", "requests", "bytes", "throughput_bps", "share"]
    for mode, r in report.items():
        for k in top:
            assert r.get(k) is not None, f"{mode}: {k} missing"
        assert r["scenario"] == "check-field-trial" and r["link_bps"] == 8_000_000
        assert [c["name"] for c in r["classes"]] == ["gold", "silver", "bronze"]
        for c in r["classes"]:
            for k in per_class:
                assert c.get(k) is not None, f"{mode}/{c.get('name')}: {k} missing"
            assert c["requests"] > 0 and c["bytes"] > 0
            for k in ("mean", "p50", "p95"):
                assert c["latency_ms"][k] is not None
            assert c["queue_wait_ms"]["mean"] is not None
            assert c["service_ms"]["mean"] is not None
        assert len(r["timeline"]) >= DURATION // 5 - 1
        assert all("class_bps" in e and "t" in e for e in r["timeline"])
    assert any(e.get("W_max") for e in report[MSF]["timeline"]), "no W+ samples under msf"
    # msf holds requests at the proxy: some queue wait must be recorded from the note
    assert report[MSF]["queue_wait_ms"]["known"]
