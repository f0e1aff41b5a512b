# SPDX-License-Identifier: GPL-2.0-or-later
"""Tsung (Debian's tsung 1.7) as the engine of one class of a sessions
profile, for reqsched-load tsung (doc/testbed.md, "Scale").

config() writes the class as a Tsung configuration:
  addresses   every address of the class is an <ip> of the client: Tsung gives
              each new user the next one (round robin), so up to len(addrs)
              users that arrive one after another each have their own;
  users       ("users" profiles) one static <user> per user k = 1 .. max level,
              started when the profile's level first reaches k; it loads pages
              until the level falls below k again (the latest user leaves
              first, as reqsched-load's own users do): a deadline set at its
              start (setdynvars eval: Erlang's clock + its lifetime, the next
              line of the lives file, so the k-th user started reads the k-th
              lifetime) is checked after each page;
  sessions_per_s  arrival phases of STEP_S each at the step's mean rate (a
              linear ramp becomes a staircase); each arrival runs one session
              of pages_per_session pages and leaves;
  pages       a page is a <transaction name="page">: the main object, then its
              embedded objects one after another on the user's one keep-alive
              connection (Tsung has no parallel connections within a user:
              "connections" is not honoured), then the think time;
  draws       sizes, embedded counts, pages per session (at most MAX_PAGES)
              and think times are drawn (seeded) into VARIANTS session
              variants, which users take in turn (static users, who loop over
              their variant's pages) or at random (arrivals); think times
              const and exp stay Tsung's own (fixed, random="true" is
              exponential), the others are the variant's drawn values;
  proxy       through a proxy: the proxy is the <server>, URLs are absolute
              (option http_use_server_as_proxy); direct: the origins are the
              servers and URLs relative;
  origin      each request names its answer (X-Reqsched-Size, -Status) as
              reqsched-load's do.
A profile's classes on their own address ranges need one Tsung run each
(--class): Tsung picks a user's client address independently of its session.

convert() turns Tsung's per-request log (tsung.dump, dumptraffic="protocol":
end time, user, method, URL, status, size, duration) into reqsched-load's
outputs through an Engine: transactions, bytes (by the second the response
ended), errors, latency percentiles, pages and page load times (a page is a
user's main object to the end of its last embedded object) map; not logged
by Tsung, so empty or approximate: the source address (addr empty), the first
byte (-1), the connection, and active users (a user counts from its first
request to the end of its last, not through a last think time). The clock
starts at the first request. Without the dump (--no-dump, cheaper for Tsung)
only totals() of tsung.log remain: requests and errors.
"""
from __future__ import annotations

import glob
import math
import os
import random
import resource
import select
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Optional

from .loadengine import Engine, Page, Txn
from .sessions import ClassLoad, Dist

STEP_S = 1.0
VARIANTS = 20
MAX_PAGES = 50
TSUNG = "tsung"
DTD = "/usr/share/tsung/tsung-1.0.dtd"


@dataclass
class PageDraw:
    main: int
    embedded: list[int]
    think_s: float                 # after the page (drawn; unused for const/exp think)


def draw_variants(c: ClassLoad, seed: int, n: int = VARIANTS) -> list[list[PageDraw]]:
    """n sessions of c's page model, seeded."""
    rng = random.Random(f"{seed}/tsung/{c.name}")
    m = c.model
    out = []
    for _ in range(n):
        pages = [PageDraw(m.main_size.size(rng),
                          [m.embedded_size.size(rng) for _ in range(m.embedded.count(rng))],
                          min(m.think_s.draw(rng), m.think_max_s))
                 for _ in range(min(MAX_PAGES, max(1, m.pages_per_session.count(rng))))]
        out.append(pages)
    return out


def think_element(parent: ET.Element, d: Dist, drawn: float, cap: float) -> None:
    if d.kind == "const":
        v, rnd = min(d.a, cap), "false"
    elif d.kind == "exp":
        v, rnd = min(d.a, cap), "true"
    else:
        v, rnd = drawn, "false"
    if v > 0:
        ET.SubElement(parent, "thinktime", value=f"{v:.3f}", random=rnd)


def page_elements(parent: ET.Element, c: ClassLoad, pg: PageDraw, name: str, base: str) -> None:
    """One page (a transaction) then its think time, into parent."""
    tr = ET.SubElement(parent, "transaction", name="page")
    for k, size in enumerate([pg.main] + pg.embedded):
        path = f"/page/{c.name}.{name}/{'main' if k == 0 else f'obj{k}'}"
        http = ET.SubElement(ET.SubElement(tr, "request"), "http", url=base + path,
                             method="GET", version="1.1")
        ET.SubElement(http, "http_header", name="X-Reqsched-Size", value=str(size))
        ET.SubElement(http, "http_header", name="X-Reqsched-Status", value="200")
    think_element(parent, c.model.think_s, pg.think_s, c.model.think_max_s)


# setdynvars eval: a string result would be taken as a list of values, one
# per variable ("1" sets 49); an integer or a binary is one value. Each static
# user reads its lifetime (ms) as the next line of the lives file (Tsung's
# file server, in order): the k-th user started reads the k-th line.
DEADLINE = ("fun({_, D}) -> {ok, L} = ts_dynvars:lookup(life, D), "
            "erlang:system_time(millisecond) + list_to_integer(ts_utils:term_to_list(L)) end.")
ALIVE = ("fun({_, D}) -> {ok, T} = ts_dynvars:lookup(deadline, D), "
         "case erlang:system_time(millisecond) < T of "
         "true -> <<\"1\">>; false -> <<\"0\">> end end.")


def lives(c: ClassLoad) -> str:
    """The lives file of a users profile: user k's lifetime in ms on line k."""
    return "".join(f"{int((b - a) * 1000)}\n" for a, b in user_lifetimes(c))


def user_lifetimes(c: ClassLoad) -> list[tuple[float, float]]:
    """(start, end) in s of the users 1 .. max level of a users profile: user
    k runs while round(level) >= k (sampled every 0.1 s, as the engine ticks)."""
    ticks = int(c.duration / 0.1) + 1
    levels = [round(c.level(i * 0.1)) for i in range(ticks)] + [0]
    spans: list[tuple[float, float]] = []
    start: dict[int, float] = {}
    for i, lvl in enumerate(levels):
        for k in range(1, lvl + 1):
            start.setdefault(k, i * 0.1)
        for k in [k for k in start if k > lvl]:
            spans.append((start.pop(k), min(i * 0.1, c.duration)))
    return sorted(spans)


def config(c: ClassLoad, servers: list[str], port: int, seed: int, grace_s: float,
           proxy: Optional[tuple[str, int]] = None, hosts: tuple[str, ...] = ("localhost",),
           dump: bool = True, lives_path: str = "lives.csv") -> ET.Element:
    """The Tsung configuration (the <tsung> element) of class c; Tsung stops
    every user grace_s after the profile's end. A users profile reads its
    users' lifetimes from lives_path (write lives(c) there)."""
    root = ET.Element("tsung", loglevel="notice", version="1.0",
                      dumptraffic="protocol" if dump else "false")
    clients = ET.SubElement(root, "clients")
    for i, h in enumerate(hosts):
        cl = ET.SubElement(clients, "client", host=h, maxusers="60000",
                           use_controller_vm="true" if h == "localhost" else "false")
        for addr in c.addrs[i::len(hosts)]:
            ET.SubElement(cl, "ip", value=addr)
    srv = ET.SubElement(root, "servers")
    if proxy:
        ET.SubElement(srv, "server", host=proxy[0], port=str(proxy[1]), type="tcp")
        hostport = "" if port == 80 else f":{port}"
        base = f"http://{servers[0]}{hostport}"
    else:
        for host in servers:
            ET.SubElement(srv, "server", host=host, port=str(port), type="tcp")
        base = ""
    load = ET.SubElement(root, "load", duration=str(math.ceil(c.duration + grace_s)),
                         unit="second")
    variants = draw_variants(c, seed)
    sessions = ET.Element("sessions")
    if c.unit == "users":
        spans = user_lifetimes(c)
        for v, pages in enumerate(variants[:len(spans)]):
            looping_session(sessions, c, pages, f"v{v}", base)
        for k, (a, _) in enumerate(spans):
            # integer ms: Tsung 1.7's static launcher waits a float start time forever
            ET.SubElement(load, "user", session=f"v{k % len(variants)}",
                          start_time=str(round(a * 1000)), unit="millisecond")
    else:
        for v, pages in enumerate(variants):
            s = ET.SubElement(sessions, "session", name=f"v{v}", weight="1", type="ts_http")
            for p, pg in enumerate(pages):
                page_elements(s, c, pg, f"v{v}.{p + 1}", base)
        t, phase = 0.0, 1
        while t < c.duration - 1e-9:
            d = min(STEP_S, c.duration - t)
            rate = sum(c.level(t + d * (i + 0.5) / 10) for i in range(10)) / 10
            ph = ET.SubElement(load, "arrivalphase", phase=str(phase), duration=f"{d * 1000:.0f}",
                               unit="millisecond")
            # Tsung needs a positive rate: a step of rate ~0 gets one arrival per hour
            ET.SubElement(ph, "users", arrivalrate=f"{max(rate, 1 / 3600) * 3600:.3f}",
                          unit="hour")
            t, phase = t + d, phase + 1
    opts = ET.SubElement(root, "options")
    if proxy:
        ET.SubElement(opts, "option", type="ts_http", name="http_use_server_as_proxy",
                      value="true")
    if c.unit == "users":
        ET.SubElement(opts, "option", name="file_server", id="lives", value=lives_path)
    root.append(sessions)
    return root


def looping_session(sessions: ET.Element, c: ClassLoad, pages: list[PageDraw], name: str,
                    base: str) -> None:
    """A static user's session: its lifetime from the lives file, then its
    variant's pages over and over, each page followed by the deadline check,
    until that lifetime after its start."""
    s = ET.SubElement(sessions, "session", name=name, weight="1", type="ts_http")
    life = ET.SubElement(s, "setdynvars", sourcetype="file", fileid="lives", delimiter=";",
                         order="iter")
    ET.SubElement(life, "var", name="life")
    dl = ET.SubElement(s, "setdynvars", sourcetype="eval", code=DEADLINE)
    ET.SubElement(dl, "var", name="deadline")
    rep = ET.SubElement(s, "repeat", name="pages", max_repeat="100000000")
    parent = rep
    for p, pg in enumerate(pages):
        page_elements(parent, c, pg, f"{name}.{p + 1}", base)
        alive = ET.SubElement(parent, "setdynvars", sourcetype="eval", code=ALIVE)
        ET.SubElement(alive, "var", name="alive")
        if p + 1 < len(pages):
            parent = ET.SubElement(parent, "if", var="alive", eq="1")
    ET.SubElement(rep, "while", var="alive", eq="1")


def write_config(root: ET.Element, path: str) -> None:
    ET.indent(root)
    with open(path, "w", encoding="utf-8") as f:
        f.write(f'<?xml version="1.0"?>\n<!DOCTYPE tsung SYSTEM "{DTD}">\n')
        f.write(ET.tostring(root, encoding="unicode"))
        f.write("\n")


# Tsung 1.7 writes tsung.dump with delayed_write (5 s) and exits without closing
# it: the last seconds of requests were lost. So it runs with -k (the controller
# stays after the test), is given FLUSH_S to write them, then stopped.
FLUSH_S = 6.0
DONE = b"All slaves have stopped"


def epmd_running() -> bool:
    """Erlang's port mapper answers (it outlives the tsung that started it)."""
    try:
        return subprocess.run(["epmd", "-names"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              check=False, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def stop_epmd(wait_s: float = 10.0) -> None:
    """Stop the port mapper tsung started as a daemon: it refuses while the
    Erlang nodes that tsung left are still exiting, so ask again until it
    stops (at most wait_s)."""
    deadline = time.monotonic() + wait_s
    while epmd_running() and time.monotonic() < deadline:
        subprocess.run(["epmd", "-kill"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False, timeout=10)
        time.sleep(0.2)


def run(conf: str, logdir: str, bound_s: float, rsh: str = "") -> str:
    """Run tsung on conf (at most bound_s, then it is killed; rsh: its remote
    shell, ssh by default); returns the directory of its logs."""
    need = 4096 + 2 * sum(1 for line in open(conf, encoding="utf-8") if "<ip " in line)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(need, 65536), hard), hard))
    os.makedirs(logdir, exist_ok=True)
    started_epmd = not epmd_running()
    # -i: a controller of its own (tsung_controller<pid>@host), so runs side
    # by side do not collide on Erlang's node name
    p = subprocess.Popen([TSUNG, "-f", conf, "-l", logdir, "-n", "-k", "-i", str(os.getpid()),
                          *(["-r", rsh] if rsh else []), "start"],
                         stdout=subprocess.PIPE, start_new_session=True)
    deadline, done = time.monotonic() + bound_s, False
    try:
        assert p.stdout is not None
        os.set_blocking(p.stdout.fileno(), False)
        while not done and p.poll() is None and time.monotonic() < deadline:
            if select.select([p.stdout], [], [], 0.5)[0]:
                data = p.stdout.read() or b""
                sys.stderr.buffer.write(data)
                sys.stderr.flush()
                done = DONE in data
        if done:
            time.sleep(FLUSH_S)
        elif p.poll() == 0:
            print("tsung: stopped at the load's duration with users still running: "
                  "tsung.dump may lack its last seconds", file=sys.stderr, flush=True)
            done = True
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        if started_epmd:
            stop_epmd()
    runs = sorted(glob.glob(os.path.join(logdir, "*", "tsung.log")), key=os.path.getmtime)
    if not done or not runs:
        why = "ran past its bound" if time.monotonic() >= deadline else "failed"
        raise ValueError(f"tsung {why} (exit {p.returncode}; logs in {logdir})")
    return os.path.dirname(runs[-1])


def totals(log: str) -> dict[str, int]:
    """From tsung.log (without a dump): requests done and errors over the run.
    A "stats: request" line is: count of the interval, mean, stddev, max, min,
    then the mean and count before the interval; an error counter's line is:
    count of the interval, count so far."""
    out = {"requests": 0, "errors": 0}
    errors: dict[str, int] = {}
    with open(log, encoding="utf-8", errors="replace") as f:
        for line in f:
            x = line.split()
            if len(x) >= 9 and x[:2] == ["stats:", "request"]:
                out["requests"] = int(x[2]) + int(x[8])
            elif len(x) == 4 and x[0] == "stats:" and x[1].startswith("error_"):
                errors[x[1]] = int(x[3])
    out["errors"] = sum(errors.values())
    return out


def convert(dump: str, cls: str) -> Engine:
    """An Engine holding the transactions and pages of a tsung.dump (the
    module's doc says what maps)."""
    eng = Engine(("", 0), 0.0)
    rows = []
    with open(dump, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("#"):
                continue
            x = line.rstrip("\n").split(";")
            if len(x) < 11:
                continue
            end = float(x[0])
            rows.append((end - float(x[8]) / 1000.0, end, x))
    if not rows:
        return eng
    t0 = min(r[0] for r in rows)
    eng.t0_epoch = t0
    seen: dict[str, tuple[float, float]] = {}
    pages: dict[str, Page] = {}
    count: dict[str, int] = {}
    for start, end, x in sorted(rows, key=lambda r: r[0]):
        uid = f"{cls}-{x[2]}"
        status = int(x[6]) if x[6].isdigit() else 0
        err = x[11] or ("" if status else x[6])
        count[uid] = count.get(uid, 0) + 1
        path = x[5].split("/", 3)[-1] if x[5].startswith("http") else x[5].lstrip("/")
        role = "main" if path.endswith("/main") else "embedded"
        if role == "main":
            pid = f"{uid}.{count[uid]}"
            pages[uid] = Page(pid, uid, cls, start - t0)
            eng.pages.append(pages[uid])
        pg = pages.get(uid)
        t = Txn(f"{uid}.{count[uid]}", uid, cls, "", x[3].upper(), x[5], start - t0,
                start - t0, -1.0, end - t0, int(x[7]), status, err,
                page=pg.pid if pg else "", role=role)
        eng.txns.append(t)
        b = eng.bins.setdefault(cls, {})
        b[int(t.end)] = b.get(int(t.end), 0) + t.bytes
        if pg:
            pg.objects += 1
            pg.bytes += t.bytes
            pg.errors += bool(err)
            pg.end = max(pg.end, t.end)
        a, z = seen.get(uid, (t.start, t.end))
        seen[uid] = (min(a, t.start), max(z, t.end))
        eng.users.setdefault(uid, {"id": uid, "class": cls, "addr": ""})
    eng.spans = [(cls, a, z) for a, z in seen.values()]
    eng.elapsed = max(t.end for t in eng.txns)
    return eng
