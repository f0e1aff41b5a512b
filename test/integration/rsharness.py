#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Harness for reqsched's Squid integration tests.

Starts the patched Squid (build/squid/sbin/squid, or $RS_SQUID) in the
foreground on 127.0.0.1 with a per-test directory for its config, logs and
pid file; talks to it with raw-socket HTTP clients that can bind any
127.0.0.x source address (one address = one scheduler user); reads the
cache manager page `request_sched` and the access.log.

Everything a test starts is stopped by the fixtures in conftest.py, also
when the test fails.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from reqsched_tools.localnet import free_port, wait_port
from reqsched_tools.mgrpage import MgrValue, parse_mgr_page
from reqsched_tools import scenario
from reqsched_tools.paths import squid_state_dir, use_build_lib

TOP = Path(__file__).resolve().parents[2]
SQUID_BIN = Path(os.environ.get("RS_SQUID", TOP / "build/squid/sbin/squid"))
# The build with OpenSSL and the ICAP client (make squid-tls-icap), for the
# tests of test_tls_icap.py only.
SQUID_TLS_ICAP_BIN = Path(os.environ.get("RS_SQUID_TLS_ICAP", TOP / "build/tls-icap/squid/sbin/squid"))
use_build_lib()
# request_sched_link is the line rate; the scheduler's C is its TCP payload in
# full-size segments, 1448 of every 1514 bytes (patch 49), and R is U+ of that
PAYLOAD_PER_WIRE = scenario.PAYLOAD_PER_WIRE


def pace_rate_bps(line_bps: float, target_utilization: float = 0.98) -> float:
    """The pacer's R for `request_sched_link line_bps` without cross traffic:
    U+ of the line's payload, bits/s."""
    return target_utilization * line_bps * PAYLOAD_PER_WIRE
# Optional share dir (errors/, icons/, mime.conf) for a Squid not installed
# under its configured prefix (e.g. a stock binary used to develop the harness).
SQUID_SHARE = os.environ.get("RS_SQUID_SHARE", "")
# Extra squid.conf lines for every test (e.g. unlinkd_program of a relocated build).
SQUID_EXTRA_CONF = os.environ.get("RS_SQUID_EXTRA_CONF", "").replace("\\n", "\n")

ACCESS_FORMAT = ("logformat rstest %ts.%03tu %tr %>a %Ss/%03>Hs %<st %rm %ru "
                 "%{reqsched_class}note %{reqsched_wait_ms}note")


def helper_copy(name: str, workdir: Path) -> Path:
    """A copy of a test helper in the (world-readable) test directory: Squid
    runs helpers as cache_effective_user, which may not reach the checkout."""
    dst = workdir / name
    shutil.copy(Path(__file__).resolve().parent / name, dst)
    os.chmod(dst, 0o755)
    return dst


def wait_until(pred: Callable[[], bool], timeout: float, step: float = 0.1,
               what: str = "condition") -> None:
    """Poll pred() until true; raise AssertionError naming `what` on timeout."""
    deadline = time.monotonic() + timeout
    last_exc: Optional[BaseException] = None
    while time.monotonic() < deadline:
        try:
            if pred():
                return
            last_exc = None
        except (OSError, ValueError, KeyError) as e:  # page not readable yet
            last_exc = e
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}"
                         + (f" (last error: {last_exc!r})" if last_exc else ""))


# --------------------------------------------------------------------------
# Report page
# --------------------------------------------------------------------------
@dataclasses.dataclass
class Report:
    """The page as parse_mgr_page() reads it: numbers as floats, words as str;
    classes by name."""
    glob: Dict[str, MgrValue]
    classes: Dict[str, Dict[str, MgrValue]]
    text: str
    resources: Dict[str, Dict[str, MgrValue]] = dataclasses.field(default_factory=dict)

    def g(self, key: str) -> float:
        return float(self.glob[key])

    def c(self, cls: str, key: str) -> float:
        return float(self.classes[cls][key])


def parse_report(text: str) -> Report:
    page = parse_mgr_page(text)
    if "W" not in page["global"]:
        raise ValueError(f"report page has no 'W:' line:\n{text[:500]}")
    return Report(page["global"], {str(c["name"]): c for c in page["classes"]}, text,
                  {str(r["name"]): r for r in page["resources"]})


# --------------------------------------------------------------------------
# HTTP client
# --------------------------------------------------------------------------
@dataclasses.dataclass
class Result:
    tag: str
    src: str
    status: int = 0
    headers: Dict[str, str] = dataclasses.field(default_factory=dict)
    body_len: int = 0
    t_start: float = 0.0
    t_first: float = 0.0          # first response byte (status line)
    t_end: float = 0.0
    error: str = ""               # "" if the response was read to EOF
    aborted: bool = False         # we closed the connection on purpose

    @property
    def ok(self) -> bool:
        return self.status == 200 and not self.error and not self.aborted


def _parse_head(head: bytes) -> Tuple[int, Dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    hdrs: Dict[str, str] = {}
    for ln in lines[1:]:
        if ":" in ln:
            k, v = ln.split(":", 1)
            hdrs[k.strip().lower()] = v.strip()
    return status, hdrs


def http_get(proxy_port: int, url: str, src: str = "127.0.0.1", tag: str = "",
             timeout: float = 60.0, abort_after_s: Optional[float] = None,
             abort_after_bytes: Optional[int] = None, method: str = "GET",
             rst: bool = False, body: bytes = b"", login: str = "",
             headers: Optional[Dict[str, str]] = None) -> Result:
    """One HTTP/1.0 request through the proxy from source address `src`.

    HTTP/1.0 keeps framing simple: the body ends at EOF (Squid does not chunk
    for 1.0 clients).  abort_after_s closes the socket that many seconds after
    sending (whether or not anything arrived); abort_after_bytes closes it once
    that many body bytes were read.  rst=True closes with a TCP RST.  login:
    Basic proxy credentials for that user name.
    """
    r = Result(tag=tag or url, src=src)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((src, 0))
        r.t_start = time.monotonic()
        s.settimeout(timeout)
        s.connect(("127.0.0.1", proxy_port))
        host = url.split("/")[2] if "://" in url else url
        req = f"{method} {url} HTTP/1.0\r\nHost: {host}\r\nUser-Agent: rstest\r\n"
        for k, v in (headers or {}).items():
            req += f"{k}: {v}\r\n"
        if login:
            import base64
            cred = base64.b64encode(f"{login}:pw".encode()).decode()
            req += f"Proxy-Authorization: Basic {cred}\r\n"
        if body or method in ("POST", "PUT"):
            req += f"Content-Type: application/octet-stream\r\nContent-Length: {len(body)}\r\n"
        s.sendall(req.encode() + b"\r\n" + body)
        deadline_abort = (r.t_start + abort_after_s) if abort_after_s is not None else None
        buf = b""
        head_done = False
        while True:
            if deadline_abort is not None:
                left = deadline_abort - time.monotonic()
                if left <= 0:
                    r.aborted = True
                    break
                s.settimeout(min(timeout, left))
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                if deadline_abort is not None and time.monotonic() >= deadline_abort:
                    r.aborted = True
                    break
                r.error = "timeout"
                break
            if not chunk:
                break
            if not r.t_first:
                r.t_first = time.monotonic()
            if head_done:
                r.body_len += len(chunk)
            else:
                buf += chunk
                i = buf.find(b"\r\n\r\n")
                if i >= 0:
                    r.status, r.headers = _parse_head(buf[:i])
                    r.body_len = len(buf) - i - 4
                    head_done = True
            if abort_after_bytes is not None and head_done and r.body_len >= abort_after_bytes:
                r.aborted = True
                break
        if not head_done and not r.aborted and not r.error:
            r.error = "no response header"
        cl = r.headers.get("content-length")
        if (head_done and not r.aborted and not r.error and cl is not None and method != "HEAD"
                and int(cl) != r.body_len):
            r.error = f"short body {r.body_len}/{cl}"
    except OSError as e:
        r.error = f"{type(e).__name__}: {e}"
    finally:
        r.t_end = time.monotonic()
        if rst:
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            except OSError:
                pass
        s.close()
    return r


class KeepAlive:
    """One persistent HTTP/1.1 connection to the proxy: requests one after
    the other (responses must carry Content-Length)."""

    def __init__(self, proxy_port: int, src: str = "127.0.0.1", timeout: float = 30.0):
        self.src = src
        self.sock = socket.socket()
        self.sock.bind((src, 0))
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", proxy_port))
        self.buf = b""

    def get(self, url: str, headers: Optional[Dict[str, str]] = None) -> Result:
        """GET url with more header fields (as http_get()'s headers). A Result
        with an error leaves the connection unusable."""
        r = Result(tag=url, src=self.src, t_start=time.monotonic())
        host = url.split("/")[2]
        more = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self.sock.sendall(f"GET {url} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: rstest\r\n{more}\r\n".encode())
        while b"\r\n\r\n" not in self.buf:
            c = self.sock.recv(65536)
            if not c:
                r.error = "closed before response header"
                return r
            if not r.t_first:
                r.t_first = time.monotonic()
            self.buf += c
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        r.status, r.headers = _parse_head(head)
        want = int(r.headers.get("content-length", "-1"))
        if want < 0:
            r.error = "no Content-Length"
            return r
        while len(self.buf) < want:
            c = self.sock.recv(65536)
            if not c:
                break
            self.buf += c
        r.body_len = min(len(self.buf), want)
        self.buf = self.buf[want:]
        if r.body_len < want:
            r.error = f"short body {r.body_len}/{want}"
        r.t_end = time.monotonic()
        return r

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "KeepAlive":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def http_keepalive(proxy_port: int, urls: List[str], src: str = "127.0.0.1",
                   timeout: float = 30.0) -> List[Result]:
    """Several requests, one after the other, on one persistent connection;
    stops at the first that fails."""
    out: List[Result] = []
    with KeepAlive(proxy_port, src, timeout) as conn:
        for url in urls:
            out.append(conn.get(url))
            if out[-1].error:
                break
    return out


def send_paced(send: Callable[[bytes], int], nbytes: int, block: bytes, rate_bps: float,
               stopped: Callable[[], bool] = lambda: False) -> None:
    """A test origin's body: nbytes through send() in pieces of `block`, on
    average at most rate_bps (0: as fast as the socket takes them), until
    stopped()."""
    left, t0 = nbytes, time.monotonic()
    while left > 0 and not stopped():
        left -= send(block[:min(left, len(block))])
        if rate_bps:
            ahead = t0 + (nbytes - left) * 8 / rate_bps - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)


def run_parallel(jobs: List[Callable[[], Result]], workers: int) -> List[Result]:
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as ex:
        return list(ex.map(lambda f: f(), jobs))


class Background:
    """Run jobs in threads now; collect results later with .join()."""

    def __init__(self, jobs: List[Callable[[], Result]], stagger: float = 0.0):
        self.results: List[Optional[Result]] = [None] * len(jobs)
        self.threads = []
        for i, job in enumerate(jobs):
            t = threading.Thread(target=self._run, args=(i, job), daemon=True)
            t.start()
            self.threads.append(t)
            if stagger:
                time.sleep(stagger)

    def _run(self, i: int, job: Callable[[], Result]) -> None:
        self.results[i] = job()

    def join(self, timeout: float) -> List[Result]:
        deadline = time.monotonic() + timeout
        for t in self.threads:
            t.join(max(0.0, deadline - time.monotonic()))
        missing = sum(1 for r in self.results if r is None)
        assert missing == 0, f"{missing} client(s) still running after {timeout}s"
        return [r for r in self.results if r is not None]


# --------------------------------------------------------------------------
# Squid
# --------------------------------------------------------------------------
BASE_CONF = """\
# generated by test/integration/rsharness.py
http_port 127.0.0.1:{port}
pid_filename {dir}/squid.pid
cache_log {dir}/cache.log
{access_format}
access_log stdio:{dir}/access.log rstest
cache_store_log none
coredump_dir {dir}
{share}
cache_effective_user {user}
shutdown_lifetime 0 seconds
logfile_rotate 0
strip_query_terms off
buffered_logs off
dns_nameservers 127.0.0.1
# every 127.0.0.x has a name: no (unanswered) PTR lookups for client addresses
hosts_file {dir}/hosts
max_filedescriptors 8192
cache_mem {cache_mem}
maximum_object_size_in_memory 1 MB
{cache_deny}
acl localnet src 127.0.0.0/8
acl CONNECT method CONNECT
{acl_lines}
http_access allow localhost manager
http_access deny manager
http_access allow localnet
http_access deny all
"""


class Squid:
    """One Squid instance in its own directory.

    sched: the request_sched_* lines (or "" for a Squid without scheduler
    directives); extra: any other squid.conf lines; acls: acl lines the
    sched lines refer to (placed before http_access); squid_bin: the
    binary (SQUID_BIN unless given).
    """

    def __init__(self, workdir: Path, sched: str = "", extra: str = "",
                 acls: str = "", cache: bool = False, squid_bin: Optional[Path] = None):
        self.bin = squid_bin or SQUID_BIN
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.dir, 0o777)
        self.port = free_port()
        # a service name of our own: Squid names its shared memory segments
        # (/dev/shm/<service>-cf__*.shm) after it, so two Squids on one machine
        # with the default name "squid" collide ("shm_open ... File exists")
        self.service = f"rstest{self.port}"
        self.conf = self.dir / "squid.conf"
        self.proc: Optional[subprocess.Popen] = None
        self.sched = sched
        self.extra = extra
        self.acls = acls
        self.cache = cache
        self.write_config()

    # ---- configuration -------------------------------------------------
    def config_text(self) -> str:
        share = ""
        if SQUID_SHARE:
            share = (f"error_directory {SQUID_SHARE}/errors/templates\n"
                     f"mime_table {SQUID_SHARE}/mime.conf\n"
                     f"icon_directory {SQUID_SHARE}/icons")
        share += "\n" + SQUID_EXTRA_CONF
        text = BASE_CONF.format(
            port=self.port, dir=self.dir, access_format=ACCESS_FORMAT, share=share,
            user="nobody",
            cache_mem="16 MB" if self.cache else "0 MB",
            cache_deny="" if self.cache else "cache deny all",
            acl_lines=self.acls.strip())
        return text + "\n" + self.extra.strip() + "\n" + self.sched.strip() + "\n"

    def write_config(self) -> None:
        (self.dir / "hosts").write_text("".join(f"127.0.0.{i} rs-client-{i}\n" for i in range(1, 255)))
        self.conf.write_text(self.config_text())

    @staticmethod
    def run_parse(conf: Path, timeout: float = 30) -> subprocess.CompletedProcess:
        return subprocess.run([str(SQUID_BIN), "-k", "parse", "-f", str(conf)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout)

    # ---- lifecycle -----------------------------------------------------
    def start(self, timeout: float = 30) -> "Squid":
        out = open(self.dir / "squid.out", "w")
        # -N: no daemon, one process (the worker): its pid is ours, its RSS is
        # the scheduler's.  -d1: level-1 messages also to stderr (squid.out).
        self.proc = subprocess.Popen([str(self.bin), "-N", "-d1", "-n", self.service, "-f", str(self.conf)],
                                     stdout=out, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        out.close()
        try:
            wait_port(self.port, "squid", timeout, self.proc)
        except (ChildProcessError, TimeoutError) as e:
            raise AssertionError(f"{e}\n" + self.tail_logs()) from None
        return self

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=8)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=5)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def reconfigure(self) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bin), "-n", self.service, "-k", "reconfigure", "-f", str(self.conf)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=30)

    def rss_kb(self) -> int:
        assert self.proc is not None
        for ln in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if ln.startswith("VmRSS:"):
                return int(ln.split()[1])
        raise ValueError("no VmRSS")

    # ---- observation ---------------------------------------------------
    def mgr(self, page: str, timeout: float = 10) -> str:
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as s:
            s.sendall(f"GET /squid-internal-mgr/{page} HTTP/1.0\r\nHost: 127.0.0.1:{self.port}\r\n\r\n".encode())
            data = b""
            while True:
                c = s.recv(65536)
                if not c:
                    break
                data += c
        head, _, body = data.partition(b"\r\n\r\n")
        status, _ = _parse_head(head)
        if status != 200:
            raise ValueError(f"mgr:{page} answered {status}: {body[:300]!r}")
        return body.decode("latin-1")

    def report(self) -> Report:
        return parse_report(self.mgr("request_sched"))

    def reports_during(self, seconds: float, step: float = 0.2) -> List[Report]:
        """Snapshots of the report page taken every `step` for `seconds`: a
        test that needs the state of a busy proxy reads all of them, not one
        instant that a slow build (check-asan) may catch between requests."""
        deadline = time.monotonic() + seconds
        snaps = [self.report()]
        while time.monotonic() + step < deadline:
            time.sleep(step)
            snaps.append(self.report())
        return snaps

    def access_log(self, quiet: float = 0.2, timeout: float = 5.0) -> List[Dict[str, str]]:
        """access.log rows once the file stopped growing for `quiet` seconds
        (Squid logs a transaction as it tears it down, which can be a moment
        after the client saw the end of the response)."""
        p = self.dir / "access.log"
        size = p.stat().st_size if p.exists() else 0
        stable_since = time.monotonic()
        deadline = stable_since + timeout
        while time.monotonic() - stable_since < quiet and time.monotonic() < deadline:
            time.sleep(0.05)
            now = p.stat().st_size if p.exists() else 0
            if now != size:
                size, stable_since = now, time.monotonic()
        rows: List[Dict[str, str]] = []
        if not p.exists():
            return rows
        for ln in p.read_text(errors="replace").splitlines():
            f = ln.split()
            if len(f) < 8 or f[5] == "-":   # "-": a connection without request (port probe)
                continue
            code, _, status = f[3].partition("/")
            rows.append({"t": f[0], "tr": f[1], "src": f[2], "code": code,
                         "status": status, "size": f[4], "method": f[5], "url": f[6],
                         "class": f[7] if len(f) > 7 else "-",
                         "wait_ms": f[8] if len(f) > 8 else "-"})
        return rows

    def cache_log(self) -> str:
        p = self.dir / "cache.log"
        return p.read_text(errors="replace") if p.exists() else ""

    def tail_logs(self, n: int = 40) -> str:
        out = []
        for name in ("squid.out", "cache.log"):
            p = self.dir / name
            if p.exists():
                lines = p.read_text(errors="replace").splitlines()[-n:]
                out.append(f"--- {name} (last {len(lines)} lines)\n" + "\n".join(lines))
        return "\n".join(out)


class DaemonSquid:
    """The patched Squid in daemon mode (master + kids), `workers N`."""

    def __init__(self, sq: Squid):
        self.sq = sq
        self.pid_file = sq.dir / "squid.pid"

    def start(self) -> None:
        squid_state_dir(SQUID_BIN)
        subprocess.run([str(SQUID_BIN), "-n", self.sq.service, "-f", str(self.sq.conf)],
                       check=True, timeout=30, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(self.pid_file.exists, 10, what="the master's pid file")

    def master(self) -> int:
        return int(self.pid_file.read_text().split()[0])

    def kids(self) -> List[int]:
        master = self.master()
        out = []
        for p in Path("/proc").iterdir():
            if p.name.isdigit():
                try:
                    ppid = int((p / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                if ppid == master:
                    out.append(int(p.name))
        return out

    def kid_pid(self, kid: int) -> int:
        """The pid of kidN: Squid titles its kids "(squid-N)" (workers) and
        "(squid-coord-N)"."""
        for pid in self.kids():
            try:
                title = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
            except OSError:
                continue
            if title.startswith((f"(squid-{kid})", f"(squid-coord-{kid})")):
                return pid
        raise LookupError(f"no kid{kid} among {self.kids()}")

    def stop(self) -> None:
        if not self.pid_file.exists():
            return
        pids = [self.master()] + self.kids()
        subprocess.run([str(SQUID_BIN), "-n", self.sq.service, "-f", str(self.sq.conf), "-k", "shutdown"],
                       timeout=30, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
            time.sleep(0.2)
        for p in pids:
            if Path(f"/proc/{p}").exists():
                os.kill(p, signal.SIGKILL)


def squid_supports(directive: str) -> bool:
    """True if SQUID_BIN knows `directive` (looked up in squid.conf.documented)."""
    for p in (SQUID_BIN.parent.parent / "etc/squid.conf.documented",
              SQUID_BIN.parent.parent / "etc/squid/squid.conf.documented"):
        if p.exists():
            return re.search(rf"^#\s*TAG:\s*{re.escape(directive)}\b", p.read_text(errors="replace"),
                             re.M) is not None
    return False


def sched_conf(window: str = "fixed 1", policy: str = "msf",
               classes: Sequence[Tuple[str, float]] = (("a", 1),),
               access: Sequence[Tuple[str, str]] = (),
               link: str = "1 Gbit", more: str = "") -> str:
    """request_sched_* lines for squid.conf (contract grammar)."""
    lines = ["request_scheduler on",
             f"request_sched_link {link}",
             f"request_sched_policy {policy}",
             f"request_sched_window {window}",
             "request_sched_update_interval 1 seconds"]
    lines += [f"request_sched_class {n} {w:g}" for n, w in classes]
    lines += [f"request_sched_access {n} {rule}" for n, rule in access]
    return "\n".join(lines) + "\n" + more.strip() + "\n"


# --------------------------------------------------------------------------
# request_sched_window_file (patch 52)
# --------------------------------------------------------------------------
def write_window_file(path: Path, window: float, link_bps: int, age_s: int = 0) -> None:
    """The file as an earlier Squid would have left it, age_s seconds ago."""
    path.write_text(f"reqsched-window 1 {window} {link_bps} {int(time.time()) - age_s}\n")
    os.chmod(path, 0o666)


def read_window_file(path: Path) -> Tuple[float, int, int]:
    """(W+, link bit/s, written) of a file Squid wrote; asserts its first words."""
    magic, version, window, link, written = path.read_text().split()
    assert (magic, version) == ("reqsched-window", "1"), path.read_text()
    return float(window), int(link), int(written)
