# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-prober - profile a website for the mQoS gateway (the paper's
server prober, section 3.1): what each page costs the server in CPU, disk and
bandwidth, as a % of each resource's capacity.

1. Request profiling: crawl the site from its home page one request at a
   time, following links and embedded objects (a, img, script, link, iframe,
   source) on the same site, and read reqsched-monitor's counters before and
   after each request: the difference is what the request consumed (CPU
   seconds, bytes read from disk, bytes sent), its response time how long.
2. Server profiling: the capacity of each resource, given
   (``--capacity cpu=2,disk=80e6,bw=12.5e6``: cores, disk bytes/s, sent
   bytes/s) or measured by saturating the server (``--saturate N S``: N
   concurrent clients for S seconds on the page that costs most of each
   resource; the capacity is the rate the counters then show).
3. The page table: one line per URL with the % of each capacity a request
   holds while it is served, (consumed / response time) / capacity, at most
   100 %; this is the cost vector the gateway gives rs_enqueue_cost().

    reqsched-prober --site http://www.example.test/ --monitor http://www.example.test:9181 \\
        --capacity cpu=2,disk=80e6,bw=12.5e6 --out pages.table

Table format (text, '#' comments): a header line ``resources cpu disk bw``,
``capacity`` with the three capacities, then ``URL COST_CPU COST_DISK COST_BW``.
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import urllib.request
from collections import deque
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Callable, Optional
from urllib.parse import urldefrag, urljoin, urlsplit

from .monitor import Counters

RESOURCES = ("cpu", "disk", "bw")
LINK_ATTRS = {"a": "href", "img": "src", "script": "src", "link": "href",
              "iframe": "src", "source": "src"}

Fetch = Callable[[str], tuple[bytes, str]]      # url -> (body, content type)
Read = Callable[[], Counters]


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        want = LINK_ATTRS.get(tag)
        for k, v in attrs:
            if k == want and v:
                self.found.append(v)


def links(base: str, html: str) -> list[str]:
    """The links and embedded objects of a page that stay on base's site,
    absolute, without fragments, in document order, each once."""
    p = _Links()
    p.feed(html)
    site = urlsplit(base)[:2]
    out: list[str] = []
    for ref in p.found:
        url = urldefrag(urljoin(base, ref.strip()))[0]
        if urlsplit(url)[:2] == site and url not in out:
            out.append(url)
    return out


@dataclass
class Sample:
    url: str
    seconds: float                  # response time
    consumed: tuple[float, ...]     # cpu seconds, disk bytes, sent bytes


def delta(a: Counters, b: Counters) -> tuple[float, ...]:
    return (max(b.cpu_s - a.cpu_s, 0.0), float(max(b.disk_read_bytes - a.disk_read_bytes, 0)),
            float(max(b.net_tx_bytes - a.net_tx_bytes, 0)))


def crawl(start: str, fetch: Fetch, read: Read, max_pages: int = 1000,
          clock: Callable[[], float] = time.monotonic) -> list[Sample]:
    """Breadth-first from start, one request at a time, each between two
    counter readings; HTML pages are parsed for more."""
    seen, todo = {start}, deque([start])
    out: list[Sample] = []
    while todo and len(out) < max_pages:
        url = todo.popleft()
        before, t0 = read(), clock()
        try:
            body, ctype = fetch(url)
        except OSError as e:
            print(f"reqsched-prober: {url}: {e}", file=sys.stderr)
            continue
        t1, after = clock(), read()
        out.append(Sample(url, t1 - t0, delta(before, after)))
        if ctype.split(";")[0].strip() == "text/html":
            for u in links(url, body.decode("utf-8", "replace")):
                if u not in seen:
                    seen.add(u)
                    todo.append(u)
    return out


def costs(s: Sample, capacity: tuple[float, ...]) -> tuple[float, ...]:
    """% of each capacity the request held while served (at most 100)."""
    secs = max(s.seconds, 1e-6)
    return tuple(min(100.0, 100.0 * c / secs / cap) for c, cap in zip(s.consumed, capacity))


def saturate(url: str, fetch: Fetch, read: Read, clients: int, seconds: float,
             clock: Callable[[], float] = time.monotonic) -> tuple[float, ...]:
    """Rates of each counter (per second) while `clients` threads request
    url back to back for `seconds`."""
    stop = clock() + seconds

    def loop() -> None:
        while clock() < stop:
            try:
                fetch(url)
            except OSError:
                pass
    threads = [threading.Thread(target=loop, daemon=True) for _ in range(clients)]
    a = read()
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 30)
    b = read()
    return tuple(x / max(b.t - a.t, 1e-6) for x in delta(a, b))


def measure_capacity(samples: list[Sample], fetch: Fetch, read: Read, clients: int,
                     seconds: float) -> tuple[float, ...]:
    """Each resource's capacity: the rate it reaches when the page that
    consumes most of it per second is requested by `clients` at once."""
    cap = []
    for i in range(len(RESOURCES)):
        top = max(samples, key=lambda s: s.consumed[i] / max(s.seconds, 1e-6))
        cap.append(saturate(top.url, fetch, read, clients, seconds)[i])
    return tuple(cap)


def write_table(path: Path, capacity: tuple[float, ...], rows: list[tuple[str, tuple[float, ...]]]) -> None:
    lines = ["# reqsched-prober page table: URL and % of each capacity held while served",
             "resources " + " ".join(RESOURCES),
             "capacity " + " ".join(f"{c:.6g}" for c in capacity)]
    lines += [f"{url} " + " ".join(f"{c:.3f}" for c in cost) for url, cost in rows]
    path.write_text("\n".join(lines) + "\n")


def read_table(path: Path) -> tuple[tuple[float, ...], dict[str, tuple[float, ...]]]:
    """(capacities, {url: costs}); ValueError names a bad line."""
    capacity: tuple[float, ...] = ()
    rows: dict[str, tuple[float, ...]] = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        f = line.split("#", 1)[0].split()
        if not f:
            continue
        try:
            if f[0] == "resources":
                if tuple(f[1:]) != RESOURCES:
                    raise ValueError(f"resources must be {' '.join(RESOURCES)}")
            elif f[0] == "capacity":
                capacity = tuple(float(x) for x in f[1:])
                if len(capacity) != len(RESOURCES) or not all(c > 0 for c in capacity):
                    raise ValueError("one capacity > 0 per resource")
            else:
                cost = tuple(float(x) for x in f[1:])
                if len(cost) != len(RESOURCES) or not all(0 <= c <= 100 for c in cost):
                    raise ValueError("URL and one cost in 0..100 per resource")
                rows[f[0]] = cost
        except ValueError as e:
            raise ValueError(f"{path}:{n}: {e}") from None
    if not capacity:
        raise ValueError(f"{path}: no capacity line")
    return capacity, rows


def parse_capacity(text: str) -> tuple[float, ...]:
    """'cpu=2,disk=80e6,bw=12.5e6' -> (2.0, 8e7, 1.25e7)."""
    got = {}
    for part in text.split(","):
        k, _, v = part.partition("=")
        if k not in RESOURCES or k in got:
            raise ValueError(f"unknown or repeated resource '{k}'")
        got[k] = float(v)
        if not got[k] > 0 or got[k] == float("inf"):
            raise ValueError(f"{k}: capacity must be > 0")
    if set(got) != set(RESOURCES):
        raise ValueError("give cpu, disk and bw")
    return tuple(got[r] for r in RESOURCES)


def http_fetch(timeout: float = 30.0) -> Fetch:
    def fetch(url: str) -> tuple[bytes, str]:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.read(), r.headers.get("Content-Type", "")
    return fetch


def monitor_read(base: str, timeout: float = 10.0) -> Read:
    def read() -> Counters:
        with urllib.request.urlopen(base.rstrip("/") + "/counters", timeout=timeout) as r:
            return Counters(**json.loads(r.read()))
    return read


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="reqsched-prober", description=__doc__.split("\n")[0])
    ap.add_argument("--site", required=True, help="the home page URL")
    ap.add_argument("--monitor", required=True, help="reqsched-monitor's base URL")
    ap.add_argument("--max-pages", type=int, default=1000)
    cap = ap.add_mutually_exclusive_group(required=True)
    cap.add_argument("--capacity", type=parse_capacity, help="cpu=CORES,disk=BYTES/S,bw=BYTES/S")
    cap.add_argument("--saturate", nargs=2, type=float, metavar=("CLIENTS", "SECONDS"))
    ap.add_argument("--out", type=Path, required=True, help="the page table")
    args = ap.parse_args(argv)
    if args.max_pages < 1:
        ap.error("--max-pages must be >= 1")
    fetch, read = http_fetch(), monitor_read(args.monitor)
    samples = crawl(args.site, fetch, read, args.max_pages)
    if not samples:
        print("reqsched-prober: nothing fetched", file=sys.stderr)
        return 1
    if args.capacity:
        capacity = args.capacity
    else:
        clients, seconds = int(args.saturate[0]), args.saturate[1]
        if clients < 1 or not seconds > 0:
            ap.error("--saturate CLIENTS >= 1, SECONDS > 0")
        capacity = measure_capacity(samples, fetch, read, clients, seconds)
        if not all(c > 0 for c in capacity):
            print(f"reqsched-prober: a capacity measured 0 ({capacity}); give --capacity",
                  file=sys.stderr)
            return 1
    write_table(args.out, capacity, [(s.url, costs(s, capacity)) for s in samples])
    print(f"reqsched-prober: {len(samples)} pages, capacities "
          + ", ".join(f"{r} {c:.6g}" for r, c in zip(RESOURCES, capacity))
          + f": {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
