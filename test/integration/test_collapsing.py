# SPDX-License-Identifier: GPL-2.0-or-later
"""Collapsed forwarding while a miss waits in the request scheduler's queue
(issue 12, item 4): identical misses that arrive while the first one is
queued collapse on its StoreEntry and share its one fetch."""
from __future__ import annotations

import time

import rsharness as h
from rsharness import http_get, sched_conf, wait_until
from test_sched import _block_window, assert_balanced, idle

N_FOLLOWERS = 20
SIZE = 20_000


def _queued_squid(squid_factory, origin):
    """collapsed_forwarding on, fixed 1, the one slot held by a slow blocker."""
    sq = squid_factory(sched=sched_conf(window="fixed 1"), cache=True, extra="collapsed_forwarding on\n")
    blocker = _block_window(sq, origin, 1, 2500)
    wait_until(lambda: sq.report().g("W") == 1, 5, what="the blocker to hold the one slot")
    return sq, blocker


def _fetches(origin, path: str) -> int:
    return len([row for row in origin.settled_requests() if row[4].startswith(path)])


def test_identical_misses_collapse_while_queued(squid_factory, origin):
    sq, blocker = _queued_squid(squid_factory, origin)
    obj = origin.url("/cq/obj", size=SIZE, max_age=600)
    clients = h.Background([lambda: http_get(sq.port, obj, timeout=30) for _ in range(N_FOLLOWERS)],
                           stagger=0.02)
    time.sleep(0.3)
    rp = sq.report()
    assert rp.g("queued") == 1, f"only the first miss waits, the others collapse on it:\n{rp.text}"
    res = clients.join(30)
    assert blocker.join(10)[0].ok
    bad = [r for r in res if not r.ok or r.body_len != SIZE]
    assert not bad, f"{len(bad)} of {N_FOLLOWERS} clients without the body: {bad[:3]}"
    assert _fetches(origin, "/cq/obj") == 1, "the origin must see one request for the object"
    rp = idle(sq)
    assert_balanced(rp)
    assert rp.g("released") == 2, f"the blocker and the one fetch:\n{rp.text}"


def test_followers_of_a_timed_out_miss_get_the_503(squid_factory, origin):
    """The queue timeout answers the collapsed followers as well (they wait
    for the same fetch), with the same 503 and Retry-After; nobody hangs."""
    sq = squid_factory(sched=sched_conf(window="fixed 1", more="request_sched_queue_timeout 1 second"),
                       cache=True, extra="collapsed_forwarding on\n")
    blocker = _block_window(sq, origin, 1, 4000)
    wait_until(lambda: sq.report().g("W") == 1, 5, what="the blocker to hold the one slot")
    obj = origin.url("/cq/timeout", size=SIZE, max_age=600)
    res = h.Background([lambda: http_get(sq.port, obj, timeout=20) for _ in range(5)], stagger=0.02).join(20)
    assert all(r.status == 503 and "retry-after" in r.headers for r in res), res
    assert blocker.join(10)[0].ok
    assert _fetches(origin, "/cq/timeout") == 0
    rp = idle(sq)
    assert_balanced(rp)
    assert rp.g("timeouts") == 1, rp.text


def _first_leaves_followers_served(sq, blocker, obj: str, nfollowers: int) -> None:
    """The first client of obj leaves after 0.5 s while its request waits;
    nfollowers clients that came 0.1 s later each get the whole body."""
    first = h.Background([lambda: http_get(sq.port, obj, timeout=20, abort_after_s=0.5)])
    time.sleep(0.1)
    followers = h.Background([lambda: http_get(sq.port, obj, timeout=20) for _ in range(nfollowers)],
                             stagger=0.02)
    assert first.join(5)[0].aborted
    res = followers.join(20)
    assert blocker.join(10)[0].ok
    bad = [r for r in res if not r.ok or r.body_len != SIZE]
    assert not bad, bad


def test_followers_survive_the_first_client_leaving(squid_factory, origin):
    """The client whose miss is queued goes away: the followers collapsed on
    its entry must not wait for a fetch that will never start; each gets the
    body (they fall back to a miss of their own) and the window balances."""
    sq, blocker = _queued_squid(squid_factory, origin)
    obj = origin.url("/cq/leave", size=SIZE, max_age=600)
    _first_leaves_followers_served(sq, blocker, obj, 5)
    assert 1 <= _fetches(origin, "/cq/leave") <= 5
    assert_balanced(idle(sq))


def test_followers_of_a_private_response_are_scheduled(squid_factory, origin):
    """The queued miss's response turns out private (Cache-Control:
    no-store): its collapsed followers cannot share it and each fetches on
    its own (Squid's "unshareable" path). Each of those fetches uses the
    link, so each goes through the scheduler: released = blocker + every
    origin fetch, and the window balances."""
    sq, blocker = _queued_squid(squid_factory, origin)
    obj = origin.url("/cq/private", size=SIZE)      # no max_age: no-store
    res = h.Background([lambda: http_get(sq.port, obj, timeout=30) for _ in range(5)], stagger=0.02).join(30)
    assert blocker.join(10)[0].ok
    bad = [r for r in res if not r.ok or r.body_len != SIZE]
    assert not bad, bad
    fetched = _fetches(origin, "/cq/private")
    rp = idle(sq)
    assert_balanced(rp)
    assert rp.g("released") == 1 + fetched, f"{fetched} origin fetches:\n{rp.text}"
    print(f"private response: {fetched} origin fetches for 5 clients")



def _stale_squid(squid_factory, origin, path: str, more: str = ""):
    """A cached object gone stale, then the one slot (fixed 1) held by a blocker."""
    sq = squid_factory(sched=sched_conf(window="fixed 1", more=more), cache=True,
                       extra="collapsed_forwarding on\n")
    obj = origin.url(path, size=SIZE, max_age=1)
    assert http_get(sq.port, obj).ok
    time.sleep(2.2)
    blocker = _block_window(sq, origin, 1, 2500)
    wait_until(lambda: sq.report().g("W") == 1, 5, what="the blocker to hold the one slot")
    return sq, blocker, obj


def test_stale_hits_collapse_on_a_queued_revalidation(squid_factory, origin):
    """Stale hits that arrive while the first one's revalidation waits
    collapse on its revalidation entry: one queued request, one origin
    revalidation for 5 clients (5 and 5 before patch 33: the revalidation
    was queued before processExpired() created that entry)."""
    sq, blocker, obj = _stale_squid(squid_factory, origin, "/cq/stale")
    clients = h.Background([lambda: http_get(sq.port, obj, timeout=30) for _ in range(5)], stagger=0.02)
    time.sleep(0.3)
    rp = sq.report()
    assert rp.g("queued") == 1, f"only the first revalidation waits:\n{rp.text}"
    res = clients.join(30)
    assert blocker.join(10)[0].ok
    bad = [r for r in res if not r.ok or r.body_len != SIZE]
    assert not bad, bad
    assert _fetches(origin, "/cq/stale") == 2, "the first miss and one revalidation"
    rp = idle(sq)
    assert_balanced(rp)
    assert rp.g("released") == 3, f"miss, blocker, one revalidation:\n{rp.text}"


def test_stale_followers_survive_the_first_client_leaving(squid_factory, origin):
    """The client whose revalidation is queued leaves: the stale hits
    collapsed on its revalidation entry get their stale copy (the aborted
    entry is an origin failure to handleIMSReply()), nobody hangs."""
    sq, blocker, obj = _stale_squid(squid_factory, origin, "/cq/staleleave")
    _first_leaves_followers_served(sq, blocker, obj, 4)
    rp = idle(sq)
    assert_balanced(rp)
    assert rp.g("cancelled") == 1, rp.text


def test_revalidation_queue_timeout_serves_the_stale_hit(squid_factory, origin):
    """A revalidation that times out in the queue is an origin error to
    handleIMSReply(): the client gets its stale hit (TCP_REFRESH_FAIL_OLD),
    not a 503 (the 503 before patch 33)."""
    sq, blocker, obj = _stale_squid(squid_factory, origin, "/cq/stalefail",
                                    more="request_sched_queue_timeout 1 second")
    r = http_get(sq.port, obj, timeout=20)
    assert r.ok and r.body_len == SIZE, r
    assert blocker.join(10)[0].ok
    rows = [row for row in sq.access_log() if "/cq/stalefail" in row["url"]]
    assert rows[-1]["code"] == "TCP_REFRESH_FAIL_OLD", rows
    rp = idle(sq)
    assert_balanced(rp)
    assert rp.g("timeouts") == 1, rp.text
