# SPDX-License-Identifier: GPL-2.0-or-later
"""Parsers for the logs the testbed reads. Malformed lines are skipped and
counted, never fatal.

- Squid native access.log (the replay input):
    time elapsed client code/status bytes method URL ident hierarchy/peer type
  (time is when Squid logged the transaction, its end: the request started
  elapsed ms earlier). CONNECT lines carry host:port instead of a URL.
- Common and Combined log format (Apache's, and Squid's "common" and
  "combined" logformats, which append " code:hierarchy"):
    client ident user [dd/Mon/yyyy:HH:MM:SS +zone] "METHOD URL HTTP/v" status bytes
    [ "referer" "user-agent"] [code:hierarchy]
  (bytes "-" = 0). The time, to the second, is taken as the request's start:
  Apache logs the request's arrival; Squid logs when the transaction ended
  (squid_curtime in Format.cc) and the format has no duration to subtract.
- the testbed's own Squid log format (logformat reqsched, see squidconf.py):
    time elapsed client code/status bytes method URL replay_id class wait_ms
- plain URL lists: "URL [SIZE]" per line, '#' comments.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime
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
    login: str = "-"

    @property
    def start(self) -> float:
        """When the request started (epoch s)."""
        return self.time - self.elapsed_ms / 1000.0


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


def is_target(method: str, url: str) -> bool:
    """An http(s) URL, or host:port for CONNECT."""
    if method == "CONNECT":
        host, _, port = url.rpartition(":")
        return bool(host) and port.isdigit() and "/" not in url
    return url.startswith(("http://", "https://"))


def _native(f: list[str]) -> Optional[LogEntry]:
    """One native line's fields as an entry (ValueError on bad numbers; None
    if the target is not an http URL or CONNECT's host:port)."""
    t = float(f[0])
    elapsed = int(f[1])
    code, _, st = f[3].partition("/")
    status = int(st) if st else 0
    size = int(f[4])
    why = _problem(t, elapsed, status, size)
    if why:
        raise ValueError(why)
    if not is_target(f[5], f[6]):
        return None
    return LogEntry(t, elapsed, f[2], code, status, size, f[5], f[6],
                    f[7] if len(f) > 7 else "-")


def parse_native_access_log(src: Iterable[str], stats: ParseStats) -> list[LogEntry]:
    """Squid's native access.log format. http(s) URLs and CONNECT host:port are
    kept; other lines count as skipped."""
    out = []
    for n, line in _lines(src):
        stats.lines += 1
        f = line.split()
        if len(f) < 7:
            stats.bad(n, f"{len(f)} fields, need >= 7")
            continue
        try:
            e = _native(f)
        except ValueError as err:
            stats.bad(n, f"bad number: {err}")
            continue
        if e is None:
            stats.bad(n, f"not an http URL: {f[6][:60]!r}")
            continue
        out.append(e)
        stats.parsed += 1
    return out


CLF = re.compile(r'(\S+) (\S+) (\S+) \[([^\]]+)\] "([^"]*)" (\d{3}|-) (\d+|-)'
                 r'(?: "(?:[^"\\]|\\.)*" "(?:[^"\\]|\\.)*")?(?: ([A-Z_]+):(\S+))?$')


def _clf(line: str) -> Optional[LogEntry]:
    """One Common/Combined line as an entry; None if it is not one (ValueError
    on a bad date)."""
    m = CLF.match(line)
    if not m:
        return None
    req = m.group(5).split()
    if len(req) not in (2, 3):
        return None
    method, url = req[0], req[1]
    if not is_target(method, url):
        return None
    t = datetime.strptime(m.group(4), "%d/%b/%Y:%H:%M:%S %z").timestamp()
    status = 0 if m.group(6) == "-" else int(m.group(6))
    size = 0 if m.group(7) == "-" else int(m.group(7))
    why = _problem(t, 0, status, size)
    if why:
        raise ValueError(why)
    return LogEntry(t, 0, m.group(1), m.group(8) or "-", status, size, method, url,
                    m.group(3))


def parse_access_log(src: Iterable[str], stats: ParseStats, fmt: str = "auto") -> list[LogEntry]:
    """Squid native ("native"), Common/Combined ("common"; both) or either line
    by line ("auto"). Lines of neither format are counted and skipped."""
    if fmt not in ("auto", "native", "common"):
        raise ValueError(f"unknown log format {fmt!r} (auto, native, common)")
    out = []
    for n, line in _lines(src):
        stats.lines += 1
        e: Optional[LogEntry] = None
        why = "neither native nor common/combined format"
        try:
            if fmt != "native" and "[" in line and '"' in line:
                e = _clf(line)
            if e is None and fmt != "common":
                f = line.split()
                if len(f) >= 7:
                    e = _native(f)
        except ValueError as err:
            why = f"bad value: {err}"
        if e is None:
            stats.bad(n, f"{why}: {line[:60]!r}")
            continue
        out.append(e)
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
                                f[5], f[6], replay_id=f[7], cls=f[8], wait_ms=wait)
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
