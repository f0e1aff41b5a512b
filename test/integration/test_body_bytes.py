# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 12 item 6: a scheduled response charges its class the bytes that
actually crossed, never the Content-Length it announced: HEAD, 204 and 304
answers carry a Content-Length but no body; a body can be cut short by the
origin or by the client.

Each case runs alone in its own Squid (drr, fixed 1, one class) against a
ScriptedOrigin that counts every byte it wrote. The page's charge is checked
twice: `bytes` (what Squid read) against what the origin wrote, and drr's
deficit (`service`): before the fix the first byte's Content-Length of
5,000,000 was charged there and never corrected, a debt of about 5 MB for a
response of a few hundred bytes."""
from __future__ import annotations

import pytest

import rsharness as h
from rsharness import http_get, sched_conf, wait_until

ANNOUNCED = 5_000_000


def head_of(status: str) -> str:
    return (f"HTTP/1.1 {status}\nContent-Length: {ANNOUNCED}\nCache-Control: no-store\n"
            "Content-Type: application/octet-stream\nConnection: close\n")


def drr_squid(squid_factory) -> h.Squid:
    return squid_factory(sched=sched_conf(window="fixed 1", policy="drr"))


def idle_report(sq: h.Squid) -> h.Report:
    wait_until(lambda: (lambda rp: rp.g("W") == 0 and rp.g("ended") == 1)(sq.report()),
               20, what="the response to end on mgr:request_sched")
    return sq.report()


def assert_charged(rp: h.Report, crossed: int, exact: bool = True, floor: int = 0) -> None:
    charged = int(rp.c("a", "bytes"))
    if exact:
        assert charged == crossed, f"charged {charged} bytes, {crossed} crossed:\n{rp.text}"
    else:
        assert floor <= charged <= crossed, \
            f"charged {charged} bytes, not within [{floor}, {crossed}]:\n{rp.text}"
    # drr's deficit: a debt of at most what crossed (the estimate charged at
    # release is given back, the response's own bytes are charged)
    debt = -min(0.0, rp.c("a", "service"))
    assert debt <= crossed, f"drr charged a debt of {debt:.0f} for {crossed} bytes:\n{rp.text}"


@pytest.mark.parametrize("case", ["head", "204", "304"])
def test_bodiless_answers_charge_their_head(case, squid_factory, scripted_origin):
    """HEAD, 204 and 304 (to a conditional GET) with a Content-Length of
    5,000,000 and no body: the class is charged the head only."""
    sq = drr_squid(squid_factory)
    status = {"head": "200 OK", "204": "204 No Content", "304": "304 Not Modified"}[case]
    url = scripted_origin.add(f"/{case}", head_of(status))
    r = http_get(sq.port, url, method="HEAD" if case == "head" else "GET", timeout=20,
                 headers={"If-Modified-Since": "Thu, 01 Jan 2026 00:00:00 GMT"} if case == "304" else None)
    assert r.status == int(status.split()[0]) and r.body_len == 0, r
    assert scripted_origin.done[f"/{case}"].wait(10)
    rp = idle_report(sq)
    assert_charged(rp, scripted_origin.sent[f"/{case}"])


def test_body_cut_short_by_origin(squid_factory, scripted_origin):
    """The origin announces 5,000,000 bytes, sends 200,000 and closes."""
    sq = drr_squid(squid_factory)
    url = scripted_origin.add("/cut", head_of("200 OK"), body=200_000)
    r = http_get(sq.port, url, timeout=20)
    assert r.status == 200 and r.body_len <= 200_000, r
    assert scripted_origin.done["/cut"].wait(10)
    rp = idle_report(sq)
    assert rp.g("aborted") == 1, rp.text
    assert_charged(rp, scripted_origin.sent["/cut"])


def test_body_cut_short_by_client(squid_factory, scripted_origin):
    """The origin streams 5,000,000 announced bytes at 8 Mbit/s; the client
    leaves after 100,000 body bytes and Squid stops the fetch (the object is
    not cacheable). The class is charged at least what the client got and at
    most what the origin wrote (bytes still in Squid's socket buffer when it
    closed crossed the link but were never read)."""
    sq = drr_squid(squid_factory)
    url = scripted_origin.add("/leave", head_of("200 OK"), body=ANNOUNCED, rate_bps=8_000_000)
    r = http_get(sq.port, url, timeout=20, abort_after_bytes=100_000)
    assert r.aborted and r.body_len >= 100_000, r
    assert scripted_origin.done["/leave"].wait(15), "Squid did not stop the fetch"
    rp = idle_report(sq)
    assert scripted_origin.sent["/leave"] < ANNOUNCED
    assert_charged(rp, scripted_origin.sent["/leave"], exact=False, floor=r.body_len)
