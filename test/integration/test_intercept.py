# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 12 item 7: on_unsupported_protocol on an intercepted port. A client
whose connection is redirected to Squid (NAT, `http_port ... intercept`) and
that speaks something else than HTTP is tunnelled to its original destination
(`on_unsupported_protocol tunnel all`): a forced tunnel, like a splice.

The test runs in a network namespace of its own (root only), which this
process enters with setns(2) for the test's duration: an iptables REDIRECT
there sends the client's connections to Squid's intercept port, and Squid,
the origins and the clients all run inside it (Squid reads the original
destination from that namespace's conntrack)."""
from __future__ import annotations

import ctypes
import os
import shutil
import socket
import subprocess
import threading
import time
from typing import Iterator, List

import pytest

import rsharness as h
from conftest import Origin
from rsharness import sched_conf, wait_until
from test_sched import (_block_window, assert_balanced, assert_closed_at_queue_timeout, idle,
                        read_until_closed)

CLONE_NEWNET = 0x40000000
CLIENT, SERVER, SERVER_PORT, INTERCEPT_PORT = "10.55.0.1", "10.55.0.2", 9000, 3129
NBYTES = 300_000


def _setns(fd: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns")


@pytest.fixture
def nat_netns() -> Iterator[str]:
    """This process inside a fresh namespace whose connections from CLIENT to
    SERVER:SERVER_PORT are redirected to INTERCEPT_PORT."""
    if os.geteuid() != 0 or not shutil.which("iptables"):
        pytest.skip("needs root and iptables (a NAT redirect in a namespace)")
    ns = f"rsicpt{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{ns}", os.O_RDONLY)
    try:
        _setns(target)
        for cmd in (["ip", "link", "set", "lo", "up"],
                    ["ip", "addr", "add", f"{CLIENT}/32", "dev", "lo"],
                    ["ip", "addr", "add", f"{SERVER}/32", "dev", "lo"],
                    ["iptables", "-t", "nat", "-A", "OUTPUT", "-p", "tcp", "-s", CLIENT,
                     "-d", SERVER, "--dport", str(SERVER_PORT), "-j", "REDIRECT",
                     "--to-ports", str(INTERCEPT_PORT)]):
            subprocess.run(cmd, check=True)
        yield ns
    finally:
        _setns(home)
        os.close(home)
        os.close(target)
        subprocess.run(["ip", "netns", "del", ns], check=False)


class NonHttpServer:
    """SERVER:SERVER_PORT: reads what a connection sends first, answers NBYTES
    of its own protocol, then closes; `accepted` counts connections and
    `first` keeps the first bytes each one sent."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((SERVER, SERVER_PORT))
        self.sock.listen(8)
        self.accepted = 0
        self.first: List[bytes] = []
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            with c:
                c.settimeout(5)
                try:
                    self.first.append(c.recv(4096))
                    c.sendall(b"z" * NBYTES)
                except OSError:
                    pass

    def stop(self) -> None:
        self.sock.close()


def _squid(squid_factory, more: str, tunnels: str = "schedule") -> h.Squid:
    # the tunnel is a fake CONNECT that http_access must allow
    return squid_factory(
        sched=sched_conf(window="fixed 1", more=f"request_sched_tunnels {tunnels}\n" + more),
        acls=f"acl intercepted src {CLIENT}\nhttp_access allow intercepted",
        extra=f"http_port {INTERCEPT_PORT} intercept\non_unsupported_protocol tunnel all\n")


def _speak_other_protocol() -> socket.socket:
    """A client from CLIENT to SERVER:SERVER_PORT (redirected to Squid) that
    opens with a line no HTTP parser accepts."""
    s = socket.socket()
    s.bind((CLIENT, 0))
    s.settimeout(10)
    s.connect((SERVER, SERVER_PORT))
    s.sendall(b"\x16HELLO-OTHER-PROTOCOL\x00\x01\r\n\r\n")
    return s


@pytest.mark.parametrize("tunnels", ["schedule", "count"])
def test_unsupported_protocol_tunnel_is_charged(nat_netns, squid_factory, tunnels):
    """The window free: the tunnel goes to the original destination and the
    client gets the server's bytes unchanged. `schedule`: the scheduler saw
    one request (released, ended) charged the tunnel's bytes; `count`: no
    request, the bytes charged to the class as foreign bytes."""
    srv = NonHttpServer()
    try:
        sq = _squid(squid_factory, "", tunnels)
        got = read_until_closed(_speak_other_protocol())
        assert got == b"z" * NBYTES, f"{len(got)} bytes, starting {got[:80]!r}"
        assert srv.accepted == 1 and srv.first[0].startswith(b"\x16HELLO-OTHER-PROTOCOL")
        rp = idle(sq)
        assert_balanced(rp)
        if tunnels == "schedule":
            assert rp.g("released") == 1 and rp.g("ended") == 1, rp.text
            assert rp.g("bytes") >= NBYTES, rp.text
        else:
            assert rp.g("released") == 0, rp.text
            assert rp.c("a", "foreign_bytes") >= NBYTES, rp.text
        print(f"intercepted non-HTTP tunnel ({tunnels}): {len(got)} bytes, scheduler bytes "
              f"{rp.g('bytes')}, foreign {rp.c('a', 'foreign_bytes')}")
    finally:
        srv.stop()


def test_queued_unsupported_protocol_tunnel_times_out_without_http_bytes(
        nat_netns, squid_factory, workdir):
    """`fixed 1` held by a 4 s blocker, a 1 s queue timeout: the tunnel waits
    in the queue and at the timeout the client's connection is closed with
    nothing written into its stream (no HTTP 503 in a protocol that is not
    HTTP); the server never sees a connection."""
    srv = NonHttpServer()
    origin = Origin(workdir)                     # the blocker's, inside the namespace
    try:
        sq = _squid(squid_factory, "request_sched_queue_timeout 1 second\n")
        blocker = _block_window(sq, origin, 1, 4000)
        wait_until(lambda: sq.report().g("W") == 1, 5, what="the blocker to hold the one slot")
        t0 = time.monotonic()
        s = _speak_other_protocol()
        wait_until(lambda: sq.report().g("queued") == 1, 5, what="the tunnel to wait in the queue")
        waited = assert_closed_at_queue_timeout(sq, s, t0, lambda: srv.accepted, blocker)
        print(f"queued intercepted tunnel: closed after {waited:.2f}s, 0 bytes")
    finally:
        origin.stop()
        srv.stop()
