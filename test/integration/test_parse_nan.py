# SPDX-License-Identifier: GPL-2.0-or-later
"""Regression tests of test/fuzz/fuzz_config.py's findings: time values of
NaN were accepted by `squid -k parse` (patch 26). Each bad line is paired with
the same file where only that line is good, which must parse."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import rsharness as h

BASE = ["request_scheduler on", "request_sched_link 10 Mbit", "request_sched_class gold 1"]
CASES = {
    "queue-timeout-nan": ("request_sched_queue_timeout nan seconds", "request_sched_queue_timeout 60 seconds"),
    "update-interval-NaN": ("request_sched_update_interval NaN seconds", "request_sched_update_interval 5 seconds"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_nan_time_is_rejected_naming_the_line(case: str, workdir: Path) -> None:
    if not h.SQUID_BIN.exists():
        pytest.skip(f"{h.SQUID_BIN} not built (make squid)")
    bad, good = CASES[case]
    ok = h.Squid(workdir / "good", sched="\n".join(BASE + [good]))
    p = h.Squid.run_parse(ok.conf)
    assert p.returncode == 0 and not re.search(r"FATAL|\bERROR\b", p.stdout), p.stdout[-1500:]
    sq = h.Squid(workdir / "bad", sched="\n".join(BASE + [bad]))
    n = [i + 1 for i, ln in enumerate(sq.conf.read_text().splitlines()) if ln.strip() == bad][-1]
    p = h.Squid.run_parse(sq.conf)
    assert p.returncode != 0, f"squid -k parse accepted {bad!r}:\n{p.stdout[-1500:]}"
    assert re.search(rf"(\bline {n}\b|\({n}\))", p.stdout), p.stdout[-1500:]
