# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 12 item 2: no window slot lives forever. A scheduled response older
than request_sched_slot_max_age is reclaimed: the next queued request goes,
cache.log says so (level 1), mgr:request_sched counts it (`reclaimed`). The
reclaimed response still counts its bytes and ends normally.

The origin sends the headers and 10,000 of 1,000,000 announced body bytes,
then stalls with the connection open (below request_sched_long_transfer, so
the response would hold its slot until Squid's read_timeout, 15 minutes)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import rsharness as h
from rsharness import Background, http_get, sched_conf, wait_until
from test_parse import GOOD, line_no, parse_ok, write_conf

STALL_HEAD = ("HTTP/1.1 200 OK\nContent-Length: 1000000\nCache-Control: no-store\n"
              "Connection: close\n")
SMALL_HEAD = ("HTTP/1.1 200 OK\nContent-Length: 2000\nCache-Control: no-store\n"
              "Connection: close\n")


def test_stalled_slot_is_reclaimed(squid_factory, scripted_origin):
    sq = squid_factory(sched=sched_conf(window="fixed 1", more="request_sched_slot_max_age 2 seconds"))
    stall = scripted_origin.add("/stall", STALL_HEAD, body=10_000, stall=True)
    nxt = scripted_origin.add("/next", SMALL_HEAD, body=2000)
    head_len = len(STALL_HEAD.replace("\n", "\r\n")) + 2

    bg = Background([lambda: http_get(sq.port, stall, timeout=60)])
    wait_until(lambda: scripted_origin.sent["/stall"] == head_len + 10_000 and sq.report().g("W") == 1,
               10, what="the stalled response to hold the slot")
    # queued behind the stalled response until its slot is 2 s old
    r = http_get(sq.port, nxt, timeout=30)
    assert r.ok and r.body_len == 2000, r
    rp = sq.report()
    assert rp.g("reclaimed") == 1, rp.text
    assert rp.g("released") == 2 and rp.g("W") == 0, rp.text
    assert re.search(r"request_sched_slot_max_age.*reclaimed|reclaimed.*request_sched_slot_max_age",
                     sq.cache_log()), sq.tail_logs()
    waited = [row for row in sq.access_log() if "/next" in row["url"]]
    assert len(waited) == 1 and int(waited[0]["wait_ms"]) > 0, waited

    # the stalled response still ends once: the origin gives up and closes
    scripted_origin.stopping.set()
    stalled = bg.join(20)[0]
    assert stalled.status == 200 and stalled.body_len == 10_000, stalled
    wait_until(lambda: sq.report().g("ended") == 2, 10, what="the stalled response to end")
    rp = sq.report()
    assert rp.g("W") == 0 and rp.g("long_transfers") == 0 and rp.g("reclaimed") == 1, rp.text
    assert rp.c("a", "bytes") == sum(scripted_origin.sent.values()), rp.text


GOOD_AGES = ["15 minutes", "1 second", "2.5 hours", "1 week"]
BAD_AGES = {
    "zero": "0 seconds",
    "negative": "-5 seconds",
    "nan": "nan seconds",
    "infinite": "inf seconds",
    "huge": "2 weeks",
    "overflow": "1e30 years",
    "unit-typo": "5 parsecs",
    "no-unit": "5",
    "no-value": "",
    "garbage": "soon",
}


def _conf_with(age: str) -> list:
    return GOOD + [f"request_sched_slot_max_age {age}".rstrip()]


@pytest.mark.parametrize("age", GOOD_AGES, ids=lambda a: a.replace(" ", "-"))
def test_parse_accepts_slot_max_age(age: str, workdir: Path, need_squid: None) -> None:
    conf, _ = write_conf(workdir, _conf_with(age), "good")
    parse_ok(conf)


@pytest.mark.parametrize("case", sorted(BAD_AGES))
def test_parse_rejects_bad_slot_max_age(case: str, workdir: Path, need_squid: None) -> None:
    bad = f"request_sched_slot_max_age {BAD_AGES[case]}".rstrip()
    conf, lines = write_conf(workdir, _conf_with(BAD_AGES[case]), "bad")
    n = line_no(lines, bad)
    p = h.Squid.run_parse(conf)
    assert p.returncode != 0, f"squid -k parse accepted {bad!r}:\n{p.stdout[-1500:]}"
    assert re.search(rf"(\bline {n}\b|\({n}\))", p.stdout), \
        f"error for {bad!r} does not name line {n}:\n{p.stdout[-1500:]}"
