# SPDX-License-Identifier: GPL-2.0-or-later
"""Avalanche-style load through a proxy: emulated users, each bound to its own
source address, fetching URLs backlogged (N parallel connections per user) or
with exponential think times, during optional on/off phases.

A user with "tunnel": true sends its requests inside CONNECT tunnels, as a
browser does for https: CONNECT server:443, then requests_per_tunnel requests
(plain HTTP, origin-form) to that server through the tunnel, then a new tunnel.
The first request of a tunnel's latency includes the CONNECT. Each user may
have its own size distribution ("sizes": {"mu", "sigma"} lognormal or
{"uniform": [lo, hi]}, "max": cap).

Outputs (in --out DIR):
  requests.csv      one row per request: id,user,class,addr,url,start,first_byte,end,
                    bytes,status,error (times in s since the replay start; -1 = never)
  class_bytes.csv   bytes received per class per --bin-s interval (all bytes read,
                    status lines and headers included): bin_start,class,bytes
  replay.json       summary: start epoch, counts, parse statistics
"""
from __future__ import annotations

import argparse
import asyncio
import csv
import hashlib
import json
import os
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Optional, Sequence
from urllib.parse import urlsplit

from . import logparse
from .loadengine import HEAD_LIMIT, metered, parse_head, read_response, stop_on_signals

TUNNEL_PORT = 443


@dataclass
class SizeDist:
    """A user's response sizes: lognormal(mu, sigma) or uniform [lo, hi], capped."""
    mu: float = 9.357
    sigma: float = 1.318
    uniform: Optional[tuple[float, float]] = None
    max: int = 100_000_000

    def draw(self, rng: random.Random) -> int:
        if self.uniform:
            x = rng.uniform(self.uniform[0], self.uniform[1])
        else:
            x = rng.lognormvariate(self.mu, self.sigma)
        return max(1, min(self.max, 100_000_000, int(x)))

    @staticmethod
    def from_json(d: Optional[dict], mu: float, sigma: float) -> "SizeDist":
        d = d or {}
        u = d.get("uniform")
        return SizeDist(mu=float(d.get("mu", mu)) if d.get("mu") is not None else mu,
                        sigma=float(d.get("sigma", sigma)) if d.get("sigma") is not None
                        else sigma,
                        uniform=(float(u[0]), float(u[1])) if u else None,
                        max=int(d.get("max", 100_000_000)))


@dataclass
class User:
    id: str
    cls: str
    addr: str
    pattern: str = "backlogged"
    parallel: int = 1
    think_s: float = 5.0
    phases: list[tuple[float, float]] = field(default_factory=list)
    sizes: Optional[SizeDist] = None     # None: the replay's --mu/--sigma
    tunnel: bool = False
    requests_per_tunnel: int = 6


@dataclass
class Record:
    rid: str
    user: str
    cls: str
    addr: str
    url: str
    start: float
    first_byte: float = -1.0
    end: float = -1.0
    bytes: int = 0
    status: int = 0
    error: str = ""


class UrlSource:
    """Per-user deterministic URL sequences."""

    def __init__(self, servers: list[str], mu: float, sigma: float, seed: int,
                 entries: Optional[Sequence[tuple[str, Optional[int]]]] = None):
        self.servers = servers
        self.mu, self.sigma, self.seed = mu, sigma, seed
        self.entries = entries

    def sequence(self, user_index: int, n_users: int, user_id: str,
                 sizes: Optional[SizeDist] = None):
        if self.entries:
            i = user_index % len(self.entries)
            while True:
                yield self.entries[i][0]
                i = (i + n_users) % len(self.entries)
        dist = sizes or SizeDist(self.mu, self.sigma)
        rng = random.Random(f"{self.seed}/{user_id}")
        seq = 0
        while True:
            seq += 1
            size = dist.draw(rng)
            server = self.servers[rng.randrange(len(self.servers))]
            yield f"http://{server}/obj/{user_id}/{seq}?size={size}"


def tunnel_path(url: str) -> str:
    """The origin-form target of an absolute URL ('/path?query')."""
    p = urlsplit(url)
    return (p.path or "/") + (f"?{p.query}" if p.query else "")


def tunnel_status(head: bytes) -> int:
    """The status code of a CONNECT answer's head (0 if it is not HTTP)."""
    try:
        return parse_head(head)[0]
    except ValueError:
        return 0


def server_for_host(host: str, servers: list[str]) -> str:
    h = int.from_bytes(hashlib.sha1(host.encode()).digest()[:4], "big")
    return servers[h % len(servers)]


def rewrite_entries(entries: list[tuple[str, Optional[int]]], servers: list[str],
                    default_size: int = 27656) -> list[tuple[str, int]]:
    """Point logged URLs at the testbed servers (one server per original host),
    keeping path and query. https URLs become http."""
    out = []
    for url, size in entries:
        parts = urlsplit(url)
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        path = path.replace(" ", "%20")
        host = server_for_host(parts.hostname or "", servers)
        out.append((f"http://{host}{path}", size if size is not None else default_size))
    return out


def load_entries(access_log: Optional[str], url_list: Optional[str], servers: list[str],
                 stats: logparse.ParseStats) -> Optional[list[tuple[str, int]]]:
    """Read a Squid native access.log or a URL list and rewrite it to the servers."""
    raw: list[tuple[str, Optional[int]]]
    if access_log:
        with logparse.open_text(access_log) as f:
            raw = [(e.url, e.bytes) for e in logparse.parse_native_access_log(f, stats)
                   if e.method in ("GET", "HEAD")]
    elif url_list:
        with logparse.open_text(url_list) as f:
            raw = logparse.parse_url_list(f, stats)
    else:
        return None
    if not raw:
        raise ValueError(f"{access_log or url_list}: no usable URL (skipped {stats.skipped} lines)")
    return rewrite_entries(raw, servers)


def write_size_map(entries: Sequence[tuple[str, Optional[int]]], path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for url, size in entries:
            f.write(f"{url} {size if size is not None else 27656}\n")


def parse_addr_range(text: str) -> list[str]:
    """'10.20.0.1-12' -> ['10.20.0.1', ..., '10.20.0.12']; 'a,b' -> ['a', 'b']."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if "-" in part:
            base, _, hi = part.rpartition("-")
            prefix, _, lo = base.rpartition(".")
            out += [f"{prefix}.{i}" for i in range(int(lo), int(hi) + 1)]
        elif part:
            out.append(part)
    if not out:
        raise ValueError(f"no address in {text!r}")
    return out


class Replay:
    def __init__(self, users: list[User], proxy: tuple[str, int], source: UrlSource,
                 duration: float, max_requests: int, timeout: float, bin_s: float,
                 seed: int, progress_s: float = 5.0):
        self.users = users
        self.proxy = proxy
        self.source = source
        self.duration = duration
        self.max_requests = max_requests
        self.timeout = timeout
        self.bin_s = bin_s
        self.progress_s = progress_s
        self.seed = seed
        self.records: list[Record] = []
        self.started = 0
        self.bins: dict[str, dict[int, int]] = {u.cls: {} for u in users}
        self.t0 = 0.0
        self.t0_epoch = 0.0
        self.stop = asyncio.Event()
        self.interrupted = False

    def now(self) -> float:
        return time.monotonic() - self.t0

    def account(self, cls: str, n: int) -> None:
        b = int(self.now() / self.bin_s)
        d = self.bins[cls]
        d[b] = d.get(b, 0) + n

    async def open_tunnel(self, conn: list, user: User, host: str, rec: Record) -> None:
        """CONNECT host:443 through the proxy; conn becomes [reader, writer, host, 0]."""
        reader, writer = await asyncio.open_connection(
            self.proxy[0], self.proxy[1], local_addr=(user.addr, 0), limit=HEAD_LIMIT)
        conn[0], conn[1] = reader, writer
        target = f"{host}:{TUNNEL_PORT}"
        writer.write((f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n"
                      f"User-Agent: reqsched-replay\r\nX-Replay-Id: {rec.rid}\r\n\r\n")
                     .encode("latin-1"))
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        status = tunnel_status(head)
        if status != 200:
            raise ConnectionError(f"CONNECT {target}: status {status}")
        conn[2], conn[3] = host, 0

    async def fetch(self, conn: list, user: User, url: str, rec: Record) -> None:
        """One GET through the proxy on conn ([reader, writer, tunnel host, requests
        in the tunnel], or Nones), directly or inside a CONNECT tunnel."""
        parts_u = urlsplit(url)
        host = parts_u.netloc
        if user.tunnel:
            if conn[0] is not None and conn[3] >= user.requests_per_tunnel:
                conn[1].close()
                conn[0] = conn[1] = conn[2] = None
            if conn[0] is None:
                await self.open_tunnel(conn, user, parts_u.hostname or host, rec)
            # a tunnel goes to one server: the request goes to the tunnel's host
            host = conn[2]
            rec.url = f"https://{host}{tunnel_path(url)}"
            conn[3] += 1
            line = f"GET {tunnel_path(url)} HTTP/1.1"
        else:
            if conn[0] is None:
                conn[0], conn[1] = await asyncio.open_connection(
                    self.proxy[0], self.proxy[1], local_addr=(user.addr, 0), limit=HEAD_LIMIT)
            line = f"GET {url} HTTP/1.1"
        reader, writer = conn[0], conn[1]
        writer.write((f"{line}\r\nHost: {host}\r\nUser-Agent: reqsched-replay\r\n"
                      f"X-Replay-Id: {rec.rid}\r\nAccept: */*\r\n\r\n").encode("latin-1"))
        await writer.drain()
        head, body = metered(rec, self.now, lambda n: self.account(user.cls, n))
        rec.status, _, keep = await read_response(reader, "GET", head, body)
        rec.end = self.now()
        if not keep:
            writer.close()
            conn[0] = conn[1] = conn[2] = None

    async def worker(self, user: User, urls, rng: random.Random) -> None:
        conn: list = [None, None, None, 0]
        phases = user.phases or [(0.0, self.duration)]
        try:
            while not self.stop.is_set():
                now = self.now()
                phase = next((p for p in phases if p[1] > now), None)
                if phase is None or now >= self.duration:
                    return
                if now < phase[0]:
                    await self.sleep(phase[0] - now)
                    continue
                if self.started >= self.max_requests:
                    return
                self.started += 1
                url = next(urls)
                rec = Record(f"{user.id}.{self.started}", user.id, user.cls, user.addr, url,
                             self.now())
                self.records.append(rec)
                try:
                    await asyncio.wait_for(self.fetch(conn, user, url, rec), self.timeout)
                except asyncio.CancelledError:
                    rec.error = rec.error or "cancelled at end of run"
                    raise
                except (OSError, ValueError, asyncio.IncompleteReadError,
                        asyncio.LimitOverrunError, asyncio.TimeoutError) as e:
                    rec.error = (type(e).__name__ + ": " + str(e))[:120].replace(",", ";")
                    rec.end = -1.0
                    if conn[1] is not None:
                        conn[1].close()
                    conn[0] = conn[1] = conn[2] = None
                    await self.sleep(0.5)
                if user.pattern == "think":
                    await self.sleep(rng.expovariate(1.0 / max(user.think_s, 1e-3)))
        finally:
            if conn[1] is not None:
                conn[1].close()

    async def sleep(self, s: float) -> None:
        try:
            await asyncio.wait_for(self.stop.wait(), max(0.0, s))
        except asyncio.TimeoutError:
            pass

    async def progress(self) -> None:
        last_bytes = {c: 0 for c in self.bins}
        while not self.stop.is_set():
            await self.sleep(self.progress_s)
            tot = {c: sum(d.values()) for c, d in self.bins.items()}
            rates = " ".join(f"{c}={(tot[c] - last_bytes[c]) * 8 / self.progress_s / 1e6:.2f}"
                             for c in tot)
            done = sum(1 for r in self.records if r.end >= 0)
            print(f"replay: t={self.now():6.1f}s started={self.started} done={done} "
                  f"Mbit/s {rates}", file=sys.stderr, flush=True)
            last_bytes = tot

    async def run(self) -> None:
        self.t0 = time.monotonic()
        self.t0_epoch = time.time()
        stop_on_signals(self)
        tasks = []
        for i, u in enumerate(self.users):
            urls = self.source.sequence(i, len(self.users), u.id, u.sizes)
            n = u.parallel if u.pattern == "backlogged" else 1
            for k in range(n):
                rng = random.Random(f"{self.seed}/{u.id}/{k}/think")
                tasks.append(asyncio.create_task(self.worker(u, urls, rng)))
        prog = asyncio.create_task(self.progress())
        await self.sleep(self.duration)
        self.stop.set()
        # workers finish their sleeps at once; in-flight requests are cut at the end
        await asyncio.sleep(0)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, prog, return_exceptions=True)

    def write(self, out: str, extra: dict) -> None:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "requests.csv"), "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["id", "user", "class", "addr", "url", "start", "first_byte", "end",
                        "bytes", "status", "error"])
            for r in self.records:
                w.writerow([r.rid, r.user, r.cls, r.addr, r.url, f"{r.start:.4f}",
                            f"{r.first_byte:.4f}", f"{r.end:.4f}", r.bytes, r.status, r.error])
        with open(os.path.join(out, "class_bytes.csv"), "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["bin_start", "class", "bytes"])
            for cls, d in sorted(self.bins.items()):
                for b in sorted(d):
                    w.writerow([f"{b * self.bin_s:.3f}", cls, d[b]])
        summary = {"t0_epoch": self.t0_epoch, "duration_s": self.duration,
                   "bin_s": self.bin_s, "requests_started": self.started,
                   "requests_completed": sum(1 for r in self.records if r.end >= 0),
                   "interrupted": self.interrupted,
                   "users": [{"id": u.id, "class": u.cls, "addr": u.addr,
                             "pattern": u.pattern, "parallel": u.parallel,
                             "think_s": u.think_s, "phases": u.phases, "tunnel": u.tunnel}
                            for u in self.users]}
        summary.update(extra)
        with open(os.path.join(out, "replay.json"), "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)


def users_from_args(args: argparse.Namespace) -> list[User]:
    users: list[User] = []
    if args.users_file:
        with open(args.users_file, encoding="utf-8") as f:
            raw = json.load(f)
        for u in raw["users"] if isinstance(raw, dict) else raw:
            users.append(User(id=str(u["id"]), cls=str(u["class"]), addr=str(u["addr"]),
                              pattern=str(u.get("pattern", "backlogged")),
                              parallel=int(u.get("parallel", 1)),
                              think_s=float(u.get("think_s", 5.0)),
                              phases=[(float(a), float(b)) for a, b in u.get("phases", [])],
                              sizes=SizeDist.from_json(u["sizes"], args.mu, args.sigma)
                              if u.get("sizes") else None,
                              tunnel=bool(u.get("tunnel", False)),
                              requests_per_tunnel=int(u.get("requests_per_tunnel", 6))))
    for spec in args.cls or []:
        f = spec.split(":")
        if len(f) < 3:
            raise ValueError(f"--class {spec!r}: need NAME:USERS:ADDR_PREFIX[:PARALLEL]")
        name, n, prefix = f[0], int(f[1]), f[2]
        par = int(f[3]) if len(f) > 3 else args.parallel
        for i in range(1, n + 1):
            users.append(User(id=f"{name}-{i}", cls=name, addr=f"{prefix}.{i}",
                              pattern="think" if args.think_s > 0 else "backlogged",
                              parallel=par, think_s=args.think_s))
    if not users:
        raise ValueError("no users: give --users-file or --class")
    return users


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="reqsched-replay", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--proxy", default="10.10.0.1:3128", help="proxy HOST:PORT")
    ap.add_argument("--users-file", help='JSON {"users": [{"id", "class", "addr", "pattern", '
                                         '"parallel", "think_s", "phases": [[start, end]]}]}')
    ap.add_argument("--class", dest="cls", action="append", metavar="NAME:USERS:PREFIX[:PAR]",
                    help="USERS users of class NAME at addresses PREFIX.1..USERS (repeatable)")
    ap.add_argument("--parallel", type=int, default=1, help="connections per backlogged user")
    ap.add_argument("--think-s", type=float, default=0.0,
                    help="mean think time for --class users (0 = backlogged)")
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--access-log", help="replay the URLs (and sizes) of a Squid native access.log")
    src.add_argument("--url-list", help="replay a list of 'URL [SIZE]' lines")
    ap.add_argument("--servers", default="10.20.0.1-12",
                    help="origin addresses for synthetic URLs and rewritten log hosts")
    ap.add_argument("--mu", type=float, default=9.357, help="lognormal mu of synthetic sizes")
    ap.add_argument("--sigma", type=float, default=1.318, help="lognormal sigma")
    ap.add_argument("--size-map-out", help="write 'URL SIZE' of the rewritten log for the origin")
    ap.add_argument("--prepare-only", action="store_true",
                    help="only parse the log and write --size-map-out")
    ap.add_argument("--duration", type=float, default=60.0, help="run time in s")
    ap.add_argument("--max-requests", type=int, default=1_000_000, help="stop starting after N")
    ap.add_argument("--timeout", type=float, default=120.0, help="per-request limit in s")
    ap.add_argument("--bin-s", type=float, default=1.0, help="class_bytes.csv bin width")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="replay-out", help="output directory")
    args = ap.parse_args(argv)

    stats = logparse.ParseStats()
    try:
        servers = parse_addr_range(args.servers)
        entries = load_entries(args.access_log, args.url_list, servers, stats)
        if stats.skipped:
            print(f"replay: skipped {stats.skipped} malformed log lines "
                  f"(first: {'; '.join(stats.first_errors[:2])})", file=sys.stderr)
        if entries and args.size_map_out:
            write_size_map(entries, args.size_map_out)
        if args.prepare_only:
            return 0
        users = users_from_args(args)
        host, _, port = args.proxy.rpartition(":")
        proxy = (host, int(port))
    except (OSError, ValueError, KeyError) as e:
        print(f"replay: {e}", file=sys.stderr)
        return 2
    if args.duration <= 0 or args.duration > 24 * 3600:
        print("replay: --duration must be in (0, 86400] s", file=sys.stderr)
        return 2
    src_ = UrlSource(servers, args.mu, args.sigma, args.seed, entries)
    rp = Replay(users, proxy, src_, args.duration, args.max_requests, args.timeout,
                args.bin_s, args.seed)
    print(f"replay: {len(users)} users via {args.proxy} for {args.duration:.0f}s",
          file=sys.stderr, flush=True)
    asyncio.run(rp.run())
    rp.write(args.out, {"log_lines": stats.lines, "log_parsed": stats.parsed,
                        "log_skipped": stats.skipped})
    done = sum(1 for r in rp.records if r.end >= 0)
    print(f"replay: {rp.started} requests started, {done} completed -> {args.out}",
          file=sys.stderr, flush=True)
    return 130 if rp.interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
