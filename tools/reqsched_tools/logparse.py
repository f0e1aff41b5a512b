# SPDX-License-Identifier: GPL-2.0-or-later
"""Parsers for the logs the testbed reads. Malformed lines are skipped and
counted, never fatal.

- Squid native access.log (the replay input):
    time elapsed client code/status bytes method URL ident hierarchy/peer type
- the testbed's own Squid log format (logformat reqsched, see squidconf.py):
    time elapsed client code/status bytes method URL replay_id class wait_ms
- plain URL lists: "URL [SIZE]" per line, '#' comments.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Optional, TextIO


@dataclass
class ParseStats:
    lines: int = 0
    parsed: int = 0
    skipped: int = 0
    first_errors: list[str] = field(default_factory=list)

    def bad(self, lineno: int, why: str) -> None:
        self.skipped += 1
        if len(self.first_errors) < 5:
            self.first_errors.append(f"line {lineno}: {why}")


@dataclass
class LogEntry:
    time: float
    elapsed_ms: int
    client: str
    code: str
    status: int
    bytes: int
    method: str
    url: str


def _problem(t: float, elapsed: int, status: int, size: int) -> str:
    """Why numbers that parsed cannot be a logged transaction ('' if they can):
    Python's float() and int() also take nan, inf and negative values."""
    if not math.isfinite(t) or t < 0:
        return f"bad time {t!r}"
    if elapsed < 0 or size < 0:
        return "negative elapsed time or size"
    if status != 0 and not 100 <= status <= 999:
        return f"bad HTTP status {status}"
    return ""


def _lines(src: Iterable[str]) -> Iterable[tuple[int, str]]:
    for n, line in enumerate(src, 1):
        line = line.strip()
        if line and not line.startswith("#"):
            yield n, line


def parse_native_access_log(src: Iterable[str], stats: ParseStats) -> list[LogEntry]:
    """Squid's native access.log format. Only http(s) URLs are kept; CONNECT and
    other lines without a URL of that form count as skipped."""
    out = []
    for n, line in _lines(src):
        stats.lines += 1
        f = line.split()
        if len(f) < 7:
            stats.bad(n, f"{len(f)} fields, need >= 7")
            continue
        try:
            t = float(f[0])
            elapsed = int(f[1])
            code, _, st = f[3].partition("/")
            status = int(st) if st else 0
            size = int(f[4])
        except ValueError as e:
            stats.bad(n, f"bad number: {e}")
            continue
        url = f[6]
        why = _problem(t, elapsed, status, size)
        if why:
            stats.bad(n, why)
            continue
        if not url.startswith(("http://", "https://")):
            stats.bad(n, f"not an http URL: {url[:60]!r}")
            continue
        out.append(LogEntry(t, elapsed, f[2], code, status, size, f[5], url))
        stats.parsed += 1
    return out


@dataclass
class TestbedLogEntry(LogEntry):
    replay_id: str = "-"
    cls: str = "-"
    wait_ms: Optional[int] = None


def parse_testbed_access_log(src: Iterable[str], stats: ParseStats) -> list[TestbedLogEntry]:
    """The 'reqsched' logformat written by the testbed's squid.conf."""
    out = []
    for n, line in _lines(src):
        stats.lines += 1
        f = line.split()
        if len(f) != 10:
            stats.bad(n, f"{len(f)} fields, need 10")
            continue
        try:
            code, _, st = f[3].partition("/")
            wait = None if f[9] in ("-", "") else int(f[9])
            e = TestbedLogEntry(float(f[0]), int(f[1]), f[2], code, int(st or 0), int(f[4]),
                                f[5], f[6], f[7], f[8], wait)
        except ValueError as err:
            stats.bad(n, f"bad number: {err}")
            continue
        why = _problem(e.time, e.elapsed_ms, e.status, e.bytes) or \
            ("negative wait" if wait is not None and wait < 0 else "")
        if why:
            stats.bad(n, why)
            continue
        out.append(e)
        stats.parsed += 1
    return out


def parse_url_list(src: Iterable[str], stats: ParseStats) -> list[tuple[str, Optional[int]]]:
    """'URL [SIZE]' per line."""
    out: list[tuple[str, Optional[int]]] = []
    for n, line in _lines(src):
        stats.lines += 1
        f = line.split()
        if not f[0].startswith(("http://", "https://")) or len(f) > 2:
            stats.bad(n, f"not 'URL [SIZE]': {line[:60]!r}")
            continue
        size = None
        if len(f) == 2:
            try:
                size = int(f[1])
            except ValueError:
                stats.bad(n, f"bad size {f[1][:20]!r}")
                continue
            if size < 0:
                stats.bad(n, "negative size")
                continue
        out.append((f[0], size))
        stats.parsed += 1
    return out


def open_text(path: str) -> TextIO:
    return open(path, encoding="utf-8", errors="replace")
