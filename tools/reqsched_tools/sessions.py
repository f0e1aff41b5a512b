# SPDX-License-Identifier: GPL-2.0-or-later
"""Sessions of page loads under a load profile (Avalanche-style), for
reqsched-load sessions.

A user runs sessions; a session is a number of pages; a page is a main object
and then its embedded objects, fetched as a browser does: the main object on
the user's first connection, then the embedded objects over up to
`connections` persistent (keep-alive) connections through the proxy, each
taking the next object as soon as it is free; then the user thinks and loads
the next page. The connections are closed when the session ends. Page load
time is the first request's start to the last byte of the page's last object.

Default page composition and think times: SURGE (P. Barford, M. Crovella,
"Generating Representative Web Workloads for Network and Server Performance
Evaluation", ACM SIGMETRICS 1998), the model of Web users whose file-size body
the rest of reqsched already uses:
  object sizes      lognormal(mu 9.357, sigma 1.318) body, Pareto(alpha 1.1,
                    k 133,000 B) tail: "surge" (a lognormal draw above k is
                    redrawn from the Pareto tail)
  embedded objects  Pareto(alpha 2.43, k 1), rounded down: "pareto:2.43:1"
  think (inactive OFF) time  Pareto(alpha 1.5, k 1 s): "pareto:1.5:1", capped
                    at think_max_s (60 s) since its variance is infinite
Pages per session (SURGE has none): 5 by default.

A load profile gives each class phases of (duration s, level at the phase's
end), linear between, from 0 at the start: [[30, 50], [120, 50], [30, 0]] is a
30-s ramp-up to 50, a 120-s steady state and a 30-s ramp-down. The level is
either concurrent users ("users": users start and stop to follow it; a user
told to stop finishes its page first) or new sessions per second
("sessions_per_s": each arrival is a user that runs one session and leaves).
Each user takes a free source address of its class's range ("addrs") and gives
it back when it leaves, so the proxy's ACLs classify it as a real user.

Profile file (TOML or JSON):
  servers = "10.20.0.1-12"          # origin addresses (http port: http_port = 80)
  [[classes]]
  name = "gold"
  addrs = "10.10.1.1-250"
  users = [[30, 50], [120, 50], [30, 0]]     # or sessions_per_s = [[...]]
  connections = 4                   # persistent connections per user (N)
  pages_per_session = "const:5"
  embedded = "pareto:2.43:1"
  main_size = "surge"
  embedded_size = "surge"
  think_s = "pareto:1.5:1"
  think_max_s = 60
  # page_log = "access.log"         # page composition and think times from a log
  # login = "gold{n}"               # proxy login of user n (1, 2, ...; with
                                    # reqsched-load --proxy-password)
Distributions: const:X, exp:MEAN, uniform:LO:HI, lognormal:MU:SIGMA,
pareto:ALPHA:K, surge (sizes). page_log (a path relative to the profile file)
takes main object sizes, embedded object counts and sizes and think times from
an access log instead (pages_of_log(): a client's GET more than 1 s after its
previous request ended starts a page); keys given beside it still win.
"""
from __future__ import annotations

import asyncio
import itertools
import json
import math
import os
import random
import tomllib
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Optional

from . import logparse
from .loadengine import Conn, Engine, Page, Spec, Txn
from .replay import parse_addr_range

SURGE_MU, SURGE_SIGMA = 9.357, 1.318
SURGE_TAIL_K, SURGE_TAIL_ALPHA = 133_000.0, 1.1
MAX_SIZE = 100_000_000
TICK_S = 0.1


@dataclass
class Dist:
    """A distribution named by a spec string (the module's doc lists them), or
    the empirical distribution of measured values (Dist.of())."""
    spec: str
    kind: str = ""
    a: float = 0.0
    b: float = 0.0
    values: list[float] = field(default_factory=list)

    @staticmethod
    def of(values: list[float], what: str) -> "Dist":
        if not values:
            raise ValueError(f"no {what} to draw from")
        return Dist(f"empirical({what}, {len(values)} values)", values=list(values))

    def __post_init__(self) -> None:
        if self.values:
            self.kind = "empirical"
            return
        f = self.spec.split(":")
        self.kind = f[0]
        nargs = {"const": 1, "exp": 1, "uniform": 2, "lognormal": 2, "pareto": 2, "surge": 0}
        if self.kind not in nargs:
            raise ValueError(f"distribution {self.spec!r}: unknown kind "
                             f"(one of {', '.join(nargs)})")
        if len(f) - 1 != nargs[self.kind]:
            raise ValueError(f"distribution {self.spec!r}: {self.kind} takes "
                             f"{nargs[self.kind]} parameters")
        try:
            vals = [float(x) for x in f[1:]]
        except ValueError as e:
            raise ValueError(f"distribution {self.spec!r}: {e}") from e
        if any(not math.isfinite(v) or v < 0 for v in vals):
            raise ValueError(f"distribution {self.spec!r}: parameters must be finite and >= 0")
        self.a, self.b = (vals + [0.0, 0.0])[:2]
        if self.kind == "uniform" and self.b < self.a or \
                self.kind in ("exp", "pareto") and self.a <= 0:
            raise ValueError(f"distribution {self.spec!r}: bad parameters")

    def draw(self, rng: random.Random) -> float:
        if self.kind == "empirical":
            return rng.choice(self.values)
        if self.kind == "const":
            return self.a
        if self.kind == "exp":
            return rng.expovariate(1.0 / self.a)
        if self.kind == "uniform":
            return rng.uniform(self.a, self.b)
        if self.kind == "lognormal":
            return rng.lognormvariate(self.a, self.b)
        if self.kind == "pareto":
            return self.b * rng.paretovariate(self.a)
        x = rng.lognormvariate(SURGE_MU, SURGE_SIGMA)
        return SURGE_TAIL_K * rng.paretovariate(SURGE_TAIL_ALPHA) if x > SURGE_TAIL_K else x

    def size(self, rng: random.Random) -> int:
        return max(1, min(MAX_SIZE, int(self.draw(rng))))

    def count(self, rng: random.Random) -> int:
        return max(0, min(10_000, int(self.draw(rng))))


@dataclass
class PageModel:
    connections: int = 4
    pages_per_session: Dist = field(default_factory=lambda: Dist("const:5"))
    embedded: Dist = field(default_factory=lambda: Dist("pareto:2.43:1"))
    main_size: Dist = field(default_factory=lambda: Dist("surge"))
    embedded_size: Dist = field(default_factory=lambda: Dist("surge"))
    think_s: Dist = field(default_factory=lambda: Dist("pareto:1.5:1"))
    think_max_s: float = 60.0


@dataclass
class ClassLoad:
    name: str
    addrs: list[str]
    phases: list[tuple[float, float]]         # (duration s, level at its end)
    unit: str = "users"                        # users | sessions_per_s
    model: PageModel = field(default_factory=PageModel)
    login: str = ""                            # proxy login template: {n} = user number
    # this process's share of the class (reqsched-load --procs, multiproc.py):
    # of the users 1, 2, ... it runs users part+1, part+1+parts, ... on the
    # addresses addrs[part::parts] of the whole range; 0 of 1 is all of it
    part: int = 0
    parts: int = 1

    def share(self, part: int, parts: int) -> "ClassLoad":
        """Share part (0 .. parts-1) of this whole class: every share's users
        and addresses are disjoint and together they are the class's."""
        return replace(self, addrs=self.addrs[part::parts], part=part, parts=parts)

    def users_at(self, t: float) -> int:
        """How many of the class's round(level(t)) users are this share's."""
        return len(range(self.part, round(self.level(t)), self.parts))

    def rate_at(self, t: float) -> float:
        """This share's new sessions per second at t (sessions_per_s)."""
        return self.level(t) / self.parts

    def number(self, i: int) -> int:
        """The class-wide number of this share's i-th user (i = 0, 1, ...)."""
        return self.part + 1 + self.parts * i

    @property
    def duration(self) -> float:
        return sum(d for d, _ in self.phases)

    def level(self, t: float) -> float:
        """The profile's level at t s (linear within a phase, from 0 at 0)."""
        start, prev = 0.0, 0.0
        for d, lvl in self.phases:
            if t < start + d:
                return prev + (lvl - prev) * (t - start) / d
            start, prev = start + d, lvl
        return 0.0


def pages_of_log(entries: list[logparse.LogEntry], gap_s: float = 1.0) -> dict[str, Dist]:
    """The page composition of a log: per client, a GET that starts more than
    gap_s after the client's previous request ended begins a page (its main
    object); the GETs before the next such one are its embedded objects.
    Returns main_size, embedded, embedded_size and think_s (the gaps between a
    page's last end and the next page's start) as empirical distributions."""
    mains: list[float] = []
    counts: list[float] = []
    emb: list[float] = []
    think: list[float] = []
    last_end: dict[str, float] = {}
    open_page: dict[str, int] = {}               # client -> index into counts
    for e in sorted(entries, key=lambda e: e.start):
        if e.method != "GET":
            continue
        prev = last_end.get(e.client)
        if prev is None or e.start - prev > gap_s:
            if prev is not None:
                think.append(e.start - prev)
            mains.append(float(max(1, e.bytes)))
            counts.append(0.0)
            open_page[e.client] = len(counts) - 1
        else:
            counts[open_page[e.client]] += 1
            emb.append(float(max(1, e.bytes)))
        last_end[e.client] = e.time if prev is None else max(prev, e.time)
    out = {"main_size": Dist.of(mains, "main object sizes"),
           "embedded": Dist.of(counts, "embedded object counts")}
    if emb:
        out["embedded_size"] = Dist.of(emb, "embedded object sizes")
    if think:
        out["think_s"] = Dist.of(think, "think times")
    return out


def _num(v: Any, what: str, lo: float, hi: float) -> float:
    x = float(v)
    if not (math.isfinite(x) and lo <= x <= hi):
        raise ValueError(f"{what} {v!r} not in [{lo:g}, {hi:g}]")
    return x


def log_pages(path: str, base: str) -> dict[str, Dist]:
    """pages_of_log() of an access log (a relative path: from base)."""
    stats = logparse.ParseStats()
    with logparse.open_text(os.path.join(base, path)) as f:
        return pages_of_log(logparse.parse_access_log(f, stats))


def load_profile(raw: dict[str, Any], base: str = ".") -> tuple[list[ClassLoad], list[str], int]:
    """(classes, servers, http port) of a parsed profile file (base: the
    directory relative paths in it start from)."""
    classes = []
    names = set()
    for i, c in enumerate(raw.get("classes", [])):
        where = f"classes[{i}]"
        try:
            name = str(c["name"])
            units = [u for u in ("users", "sessions_per_s") if u in c]
            if len(units) != 1:
                raise ValueError("give users or sessions_per_s (not both)")
            phases = [(_num(d, "phase duration", 0.001, 86400), _num(v, "level", 0, 100_000))
                      for d, v in c[units[0]]]
            if not phases:
                raise ValueError(f"{units[0]} has no phase")
            m = PageModel(connections=int(_num(c.get("connections", 4), "connections", 1, 64)),
                          think_max_s=_num(c.get("think_max_s", 60), "think_max_s", 0, 3600))
            if "page_log" in c:
                for key, d in log_pages(str(c["page_log"]), base).items():
                    setattr(m, key, d)
            for key in ("pages_per_session", "embedded", "main_size", "embedded_size",
                        "think_s"):
                if key in c:
                    setattr(m, key, Dist(str(c[key])))
            cl = ClassLoad(name, parse_addr_range(str(c["addrs"])), phases, units[0], m,
                           str(c.get("login", "")))
            if cl.login and "{n}" not in cl.login:
                raise ValueError(f"login {cl.login!r} needs {{n}} (the user's number)")
        except KeyError as e:
            raise ValueError(f"{where}: missing key {e}") from e
        except (TypeError, ValueError) as e:
            raise ValueError(f"{where}: {e}") from e
        if name in names:
            raise ValueError(f"{where}: class {name!r} given twice")
        names.add(name)
        classes.append(cl)
    if not classes:
        raise ValueError("a profile needs [[classes]]")
    return (classes, parse_addr_range(str(raw.get("servers", "10.20.0.1-12"))),
            int(_num(raw.get("http_port", 80), "http_port", 1, 65535)))


def read_profile(path: str) -> dict[str, Any]:
    with open(path, "rb") as f:
        return json.load(f) if path.endswith(".json") else tomllib.load(f)


@dataclass
class PagePlan:
    """A page a user loads: think `think` s, then the main object (objects[0])
    and its embedded objects, as (URL, size); a session other than the
    previous page's starts on new connections."""
    pid: str
    session: int
    think: float
    objects: list[tuple[str, int]]


@dataclass
class Planned:
    """A user of a class's schedule: started at `start`, told to leave at
    `leave` (s since the start); an arrival (sessions_per_s) runs one session
    and is refused without a free address, the others wait for one."""
    number: int
    start: float
    leave: float
    arrival: bool


def schedule(c: ClassLoad) -> list[Planned]:
    """When c's users start and are told to leave, on TICK_S ticks: users
    profiles start users while fewer than round(level) stay and tell the
    latest started to leave when more do; sessions_per_s profiles start
    level x TICK_S arrivals per tick (the fractions carried); every user
    still there is told to leave at the first tick past the profile."""
    out: list[Planned] = []
    staying: list[Planned] = []
    owed, k = 0.0, 0
    while (t := round(k * TICK_S, 6)) < c.duration:
        if c.unit == "users":
            want = c.users_at(t)
            while len(staying) < want:
                staying.append(Planned(c.number(len(out)), t, -1.0, False))
                out.append(staying[-1])
            for u in staying[want:]:
                u.leave = t
            del staying[want:]
        else:
            owed += c.rate_at(t) * TICK_S
            while owed >= 1.0:
                owed -= 1.0
                out.append(Planned(c.number(len(out)), t, -1.0, True))
        k += 1
    for u in out:
        if u.leave < 0:
            u.leave = round(k * TICK_S, 6)
    return out


class SessionLoad:
    """Runs the classes' profiles through the engine (engine "python"), or
    gives reqsched-loadc their schedules and pages (cengine.py): the
    schedule (schedule()) and every user's pages (pages()) are drawn here
    for both."""

    def __init__(self, engine: Engine, classes: list[ClassLoad], servers: list[str],
                 http_port: int = 80, seed: int = 1):
        self.engine = engine
        self.classes = classes
        self.servers = servers
        self.port = "" if http_port == 80 else f":{http_port}"
        self.seed = seed
        # users the classes lacked a free address for: at most at once waiting
        # (users), arrivals refused (sessions_per_s)
        self.no_address = 0

    def url(self, rng: random.Random, path: str) -> str:
        return f"http://{self.servers[rng.randrange(len(self.servers))]}{self.port}{path}"

    @staticmethod
    def uid(c: ClassLoad, n: int) -> str:
        return f"{c.name}-{n}"

    def pages(self, c: ClassLoad, uid: str, sessions: Optional[int]) -> Iterator[PagePlan]:
        """The pages of user uid (sessions of them; None: without end), drawn
        from its own seeded generator."""
        m = c.model
        rng = random.Random(f"{self.seed}/{uid}")
        for s in itertools.count(1) if sessions is None else range(1, sessions + 1):
            for p in range(max(1, m.pages_per_session.count(rng))):
                think = min(m.think_s.draw(rng), m.think_max_s) if p else 0.0
                pid = f"{uid}.{s}.{p + 1}"
                objs = [(self.url(rng, f"/page/{pid}/main"), m.main_size.size(rng))]
                objs += [(self.url(rng, f"/page/{pid}/obj{k + 1}"), m.embedded_size.size(rng))
                         for k in range(m.embedded.count(rng))]
                yield PagePlan(pid, s, think, objs)

    async def page(self, uid: str, c: ClassLoad, addr: str, login: str,
                   conns: list[Optional[Conn]], new_id: Callable[[], int], pp: PagePlan) -> None:
        eng = self.engine
        pg = Page(pp.pid, uid, c.name, eng.now())
        eng.pages.append(pg)

        async def fetch(slot: int, k: int, role: str) -> None:
            url, size = pp.objects[k]
            t = Txn(f"{pp.pid}.{k}", uid, c.name, addr, "GET", url, eng.now(), page=pp.pid,
                    role=role)
            conns[slot] = await eng.run_one(conns[slot], addr, new_id, t,
                                            Spec("GET", url, size, login=login))
            pg.objects += 1
            pg.bytes += t.bytes
            pg.errors += bool(t.error)

        await fetch(0, 0, "main")
        todo = list(range(1, len(pp.objects)))

        async def worker(slot: int) -> None:
            while todo and not eng.stop.is_set():
                await fetch(slot, todo.pop(0), "embedded")
        await asyncio.gather(*(worker(s) for s in range(min(c.model.connections, len(todo)))))
        pg.end = eng.now()

    async def user(self, c: ClassLoad, pu: Planned, addr: str, leave: asyncio.Event) -> None:
        """A user: its pages until told to leave (or its one session ends)."""
        eng, m = self.engine, c.model
        uid = self.uid(c, pu.number)
        login = c.login.replace("{n}", str(pu.number))
        since = eng.enter(uid, c.name, addr)
        conns: list[Optional[Conn]] = [None] * m.connections
        new_id = itertools.count(1).__next__
        session = 0
        try:
            for pp in self.pages(c, uid, 1 if pu.arrival else None):
                if leave.is_set() or eng.stop.is_set():
                    break
                if pp.session != session:
                    for cn in conns:
                        if cn is not None:
                            cn.close()
                    conns = [None] * m.connections
                    new_id = itertools.count(1).__next__
                    session = pp.session
                if pp.think > 0:
                    try:
                        await asyncio.wait_for(leave.wait(), pp.think)
                    except asyncio.TimeoutError:
                        pass
                    if leave.is_set() or eng.stop.is_set():
                        break
                await self.page(uid, c, addr, login, conns, new_id, pp)
        finally:
            for cn in conns:
                if cn is not None:
                    cn.close()
            eng.leave(c.name, since)

    async def drive(self, c: ClassLoad) -> None:
        """Start and tell to leave c's users as schedule() says, every TICK_S;
        a user without a free address waits for one (an arrival is refused)."""
        eng = self.engine
        free = list(c.addrs)
        ticks: dict[int, tuple[list[Planned], list[Planned]]] = {}
        for pu in schedule(c):
            ticks.setdefault(round(pu.start / TICK_S), ([], []))[0].append(pu)
            ticks.setdefault(round(pu.leave / TICK_S), ([], []))[1].append(pu)
        running: dict[int, tuple[asyncio.Task, asyncio.Event, str]] = {}
        waiting: list[Planned] = []
        try:
            for k in range(max(ticks, default=-1) + 1):
                await eng.sleep(k * TICK_S - eng.now())
                if eng.stop.is_set():
                    break
                for n, r in [(n, r) for n, r in running.items() if r[0].done()]:
                    del running[n]
                    free.append(r[2])
                starts, leaves = ticks.get(k, ([], []))
                for pu in leaves:
                    if pu.number in running:
                        running[pu.number][1].set()
                    elif pu in waiting:
                        waiting.remove(pu)
                for pu in starts:
                    if pu.arrival and not free:
                        self.no_address += 1
                    else:
                        waiting.append(pu)
                while waiting and free:
                    pu, addr, ev = waiting.pop(0), free.pop(0), asyncio.Event()
                    running[pu.number] = (asyncio.create_task(self.user(c, pu, addr, ev)),
                                          ev, addr)
                self.no_address = max(self.no_address, len(waiting))
            for r in running.values():
                r[1].set()
            await asyncio.gather(*(r[0] for r in running.values()), return_exceptions=True)
        finally:
            for r in running.values():
                r[0].cancel()

    def tasks(self) -> list:
        return [self.drive(c) for c in self.classes]

    def duration(self) -> float:
        return max(c.duration for c in self.classes)
