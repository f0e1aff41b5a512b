# SPDX-License-Identifier: GPL-2.0-or-later
"""Admission: which requests the scheduler takes, and which it refuses.

request_sched_access deny lines rule a class out; request_sched_bypass
exempts requests from scheduling; the per-user and per-class queue limits
refuse only the offender's requests (issue 12, items 5 and 11)."""
from __future__ import annotations

import re
import selectors
import socket
import threading
import time
from pathlib import Path
from typing import Dict, List

import pytest

import rsharness as h
from rsharness import http_get, sched_conf, wait_until

GUEST_SRC, STAFF_SRC, HOG_SRC = "127.0.0.3", "127.0.0.2", "127.0.0.9"


def _rows(sq: h.Squid, path: str) -> List[Dict[str, str]]:
    return [r for r in sq.access_log() if path in r["url"]]


def _idle(sq: h.Squid, timeout: float = 30) -> h.Report:
    wait_until(lambda: (lambda rp: rp.g("W") == 0 and rp.g("queued") == 0)(sq.report()),
               timeout, what="W = 0 and queued = 0")
    return sq.report()


# --------------------------------------------------------------------------
# request_sched_access CLASS deny ACL
# --------------------------------------------------------------------------
def test_access_deny_rules_class_out(squid_factory, origin):
    """`gold deny guests` then `gold allow all`: guests skip gold's allow
    line and, with no other allow line, land in the first class; everybody
    else is in gold. A deny line that does not match rules nothing out."""
    acls = f"acl guests src {GUEST_SRC}\nacl nobody src 127.0.0.250\n"
    sq = squid_factory(acls=acls, sched=sched_conf(
        window="fixed 4", classes=[("bronze", 1), ("silver", 2), ("gold", 3)],
        access=[("gold", "deny guests"), ("silver", "deny nobody"), ("gold", "allow all")]))
    for src, tag in ((GUEST_SRC, "guest"), (STAFF_SRC, "staff")):
        r = http_get(sq.port, origin.url(f"/deny/{tag}", size=100), src=src, timeout=10)
        assert r.status == 200, r
    rows = {r["url"].rsplit("/", 1)[-1].split("?")[0]: r["class"] for r in _rows(sq, "/deny/")}
    assert rows == {"guest": "bronze", "staff": "gold"}, rows
    rp = _idle(sq)
    assert rp.c("bronze", "released") == 1 and rp.c("gold", "released") == 1, rp.text

