# SPDX-License-Identifier: GPL-2.0-or-later
"""Squid's cache manager page request_sched (README, "The report page"):
"key: value" lines, one "resource: k=v ..." line per server resource of the
website gateway (doc/website-gateway.md), then one "class: k=v k=v ..." line
per class; with SMP
workers also one "worker: k=v ..." line per worker and a "proxy: k=v ..." line,
and the cache manager wraps each worker's page in "by kidN {" ... "} by kidN".

The one parser of the page: the testbed samples it into mgr.jsonl and the
integration tests (test/integration/rsharness.py) read Squid's state from it.
"""
from __future__ import annotations

import re
from typing import Any

MgrValue = float | str


def _value(v: str) -> MgrValue:
    try:
        return float(v)
    except ValueError:
        return v


# "by kidN {" ... "} by kidN": one worker's page in an SMP Squid's answer
_KID_PAGE = re.compile(r"^by kid(\d+) \{\n(.*?)^\} by kid\1\b", re.M | re.S)


def _record(val: str) -> dict[str, MgrValue]:
    return {k: v if k == "name" else _value(v) for k, eq, v in
            (kv.partition("=") for kv in val.split()) if eq}


def parse_mgr_page(text: str) -> dict[str, Any]:
    """The page -> {"global": {key: value}, "classes": [{key: value}, ...],
    "resources": [{key: value}, ...], "workers": [{key: value}, ...],
    "proxy": {key: value}}.
    Numbers become floats, other values (and class names) stay strings; lines that are not
    "key: value" with a one-word key are ignored."""
    glob: dict[str, MgrValue] = {}
    classes: list[dict[str, MgrValue]] = []
    resources: list[dict[str, MgrValue]] = []
    workers: list[dict[str, MgrValue]] = []
    proxy: dict[str, MgrValue] = {}
    for line in text.splitlines():
        key, sep, val = line.partition(":")
        if not sep:
            continue
        key, val = key.strip(), val.strip()
        if key == "class":
            classes.append(_record(val))
        elif key == "resource":
            resources.append(_record(val))
        elif key == "worker":
            workers.append(_record(val))
        elif key == "proxy":
            proxy = _record(val)
        elif key and " " not in key:
            glob[key] = _value(val)
    return {"global": glob, "classes": classes, "resources": resources, "workers": workers, "proxy": proxy}


def parse_mgr_kids(text: str) -> dict[int, dict[str, Any]]:
    """An SMP Squid's answer -> {kid number: parse_mgr_page() of its page}."""
    return {int(m.group(1)): parse_mgr_page(m.group(2)) for m in _KID_PAGE.finditer(text)}


# keys of the page that add up over SMP workers: counts, bytes, rates, the
# window, the shares of the link (every worker reports its part)
_ADDITIVE = {"W", "W_max", "queued", "released", "cancelled", "ended", "aborted", "timeouts",
             "rejected", "rejected_user", "rejected_class", "bytes", "link_bytes",
             "proxied_bytes", "exceptive_bytes", "pace_bps", "flows", "flows_waiting",
             "window_bytes", "long_transfers", "reclaimed", "bypassed", "link_share"}
_CLASS_KEPT = {"name", "weight", "service"}


def parse_mgr_proxy(text: str) -> dict[str, Any]:
    """The whole proxy: parse_mgr_page() of a one-process Squid's page, or of
    an SMP Squid's answer the workers' pages merged: the additive keys summed
    (per class too, but weight and service), U weighted by each worker's
    link_share, the other keys as the first worker has them; "kids" keeps
    each worker's global keys and classes by kid number."""
    kids = parse_mgr_kids(text)
    if not kids:
        return parse_mgr_page(text)
    pages = [kids[k] for k in sorted(kids)]
    merged = parse_mgr_page("")
    merged["global"] = dict(pages[0]["global"])
    merged["workers"], merged["proxy"] = pages[0]["workers"], pages[0]["proxy"]
    merged["resources"] = pages[0]["resources"]
    for key in _ADDITIVE & set(merged["global"]):
        merged["global"][key] = sum(float(p["global"].get(key, 0)) for p in pages)
    if all("U" in p["global"] and "link_share" in p["global"] for p in pages):
        merged["global"]["U"] = sum(float(p["global"]["U"]) * float(p["global"]["link_share"])
                                    for p in pages)
    by_name: dict[str, dict[str, MgrValue]] = {}
    for p in pages:
        for c in p["classes"]:
            name = str(c["name"])
            if name not in by_name:
                by_name[name] = dict(c)
                continue
            m = by_name[name]
            for k, v in c.items():
                if k not in _CLASS_KEPT and isinstance(v, float):
                    m[k] = float(m.get(k, 0)) + v
    merged["classes"] = list(by_name.values())
    merged["smp_kids"] = len(pages)
    # each worker's own counters, for the report's split by worker
    merged["kids"] = {str(k): {"global": kids[k]["global"], "classes": kids[k]["classes"]}
                      for k in sorted(kids)}
    return merged
