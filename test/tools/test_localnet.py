# SPDX-License-Identifier: GPL-2.0-or-later
"""The loopback helpers of the tests and benchmarks: free_port, wait_port and
nginx as an origin (static files or a fixed `return 200` body)."""
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest

from reqsched_tools.localnet import free_port, wait_port
from reqsched_tools.nginx import NginxOrigin, nginx_installed


def test_free_port_can_be_bound():
    port = free_port()
    assert 1024 <= port <= 65535
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_wait_port_returns_once_listening():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        wait_port(s.getsockname()[1], "listener", timeout=2)


def test_wait_port_times_out_on_a_closed_port():
    t0 = time.monotonic()
    with pytest.raises(TimeoutError, match="closed did not open port"):
        wait_port(free_port(), "closed", timeout=0.3)
    assert time.monotonic() - t0 < 3


def test_wait_port_stops_when_the_server_exited():
    p = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    p.wait(5)
    t0 = time.monotonic()
    with pytest.raises(ChildProcessError, match="server exited with 3"):
        wait_port(free_port(), "server", timeout=30, proc=p)
    assert time.monotonic() - t0 < 1


needs_nginx = pytest.mark.skipif(not nginx_installed(), reason="nginx not installed (make deps)")


def get(url: str) -> tuple[int, str, bytes]:
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.status, r.headers["Content-Type"], r.read()


@needs_nginx
def test_nginx_serves_the_files_of_its_directory():
    # not tmp_path: pytest's is private to root, nginx's workers run as nobody
    with tempfile.TemporaryDirectory(prefix="rs-test-nginx-") as d:
        os.chmod(d, 0o755)
        with open(os.path.join(d, "1024.bin"), "wb") as f:
            f.write(b"y" * 1024)
        with NginxOrigin(d) as ng:
            assert get(ng.url("/1024.bin")) == (200, "application/octet-stream", b"y" * 1024)
        assert ng.proc.poll() is not None


@needs_nginx
def test_nginx_answers_every_request_with_the_body(tmp_path):
    with NginxOrigin(str(tmp_path), body="x" * 1000) as ng:
        for path in ("/", "/any/thing?q=1"):
            assert get(ng.url(path)) == (200, "text/plain", b"x" * 1000)


def test_nginx_refuses_a_body_it_cannot_quote(tmp_path):
    with pytest.raises(ValueError):
        NginxOrigin(str(tmp_path), body='say "hi"')
