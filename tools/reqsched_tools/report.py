# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-report: table, report JSON and PNG plots from a testbed run directory.

  reqsched-report RUN_DIR [--json FILE] [--no-plots] [--quiet]

RUN_DIR is what `reqsched-testbed run` wrote: scenario.json plus one directory per
mode (requests.csv, class_bytes.csv, access.log, tc.csv, mgr.jsonl, run.json).
Writes RUN_DIR/report.json (one object per mode, doc/report-json.md),
RUN_DIR/table.txt and RUN_DIR/*.png, and prints the table.

Metrics are taken over the measured window [warmup_s, duration_s] of each mode:
  throughput   bytes the clients received per class (headers included) / window
  share        class bytes / all bytes; target = weight x users share of the active
               classes (MSF-RS user-based fairness; class_target_share: weight only)
  latency      request start -> last byte, for requests started in the window that
               completed; queue wait = Squid's reqsched_wait_ms note (0 when the mode
               does not queue), service = latency - wait
  jain_index   Jain's index of x_u = throughput_u / fair_u over active users, where
               fair_u is the weighted max-min fair share (weight = the user's class
               weight) of the measured total; backlogged users have unbounded demand,
               think-time users demand what they got
  utilization  bytes through the ISP tbf (wire bytes) / (C x window)
  drops        packets the ISP tbf dropped during the window
  squid_cpu_s  Squid's user+system CPU seconds during the replay (/proc/PID/stat)
  small objects  per class p50/p95 latency of responses whose body is <= the
               scenario's small_object_bytes (16 KB); idle = the same fetches with no
               other load (RUN/idle/, the idle-link reference)
  queue delay  the ISP queue delay backlog x 8 / C of every tc sample (~100 ms) in the
               window: mean, p95, max (queue_delay.png)
  fair_bps     a class's weighted max-min fair share of the measured total (weight x
               users; backlogged classes unbounded, think-time classes demand what
               they got); share_error = throughput / fair - 1
  periods      with cross traffic: the same link and class numbers for the CBR on
               and off periods separately (from cbr.log)
  restart      with restart_at_s: completed requests/s from 2 s after Squid was
               started again to the end, and before the restart; the same for the
               completed responses' bytes (Mbit/s: with heavy-tailed sizes the mean
               size of a few hundred responses varies, which requests/s carries)
  byte layer   from mgr:request_sched when Squid reports them: per update interval
               link/proxied/exceptive bit/s, U, W+, pace_bps, window_bytes, flows
Targets (scenario [targets], targets.py) are printed next to the measured values.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Optional

from . import logparse, metrics, targets as targets_mod

RESTART_SETTLE_S = 2.0          # restart target: requests/s from this long after the restart
RESTART_REFILL_S = 4.0          # the link's utilization over this long after the new start


@dataclass
class Req:
    rid: str
    user: str
    cls: str
    start: float
    first_byte: float
    end: float
    bytes: int
    status: int
    error: str = ""
    wait_ms: Optional[int] = None

    @property
    def failed(self) -> bool:
        """An error answer or a broken transfer; requests cut by the end of the
        run are not failures."""
        if self.error.startswith("cancelled"):
            return False
        return self.status == 0 or self.status >= 400 or bool(self.error)


def read_csv(path: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        return list(csv.DictReader(f))


def load_requests(mdir: str, stats: logparse.ParseStats) -> list[Req]:
    out = []
    for row in read_csv(os.path.join(mdir, "requests.csv")):
        try:
            out.append(Req(row["id"], row["user"], row["class"], float(row["start"]),
                           float(row["first_byte"]), float(row["end"]), int(row["bytes"]),
                           int(row["status"]), row.get("error", "") or ""))
        except (KeyError, ValueError, TypeError):
            stats.skipped += 1
    log = os.path.join(mdir, "access.log")
    if os.path.exists(log):
        with logparse.open_text(log) as f:
            entries = logparse.parse_testbed_access_log(f, stats)
        waits = {e.replay_id: e.wait_ms for e in entries if e.replay_id != "-"}
        for r in out:
            r.wait_ms = waits.get(r.rid)
    return out


def completed_rates(done: list[Req], span: float, when: str) -> dict[str, Optional[float]]:
    """rps_WHEN and mbps_WHEN: the completed responses per second over span
    and their bytes in Mbit/s (None for an empty span)."""
    if span <= 0:
        return {f"rps_{when}": None, f"mbps_{when}": None}
    return {f"rps_{when}": round(len(done) / span, 3),
            f"mbps_{when}": round(sum(r.bytes for r in done) * 8 / span / 1e6, 4)}


def user_bytes_in_window(reqs: list[Req], lo: float, hi: float) -> dict[str, float]:
    """Bytes per user inside [lo, hi], each request's bytes spread evenly over
    [first byte, end] (or to hi for requests still running at the end)."""
    out: dict[str, float] = {}
    for r in reqs:
        if r.bytes <= 0 or r.first_byte < 0:
            continue
        a = r.first_byte
        b = r.end if r.end >= 0 else hi
        if b <= a:
            inside = r.bytes if lo <= a <= hi else 0.0
        else:
            ov = max(0.0, min(b, hi) - max(a, lo))
            inside = r.bytes * ov / (b - a)
        out[r.user] = out.get(r.user, 0.0) + inside
    return out


def link_stats(mdir: str, t_lo: float, t_hi: float, link_bps: float) -> dict[str, Any]:
    """Utilization and drops of the bottleneck between epochs t_lo and t_hi."""
    path = os.path.join(mdir, "tc.csv")
    if not os.path.exists(path):
        return {"utilization": None, "drops": None, "samples": []}
    rows = []
    for r in read_csv(path):
        try:
            rows.append((float(r["t_epoch"]), int(r["bytes"]), int(r["drops"]),
                         int(r["backlog"])))
        except (KeyError, ValueError, TypeError):
            continue
    inside = [r for r in rows if t_lo - 0.3 <= r[0] <= t_hi + 0.3]
    if len(inside) < 2:
        return {"utilization": None, "drops": None, "samples": rows}
    a, b = inside[0], inside[-1]
    util = (b[1] - a[1]) * 8 / (link_bps * (b[0] - a[0]))
    backlog = [r[3] for r in inside]
    delays = [queue_delay_ms(x, link_bps) for x in backlog]
    return {"utilization": util, "drops": b[2] - a[2], "samples": rows,
            "queue_bytes_mean": sum(backlog) / len(backlog),
            "queue_delay_ms": {"mean": round(metrics.mean(delays), 1),
                               "p95": round(metrics.percentile(delays, 95), 1),
                               "max": round(max(delays), 1), "samples": len(delays)}}


def queue_delay_ms(backlog_bytes: float, link_bps: float) -> float:
    """Time a packet joining a backlog of this many bytes waits at rate C (ms)."""
    return backlog_bytes * 8000.0 / link_bps


def interval_link_stats(samples: list[tuple], intervals: list[tuple[float, float]],
                        link_bps: float) -> dict[str, Any]:
    """Utilization, drops and queue delay of the tbf over a union of epoch intervals:
    counter deltas between consecutive samples both inside one interval."""
    nbytes = drops = 0
    secs = 0.0
    delays = []
    for lo, hi in intervals:
        inside = [r for r in samples if lo <= r[0] <= hi]
        for x, y in zip(inside, inside[1:]):
            nbytes += y[1] - x[1]
            drops += y[2] - x[2]
            secs += y[0] - x[0]
        delays += [queue_delay_ms(r[3], link_bps) for r in inside]
    if secs <= 0:
        return {"utilization": None, "drops": None, "queue_delay_ms": None, "seconds": 0.0}
    return {"utilization": round(nbytes * 8 / (link_bps * secs), 4), "drops": drops,
            "seconds": round(secs, 2),
            "queue_delay_ms": {"mean": round(metrics.mean(delays), 1),
                               "p95": round(metrics.percentile(delays, 95), 1)}}


def class_fair_bps(classes: list[dict], thr: dict[str, float]) -> dict[str, float]:
    """Weighted max-min fair share (weight x users) of the measured total among
    the classes that received bytes: backlogged classes have unbounded demand,
    think-time classes demand what they got."""
    act = [c for c in classes if thr.get(c["name"], 0) > 0]
    total = sum(thr.get(c["name"], 0) for c in act)
    w = [c["weight"] * max(1, c["users"]) for c in act]
    dem = [math.inf if c.get("pattern", "backlogged") == "backlogged" else thr[c["name"]]
           for c in act]
    fair = metrics.weighted_maxmin(total, w, dem) if act else []
    out = {c["name"]: 0.0 for c in classes}
    out.update({c["name"]: f for c, f in zip(act, fair)})
    return out


def period_class_stats(classes: list[dict], cls_bins: dict[str, dict[float, int]],
                       intervals: list[tuple[float, float]], bin_s: float = 1.0
                       ) -> dict[str, Any]:
    """Per-class bit/s, share and fair share over a union of replay-time intervals
    (the class_bytes bins that lie wholly inside one of them)."""
    secs = 0.0
    got = {c["name"]: 0 for c in classes}
    for lo, hi in intervals:
        bins = [t for t in range(int(math.ceil(lo / bin_s)), int(math.floor(hi / bin_s)))]
        secs += len(bins) * bin_s
        for name, d in cls_bins.items():
            got[name] = got.get(name, 0) + sum(d.get(float(b * bin_s), 0) for b in bins)
    if secs <= 0:
        return {"seconds": 0.0, "classes": []}
    thr = {n: v * 8 / secs for n, v in got.items()}
    total = sum(thr.values()) or 1.0
    fair = class_fair_bps(classes, thr)
    out = []
    for c in classes:
        n = c["name"]
        out.append({"name": n, "throughput_bps": round(thr.get(n, 0)),
                    "share": round(thr.get(n, 0) / total, 4),
                    "fair_bps": round(fair.get(n, 0)),
                    "share_error": round(thr[n] / fair[n] - 1, 4) if fair.get(n) else None})
    return {"seconds": secs, "classes": out}


def cross_periods(mdir: str, t0_replay: float, lo: float, hi: float
                  ) -> dict[str, list[tuple[float, float]]]:
    """CBR on and off intervals in replay time, clipped to [lo, hi]. cbr.log times
    are relative to the sender's start ('t0_epoch E' line), moved onto the replay's
    clock; before the first 'on' the CBR is off."""
    path = os.path.join(mdir, "cbr.log")
    if not os.path.exists(path):
        return {}
    t0_cbr = None
    events = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            w = line.split()
            if len(w) >= 2 and w[0] == "t0_epoch":
                try:
                    t0_cbr = float(w[1])
                except ValueError:
                    pass
                continue
            try:
                events.append((float(w[0]), w[1]))
            except (ValueError, IndexError):
                continue
    shift = (t0_cbr - t0_replay) if t0_cbr is not None else 0.0
    on: list[tuple[float, float]] = []
    off: list[tuple[float, float]] = []
    state, since = "off", lo
    for t, what in events:
        t = t + shift
        new = "on" if what == "on" else "off"
        if new != state:
            (on if state == "on" else off).append((since, t))
            state, since = new, t
    (on if state == "on" else off).append((since, hi))
    clip = lambda xs: [(max(a, lo), min(b, hi)) for a, b in xs if min(b, hi) - max(a, lo) > 0]
    return {"on": clip(on), "off": clip(off)}


def byte_layer_intervals(mgr: list[dict], t0: float, lo: float, hi: float) -> list[dict]:
    """One row per completed update interval of Squid's report page (the samples
    whose interval counters changed), in the window: link, proxied and exceptive
    bit/s, U, W+, pace_bps, window_bytes, flows. Empty for a Squid without them."""
    out = []
    last = None
    for m in mgr:
        g = m.get("global", {})
        if fnum(g.get("link_bytes")) is None or not fnum(g.get("interval_s")):
            continue
        key = (g.get("link_bytes"), g.get("proxied_bytes"), g.get("interval_s"), g.get("U"))
        if key == last:
            continue
        last = key
        t = m["t_epoch"] - t0
        if not lo <= t <= hi:
            continue
        iv = float(g["interval_s"])
        row: dict[str, Any] = {"t": round(t, 2)}
        for k in ("link_bytes", "proxied_bytes", "exceptive_bytes"):
            v = fnum(g.get(k))
            row[k.replace("_bytes", "_bps")] = round(v * 8 / iv) if v is not None else None
        for k in ("U", "W_max", "W", "pace_bps", "window_bytes", "flows", "flows_waiting",
                  "long_transfers"):
            row[k] = fnum(g.get(k))
        if isinstance(g.get("link_counter_state"), str):
            row["link_counter_state"] = g["link_counter_state"]
        out.append(row)
    return out


def worker_split(mgr: list[dict], t0: float, lo: float, hi: float,
                 weight_of: dict[str, float]) -> list[dict]:
    """SMP: per worker, from the kids of the report pages in the window, the
    means of link_share, W and W+ (W_max), and per class the mean users, the
    bit/s it read and the bit/s those users were due by weight per user (msf's
    fairness): the bytes all workers read, split as w_c over the sum of w x
    users of the whole proxy, times the worker's users of the class. Empty
    with one worker (no kids)."""
    rows = [m for m in mgr if m.get("kids") and lo <= m["t_epoch"] - t0 <= hi]
    if len(rows) < 2:
        return []
    span = rows[-1]["t_epoch"] - rows[0]["t_epoch"]
    if span <= 0:
        return []

    def classes(m: dict, kid: str) -> dict[str, dict]:
        return {str(c["name"]): c for c in m["kids"].get(kid, {}).get("classes", [])}

    out = []
    for kid in sorted(rows[-1]["kids"], key=int):
        seen = [m["kids"][kid] for m in rows if kid in m["kids"]]
        w: dict[str, Any] = {"kid": int(kid)}
        for k in ("link_share", "W", "W_max"):
            xs = [x for x in (fnum(p["global"].get(k)) for p in seen) if x is not None]
            w[k] = round(metrics.mean(xs), 3) if xs else None
        w["classes"] = {}
        maps = [classes(m, kid) for m in rows]   # each page's classes, once
        before, after = maps[0], maps[-1]
        for name, c in after.items():
            b0 = fnum(before.get(name, {}).get("bytes")) or 0.0
            users = [fnum(cm.get(name, {}).get("users")) or 0.0 for cm in maps]
            w["classes"][name] = {"users": round(metrics.mean(users), 3),
                                  "bps": round(((fnum(c.get("bytes")) or 0.0) - b0) * 8 / span)}
        out.append(w)
    total = sum(c["bps"] for w in out for c in w["classes"].values())
    users_of: dict[str, float] = {}
    for w in out:
        for name, c in w["classes"].items():
            users_of[name] = users_of.get(name, 0.0) + c["users"]
    denom = sum(weight_of.get(n, 1.0) * u for n, u in users_of.items())
    for w in out:
        for name, c in w["classes"].items():
            c["due_bps"] = (round(total * weight_of.get(name, 1.0) * c["users"] / denom)
                            if denom > 0 else None)
    return out


def summarize_intervals(rows: list[dict]) -> Optional[dict[str, Any]]:
    if not rows:
        return None
    out: dict[str, Any] = {"intervals": len(rows)}
    for k in ("link_bps", "proxied_bps", "exceptive_bps", "U", "W_max", "pace_bps",
              "window_bytes", "flows", "flows_waiting"):
        xs = [r[k] for r in rows if r.get(k) is not None]
        out[k] = round(metrics.mean(xs), 3) if xs else None
    out["long_transfers_end"] = rows[-1].get("long_transfers")
    out["link_counter_state"] = rows[-1].get("link_counter_state")
    return out


def small_latencies(reqs: list["Req"], limit: int) -> list[float]:
    """Latency (ms) of completed requests whose body is <= limit bytes."""
    return [(r.end - r.start) * 1000 for r in reqs if r.end >= 0 and 200 <= r.status < 400
            and 0 <= r.bytes <= limit]


def idle_reference(run_dir: str, limit: int) -> Optional[dict[str, Any]]:
    """The idle-link small-object fetches (RUN/idle/requests.csv)."""
    path = os.path.join(run_dir, "idle", "requests.csv")
    if not os.path.exists(path):
        return None
    stats = logparse.ParseStats()
    reqs = load_requests(os.path.join(run_dir, "idle"), stats)
    small = small_latencies(reqs, limit)
    allx = [(r.end - r.start) * 1000 for r in reqs if r.end >= 0 and 200 <= r.status < 400]
    return {"small_latency_ms": lat_summary(small), "small_requests": len(small),
            "latency_ms": lat_summary(allx), "requests": len(allx)}


def load_mgr(mdir: str) -> list[dict]:
    path = os.path.join(mdir, "mgr.jsonl")
    out = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    return out


def fnum(x: Any) -> Optional[float]:
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def lat_summary(xs: list[float]) -> dict[str, Optional[float]]:
    if not xs:
        return {"mean": None, "p50": None, "p95": None}
    return {"mean": round(metrics.mean(xs), 1), "p50": round(metrics.percentile(xs, 50), 1),
            "p95": round(metrics.percentile(xs, 95), 1)}


def analyse_mode(run_dir: str, mode: str, sc: dict) -> dict[str, Any]:
    mdir = os.path.join(run_dir, safe(mode))
    rp = json.load(open(os.path.join(mdir, "replay.json"), encoding="utf-8"))
    info = {}
    if os.path.exists(os.path.join(mdir, "run.json")):
        info = json.load(open(os.path.join(mdir, "run.json"), encoding="utf-8"))
    stats = logparse.ParseStats()
    reqs = load_requests(mdir, stats)
    duration = float(rp["duration_s"])
    warm = min(float(sc.get("warmup_s", 0)), duration / 2)
    lo, hi = warm, duration
    span = hi - lo
    t0 = float(rp["t0_epoch"])
    link_bps = float(sc["downlink_bps"])
    classes = sc["classes"]

    cls_bins: dict[str, dict[float, int]] = {c["name"]: {} for c in classes}
    for row in read_csv(os.path.join(mdir, "class_bytes.csv")):
        try:
            cls_bins.setdefault(row["class"], {})[float(row["bin_start"])] = int(row["bytes"])
        except (KeyError, ValueError, TypeError):
            stats.skipped += 1
    cls_bytes = {c: sum(v for t, v in d.items() if lo <= t < hi) for c, d in cls_bins.items()}
    total = sum(cls_bytes.values()) or 1
    # the whole replay (warm-up included), as Squid's CPU seconds are counted
    delivered_all = sum(sum(d.values()) for d in cls_bins.values())
    cpu_s = info.get("squid_cpu_s")
    active = [c for c in classes if cls_bytes.get(c["name"], 0) > 0]
    wsum_active = sum(c["weight"] for c in active) or 1
    # MSF-RS user-based weighted fairness: a class is entitled to weight x users
    wusers_active = sum(c["weight"] * c["users"] for c in active) or 1

    in_win = [r for r in reqs if lo <= r.start < hi]
    done = [r for r in in_win if r.end >= 0 and 200 <= r.status < 400]
    queued_known = any(r.wait_ms is not None for r in reqs)
    failed = sum(1 for r in in_win if r.failed)
    small_limit = int(sc.get("small_object_bytes", 16384))
    thr_by = {n: v * 8 / span for n, v in cls_bytes.items()}
    fair = class_fair_bps(classes, thr_by)
    out_classes = []
    for c in classes:
        name = c["name"]
        cr = [r for r in done if r.cls == name]
        small = small_latencies(cr, small_limit)
        lat = [(r.end - r.start) * 1000 for r in cr]
        wait = [float(r.wait_ms or 0) for r in cr]
        svc = [max(0.0, l - w) for l, w in zip(lat, wait)]
        out_classes.append({
            "name": name, "weight": c["weight"], "users": c["users"],
            "requests": len(cr),
            "failed": sum(1 for r in in_win if r.cls == name and r.failed),
            "bytes": cls_bytes.get(name, 0),
            "throughput_bps": round(cls_bytes.get(name, 0) * 8 / span),
            "per_user_bps": round(cls_bytes.get(name, 0) * 8 / span / max(1, c["users"])),
            "share": round(cls_bytes.get(name, 0) / total, 4),
            "target_share": round(c["weight"] * c["users"] / wusers_active, 4)
            if c in active else 0.0,
            "class_target_share": round(c["weight"] / wsum_active, 4) if c in active else 0.0,
            "pattern": c.get("pattern", "backlogged"),
            "fair_bps": round(fair.get(name, 0)),
            "share_error": (round(thr_by[name] / fair[name] - 1, 4) if fair.get(name)
                            else None),
            "small_requests": len(small),
            "small_latency_ms": lat_summary(small),
            "latency_ms": lat_summary(lat),
            "queue_wait_ms": {"mean": round(metrics.mean(wait), 1) if wait else None},
            "service_ms": {"mean": round(metrics.mean(svc), 1) if svc else None},
        })
    all_lat = [(r.end - r.start) * 1000 for r in done]
    all_wait = [float(r.wait_ms or 0) for r in done]

    # Jain's index over weight-normalized per-user throughput
    weight_of = {c["name"]: c["weight"] for c in classes}
    backlogged = {c["name"]: c.get("pattern", "backlogged") == "backlogged" for c in classes}
    ub = user_bytes_in_window(reqs, lo, hi)
    users = [u for u in rp.get("users", []) if ub.get(u["id"], 0) > 0]
    thr = [ub[u["id"]] * 8 / span for u in users]
    wts = [weight_of.get(u["class"], 1.0) for u in users]
    dem = [math.inf if backlogged.get(u["class"], True) else t for u, t in zip(users, thr)]
    jain = metrics.normalized_jain(thr, wts, dem) if users else None

    ls = link_stats(mdir, t0 + lo, t0 + hi, link_bps)
    mgr = load_mgr(mdir)
    intervals = byte_layer_intervals(mgr, t0, lo, hi)
    workers = worker_split(mgr, t0, lo, hi, weight_of)

    # cross traffic: the same numbers for the CBR on and off periods separately
    periods = {}
    for kind, ivs in cross_periods(mdir, t0, lo, hi).items():
        ps = period_class_stats(classes, cls_bins, ivs)
        ps.update(interval_link_stats(ls["samples"], [(t0 + a, t0 + b) for a, b in ivs],
                                      link_bps))
        ps["intervals"] = [[round(a, 2), round(b, 2)] for a, b in ivs]
        periods[kind] = ps

    # proxy restart: completed requests/s before it and from RESTART_SETTLE_S after
    restart = None
    if info.get("restart_start_epoch"):
        t_stop = float(info["restart_stop_epoch"]) - t0
        t_start = float(info["restart_start_epoch"]) - t0
        a = t_start + RESTART_SETTLE_S
        ok = [r for r in reqs if r.end >= 0 and 200 <= r.status < 400]
        after = [r for r in ok if a <= r.end < duration]
        before = [r for r in ok if lo <= r.end < t_stop]
        restart = {
            "stop_s": round(t_stop, 2), "start_s": round(t_start, 2),
            "ready_s": (round(float(info["restart_ready_epoch"]) - t0, 2)
                        if info.get("restart_ready_epoch") else None),
            **completed_rates(after, duration - a, "after"),
            **completed_rates(before, t_stop - lo, "before"),
            "failed_around": sum(1 for r in reqs if r.failed and t_stop - 1 <= r.start < a),
            "after_from_s": round(a, 2),
            # how soon the new Squid fills the link again (its start-up included)
            "utilization_refill": interval_link_stats(
                ls["samples"], [(t0 + t_start, t0 + t_start + RESTART_REFILL_S)], link_bps)["utilization"]}

    # timeline
    tb = float(sc.get("timeline_bin_s", 5))
    timeline = []
    nb = max(1, int(duration / tb + 1e-9))      # whole bins only (a short last bin is noise)
    samples = ls["samples"]
    for k in range(nb):
        a, b = k * tb, min((k + 1) * tb, duration)
        e: dict[str, Any] = {"t": round(b, 3), "class_bps": {
            n: round(sum(v for t, v in d.items() if a <= t < b) * 8 / (b - a))
            for n, d in cls_bins.items()}}
        ms = [m for m in mgr if t0 + a <= m["t_epoch"] < t0 + b]
        if ms:
            g = ms[-1]["global"]
            e["W"] = fnum(g.get("W"))
            e["W_max"] = fnum(g.get("W_max"))
            e["U"] = fnum(g.get("U"))
            for key in ("pace_bps", "window_bytes", "flows", "flows_waiting", "long_transfers"):
                if fnum(g.get(key)) is not None:
                    e[key] = fnum(g.get(key))
            if fnum(g.get("link_bytes")) is not None and fnum(g.get("interval_s")):
                for key in ("link_bytes", "proxied_bytes", "exceptive_bytes"):
                    if fnum(g.get(key)) is not None:
                        e[key.replace("_bytes", "_bps")] = round(g[key] * 8 / g["interval_s"])
        ts = [s for s in samples if t0 + a - 0.3 <= s[0] <= t0 + b + 0.3]
        if len(ts) >= 2 and ts[-1][0] > ts[0][0]:
            e["link_util"] = round((ts[-1][1] - ts[0][1]) * 8 / (link_bps * (ts[-1][0] - ts[0][0])), 4)
        inb = [s for s in samples if t0 + a <= s[0] < t0 + b]
        if inb:
            e["queue_delay_ms"] = round(metrics.mean([queue_delay_ms(s[3], link_bps)
                                                      for s in inb]), 1)
        timeline.append(e)

    # per phase (between consecutive phase boundaries of any class): class bit/s
    bounds = sorted({0.0, duration} | {min(max(float(x), 0.0), duration)
                                       for c in classes for p in c.get("phases", []) for x in p})
    phases = []
    if len(bounds) > 2:
        for a, b in zip(bounds, bounds[1:]):
            if b - a >= 1.0:
                phases.append({"start": a, "end": b, "class_bps": {
                    n: round(sum(v for t, v in d.items() if a <= t < b) * 8 / (b - a))
                    for n, d in cls_bins.items()}})

    return {
        "scenario": sc.get("name"), "mode": mode, "link_bps": link_bps,
        "duration_s": round(span, 3), "warmup_s": warm,
        "utilization": round(ls["utilization"], 4) if ls["utilization"] is not None else None,
        "bottleneck_drops": ls["drops"],
        "bottleneck_queue_bytes_mean": round(ls.get("queue_bytes_mean", 0) or 0, 1),
        "bottleneck_queue_delay_ms_mean": round((ls.get("queue_bytes_mean", 0) or 0) * 8000
                                                / link_bps, 1),
        "queue_delay_ms": ls.get("queue_delay_ms"),
        "buffer_ms": sc.get("buffer_ms"),
        "cross_rate_bps": sc.get("cross_rate_bps", 0),
        "jain_index": round(jain, 4) if jain is not None else None,
        "squid_cpu_s": cpu_s,
        "delivered_bytes": delivered_all,
        "squid_cpu_ms_per_mb": (round(cpu_s * 1000 / (delivered_all / 1e6), 1)
                                if cpu_s is not None and delivered_all > 0 else None),
        "requests": len(done),
        "failed_requests": failed,
        "latency_ms": lat_summary(all_lat),
        "queue_wait_ms": {"mean": round(metrics.mean(all_wait), 1) if all_wait else None,
                          "known": queued_known},
        "classes": out_classes,
        "timeline": timeline,
        "phases": phases,
        "periods": periods,
        "restart": restart,
        "byte_layer": summarize_intervals(intervals),
        "byte_layer_intervals": intervals,
        "workers": workers,
        "small_object_bytes": small_limit,
        "parse_skipped": stats.skipped,
        "_latencies_ms": all_lat,
        "_queue_series": [(round(s_[0] - t0, 2), round(queue_delay_ms(s_[3], link_bps), 1))
                          for s_ in samples if t0 <= s_[0] <= t0 + duration],
    }


def safe(mode: str) -> str:
    import re
    return re.sub(r"[^A-Za-z0-9+._-]", "_", mode)


def fmt(x: Any, spec: str, none: str = "-") -> str:
    return none if x is None else format(x, spec)


def pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{x * 100:+.1f}%"


def table(results: list[dict], sc: dict, run_dir: str, idle: Optional[dict] = None,
          target_rows: Optional[list[dict]] = None) -> str:
    lines = []
    span = results[0]["duration_s"] if results else 0
    extra = f", buffer {sc['buffer_ms']:g} ms" if sc.get("buffer_ms") is not None else ""
    if sc.get("cross_rate_bps"):
        extra += f", CBR {sc['cross_rate_bps'] / 1e6:.2f} Mbit/s on/off"
    lines.append(f"scenario {sc.get('name')}{' ' + sc['sweep_label'] if sc.get('sweep_label') else ''}"
                 f": downlink {sc['downlink_bps'] / 1e6:.2f} Mbit/s{extra}, "
                 f"{len(sc['classes'])} classes, measured {span:.0f} s after "
                 f"{results[0]['warmup_s'] if results else 0:.0f} s warm-up; {run_dir}")
    lines.append("")
    small_kb = int(sc.get("small_object_bytes", 16384)) / 1024
    hdr = (f"{'mode':<12} {'class':<11} {'w':>3} {'users':>5} {'Mbit/s':>7} {'fair':>6} "
           f"{'err':>7} {'share':>6} {'target':>6} {'reqs':>5} {'lat mean':>8} {'p50':>7} "
           f"{'p95':>7} {'sm p50':>6} {'sm p95':>6} {'wait':>6} {'service':>7}")
    lines.append(hdr)
    lines.append("-" * len(hdr))
    for r in results:
        for c in r["classes"]:
            lat = c["latency_ms"]
            sm = c.get("small_latency_ms") or {}
            lines.append(
                f"{r['mode']:<12} {c['name']:<11} {c['weight']:>3g} {c['users']:>5} "
                f"{c['throughput_bps'] / 1e6:>7.3f} {c.get('fair_bps', 0) / 1e6:>6.3f} "
                f"{pct(c.get('share_error')):>7} "
                f"{c['share']:>6.3f} {c['target_share']:>6.3f} "
                f"{c['requests']:>5} {fmt(lat['mean'], '8.0f'):>8} {fmt(lat['p50'], '7.0f'):>7} "
                f"{fmt(lat['p95'], '7.0f'):>7} {fmt(sm.get('p50'), '6.0f'):>6} "
                f"{fmt(sm.get('p95'), '6.0f'):>6} {fmt(c['queue_wait_ms']['mean'], '6.0f'):>6} "
                f"{fmt(c['service_ms']['mean'], '7.0f'):>7}")
    lines.append(f"(fair = weighted max-min share of the measured total, err = Mbit/s / fair - 1;"
                 f" sm = responses <= {small_kb:g} KB; latencies in ms)")
    lines.append("")
    hdr2 = (f"{'mode':<12} {'Mbit/s':>7} {'util':>6} {'drops':>6} {'jain':>6} {'ratio':>14} "
            f"{'lat mean':>8} {'p95':>7} {'wait':>6} {'qms':>5} {'qp95':>5} {'cpu s':>6} "
            f"{'ms/MB':>6}")
    lines.append(hdr2)
    lines.append("-" * len(hdr2))
    for r in results:
        thr = [c["throughput_bps"] for c in r["classes"]]
        lo = min([t for t in thr if t > 0] or [1])
        ratio = ":".join(f"{t / lo:.2f}" for t in thr)
        lat = r["latency_ms"]
        qd = r.get("queue_delay_ms") or {}
        lines.append(
            f"{r['mode']:<12} {sum(thr) / 1e6:>7.3f} {fmt(r['utilization'], '6.3f'):>6} "
            f"{fmt(r['bottleneck_drops'], '6d'):>6} {fmt(r['jain_index'], '6.3f'):>6} "
            f"{ratio:>14} {fmt(lat['mean'], '8.0f'):>8} {fmt(lat['p95'], '7.0f'):>7} "
            f"{fmt(r['queue_wait_ms']['mean'], '6.0f'):>6} "
            f"{fmt(qd.get('mean'), '5.0f'):>5} {fmt(qd.get('p95'), '5.0f'):>5} "
            f"{fmt(r['squid_cpu_s'], '6.2f'):>6} {fmt(r.get('squid_cpu_ms_per_mb'), '6.1f'):>6}")
    lines.append("(util = tbf bytes incl. cross traffic / C; qms, qp95 = ISP queue delay "
                 "backlog/C, mean and p95 of ~100-ms samples; cpu s = Squid's CPU seconds over "
                 "the whole replay, ms/MB = those per MB delivered to clients in it)")
    if idle:
        sm = idle["small_latency_ms"]
        lines.append("")
        lines.append(f"idle-link fetch (no other load, {idle['small_requests']} responses "
                     f"<= {small_kb:g} KB): p50 {fmt(sm['p50'], '.0f')} ms, p95 "
                     f"{fmt(sm['p95'], '.0f')} ms")
    if any(r.get("periods") for r in results):
        names = [c["name"] for c in sc["classes"]]
        lines.append("")
        lines.append("cross traffic on / off periods: Mbit/s per class (" + " / ".join(names)
                     + "), share error vs weights, util (CBR incl.), drops, queue ms")
        for r in results:
            for kind in ("on", "off"):
                ps = r["periods"].get(kind)
                if not ps or not ps.get("classes"):
                    continue
                cl = ps["classes"]
                qd = ps.get("queue_delay_ms") or {}
                lines.append(
                    f"  {r['mode']:<12} {kind:<3} {ps['seconds']:>4.0f}s  "
                    + "/".join(f"{c['throughput_bps'] / 1e6:.2f}" for c in cl) + "  err "
                    + "/".join(pct(c["share_error"]) for c in cl)
                    + f"  util {fmt(ps.get('utilization'), '.3f')}  drops "
                    f"{fmt(ps.get('drops'), 'd')}  q {fmt(qd.get('mean'), '.0f')} ms")
    if any(r.get("restart") for r in results):
        lines.append("")
        lines.append("proxy restart: requests/s before it, and from "
                     f"{RESTART_SETTLE_S:g} s after Squid was started again")
        for r in results:
            rs = r.get("restart")
            if rs:
                lines.append(f"  {r['mode']:<12} stopped at {rs['stop_s']:.1f}s, started "
                             f"{rs['start_s']:.1f}s, answering {fmt(rs['ready_s'], '.1f')}s; "
                             f"req/s before {fmt(rs['rps_before'], '.2f')}, after "
                             f"{fmt(rs['rps_after'], '.2f')} (completed Mbit/s "
                             f"{fmt(rs.get('mbps_before'), '.3f')}, "
                             f"{fmt(rs.get('mbps_after'), '.3f')}); failed around it "
                             f"{rs['failed_around']}; link utilization over the "
                             f"{RESTART_REFILL_S:g} s after the start "
                             f"{fmt(rs.get('utilization_refill'), '.3f')}")
    if any(r.get("byte_layer") for r in results):
        lines.append("")
        lines.append("byte layer (mgr:request_sched, means over the update intervals in the "
                     "window): link / proxied / exceptive Mbit/s, U, W+, pace Mbit/s, "
                     "window KB, flows (waiting)")
        for r in results:
            b = r.get("byte_layer")
            if not b:
                continue
            mb = lambda v: fmt(v / 1e6 if v is not None else None, ".3f")
            lines.append(
                f"  {r['mode']:<12} {mb(b['link_bps'])} / {mb(b['proxied_bps'])} / "
                f"{mb(b['exceptive_bps'])}  U {fmt(b['U'], '.3f')}  W+ {fmt(b['W_max'], '.1f')}"
                f"  pace {mb(b['pace_bps'])}  window "
                f"{fmt(b['window_bytes'] / 1024 if b['window_bytes'] is not None else None, '.0f')}"
                f"  flows {fmt(b['flows'], '.1f')} ({fmt(b['flows_waiting'], '.1f')})"
                f"  counter {b.get('link_counter_state') or '-'}  ({b['intervals']} intervals)")
    if any(r.get("workers") for r in results):
        lines.append("")
        lines.append("SMP workers (mgr:request_sched of each kid, means in the window): link_share, W, W+; "
                     "per class: users, kbit/s read / due by weight per user (error)")
        for r in results:
            for w in r.get("workers") or []:
                cells = []
                for name, c in w["classes"].items():
                    if not c["users"] and not c["bps"]:
                        continue
                    due = c.get("due_bps")
                    err = f" ({(c['bps'] / due - 1) * 100:+.0f}%)" if due else ""
                    cells.append(f"{name} {c['users']:.1f} {c['bps'] / 1e3:.0f}/"
                                 f"{fmt(due / 1e3 if due else None, '.0f')}{err}")
                lines.append(f"  {r['mode']:<12} kid{w['kid']} share {fmt(w['link_share'], '.3f')} "
                             f"W {fmt(w['W'], '.2f')} W+ {fmt(w['W_max'], '.2f')} | " + "; ".join(cells))
    if any(r.get("phases") for r in results):
        names = [c["name"] for c in sc["classes"]]
        lines.append("")
        lines.append("per phase, Mbit/s (" + " / ".join(names) + "):")
        for r in results:
            cells = [f"{p['start']:.0f}-{p['end']:.0f}s " +
                     "/".join(f"{p['class_bps'][n] / 1e6:.2f}" for n in names)
                     for p in r["phases"]]
            lines.append(f"  {r['mode']:<12} " + "   ".join(cells))
    if sc.get("name") == "field-trial":
        lines.append("")
        lines.append("MSF-RS paper (field trial, 200 s): 1.03 / 0.52 / 0.26 Mbit/s per class; "
                     "mean latency 1686 ms original Squid vs 1175 ms MSF-RS (515.5 ms queued)")
    if target_rows:
        lines.append("")
        lines.append(targets_mod.format_rows(target_rows))
    return "\n".join(lines)


# ---------------------------------------------------------------- plots --
def cross_on_periods(mdir: str) -> list[tuple[float, float]]:
    """On-periods of the cross traffic from cbr.log ('T on' / 'T off' / 'T end')."""
    out: list[tuple[float, float]] = []
    start = None
    try:
        with open(os.path.join(mdir, "cbr.log"), encoding="utf-8") as f:
            for line in f:
                t, _, what = line.partition(" ")
                try:
                    tv = float(t)
                except ValueError:
                    continue
                if what.startswith("on"):
                    start = tv
                elif start is not None:
                    out.append((start, tv))
                    start = None
    except OSError:
        pass
    return out


def shade_cross(ax, run_dir: str, mode: str) -> None:
    for i, (a, b) in enumerate(cross_on_periods(os.path.join(run_dir, safe(mode)))):
        ax.axvspan(a, b, color="grey", alpha=0.12, lw=0,
                   label="cross traffic on" if i == 0 else None)


def _save_plot(fig, run_dir: str, name: str) -> str:
    """Lay out, write and close one figure; return its path."""
    import matplotlib.pyplot as plt
    fig.tight_layout()
    path = os.path.join(run_dir, name)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def draw_plots(results: list[dict], sc: dict, run_dir: str) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    names = [c["name"] for c in sc["classes"]]
    colors = {n: plt.cm.tab10(i % 10) for i, n in enumerate(names)}
    cap = sc["downlink_bps"] / 1e6
    title = f"{sc.get('name')} ({cap:g} Mbit/s downlink)"

    # 1. per-class throughput over time (Fig. 8)
    n = len(results)
    fig, axes = plt.subplots(n, 1, figsize=(9, 1.9 * n + 1), sharex=True, squeeze=False)
    half = float(sc.get("timeline_bin_s", 5)) / 2
    for ax, r in zip(axes[:, 0], results):
        ts = [e["t"] - half for e in r["timeline"]]      # plotted at the bin centres
        for name in names:
            ax.plot(ts, [e["class_bps"].get(name, 0) / 1e6 for e in r["timeline"]],
                    label=name, color=colors[name], lw=1.6)
        ax.axhline(cap, color="grey", ls="--", lw=0.8)
        ax.axvline(r["warmup_s"], color="grey", ls=":", lw=0.8)
        shade_cross(ax, run_dir, r["mode"])
        ax.set_ylabel("Mbit/s")
        ax.set_ylim(0, cap * 1.1)
        ax.set_title(f"{r['mode']}  (util {fmt(r['utilization'], '.2f')}, "
                     f"jain {fmt(r['jain_index'], '.2f')})", fontsize=9, loc="left")
        ax.grid(alpha=0.3)
    axes[0, 0].legend(loc="upper right", fontsize=8, ncol=len(names))
    axes[-1, 0].set_xlabel(f"time (s); bins of {sc.get('timeline_bin_s', 5)} s; "
                           f"dashed = link capacity, dotted = end of warm-up")
    fig.suptitle(f"Per-class throughput over time, {title} (cf. MSF-RS Fig. 8)")
    written.append(_save_plot(fig, run_dir, "throughput.png"))

    # 2. W, W+ and U over time (Fig. 11) for modes with a window
    wr = [r for r in results if any("W_max" in e for e in r["timeline"])]
    fig, axes = plt.subplots(max(1, len(wr)), 1, figsize=(9, 2.2 * max(1, len(wr)) + 1),
                             sharex=True, squeeze=False)
    if not wr:
        axes[0, 0].text(0.5, 0.5, "no reqsched mode in this run (no window to show)",
                        ha="center", va="center")
        axes[0, 0].set_axis_off()
    for ax, r in zip(axes[:, 0], wr):
        ts = [e["t"] for e in r["timeline"] if "W_max" in e]
        ax.step(ts, [e["W_max"] for e in r["timeline"] if "W_max" in e], where="post",
                label="W+ (window)", color="tab:blue")
        ax.plot(ts, [e["W"] for e in r["timeline"] if "W_max" in e], ".", ms=3,
                label="W (outstanding)", color="tab:cyan")
        ax.set_ylabel("responses")
        ax2 = ax.twinx()
        ax2.plot(ts, [e["U"] for e in r["timeline"] if "W_max" in e], color="tab:red",
                 label="U (Squid)")
        tl = [(e["t"], e["link_util"]) for e in r["timeline"] if "link_util" in e]
        if tl:
            ax2.plot([a for a, _ in tl], [b for _, b in tl], color="tab:orange", ls="--",
                     label="link utilization (tbf)")
        ax2.set_ylim(0, 1.2)
        ax2.set_ylabel("utilization")
        ax.set_title(r["mode"], fontsize=9, loc="left")
        shade_cross(ax, run_dir, r["mode"])
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax2.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, fontsize=7, loc="lower right", ncol=2)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle(f"Window W+ and utilization U over time, {title} (cf. MSF-RS Fig. 11)")
    written.append(_save_plot(fig, run_dir, "window.png"))

    # 3. latency decomposition per class and mode (Fig. 9)
    fig, ax = plt.subplots(figsize=(min(13, max(8, 0.5 * len(results) * (len(names) + 1))), 4.8))
    groups = names + ["all"]
    width = 0.8 / len(groups)
    for gi, g in enumerate(groups):
        waits, svcs = [], []
        for r in results:
            if g == "all":
                w = r["queue_wait_ms"]["mean"] or 0.0
                m = r["latency_ms"]["mean"] or 0.0
            else:
                c = next(c for c in r["classes"] if c["name"] == g)
                w = c["queue_wait_ms"]["mean"] or 0.0
                m = c["latency_ms"]["mean"] or 0.0
            waits.append(w / 1000)
            svcs.append(max(0.0, m - w) / 1000)
        xs = [i + (gi - (len(groups) - 1) / 2) * width for i in range(len(results))]
        col = colors.get(g, "dimgrey")
        ax.bar(xs, waits, width, color=col, hatch="//", edgecolor="black", lw=0.4)
        ax.bar(xs, svcs, width, bottom=waits, color=col, alpha=0.55, edgecolor="black", lw=0.4,
               label=g)
    ax.set_xticks(range(len(results)))
    ax.set_xticklabels([r["mode"] for r in results])
    ax.set_ylabel("mean latency (s)")
    from matplotlib.patches import Patch
    h, lab = ax.get_legend_handles_labels()
    h += [Patch(facecolor="white", hatch="//", edgecolor="black"),
          Patch(facecolor="white", edgecolor="black")]
    lab += ["queue wait (hatched)", "service"]
    ax.legend(h, lab, fontsize=8, ncol=3)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"Mean latency = queue wait at the proxy + service, {title} (cf. Fig. 9)")
    written.append(_save_plot(fig, run_dir, "latency.png"))

    # 4. latency CDF per mode
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for r in results:
        xs = sorted(r["_latencies_ms"])
        if xs:
            ax.plot([x / 1000 for x in xs], [(i + 1) / len(xs) for i in range(len(xs))],
                    label=f"{r['mode']} (mean {r['latency_ms']['mean'] / 1000:.2f} s)")
    ax.set_xscale("log")
    ax.set_xlabel("request latency, start to last byte (s, log scale)")
    ax.set_ylabel("fraction of requests")
    ax.set_title(f"Latency CDF per mode, {title}")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    written.append(_save_plot(fig, run_dir, "latency_cdf.png"))

    # 5. achieved share vs weight share
    fig, ax = plt.subplots(figsize=(max(7, 1.1 * len(results) + 3), 4))
    width = 0.8 / len(names)
    for ci, name in enumerate(names):
        xs = [i + (ci - (len(names) - 1) / 2) * width for i in range(len(results))]
        sh = [next(c for c in r["classes"] if c["name"] == name)["share"] for r in results]
        tg = [next(c for c in r["classes"] if c["name"] == name)["target_share"] for r in results]
        ax.bar(xs, sh, width, color=colors[name], label=f"{name} achieved")
        ax.plot(xs, tg, "k_", ms=14, mew=2)
    ax.plot([], [], "k_", ms=14, mew=2, label="weight share (target)")
    ax.set_xticks(range(len(results)))
    ax.set_xticklabels([r["mode"] for r in results])
    ax.set_ylabel("share of received bytes")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8, ncol=2)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"Class shares vs weights, {title}")
    written.append(_save_plot(fig, run_dir, "shares.png"))

    # 6. ISP queue delay over time (backlog / C, ~100-ms samples)
    fig, ax = plt.subplots(figsize=(9, 4.2))
    for r in results:
        qs = r.get("_queue_series") or []
        if qs:
            qd = r.get("queue_delay_ms") or {}
            ax.plot([t for t, _ in qs], [d for _, d in qs], lw=0.8,
                    label=f"{r['mode']} (mean {fmt(qd.get('mean'), '.0f')} ms, "
                          f"p95 {fmt(qd.get('p95'), '.0f')} ms)")
    if sc.get("buffer_ms"):
        ax.axhline(float(sc["buffer_ms"]), color="grey", ls="--", lw=0.8,
                   label=f"buffer {float(sc['buffer_ms']):g} ms")
    if results:
        ax.axvline(results[0]["warmup_s"], color="grey", ls=":", lw=0.8)
        shade_cross(ax, run_dir, results[0]["mode"])
    ax.set_xlabel("time (s); dotted = end of warm-up")
    ax.set_ylabel("ISP queue delay (ms)")
    ax.set_title(f"ISP queue delay (tbf backlog / C), {title}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    written.append(_save_plot(fig, run_dir, "queue_delay.png"))

    # 7. byte layer per update interval, when Squid reports it
    br = [r for r in results if r.get("byte_layer_intervals")]
    if br:
        fig, axes = plt.subplots(len(br), 1, figsize=(9, 2.4 * len(br) + 1), sharex=True,
                                 squeeze=False)
        for ax, r in zip(axes[:, 0], br):
            iv = r["byte_layer_intervals"]
            ts = [e["t"] for e in iv]
            for k, col in (("link_bps", "black"), ("proxied_bps", "tab:blue"),
                           ("exceptive_bps", "tab:grey"), ("pace_bps", "tab:green")):
                ys = [e.get(k) for e in iv]
                if any(y is not None for y in ys):
                    ax.step(ts, [(y or 0) / 1e6 for y in ys], where="post", color=col,
                            label=k.replace("_bps", ""))
            ax.axhline(cap, color="grey", ls="--", lw=0.8)
            ax.set_ylabel("Mbit/s")
            ax.set_title(r["mode"], fontsize=9, loc="left")
            shade_cross(ax, run_dir, r["mode"])
            ax2 = ax.twinx()
            wb = [e.get("window_bytes") for e in iv]
            if any(w is not None for w in wb):
                ax2.plot(ts, [(w or 0) / 1024 for w in wb], "m.", ms=3, label="window KB")
                ax2.set_ylabel("window KB")
            h1, l1 = ax.get_legend_handles_labels()
            h2, l2 = ax2.get_legend_handles_labels()
            ax.legend(h1 + h2, l1 + l2, fontsize=7, ncol=5, loc="lower right")
            ax.grid(alpha=0.3)
        axes[-1, 0].set_xlabel("time (s)")
        fig.suptitle(f"Byte layer per update interval (mgr:request_sched), {title}")
        written.append(_save_plot(fig, run_dir, "byte_layer.png"))
    return written


def make_report(run_dir: str, json_out: Optional[str] = None, plots: bool = True,
                quiet: bool = False) -> list[dict]:
    sc = json.load(open(os.path.join(run_dir, "scenario.json"), encoding="utf-8"))
    if sc.get("site"):
        from . import sitereport
        return sitereport.make_report(run_dir, json_out, plots, quiet)
    results = []
    for mode in sc["modes"]:
        if os.path.exists(os.path.join(run_dir, safe(mode), "replay.json")):
            results.append(analyse_mode(run_dir, mode, sc))
    if not results:
        raise FileNotFoundError(f"{run_dir}: no mode with replay.json")
    idle = idle_reference(run_dir, int(sc.get("small_object_bytes", 16384)))
    rows = targets_mod.evaluate(results, sc, idle)
    publish(run_dir, table(results, sc, run_dir, idle, rows), quiet,
            (lambda: draw_plots(results, sc, run_dir)) if plots else None)
    clean = [{k: v for k, v in r.items() if not k.startswith("_")} for r in results]
    for r in clean:
        r["idle_reference"] = idle
        r["targets"] = [t for t in rows if t["mode"] == r["mode"]]
    for p in [os.path.join(run_dir, "report.json")] + ([json_out] if json_out else []):
        with open(p, "w", encoding="utf-8") as f:
            json.dump(clean, f, indent=1)
    with open(os.path.join(run_dir, "targets.json"), "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
    return clean


def publish(run_dir: str, text: str, quiet: bool,
            draw: Optional[Callable[[], list[str]]]) -> None:
    """The report's table as an operator reads it: the modes not run appended,
    RUN/table.txt written, printed unless quiet, then the plots draw() makes."""
    skipped_path = os.path.join(run_dir, "skipped.json")
    if os.path.exists(skipped_path):
        for s in json.load(open(skipped_path, encoding="utf-8")):
            text += f"\nnot run: {s['reason']}"
    with open(os.path.join(run_dir, "table.txt"), "w", encoding="utf-8") as f:
        f.write(text + "\n")
    if not quiet:
        print(text, flush=True)
    if draw:
        files = draw()
        if not quiet:
            print("plots: " + " ".join(os.path.basename(p) for p in files), flush=True)


def markdown(results: list[dict], sc: dict, label: str = "") -> str:
    """A compact markdown table of a report (doc/testbed.md's result tables): per
    mode the class bit/s with their fair-share errors, small-object p95 of the
    targets' interactive class, utilization, drops, queue delay, restart req/s,
    and the targets' pass count; cross-traffic periods as extra rows."""
    names = [c["name"] for c in sc["classes"]]
    inter = (sc.get("targets") or {}).get("interactive")
    head = ["mode", "period", " / ".join(names) + " Mbit/s", "err %"]
    if inter:
        head.append(f"{inter} small p50 / p95 ms")
    head += ["util", "drops", "queue ms mean / p95"]
    if any(r.get("restart") for r in results):
        head.append("req/s before / after")
    head.append("targets")
    out = [f"**{sc.get('name')}{' ' + label if label else ''}**", "",
           "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def cells(r: dict, per: str, cl: list[dict], util, drops, qd) -> list[str]:
        row = [r["mode"], per, " / ".join(f"{c['throughput_bps'] / 1e6:.3f}" for c in cl),
               " / ".join("-" if c.get("share_error") is None else f"{c['share_error'] * 100:+.0f}"
                          for c in cl)]
        if inter:
            ic: dict[str, Any] = next((c for c in r["classes"] if c["name"] == inter), {})
            sm = ic.get("small_latency_ms") or {}
            row.append(f"{fmt(sm.get('p50'), '.0f')} / {fmt(sm.get('p95'), '.0f')}"
                       if per == "all" else "")
        qd = qd or {}
        row += [fmt(util, ".3f"), fmt(drops, "d"),
                f"{fmt(qd.get('mean'), '.0f')} / {fmt(qd.get('p95'), '.0f')}"]
        if any(x.get("restart") for x in results):
            rs = r.get("restart") or {}
            row.append(f"{fmt(rs.get('rps_before'), '.2f')} / {fmt(rs.get('rps_after'), '.2f')}"
                       if per == "all" else "")
        ts = [t for t in r.get("targets", []) if t["period"] == per or per == "all"
              and t["period"] == "all"]
        if r["mode"] == "stock" or not ts:
            row.append("(reference)" if r["mode"] == "stock" else "-")
        else:
            ok = sum(1 for t in ts if t["ok"])
            row.append(f"{ok}/{len(ts)} pass" + (", miss: " + "; ".join(
                t["target"] for t in ts if t["ok"] is False) if ok < len(ts) else ""))
        return row

    for r in results:
        out.append("| " + " | ".join(cells(r, "all", r["classes"], r.get("utilization"),
                                          r.get("bottleneck_drops"),
                                          r.get("queue_delay_ms"))) + " |")
        for per in ("on", "off"):
            ps = (r.get("periods") or {}).get(per)
            if ps and ps.get("classes"):
                out.append("| " + " | ".join(cells(r, per, ps["classes"], ps.get("utilization"),
                                                  ps.get("drops"), ps.get("queue_delay_ms")))
                           + " |")
    idle = results[0].get("idle_reference") if results else None
    if idle:
        sm = idle["small_latency_ms"]
        out += ["", f"idle-link fetch: small p50 {fmt(sm['p50'], '.0f')} ms, p95 "
                    f"{fmt(sm['p95'], '.0f')} ms ({idle['small_requests']} responses)"]
    return "\n".join(out)


def sweep_order(path: str) -> tuple:
    """Sweep point directories (key-VALUE) in numeric order of their values."""
    v = os.path.basename(path).rsplit("-", 1)[-1]
    try:
        return (0, float(v), path)
    except ValueError:
        return (1, 0.0, path)


def sweep_summary(out: str, point_dirs: list[str], json_out: Optional[str] = None) -> str:
    """A sweep's run directory: every point's table and targets in one sweep.txt,
    and sweep.json = {label: report list}."""
    parts = []
    data = {}
    for d in point_dirs:
        label = os.path.basename(d)
        with open(os.path.join(d, "report.json"), encoding="utf-8") as f:
            data[label] = json.load(f)
        with open(os.path.join(d, "table.txt"), encoding="utf-8") as f:
            parts.append(f"=== {label} ===\n" + f.read())
    text = "\n".join(parts)
    with open(os.path.join(out, "sweep.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    for p in [os.path.join(out, "sweep.json")] + ([json_out] if json_out else []):
        with open(p, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
    return text


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="reqsched-report", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir")
    ap.add_argument("--json", help="also write the report JSON here")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--markdown", action="store_true",
                    help="print compact markdown tables (from report.json; no re-analysis)")
    args = ap.parse_args(argv)
    if args.markdown:
        dirs = [args.run_dir] if os.path.exists(os.path.join(args.run_dir, "report.json")) \
            else sorted((os.path.join(args.run_dir, d) for d in os.listdir(args.run_dir)
                         if os.path.exists(os.path.join(args.run_dir, d, "report.json"))),
                        key=sweep_order)
        for d in dirs:
            sc = json.load(open(os.path.join(d, "scenario.json"), encoding="utf-8"))
            res = json.load(open(os.path.join(d, "report.json"), encoding="utf-8"))
            if sc.get("site"):
                from . import sitereport
                print(sitereport.paper_table(res, [c["name"] for c in sc["classes"]], md=True)
                      + "\n")
            else:
                print(markdown(res, sc, sc.get("sweep_label", "")) + "\n")
        return 0
    try:
        if not os.path.exists(os.path.join(args.run_dir, "scenario.json")):
            # a sweep: one report per point directory, then the summary
            subs = sorted((os.path.join(args.run_dir, d) for d in os.listdir(args.run_dir)
                           if os.path.exists(os.path.join(args.run_dir, d, "scenario.json"))),
                          key=sweep_order)
            if not subs:
                raise FileNotFoundError(f"no scenario.json in {args.run_dir} or below")
            for d in subs:
                make_report(d, None, plots=not args.no_plots, quiet=True)
            text = sweep_summary(args.run_dir, subs, args.json)
            if not args.quiet:
                print(text, flush=True)
            return 0
        make_report(args.run_dir, args.json, plots=not args.no_plots, quiet=args.quiet)
    except (OSError, ValueError, KeyError) as e:
        print(f"report: {args.run_dir}: {e}", file=sys.stderr)
        return 1
    return 0
