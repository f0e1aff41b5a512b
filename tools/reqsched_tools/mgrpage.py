# SPDX-License-Identifier: GPL-2.0-or-later
"""Squid's cache manager page request_sched (README, "The report page"):
"key: value" lines, then one "class: k=v k=v ..." line per class.

The one parser of the page: the testbed samples it into mgr.jsonl and the
integration tests (test/integration/rsharness.py) read Squid's state from it.
"""
from __future__ import annotations

from typing import Any

MgrValue = float | str


def _value(v: str) -> MgrValue:
    try:
        return float(v)
    except ValueError:
        return v


def parse_mgr_page(text: str) -> dict[str, Any]:
    """The page -> {"global": {key: value}, "classes": [{key: value}, ...]}.
    Numbers become floats, other values (and class names) stay strings; lines that are not
    "key: value" with a one-word key are ignored."""
    glob: dict[str, MgrValue] = {}
    classes: list[dict[str, MgrValue]] = []
    for line in text.splitlines():
        key, sep, val = line.partition(":")
        if not sep:
            continue
        key, val = key.strip(), val.strip()
        if key == "class":
            classes.append({k: v if k == "name" else _value(v) for k, eq, v in
                            (kv.partition("=") for kv in val.split()) if eq})
        elif key and " " not in key:
            glob[key] = _value(val)
    return {"global": glob, "classes": classes}
