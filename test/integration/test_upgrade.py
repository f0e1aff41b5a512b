# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 12 item 1: a scheduled request answered `101 Switching Protocols`
(WebSocket) gives its window slot back when the connection switches, and
the upgraded stream is charged to the client's class like a CONNECT tunnel.

Squid 6.13 forwards an Upgrade offer only when http_upgrade_request_protocols
allows the protocol (by default it drops the header), so the test allows
WebSocket. A ScriptedOrigin answers 101 and then streams for a bounded time
(STREAM_BYTES at STREAM_BPS, about 4 s) before it closes."""
from __future__ import annotations

import socket
import time

import pytest

import rsharness as h
from rsharness import Background, Result, http_get, sched_conf, wait_until

STREAM_BPS = 2_000_000
STREAM_BYTES = 1_000_000           # 4 s at STREAM_BPS
UPGRADE_HEAD = "HTTP/1.1 101 Switching Protocols\nUpgrade: WebSocket\nConnection: Upgrade\n"
SMALL_HEAD = ("HTTP/1.1 200 OK\nContent-Length: 2000\nCache-Control: no-store\n"
              "Connection: close\n")


def upgrade(proxy_port: int, url: str, timeout: float = 30.0) -> Result:
    """An HTTP/1.1 request offering WebSocket; after the 101, reads the
    upgraded stream to EOF (body_len: the stream's bytes)."""
    r = Result(tag="upgrade", src="127.0.0.1", t_start=time.monotonic())
    host = url.split("/")[2]
    with socket.create_connection(("127.0.0.1", proxy_port), timeout=timeout) as s:
        s.sendall(f"GET {url} HTTP/1.1\r\nHost: {host}\r\nConnection: Upgrade\r\n"
                  "Upgrade: WebSocket\r\n\r\n".encode())
        buf = b""
        try:
            while b"\r\n\r\n" not in buf:
                c = s.recv(65536)
                if not c:
                    r.error = "closed before the response head"
                    return r
                buf += c
            r.t_first = time.monotonic()
            head, _, rest = buf.partition(b"\r\n\r\n")
            r.status, r.headers = h._parse_head(head)
            r.body_len = len(rest)
            while True:
                c = s.recv(65536)
                if not c:
                    break
                r.body_len += len(c)
        except OSError as e:
            r.error = f"{type(e).__name__}: {e}"
    r.t_end = time.monotonic()
    return r


@pytest.mark.parametrize("tunnels", ["count", "schedule"])
def test_upgrade_frees_the_slot_and_charges_the_stream(tunnels, squid_factory, scripted_origin):
    """Also with request_sched_tunnels schedule: the upgrade waited for its
    slot as an HTTP request; the tunnel it becomes is counted, not held."""
    sq = squid_factory(sched=sched_conf(window="fixed 1", more=f"request_sched_tunnels {tunnels}"),
                       extra="http_upgrade_request_protocols WebSocket allow all")
    ws = scripted_origin.add("/ws", UPGRADE_HEAD, body=STREAM_BYTES, rate_bps=STREAM_BPS)
    smalls = [scripted_origin.add(f"/small/{i}", SMALL_HEAD, body=2000) for i in range(3)]
    head_len = len(UPGRADE_HEAD.replace("\n", "\r\n")) + 2

    bg = Background([lambda: upgrade(sq.port, ws)])
    wait_until(lambda: scripted_origin.sent["/ws"] > head_len, 10, what="the upgraded stream to start")
    # while it streams, the other requests of the class take the (only) slot
    res = [http_get(sq.port, u, timeout=30) for u in smalls]
    assert all(r.ok and r.body_len == 2000 for r in res), res
    assert not scripted_origin.done["/ws"].is_set(), \
        "the other requests got the slot only after the upgraded stream ended"
    up = bg.join(30)[0]
    assert up.status == 101 and not up.error and up.body_len == STREAM_BYTES, up
    assert scripted_origin.done["/ws"].wait(10)

    wait_until(lambda: (lambda rp: rp.g("W") == 0 and rp.g("ended") == 4)(sq.report()), 20,
               what="every request to end")
    rp = sq.report()
    assert rp.g("released") == 4 and rp.g("queued") == 0, rp.text
    # every byte the origin wrote (the 101 head, the stream, the small
    # responses) is charged to the class, the stream as tunnel bytes
    crossed = sum(scripted_origin.sent.values())
    assert rp.c("a", "bytes") == crossed, f"{crossed} bytes crossed:\n{rp.text}"
    assert rp.c("a", "foreign_bytes") >= STREAM_BYTES - 65536, rp.text
