# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-load sessions|replay --engine c: the per-transaction work in C
(reqsched-loadc, loadgen/), the rest here (doc/testbed.md "Load").

This side draws everything as for the Python engine and writes it as the
plan (loadgen/plan.h) to the engine's stdin, then `start`. Sessions
(sessions.py: schedule() for when users start and leave, SessionLoad.pages()
for every user's pages): the classes and their addresses, every user of the
schedule with its first FIRST_PAGES pages; the engine asks for more of a
user's pages ("more USER" on its stdout) when its queue runs low, and gets
BATCH more (or `end USER`), so the plan is drawn as fast as it is used, never
all ahead. Log replay (logreplay.plan()): every emulated user and all its
requests (a log is finite). Its progress lines ("progress {json}") become
ours. At the end its
records (requests.csv, pages.csv, class_bytes.csv, replay.json in a
directory of the run) are read into the Engine as a --procs worker's are
(multiproc.merge_into()), so every output is written by loadengine.py.
SIGINT/SIGTERM to this process are passed on to the engine, which stops
cleanly and writes its records.
"""
from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from typing import IO, Callable, Iterator, Optional

from . import multiproc
from .loadengine import Engine, format_progress
from .paths import BUILD
from .logreplay import Emulated
from .sessions import PagePlan, SessionLoad, schedule

LOADC = BUILD / "bin" / "reqsched-loadc"
FIRST_PAGES = 4
BATCH = 32


def installed() -> bool:
    return os.access(LOADC, os.X_OK)


def page_lines(pp: PagePlan, uid: str) -> str:
    return (f"page {uid} {pp.pid} {pp.session} {pp.think!r} {len(pp.objects)}\n"
            + "".join(f"obj GET {size} 200 0 0 {url}\n" for url, size in pp.objects))


def batch(pages: Iterator[PagePlan], uid: str, n: int) -> str:
    """The next n pages of a user, and `end` if it has no more."""
    got = list(itertools.islice(pages, n))
    return "".join(page_lines(pp, uid) for pp in got) + (f"end {uid}\n" if len(got) < n else "")


def credential(login: str, password: Optional[str]) -> str:
    if not login or password is None:
        return "-"
    return base64.b64encode(f"{login}:{password}".encode()).decode()


def write_head(sl: SessionLoad, f: IO[str]) -> dict[str, Iterator[PagePlan]]:
    """The plan up to `start` (exclusive); returns every user's pages to come."""
    pages: dict[str, Iterator[PagePlan]] = {}
    for c in sl.classes:
        f.write(f"class {c.name} {c.model.connections}\n")
        f.writelines(f"addr {c.name} {a}\n" for a in c.addrs)
    for c in sl.classes:
        for pu in schedule(c):
            uid = sl.uid(c, pu.number)
            auth = credential(c.login.replace("{n}", str(pu.number)), sl.engine.password)
            f.write(f"user {uid} {c.name} {pu.start!r} {pu.leave!r} {auth} {int(pu.arrival)}\n")
            pages[uid] = sl.pages(c, uid, 1 if pu.arrival else None)
            f.write(batch(pages[uid], uid, FIRST_PAGES))
    return pages


def check_names(names: list[str]) -> None:
    for name in names:
        if not name or not all(ch.isascii() and (ch.isalnum() or ch in "._:@+-") for ch in name):
            raise ValueError(f"class {name!r}: the C engine takes names of [A-Za-z0-9._:@+-]")


def run(sl: SessionLoad, duration: float, workdir: str, start_at: float = 0.0) -> float:
    """Run sl's classes through reqsched-loadc for at most duration s (from
    the wall-clock start_at, if given); its records into sl.engine, the users
    it lacked an address for into sl.no_address. Returns the engine's CPU
    seconds (the run, without this process's drawing and writing)."""
    check_names([c.name for c in sl.classes])
    info = engine(sl.engine, lambda f: write_head(sl, f), duration, workdir, start_at)
    sl.no_address = int(info["no_address"])
    return float(info["engine_cpu_s"])


def write_replay(users: list[Emulated], closed_loop: bool, max_conns: int,
                 password: Optional[str], f: IO[str]) -> dict[str, Iterator[PagePlan]]:
    """The plan of a log replay (logreplay.plan()'s users) up to `start`."""
    for cls in dict.fromkeys(u.cls for u in users):
        f.write(f"class {cls} 1\n")
    mode, conns = ("closed", 1) if closed_loop else ("open", max_conns)
    for u in users:
        f.write(f"replay {u.id} {u.cls} {u.addr} {mode} {conns} {u.steps[0].at!r}\n")
        for st in u.steps:
            sp = st.spec
            f.write(f"step {u.id} {st.at!r} {st.think!r} {credential(sp.login, password)} "
                    f"{sp.method} {sp.size} {sp.status} {sp.body} {sp.max_age} {sp.url}\n")
    return {}


def replay(eng: Engine, users: list[Emulated], closed_loop: bool, max_conns: int,
           duration: float, workdir: str) -> float:
    """Replay users (logreplay.plan()) as LogReplay does, through
    reqsched-loadc; its records into eng. Returns the engine's CPU seconds."""
    users = [u for u in users if u.steps]
    check_names(list({u.cls for u in users}))
    info = engine(eng, lambda f: write_replay(users, closed_loop, max_conns, eng.password, f),
                  duration, workdir)
    return float(info["engine_cpu_s"])


def engine(eng: Engine, head: Callable[[IO[str]], dict[str, Iterator[PagePlan]]],
           duration: float, workdir: str, start_at: float = 0.0) -> dict:
    """Run reqsched-loadc on the plan head() writes (it returns the users'
    pages to come), then `start` (at the wall-clock start_at, if given);
    its records into eng. Returns its replay.json."""
    d = os.path.join(workdir, "engine")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    argv = [str(LOADC), "--proxy", f"{eng.proxy[0]}:{eng.proxy[1]}", "--out", d,
            "--timeout", repr(eng.timeout), "--duration", repr(duration),
            "--progress-s", repr(eng.progress_s)]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         bufsize=1 << 16)
    assert p.stdin is not None and p.stdout is not None
    old = {s: signal.signal(s, lambda *_: p.send_signal(signal.SIGTERM))
           for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        pages: dict[str, Iterator[PagePlan]] = {}
        try:
            pages = head(p.stdin)
            time.sleep(max(0.0, start_at - time.time()))
            p.stdin.write("start\n")
            p.stdin.flush()
        except BrokenPipeError:          # stopped before the start: it says why
            pass
        serve(p.stdin, p.stdout, pages, eng)
        rc = p.wait()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        for s, h in old.items():
            signal.signal(s, h)
    if rc != 0:
        raise ValueError(f"reqsched-loadc exited with {rc}")
    info = multiproc.merge_into(eng, [d])[0]
    shutil.rmtree(d)
    return info


def serve(plan: IO[str], lines: IO[str], pages: dict[str, Iterator[PagePlan]],
          eng: Engine) -> None:
    """Answer the engine's requests for pages and relay its progress until it
    closes its stdout."""
    last = {"t": 0.0, "done": 0, "bytes": 0}
    for line in lines:
        kind, _, rest = line.rstrip("\n").partition(" ")
        if kind == "more" and rest in pages:
            try:
                plan.write(batch(pages[rest], rest, BATCH))
                plan.flush()
            except BrokenPipeError:
                pass
        elif kind == "progress":
            cur = json.loads(rest)
            if eng.progress_sink is not None:
                eng.progress_sink(cur)
            else:
                print(format_progress(cur, last), file=sys.stderr, flush=True)
            last = cur
