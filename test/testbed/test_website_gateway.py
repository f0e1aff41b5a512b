# SPDX-License-Identifier: GPL-2.0-or-later
"""The website-gateway scenario on the namespace testbed (about 80 s): Squid in
accelerator mode in front of reqsched-siteorigin (CPU under a cgroup quota of 0.5
core, an emulated disk of 1 MB/s, a 40 Mbit/s link), each class offering 70
requests/s, about twice what the site serves (tools/reqsched_tools/scenarios/
website-gateway.toml), nqos and mqos for 30 s each, 22 s measured.

- mqos: every resource's use split 6:3:1 (each class within 15% of its weight
  share; the issue's target is 10%, measured within 2.2%), disk and link at
  least 85% used and the CPU at least 0.9 x what nqos got, throughput at least
  0.9 x nqos's (target 0.95, measured 1.01-1.08), mean latency below nqos's;
- nqos: not 6:3:1 (bronze holds more than twice its weight share of the CPU;
  measured a third), so the check can fail.
Needs root, cgroup v1 `cpu` and build/squid/sbin/squid.
"""
import os

import pytest

# the shipped scenario itself (testbed_run joins it to test/testbed/)
SPEC = os.path.join("..", "..", "tools", "reqsched_tools", "scenarios", "website-gateway.toml")
WEIGHTS = {"gold": 0.6, "silver": 0.3, "bronze": 0.1}


@pytest.fixture(scope="module")
def run(testbed_run):
    r = testbed_run(SPEC, "nqos,mqos", 30, 8)
    assert r.rc == 0, f"reqsched-testbed failed ({r.rc}); see {r.out}"
    return r


def test_mqos_splits_every_resource_6_3_1(run):
    mqos = run.mode("mqos")
    # the CPU quota is an upper bound: on a busy machine the workers get less
    # (0.81-0.96 under nqos, whose CPU queue never empties), so the CPU is held
    # to what nqos got in the same run; the disk (a timer FIFO) and the link (the
    # tbf) do not depend on the machine
    floor = {"cpu": 0.9 * run.mode("nqos")["resources"]["cpu"]["utilization"],
             "disk": 0.85, "bw": 0.85}
    for name, res in mqos["resources"].items():
        errs = {c: res["share"][c] / w - 1 for c, w in WEIGHTS.items()}
        print(f"mqos {name}: utilization {res['utilization']:.2f} (floor {floor[name]:.2f}), "
              "share errors", {c: round(e, 3) for c, e in errs.items()})
        assert all(abs(e) <= 0.15 for e in errs.values()), (name, errs)
        assert res["utilization"] >= floor[name], (name, res["utilization"])


def test_nqos_does_not_split_6_3_1(run):
    share = run.mode("nqos")["resources"]["cpu"]["share"]
    print("nqos cpu shares", share)
    assert share["bronze"] > 2 * WEIGHTS["bronze"], share


def test_mqos_throughput_and_latency_against_nqos(run):
    mqos, nqos = run.mode("mqos"), run.mode("nqos")
    print(f"req/s mqos {mqos['throughput_rps']:.1f} nqos {nqos['throughput_rps']:.1f}; "
          f"latency ms mqos {mqos['latency_ms']:.0f} nqos {nqos['latency_ms']:.0f}")
    assert mqos["throughput_rps"] >= 0.9 * nqos["throughput_rps"]
    assert mqos["latency_ms"] < nqos["latency_ms"]
