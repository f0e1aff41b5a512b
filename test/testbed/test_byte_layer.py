# SPDX-License-Identifier: GPL-2.0-or-later
"""The byte layer (request_sched_pacing on + request_sched_link_counter iface wan0
rx) on short runs of the bufferbloat and cross-traffic scenarios, and a restart
under load (about 5.5 minutes together). The bufferbloat assertions are the scenario targets
(doc/testbed.md) with tolerances for 40-50 measured seconds, stated next to each;
the cross-traffic ones guard the measured behaviour where targets are still
missed (see there). All are ratios or link quantities, never timings of the test
itself.

Against a Squid without the byte layer these tests FAIL (not skip) with the
testbed's reason: "mode msf did not run: ... this Squid has no
request_sched_pacing ...". Run one of them: pytest -s test/testbed -k bufferbloat.
"""
import pytest

MSF = "msf"      # pacing on, link counter iface wan0 rx (scenario.parse_mode)


@pytest.fixture(scope="module")
def bufferbloat(testbed_run):
    return testbed_run("check-bufferbloat.toml", f"stock,{MSF}", 50, 10)


@pytest.fixture(scope="module")
def cross(testbed_run):
    return testbed_run("check-cross-traffic.toml", f"stock,{MSF}", 60, 10)


@pytest.fixture(scope="module")
def restart(testbed_run):
    # the shipped scenario, shortened: Squid stopped at 20 s of 40
    return testbed_run("../../tools/reqsched_tools/scenarios/restart.toml", MSF, 40, 10)


def small_p95(r, cls="interactive"):
    c = next(c for c in r["classes"] if c["name"] == cls)
    p = c["small_latency_ms"]["p95"]
    assert p is not None and c["small_requests"] >= 20, f"{r['mode']}: too few small objects"
    return p


# -- bufferbloat at 1000 ms ----------------------------------------------------
def test_bufferbloat_interactive_near_idle(bufferbloat):
    """target: p95 <= 1.5 x idle-link fetch; asserted <= 1.8 x (a p95 over ~60
    small objects in 40 s moves by a few tens of ms)."""
    msf = bufferbloat.mode(MSF)
    idle = msf["idle_reference"]["small_latency_ms"]["p95"]
    assert idle, "no idle-link reference"
    got = small_p95(msf)
    print(f"interactive small p95 {got} ms, idle {idle} ms: {got / idle:.2f}x")
    assert got <= 1.8 * idle, f"interactive p95 {got} ms > 1.8 x idle {idle} ms"


def test_bufferbloat_interactive_vs_stock(bufferbloat):
    """target: <= 0.3 x stock's p95. Measured 0.27-0.36 x on these 50-s runs
    (stock's own p95 moves between about 880 and 1,150 ms), and 0.52 x once in a
    clean-clone run beside a package build (msf 287 ms as usual, stock only
    553 ms: the CPU-starved bulk senders did not keep the 1 s buffer full). So
    asserted <= 0.6 x: still a factor the admission layer alone misses by far
    (6-22 s, 17 x stock); test_bufferbloat_interactive_near_idle guards msf's
    p95 against the idle link on its own."""
    msf, stock = bufferbloat.mode(MSF), bufferbloat.mode("stock")
    got, ref = small_p95(msf), small_p95(stock)
    print(f"interactive small p95 {got} ms vs stock {ref} ms: {got / ref:.2f}x")
    assert got <= 0.6 * ref


def test_bufferbloat_queue_short_link_full(bufferbloat):
    """The ISP queue is short and the link full. Targets: mean ISP queue delay
    <= 20 ms, utilization >= 0.95, bulk >= 0.95 of the rest; measured in three
    runs of 2026-11-27 (patch 44): 10.7-14.2 ms, 0.980-0.981, 0.965-0.968, all
    met (before patch 44: 19-30 ms, 0.935-0.97, 0.90-0.94). Guarded here: mean queue <= 35 ms
    and <= 0.15 x stock's (stock: about 530 ms), utilization >= 0.88 (the
    pacer reads at U+ C less the exceptive rate the link counter reports,
    doc/testbed.md; six 50-s runs of 2026-11-25/26 gave 0.904-0.949, the
    0.904 in a clean-clone run on an idle machine), bulk >= 0.85 of the
    rest."""
    msf, stock = bufferbloat.mode(MSF), bufferbloat.mode("stock")
    rows = {t["target"]: t for t in msf["targets"]}
    print({k: v["measured"] for k, v in rows.items()})
    q, q_stock = msf["queue_delay_ms"]["mean"], stock["queue_delay_ms"]["mean"]
    assert q <= 35 and q <= 0.15 * q_stock, (q, q_stock)
    assert msf["utilization"] >= 0.88, msf["utilization"]
    assert rows["bulk bit/s / (payload C - interactive)"]["measured"] >= 0.85


def test_bufferbloat_byte_layer_reported(bufferbloat):
    msf = bufferbloat.mode(MSF)
    b = msf["byte_layer"]
    assert b and b["intervals"] >= 5, "mgr:request_sched has no byte-layer keys"
    assert b["pace_bps"] and b["link_bps"], b


# -- cross traffic at 60% of C ---------------------------------------------------
# The scenario targets (shares within 5%, utilization >= 0.95, drops >= 10x fewer
# than stock, in both periods) are not all met yet: the report prints them with
# PASS/MISS and doc/testbed.md gives the numbers. These tests guard what the byte
# layer measurably does (three runs on 2026-11-23: CBR on: worst share error
# 11-54% vs stock's 121-137%, drops 253-622 vs 4,182-4,385, utilization 0.99-1.00;
# off: worst error 6-14% vs 98-150%, no drops vs 1,299-1,668, utilization
# 0.83-0.87; three on 2026-11-27 with patch 44: on 4.9-9.0%, no drops,
# 0.985-0.988; off 0.9-3.1%, no drops, 0.914-0.915; two with the exceptive
# rate's faster fall too: on 5.8-10.9%, off 5.2-8.0%, 0.944-0.950), with room
# for a short run's noise.
def worst_share_error(period_stats):
    errs = [c["share_error"] for c in period_stats["classes"]]
    assert all(e is not None for e in errs), period_stats["classes"]
    return max(abs(e) for e in errs)


@pytest.mark.parametrize("period", ["on", "off"])
def test_cross_traffic_shares(cross, period):
    """The weights hold far better than stock: worst class share error at most
    0.75 x stock's (measured 0.09-0.45 x over three runs, CBR on: 11-54% vs
    stock's 121-137%); with the CBR off, within 20% (target 5%; measured 6-14%,
    stock 98-150%)."""
    got = worst_share_error(cross.mode(MSF)["periods"][period])
    ref = worst_share_error(cross.mode("stock")["periods"][period])
    print(f"{period}: worst share error {got:.3f} (stock {ref:.3f})")
    assert got <= 0.75 * ref, (got, ref)
    if period == "off":
        assert got <= 0.20, got


@pytest.mark.parametrize("period", ["on", "off"])
def test_cross_traffic_link_and_drops(cross, period):
    """Bottleneck drops at most 1/4 of stock's with the CBR on (target 1/10) and
    1/10 with it off; utilization (CBR included) >= 0.93 with the CBR on (target
    0.95) and >= 0.75 with it off (target 0.95: the measured miss, 0.83, is the
    pacer's rate recovering after the CBR stops)."""
    ps = cross.mode(MSF)["periods"][period]
    ref = cross.mode("stock")["periods"][period]
    print(f"{period}: util {ps['utilization']} drops {ps['drops']} (stock {ref['drops']})")
    assert ps["utilization"] >= (0.93 if period == "on" else 0.75), ps["utilization"]
    assert ps["drops"] * (4 if period == "on" else 10) <= ref["drops"], (ps["drops"], ref["drops"])


# -- a restart under load ----------------------------------------------------------
def test_restart_refills_the_link(restart):
    """With request_sched_window_file (the testbed's pacing modes set it, patch 52)
    the new Squid starts at the window the old one left, and the link is full
    again at once. Utilization over the 4 s after the start (Squid's own start-up
    included), the restart bed of 2026-12-02: 0.970 with the file, 0.449-0.542
    in four runs without it (W+ from 1), stock 0.972-0.994. Asserted >= 0.8."""
    rs = restart.mode(MSF)["restart"]
    print(rs)
    assert rs and rs["utilization_refill"] is not None, rs
    assert rs["utilization_refill"] >= 0.8, rs["utilization_refill"]
    log = open(f"{restart.out}/{MSF}/cache.log", encoding="utf-8", errors="replace").read()
    assert "window file " in log and ": restored W+ " in log, "the new Squid did not restore the window"
