# SPDX-License-Identifier: GPL-2.0-or-later
"""The website-gateway model (sim/gateway.c) and the mQoS paper's results
(scenario website-gateway), with honest tolerances. Measured with seeds 1-3
(doc/website-gateway.md): mqos's open-load shares are within 5 % of 6:3:1 on
every resource, its throughput 1.12-1.14x sqos's and 1.19x nqos's.
Costs learned online (scenario website-gateway-learned): after a one-minute
warm-up, shares within 9.8 % of the runs with the kinds' costs (seeds 1-3)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

TARGET = (0.6, 0.3, 0.1)

SPEC = """model gateway
seed 1
duration 20
warmup 5
mode {mode}
patience 2
server_max 150
resource cpu
resource disk
resource bw
kind cgi 0.1 5 0.2 0.4
kind photo 0.2 0.4 4 0.6
kind media 0.3 0.2 0.4 3
class gold 6
class silver 3
class bronze 1
load gold 400 0.6 0.2 0.2
load silver 400 0.6 0.2 0.2
load bronze 400 0.6 0.2 0.2
"""


def run(engine: Path, spec: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(engine), "-"], input=spec, capture_output=True, text=True,
                          check=False, timeout=120)


def metrics(scenario: Any) -> dict[str, Any]:
    return scenario("website-gateway")["metrics"]


def test_open_mqos_splits_every_resource_6_3_1(scenario) -> None:
    for j, shares in enumerate(metrics(scenario)["open"]["mqos"]["shares"]):
        for got, want in zip(shares, TARGET):
            assert abs(got - want) / want <= 0.10, (j, shares)


def test_open_mqos_uses_every_resource_and_serves_more(scenario) -> None:
    o = metrics(scenario)["open"]
    assert min(o["mqos"]["utilization"]) >= 0.95, o["mqos"]["utilization"]
    assert o["mqos"]["throughput"] >= 1.10 * o["sqos"]["throughput"]
    assert o["mqos"]["throughput"] >= 1.10 * o["nqos"]["throughput"]


def test_open_sqos_splits_cpu_only(scenario) -> None:
    o = metrics(scenario)["open"]
    cpu = o["sqos"]["shares"][0]
    for got, want in zip(cpu, TARGET):
        assert abs(got - want) / want <= 0.10, cpu
    # the CPU is not kept full: requests slowed by an overloaded disk or
    # bandwidth hold their CPU share (Fig. 4b's waste)
    assert o["sqos"]["utilization"][0] < 0.95 <= o["mqos"]["utilization"][0]


@pytest.mark.parametrize("load", ["open", "closed"])
def test_nqos_does_not_differentiate(scenario, load: str) -> None:
    for shares in metrics(scenario)[load]["nqos"]["shares"]:
        for got in shares:
            assert abs(got - 1 / 3) / (1 / 3) <= 0.10, shares


@pytest.mark.parametrize("mode", ["sqos", "mqos", "drf"])
def test_closed_higher_class_lower_latency(scenario, mode: str) -> None:
    lat = metrics(scenario)["closed"][mode]["latency"]
    assert lat[0] < lat[1] < lat[2], lat


def test_open_drf_splits_every_resource_near_6_3_1(scenario) -> None:
    """drf orders classes by the dominant shares they were given (DRFQ):
    every resource within the issue's 10 % of 6:3:1 (worst 8.7 %, bronze on
    the bandwidth, with seed 1; 7.6 % and 3.7 % with seeds 2 and 3). With
    the key at what a class held at the decision (before 2026-11-26) bronze
    got 10.9 %, 18.5 % and 10.8 % less than its share of the CPU or the
    bandwidth."""
    for j, shares in enumerate(metrics(scenario)["open"]["drf"]["shares"]):
        assert shares[0] > shares[1] > shares[2], shares
        for got, want in zip(shares, TARGET):
            assert abs(got - want) / want <= 0.10, (j, shares)


KIND_COSTS = [[5, 0.2, 0.4], [0.4, 4, 0.6], [0.2, 0.4, 3]]


@pytest.mark.parametrize("mode", ["mqos", "drf"])
def test_learned_costs_give_the_table_shares(scenario, mode: str) -> None:
    """No table: after a one-minute warm-up each resource is split as with
    the kinds' costs, within the issue's 15 %; mqos within 15 % of 6:3:1."""
    m = scenario("website-gateway-learned")["metrics"]
    for dflt in ("5", "1"):
        o = m[f"{mode} learned {dflt}"]
        assert o["off_table"] <= 0.15, (dflt, o["shares"], m[f"{mode} table"]["shares"])
        if mode == "mqos":
            assert o["off_target"] <= 0.15, (dflt, o["shares"])
        # nearly every request costed by its URL's learned cost
        lr = o["learned"]
        assert lr["costed_url"] > 0.98 * (lr["costed_url"] + lr["costed_pattern"] + lr["costed_default"]), lr
        assert lr["entries"] == 3 * 20 + 3 and lr["evictions"] == 0, lr


def test_learned_costs_are_the_kinds_costs_from_a_high_default(scenario) -> None:
    """From a default of 5 % (the largest cost of any kind) both policies
    learn the kinds' exact costs: the server is never oversubscribed, so
    each request reports what it needs. From 1 %, mqos oversubscribes the
    server at first; the requests run slower and report less than they
    need, and that estimate confirms itself: every cost learned low by the
    same factor (which keeps the shares)."""
    m = scenario("website-gateway-learned")["metrics"]
    for mode in ("mqos", "drf"):
        assert m[f"{mode} learned 5"]["learned"]["pattern_cost"] == KIND_COSTS, mode
    low = m["mqos learned 1"]["learned"]["pattern_cost"]
    ratios = [got / want for kind, costs in zip(low, KIND_COSTS) for got, want in zip(kind, costs)
              if want >= 2]
    assert all(0.5 <= r < 0.9 for r in ratios) and max(ratios) - min(ratios) <= 0.05, low


def test_engine_is_deterministic(engine: Path) -> None:
    a, b = run(engine, SPEC.format(mode="mqos")), run(engine, SPEC.format(mode="mqos"))
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    res = json.loads(a.stdout)
    assert res["model"] == "gateway" and res["mode"] == "mqos"
    assert [c["name"] for c in res["classes"]] == ["gold", "silver", "bronze"]


@pytest.mark.parametrize("bad,line,why", [
    ("mode fifo", 5, "mode: nqos, sqos, mqos or drf"),
    ("quantum 0", 5, "unknown directive or wrong arguments"),
    ("kind x 0.1 5 101 0", 5, "kind: cost is a % of capacity"),
    ("kind x -1 5 1 0", 5, "kind: bad service time"),
    ("class gold 0", 5, "class: bad weight"),
    ("class gold 2", 5, "class: too many, or a duplicate"),
    ("load nobody 10 1 1 1", 5, "unknown class"),
    ("load gold 10 1 1", 5, "one probability per kind"),
    ("users gold 10 nan 1 1 1", 5, "bad think time"),
])
def test_bad_spec_lines_are_named(engine: Path, bad: str, line: int, why: str) -> None:
    lines = SPEC.format(mode="mqos").splitlines()
    if bad.startswith(("load", "users")):
        lines.append(bad)
        line = len(lines)
    elif bad.startswith("class gold 2"):
        lines.append(bad)
        line = len(lines)
    elif bad.startswith("kind"):
        lines.insert(12, bad)
        line = 13
    else:
        lines.insert(line - 1, bad)
    p = run(engine, "\n".join(lines) + "\n")
    assert p.returncode != 0
    assert f"-:{line}: {why}" in p.stderr, p.stderr


@pytest.mark.parametrize("bad,why", [
    ("default_cost 1 2", "unknown directive or wrong arguments"),
    ("default_cost 1 2 101", "default_cost: a % of capacity per resource"),
    ("learn -1", "unknown directive or wrong arguments"),
    ("pages 0", "unknown directive or wrong arguments"),
])
def test_bad_learning_lines_are_named(engine: Path, bad: str, why: str) -> None:
    spec = SPEC.format(mode="mqos") + bad + "\n"
    p = run(engine, spec)
    assert p.returncode != 0
    assert f"-:{len(spec.splitlines())}: {why}" in p.stderr, p.stderr


def test_unknown_sqos_resource_is_refused(engine: Path) -> None:
    p = run(engine, SPEC.format(mode="sqos") + "sqos_resource gpu\n")
    assert p.returncode != 0 and "sqos_resource gpu: no such resource" in p.stderr


# The testbed's page table from the prober (doc/website-gateway.md, "With the
# page table the prober writes"): a CGI page costs 100 % CPU and 4 % of the
# bandwidth, a photo 86 % disk and 18 % bandwidth, a media file 100 % of the
# bandwidth; service times and the open load as on the testbed (70 req/s per
# class, 2-s patience). Without the reservation (lib/reservation.c) mqos
# served 0 media files: a CGI page always held some bandwidth.
PROBER_SPEC = """model gateway
seed 1
duration 60
warmup 10
mode {mode}
sqos_resource cpu
server_max 150
patience 2
resource cpu
resource disk
resource bw
kind cgi 0.016 100 0 4
kind photo 0.05 0 86 18
kind media 0.04 0 0 100
class gold 6
class silver 3
class bronze 1
load gold 70 0.6 0.2 0.2
load silver 70 0.6 0.2 0.2
load bronze 70 0.6 0.2 0.2
"""


def test_prober_table_mqos_serves_every_kind_6_3_1(engine: Path) -> None:
    """Measured (seeds 1-3): 59-60 req/s, media files 171/91/31 (seed 1),
    every resource within 16 % of 6:3:1; before: 83 req/s, 0 media files."""
    p = run(engine, PROBER_SPEC.format(mode="mqos"))
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    for c in res["classes"]:
        assert min(c["kind_done"]) >= 20, (c["name"], c["kind_done"])
    for j in range(3):
        used = [c["utilization"][j] for c in res["classes"]]
        for got, want in zip(used, TARGET):
            assert abs(got / sum(used) - want) / want <= 0.25, (j, used)


def test_prober_table_drf_uses_more_than_when_it_stopped(engine: Path) -> None:
    """drf no longer stops when its top class's head has no room: the CPU
    0.67 (was 0.57), 58.8 req/s (was 51.6)."""
    p = run(engine, PROBER_SPEC.format(mode="drf"))
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert res["utilization"][0] >= 0.62 and res["throughput"] >= 55, res["utilization"]
