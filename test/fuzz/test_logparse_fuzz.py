# SPDX-License-Identifier: GPL-2.0-or-later
"""Fuzzing the log parsers of the replay tool and the reports
(tools/reqsched_tools/logparse.py) with Hypothesis.

Lines are drawn from field-shaped pieces (numbers of every kind Python's
float() and int() accept, status codes, URLs, notes) and from arbitrary text.
Whatever the input: no exception; every line is counted once, as parsed or
skipped; every entry kept is sane (finite, non-negative times and sizes, an
HTTP status of 0 or 100..999, an http(s) URL where the parser keeps only those). Each finding is pinned below
as an explicit example (a regression test that runs every time).

RS_HYPOTHESIS_EXAMPLES sets the number of examples per property (make
check-fuzz: 100; make fuzz: 3,000).
"""
from __future__ import annotations

import io
import math
import os

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from reqsched_tools import logparse

EXAMPLES = int(os.environ.get("RS_HYPOTHESIS_EXAMPLES", "300"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

NUMBERS = st.one_of(
    st.integers(min_value=-10**20, max_value=10**20).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "NaN", "inf", "-inf", "Infinity", "1e999", "-0", "0x10", "1_000",
                     "\u0661\u0662", "\uff11", " 1", "+5", "1e-400", "-", ""]),
)
CODES = st.builds(lambda c, s: f"{c}/{s}", st.sampled_from(["TCP_MISS", "TCP_HIT", "NONE", ""]),
                  NUMBERS)
URLS = st.one_of(st.sampled_from(["http://a/", "https://b.example/x?y=1", "http://", "ftp://c/",
                                  "example.com:443", "-"]),
                 st.text(min_size=1, max_size=30).map(lambda t: "http://h/" + t))
WORDS = st.text(alphabet=st.characters(blacklist_categories=("Zs", "Cc")), min_size=1, max_size=12)


def _fields(draw_fields: list[str]) -> str:
    return " ".join(f.replace("\n", "").replace("\r", "") or "-" for f in draw_fields)


NATIVE_LINE = st.builds(lambda t, e, c, code, b, m, u, rest: _fields([t, e, c, code, b, m, u] + rest),
                        NUMBERS, NUMBERS, WORDS, CODES, NUMBERS, WORDS, URLS,
                        st.lists(WORDS, max_size=4))
TESTBED_LINE = st.builds(lambda t, e, c, code, b, m, u, rid, cls, w: _fields([t, e, c, code, b, m, u, rid, cls, w]),
                         NUMBERS, NUMBERS, WORDS, CODES, NUMBERS, WORDS, URLS, WORDS, WORDS, NUMBERS)
URL_LINE = st.builds(lambda u, rest: _fields([u] + rest), URLS, st.lists(NUMBERS, max_size=2))


def logs(line: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(st.one_of(line, st.text(max_size=80)), max_size=20).map("\n".join)


def _sane(e: logparse.LogEntry) -> None:
    assert math.isfinite(e.time) and e.time >= 0, e
    assert e.elapsed_ms >= 0 and e.bytes >= 0, e
    assert e.status == 0 or 100 <= e.status <= 999, e


def _counted(st_: logparse.ParseStats, n: int) -> None:
    assert st_.lines == st_.parsed + st_.skipped
    assert st_.parsed == n


@SETTINGS
@given(logs(NATIVE_LINE))
@example("nan 1 c TCP_MISS/200 5 GET http://a/")            # non-finite time
@example("1e999 1 c TCP_MISS/200 5 GET http://a/")
@example("-5 1 c TCP_MISS/200 5 GET http://a/")             # negative time
@example("1 1 c TCP_MISS/-200 5 GET http://a/")             # status out of range
@example("1 1 c TCP_MISS/99999 5 GET http://a/")
def test_native_access_log(text: str) -> None:
    stats = logparse.ParseStats()
    out = logparse.parse_native_access_log(io.StringIO(text), stats)
    _counted(stats, len(out))
    for e in out:
        _sane(e)
        assert e.url.startswith(("http://", "https://")), e


@SETTINGS
@given(logs(TESTBED_LINE))
@example("inf 1 c TCP_MISS/200 5 GET http://a/ r gold 3")   # non-finite time
@example("1 -7 c TCP_MISS/200 5 GET http://a/ r gold 3")    # negative elapsed
@example("1 1 c TCP_MISS/200 -5 GET http://a/ r gold 3")    # negative size
@example("1 1 c TCP_MISS/200 5 GET http://a/ r gold -3")    # negative wait
def test_testbed_access_log(text: str) -> None:
    stats = logparse.ParseStats()
    out = logparse.parse_testbed_access_log(io.StringIO(text), stats)
    _counted(stats, len(out))
    for e in out:
        _sane(e)
        assert e.wait_ms is None or e.wait_ms >= 0, e


@SETTINGS
@given(logs(URL_LINE))
def test_url_list(text: str) -> None:
    stats = logparse.ParseStats()
    out = logparse.parse_url_list(io.StringIO(text), stats)
    _counted(stats, len(out))
    for url, size in out:
        assert url.startswith(("http://", "https://")) and (size is None or size >= 0)
