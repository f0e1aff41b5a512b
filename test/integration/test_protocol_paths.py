# SPDX-License-Identifier: GPL-2.0-or-later
"""Queued requests on paths that are not a plain HTTP exchange (issue 12,
item 7): a queued CONNECT whose client leaves frees its place at once, and
a queued request of Squid's native FTP relay (ftp_port) that times out
gets an FTP reply on its control connection, never an HTTP 503."""
from __future__ import annotations

import socket
import time

from rsharness import free_port, sched_conf, wait_until
from test_sched import _block_window, assert_balanced, idle


def _open_connect(proxy_port: int, target_port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", proxy_port), timeout=10)
    s.sendall(f"CONNECT 127.0.0.1:{target_port} HTTP/1.1\r\nHost: 127.0.0.1:{target_port}\r\n\r\n".encode())
    return s


def test_queued_connect_client_leaving_frees_its_place(squid_factory, origin, streamer_factory):
    st = streamer_factory(100_000)
    sq = squid_factory(sched=sched_conf(window="fixed 1", more="request_sched_tunnels schedule"))
    blocker = _block_window(sq, origin, 1, 4000)
    wait_until(lambda: sq.report().g("W") == 1, 5, what="the blocker to hold the one slot")
    s = _open_connect(sq.port, st.port)
    try:
        wait_until(lambda: sq.report().g("queued") == 1, 5, what="the CONNECT to wait in the queue")
    finally:
        s.close()
    # "at once": well before the blocker ends (4 s) or any queue timeout (60 s)
    wait_until(lambda: sq.report().g("queued") == 0, 1.5, what="the queued CONNECT to leave the queue")
    rp = sq.report()
    assert rp.g("cancelled") == 1 and rp.g("W") == 1, f"cancelled, the blocker still holds W:\n{rp.text}"
    assert rp.c("a", "queued") == 0 and rp.c("a", "cancelled") == 1, rp.text
    assert blocker.join(10)[0].ok
    rp = idle(sq)
    assert_balanced(rp)
    assert rp.g("released") == 1, f"only the blocker was ever released:\n{rp.text}"


def test_queued_connect_with_early_client_bytes_still_tunnels(squid_factory, origin, streamer_factory):
    """A client that sends tunnel bytes before the 200 (e.g. a TLS
    ClientHello right after the CONNECT) while queued: the watch leaves the
    bytes in the socket and the tunnel carries both directions once
    released."""
    nbytes = 100_000
    st = streamer_factory(nbytes)
    sq = squid_factory(sched=sched_conf(window="fixed 1", more="request_sched_tunnels schedule"))
    blocker = _block_window(sq, origin, 1, 1500)
    wait_until(lambda: sq.report().g("W") == 1, 5, what="the blocker to hold the one slot")
    with _open_connect(sq.port, st.port) as s:
        s.sendall(b"early tunnel bytes")
        wait_until(lambda: sq.report().g("queued") == 1, 5, what="the CONNECT to wait in the queue")
        buf = b""
        while True:
            c = s.recv(65536)
            if not c:
                break
            buf += c
    head, _, body = buf.partition(b"\r\n\r\n")
    assert b" 200" in head.split(b"\r\n")[0], head
    assert len(body) == nbytes
    assert blocker.join(10)[0].ok
    rp = idle(sq)
    assert_balanced(rp)
    assert rp.g("released") == 2 and rp.g("cancelled") == 0, rp.text


def _ftp_line(f) -> str:
    """One FTP reply (the last line of a multi-line one)."""
    line = f.readline().decode("latin-1")
    while len(line) >= 4 and line[3] == "-":
        line = f.readline().decode("latin-1")
    return line


def test_ftp_relay_queue_timeout_answers_in_ftp(squid_factory, origin, ftp_server):
    """ftp_port: the relay's first command that reaches the origin (USER) is
    a miss and waits; at the queue timeout Squid's FTP server turns the 503
    into an FTP reply ("451 Service Unavailable", seen on 6.13): no HTTP
    bytes on the control connection."""
    ftp_port = free_port()
    sq = squid_factory(sched=sched_conf(window="fixed 1", more="request_sched_queue_timeout 1 second"),
                       extra=f"ftp_port 127.0.0.1:{ftp_port}\n")
    blocker = _block_window(sq, origin, 1, 4000)
    wait_until(lambda: sq.report().g("W") == 1, 5, what="the blocker to hold the one slot")
    with socket.create_connection(("127.0.0.1", ftp_port), timeout=10) as s:
        f = s.makefile("rb")
        greeting = _ftp_line(f)
        assert greeting.startswith("220"), greeting
        t0 = time.monotonic()
        s.sendall(f"USER anonymous@127.0.0.1:{ftp_server.port}\r\n".encode())
        reply = _ftp_line(f)
        waited = time.monotonic() - t0
        s.settimeout(0.5)
        try:
            rest = f.readline()     # anything else on the control connection
        except socket.timeout:
            rest = b""
    assert reply[:3].isdigit() and reply[3] in " -" and not reply.startswith("HTTP/"), reply
    assert reply.startswith("451"), reply
    assert b"HTTP/1." not in rest, rest[:200]
    assert waited >= 0.9, f"the USER command was answered after {waited:.2f}s, before the queue timeout"
    assert blocker.join(10)[0].ok
    rp = idle(sq)
    assert_balanced(rp)
    assert rp.g("timeouts") == 1, rp.text
