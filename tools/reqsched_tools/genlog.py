# SPDX-License-Identifier: GPL-2.0-or-later
"""A seeded synthetic Squid native access.log (reqsched-load genlog): the same
seed and options give the same log, byte for byte.

- clients: --clients addresses spread over the --subnets (host .11 upwards in
  each); how often a client loads a page is Pareto(1.2)-distributed, so a few
  clients are heavy and most are light, as in a real office;
- arrivals: --pages page loads over --span-s, their times drawn from the
  density 1 + 0.8 sin(2 pi t / day - pi / 2) with day = --day-s (the log's
  span by default: quiet at the start and the end, busiest in the middle);
- pages: SURGE's page model (sessions.py): a main object and
  floor(Pareto(2.43, 1)) embedded objects fetched right after it; object sizes
  lognormal(9.357, 1.318) with a Pareto(1.1) tail above 133 kB;
- repeats: --sites sites of --objects objects each; sites and objects are
  chosen Zipf(1)-popular, and an object's size is fixed by its URL, so popular
  URLs repeat (TCP_HIT or TCP_REFRESH_UNMODIFIED/304 on some repeats);
- methods: a share of the page loads are POSTs (--post) or HEADs (--head);
  --connect of them are https: one CONNECT host:443 line (TCP_TUNNEL) whose
  bytes are the page's; 1% of objects are missing (404);
- sizes: the body plus a 300-byte reply head (0 + 300 for a 304);
- elapsed: 20-300 ms of latency plus the size at 1-20 Mbit/s.
"""
from __future__ import annotations

import bisect
import ipaddress
import math
import random
from typing import TextIO

from .sessions import Dist


def zipf_cdf(n: int, s: float = 1.0) -> list[float]:
    w = [1.0 / (k + 1) ** s for k in range(n)]
    tot = sum(w)
    acc, out = 0.0, []
    for x in w:
        acc += x / tot
        out.append(acc)
    return out


def pick(cdf: list[float], rng: random.Random) -> int:
    return min(len(cdf) - 1, bisect.bisect_left(cdf, rng.random()))


def client_addresses(subnets: list[str], n: int) -> list[str]:
    nets = [ipaddress.ip_network(s, strict=False) for s in subnets]
    hosts = [list(net.hosts())[10:] for net in nets]
    if sum(len(h) for h in hosts) < n:
        raise ValueError(f"{n} clients do not fit in {', '.join(subnets)}")
    return [str(hosts[i % len(nets)][i // len(nets)]) for i in range(n)]


def generate(out: TextIO, *, seed: int = 1, clients: int = 200,
             subnets: tuple[str, ...] = ("10.1.1.0/24", "10.1.2.0/24", "10.2.1.0/24",
                                         "10.3.1.0/24"),
             pages: int = 600, span_s: float = 600.0, day_s: float = 0.0,
             start_epoch: float = 1767258000.0, sites: int = 40, objects: int = 60,
             post: float = 0.03, head: float = 0.01, connect: float = 0.12) -> int:
    """Write the log; returns its number of lines."""
    if clients < 1 or pages < 1 or span_s <= 0 or sites < 1 or objects < 1:
        raise ValueError("clients, pages, sites, objects >= 1 and span_s > 0")
    if not all(0 <= p <= 1 for p in (post, head, connect)) or post + head + connect > 1:
        raise ValueError("post, head, connect are shares in [0, 1] summing to <= 1")
    rng = random.Random(seed)
    day = day_s or span_s
    addrs = client_addresses(list(subnets), clients)
    activity = [rng.paretovariate(1.2) for _ in addrs]
    act_cdf: list[float] = []
    tot = sum(activity)
    for a in activity:
        act_cdf.append((act_cdf[-1] if act_cdf else 0.0) + a / tot)
    site_cdf, obj_cdf = zipf_cdf(sites), zipf_cdf(objects)
    surge, embedded = Dist("surge"), Dist("pareto:2.43:1")
    sizes: dict[str, int] = {}
    seen: set[str] = set()

    def size_of(url: str) -> int:
        if url not in sizes:
            sizes[url] = surge.size(rng)
        return sizes[url]

    def elapsed_ms(size: int) -> int:
        return int(rng.uniform(20, 300) + size * 8 / rng.uniform(1e6, 20e6) * 1000)

    lines: list[tuple[float, str]] = []

    def line(start: float, client: str, code: str, status: int, size: int, method: str,
             url: str, ms: int, ctype: str, site: str) -> None:
        end = start + ms / 1000.0
        hier = "HIER_NONE/-" if code == "TCP_HIT" else \
            f"HIER_DIRECT/192.0.2.{sum(map(ord, site)) % 250 + 1}"
        lines.append((end, f"{end:.3f} {ms:6d} {client} {code}/{status:03d} {size} {method} "
                           f"{url} - {hier} {ctype}"))

    # page arrival times: --pages draws from the day's density (rejection sampling)
    times: list[float] = []
    while len(times) < pages:
        t = rng.uniform(0, span_s)
        if rng.random() * 1.8 <= 1 + 0.8 * math.sin(2 * math.pi * t / day - math.pi / 2):
            times.append(t)
    for t in sorted(times):
        client = addrs[pick(act_cdf, rng)]
        site = f"www.site{pick(site_cdf, rng) + 1}.example"
        start = start_epoch + t
        r = rng.random()
        main = f"http://{site}/page{pick(obj_cdf, rng) + 1}.html"
        objs = [f"http://{site}/static/obj{pick(obj_cdf, rng) + 1}.bin"
                for _ in range(embedded.count(rng))]
        if r < connect:
            total = sum(size_of(u) for u in [main] + objs)
            line(start, client, "TCP_TUNNEL", 200, total, "CONNECT", f"{site}:443",
                 elapsed_ms(total) + 1000, "-", site)
            continue
        if r < connect + post:
            body = surge.size(rng) // 4 + 200
            line(start, client, "TCP_MISS", 200, body, "POST", main.replace(".html", ".cgi"),
                 elapsed_ms(body), "text/html", site)
            continue
        if r < connect + post + head:
            line(start, client, "TCP_MISS", 200, 0, "HEAD", main, elapsed_ms(0), "text/html", site)
            continue
        at = start
        for k, url in enumerate([main] + objs):
            size = size_of(url)
            code, status = "TCP_MISS", 200
            if url in seen and rng.random() < 0.3:
                code, status, size = ("TCP_HIT", 200, size) if rng.random() < 0.5 else \
                    ("TCP_REFRESH_UNMODIFIED", 304, 0)
            elif rng.random() < 0.01:
                status, size = 404, 200
            seen.add(url)
            ms = elapsed_ms(size)
            line(at, client, code, status, size + 300, "GET", url, ms,
                 "text/html" if k == 0 else "application/octet-stream", site)
            if k == 0:
                at += ms / 1000.0 + rng.uniform(0.01, 0.1)   # embedded after the main object
    lines.sort()
    for _, text in lines:
        out.write(text + "\n")
    return len(lines)
