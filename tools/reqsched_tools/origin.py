# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-origin: the reqsched testbed's origin HTTP/1.1 server.

Serves synthetic objects whose size, first-byte delay and pacing are chosen
per request (URL parameters), per server address (--server-config) or from a
size map of replayed URLs. One asyncio process can listen on many addresses
(or on 0.0.0.0) so a single origin emulates many Internet servers.

URL parameters (any path; all optional):
  size=N          body size in bytes (suffix k/K, m/M allowed: 30k = 30000)
  delay_ms=D      first-byte delay in ms before the status line (also A-B: uniform)
  rate_bps=R      pace this response to R bit/s (0 = as fast as possible);
                  emulates the server's own Internet bandwidth
  chunked=1       Transfer-Encoding: chunked instead of Content-Length
  reset_after=B   send B body bytes, then reset the connection (RST, SO_LINGER 0)
  hang=1          read the request and never answer (until the client closes)
  close=1         answer with Connection: close and close after the body
  status=N        HTTP status code of the answer (default 200)
  max_age=S       Cache-Control: max-age=S (default: Cache-Control: no-store)
Parameters the origin does not know (e.g. a replay id) are ignored.

Request headers X-Reqsched-Size, X-Reqsched-Status and X-Reqsched-Max-Age
(reqsched-load's log replay) set size, status and max_age as the URL
parameters do, so a replayed URL stays the logged one; a URL parameter wins.

Size when size= is absent: the size map (--size-map, "URL SIZE" per line; the
URL may be absolute "http://host/path?q" or just "/path?q"), else the server's
default (--server-config "size"), else a deterministic draw from
lognormal(--mu, --sigma) seeded by the URL, so a replayed URL always has the
same size.
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import signal
import socket
import struct
import sys
import time
import fcntl
import termios
from dataclasses import dataclass, field
from typing import Optional, TextIO
from urllib.parse import parse_qsl, urlsplit

BODY_BLOCK = (b"reqsched-origin-" * 4096)[:65536]
MAX_HEADER_BYTES = 65536
REASONS = {200: "OK", 204: "No Content", 206: "Partial Content", 301: "Moved Permanently",
           302: "Found", 304: "Not Modified", 400: "Bad Request", 403: "Forbidden",
           404: "Not Found", 500: "Internal Server Error", 502: "Bad Gateway",
           503: "Service Unavailable"}


@dataclass
class ServerDefaults:
    """Per-address defaults; URL parameters override them."""
    delay_ms: tuple[float, float] = (0.0, 0.0)
    rate_bps: float = 0.0
    size: Optional[int] = None
    chunked: bool = False


@dataclass
class OriginConfig:
    defaults: ServerDefaults = field(default_factory=ServerDefaults)
    per_address: dict[str, ServerDefaults] = field(default_factory=dict)
    size_map: dict[str, int] = field(default_factory=dict)
    mu: float = 9.357
    sigma: float = 1.318
    max_size: int = 100_000_000
    hang_max_s: float = 600.0
    access_log: Optional[TextIO] = None
    quiet: bool = False
    seed: int = 1


class BadRequest(Exception):
    pass


def parse_size(text: str) -> int:
    """'30000', '30k', '2M' -> bytes. Raises ValueError naming the input."""
    t = text.strip()
    mult = 1
    if t and t[-1] in "kK":
        mult, t = 1000, t[:-1]
    elif t and t[-1] in "mM":
        mult, t = 1_000_000, t[:-1]
    n = int(float(t) * mult)
    if n < 0:
        raise ValueError(f"negative size {text!r}")
    return n


def parse_range(text: str) -> tuple[float, float]:
    """'50' -> (50, 50); '20-200' -> (20, 200)."""
    if "-" in text[1:]:
        a, b = text.split("-", 1)
        lo, hi = float(a), float(b)
    else:
        lo = hi = float(text)
    if lo < 0 or hi < lo:
        raise ValueError(f"bad range {text!r}")
    return lo, hi


def lognormal_size(key: str, mu: float, sigma: float, max_size: int) -> int:
    """Deterministic lognormal size for a URL (same URL -> same size)."""
    h = int.from_bytes(hashlib.sha1(key.encode("utf-8", "replace")).digest()[:8], "big")
    rng = random.Random(h)
    return max(1, min(max_size, int(rng.lognormvariate(mu, sigma))))


def load_size_map(path: str) -> tuple[dict[str, int], int]:
    """'URL SIZE' per line (either order), '#' comments. Returns (map, malformed)."""
    sizes: dict[str, int] = {}
    bad = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) != 2:
                bad += 1
                continue
            a, b = parts
            try:
                if a.isdigit():
                    sizes[b] = int(a)
                else:
                    sizes[a] = int(b)
            except ValueError:
                bad += 1
    return sizes, bad


def load_server_config(path: str) -> tuple[ServerDefaults, dict[str, ServerDefaults]]:
    """JSON: {"default": {...}, "10.20.0.1": {"delay_ms": [20, 80], "rate_bps": 2e6}}."""
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected a JSON object of address -> settings")

    def one(name: str, d: dict, base: ServerDefaults) -> ServerDefaults:
        if not isinstance(d, dict):
            raise ValueError(f"{path}: entry {name!r} is not an object")
        s = ServerDefaults(base.delay_ms, base.rate_bps, base.size, base.chunked)
        if "delay_ms" in d:
            v = d["delay_ms"]
            s.delay_ms = (float(v[0]), float(v[1])) if isinstance(v, list) else (float(v), float(v))
        if "rate_bps" in d:
            s.rate_bps = float(d["rate_bps"])
        if "size" in d:
            s.size = int(d["size"])
        if "chunked" in d:
            s.chunked = bool(d["chunked"])
        return s

    default = one("default", raw.get("default", {}), ServerDefaults())
    per = {k: one(k, v, default) for k, v in raw.items() if k != "default"}
    return default, per


@dataclass
class Request:
    method: str
    target: str
    version: str
    headers: dict[str, str]
    local_addr: str

    def url_key(self) -> tuple[str, str]:
        """(absolute URL, origin-form path) used for the size map."""
        if self.target.startswith(("http://", "https://")):
            parts = urlsplit(self.target)
            path = parts.path or "/"
            if parts.query:
                path += "?" + parts.query
            return self.target, path
        host = self.headers.get("host", self.local_addr)
        return f"http://{host}{self.target}", self.target


@dataclass
class Plan:
    status: int = 200
    size: int = 0
    delay_s: float = 0.0
    rate_Bps: float = 0.0
    chunked: bool = False
    reset_after: Optional[int] = None
    hang: bool = False
    close: bool = False
    max_age: Optional[int] = None


def plan_response(cfg: OriginConfig, req: Request, rng: random.Random) -> Plan:
    """Decide what to send from URL parameters, address defaults and the size map."""
    sd = cfg.per_address.get(req.local_addr, cfg.defaults)
    absolute, path = req.url_key()
    query = urlsplit(path).query
    try:
        params = dict(parse_qsl(query, keep_blank_values=True))
    except ValueError:
        params = {}
    for key in ("size", "status", "max_age"):
        hdr = req.headers.get("x-reqsched-" + key.replace("_", "-"))
        if hdr is not None and key not in params:
            params[key] = hdr
    p = Plan(chunked=sd.chunked, rate_Bps=sd.rate_bps / 8.0)
    lo, hi = sd.delay_ms
    try:
        if "delay_ms" in params:
            lo, hi = parse_range(params["delay_ms"])
        if "rate_bps" in params:
            p.rate_Bps = float(params["rate_bps"]) / 8.0
        if "size" in params:
            p.size = parse_size(params["size"])
        elif absolute in cfg.size_map:
            p.size = cfg.size_map[absolute]
        elif path in cfg.size_map:
            p.size = cfg.size_map[path]
        elif sd.size is not None:
            p.size = sd.size
        else:
            p.size = lognormal_size(absolute, cfg.mu, cfg.sigma, cfg.max_size)
        if "chunked" in params:
            p.chunked = params["chunked"] not in ("0", "")
        if "reset_after" in params:
            p.reset_after = parse_size(params["reset_after"])
        if "hang" in params:
            p.hang = params["hang"] not in ("0", "")
        if "close" in params:
            p.close = params["close"] not in ("0", "")
        if "status" in params:
            p.status = int(params["status"])
            if not 100 <= p.status <= 999:
                raise ValueError(f"status {p.status}")
        if "max_age" in params:
            p.max_age = int(params["max_age"])
    except ValueError as e:
        raise BadRequest(f"bad URL parameter: {e}") from e
    p.size = min(p.size, cfg.max_size)
    p.delay_s = (lo + (hi - lo) * rng.random()) / 1000.0 if hi > 0 else 0.0
    if p.status in (204, 304) or req.method == "HEAD":
        p.chunked = False
    return p


async def read_request(reader: asyncio.StreamReader, local_addr: str) -> Optional[Request]:
    """One request head (and body, discarded). None on clean EOF."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if not e.partial.strip():
            return None
        raise BadRequest("truncated request head") from e
    except asyncio.LimitOverrunError as e:
        raise BadRequest("request head too large") from e
    lines = head.decode("latin-1").split("\r\n")
    while lines and not lines[0]:
        lines.pop(0)  # tolerate stray CRLF between requests
    if not lines:
        return None
    parts = lines[0].split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise BadRequest(f"bad request line {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        k, sep, v = line.partition(":")
        if not sep:
            raise BadRequest(f"bad header line {line[:80]!r}")
        headers[k.strip().lower()] = v.strip()
    req = Request(parts[0].upper(), parts[1], parts[2], headers, local_addr)
    body_len = headers.get("content-length")
    if body_len:
        try:
            await reader.readexactly(int(body_len))
        except ValueError as e:
            raise BadRequest("bad Content-Length") from e
    elif "chunked" in headers.get("transfer-encoding", "").lower():
        raise BadRequest("chunked request bodies are not supported")
    return req


def wants_close(req: Request) -> bool:
    conn = req.headers.get("connection", "").lower()
    if req.version == "HTTP/1.0":
        return "keep-alive" not in conn
    return "close" in conn


def response_head(p: Plan, req: Request, close: bool) -> bytes:
    lines = [f"HTTP/1.1 {p.status} {REASONS.get(p.status, 'Status')}",
             "Server: reqsched-origin",
             "Date: " + time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime()),
             "Content-Type: application/octet-stream"]
    if p.max_age is not None:
        lines.append(f"Cache-Control: public, max-age={p.max_age}")
        lines.append("Last-Modified: Thu, 01 Jan 2026 00:00:00 GMT")
    else:
        lines.append("Cache-Control: no-store")
    if p.status not in (204, 304):
        if p.chunked:
            lines.append("Transfer-Encoding: chunked")
        else:
            lines.append(f"Content-Length: {p.size}")
    lines.append("Connection: close" if close else "Connection: keep-alive")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def unsent_bytes(sock) -> int:
    """Bytes still in the kernel send queue (TIOCOUTQ)."""
    try:
        buf = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
        return struct.unpack("i", buf)[0]
    except OSError:
        return 0


async def reset_connection(writer: asyncio.StreamWriter) -> None:
    """Abort with RST once what was written has left the host (bounded wait)."""
    sock = writer.get_extra_info("socket")
    try:
        await asyncio.wait_for(writer.drain(), 2.0)
    except (asyncio.TimeoutError, ConnectionError):
        pass
    if sock is not None:
        deadline = time.monotonic() + 2.0
        while unsent_bytes(sock) > 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    writer.transport.abort()


async def send_body(writer: asyncio.StreamWriter, p: Plan) -> int:
    """Write the body, paced to p.rate_Bps if set. Returns body bytes written."""
    loop = asyncio.get_running_loop()
    limit = p.size if p.reset_after is None else min(p.size, p.reset_after)
    if p.rate_Bps > 0:
        chunk = int(min(65536, max(1024, p.rate_Bps / 100)))
        burst_s = max(0.02, 2 * chunk / p.rate_Bps)
    else:
        chunk = 65536
        burst_s = 0.0
    sent = 0
    next_t = loop.time()
    while sent < limit:
        n = min(chunk, limit - sent)
        data = memoryview(BODY_BLOCK)[:n]
        if p.chunked:
            writer.write(b"%x\r\n" % n)
            writer.write(data)
            writer.write(b"\r\n")
        else:
            writer.write(data)
        sent += n
        await writer.drain()
        if p.rate_Bps > 0:
            now = loop.time()
            # a stalled connection may catch up by at most burst_s, never more
            next_t = max(next_t, now - burst_s) + n / p.rate_Bps
            if next_t > now:
                await asyncio.sleep(next_t - now)
    if p.chunked and p.reset_after is None:
        writer.write(b"0\r\n\r\n")
    return sent


class Origin:
    def __init__(self, cfg: OriginConfig):
        self.cfg = cfg
        self.rng = random.Random(cfg.seed)
        self.requests = 0
        self.bytes = 0
        self.connections = 0

    def log(self, req: Request, peer: str, p: Optional[Plan], sent: int, outcome: str) -> None:
        if self.cfg.access_log is None:
            return
        size = p.size if p else -1
        status = p.status if p else 400
        self.cfg.access_log.write(f"{time.time():.3f} {req.local_addr} {peer} {req.method} "
                                  f"{req.target} {status} {size} {sent} {outcome}\n")

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        sockname = writer.get_extra_info("sockname") or ("?", 0)
        peername = writer.get_extra_info("peername") or ("?", 0)
        local, peer = str(sockname[0]), f"{peername[0]}:{peername[1]}"
        try:
            while True:
                try:
                    req = await read_request(reader, local)
                except BadRequest as e:
                    msg = f"origin: {e}\n".encode()
                    writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: %d\r\n"
                                 b"Connection: close\r\n\r\n" % len(msg) + msg)
                    await writer.drain()
                    return
                if req is None:
                    return
                if not await self.answer(req, peer, reader, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass
        except asyncio.CancelledError:
            pass          # shutting down: drop the connection quietly
        finally:
            if not writer.transport.is_closing():
                writer.close()

    async def answer(self, req: Request, peer: str, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> bool:
        """Serve one request. Returns True if the connection stays open."""
        self.requests += 1
        try:
            p = plan_response(self.cfg, req, self.rng)
        except BadRequest as e:
            msg = f"origin: {e}\n".encode()
            writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: %d\r\n\r\n" % len(msg) + msg)
            await writer.drain()
            self.log(req, peer, None, 0, "bad-param")
            return True
        if p.hang:
            self.log(req, peer, p, 0, "hang")
            try:
                await asyncio.wait_for(reader.read(), self.cfg.hang_max_s)
            except asyncio.TimeoutError:
                pass
            return False
        if p.delay_s > 0:
            await asyncio.sleep(p.delay_s)
        close = p.close or wants_close(req) or (p.reset_after is not None)
        writer.write(response_head(p, req, close))
        sent = 0
        if req.method != "HEAD" and p.status not in (204, 304):
            sent = await send_body(writer, p)
        self.bytes += sent
        if p.reset_after is not None and p.reset_after < p.size:
            await reset_connection(writer)
            self.log(req, peer, p, sent, "reset")
            return False
        await writer.drain()
        self.log(req, peer, p, sent, "ok")
        return not close


def parse_listen(text: str, default_port: int) -> tuple[str, int]:
    if text.startswith("["):
        host, _, port = text[1:].partition("]:")
        return host, int(port or default_port)
    if text.count(":") == 1:
        host, port = text.split(":")
        return host, int(port)
    return text, default_port


async def serve(args: argparse.Namespace, cfg: OriginConfig) -> None:
    origin = Origin(cfg)
    servers = []
    bound: list[str] = []
    for spec in args.listen or [f"127.0.0.1:{args.port}"]:
        host, port = parse_listen(spec, args.port)
        srv = await asyncio.start_server(origin.handle, host, port, limit=MAX_HEADER_BYTES,
                                         reuse_address=True, backlog=1024)
        servers.append(srv)
        for s in srv.sockets:
            name = s.getsockname()
            bound.append(f"{name[0]}:{name[1]}")
    print("origin: listening on " + " ".join(bound), file=sys.stderr, flush=True)
    if args.port_file:
        with open(args.port_file, "w", encoding="utf-8") as f:
            f.write("\n".join(bound) + "\n")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    deadline = args.max_runtime if args.max_runtime > 0 else None
    try:
        await asyncio.wait_for(stop.wait(), deadline)
    except asyncio.TimeoutError:
        print("origin: --max-runtime reached, exiting", file=sys.stderr)
    for srv in servers:
        srv.close()
    if not cfg.quiet:
        print(f"origin: served {origin.requests} requests, {origin.bytes} body bytes, "
              f"{origin.connections} connections", file=sys.stderr, flush=True)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--listen", action="append", metavar="ADDR[:PORT]",
                    help="address to listen on (repeatable; 0.0.0.0 = every address; "
                         "default 127.0.0.1:--port)")
    ap.add_argument("--port", type=int, default=8080, help="default port (0 = ephemeral)")
    ap.add_argument("--port-file", help="write the bound ADDR:PORT list here once listening")
    ap.add_argument("--delay-ms", default="0", metavar="D|A-B",
                    help="default first-byte delay in ms (uniform in A-B)")
    ap.add_argument("--rate-bps", type=float, default=0.0,
                    help="default per-connection pacing in bit/s (0 = unpaced)")
    ap.add_argument("--size", help="default body size (else size map / lognormal)")
    ap.add_argument("--server-config", metavar="JSON",
                    help='per-address defaults: {"default": {...}, "10.20.0.1": '
                         '{"delay_ms": [20, 200], "rate_bps": 2000000, "size": N}}')
    ap.add_argument("--size-map", metavar="FILE", help="'URL SIZE' per line for replayed URLs")
    ap.add_argument("--mu", type=float, default=9.357, help="lognormal mu of default sizes")
    ap.add_argument("--sigma", type=float, default=1.318, help="lognormal sigma of default sizes")
    ap.add_argument("--max-size", type=int, default=100_000_000, help="cap on any body size")
    ap.add_argument("--hang-max", type=float, default=600.0, help="longest hang=1 wait (s)")
    ap.add_argument("--max-runtime", type=float, default=0.0,
                    help="exit after this many seconds (0 = until SIGINT/SIGTERM)")
    ap.add_argument("--access-log", help="one line per request: time local peer method "
                                         "target status size sent outcome")
    ap.add_argument("--seed", type=int, default=1, help="seed of per-request delay draws")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)

    cfg = OriginConfig(mu=args.mu, sigma=args.sigma, max_size=args.max_size,
                       hang_max_s=args.hang_max, quiet=args.quiet, seed=args.seed)
    try:
        if args.server_config:
            cfg.defaults, cfg.per_address = load_server_config(args.server_config)
        else:
            cfg.defaults = ServerDefaults()
        if args.delay_ms != "0":
            cfg.defaults.delay_ms = parse_range(args.delay_ms)
        if args.rate_bps:
            cfg.defaults.rate_bps = args.rate_bps
        if args.size:
            cfg.defaults.size = parse_size(args.size)
        if args.size_map:
            cfg.size_map, bad = load_size_map(args.size_map)
            if bad:
                print(f"origin: {args.size_map}: skipped {bad} malformed lines", file=sys.stderr)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        print(f"origin: bad configuration: {e}", file=sys.stderr)
        return 2
    if args.access_log:
        cfg.access_log = open(args.access_log, "a", buffering=1, encoding="utf-8")
    try:
        asyncio.run(serve(args, cfg))
    except OSError as e:
        print(f"origin: cannot listen: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
