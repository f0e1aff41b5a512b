# SPDX-License-Identifier: GPL-2.0-or-later
"""Loopback ports for the tests and benchmarks that start servers on this
machine: a free port to give a server, the wait until it listens there, and
reading an HTTP head from a connection."""
from __future__ import annotations

import socket
import subprocess
import time

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    """A TCP port of 127.0.0.1 that was free a moment ago (the kernel's pick
    of an ephemeral port, released again for the server to bind)."""
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


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
