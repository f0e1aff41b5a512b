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
