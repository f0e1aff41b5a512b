# SPDX-License-Identifier: GPL-2.0-or-later
"""The website-gateway scenario's report (reqsched-report RUN_DIR on a [site] run).

Per mode, over the measured window [warmup_s, duration_s] of the load's clock:

* per resource (cpu, disk, bw): each class's share of what the origin consumed
  (site.log: the CGI workers' CPU seconds, the emulated disk's bytes, the bytes
  written on the link) for requests that ended in the window (the paper's
  Fig. 4); utilization = that consumption / (capacity x window) for cpu and
  disk; for bw the wire bytes through the link's tbf (tc.csv) / (C x time):
  the bytes the origin writes sit in socket buffers before the link carries
  them, so their end times are early;
* per class and in total: throughput = answered requests (status 200) that
  ended in the window per second (Figs. 5-6), requests sent and abandoned
  (patience), refused (503: not in service within the queue timeout), mean latency of the answered requests that started in the window
  (Fig. 7).

Capacities: cpu = the cgroup quota (cores), disk = the emulated disk's rate,
bw = the link's payload rate (downlink_bps x 1448/1514 / 8 bytes/s).
Outputs: table.txt, report.json (one object per mode), and with plots
site_shares.png, site_throughput.png, site_latency.png.
"""
from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass, field
from typing import Any, Optional

from .report import publish, safe
from .scenario import PAYLOAD_PER_WIRE

RESOURCES = ("cpu", "disk", "bw")
# the paper's numbers (Lin et al., Figs. 4-7 and the abstract), for the table
PAPER = {"throughput": "~300 / 260 / ~300 / -", "shares": "6:3:1 on each (Fig. 4c)",
         "latency": "mqos lowest (Fig. 7)"}


def capacities(sc: dict) -> dict[str, float]:
    o = sc["site"]["origin"]
    return {"cpu": float(o["cpu_quota"]), "disk": float(o["disk_Bps"]),
            "bw": float(sc["downlink_bps"]) * PAYLOAD_PER_WIRE / 8}


@dataclass
class Tally:
    """One class's requests: started in the window (sent, refused with 503,
    abandoned, latencies of the answered) and answered inside it (done)."""
    sent: int = 0
    refused: int = 0
    abandoned: int = 0
    done: int = 0
    lat: list[float] = field(default_factory=list)


def analyse_mode(run_dir: str, mode: str, sc: dict) -> dict[str, Any]:
    mdir = os.path.join(run_dir, safe(mode))
    load = json.load(open(os.path.join(mdir, "load.json"), encoding="utf-8"))
    t0, lo, hi = float(load["start_epoch"]), float(sc["warmup_s"]), float(sc["duration_s"])
    window = hi - lo
    names = [c["name"] for c in sc["classes"]]
    cap = capacities(sc)
    used = {r: {n: 0.0 for n in names} for r in RESOURCES}
    wasted = 0
    with open(os.path.join(mdir, "site.log"), encoding="utf-8") as f:
        for line in f:
            p = line.split()
            if len(p) != 9 or p[2] not in names or not lo <= float(p[0]) - t0 < hi:
                continue
            used["cpu"][p[2]] += float(p[4])
            used["disk"][p[2]] += float(p[5])
            used["bw"][p[2]] += float(p[6])
            wasted += p[8] == "aborted"
    resources = {}
    for r in RESOURCES:
        total = sum(used[r].values())
        resources[r] = {"capacity": cap[r], "utilization": total / (cap[r] * window),
                        "share": {n: (used[r][n] / total if total else 0.0) for n in names}}
    link = link_utilization(os.path.join(mdir, "tc.csv"), t0 + lo, t0 + hi,
                            float(sc["downlink_bps"]))
    if link is not None:
        resources["bw"]["utilization"] = link
    per = {n: Tally() for n in names}
    with open(os.path.join(mdir, "requests.csv"), encoding="utf-8") as f:
        for row in csv.DictReader(f):
            c = per.get(row["class"])
            if c is None:
                continue
            start, end = float(row["start"]), float(row["end"])
            ok = end >= 0 and row["status"] == "200"
            if lo <= start < hi:
                c.sent += 1
                c.abandoned += row["error"] == "abandoned"
                c.refused += row["status"] == "503"
                if ok:
                    c.lat.append(end - start)
            if ok and lo <= end < hi:
                c.done += 1
    classes = [{"name": cs["name"], "weight": cs["weight"], "sent": per[cs["name"]].sent,
                "refused": per[cs["name"]].refused, "abandoned": per[cs["name"]].abandoned,
                "answered": len(per[cs["name"]].lat),
                "throughput_rps": per[cs["name"]].done / window,
                "latency_ms": mean_ms(per[cs["name"]].lat)} for cs in sc["classes"]]
    lat = [x for c in per.values() for x in c.lat]
    return {"scenario": sc["name"], "mode": mode, "window_s": window,
            "throughput_rps": sum(c.done for c in per.values()) / window,
            "latency_ms": mean_ms(lat), "origin_aborted": wasted,
            "resources": resources, "classes": classes}


def link_utilization(tc_csv: str, t_lo: float, t_hi: float, link_bps: float) -> Optional[float]:
    """Wire bytes through the origin link's tbf between the first and the last
    sample inside [t_lo, t_hi) / (link rate x that time); None without samples."""
    if not os.path.exists(tc_csv):
        return None
    with open(tc_csv, encoding="utf-8") as f:
        pts = [(float(r["t_epoch"]), float(r["bytes"])) for r in csv.DictReader(f)
               if t_lo <= float(r["t_epoch"]) < t_hi]
    if len(pts) < 2 or pts[-1][0] <= pts[0][0]:
        return None
    return (pts[-1][1] - pts[0][1]) * 8 / (link_bps * (pts[-1][0] - pts[0][0]))


def mean_ms(xs: list[float]) -> Optional[float]:
    return 1000.0 * sum(xs) / len(xs) if xs else None


def ratio(shares: dict[str, float], names: list[str]) -> str:
    """Class shares as a:b:1, the last class = 1 (the paper's 6:3:1)."""
    last = shares[names[-1]]
    if last <= 0:
        return ":".join(f"{shares[n]:.2f}" for n in names)
    return ":".join(f"{shares[n] / last:.1f}" for n in names[:-1]) + ":1"


def fmt(x: Optional[float], spec: str = ".0f") -> str:
    return "-" if x is None else format(x, spec)


def table(results: list[dict], sc: dict) -> str:
    names = [c["name"] for c in sc["classes"]]
    head = (f"{'mode':8s} {'req/s ' + '/'.join(names):>24s} {'total':>6s}  "
            f"{'latency ms ' + '/'.join(names):>30s} {'all':>5s}  util cpu/disk/bw  "
            + "  ".join(f"{r} {':'.join(n[0] for n in names):>9s}" for r in RESOURCES))
    lines = [f"website-gateway: {sc['name']}, window {results[0]['window_s']:.0f} s, "
             f"{sc['site']['rate']:g} req/s offered per class", head, "-" * len(head)]
    for r in results:
        cl, res = r["classes"], r["resources"]
        tput = "/".join(f"{c['throughput_rps']:.1f}" for c in cl)
        lat = "/".join(fmt(c["latency_ms"]) for c in cl)
        util = "/".join(f"{res[x]['utilization']:.2f}" for x in RESOURCES)
        lines.append(f"{r['mode']:8s} {tput:>24s} {r['throughput_rps']:6.1f}  {lat:>30s} "
                     f"{fmt(r['latency_ms']):>5s}  {util:>16s}  "
                     + "  ".join(f"{x} {ratio(res[x]['share'], names):>9s}" for x in RESOURCES))
    return "\n".join(lines) + "\n\n" + paper_table(results, names)


def paper_table(results: list[dict], names: list[str], md: bool = False) -> str:
    """The paper-vs-ours table (doc/website-gateway.md's rows); md: as markdown
    (reqsched-report --markdown)."""
    by = {r["mode"]: r for r in results}
    order = [m for m in ("nqos", "sqos", "mqos", "drf") if m in by]

    def tp(m: str) -> float:
        return by[m]["throughput_rps"]
    rows = [("quantity", "paper", "here"),
            ("throughput, req/s, " + " / ".join(order), PAPER["throughput"],
             " / ".join(f"{tp(m):.1f}" for m in order))]
    if "mqos" in by and "sqos" in by and "nqos" in by:
        rows.append(("mqos / sqos, mqos / nqos", "1.21 (1.15 in Fig. 5) / ~1",
                     f"{tp('mqos') / tp('sqos'):.2f} / {tp('mqos') / tp('nqos'):.2f}"))
    for m in order:
        res = by[m]["resources"]
        rows.append((f"{m}: use of cpu, disk, bw by class",
                     {"nqos": "1:1:1 (Fig. 4a)", "sqos": "6:3:1 on CPU (Fig. 4b)",
                      "mqos": PAPER["shares"], "drf": "-"}[m],
                     ", ".join(ratio(res[x]["share"], names) for x in RESOURCES)))
    rows.append(("utilization cpu/disk/bw: " + "; ".join(order), "mqos uses all",
                 "; ".join("/".join(f"{by[m]['resources'][x]['utilization']:.2f}"
                                    for x in RESOURCES) for m in order)))
    rows.append(("mean latency, ms: " + " / ".join(order), PAPER["latency"],
                 " / ".join(fmt(by[m]["latency_ms"]) for m in order)))
    for m in order:
        rows.append((f"{m} latency by class, ms", "differentiated" if m == "mqos" else "-",
                     " / ".join(fmt(c["latency_ms"]) for c in by[m]["classes"])))
    if md:
        return "\n".join([f"| {' | '.join(rows[0])} |", "|---|---|---|"]
                         + [f"| {' | '.join(r)} |" for r in rows[1:]])
    w = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join(f"{a:{w[0]}s}  {b:{w[1]}s}  {c}" for a, b, c in rows)


def draw_plots(results: list[dict], sc: dict, run_dir: str) -> list[str]:
    """Figs. 4-7 of the paper: shares of each resource per class (stacked,
    one group per mode), throughput per class, latency per class."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = [c["name"] for c in sc["classes"]]
    modes = [r["mode"] for r in results]
    files = []
    fig, axes = plt.subplots(1, len(results), figsize=(3.2 * len(results), 3.2), squeeze=False)
    for ax, r in zip(axes[0], results):
        bottom = [0.0] * len(RESOURCES)
        for n in names:
            h = [r["resources"][x]["utilization"] * r["resources"][x]["share"][n]
                 for x in RESOURCES]
            ax.bar(RESOURCES, h, bottom=bottom, label=n)
            bottom = [a + b for a, b in zip(bottom, h)]
        ax.set_title(r["mode"])
        ax.set_ylim(0, 1.3)
    axes[0][0].set_ylabel("utilization by class")
    axes[0][-1].legend(fontsize=7, loc="upper center", ncol=len(names))
    fig.tight_layout()
    files.append(os.path.join(run_dir, "site_shares.png"))
    fig.savefig(files[-1], dpi=90)
    plt.close(fig)
    for key, label, fname in (("throughput_rps", "answered requests/s", "site_throughput.png"),
                              ("latency_ms", "mean latency, ms", "site_latency.png")):
        fig, ax = plt.subplots(figsize=(6, 3.2))
        width = 0.8 / len(names)
        for k, n in enumerate(names):
            ys = [next(c[key] or 0 for c in r["classes"] if c["name"] == n) for r in results]
            ax.bar([i + k * width for i in range(len(modes))], ys, width, label=n)
        ax.set_xticks([i + width * (len(names) - 1) / 2 for i in range(len(modes))], modes)
        if key == "throughput_rps":        # the paper's Fig. 5: the total per mode
            for i, r in enumerate(results):
                ax.annotate(f"total {r[key]:.0f}", (i + width * (len(names) - 1) / 2, 0),
                            xytext=(0, 2), textcoords="offset points", ha="center",
                            fontsize=7, color="white")
        ax.set_ylabel(label)
        ax.legend(fontsize=7)
        fig.tight_layout()
        files.append(os.path.join(run_dir, fname))
        fig.savefig(files[-1], dpi=90)
        plt.close(fig)
    return files


def make_report(run_dir: str, json_out: Optional[str] = None, plots: bool = True,
                quiet: bool = False) -> list[dict]:
    sc = json.load(open(os.path.join(run_dir, "scenario.json"), encoding="utf-8"))
    results = [analyse_mode(run_dir, m, sc) for m in sc["modes"]
               if os.path.exists(os.path.join(run_dir, safe(m), "load.json"))]
    if not results:
        raise FileNotFoundError(f"{run_dir}: no mode with load.json")
    publish(run_dir, table(results, sc), quiet,
            (lambda: draw_plots(results, sc, run_dir)) if plots else None)
    for p in [os.path.join(run_dir, "report.json")] + ([json_out] if json_out else []):
        with open(p, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    return results
