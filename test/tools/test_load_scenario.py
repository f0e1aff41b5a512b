# SPDX-License-Identifier: GPL-2.0-or-later
"""[replay] scenarios: the shipped log-replay scenario, its client map and the
reqsched-load command line the testbed runs for it."""
import pytest

from reqsched_tools import logreplay, scenario, testbed


def test_log_replay_scenario_and_client_map(tmp_path):
    sc = scenario.load("log-replay")
    assert sc.replay_access_log == "sample-access.log" and sc.replay_time_scale == 0.25
    assert [c.clients for c in sc.classes] == [["10.1.1.0/24", "10.1.2.0/24"], ["10.2.1.0/24"],
                                               ["*"]]
    text = testbed.client_map(sc)
    assert text.splitlines() == ["10.1.1.0/24 gold 10.10.1.1-200",
                                 "10.1.2.0/24 gold 10.10.1.1-200",
                                 "10.2.1.0/24 silver 10.10.2.1-100",
                                 "* bronze 10.10.3.1-100"]
    rules = [logreplay.parse_rule(line) for line in text.splitlines()]
    cm = logreplay.ClientMap(rules[:-1], rules[-1])
    assert cm.assign("10.1.2.40", "-") == ("gold", "10.10.1.1")
    assert cm.assign("10.3.1.12", "-") == ("bronze", "10.10.3.1")
    r = testbed.Runner(sc, str(tmp_path), "rstest", None)
    r.servers = ["10.20.0.1", "10.20.0.2"]
    argv = r.load_argv(str(tmp_path / "msf"), 150.0)
    assert argv[1:5] == ["-m", "reqsched_tools.load", "replay", r.input_path("sample-access.log")]
    for opt, val in (("--time-scale", "0.25"), ("--duration", "150.0"),
                     ("--default-class", "bronze"), ("--default-addrs", "10.10.3.1-100"),
                     ("--servers", "10.20.0.1,10.20.0.2"), ("--tunnel-port", "443"),
                     ("--max-conns", "6")):
        assert argv[argv.index(opt) + 1] == val
    assert "--closed-loop" not in argv


def test_replay_table_is_validated():
    cls = [{"name": "a", "weight": 1, "users": 3, "clients": ["10.0.0.0/8"]}]
    sc = scenario.build({"classes": cls, "replay": {"access_log": "x.log", "time_scale": 0.5,
                                                     "closed_loop": True}})
    assert (sc.replay_access_log, sc.replay_time_scale, sc.replay_closed_loop) == \
        ("x.log", 0.5, True)
    bad = [({"classes": cls, "replay": {}}, "access_log"),
           ({"classes": cls, "replay": {"access_log": "x", "time_scale": 0}}, "time_scale"),
           ({"classes": cls, "replay": {"access_log": "x", "max_conns": 0}}, "max_conns"),
           ({"classes": [dict(cls[0], clients=[])], "replay": {"access_log": "x"}}, "clients"),
           ({"classes": cls}, r"\[replay\]"),
           ({"classes": cls, "replay": {"access_log": "x"}, "sizes": {"access_log": "y"}},
            "not both")]
    for raw, msg in bad:
        with pytest.raises(scenario.ScenarioError, match=msg):
            scenario.build(raw)
