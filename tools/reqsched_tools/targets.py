# SPDX-License-Identifier: GPL-2.0-or-later
"""Targets of a scenario ([targets] table), evaluated against a run's report.

Every mode but stock is checked; stock is the reference of the "vs stock"
targets. A row is PASS, MISS or N/A (the data it needs is missing: no stock run,
no idle-link reference, no small object of the class...). N/A is never a pass.

  interactive = "NAME"          the class the small-object latency targets are about
  small_p95_vs_idle = 1.5       its p95 small-object latency <= 1.5 x the idle-link fetch
  small_p95_vs_stock = 0.3      ... and <= 0.3 x stock's
  queue_delay_mean_ms = 20      mean ISP queue delay (tbf backlog / C)
  utilization = 0.95            tbf bytes (cross traffic included) / C
  bulk_rest = 0.95              the backlogged classes' bit/s / (payload capacity -
                                the think-time classes' bit/s): "bulk gets the rest"
  share_error = 0.05            every class within 5% of its weighted fair share
  drops_vs_stock = 0.1          bottleneck drops <= 0.1 x stock's (10x fewer)
  restart_rps_vs_stock = 0.95   completed requests/s from 2 s after the restart >= 0.95 x stock's
  restart_recovery_vs_stock = 0.95
                                the mode's req/s after / before the restart >= 0.95 x
                                stock's: the restart's own cost, apart from the weights
                                (weighted shares alone change a closed loop's req/s)
  never_worse_than_stock = true per backlogged class: bit/s >= 0.95 x min(stock's bit/s,
                                its fair share); per think-time class (whose fair share
                                is what it got): bit/s >= 0.95 x stock's and
                                small-object p95 <= 1.1 x stock's
  periods = true                share_error, utilization and drops_vs_stock are
                                checked in the cross traffic's on and off periods
                                separately instead of over the whole window
"""
from __future__ import annotations

from typing import Any, Optional

from .scenario import PAYLOAD_PER_WIRE

NEVER_WORSE_THR = 0.95          # a class may lose 5% against min(stock, fair share)
NEVER_WORSE_LAT = 1.10          # a think-time class's small-object p95 may grow 10%
KNOWN = {"interactive", "small_p95_vs_idle", "small_p95_vs_stock", "queue_delay_mean_ms",
         "utilization", "bulk_rest", "share_error", "drops_vs_stock", "restart_rps_vs_stock",
         "restart_recovery_vs_stock", "never_worse_than_stock", "periods"}


def _row(mode: str, period: str, target: str, measured: Optional[float], op: str,
         limit: float, note: str = "") -> dict[str, Any]:
    if measured is None:
        ok = None
    elif op == "<=":
        ok = measured <= limit + 1e-9
    else:
        ok = measured >= limit - 1e-9
    return {"mode": mode, "period": period, "target": target,
            "measured": None if measured is None else round(measured, 4),
            "op": op, "limit": limit, "ok": ok, "note": note}


def _cls(r: dict, name: str) -> Optional[dict]:
    return next((c for c in r["classes"] if c["name"] == name), None)


def _ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    if a is None or b is None:
        return None
    if b == 0:
        return 0.0 if a == 0 else float("inf")
    return a / b


def share_rows(mode: str, period: str, classes: list[dict], limit: float) -> list[dict]:
    errs = [(c["name"], c.get("share_error")) for c in classes]
    known = [(n, e) for n, e in errs if e is not None]
    if not known:
        return [_row(mode, period, "share_error", None, "<=", limit, "no class got bytes")]
    worst = max(known, key=lambda x: abs(x[1]))
    note = " ".join(f"{n} {e * 100:+.1f}%" for n, e in known)
    return [_row(mode, period, "share_error", abs(worst[1]), "<=", limit, note)]


def evaluate(results: list[dict], sc: dict, idle: Optional[dict]) -> list[dict]:
    t = sc.get("targets") or {}
    if not t:
        return []
    unknown = set(t) - KNOWN
    rows: list[dict] = []
    stock = next((r for r in results if r["mode"] == "stock"), None)
    payload = float(sc["downlink_bps"]) * PAYLOAD_PER_WIRE
    inter = t.get("interactive")
    for r in results:
        m = r["mode"]
        if m == "stock":
            continue
        if unknown:
            rows.append(_row(m, "all", "unknown target keys", None, "<=", 0,
                             ", ".join(sorted(unknown))))
        ic = _cls(r, inter) if inter else None
        sc_ic = _cls(stock, inter) if (inter and stock) else None
        p95 = (ic or {}).get("small_latency_ms", {}).get("p95")
        if "small_p95_vs_idle" in t:
            ip95 = (idle or {}).get("small_latency_ms", {}).get("p95")
            rows.append(_row(m, "all", f"{inter} small p95 / idle", _ratio(p95, ip95), "<=",
                             t["small_p95_vs_idle"],
                             f"{p95} ms vs idle {ip95} ms" if ip95 else "no idle reference"))
        if "small_p95_vs_stock" in t:
            sp95 = (sc_ic or {}).get("small_latency_ms", {}).get("p95")
            rows.append(_row(m, "all", f"{inter} small p95 / stock", _ratio(p95, sp95), "<=",
                             t["small_p95_vs_stock"],
                             f"{p95} ms vs stock {sp95} ms" if sp95 else "no stock run"))
        if "queue_delay_mean_ms" in t:
            qd = (r.get("queue_delay_ms") or {}).get("mean")
            rows.append(_row(m, "all", "ISP queue delay mean ms", qd, "<=",
                             t["queue_delay_mean_ms"]))
        if "bulk_rest" in t:
            think = sum(c["throughput_bps"] for c in r["classes"] if c.get("pattern") == "think")
            bulk = sum(c["throughput_bps"] for c in r["classes"] if c.get("pattern") != "think")
            rest = payload - think
            rows.append(_row(m, "all", "bulk bit/s / (payload C - interactive)",
                             bulk / rest if rest > 0 else None, ">=", t["bulk_rest"],
                             f"{bulk / 1e6:.3f} of {rest / 1e6:.3f} Mbit/s"))
        periods = ["on", "off"] if t.get("periods") else ["all"]
        for per in periods:
            if per == "all":
                cur, ref = r, stock
                classes = r["classes"]
                util, drops = r.get("utilization"), r.get("bottleneck_drops")
                sdrops = stock.get("bottleneck_drops") if stock else None
            else:
                cur = (r.get("periods") or {}).get(per) or {}
                ref = ((stock or {}).get("periods") or {}).get(per) if stock else None
                classes = cur.get("classes") or []
                util, drops = cur.get("utilization"), cur.get("drops")
                sdrops = (ref or {}).get("drops")
            if "share_error" in t:
                rows += share_rows(m, per, classes, t["share_error"])
            if "utilization" in t:
                rows.append(_row(m, per, "utilization (CBR incl.)", util, ">=", t["utilization"]))
            if "drops_vs_stock" in t:
                rows.append(_row(m, per, "drops / stock drops", _ratio(drops, sdrops), "<=",
                                 t["drops_vs_stock"],
                                 f"{drops} vs stock {sdrops}" if sdrops is not None
                                 else "no stock run"))
        rs, ss = r.get("restart") or {}, (stock or {}).get("restart") or {}
        if "restart_rps_vs_stock" in t:
            a, b = rs.get("rps_after"), ss.get("rps_after")
            bytes_ratio = _ratio(rs.get("mbps_after"), ss.get("mbps_after"))
            note = "no stock run" if b is None else f"{a} vs stock {b} req/s"
            if bytes_ratio is not None:
                note += f"; completed bytes {bytes_ratio:.3f}x"
            rows.append(_row(m, "all", "req/s after restart / stock", _ratio(a, b), ">=",
                             t["restart_rps_vs_stock"], note))
        if "restart_recovery_vs_stock" in t:
            mine = _ratio(rs.get("rps_after"), rs.get("rps_before"))
            theirs = _ratio(ss.get("rps_after"), ss.get("rps_before"))
            rows.append(_row(m, "all", "req/s after/before restart / stock's", _ratio(mine, theirs),
                             ">=", t["restart_recovery_vs_stock"],
                             f"{mine:.3f} vs stock {theirs:.3f}" if mine is not None and theirs is not None
                             else "no stock run"))
        if t.get("never_worse_than_stock"):
            for c in r["classes"]:
                s = _cls(stock, c["name"]) if stock else None
                if s is None:
                    rows.append(_row(m, "all", f"{c['name']} not worse than stock", None, ">=",
                                     NEVER_WORSE_THR, "no stock run"))
                    continue
                if c.get("pattern") == "think":
                    # a think-time class's fair share is what it got (its demand): compare
                    # with stock's, the same offered load
                    floor, what = s["throughput_bps"], "stock"
                else:
                    floor = min(s["throughput_bps"], c.get("fair_bps") or s["throughput_bps"])
                    what = "min(stock, fair)"
                rows.append(_row(m, "all", f"not worse: {c['name']} bit/s / {what}",
                                 _ratio(c["throughput_bps"], floor), ">=", NEVER_WORSE_THR,
                                 f"{c['throughput_bps'] / 1e6:.3f} vs stock "
                                 f"{s['throughput_bps'] / 1e6:.3f}, fair "
                                 f"{(c.get('fair_bps') or 0) / 1e6:.3f} Mbit/s"))
                if c.get("pattern") == "think":
                    a = c.get("small_latency_ms", {}).get("p95")
                    b = s.get("small_latency_ms", {}).get("p95")
                    rows.append(_row(m, "all", f"not worse: {c['name']} small p95 / stock",
                                     _ratio(a, b), "<=", NEVER_WORSE_LAT, f"{a} vs {b} ms"))
    return rows


def format_rows(rows: list[dict]) -> str:
    if not rows:
        return ""
    out = ["targets (every mode but stock; N/A = data missing, never a pass):"]
    hdr = f"  {'mode':<14} {'period':<6} {'target':<46} {'measured':>9} {'limit':>9}  result"
    out.append(hdr)
    out.append("  " + "-" * (len(hdr) - 2))
    for x in rows:
        res = "N/A" if x["ok"] is None else ("PASS" if x["ok"] else "MISS")
        meas = "-" if x["measured"] is None else f"{x['measured']:.3f}"
        out.append(f"  {x['mode']:<14} {x['period']:<6} {x['target']:<46} {meas:>9} "
                   f"{x['op']} {x['limit']:<6g}  {res}  {x['note']}")
    n = len(rows)
    ok = sum(1 for x in rows if x["ok"])
    miss = sum(1 for x in rows if x["ok"] is False)
    out.append(f"  {ok}/{n} pass, {miss} miss, {n - ok - miss} n/a")
    return "\n".join(out)
