# SPDX-License-Identifier: GPL-2.0-or-later
"""pytest fixtures: one origin (reqsched-origin) for the session, Squids and
TCP streamers per test, all stopped at teardown (also on failure)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator, List
from urllib.parse import urlencode

import pytest

import rsharness as h
from reqsched_tools.localnet import free_port, recv_head, wait_port

WORK_BASE = Path(os.environ.get("RS_TEST_TMP", "/tmp/rs-integration"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "passing: wired into make check-integration")
    config.addinivalue_line("markers", "slow: the soak")


class Origin:
    """reqsched-origin on 127.0.0.1:<free port>, with its access log."""

    def __init__(self, workdir: Path):
        self.port = free_port()
        self.log = workdir / "origin.log"
        self.out = open(workdir / "origin.out", "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "reqsched_tools.origin", "--listen", f"127.0.0.1:{self.port}",
             "--access-log", str(self.log), "--hang-max", "120", "--max-runtime", "1800", "--quiet"],
            stdout=self.out, stderr=subprocess.STDOUT, start_new_session=True)
        wait_port(self.port, "reqsched-origin", 15, self.proc)

    def url(self, path: str = "/o", **params: object) -> str:
        q = urlencode({k: v for k, v in params.items()})
        return f"http://127.0.0.1:{self.port}{path}" + (f"?{q}" if q else "")

    def requests(self) -> List[List[str]]:
        """Origin access-log rows: time local peer method target status size sent outcome."""
        if not self.log.exists():
            return []
        return [ln.split() for ln in self.log.read_text().splitlines() if ln.strip()]

    def settled_requests(self, quiet: float = 0.3, timeout: float = 5.0) -> List[List[str]]:
        """requests() once the log stopped growing for `quiet` seconds: the
        origin logs a request after its last write, which can be a moment
        after the client (through Squid) already has the whole response."""
        rows = self.requests()
        stable_since = time.monotonic()
        deadline = stable_since + timeout
        while time.monotonic() < deadline:
            time.sleep(0.05)
            now = self.requests()
            if len(now) != len(rows):
                rows, stable_since = now, time.monotonic()
            elif time.monotonic() - stable_since >= quiet:
                break
        return rows

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        self.out.close()


@pytest.fixture(scope="session")
def session_dir() -> Iterator[Path]:
    WORK_BASE.mkdir(parents=True, exist_ok=True)
    os.chmod(WORK_BASE, 0o777)
    d = Path(tempfile.mkdtemp(prefix="run-", dir=WORK_BASE))
    os.chmod(d, 0o777)
    yield d
    if os.environ.get("RS_KEEP_TMP") != "1":
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def origin(session_dir: Path) -> Iterator[Origin]:
    o = Origin(session_dir)
    yield o
    o.stop()


@pytest.fixture
def workdir(session_dir: Path, request: pytest.FixtureRequest) -> Path:
    d = session_dir / request.node.name.replace("/", "_").replace("[", "_").replace("]", "")
    d.mkdir(parents=True, exist_ok=True)
    os.chmod(d, 0o777)
    return d


@pytest.fixture
def squid_factory(workdir: Path) -> Iterator[Callable[..., h.Squid]]:
    """squid_factory(sched=..., extra=..., acls=..., cache=..., name=...) -> started Squid."""
    started: List[h.Squid] = []

    def make(name: str = "squid", start: bool = True, **kw: object) -> h.Squid:
        if not h.SQUID_BIN.exists() and "squid_bin" not in kw:
            pytest.skip(f"{h.SQUID_BIN} not built (make squid)")
        s = h.Squid(workdir / name, **kw)  # type: ignore[arg-type]
        started.append(s)
        if start:
            s.start()
        return s

    yield make
    for s in started:
        s.stop()
        crashed = "FATAL" in s.cache_log() or "assertion failed" in s.cache_log()
        if crashed:
            print(s.tail_logs())


@pytest.fixture
def streamer_factory() -> Iterator[Callable[[int], "Streamer"]]:
    made: List[Streamer] = []

    def make(nbytes: int) -> Streamer:
        s = Streamer(nbytes)
        made.append(s)
        return s
    yield make
    for s in made:
        s.stop()


class LoopbackServer:
    """A TCP listener on an ephemeral 127.0.0.1 port whose accept loop runs in a
    thread and hands each connection to `_accepted` until `stop()`."""

    def __init__(self) -> None:
        import socket
        import threading
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self._stop = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        import socket
        self.sock.settimeout(0.2)
        while not self._stop:
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self._accepted(c)

    def _accepted(self, c) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        self._stop = True
        self.sock.close()
        self.thread.join(2)


class Streamer(LoopbackServer):
    """A TCP server on 127.0.0.1 that sends `nbytes` to each connection, then closes.
    (The CONNECT target: reqsched-origin speaks HTTP, a tunnel needs raw bytes.)"""

    def __init__(self, nbytes: int):
        self.nbytes = nbytes
        self.served = 0
        super().__init__()

    def _accepted(self, c) -> None:
        import socket
        block = b"x" * 16384
        try:
            c.settimeout(10)
            left = self.nbytes
            while left > 0:
                n = c.send(block[:min(left, len(block))])
                left -= n
            self.served += 1
            c.shutdown(socket.SHUT_WR)
            c.settimeout(2)
            try:
                while c.recv(4096):
                    pass
            except OSError:
                pass
        except OSError:
            pass
        finally:
            c.close()


@pytest.fixture
def ftp_server(workdir: Path) -> Iterator["FtpServer"]:
    s = FtpServer(workdir / "ftp")
    yield s
    s.stop()


class FtpServer:
    """pyftpdlib on 127.0.0.1 with anonymous read access to `root`
    (FTP misses and the FTP data channel's byte accounting)."""

    def __init__(self, root: Path):
        import threading
        from pyftpdlib.authorizers import DummyAuthorizer
        from pyftpdlib.handlers import FTPHandler
        from pyftpdlib.servers import FTPServer
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        auth = DummyAuthorizer()
        auth.add_anonymous(str(root))
        handler = type("Handler", (FTPHandler,), {"authorizer": auth, "banner": "rstest ftp",
                                                  "passive_ports": None})
        import logging
        logging.getLogger("pyftpdlib").setLevel(logging.WARNING)
        self.server = FTPServer(("127.0.0.1", 0), handler)
        self.port = self.server.address[1]
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"timeout": 0.2, "handle_exit": False}, daemon=True)
        self.thread.start()

    def add_file(self, name: str, nbytes: int) -> str:
        (self.root / name).write_bytes(b"f" * nbytes)
        return f"ftp://127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        self.server.close_all()
        self.thread.join(3)


@pytest.fixture
def pconn_race_server() -> Iterator["PconnRaceServer"]:
    s = PconnRaceServer()
    yield s
    s.stop()


class PconnRaceServer(LoopbackServer):
    """HTTP/1.1 server on 127.0.0.1 that answers the first request on each
    connection (keep-alive) and closes the connection, unanswered, when a
    second request arrives on it: Squid's reuse of that idle persistent
    connection fails and Squid retries on a new one (a FwdState retry)."""

    def __init__(self) -> None:
        import threading
        self.requests = 0          # request heads received
        self.dropped = 0           # second requests closed unanswered
        self.lock = threading.Lock()
        super().__init__()

    def _accepted(self, c) -> None:
        import threading
        threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c) -> None:
        c.settimeout(10)
        buf = b""
        served = 0
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    d = c.recv(4096)
                    if not d:
                        return
                    buf += d
                _, _, buf = buf.partition(b"\r\n\r\n")
                with self.lock:
                    self.requests += 1
                if served == 1:
                    with self.lock:
                        self.dropped += 1
                    return                     # close without an answer
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nCache-Control: no-store\r\n"
                          b"Connection: keep-alive\r\n\r\nhello")
                served += 1
        except OSError:
            return
        finally:
            c.close()


@pytest.fixture
def scripted_origin() -> Iterator["ScriptedOrigin"]:
    s = ScriptedOrigin()
    yield s
    s.stop()


class Script:
    """One scripted answer: `head` (status line and header fields, sent as
    they are), then `body` bytes (paced to `rate_bps` if set), then close,
    or with `stall` keep the connection open and silent until the origin
    stops (at most `stall_max` seconds)."""

    def __init__(self, head: str, body: int = 0, rate_bps: float = 0.0,
                 stall: bool = False, stall_max: float = 60.0):
        self.head = head.replace("\n", "\r\n").encode("latin-1") + b"\r\n"
        self.body = body
        self.rate_bps = rate_bps
        self.stall = stall
        self.stall_max = stall_max


class ScriptedOrigin(LoopbackServer):
    """An HTTP origin on 127.0.0.1 whose answer to each request path is a
    Script (answers that reqsched-origin does not give: a 101 upgrade that
    then streams, a 304 or 204 with a Content-Length, a body cut short, a
    response that stalls mid-body). `then()` queues further answers for a
    path: each request takes the next, the last one stays. One request per
    connection. `sent[path]`
    is every byte the kernel accepted for that path (head and body): what
    crossed towards Squid; `done[path]` is set once the answer is over."""

    def __init__(self) -> None:
        import threading
        self.scripts: dict = {}
        self.sent: dict = {}
        self.done: dict = {}
        self.heads: dict = {}          # path -> the request heads Squid sent, in order
        self.stopping = threading.Event()
        super().__init__()

    def add(self, path: str, head: str, **script: object) -> str:
        """Answer requests for path with Script(head, **script); returns the URL."""
        import threading
        self.scripts[path] = [Script(head, **script)]  # type: ignore[arg-type]
        self.sent[path] = 0
        self.done[path] = threading.Event()
        return f"http://127.0.0.1:{self.port}{path}"

    def then(self, path: str, head: str, **script: object) -> None:
        """After the answers queued so far, answer path with Script(head, **script)."""
        self.scripts[path].append(Script(head, **script))  # type: ignore[arg-type]

    def _accepted(self, c) -> None:
        import threading
        threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c) -> None:
        path = ""
        try:
            c.settimeout(10)
            buf = recv_head(c)
            if buf is None:
                return
            head = buf.partition(b"\r\n\r\n")[0].decode("latin-1")
            path = head.split(" ", 2)[1]
            self.heads.setdefault(path, []).append(head)
            answers = self.scripts[path]
            sc = answers.pop(0) if len(answers) > 1 else answers[0]
            c.sendall(sc.head)
            self.sent[path] += len(sc.head)
            block = b"s" * 16384
            t0 = time.monotonic()
            left = sc.body
            while left > 0 and not self.stopping.is_set():
                n = c.send(block[:min(left, len(block))])
                left -= n
                self.sent[path] += n
                if sc.rate_bps:
                    ahead = t0 + (sc.body - left) * 8 / sc.rate_bps - time.monotonic()
                    if ahead > 0:
                        time.sleep(ahead)
            if sc.stall:
                self.stopping.wait(sc.stall_max)
        except (OSError, KeyError, IndexError):
            pass
        finally:
            c.close()
            if path in self.done:
                self.done[path].set()

    def stop(self) -> None:
        self.stopping.set()
        super().stop()


@pytest.fixture
def need_squid() -> None:
    """Skips a test that needs the patched Squid when it is not built."""
    if not h.SQUID_BIN.exists():
        pytest.skip(f"{h.SQUID_BIN} not built (make squid)")
