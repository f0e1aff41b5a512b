# SPDX-License-Identifier: GPL-2.0-or-later
"""Faithful replay of a proxy access log (Squid native, Common or Combined).

Each distinct client of the log (its address, or its login with --by-login)
becomes one emulated user with a source address of its own, chosen by the
first matching rule of the client map (a file of "MATCH CLASS ADDRESSES"
lines, or --map):
  MATCH      a client address, a CIDR (10.1.0.0/16), login:NAME, or * (any)
  CLASS      the user's class (a name; it is only a label in the outputs:
             the proxy classifies the user by its address or login)
  ADDRESSES  the source addresses given out to the rule's clients in order of
             first appearance: 10.10.1.1-250 or a,b,c (parse_addr_range);
             more clients than addresses share them round-robin (reported)
Unmapped clients go to --default-class on --default-addrs.

Requests keep their order per client and their logged start times (for the
native format the logged time minus the elapsed time), scaled by --time-scale
(replay time = log time since the first request x SCALE: 0.1 is ten times
faster): open loop, a request is sent when it is due, on an idle keep-alive
connection of its user or a new one (a CONNECT always on a new one, as a
browser does; at most --max-conns per user; a request
that finds them all busy waits, and its lateness shows in requests.csv's
sched column). --closed-loop instead runs each user's requests one after the
other, waiting the log's think time (this start minus the previous request's
end, scaled) between them.

The logged method, status and size are reproduced: the URL keeps its path and
query with its host moved onto one of --servers (stable per logged host), so
repeated URLs stay repeated; the origin is asked for the status and size in
headers (loadengine); POST/PUT send a request body of --post-bytes; CONNECT
opens a tunnel to the server's --tunnel-port and carries the logged bytes. With
--proxy-password, a request with a logged login authenticates to the proxy as
that login (Basic, the one password for all), so login ACLs classify it. A
logged status the origin cannot send (none, 1xx) is asked as 200. Logged sizes
include the proxy's reply head, so replayed responses are larger by that head.
"""
from __future__ import annotations

import asyncio
import ipaddress
import itertools
import json
from dataclasses import dataclass, field
from typing import Optional
from urllib.parse import urlsplit

from . import logparse
from .loadengine import Conn, Engine, Spec, Txn, percentile
from .replay import parse_addr_range, server_for_host

REPLAYED_METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "CONNECT")


@dataclass
class Rule:
    match: str
    cls: str
    addrs: list[str]
    given: int = 0

    def matches(self, client: str, login: str) -> bool:
        if self.match == "*":
            return True
        if self.match.startswith("login:"):
            return login == self.match[6:]
        try:
            ip = ipaddress.ip_address(client)
        except ValueError:
            return client == self.match
        if "/" in self.match:
            return ip in ipaddress.ip_network(self.match, strict=False)
        return client == self.match

    def next_addr(self) -> str:
        a = self.addrs[self.given % len(self.addrs)]
        self.given += 1
        return a


def parse_rule(text: str) -> Rule:
    f = text.split()
    if len(f) != 3:
        raise ValueError(f"client map rule {text!r}: need MATCH CLASS ADDRESSES")
    if f[0] != "*" and not f[0].startswith("login:"):
        try:
            ipaddress.ip_network(f[0], strict=False)
        except ValueError as e:
            raise ValueError(f"client map rule {text!r}: {e}") from e
    return Rule(f[0], f[1], parse_addr_range(f[2]))


class ClientMap:
    def __init__(self, rules: list[Rule], default: Rule):
        self.rules = rules + [default]

    @staticmethod
    def load(path: Optional[str], extra: list[str], default_cls: str,
             default_addrs: str) -> "ClientMap":
        rules = []
        if path:
            with open(path, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    line = line.split("#", 1)[0].strip()
                    if line:
                        try:
                            rules.append(parse_rule(line))
                        except ValueError as e:
                            raise ValueError(f"{path}:{n}: {e}") from e
        rules += [parse_rule(r) for r in extra]
        return ClientMap(rules, Rule("*", default_cls, parse_addr_range(default_addrs)))

    def assign(self, client: str, login: str) -> tuple[str, str]:
        """(class, source address) of a new client."""
        r = next(r for r in self.rules if r.matches(client, login))
        return r.cls, r.next_addr()

    def shared(self) -> int:
        """Clients that got an address another client also has."""
        return sum(max(0, r.given - len(r.addrs)) for r in self.rules)


@dataclass
class Step:
    at: float                      # scaled offset of its start from the log's first
    think: float                   # scaled gap after the previous request's end (>= 0)
    spec: Spec
    line: int                      # its index among the parsed entries


@dataclass
class Emulated:
    id: str
    cls: str
    addr: str
    client: str
    steps: list[Step] = field(default_factory=list)


def target_of(e: logparse.LogEntry, servers: list[str], http_port: int,
              tunnel_port: int) -> str:
    """The logged URL moved onto a testbed server (stable per logged host)."""
    if e.method == "CONNECT":
        host = e.url.rpartition(":")[0]
        return f"{server_for_host(host, servers)}:{tunnel_port}"
    p = urlsplit(e.url)
    path = (p.path or "/") + (f"?{p.query}" if p.query else "")
    port = "" if http_port == 80 else f":{http_port}"
    return f"http://{server_for_host(p.hostname or '', servers)}{port}{path.replace(' ', '%20')}"


def plan(entries: list[logparse.LogEntry], cmap: ClientMap, servers: list[str], *,
         time_scale: float = 1.0, http_port: int = 80, tunnel_port: int = 443,
         post_bytes: int = 1024, max_age: int = 0, by_login: bool = False) -> list[Emulated]:
    """One emulated user per client, its requests in logged start order."""
    users: dict[str, Emulated] = {}
    order = sorted(range(len(entries)), key=lambda i: (entries[i].start, i))
    t0 = entries[order[0]].start if order else 0.0
    last_end: dict[str, float] = {}
    for i in order:
        e = entries[i]
        key = e.login if by_login and e.login != "-" else e.client
        u = users.get(key)
        if u is None:
            cls, addr = cmap.assign(e.client, e.login)
            u = users[key] = Emulated(f"u{len(users) + 1}", cls, addr, key)
        status = e.status if 200 <= e.status <= 999 else 200
        spec = Spec(e.method, target_of(e, servers, http_port, tunnel_port), e.bytes, status,
                    post_bytes if e.method in ("POST", "PUT") else 0,
                    max_age if e.method == "GET" and status == 200 else 0,
                    "" if e.login == "-" else e.login)
        think = max(0.0, e.start - last_end.get(key, e.start)) * time_scale
        last_end[key] = max(last_end.get(key, e.start), e.time)
        u.steps.append(Step((e.start - t0) * time_scale, think, spec, i))
    return list(users.values())


def summary(entries: list[logparse.LogEntry], stats: logparse.ParseStats) -> dict:
    """What the log holds: clients, requests, bytes, duration, sizes, methods."""
    sizes = [e.bytes for e in entries]
    urls: dict[str, int] = {}
    methods: dict[str, int] = {}
    statuses: dict[str, int] = {}
    for e in entries:
        urls[e.url] = urls.get(e.url, 0) + 1
        methods[e.method] = methods.get(e.method, 0) + 1
        k = f"{e.status // 100}xx" if e.status else "none"
        statuses[k] = statuses.get(k, 0) + 1
    starts = [e.start for e in entries]
    return {"lines": stats.lines, "parsed": stats.parsed, "malformed": stats.skipped,
            "first_errors": stats.first_errors,
            "clients": len({e.client for e in entries}), "requests": len(entries),
            "bytes": sum(sizes),
            "duration_s": round(max(e.time for e in entries) - min(starts), 3) if entries else 0,
            "size_bytes": {f"p{p}": percentile([float(x) for x in sizes], p) if sizes else 0
                           for p in (50, 90, 99)} | {"max": max(sizes, default=0)},
            "methods": methods, "statuses": statuses,
            "distinct_urls": len(urls),
            "repeated_requests": sum(n - 1 for n in urls.values())}


def format_summary(s: dict) -> str:
    sz = s["size_bytes"]
    return (f"log: {s['requests']} requests from {s['clients']} clients over "
            f"{s['duration_s']:.0f} s, {s['bytes'] / 1e6:.1f} MB; sizes p50 {sz['p50']:.0f} "
            f"p90 {sz['p90']:.0f} p99 {sz['p99']:.0f} max {sz['max']} B; "
            f"{s['distinct_urls']} distinct URLs ({s['repeated_requests']} repeats); "
            f"methods {json.dumps(s['methods'])}; statuses {json.dumps(s['statuses'])}; "
            f"{s['malformed']} malformed of {s['lines']} lines")


class LogReplay:
    """Runs the emulated users of plan() through the engine."""

    def __init__(self, engine: Engine, users: list[Emulated], closed_loop: bool = False,
                 max_conns: int = 6):
        self.engine = engine
        self.users = users
        self.closed_loop = closed_loop
        self.max_conns = max_conns

    def txn(self, u: Emulated, k: int, st: Step) -> Txn:
        return Txn(f"{u.id}.{k + 1}", u.id, u.cls, u.addr, st.spec.method, st.spec.url, st.at)

    async def closed(self, u: Emulated) -> None:
        eng = self.engine
        await eng.sleep(u.steps[0].at - eng.now())
        if eng.stop.is_set():
            return
        since = eng.enter(u.id, u.cls, u.addr)
        conn: Optional[Conn] = None
        new_id = itertools.count(1).__next__
        try:
            for k, st in enumerate(u.steps):
                if k:
                    await eng.sleep(st.think)
                if eng.stop.is_set():
                    return
                t = self.txn(u, k, st)
                t.sched = eng.now()
                if conn is not None and st.spec.method == "CONNECT":
                    conn.close()            # a tunnel takes a connection of its own
                    conn = None
                conn = await eng.run_one(conn, u.addr, new_id, t, st.spec)
        finally:
            if conn is not None:
                conn.close()
            eng.leave(u.cls, since)

    async def open(self, u: Emulated) -> None:
        eng = self.engine
        idle: list[Conn] = []
        slots = asyncio.Semaphore(self.max_conns)
        new_id = itertools.count(1).__next__
        running: set[asyncio.Task] = set()

        async def one(t: Txn, spec: Spec) -> None:
            try:
                conn = idle.pop() if idle and spec.method != "CONNECT" else None
                kept = await eng.run_one(conn, u.addr, new_id, t, spec)
                if kept is not None:
                    idle.append(kept)
            finally:
                slots.release()

        await eng.sleep(u.steps[0].at - eng.now())
        if eng.stop.is_set():
            return
        since = eng.enter(u.id, u.cls, u.addr)
        try:
            for k, st in enumerate(u.steps):
                await eng.sleep(st.at - eng.now())
                if eng.stop.is_set():
                    break
                await slots.acquire()
                task = asyncio.create_task(one(self.txn(u, k, st), st.spec))
                running.add(task)
                task.add_done_callback(running.discard)
            await asyncio.gather(*running)
        finally:
            for task in list(running):
                task.cancel()
            for c in idle:
                c.close()
            eng.leave(u.cls, since)

    def tasks(self) -> list:
        run = self.closed if self.closed_loop else self.open
        return [run(u) for u in self.users if u.steps]
