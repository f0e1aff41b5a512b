# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario files: every shipped scenario loads; modes parse; bad input is named."""
import os

import pytest

from reqsched_tools import scenario


def test_every_shipped_scenario_loads():
    names = [os.path.splitext(f)[0] for f in os.listdir(scenario.SCENARIO_DIR)
             if f.endswith((".toml", ".json"))]
    assert "field-trial" in names
    for n in names:
        sc = scenario.load(n)
        assert sc.classes and sc.modes and sc.duration_s > sc.warmup_s


def test_the_testbed_spec_files_load_as_documented():
    """test/testbed/*.toml (the check specs and the recheck beds) load, and
    the recheck beds are the beds doc/testbed.md describes: their first
    version ran at the defaults of keys the loader did not read."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testbed")
    specs = sorted(f for f in os.listdir(here) if f.endswith(".toml"))
    assert "recheck-bed-a.toml" in specs and "recheck-bed-b.toml" in specs
    for f in specs:
        assert scenario.load_sweep(spec=os.path.join(here, f))
    a = scenario.load(spec=os.path.join(here, "recheck-bed-a.toml"))
    b = scenario.load(spec=os.path.join(here, "recheck-bed-b.toml"))
    assert (a.downlink_bps, a.buffer_ms, a.server_count, a.size_mu) == (4e6, 150, 6, 10)
    assert (b.downlink_bps, b.buffer_ms, b.server_count, b.size_mu) == (8e6, 60, 10, 9)
    assert [c.users for c in a.classes] == [4, 4, 4] and [c.users for c in b.classes] == [2, 5, 6]


def test_field_trial_matches_paper():
    sc = scenario.load("field-trial")
    assert [c.weight for c in sc.classes] == [4, 2, 1]
    assert [c.users for c in sc.classes] == [4, 4, 4]
    assert sc.downlink_bps == 2_000_000


def test_parse_mode_variants():
    m = scenario.parse_mode("msf+sff:wrc-aimd@90%", "wrc-mult", 0.98)
    assert (m.kind, m.policy, m.sff, m.window, m.target_utilization) == \
        ("reqsched", "msf", True, "wrc-aimd", 0.9)
    assert scenario.parse_mode("drr@0.65", "wrc-mult", 0.98).target_utilization == 0.65
    assert scenario.parse_mode("rfq:fixed-8", "wrc-mult", 0.98).window == "fixed-8"
    assert scenario.parse_mode("delay-pools", "wrc-mult", 0.98).kind == "delay-pools"
    for bad in ("fq", "msf:nope", "msf@150%"):
        with pytest.raises(scenario.ScenarioError):
            scenario.parse_mode(bad, "wrc-mult", 0.98)


def test_bad_scenario_is_named():
    with pytest.raises(scenario.ScenarioError, match="weight"):
        scenario.build({"classes": [{"name": "a", "weight": 0, "users": 1}]})
    with pytest.raises(scenario.ScenarioError, match="missing key"):
        scenario.build({"classes": [{"name": "a"}]})
    with pytest.raises(scenario.ScenarioError, match="no scenario"):
        scenario.load("does-not-exist")


def test_a_key_the_loader_would_not_read_is_refused():
    """A key under the wrong table would silently take its default (a spec
    with downlink_bps at the top ran at 2 Mbit/s): it is named instead."""
    cls = [{"name": "a", "weight": 1, "users": 1}]
    with pytest.raises(scenario.ScenarioError, match=r"^downlink_bps: unknown key; it belongs in \[link\]"):
        scenario.build({"classes": cls, "downlink_bps": 4_000_000})
    with pytest.raises(scenario.ScenarioError, match=r"^link.buffer: unknown key"):
        scenario.build({"classes": cls, "link": {"buffer": 150}})
    with pytest.raises(scenario.ScenarioError, match=r"^classes\[0\].sizes.median: unknown key"):
        scenario.build({"classes": [dict(cls[0], sizes={"median": 5000})]})
    assert scenario.build({"classes": cls, "link": {"downlink_bps": 4_000_000}}).downlink_bps == 4e6


def test_buffer_ms_and_old_queue_bdp():
    cls = [{"name": "a", "weight": 1, "users": 1}]
    assert scenario.build({"classes": cls, "link": {"buffer_ms": 250}}).buffer_ms == 250
    # old files: queue_bdp BDPs of rtt_ms = queue_bdp x rtt_ms ms
    old = scenario.build({"classes": cls, "link": {"queue_bdp": 1.5, "rtt_ms": 80}})
    assert old.buffer_ms == pytest.approx(120)
    assert scenario.build({"classes": cls, "link": {"queue_bdp": 2}}).buffer_ms == 200
    assert scenario.build({"classes": cls}).buffer_ms == 150
    with pytest.raises(scenario.ScenarioError, match="not both"):
        scenario.build({"classes": cls, "link": {"queue_bdp": 1, "buffer_ms": 10}})
    with pytest.raises(scenario.ScenarioError, match="buffer_ms"):
        scenario.build({"classes": cls, "link": {"buffer_ms": 0}})


def test_proxy_initrwnd():
    cls = [{"name": "a", "weight": 1, "users": 1}]
    assert scenario.build({"classes": cls}).proxy_initrwnd == 0
    assert scenario.build({"classes": cls, "link": {"proxy_initrwnd": 2}}).proxy_initrwnd == 2
    for bad in (-1, 1001, 2.5, "2", True):
        with pytest.raises(scenario.ScenarioError, match="proxy_initrwnd"):
            scenario.build({"classes": cls, "link": {"proxy_initrwnd": bad}})


def test_propagation_rtt_ms():
    cls = [{"name": "a", "weight": 1, "users": 1}]
    assert scenario.build({"classes": cls}).propagation_rtt_ms == 0
    # rtt_ms (an old file's nominal RTT for queue_bdp) adds no delay: alone, it is refused
    with pytest.raises(scenario.ScenarioError, match="propagation_rtt_ms"):
        scenario.build({"classes": cls, "link": {"rtt_ms": 60}})
    with pytest.raises(scenario.ScenarioError, match="propagation_rtt_ms"):
        scenario.build({"classes": cls, "link": {"rtt_ms": 60, "buffer_ms": 100}})
    assert scenario.build({"classes": cls,
                           "link": {"propagation_rtt_ms": 60}}).propagation_rtt_ms == 60
    for bad in (-1, 2001, "60", True):
        with pytest.raises(scenario.ScenarioError, match="propagation_rtt_ms"):
            scenario.build({"classes": cls, "link": {"propagation_rtt_ms": bad}})


def test_proxy_workers():
    cls = [{"name": "a", "weight": 1, "users": 1}]
    assert scenario.build({"classes": cls}).proxy_workers == 1
    assert scenario.build({"classes": cls, "proxy": {"workers": 4}}).proxy_workers == 4
    for bad in (0, 17, 2.5, True, "2"):
        with pytest.raises(scenario.ScenarioError, match="proxy.workers"):
            scenario.build({"classes": cls, "proxy": {"workers": bad}})


def test_nopacing_suffix():
    m = scenario.parse_mode("msf", "wrc-mult", 0.98)
    assert m.pacing and m.needs_pacing_squid
    n = scenario.parse_mode("msf+sff:fixed-4@90%/nopacing", "wrc-mult", 0.98)
    assert (n.policy, n.sff, n.window, n.target_utilization, n.pacing) == \
        ("msf", True, "fixed-4", 0.9, False)
    assert not n.needs_pacing_squid and n.needs_patched_squid
    assert not scenario.parse_mode("stock", "wrc-mult", 0.98).needs_pacing_squid
    for bad in ("msf/pacing", "stock/nopacing", "msf/nopacing/nopacing", "msf/"):
        with pytest.raises(scenario.ScenarioError):
            scenario.parse_mode(bad, "wrc-mult", 0.98)


def test_keep_suffix():
    assert not scenario.parse_mode("msf", "wrc-mult", 0.98).keep_share
    k = scenario.parse_mode("msf+sff:fixed-4@90%/keep", "wrc-mult", 0.98)
    assert (k.policy, k.sff, k.window, k.target_utilization, k.pacing, k.keep_share) == \
        ("msf", True, "fixed-4", 0.9, True, True)
    assert k.needs_pacing_squid
    assert not scenario.parse_mode("msf/nopacing", "wrc-mult", 0.98).keep_share
    for bad in ("msf/keep/nopacing", "msf/nopacing/keep", "stock/keep", "msf/keep/keep"):
        with pytest.raises(scenario.ScenarioError):
            scenario.parse_mode(bad, "wrc-mult", 0.98)


def test_sweep_points_and_labels():
    raw = {"name": "s", "classes": [{"name": "a", "weight": 1, "users": 1}],
           "link": {"queue_bdp": 1.5}, "sweep": {"key": "link.buffer_ms", "values": [50, 1000]}}
    pts = scenario.sweep_points(raw)
    assert [p[0] for p in pts] == ["buffer_ms-50", "buffer_ms-1000"]
    assert [scenario.build(p[1]).buffer_ms for p in pts] == [50, 1000]   # queue_bdp dropped
    assert raw["link"] == {"queue_bdp": 1.5}                             # input untouched
    assert scenario.sweep_points({"classes": []}) == [("", {"classes": []})]
    with pytest.raises(scenario.ScenarioError, match="sweep"):
        scenario.sweep_points({"sweep": {"key": "link.buffer_ms", "values": []}})
    assert scenario.sweep_label("cross_traffic.rate_fraction", 0.3) == "rate_fraction-0.3"
    pts = scenario.load_sweep("cross-traffic")
    assert [p.cross_rate_bps for p in pts] == [600_000, 1_200_000]
    assert [p.sweep_label for p in pts] == ["rate_fraction-0.3", "rate_fraction-0.6"]


def test_class_sizes_tunnels_restart():
    sc = scenario.build({"duration_s": 60, "restart_at_s": 30, "idle_probe_s": 5, "classes": [
        {"name": "i", "weight": 4, "users": 1, "sizes": {"mu": 8, "max": 1000}},
        {"name": "b", "weight": 1, "users": 1, "sizes": {"uniform": [2e6, 8e6]},
         "tunnel": True, "requests_per_tunnel": 3}]})
    i, b = sc.classes
    assert (i.size_mu, i.size_sigma, i.size_max, i.size_uniform) == (8, 1.318, 1000, None)
    assert b.size_uniform == (2e6, 8e6) and b.tunnel and b.requests_per_tunnel == 3
    assert sc.restart_at_s == 30 and sc.idle_probe_s == 5 and sc.small_object_bytes == 16384
    with pytest.raises(scenario.ScenarioError, match="restart_at_s"):
        scenario.build({"duration_s": 60, "restart_at_s": 60,
                        "classes": [{"name": "a", "weight": 1, "users": 1}]})
    with pytest.raises(scenario.ScenarioError, match="rate_bps or rate_fraction"):
        scenario.build({"classes": [{"name": "a", "weight": 1, "users": 1}],
                        "cross_traffic": {"rate_bps": 1, "rate_fraction": 0.1}})


def test_new_scenarios_shape():
    bb = scenario.load_sweep("bufferbloat")
    assert [p.buffer_ms for p in bb] == [50, 250, 1000]
    assert bb[0].idle_probe_s > 0 and bb[0].targets["small_p95_vs_idle"] == 1.5
    inter, bulk = bb[0].classes
    assert (inter.weight, inter.users, inter.pattern) == (4, 6, "think")
    assert (bulk.weight, bulk.users, bulk.size_uniform) == (1, 2, (2e6, 8e6))
    fu = scenario.load("few-users")
    assert [c.weight for c in fu.classes] == [4, 2, 1] and fu.targets["share_error"] == 0.05
    assert all(c.tunnel for c in scenario.load("https").classes)
    assert scenario.load("restart").restart_at_s > 0
    assert scenario.load("cross-traffic").targets["periods"] is True
