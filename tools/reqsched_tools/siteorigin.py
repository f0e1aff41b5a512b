# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-siteorigin: a website whose pages really spend one resource each, with
fixed, known capacities (the website-gateway scenario's origin, issue 13 item 4).

  /cgi/N      CPU-intensive: hashes (SHA-256) until the worker has used
              --cgi-cpu-ms of CPU time, then answers --cgi-bytes. The workers
              (a pool of --cgi-workers processes) sit in a cgroup v1 `cpu`
              group of their own with cfs_quota_us = --cpu-quota x cfs_period_us:
              together they never get more than --cpu-quota cores.
  /photos/N   disk-intensive: --photo-bytes read from an emulated disk, a FIFO
              with a fixed service rate of --disk-Bps (a read of n bytes ends
              n / rate after the previous read in the queue ended), then sent.
  /media/N    bandwidth-intensive: --media-bytes from memory; the testbed's tbf
              on the origin's link is the capacity.
  /           an HTML index linking one page of each kind (for reqsched-prober's crawl)
  /counters   what the site has consumed so far, in reqsched-monitor's JSON
              ({"t", "cpu_s", "disk_read_bytes", "net_tx_bytes"}: the CGI
              workers' CPU seconds, the emulated disk's bytes, the bytes written),
              so that reqsched-prober can profile the site as a real one
  anything else: a 1-byte answer (the testbed's readiness probe).

Why an emulated disk: this VM's disk is shared with other jobs and its files
sit in the page cache; O_DIRECT reads would measure the neighbours. A FIFO of a
fixed rate is the same in every run and its capacity is exactly --disk-Bps.

At most --max-clients requests are served at once (Apache's MaxClients); more
wait for a slot, at most --queue-timeout seconds, then get a 503 at once (an
overloaded server refusing work; outcome "rejected", nothing consumed). One
line per request in --log:

  end_epoch start_epoch class kind cpu_s disk_bytes sent_bytes status outcome

class = the X-Class request header the load generator sets (the gateway
forwards it), "-" without; cpu_s = the CGI worker's CPU time for the page;
sent_bytes = head + body bytes written (what the page took of the link).
"""
from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import hashlib
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Optional, TextIO
from urllib.parse import urlsplit

from .origin import BODY_BLOCK, MAX_HEADER_BYTES, BadRequest, Plan, Request, parse_listen, \
    read_request, response_head, wants_close

CGROUP_CPU = "/sys/fs/cgroup/cpu"
CFS_PERIOD_US = 100_000
KINDS = ("cgi", "photos", "media")
INDEX = ("/cgi/1", "/photos/1.jpg", "/media/1.mp4")     # what / links


@dataclass
class SiteConfig:
    cpu_quota: float = 0.5          # cores of the CGI workers' cgroup (0: no cgroup)
    cgi_workers: int = 4
    cgi_cpu_ms: float = 8.0
    cgi_bytes: int = 2_000
    disk_Bps: float = 1_000_000.0
    photo_bytes: int = 50_000
    media_bytes: int = 200_000
    max_clients: int = 150
    queue_timeout: float = 2.0      # a request without a slot by then gets a 503


HEAD_BYTES = 200       # about what a response head adds on the link


def page_table(cfg: SiteConfig, bw_Bps: float, hold_s: float) -> str:
    """The page table (request_sched_page_table) from the known capacities: a
    page's cost on a resource = what it demands of it / (capacity x hold_s), in
    % (at most 100): the costs of the admitted requests add up to at most
    hold_s seconds of work for each resource."""
    def pct(demand: float, capacity: float) -> float:
        return min(100.0, 100.0 * demand / (capacity * hold_s))
    rows = {"cgi": (pct(cfg.cgi_cpu_ms / 1000, cfg.cpu_quota), 0.0,
                    pct(cfg.cgi_bytes + HEAD_BYTES, bw_Bps)),
            "photos": (0.0, pct(cfg.photo_bytes, cfg.disk_Bps),
                       pct(cfg.photo_bytes + HEAD_BYTES, bw_Bps)),
            "media": (0.0, 0.0, pct(cfg.media_bytes + HEAD_BYTES, bw_Bps))}
    lines = [f"# the site's pages: % of each capacity held while served (hold {hold_s:g} s)",
             "resources cpu disk bw", f"capacity {cfg.cpu_quota:g} {cfg.disk_Bps:g} {bw_Bps:g}"]
    lines += [f"/{k}/* {c:.3f} {d:.3f} {b:.3f}" for k, (c, d, b) in rows.items()]
    return "\n".join(lines) + "\n"


def kind_patterns(rows: dict[str, tuple[float, ...]]) -> list[tuple[str, tuple[float, ...]]]:
    """A probed table's rows (absolute URLs) as the gateway should use them: the
    page probed for each kind stands for every page of that kind (/cgi/1 ->
    /cgi/*); other URLs keep their path."""
    out: dict[str, tuple[float, ...]] = {}
    for url, cost in rows.items():
        path = urlsplit(url).path or "/"
        kind = page_kind(path)
        out[f"/{kind}/*" if kind in KINDS else path] = cost
    return list(out.items())


def page_kind(target: str) -> str:
    """'cgi', 'photos', 'media' or 'other' from a request target (origin or absolute form)."""
    path = target.split("://", 1)[-1]
    path = path[path.find("/"):] if "/" in path else "/"
    first = path.split("/")[1] if path.count("/") >= 1 else ""
    return first if first in KINDS else "other"


def burn(cpu_ms: float) -> float:
    """Hash until this process has used cpu_ms of CPU time; returns the CPU seconds used."""
    t0 = time.process_time()
    end = t0 + cpu_ms / 1000.0
    h = hashlib.sha256(b"reqsched")
    while time.process_time() < end:
        for _ in range(200):
            h = hashlib.sha256(h.digest())
    return time.process_time() - t0


def join_cgroup(path: str) -> None:
    """Pool initializer: move this worker into the quota'd cgroup."""
    if path:
        with open(os.path.join(path, "cgroup.procs"), "w", encoding="ascii") as f:
            f.write(str(os.getpid()))


def cpu_hierarchy() -> tuple[str, str]:
    """(the cgroup v1 cpu hierarchy's root, the mount point made for it or "").
    Under `ip netns exec` /sys is the namespace's own sysfs without the host's
    cgroup mounts: the same hierarchy is then mounted on a private directory
    (ip netns exec runs in a mount namespace of its own, so nothing leaks)."""
    if os.path.exists(os.path.join(CGROUP_CPU, "cpu.cfs_quota_us")):
        return CGROUP_CPU, ""
    mnt = tempfile.mkdtemp(prefix="reqsched-site-cg-")
    subprocess.run(["mount", "-t", "cgroup", "-o", "cpu", "cgroup", mnt], check=True)
    return mnt, mnt


def make_cgroup(root: str, quota: float) -> str:
    """A cgroup v1 cpu group of its own with quota x period of CPU per period."""
    path = os.path.join(root, f"reqsched-site-{os.getpid()}")
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "cpu.cfs_period_us"), "w", encoding="ascii") as f:
        f.write(str(CFS_PERIOD_US))
    with open(os.path.join(path, "cpu.cfs_quota_us"), "w", encoding="ascii") as f:
        f.write(str(max(1000, int(quota * CFS_PERIOD_US))))
    return path


class Disk:
    """An emulated disk: FIFO, fixed rate. Invariant: free_at is when the last
    queued read ends; a read of n bytes arriving at t ends at max(t, free_at) + n/rate."""

    def __init__(self, rate_Bps: float):
        self.rate = rate_Bps
        self.free_at = 0.0

    async def read(self, n: int) -> None:
        loop = asyncio.get_running_loop()
        self.free_at = max(loop.time(), self.free_at) + n / self.rate
        await asyncio.sleep(self.free_at - loop.time())


class Site:
    def __init__(self, cfg: SiteConfig, pool: Optional[concurrent.futures.Executor],
                 log: Optional[TextIO]):
        self.cfg, self.pool, self.log = cfg, pool, log
        self.disk = Disk(cfg.disk_Bps)
        self.slots = asyncio.Semaphore(cfg.max_clients)
        self.served = 0
        self.consumed = [0.0, 0, 0]          # cpu_s, disk bytes, bytes written (pages only)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        local = str((writer.get_extra_info("sockname") or ("?", 0))[0])
        try:
            while True:
                try:
                    req = await read_request(reader, local)
                except BadRequest:
                    writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n"
                                 b"Connection: close\r\n\r\n")
                    return
                if req is None:
                    return
                if req.target in ("/", "/counters"):
                    self.describe(req, writer)
                    continue
                try:
                    await asyncio.wait_for(self.slots.acquire(), self.cfg.queue_timeout)
                except asyncio.TimeoutError:
                    self.reject(req, writer)
                    continue
                try:
                    keep = await self.answer(req, writer)
                finally:
                    self.slots.release()
                if not keep:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            if not writer.transport.is_closing():
                writer.close()

    def describe(self, req: Request, writer: asyncio.StreamWriter) -> None:
        """/ (the index) or /counters; neither is logged nor counted."""
        if req.target == "/":
            body = ("<html><body>" + "".join(f'<a href="{p}">{p}</a> ' for p in INDEX)
                    + "</body></html>").encode()
            ctype = "text/html"
        else:
            cpu, disk, sent = self.consumed
            body = json.dumps({"t": time.monotonic(), "cpu_s": cpu, "disk_read_bytes": disk,
                               "net_tx_bytes": sent}).encode()
            ctype = "application/json"
        writer.write(f"HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}"
                     f"\r\nCache-Control: no-store\r\n\r\n".encode() + body)

    def reject(self, req: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
        self.record(time.time(), req, "", 0.0, 0, 0, 503, "rejected")

    def record(self, start: float, req: Request, kind: str, cpu_s: float, disk: int, sent: int,
               status: int, outcome: str) -> None:
        self.served += 1
        self.consumed[0] += cpu_s
        self.consumed[1] += disk
        self.consumed[2] += sent
        if self.log is not None:
            self.log.write(f"{time.time():.4f} {start:.4f} {req.headers.get('x-class', '-')} "
                           f"{kind or page_kind(req.target)} {cpu_s:.6f} {disk} {sent} "
                           f"{status} {outcome}\n")

    async def answer(self, req: Request, writer: asyncio.StreamWriter) -> bool:
        start = time.time()
        kind = page_kind(req.target)
        cpu_s, disk = 0.0, 0
        size = {"cgi": self.cfg.cgi_bytes, "photos": self.cfg.photo_bytes,
                "media": self.cfg.media_bytes}.get(kind, 1)
        sent, outcome = 0, "ok"
        try:
            if kind == "cgi" and self.pool is not None:
                loop = asyncio.get_running_loop()
                cpu_s = await loop.run_in_executor(self.pool, burn, self.cfg.cgi_cpu_ms)
            elif kind == "photos":
                await self.disk.read(size)
                disk = size
            close = wants_close(req)
            head = response_head(Plan(size=size), req, close)
            writer.write(head)
            sent = len(head)
            left = size if req.method != "HEAD" else 0
            while left > 0:
                n = min(left, len(BODY_BLOCK))
                writer.write(memoryview(BODY_BLOCK)[:n])
                await writer.drain()
                sent += n
                left -= n
            await writer.drain()
            return not close
        except (ConnectionError, asyncio.CancelledError):
            outcome = "aborted"
            raise
        finally:
            self.record(start, req, kind, cpu_s, disk, sent, 200, outcome)


async def serve(args: argparse.Namespace, cfg: SiteConfig,
                pool: Optional[concurrent.futures.Executor], log: Optional[TextIO]) -> None:
    site = Site(cfg, pool, log)
    servers = []
    for spec in args.listen:
        host, port = parse_listen(spec, 80)
        servers.append(await asyncio.start_server(site.handle, host, port, limit=MAX_HEADER_BYTES,
                                                  reuse_address=True, backlog=1024))
    print("site: listening on " + " ".join(args.listen), file=sys.stderr, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await asyncio.wait_for(stop.wait(), args.max_runtime)
    except asyncio.TimeoutError:
        print("site: --max-runtime reached, exiting", file=sys.stderr)
    for srv in servers:
        srv.close()
    print(f"site: served {site.served} requests", file=sys.stderr, flush=True)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--listen", action="append", required=True, metavar="ADDR[:PORT]")
    d = SiteConfig()
    ap.add_argument("--cpu-quota", type=float, default=d.cpu_quota,
                    help="cores the CGI workers may use together (cgroup v1 cpu quota; "
                         "0 = no cgroup, e.g. without root)")
    ap.add_argument("--cgi-workers", type=int, default=d.cgi_workers)
    ap.add_argument("--cgi-cpu-ms", type=float, default=d.cgi_cpu_ms,
                    help="CPU time one CGI page computes")
    ap.add_argument("--cgi-bytes", type=int, default=d.cgi_bytes)
    ap.add_argument("--disk-Bps", type=float, default=d.disk_Bps,
                    help="the emulated disk's service rate, bytes/s")
    ap.add_argument("--photo-bytes", type=int, default=d.photo_bytes)
    ap.add_argument("--media-bytes", type=int, default=d.media_bytes)
    ap.add_argument("--max-clients", type=int, default=d.max_clients,
                    help="requests served at once (more wait)")
    ap.add_argument("--queue-timeout", type=float, default=d.queue_timeout,
                    help="seconds a request may wait for a slot, then 503")
    ap.add_argument("--log", help="one line per request (see above)")
    ap.add_argument("--max-runtime", type=float, default=3600.0)
    args = ap.parse_args(argv)
    cfg = SiteConfig(args.cpu_quota, args.cgi_workers, args.cgi_cpu_ms, args.cgi_bytes,
                     args.disk_Bps, args.photo_bytes, args.media_bytes, args.max_clients,
                     args.queue_timeout)
    if cfg.cgi_workers < 1 or cfg.disk_Bps <= 0 or cfg.max_clients < 1 or cfg.cpu_quota < 0:
        print("site: cgi-workers, disk-Bps, max-clients must be > 0", file=sys.stderr)
        return 2
    root, mnt = cpu_hierarchy() if cfg.cpu_quota > 0 else ("", "")
    cgroup = make_cgroup(root, cfg.cpu_quota) if root else ""
    pool = concurrent.futures.ProcessPoolExecutor(
        cfg.cgi_workers, mp_context=multiprocessing.get_context("spawn"),
        initializer=join_cgroup, initargs=(cgroup,))
    log = open(args.log, "a", buffering=1, encoding="utf-8") if args.log else None
    try:
        # start every worker now: the first pages must not pay for spawning one
        concurrent.futures.wait([pool.submit(time.sleep, 0.2) for _ in range(cfg.cgi_workers)])
        asyncio.run(serve(args, cfg, pool, log))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if cgroup:
            # how often the quota stopped the workers: near nr_periods when they
            # were CPU-bound at the quota, low when the machine gave them less
            with open(os.path.join(cgroup, "cpu.stat"), encoding="ascii") as f:
                print("site: cgroup cpu.stat " + " ".join(f.read().split()), file=sys.stderr)
            os.rmdir(cgroup)
        if mnt:
            subprocess.run(["umount", mnt], check=False)
            os.rmdir(mnt)
        if log is not None:
            log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
