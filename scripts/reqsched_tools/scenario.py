"""Scenario files (TOML or JSON) for the testbed: loading, defaults, validation.

A scenario gives the link, the servers, the classes and their users, the object
sizes (or a log to replay), optional cross traffic, the duration, the modes to
compare and reqsched's directives. See doc/testbed.md for every key.
"""
from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from typing import Any, Optional

SCENARIO_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "scenarios")
BASELINE_MODES = ("stock", "delay-pools", "htb")
POLICIES = ("msf", "rfq", "drr")
WINDOWS = ("wrc-mult", "wrc-aimd", "rtc")
# TCP payload per 1514-byte Ethernet frame (MSS 1448 with timestamps): the
# share of the wire rate C that Squid can ever read as response bytes.
PAYLOAD_PER_WIRE = 1448.0 / 1514.0


class ScenarioError(ValueError):
    pass


@dataclass
class ClassSpec:
    name: str
    weight: float
    users: int
    pattern: str = "backlogged"          # backlogged | think
    parallel: int = 1                    # connections per user (backlogged)
    think_s: float = 5.0                 # mean exponential think time (think)
    phases: list[tuple[float, float]] = field(default_factory=list)  # active [start, end) s


@dataclass
class ModeSpec:
    """One gateway mode. name is what the user wrote (e.g. msf+sff:wrc-aimd@0.9)."""
    name: str
    kind: str                            # stock | delay-pools | htb | reqsched
    policy: str = ""
    sff: bool = False
    window: str = ""
    target_utilization: float = 0.98

    @property
    def needs_patched_squid(self) -> bool:
        return self.kind == "reqsched"


@dataclass
class Scenario:
    name: str
    description: str
    duration_s: float
    warmup_s: float
    seed: int
    downlink_bps: float
    uplink_bps: float
    rtt_ms: float
    queue_bdp: float
    server_count: int
    server_delay_ms: tuple[float, float]
    server_rate_bps: tuple[float, float]
    size_mu: float
    size_sigma: float
    replay_log: Optional[str]
    replay_urls: Optional[str]
    classes: list[ClassSpec]
    modes: list[ModeSpec]
    reqsched_window: str
    reqsched_update_interval_s: int
    reqsched_target_utilization: float
    reqsched_extra: list[str]
    cross_rate_bps: float
    cross_period_s: float
    cross_start_s: float
    timeline_bin_s: float
    source: str = ""

    @property
    def payload_bps(self) -> float:
        return self.downlink_bps * PAYLOAD_PER_WIRE

    def to_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["classes"] = [c.__dict__ for c in self.classes]
        d["modes"] = [m.name for m in self.modes]
        return d


def parse_mode(text: str, default_window: str, default_u: float) -> ModeSpec:
    """stock | delay-pools | htb | POLICY[+sff][:WINDOW][@U] (U as 0.9 or 90%)."""
    t = text.strip()
    if t in BASELINE_MODES:
        return ModeSpec(name=t, kind=t)
    m = re.fullmatch(r"(msf|rfq|drr)(\+sff)?(?::([a-z-]+|fixed-\d+))?(?:@([0-9.]+%?))?", t)
    if not m:
        raise ScenarioError(f"unknown mode {text!r} (stock, delay-pools, htb or "
                            f"POLICY[+sff][:WINDOW][@U], POLICY in {POLICIES})")
    window = m.group(3) or default_window
    if window not in WINDOWS and not re.fullmatch(r"fixed-\d+", window):
        raise ScenarioError(f"mode {text!r}: unknown window {window!r} ({', '.join(WINDOWS)}, fixed-N)")
    u = default_u
    if m.group(4):
        s = m.group(4)
        u = float(s[:-1]) / 100.0 if s.endswith("%") else float(s)
        if not 0.01 <= u <= 1.0:
            raise ScenarioError(f"mode {text!r}: target utilization {s} not in 1%..100%")
    return ModeSpec(name=t, kind="reqsched", policy=m.group(1), sff=bool(m.group(2)),
                    window=window, target_utilization=u)


def _pair(v: Any, what: str) -> tuple[float, float]:
    if isinstance(v, (int, float)):
        return float(v), float(v)
    if isinstance(v, list) and len(v) == 2:
        lo, hi = float(v[0]), float(v[1])
        if lo < 0 or hi < lo:
            raise ScenarioError(f"{what}: bad range {v}")
        return lo, hi
    raise ScenarioError(f"{what}: expected a number or [lo, hi], got {v!r}")


def find_scenario(name: str) -> str:
    for ext in (".toml", ".json"):
        p = os.path.join(SCENARIO_DIR, name + ext)
        if os.path.exists(p):
            return p
    names = sorted(os.path.splitext(f)[0] for f in os.listdir(SCENARIO_DIR)
                   if f.endswith((".toml", ".json")))
    raise ScenarioError(f"no scenario {name!r} in {SCENARIO_DIR} (have: {', '.join(names)})")


def load_file(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as f:
            if path.endswith(".json"):
                return json.load(f)
            return tomllib.load(f)
    except (OSError, ValueError) as e:
        raise ScenarioError(f"{path}: {e}") from e


def build(raw: dict[str, Any], source: str = "") -> Scenario:
    """Validate a parsed scenario dict and fill in defaults."""
    def get(tbl: dict, key: str, default: Any) -> Any:
        return tbl.get(key, default) if isinstance(tbl, dict) else default

    link = raw.get("link", {})
    servers = raw.get("servers", {})
    sizes = raw.get("sizes", {})
    rs = raw.get("reqsched", {})
    cross = raw.get("cross_traffic", {})
    duration = float(raw.get("duration_s", 200))
    if duration <= 0:
        raise ScenarioError("duration_s must be > 0")
    down = float(get(link, "downlink_bps", 2_000_000))
    if down < 64_000:
        raise ScenarioError(f"link.downlink_bps {down} too small (>= 64000)")
    classes = []
    for i, c in enumerate(raw.get("classes", [])):
        try:
            cs = ClassSpec(name=str(c["name"]), weight=float(c["weight"]), users=int(c["users"]),
                           pattern=str(c.get("pattern", "backlogged")),
                           parallel=int(c.get("parallel", 1)),
                           think_s=float(c.get("think_s", 5.0)),
                           phases=[_pair(p, f"classes[{i}].phases") for p in
                                   c.get("phases", [[0, duration]])])
        except KeyError as e:
            raise ScenarioError(f"classes[{i}]: missing key {e}") from e
        if cs.weight <= 0 or cs.users < 0 or cs.users > 250 or cs.parallel < 1:
            raise ScenarioError(f"class {cs.name}: weight > 0, 0 <= users <= 250, parallel >= 1")
        if cs.pattern not in ("backlogged", "think"):
            raise ScenarioError(f"class {cs.name}: pattern must be backlogged or think")
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", cs.name):
            raise ScenarioError(f"class name {cs.name!r}: letters, digits, - and _ only")
        classes.append(cs)
    if not classes or len(classes) > 200:
        raise ScenarioError("a scenario needs 1..200 [[classes]]")
    window = str(get(rs, "window", "wrc-mult"))
    target_u = float(get(rs, "target_utilization", 0.98))
    modes = [parse_mode(m, window, target_u) for m in
             raw.get("modes", ["stock", "delay-pools", "htb", "msf", "rfq", "drr", "msf+sff"])]
    sc = Scenario(
        name=str(raw.get("name", os.path.splitext(os.path.basename(source))[0] or "custom")),
        description=str(raw.get("description", "")),
        duration_s=duration,
        warmup_s=float(raw.get("warmup_s", min(20.0, duration / 5))),
        seed=int(raw.get("seed", 1)),
        downlink_bps=down,
        uplink_bps=float(get(link, "uplink_bps", down)),
        rtt_ms=float(get(link, "rtt_ms", 100)),
        queue_bdp=float(get(link, "queue_bdp", 1.5)),
        server_count=int(get(servers, "count", 12)),
        server_delay_ms=_pair(get(servers, "delay_ms", [20, 200]), "servers.delay_ms"),
        server_rate_bps=_pair(get(servers, "rate_bps", [0, 0]), "servers.rate_bps"),
        size_mu=float(get(sizes, "mu", 9.357)),
        size_sigma=float(get(sizes, "sigma", 1.318)),
        replay_log=get(sizes, "access_log", None),
        replay_urls=get(sizes, "url_list", None),
        classes=classes,
        modes=modes,
        reqsched_window=window,
        reqsched_update_interval_s=int(get(rs, "update_interval_s", 5)),
        reqsched_target_utilization=target_u,
        reqsched_extra=[str(x) for x in get(rs, "directives", [])],
        cross_rate_bps=float(get(cross, "rate_bps", 0)),
        cross_period_s=float(get(cross, "period_s", 0)),
        cross_start_s=float(get(cross, "start_s", 0)),
        timeline_bin_s=float(raw.get("timeline_bin_s", 5)),
        source=source,
    )
    if not 1 <= sc.server_count <= 250:
        raise ScenarioError("servers.count must be 1..250")
    if sc.warmup_s >= sc.duration_s:
        raise ScenarioError("warmup_s must be shorter than duration_s")
    if len({c.name for c in classes}) != len(classes):
        raise ScenarioError("class names must be unique")
    if len(classes) > 240:
        raise ScenarioError("at most 240 classes (one /24 of client addresses each)")
    return sc


def load(name: Optional[str] = None, spec: Optional[str] = None,
         overrides: Optional[dict[str, Any]] = None) -> Scenario:
    path = spec if spec else find_scenario(name or "")
    raw = load_file(path)
    if overrides:
        raw.update({k: v for k, v in overrides.items() if v is not None})
    if spec is None and name and "name" not in raw:
        raw["name"] = name
    return build(raw, source=path)
