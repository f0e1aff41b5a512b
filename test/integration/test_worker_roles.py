# SPDX-License-Identifier: GPL-2.0-or-later
"""Which Squid processes run the request scheduler, and when its timer
events run (issue 12, item 9): only processes that serve requests (not the
master, the SMP coordinator or diskers) have a scheduler, and an idle
scheduler without a link counter schedules no timer event at all."""
from __future__ import annotations

import re
import time
from typing import Dict, List, Tuple

import rsharness as h
from rsharness import http_get, sched_conf, wait_until
from test_sched import _block_window, assert_balanced, idle

# event.cc logs every eventAdd() at 41,7: "schedule: Adding 'NAME', in T seconds"
EVENT_DEBUG = "debug_options ALL,1 41,7\n"
# "DATE TIME[ kidN]| ...": the master's lines have no kid number
PROCESS = re.compile(r"^\S+ \S+? (kid\d+)\|")


def log_lines(log: str, pattern: str) -> List[Tuple[str, str]]:
    """(process, first group of pattern) of each cache.log line matching pattern."""
    out = []
    for ln in log.splitlines():
        m = re.search(pattern, ln)
        if m:
            kid = PROCESS.match(ln)
            out.append((kid.group(1) if kid else "master", m.group(1)))
    return out


def sched_events(log: str) -> List[Tuple[str, str]]:
    return log_lines(log, r"Adding 'ReqSched::(\w+)'")


def test_idle_scheduler_schedules_no_timer_event(squid_factory, origin):
    sq = squid_factory(sched=sched_conf(window="fixed 1", more="request_sched_queue_timeout 1 second"),
                       extra=EVENT_DEBUG)
    assert http_get(sq.port, origin.url("/idle/warm", size=1000)).ok
    assert_balanced(idle(sq))
    time.sleep(1.5)             # events armed while busy fire once and are not armed again
    before = sched_events(sq.cache_log())
    time.sleep(3.0)
    woke = sched_events(sq.cache_log())[len(before):]
    assert woke == [], f"an idle scheduler armed {len(woke)} timer events in 3 s: {woke[:8]}"
    # the next queued request wakes it: the queue timeout still answers
    blocker = _block_window(sq, origin, 1, 3000)
    wait_until(lambda: sq.report().g("W") == 1, 5, what="the blocker to hold the one slot")
    r = http_get(sq.port, origin.url("/idle/queued", size=1000), timeout=10)
    assert r.status == 503 and "retry-after" in r.headers, r
    assert blocker.join(10)[0].ok
    assert ("master", "Housekeeping") in sched_events(sq.cache_log())[len(before):]
    assert_balanced(idle(sq))


def test_scheduler_runs_only_in_workers(squid_factory):
    """workers 2: kid1 and kid2 are workers, kid3 the coordinator, the
    master has no kid number. Each process logs "Request scheduler: N
    classes" when it creates its scheduler; only the workers may, and only
    they may arm its events."""
    sq = squid_factory(start=False, sched=sched_conf(window="fixed 2"),
                       extra="workers 2\n" + EVENT_DEBUG)
    d = h.DaemonSquid(sq)
    try:
        d.start()
        roles: Dict[str, str] = {}

        def all_roles() -> bool:
            roles.update(re.findall(r"(kid\d+)\| Process Roles: (\w+)", sq.cache_log()))
            return len(roles) == 3
        wait_until(all_roles, 20, what="three kids to report their roles")
        time.sleep(1.0)
        log = sq.cache_log()
    finally:
        d.stop()
    assert roles == {"kid1": "worker", "kid2": "worker", "kid3": "coordinator"}, roles
    created = sorted(kid for kid, _ in log_lines(log, r"(Request scheduler): \d+ classes"))
    assert created == ["kid1", "kid2"], f"schedulers created in {created}"
    armed = {kid for kid, _ in sched_events(log)}
    assert armed <= {"kid1", "kid2"}, f"scheduler events armed in {sorted(armed)}"
