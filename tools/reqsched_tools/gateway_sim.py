# SPDX-License-Identifier: GPL-2.0-or-later
"""The website-gateway scenario of reqsched-sim (the mQoS paper, section 4).

A web server with three resources (CPU, disk, bandwidth; capacity 100 %
each) serves three kinds of pages: CGI (CPU-heavy), photos (disk-heavy) and
media (bandwidth-heavy). Three classes, weights 6:3:1, send the same mix with
more CPU-heavy requests (60/20/20 %). The gateway forwards everything (nqos)
or schedules with libreqsched's sqos (CPU only), mqos or drf. Two loads:

* open: each class sends Poisson 400 req/s, about four times what the server
  can serve; a request that has not started service after 2 s is dropped
  (the paper's Avalanche load keeps the server saturated the same way);
  the server takes at most 150 requests at once (Apache's MaxClients).
* closed: 200 users per class, exp(1 s) think time between a response and
  their next request.

The learned variant (scenario website-gateway-learned, open load): the
gateway has no table; each request costs what the library's learner
(lib/costlearn.c) has for its URL (20 per kind), else for its kind's
pattern, else a default, and each served request reports what it held (the
Server-Timing convention of doc/website-gateway.md); a one-minute warm-up,
then the same 60 s measured as a run with the kinds' costs.

The engine's model is in sim/gateway.c (doc/website-gateway.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

Json = dict[str, Any]

RESOURCES = ("cpu", "disk", "bw")
# kind: mean service time (s) at full speed, % of cpu, disk, bw held
KINDS = (("cgi", 0.1, (5.0, 0.2, 0.4)),
         ("photo", 0.2, (0.4, 4.0, 0.6)),
         ("media", 0.3, (0.2, 0.4, 3.0)))
MIX = (0.6, 0.2, 0.2)
CLASSES = (("gold", 6.0), ("silver", 3.0), ("bronze", 1.0))
MODES = ("nqos", "sqos", "mqos", "drf")
LOADS = ("open", "closed")
OPEN_RATE = 400        # req/s per class
CLOSED_USERS = 200     # per class
THINK = 1.0
PATIENCE = 2.0
SERVER_MAX = 150
DURATION = 60.0
WARMUP = 10.0
TARGET = (0.6, 0.3, 0.1)   # each class's share of every resource, 6:3:1
# the learned variant
LEARN_WARMUP = 60.0
LEARN_ENTRIES = 4096
LEARN_PAGES = 20           # URLs per kind
LEARN_MODES = ("mqos", "drf")
# default costs, % of every resource: the costliest kind's largest cost,
# and Squid's request_sched_default_cost default
LEARN_DEFAULTS = (5.0, 1.0)


class Runner(Protocol):
    def run(self, r: Any) -> Json: ...


@dataclass
class GatewayRun:
    label: str
    mode: str
    load: str
    seed: int = 1
    duration: float = DURATION
    extra: list[str] = field(default_factory=list)
    warmup: float = WARMUP

    def spec(self) -> str:
        lines = ["model gateway", f"seed {self.seed}", f"duration {self.duration:g}",
                 f"warmup {self.warmup:g}", f"mode {self.mode}", "sqos_resource cpu",
                 f"server_max {SERVER_MAX}"]
        lines.append(f"patience {PATIENCE:g}" if self.load == "open" else "patience 0")
        lines += [f"resource {r}" for r in RESOURCES]
        for name, service, cost in KINDS:
            lines.append(f"kind {name} {service:g} " + " ".join(f"{c:g}" for c in cost))
        for name, weight in CLASSES:
            lines.append(f"class {name} {weight:g}")
        mix = " ".join(f"{p:g}" for p in MIX)
        for name, _ in CLASSES:
            if self.load == "open":
                lines.append(f"load {name} {OPEN_RATE} {mix}")
            else:
                lines.append(f"users {name} {CLOSED_USERS} {THINK:g} {mix}")
        return "\n".join(lines + self.extra) + "\n"


def resource_shares(res: Json) -> list[list[float]]:
    """Per resource, each class's share of what the classes used of it."""
    out = []
    for j in range(len(res["resources"])):
        used = [c["utilization"][j] for c in res["classes"]]
        total = sum(used)
        out.append([u / total if total > 0 else 0.0 for u in used])
    return out


def deviation(shares: list[list[float]], want: list[list[float]]) -> float:
    """The largest relative difference between two resources x classes
    share matrices."""
    return max(abs(g - w) / w for gs, ws in zip(shares, want) for g, w in zip(gs, ws))


def summary(res: Json) -> Json:
    return {"throughput": res["throughput"],
            "utilization": res["utilization"],
            "shares": resource_shares(res),
            "class_throughput": [c["throughput"] for c in res["classes"]],
            "latency": [c["latency_mean"] for c in res["classes"]],
            "latency_mean": res["latency_mean"],
            "dropped": [c["dropped"] for c in res["classes"]],
            "learned": res.get("learned")}


def ratio(xs: list[float]) -> str:
    base = xs[-1]
    return ":".join(f"{x / base:.1f}" if base > 0 else "inf" for x in xs)


def run_all(eng: Runner, seed: int) -> tuple[list[tuple[GatewayRun, Json]], Json]:
    """Every load x mode; the runs and {load: {mode: summary}}."""
    runs = []
    m: Json = {}
    for load in LOADS:
        m[load] = {}
        for mode in MODES:
            r = GatewayRun(f"{load} {mode}", mode, load, seed)
            res = eng.run(r)
            runs.append((r, res))
            m[load][mode] = summary(res)
    return runs, m


def learned_runs(seed: int) -> list[GatewayRun]:
    """Per mode, the run with the kinds' costs (the table) and one learning
    from each default cost; all with the same URLs drawn (common random
    numbers) and the same one-minute warm-up."""
    runs = []
    pages = f"pages {LEARN_PAGES}"
    for mode in LEARN_MODES:
        runs.append(GatewayRun(f"{mode} table", mode, "open", seed, extra=[pages],
                               warmup=LEARN_WARMUP))
        for dflt in LEARN_DEFAULTS:
            runs.append(GatewayRun(f"{mode} learned {dflt:g}", mode, "open", seed,
                                   extra=[pages, f"learn {LEARN_ENTRIES}",
                                          "default_cost " + " ".join([f"{dflt:g}"] * len(RESOURCES))],
                                   warmup=LEARN_WARMUP))
    return runs


def run_learned(eng: Runner, seed: int) -> tuple[list[tuple[GatewayRun, Json]], Json]:
    """The learned variant's runs and {label: summary + deviations from
    6:3:1 and from the mode's table run}."""
    runs = [(r, eng.run(r)) for r in learned_runs(seed)]
    m: Json = {r.label: summary(res) for r, res in runs}
    target = [list(TARGET)] * len(RESOURCES)
    for r, _ in runs:
        m[r.label]["off_target"] = deviation(m[r.label]["shares"], target)
        m[r.label]["off_table"] = deviation(m[r.label]["shares"], m[f"{r.mode} table"]["shares"])
    return runs, m

