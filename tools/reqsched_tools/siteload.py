# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-siteload: an open (Avalanche-like) load on a website through its
gateway, as in the mQoS paper's experiment: each class sends requests in a
Poisson stream of --rate requests/s, whatever the server answers, from its own
source addresses (the gateway classifies by address); each request is a CGI
page, a photo or a media file drawn with the --mix probabilities; a request not
answered within --patience seconds is abandoned (the connection is closed).

  reqsched-siteload --gateway 10.10.0.1:80 --host www.example.test \\
      --class gold:10.10.1.1-20:70 --class silver:10.10.2.1-20:70 ... \\
      --mix cgi=0.6,photos=0.2,media=0.2 --duration 60 --out DIR

Each request carries `X-Class: NAME` so that the origin can log what it spent
per class. One connection per request (Connection: close).
Outputs: DIR/requests.csv (class,kind,addr,start,end,status,bytes,error; times
in s since the start, end -1 = not answered) and DIR/load.json (start epoch,
duration, per-class counts). SIGINT/SIGTERM stop the arrivals; the requests
under way end (within --patience), the outputs are written, exit status 130.
"""
from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Optional

from .loadengine import HEAD_LIMIT, read_response, stop_on_signals
from .replay import parse_addr_range

PAGES_PER_KIND = 1000
SUFFIX = {"cgi": "", "photos": ".jpg", "media": ".mp4"}


@dataclass
class LoadClass:
    name: str
    addrs: list[str]
    rate: float


@dataclass
class Rec:
    cls: str
    kind: str
    addr: str
    start: float
    end: float = -1.0
    status: int = 0
    nbytes: int = 0
    error: str = ""


@dataclass
class SiteLoad:
    gateway: tuple[str, int]
    host: str
    classes: list[LoadClass]
    mix: dict[str, float]
    patience: float
    duration: float
    seed: int
    records: list[Rec] = field(default_factory=list)
    t0: float = 0.0
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    interrupted: bool = False

    def now(self) -> float:
        return time.monotonic() - self.t0

    async def one(self, rec: Rec, path: str) -> None:
        writer = None
        try:
            reader, writer = await asyncio.open_connection(
                self.gateway[0], self.gateway[1], local_addr=(rec.addr, 0), limit=HEAD_LIMIT)
            writer.write((f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\nX-Class: {rec.cls}\r\n"
                          f"User-Agent: reqsched-siteload\r\nConnection: close\r\n\r\n")
                         .encode("latin-1"))
            await writer.drain()
            got = [0]

            def count(n: int) -> None:
                got[0] += n
            rec.status, _, _ = await read_response(reader, "GET", count, count)
            rec.nbytes = got[0]
            rec.end = self.now()
        except (OSError, ValueError, asyncio.IncompleteReadError,
                asyncio.LimitOverrunError) as e:
            rec.error = (type(e).__name__ + ": " + str(e))[:100].replace(",", ";")
        finally:
            if writer is not None:
                writer.close()

    async def bounded(self, rec: Rec, path: str) -> None:
        try:
            await asyncio.wait_for(self.one(rec, path), self.patience)
        except asyncio.TimeoutError:
            rec.error = "abandoned"

    async def arrivals(self, c: LoadClass, tasks: set) -> None:
        rng = random.Random(f"{self.seed}/{c.name}")
        kinds, weights = list(self.mix), list(self.mix.values())
        t, k = 0.0, 0
        while True:
            t += rng.expovariate(c.rate)
            if t >= self.duration:
                return
            kind = rng.choices(kinds, weights)[0]
            path = f"/{kind}/{rng.randrange(PAGES_PER_KIND)}{SUFFIX.get(kind, '')}"
            addr = c.addrs[k % len(c.addrs)]
            k += 1
            try:
                await asyncio.wait_for(self.stop.wait(), max(0.0, t - self.now()))
                return                                  # SIGINT/SIGTERM
            except asyncio.TimeoutError:
                pass
            rec = Rec(c.name, kind, addr, self.now())
            self.records.append(rec)
            task = asyncio.create_task(self.bounded(rec, path))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    async def progress(self) -> None:
        while True:
            await asyncio.sleep(5.0)
            done = {c.name: sum(1 for r in self.records if r.cls == c.name and r.end >= 0)
                    for c in self.classes}
            print(f"siteload: t={self.now():5.1f}s sent={len(self.records)} answered "
                  + " ".join(f"{k}={v}" for k, v in done.items()), file=sys.stderr, flush=True)

    async def run(self) -> None:
        self.t0 = time.monotonic()
        stop_on_signals(self)
        tasks: set = set()
        prog = asyncio.create_task(self.progress())
        await asyncio.gather(*(self.arrivals(c, tasks) for c in self.classes))
        if tasks:      # the last requests may take their patience, not longer
            await asyncio.wait(list(tasks), timeout=self.patience + 1.0)
        prog.cancel()

    def write(self, out: str, start_epoch: float) -> None:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "requests.csv"), "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["class", "kind", "addr", "start", "end", "status", "bytes", "error"])
            for r in self.records:
                w.writerow([r.cls, r.kind, r.addr, f"{r.start:.4f}", f"{r.end:.4f}", r.status,
                            r.nbytes, r.error])
        summary = {"start_epoch": start_epoch, "duration_s": self.duration,
                   "interrupted": self.interrupted,
                   "patience_s": self.patience, "mix": self.mix,
                   "classes": {c.name: {"rate": c.rate, "addrs": len(c.addrs),
                                        "sent": sum(1 for r in self.records if r.cls == c.name),
                                        "answered": sum(1 for r in self.records
                                                        if r.cls == c.name and r.end >= 0)}
                               for c in self.classes}}
        with open(os.path.join(out, "load.json"), "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)


def parse_class(text: str) -> LoadClass:
    """NAME:ADDRS:RATE, ADDRS as 10.10.1.1-20."""
    try:
        name, addrs, rate = text.split(":")
        c = LoadClass(name, parse_addr_range(addrs), float(rate))
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"--class {text!r}: NAME:ADDRS:RATE ({e})") from e
    if c.rate <= 0:
        raise argparse.ArgumentTypeError(f"--class {text!r}: rate must be > 0")
    return c


def parse_mix(text: str) -> dict[str, float]:
    """cgi=0.6,photos=0.2,media=0.2 -> probabilities (normalized)."""
    try:
        mix = {k: float(v) for k, v in (p.split("=") for p in text.split(",") if p)}
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"--mix {text!r}: KIND=P,... ({e})") from e
    total = sum(mix.values())
    if not mix or total <= 0 or min(mix.values()) < 0:
        raise argparse.ArgumentTypeError(f"--mix {text!r}: positive probabilities")
    return {k: v / total for k, v in mix.items()}


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gateway", required=True, metavar="ADDR:PORT")
    ap.add_argument("--host", default="www.example.test", help="the Host header (the site)")
    ap.add_argument("--class", dest="classes", action="append", type=parse_class,
                    required=True, metavar="NAME:ADDRS:RATE")
    ap.add_argument("--mix", type=parse_mix, default=parse_mix("cgi=0.6,photos=0.2,media=0.2"))
    ap.add_argument("--patience", type=float, default=3.0,
                    help="abandon a request not answered within this many seconds")
    ap.add_argument("--duration", type=float, required=True, help="seconds of arrivals")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    host, _, port = args.gateway.rpartition(":")
    load = SiteLoad((host, int(port)), args.host, args.classes, args.mix, args.patience,
                    args.duration, args.seed)
    start = time.time()
    asyncio.run(load.run())
    load.write(args.out, start)
    if load.interrupted:
        print("siteload: interrupted; wrote what was measured", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
