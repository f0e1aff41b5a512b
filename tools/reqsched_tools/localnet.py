# SPDX-License-Identifier: GPL-2.0-or-later
"""Loopback ports for the tests and benchmarks that start servers on this
machine: a free port to give a server, the wait until it listens there, and
reading an HTTP head from a connection."""
from __future__ import annotations

import random
import socket
import subprocess
import time

LOOPBACK = "127.0.0.1"
LOWEST_PORT = 10000
EPHEMERAL_RANGE = "/proc/sys/net/ipv4/ip_local_port_range"


def ephemeral_low() -> int:
    """The lowest port the kernel gives outgoing connections (32768 unless
    configured otherwise)."""
    try:
        with open(EPHEMERAL_RANGE, encoding="ascii") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A TCP port of 127.0.0.1 that was free a moment ago, below the
    ephemeral range: a port the kernel picked from that range could be
    taken as the source port of any outgoing connection (the tests' clients
    make thousands) before the server binds it. A CI run failed so: an SMP
    worker's port 32965 never opened (2026-12-07)."""
    top = ephemeral_low() - 1
    for _ in range(100):
        port = random.randint(LOWEST_PORT, top) if top > LOWEST_PORT else 0
        with socket.socket() as s:
            try:
                s.bind((LOOPBACK, port))
            except OSError:
                continue
            return int(s.getsockname()[1])
    raise OSError("no free port below the ephemeral range")


def wait_port(port: int, what: str, timeout: float = 30.0,
              proc: subprocess.Popen | None = None) -> None:
    """Return once 127.0.0.1:port accepts a TCP connection. Raise
    ChildProcessError as soon as `proc` (the server `what`, if given) has
    exited, TimeoutError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        if proc is not None and proc.poll() is not None:
            raise ChildProcessError(f"{what} exited with {proc.returncode} before opening port {port}")
        try:
            with socket.create_connection((LOOPBACK, port), timeout=1):
                return
        except OSError:
            pass
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{what} did not open port {port} within {timeout:g} s")
        time.sleep(0.1)


def recv_head(sock: socket.socket) -> bytes | None:
    """What a test peer reads from sock up to the end of an HTTP head (the
    bytes may go beyond it); None if the other side closes first."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = sock.recv(65536)
        if not d:
            return None
        buf += d
    return buf
