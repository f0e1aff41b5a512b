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

    def spec(self) -> str:
        lines = ["model gateway", f"seed {self.seed}", f"duration {self.duration:g}",
                 f"warmup {WARMUP:g}", f"mode {self.mode}", "sqos_resource cpu",
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


def summary(res: Json) -> Json:
    return {"throughput": res["throughput"],
            "utilization": res["utilization"],
            "shares": resource_shares(res),
            "class_throughput": [c["throughput"] for c in res["classes"]],
            "latency": [c["latency_mean"] for c in res["classes"]],
            "latency_mean": res["latency_mean"],
            "dropped": [c["dropped"] for c in res["classes"]]}


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
