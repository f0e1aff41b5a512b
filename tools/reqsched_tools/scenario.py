# SPDX-License-Identifier: GPL-2.0-or-later
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

from .siteorigin import SiteConfig

SCENARIO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios")
BASELINE_MODES = ("stock", "delay-pools", "htb")
# request_sched_policy's words (Squid's cf.data.pre, rs_policy_parse() in lib/)
POLICIES = ("msf", "rfq", "drr")
# the website-gateway modes (issue 13): nqos = the scheduler off; the policies
# that schedule by the page table's costs (admission only: no byte layer)
SITE_POLICIES = ("mqos", "sqos", "drf")
SITE_BASELINE = "nqos"
WINDOWS = ("wrc-mult", "wrc-aimd", "rtc")
# TCP payload per 1514-byte Ethernet frame (MSS 1448 with timestamps): the
# share of the wire rate C that Squid can ever read as response bytes.
PAYLOAD_PER_WIRE = 1448.0 / 1514.0
# a "small object" for the interactive latency targets: body <= this many bytes
SMALL_OBJECT_BYTES = 16384
# the gateway's WAN interface (netns.py): Squid's link counter reads its rx bytes
GW_WAN_IFACE = "wan0"


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
    # response sizes of this class's requests: lognormal(mu, sigma) capped at
    # size_max, or uniform in size_uniform = [lo, hi] bytes; None = [sizes]
    size_mu: Optional[float] = None
    size_sigma: Optional[float] = None
    size_uniform: Optional[tuple[float, float]] = None
    size_max: int = 100_000_000
    tunnel: bool = False                 # every request inside a CONNECT tunnel
    requests_per_tunnel: int = 6         # then the tunnel is closed and a new one opened
    # [replay] scenarios: the log clients this class's users replay (client map
    # MATCHes: address, CIDR, login:NAME or *); users = its source addresses
    clients: list[str] = field(default_factory=list)


@dataclass
class SiteSpec:
    """[site]: the website-gateway scenario. Squid accelerates one origin
    (siteorigin.py) whose pages each spend one resource, with fixed capacities;
    each class sends an open Poisson load (siteload.py) of rate requests/s from
    its users' addresses. Bandwidth capacity = the link (downlink_bps payload)."""
    origin: SiteConfig = field(default_factory=SiteConfig)   # pages and capacities
    hold_s: float = 0.5                  # page table: cost = demand / (capacity x hold_s)
    mix: dict[str, float] = field(default_factory=lambda: {"cgi": 0.6, "photos": 0.2,
                                                           "media": 0.2})
    rate: float = 70.0                   # requests/s offered by each class
    patience_s: float = 10.0             # a request not answered by then is abandoned
    quantum: float = 5.0                 # request_sched_mqos_quantum, % of each capacity
    # the page table: "capacities" (written from the known capacities and hold_s)
    # or "prober" (reqsched-prober crawls the origin through the link before the modes)
    page_table: str = "capacities"


@dataclass
class ModeSpec:
    """One gateway mode. name is what the user wrote (e.g. msf+sff:wrc-aimd@0.9/nopacing).

    reqsched modes have the byte layer (request_sched_pacing on, link counter
    iface wan0 rx) unless pacing is False (/nopacing: admission only); with
    keep_share (/keep) its pacer keeps the share of a user waiting for its
    server (request_sched_pacing_idle_share keep)."""
    name: str
    kind: str                            # stock | delay-pools | htb | reqsched
    policy: str = ""
    sff: bool = False
    window: str = ""
    target_utilization: float = 0.98
    pacing: bool = True
    keep_share: bool = False

    @property
    def needs_patched_squid(self) -> bool:
        return self.kind == "reqsched"

    @property
    def needs_pacing_squid(self) -> bool:
        return self.kind == "reqsched" and self.pacing


@dataclass
class Scenario:
    name: str
    description: str
    duration_s: float
    warmup_s: float
    seed: int
    downlink_bps: float
    uplink_bps: float
    buffer_ms: float
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
    restart_at_s: float = 0.0            # > 0: stop and start Squid at this time of each mode
    idle_probe_s: float = 0.0            # > 0: idle-link small-object fetches before the modes
    small_object_bytes: int = SMALL_OBJECT_BYTES
    targets: dict[str, Any] = field(default_factory=dict)
    sweep_key: str = ""                  # e.g. "link.buffer_ms"; one run per value
    sweep_values: list[Any] = field(default_factory=list)
    sweep_label: str = ""                # this point of a sweep, e.g. "buffer_ms-250"
    # [replay]: a faithful replay of this access log (reqsched-load replay) instead
    # of the classes' synthetic users; its times x replay_time_scale
    replay_access_log: Optional[str] = None
    replay_time_scale: float = 1.0
    replay_closed_loop: bool = False
    replay_max_conns: int = 6            # connections per user (open loop)
    # [link] proxy_initrwnd: the initial receive window, in segments, of the
    # proxy host's route toward the servers (`ip route ... initrwnd N`, the
    # deployment doc/link-control.md recommends); 0 = the kernel's (64 KB)
    proxy_initrwnd: int = 0
    # [link] propagation_rtt_ms: a round-trip propagation delay between the
    # gateway and the servers (half each way, reqsched-delayline in the ISP
    # namespace; the kernel has no netem); 0 = none, the path's RTT is then
    # the ISP queue's delay alone
    propagation_rtt_ms: float = 0.0
    # [proxy] workers: Squid's SMP workers (`workers N`, daemon mode in the
    # foreground); 1 = one process (-N), as every mode runs by default
    proxy_workers: int = 1
    site: Optional[SiteSpec] = None      # [site]: the website-gateway scenario

    @property
    def payload_bps(self) -> float:
        return self.downlink_bps * PAYLOAD_PER_WIRE

    def to_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["classes"] = [c.__dict__ for c in self.classes]
        d["modes"] = [m.name for m in self.modes]
        d["site"] = (dict(self.site.__dict__, origin=self.site.origin.__dict__)
                     if self.site else None)
        return d


def parse_mode(text: str, default_window: str, default_u: float) -> ModeSpec:
    """stock | delay-pools | htb | POLICY[+sff][:WINDOW][@U][/nopacing|/keep] (U as 0.9
    or 90%).

    Without /nopacing a reqsched mode runs the byte layer (request_sched_pacing on,
    request_sched_link_counter iface wan0 rx); /nopacing is admission only
    (request_sched_pacing off, no link counter: the papers' scheduler); /keep is
    the byte layer with request_sched_pacing_idle_share keep."""
    t = text.strip()
    if t in BASELINE_MODES:
        return ModeSpec(name=t, kind=t)
    if t == SITE_BASELINE:
        return ModeSpec(name=t, kind="stock")
    m = re.fullmatch(f"({'|'.join(SITE_POLICIES)})" r"(?::fixed-(\d+))?", t)
    if m:
        window = f"fixed-{m.group(2)}" if m.group(2) else default_window
        return ModeSpec(name=t, kind="reqsched", policy=m.group(1), window=window, pacing=False)
    m = re.fullmatch(f"({'|'.join(POLICIES)})" r"(\+sff)?(?::([a-z-]+|fixed-\d+))?(?:@([0-9.]+%?))?"
                     r"(/nopacing|/keep)?", t)
    if not m:
        raise ScenarioError(f"unknown mode {text!r} (stock, delay-pools, htb or "
                            f"POLICY[+sff][:WINDOW][@U][/nopacing|/keep], POLICY in {POLICIES})")
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
                    window=window, target_utilization=u, pacing=m.group(5) != "/nopacing",
                    keep_share=m.group(5) == "/keep")


def buffer_ms_of(link: dict[str, Any]) -> float:
    """The ISP buffer depth in ms at C: [link] buffer_ms, or (old files) queue_bdp
    BDPs of rtt_ms, i.e. queue_bdp x rtt_ms ms. Default 150 ms (= the old default
    1.5 BDP of 100 ms)."""
    if "buffer_ms" in link and "queue_bdp" in link:
        raise ScenarioError("link: give buffer_ms or queue_bdp (old), not both")
    if "rtt_ms" in link and "queue_bdp" not in link:
        raise ScenarioError("link.rtt_ms only converts an old queue_bdp to buffer_ms and adds "
                            "no delay: a round-trip delay is link.propagation_rtt_ms")
    if "buffer_ms" in link:
        ms = float(link["buffer_ms"])
    elif "queue_bdp" in link:
        ms = float(link["queue_bdp"]) * float(link.get("rtt_ms", 100))
    else:
        ms = 150.0
    if not 1.0 <= ms <= 10_000.0:
        raise ScenarioError(f"link.buffer_ms {ms:g} not in [1, 10000] ms")
    return ms


def set_key(raw: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    """A deep copy of raw with raw[a][b] = value for dotted = "a.b" (tables created)."""
    out = json.loads(json.dumps(raw))
    parts = dotted.split(".")
    d = out
    for p in parts[:-1]:
        if not isinstance(d.get(p, {}), dict):
            raise ScenarioError(f"sweep key {dotted!r}: {p} is not a table")
        d = d.setdefault(p, {})
    d[parts[-1]] = value
    if dotted == "link.buffer_ms":
        d.pop("queue_bdp", None)
    return out


def sweep_label(key: str, value: Any) -> str:
    v = f"{value:g}" if isinstance(value, (int, float)) else str(value)
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"{key.rsplit('.', 1)[-1]}-{v}")


def sweep_points(raw: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """[sweep] key = "a.b", values = [...] -> [(label, raw with a.b = value)], or
    [("", raw)] without a sweep."""
    sw = raw.get("sweep")
    if not sw:
        return [("", raw)]
    if not isinstance(sw, dict) or "key" not in sw or not isinstance(sw.get("values"), list) \
            or not sw["values"]:
        raise ScenarioError('[sweep] needs key = "table.key" and a non-empty values = [...]')
    key = str(sw["key"])
    return [(sweep_label(key, v), set_key(raw, key, v)) for v in sw["values"]]


def workers_of(proxy: dict[str, Any]) -> int:
    """[proxy] workers: 1..16 Squid SMP workers."""
    v = proxy.get("workers", 1)
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 16:
        raise ScenarioError(f"proxy.workers {v!r}: an integer in [1, 16]")
    return v


def initrwnd_of(link: dict[str, Any]) -> int:
    """[link] proxy_initrwnd: segments, 0 (the kernel's window) or 1..1000."""
    v = link.get("proxy_initrwnd", 0)
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 1000:
        raise ScenarioError(f"link.proxy_initrwnd {v!r}: an integer in [0, 1000] segments")
    return v


def propagation_of(link: dict[str, Any]) -> float:
    """[link] propagation_rtt_ms: ms in [0, 2000] (0: no delay line)."""
    v = link.get("propagation_rtt_ms", 0)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 2000:
        raise ScenarioError(f"link.propagation_rtt_ms {v!r}: a number in [0, 2000] ms")
    return float(v)


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


# Every key a scenario file may hold, by table ("" the top level; "classes"
# each [[classes]] entry, "classes.sizes" its sizes). [site] and [targets] are
# checked where they are read (site_of(), the report's targets).
KNOWN_KEYS: dict[str, tuple[str, ...]] = {
    "": ("name", "description", "duration_s", "warmup_s", "seed", "timeline_bin_s",
         "restart_at_s", "idle_probe_s", "small_object_bytes", "modes", "link", "servers",
         "sizes", "reqsched", "cross_traffic", "proxy", "classes", "targets", "sweep",
         "replay", "site"),
    "link": ("downlink_bps", "uplink_bps", "buffer_ms", "queue_bdp", "rtt_ms",
             "proxy_initrwnd", "propagation_rtt_ms"),
    "servers": ("count", "delay_ms", "rate_bps"),
    "sizes": ("mu", "sigma", "access_log", "url_list"),
    "reqsched": ("window", "target_utilization", "update_interval_s", "directives"),
    "cross_traffic": ("rate_bps", "rate_fraction", "period_s", "start_s"),
    "proxy": ("workers",),
    "sweep": ("key", "values"),
    "replay": ("access_log", "time_scale", "closed_loop", "max_conns"),
    "classes": ("name", "weight", "users", "pattern", "parallel", "think_s", "phases",
                "tunnel", "requests_per_tunnel", "clients", "sizes"),
    "classes.sizes": ("mu", "sigma", "uniform", "max"),
}


def check_keys(raw: dict[str, Any]) -> None:
    """Refuses a key the loader would not read, naming it: a value under the
    wrong table (downlink_bps at the top, not in [link]) would otherwise be
    replaced by its default without a word."""
    def check(tbl: Any, where: str, label: str) -> None:
        if not isinstance(tbl, dict):
            return
        for k in tbl:
            if k in KNOWN_KEYS[where]:
                continue
            home = [t for t, keys in KNOWN_KEYS.items() if k in keys and t not in ("", where)]
            hint = f"; it belongs in [{home[0]}]" if home else ""
            raise ScenarioError(f"{label}{k}: unknown key{hint} (have {', '.join(KNOWN_KEYS[where])})")

    check(raw, "", "")
    for t in KNOWN_KEYS:
        if t and "." not in t and t != "classes":
            check(raw.get(t), t, f"{t}.")
    classes = raw.get("classes", [])
    for i, c in enumerate(classes if isinstance(classes, list) else []):
        check(c, "classes", f"classes[{i}].")
        if isinstance(c, dict):
            check(c.get("sizes"), "classes.sizes", f"classes[{i}].sizes.")


def build(raw: dict[str, Any], source: str = "") -> Scenario:
    """Validate a parsed scenario dict and fill in defaults."""
    check_keys(raw)
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
                                   c.get("phases", [[0, duration]])],
                           tunnel=bool(c.get("tunnel", False)),
                           requests_per_tunnel=int(c.get("requests_per_tunnel", 6)),
                           clients=[str(x) for x in c.get("clients", [])])
            cz = c.get("sizes", {})
            if not isinstance(cz, dict):
                raise ScenarioError(f"classes[{i}].sizes must be a table")
            if "uniform" in cz:
                cs.size_uniform = _pair(cz["uniform"], f"classes[{i}].sizes.uniform")
            if "mu" in cz or "sigma" in cz:
                cs.size_mu = float(cz.get("mu", get(sizes, "mu", 9.357)))
                cs.size_sigma = float(cz.get("sigma", get(sizes, "sigma", 1.318)))
            cs.size_max = int(cz.get("max", 100_000_000))
        except KeyError as e:
            raise ScenarioError(f"classes[{i}]: missing key {e}") from e
        if cs.weight <= 0 or cs.users < 0 or cs.users > 250 or cs.parallel < 1:
            raise ScenarioError(f"class {cs.name}: weight > 0, 0 <= users <= 250, parallel >= 1")
        if cs.requests_per_tunnel < 1 or cs.size_max < 1:
            raise ScenarioError(f"class {cs.name}: requests_per_tunnel and sizes.max >= 1")
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
             raw.get("modes", [*BASELINE_MODES, *POLICIES, "msf+sff"])]
    sc = Scenario(
        name=str(raw.get("name", os.path.splitext(os.path.basename(source))[0] or "custom")),
        description=str(raw.get("description", "")),
        duration_s=duration,
        warmup_s=float(raw.get("warmup_s", min(20.0, duration / 5))),
        seed=int(raw.get("seed", 1)),
        downlink_bps=down,
        uplink_bps=float(get(link, "uplink_bps", down)),
        buffer_ms=buffer_ms_of(link if isinstance(link, dict) else {}),
        proxy_initrwnd=initrwnd_of(link if isinstance(link, dict) else {}),
        propagation_rtt_ms=propagation_of(link if isinstance(link, dict) else {}),
        proxy_workers=workers_of(raw.get("proxy", {}) if isinstance(raw.get("proxy", {}), dict) else {}),
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
        cross_rate_bps=(float(get(cross, "rate_fraction", 0)) * down
                        if "rate_fraction" in cross else float(get(cross, "rate_bps", 0))),
        cross_period_s=float(get(cross, "period_s", 0)),
        cross_start_s=float(get(cross, "start_s", 0)),
        timeline_bin_s=float(raw.get("timeline_bin_s", 5)),
        source=source,
        restart_at_s=float(raw.get("restart_at_s", 0)),
        idle_probe_s=float(raw.get("idle_probe_s", 0)),
        small_object_bytes=int(raw.get("small_object_bytes", SMALL_OBJECT_BYTES)),
        targets=dict(raw.get("targets", {})),
        sweep_key=str(get(raw.get("sweep", {}), "key", "")),
        sweep_values=list(get(raw.get("sweep", {}), "values", [])),
    )
    rp = raw.get("replay")
    if rp is not None:
        if not isinstance(rp, dict) or "access_log" not in rp:
            raise ScenarioError('[replay] needs access_log = "path"')
        sc.replay_access_log = str(rp["access_log"])
        sc.replay_time_scale = float(rp.get("time_scale", 1.0))
        sc.replay_closed_loop = bool(rp.get("closed_loop", False))
        sc.replay_max_conns = int(rp.get("max_conns", 6))
        if not 1 <= sc.replay_max_conns <= 1000:
            raise ScenarioError("replay.max_conns must be in [1, 1000]")
        if not 0 < sc.replay_time_scale <= 1000:
            raise ScenarioError("replay.time_scale must be in (0, 1000]")
        if not any(c.clients for c in classes):
            raise ScenarioError("a [replay] scenario maps log clients to classes: give "
                                "clients = [...] in at least one class")
        if sc.replay_log or sc.replay_urls:
            raise ScenarioError("give [replay] or sizes.access_log/url_list, not both")
    elif any(c.clients for c in classes):
        raise ScenarioError("classes' clients = [...] need a [replay] table")
    if "site" in raw:
        sc.site = site_of(raw["site"])
    site_modes = {SITE_BASELINE, *SITE_POLICIES}
    for m in sc.modes:
        if (m.name == SITE_BASELINE or m.policy in SITE_POLICIES) != bool(sc.site):
            raise ScenarioError(f"mode {m.name}: {', '.join(sorted(site_modes))} are the "
                                f"modes of a [site] scenario, and only they")
        if m.policy in SITE_POLICIES and not m.window.startswith("fixed-"):
            raise ScenarioError(f"mode {m.name}: the resource policies need a fixed window "
                                f"(mqos:fixed-N, or [reqsched] window = \"fixed-N\")")
    if "rate_fraction" in cross and "rate_bps" in cross:
        raise ScenarioError("cross_traffic: give rate_bps or rate_fraction, not both")
    if not 0 <= sc.cross_rate_bps <= down:
        raise ScenarioError("cross_traffic: rate must be in [0, downlink_bps]")
    if sc.restart_at_s and not 0 < sc.restart_at_s < duration:
        raise ScenarioError("restart_at_s must be inside (0, duration_s)")
    if sc.idle_probe_s < 0 or sc.small_object_bytes < 1:
        raise ScenarioError("idle_probe_s >= 0 and small_object_bytes >= 1")
    if not 1 <= sc.server_count <= 250:
        raise ScenarioError("servers.count must be 1..250")
    if sc.warmup_s >= sc.duration_s:
        raise ScenarioError("warmup_s must be shorter than duration_s")
    if len({c.name for c in classes}) != len(classes):
        raise ScenarioError("class names must be unique")
    if len(classes) > 240:
        raise ScenarioError("at most 240 classes (one /24 of client addresses each)")
    return sc


def site_of(raw: Any) -> SiteSpec:
    """[site] -> SiteSpec, every value checked."""
    if not isinstance(raw, dict):
        raise ScenarioError("[site] must be a table")
    site = SiteSpec()
    known = [*site.origin.__dict__, *(k for k in site.__dict__ if k != "origin")]
    for k, v in raw.items():
        if k not in known:
            raise ScenarioError(f"site.{k}: unknown key (have {', '.join(known)})")
        obj: Any = site.origin if k in site.origin.__dict__ else site
        try:
            if k == "page_table":
                if v not in ("capacities", "prober"):
                    raise ValueError('"capacities" or "prober"')
                site.page_table = v
            elif k == "mix":
                mix = {str(a): float(b) for a, b in dict(v).items()}
                if not mix or set(mix) - {"cgi", "photos", "media"} or min(mix.values()) < 0 \
                        or not sum(mix.values()):
                    raise ValueError("expected { cgi = P, photos = P, media = P }, P >= 0")
                site.mix = mix
            else:
                setattr(obj, k, type(getattr(obj, k))(v))
                if getattr(obj, k) <= 0:
                    raise ValueError("must be > 0")
        except (TypeError, ValueError) as e:
            raise ScenarioError(f"site.{k} = {v!r}: {e}") from e
    return site


def load_raw(name: Optional[str] = None, spec: Optional[str] = None) -> tuple[dict[str, Any], str]:
    path = spec if spec else find_scenario(name or "")
    raw = load_file(path)
    if spec is None and name and "name" not in raw:
        raw["name"] = name
    return raw, path


def load(name: Optional[str] = None, spec: Optional[str] = None,
         overrides: Optional[dict[str, Any]] = None) -> Scenario:
    """The scenario (the first point of a sweep)."""
    raw, path = load_raw(name, spec)
    if overrides:
        raw.update({k: v for k, v in overrides.items() if v is not None})
    label, point = sweep_points(raw)[0]
    sc = build(point, source=path)
    sc.sweep_label = label
    return sc


def load_sweep(name: Optional[str] = None, spec: Optional[str] = None) -> list[Scenario]:
    """Every point of the scenario's [sweep] (one scenario without a sweep)."""
    raw, path = load_raw(name, spec)
    out = []
    for label, point in sweep_points(raw):
        sc = build(point, source=path)
        sc.sweep_label = label
        out.append(sc)
    return out
