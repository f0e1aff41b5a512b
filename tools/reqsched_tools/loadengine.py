# SPDX-License-Identifier: GPL-2.0-or-later
"""The load engine under reqsched-load: emulated users' HTTP/1.1 transactions
through a proxy, each user bound to its own source address, and the numbers an
operator reads (Avalanche-style: per-second transactions, bytes, active users,
errors and latency percentiles per class).

A transaction names what the origin (reqsched-origin) must answer in request
headers, so the URL stays the logged one and repeated URLs stay repeated:
  X-Reqsched-Size: body bytes     X-Reqsched-Status: status code
  X-Reqsched-Max-Age: S (cacheable for S s; without it the answer is no-store)
A CONNECT opens a tunnel to the origin's tunnel port and carries one response
of the transaction's size inside it (the logged bytes of a tunnel), then closes.

Outputs (write()):
  requests.csv   one row per transaction: id,user,class,addr,url,start,first_byte,
                 end,bytes,status,error (the columns of reqsched-replay's file, which
                 reqsched-report reads) then method,sched,conn,page,role,retried; times
                 in s since the start, -1 = never; sched = when it was due; retried = 1:
                 sent again on a new connection (run_one())
  class_bytes.csv  bytes received per class per second: bin_start,class,bytes
  persecond.csv  second,class,transactions,bytes,active_users,errors,p50_ms,p95_ms,
                 p99_ms,pages,page_p50_ms,page_p95_ms (class "all" too): transactions,
                 errors and latencies of the transactions that ended in that second,
                 bytes received in it, users active at any time of it, pages completed
                 in it and their load times
  pages.csv      one row per page load: page,user,class,start,end,load_ms,objects,
                 bytes,errors (sessions only)
"""
from __future__ import annotations

import asyncio
import base64
import csv
import math
import os
import signal
import sys
import time
from dataclasses import dataclass
from typing import Callable, Optional, Protocol

HEAD_LIMIT = 65536
LATENCY_PCTS = (50, 95, 99)
PAGE_PCTS = (50, 95)
PERSECOND_FIELDS = (["second", "class", "transactions", "bytes", "active_users", "errors"]
                    + [f"p{p}_ms" for p in LATENCY_PCTS] + ["pages"]
                    + [f"page_p{p}_ms" for p in PAGE_PCTS])


@dataclass
class Spec:
    """What to send and what the origin is asked to answer."""
    method: str
    url: str                       # absolute URL, or host:port for CONNECT
    size: int = 0                  # response body bytes
    status: int = 200
    body: int = 0                  # request body bytes (POST, PUT)
    max_age: int = 0               # > 0: cacheable for max_age s
    login: str = ""                # proxy login (Basic, with the engine's password)


@dataclass
class Txn:
    rid: str
    user: str
    cls: str
    addr: str
    method: str
    url: str
    sched: float                   # when it was due (s since the start)
    start: float = -1.0
    first_byte: float = -1.0
    end: float = -1.0
    bytes: int = 0
    status: int = 0
    error: str = ""
    conn: int = 0                  # the user's connection it went over (1, 2, ...)
    retried: bool = False          # sent again: the reused connection had been closed
    page: str = ""
    role: str = ""                 # main | embedded | "" (not part of a page)

    @property
    def ok(self) -> bool:
        return self.end >= 0 and not self.error

    @property
    def latency(self) -> float:
        return self.end - self.start


@dataclass
class Page:
    """A page load: its main object and embedded objects (sessions.py)."""
    pid: str
    user: str
    cls: str
    start: float
    end: float = -1.0
    objects: int = 0
    bytes: int = 0
    errors: int = 0


@dataclass
class Conn:
    """One keep-alive connection of a user to the proxy."""
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    id: int

    def close(self) -> None:
        self.writer.close()


def parse_head(head: bytes) -> tuple[int, str, dict[str, str]]:
    """(status, HTTP version, lower-cased headers) of a response head."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(None, 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise ValueError(f"bad status line {lines[0][:60]!r}")
    hdr = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        hdr[k.strip().lower()] = v.strip()
    return int(parts[1]), parts[0], hdr


async def read_body(reader: asyncio.StreamReader, n: Optional[int],
                    got: Callable[[int], None]) -> int:
    """Read n body bytes (None: until EOF); got(k) after each read. Returns bytes."""
    left, total = n, 0
    while left is None or left > 0:
        data = await reader.read(65536 if left is None else min(65536, left))
        if not data:
            if left is None:
                return total
            raise ConnectionError(f"connection closed with {left} body bytes missing")
        total += len(data)
        got(len(data))
        if left is not None:
            left -= len(data)
    return total


class Stoppable(Protocol):
    """An engine that SIGINT/SIGTERM stop early (stop_on_signals())."""
    interrupted: bool
    stop: asyncio.Event


def stop_on_signals(engine: Stoppable) -> None:
    """SIGINT and SIGTERM mark engine interrupted and set its stop event."""
    def interrupt() -> None:
        engine.interrupted = True
        engine.stop.set()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, interrupt)


class Metered(Protocol):
    """What metered() records on: a transaction's first-byte time and body bytes."""
    first_byte: float
    bytes: int


def metered(rec: Metered, now: Callable[[], float], account: Callable[[int], None]
            ) -> tuple[Callable[[int], None], Callable[[int], None]]:
    """read_response()'s callbacks for rec: the head sets its first_byte
    (once), the body adds to its bytes; every byte goes to account()."""
    def head(n: int) -> None:
        if rec.first_byte < 0:
            rec.first_byte = now()
        account(n)

    def body(n: int) -> None:
        rec.bytes += n
        account(n)
    return head, body


async def read_response(reader: asyncio.StreamReader, method: str,
                        got_head: Callable[[int], None],
                        got_body: Callable[[int], None]) -> tuple[int, int, bool]:
    """One HTTP/1.1 response: (status, body bytes, connection reusable).
    got_head(n) with the head's size, got_body(k) per body read; chunk framing
    counts as head bytes."""
    head = await reader.readuntil(b"\r\n\r\n")
    got_head(len(head))
    status, version, hdr = parse_head(head)
    keep = "close" not in hdr.get("connection", "").lower() and version == "HTTP/1.1"
    body = 0
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        pass
    elif "chunked" in hdr.get("transfer-encoding", "").lower():
        while True:
            line = await reader.readuntil(b"\r\n")
            got_head(len(line))
            n = int(line.split(b";")[0].strip() or b"0", 16)
            if n == 0:
                trailer = await reader.readuntil(b"\r\n")
                while trailer != b"\r\n":
                    trailer = await reader.readuntil(b"\r\n")
                break
            body += await read_body(reader, n, got_body)
            got_head(len(await reader.readexactly(2)))
    elif "content-length" in hdr:
        body = await read_body(reader, int(hdr["content-length"]), got_body)
    else:
        keep = False
        body = await read_body(reader, None, got_body)
    return status, body, keep


def origin_headers(spec: Spec) -> str:
    h = f"X-Reqsched-Size: {spec.size}\r\nX-Reqsched-Status: {spec.status}\r\n"
    if spec.max_age > 0:
        h += f"X-Reqsched-Max-Age: {spec.max_age}\r\n"
    return h


def fmt_ms(v: float) -> str:
    return "" if math.isnan(v) else f"{v:.1f}"


def percentile(xs: list[float], p: float) -> float:
    """Nearest-rank percentile of xs (sorted or not); nan if empty."""
    if not xs:
        return math.nan
    s = sorted(xs)
    return s[max(0, min(len(s) - 1, math.ceil(p / 100.0 * len(s)) - 1))]


class Engine:
    """Transactions through one proxy, their records and the run's clock."""

    def __init__(self, proxy: tuple[str, int], timeout: float, progress_s: float = 5.0,
                 password: Optional[str] = None):
        self.proxy = proxy
        self.password = password       # None: no Proxy-Authorization at all
        self.timeout = timeout
        self.progress_s = progress_s
        self.txns: list[Txn] = []
        self.bins: dict[str, dict[int, int]] = {}
        self.spans: list[tuple[str, float, float]] = []   # (class, first, last) per user
        self.pages: list[Page] = []
        self.users: dict[str, dict[str, str]] = {}        # id -> id, class, addr
        self.active: dict[str, int] = {}
        self.t0 = time.monotonic()
        self.t0_epoch = time.time()
        self.stop = asyncio.Event()
        self.interrupted = False
        self.elapsed = 0.0                                 # the run's length (run())
        self.progress_sink: Optional[Callable[[dict], None]] = None

    def now(self) -> float:
        return time.monotonic() - self.t0

    def account(self, cls: str, n: int) -> None:
        d = self.bins.setdefault(cls, {})
        b = int(self.now())
        d[b] = d.get(b, 0) + n

    def enter(self, uid: str, cls: str, addr: str) -> float:
        """A user becomes active; returns the time for leave()."""
        self.users.setdefault(uid, {"id": uid, "class": cls, "addr": addr})
        self.active[cls] = self.active.get(cls, 0) + 1
        return self.now()

    def leave(self, cls: str, since: float) -> None:
        self.active[cls] -= 1
        self.spans.append((cls, since, self.now()))

    async def sleep(self, s: float) -> None:
        """Sleep s seconds, or less if the run is stopped."""
        try:
            await asyncio.wait_for(self.stop.wait(), max(0.0, s))
        except asyncio.TimeoutError:
            pass

    async def connect(self, addr: str, cid: int) -> Conn:
        reader, writer = await asyncio.open_connection(
            self.proxy[0], self.proxy[1], local_addr=(addr, 0), limit=HEAD_LIMIT)
        return Conn(reader, writer, cid)

    async def transact(self, conn: Conn, t: Txn, spec: Spec) -> bool:
        """Send spec on conn and read the answer into t. Returns whether conn can
        carry the next request."""
        head, body = metered(t, self.now, lambda n: self.account(t.cls, n))

        w = conn.writer
        auth = ""
        if spec.login and self.password is not None:
            cred = base64.b64encode(f"{spec.login}:{self.password}".encode()).decode()
            auth = f"Proxy-Authorization: Basic {cred}\r\n"
        if spec.method == "CONNECT":
            w.write((f"CONNECT {spec.url} HTTP/1.1\r\nHost: {spec.url}\r\n{auth}"
                     f"User-Agent: reqsched-load\r\nX-Replay-Id: {t.rid}\r\n\r\n").encode("latin-1"))
            await w.drain()
            h = await conn.reader.readuntil(b"\r\n\r\n")
            head(len(h))
            t.status = parse_head(h)[0]
            if t.status != 200:
                raise ConnectionError(f"CONNECT {spec.url}: status {t.status}")
            w.write((f"GET /tunnel HTTP/1.1\r\nHost: {spec.url}\r\n{origin_headers(spec)}"
                     "Connection: close\r\n\r\n").encode("latin-1"))
            await w.drain()
            await read_response(conn.reader, "GET", head, body)
            return False
        host = spec.url.split("/", 3)[2]
        extra = f"Content-Length: {spec.body}\r\n" if spec.body or spec.method == "POST" else ""
        w.write((f"{spec.method} {spec.url} HTTP/1.1\r\nHost: {host}\r\n{auth}"
                 f"User-Agent: reqsched-load\r\nX-Replay-Id: {t.rid}\r\nAccept: */*\r\n"
                 f"{origin_headers(spec)}{extra}\r\n").encode("latin-1"))
        if spec.body:
            block = b"p" * min(spec.body, 65536)
            left = spec.body
            while left > 0:
                w.write(block[:left])
                left -= len(block)
                await w.drain()
        await w.drain()
        t.status, _, keep = await read_response(conn.reader, spec.method, head, body)
        return keep

    async def run_one(self, conn: Optional[Conn], addr: str, new_id: Callable[[], int],
                      t: Txn, spec: Spec) -> Optional[Conn]:
        """One transaction on conn (or a new connection numbered new_id()),
        recorded in self.txns. Returns the connection if it stays usable. If a
        reused keep-alive connection turns out closed by the proxy before any byte
        of the answer (the proxy's idle timeout raced the request), the request
        is sent again once on a new connection, as a browser does."""
        self.txns.append(t)
        t.start = self.now()
        reused = conn is not None
        while True:
            try:
                if conn is None:
                    conn = await asyncio.wait_for(self.connect(addr, new_id()), self.timeout)
                t.conn = conn.id
                keep = await asyncio.wait_for(self.transact(conn, t, spec), self.timeout)
                t.end = self.now()
                break
            except asyncio.CancelledError:
                t.error = t.error or "cancelled at end of run"
                if conn is not None:
                    conn.close()
                raise
            except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                    asyncio.TimeoutError) as e:
                if conn is not None:
                    conn.close()
                    conn = None
                stale = isinstance(e, (asyncio.IncompleteReadError, ConnectionError))
                if reused and stale and t.first_byte < 0:
                    reused = False
                    t.retried = True
                    continue
                t.error = (type(e).__name__ + ": " + str(e))[:120].replace(",", ";")
                t.end = self.now()
                return None
        if not keep:
            conn.close()
            return None
        return conn

    def progress_counts(self) -> dict:
        """What a progress line shows, as counts since the start (t: now)."""
        return {"t": self.now(), "active": dict(self.active), "started": len(self.txns),
                "done": sum(1 for t in self.txns if t.end >= 0),
                "errors": sum(1 for t in self.txns if t.error),
                "bytes": sum(sum(d.values()) for d in self.bins.values())}

    async def progress(self) -> None:
        """Every progress_s: a progress line to stderr, or the counts to
        progress_sink (a worker of reqsched-load --procs)."""
        last = {"t": 0.0, "done": 0, "bytes": 0}
        while not self.stop.is_set():
            await self.sleep(self.progress_s)
            cur = self.progress_counts()
            if self.progress_sink is not None:
                self.progress_sink(cur)
            else:
                print(format_progress(cur, last), file=sys.stderr, flush=True)
            last = cur

    async def run(self, tasks: list, duration: float) -> None:
        """Run the user tasks (coroutines) until they end or duration passes
        (SIGINT/SIGTERM stop early); in-flight transactions are cut at the end."""
        stop_on_signals(self)
        self.t0 = time.monotonic()
        self.t0_epoch = time.time()
        running = [asyncio.create_task(c) for c in tasks]
        prog = asyncio.create_task(self.progress())
        done_all = asyncio.ensure_future(asyncio.gather(*running, return_exceptions=True))
        await asyncio.wait([done_all, asyncio.ensure_future(self.stop.wait())],
                           timeout=duration, return_when=asyncio.FIRST_COMPLETED)
        self.stop.set()
        self.elapsed = self.now()
        await asyncio.sleep(0)
        for t in running:
            t.cancel()
        await asyncio.gather(done_all, prog, return_exceptions=True)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)

    # -- outputs ---------------------------------------------------------------
    def per_second(self) -> list[dict]:
        """The rows of persecond.csv."""
        classes = sorted({t.cls for t in self.txns} | set(self.bins) | {s[0] for s in self.spans})
        last = max([int(t.end) for t in self.txns if t.end >= 0] +
                   [int(s[2]) for s in self.spans] + [b for d in self.bins.values() for b in d]
                   + [0])
        ended: dict[int, list[Txn]] = {}
        for t in self.txns:
            if t.end >= 0:
                ended.setdefault(int(t.end), []).append(t)
        pages_ended: dict[int, list[Page]] = {}
        for pg in self.pages:
            if pg.end >= 0:
                pages_ended.setdefault(int(pg.end), []).append(pg)
        active: dict[tuple[int, str], int] = {}
        for c, a, b in self.spans:
            for sec in range(int(a), int(b) + 1):
                for k in ((sec, c), (sec, "all")):
                    active[k] = active.get(k, 0) + 1
        rows = []
        for sec in range(last + 1):
            for cls in classes + ["all"]:
                mine = [t for t in ended.get(sec, []) if cls in ("all", t.cls)]
                lat = [t.latency * 1000 for t in mine if t.ok]
                row = {"second": sec, "class": cls, "transactions": len(mine),
                       "bytes": sum(d.get(sec, 0) for c, d in self.bins.items()
                                    if cls in ("all", c)),
                       "active_users": active.get((sec, cls), 0),
                       "errors": sum(1 for t in mine if t.error)}
                for p in LATENCY_PCTS:
                    row[f"p{p}_ms"] = fmt_ms(percentile(lat, p))
                pl = [(pg.end - pg.start) * 1000 for pg in pages_ended.get(sec, [])
                      if cls in ("all", pg.cls)]
                row["pages"] = len(pl)
                for p in PAGE_PCTS:
                    row[f"page_p{p}_ms"] = fmt_ms(percentile(pl, p))
                rows.append(row)
        return rows

    def write(self, out: str) -> None:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "requests.csv"), "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["id", "user", "class", "addr", "url", "start", "first_byte", "end",
                        "bytes", "status", "error", "method", "sched", "conn", "page", "role",
                        "retried"])
            for t in self.txns:
                w.writerow([t.rid, t.user, t.cls, t.addr, t.url, f"{t.start:.4f}",
                            f"{t.first_byte:.4f}", f"{t.end:.4f}", t.bytes, t.status, t.error,
                            t.method, f"{t.sched:.4f}", t.conn, t.page, t.role, int(t.retried)])
        with open(os.path.join(out, "class_bytes.csv"), "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["bin_start", "class", "bytes"])
            for cls, d in sorted(self.bins.items()):
                for b in sorted(d):
                    w.writerow([f"{b:.3f}", cls, d[b]])
        rows = self.per_second()
        with open(os.path.join(out, "persecond.csv"), "w", newline="", encoding="utf-8") as f:
            w2 = csv.DictWriter(f, fieldnames=PERSECOND_FIELDS)
            w2.writeheader()
            w2.writerows(rows)
        if self.pages:
            with open(os.path.join(out, "pages.csv"), "w", newline="", encoding="utf-8") as f:
                w = csv.writer(f)
                w.writerow(["page", "user", "class", "start", "end", "load_ms", "objects",
                            "bytes", "errors"])
                for pg in self.pages:
                    w.writerow([pg.pid, pg.user, pg.cls, f"{pg.start:.4f}", f"{pg.end:.4f}",
                                f"{(pg.end - pg.start) * 1000:.1f}" if pg.end >= 0 else "",
                                pg.objects, pg.bytes, pg.errors])

    def report(self) -> dict[str, dict]:
        """Per class (and "all"): transactions, errors, object latency and page
        load time percentiles in ms, pages."""
        out: dict[str, dict] = {}
        for cls in sorted({t.cls for t in self.txns}) + ["all"]:
            ts = [t for t in self.txns if cls in ("all", t.cls)]
            lat = [t.latency * 1000 for t in ts if t.ok]
            pl = [(p.end - p.start) * 1000 for p in self.pages
                  if p.end >= 0 and cls in ("all", p.cls)]
            r: dict[str, Optional[float]] = {
                "transactions": len(ts), "errors": sum(1 for t in ts if t.error),
                "bytes": sum(t.bytes for t in ts), "pages": len(pl)}
            r |= {f"object_p{p}_ms": rounded(percentile(lat, p)) for p in (50, 95)}
            r |= {f"page_p{p}_ms": rounded(percentile(pl, p)) for p in PAGE_PCTS}
            out[cls] = r
        return out


def rounded(v: float) -> Optional[float]:
    """v to 0.1 (None for nan: no sample), for JSON."""
    return None if math.isnan(v) else round(v, 1)


def format_progress(cur: dict, last: dict) -> str:
    """The progress line of counts cur (Engine.progress_counts(), or their
    sums over processes), rates since the counts last."""
    dt = max(cur["t"] - last["t"], 1e-6)
    users = " ".join(f"{c}={n}" for c, n in sorted(cur["active"].items()))
    return (f"load: t={cur['t']:6.1f}s users {users or '-'} started={cur['started']} "
            f"done={cur['done']} errors={cur['errors']} {(cur['done'] - last['done']) / dt:.1f} "
            f"tx/s {(cur['bytes'] - last['bytes']) * 8 / dt / 1e6:.2f} Mbit/s")


def format_report(rep: dict[str, dict]) -> str:
    def two(r: dict, key: str) -> str:
        a, b = (r[f"{key}_p{p}_ms"] for p in (50, 95))
        return "-" if a is None else f"{a:.0f}/{b:.0f}"
    lines = [f"{'class':<12} {'transactions':>12} {'errors':>7} {'MB':>9} "
             f"{'object p50/p95 ms':>18} {'pages':>6} {'page load p50/p95 ms':>21}"]
    for cls, r in rep.items():
        lines.append(f"{cls:<12} {r['transactions']:>12} {r['errors']:>7} "
                     f"{r['bytes'] / 1e6:>9.2f} {two(r, 'object'):>18} {r['pages']:>6} "
                     f"{two(r, 'page'):>21}")
    return "\n".join(lines)
