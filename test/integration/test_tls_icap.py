# SPDX-License-Identifier: GPL-2.0-or-later
"""Paths the lean build cannot reach (issue 12, items 7 and 8), against the
build with OpenSSL, the ICAP client and eCAP (make squid-tls-icap; skipped
when it is absent; make check-protocols runs them):

- SslBump peek-and-splice of a CONNECT (`ssl_bump peek step1`, `ssl_bump
  splice all`): the splice at step 2 is a new, forced tunnel
  (ConnStateData::splice() -> initiateTunneledRequest(): forceTunnel, the
  client already has Squid's own 200) that goes through tunnelStart() and
  the scheduler like any CONNECT. Its slot, its bytes, and a queue timeout,
  which must close the connection without writing HTTP into the TLS stream
  (patch 32).
- SslBump bump (`ssl_bump bump all`): the requests inside the decrypted
  stream are scheduled like plain HTTP, and a queue timeout answers them
  with Squid's HTTP error inside that stream.
- ICAP RESPMOD (respmod_precache, a minimal ICAP server in this file that
  echoes the response after a delay): whether the window slot stays held
  while the service holds the virgin body.
- eCAP RESPMOD (the same, through ecap_hold.cc, an adapter module the tests
  compile against libecap; skipped without libecap3-dev).

The TLS origin uses a self-signed certificate made at test time with
openssl; the same certificate is the ssl-bump port's (it never signs
anything: peek and splice, and bump with that certificate as it is)."""
from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Tuple

import pytest

import rsharness as h
from conftest import LoopbackServer
from reqsched_tools.localnet import recv_head
from rsharness import Background, free_port, http_get, sched_conf, wait_until
from test_sched import _block_window, assert_balanced, assert_closed_at_queue_timeout, idle

HERE = Path(__file__).resolve().parent


@pytest.fixture
def tls_squid(squid_factory) -> Callable[..., h.Squid]:
    """squid_factory for the build with OpenSSL, ICAP and eCAP; skips when absent."""
    if not h.SQUID_TLS_ICAP_BIN.exists():
        pytest.skip(f"{h.SQUID_TLS_ICAP_BIN} not built (make squid-tls-icap)")

    def make(**kw: object) -> h.Squid:
        return squid_factory(squid_bin=h.SQUID_TLS_ICAP_BIN, **kw)
    return make


# --------------------------------------------------------------------------
# SslBump peek-and-splice
# --------------------------------------------------------------------------
@pytest.fixture
def cert(workdir: Path) -> Path:
    """A self-signed CA certificate and its key in one PEM file."""
    pem = workdir / "rstest-ca.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=rstest", "-addext", "basicConstraints=critical,CA:TRUE",
                    "-addext", "keyUsage=critical,keyCertSign,digitalSignature,keyEncipherment",
                    "-keyout", str(pem), "-out", str(workdir / "cert.pem")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    with open(pem, "a") as f:
        f.write((workdir / "cert.pem").read_text())
    pem.chmod(0o644)
    return pem


class TlsStreamer(LoopbackServer):
    """A TLS server on 127.0.0.1: after the handshake sends `nbytes` of
    application data at `rate_bps`, then closes. `accepted` counts TCP
    connections, `handshakes` completed TLS handshakes."""

    def __init__(self, pem: Path, nbytes: int, rate_bps: float):
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(str(pem))
        self.nbytes, self.rate_bps = nbytes, rate_bps
        self.accepted = self.handshakes = 0
        self.done = threading.Event()
        super().__init__()

    def _accepted(self, c: socket.socket) -> None:
        self.accepted += 1
        threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c: socket.socket) -> None:
        try:
            c.settimeout(30)
            with self.ctx.wrap_socket(c, server_side=True) as t:
                self.handshakes += 1
                self._answer(t)
        except OSError:
            pass
        finally:
            c.close()
            self.done.set()

    def _answer(self, t: ssl.SSLSocket) -> None:
        h.send_paced(t.send, self.nbytes, b"t" * 16384, self.rate_bps, lambda: self._stop)


@pytest.fixture
def tls_origin(cert: Path) -> Iterator[Callable[[int, float], TlsStreamer]]:
    made: List[TlsStreamer] = []

    def make(nbytes: int, rate_bps: float) -> TlsStreamer:
        s = TlsStreamer(cert, nbytes, rate_bps)
        made.append(s)
        return s
    yield make
    for s in made:
        s.stop()


def bump_conf(cert: Path, port: int, peek_step2: bool = False) -> str:
    """peek at step 1 (and step 2 if asked), then splice; Squid does not
    verify the origin's self-signed certificate when it peeks at it."""
    return (f"http_port 127.0.0.1:{port} ssl-bump tls-cert={cert}\n"
            "tls_outgoing_options flags=DONT_VERIFY_PEER\n"
            "acl step1 at_step SslBump1\n"
            "acl step2 at_step SslBump2\n"
            "ssl_bump peek step1\n"
            + ("ssl_bump peek step2\n" if peek_step2 else "")
            + "ssl_bump splice all\n")


def connect_through(port: int, target_port: int) -> Tuple[socket.socket, bytes]:
    """CONNECT on the ssl-bump port; returns the socket and Squid's answer head."""
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    s.sendall(f"CONNECT 127.0.0.1:{target_port} HTTP/1.1\r\nHost: 127.0.0.1:{target_port}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        c = s.recv(1)        # byte by byte: nothing after the head is ours
        if not c:
            break
        head += c
    return s, head


def _client_ctx() -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


SPLICE_BYTES = 1_000_000
SPLICE_BPS = 2_000_000             # 4 s


@pytest.mark.parametrize("tunnels", ["count", "schedule"])
def test_spliced_tunnel_slot_and_bytes(tunnels, tls_squid, tls_origin, cert):
    """A CONNECT peeked at step 1 and spliced at step 2; the origin streams
    1,000,000 bytes of TLS application data over about 4 s. With `schedule`
    the spliced tunnel waits for a slot and is released; once 64 KB crossed
    it is a long transfer outside the window (W = 0, outstanding 1,
    long_transfers 1 while it streams) and ends when it closes; with
    `count` it holds nothing. Either way its bytes are charged to the
    class (the TLS records: the application data plus the handshake and
    the records' overhead), and the CONNECT that Squid answered itself
    before bumping is not scheduled: one request released (schedule) or
    none (count)."""
    bump = free_port()
    sq = tls_squid(sched=sched_conf(window="fixed 1", more=f"request_sched_tunnels {tunnels}"),
                   extra=bump_conf(cert, bump))
    org = tls_origin(SPLICE_BYTES, SPLICE_BPS)
    s, head = connect_through(bump, org.port)
    assert head.startswith(b"HTTP/1.1 200"), head
    got = 0
    samples: List[h.Report] = []
    with _client_ctx().wrap_socket(s, server_hostname="rstest") as t:
        t.settimeout(20)
        while True:
            c = t.recv(65536)
            if not c:
                break
            got += len(c)
            if SPLICE_BYTES // 4 < got and len(samples) < 3:
                samples.append(sq.report())
    assert got == SPLICE_BYTES and org.handshakes == 1 and len(samples) == 3
    held = 1 if tunnels == "schedule" else 0
    for rp in samples:
        # past request_sched_long_transfer (64 KB) a scheduled tunnel has
        # left the window like any long response: W = 0, still outstanding
        assert rp.g("W") == 0 and rp.c("a", "outstanding") == held, rp.text
        assert rp.g("long_transfers") == held and rp.g("ended") == 0, rp.text
    rp = idle(sq)
    assert_balanced(rp)
    assert rp.g("released") == held, rp.text
    charged = rp.c("a", "bytes")
    # the records add about 22 bytes per 16 KB record; the handshake a few KB
    assert SPLICE_BYTES < charged < SPLICE_BYTES + 16384, f"charged {charged:.0f}:\n{rp.text}"
    print(f"spliced {tunnels}: W/outstanding/long_transfers while streaming "
          f"{[(r.g('W'), r.c('a', 'outstanding'), r.g('long_transfers')) for r in samples]}, "
          f"charged {charged:.0f} bytes for {SPLICE_BYTES} of application data")


def test_queued_splice_times_out_without_http_bytes(tls_squid, tls_origin, origin, cert):
    """`schedule`, `fixed 1` held by a 4 s blocker, a 1 s queue timeout: the
    client has Squid's own 200 for its CONNECT and sends its ClientHello;
    the spliced tunnel waits in the queue and at the timeout the connection
    is closed with nothing written after the 200 (before patch 32: an HTTP
    503 inside the TLS stream). The origin never sees a connection."""
    bump = free_port()
    sq = tls_squid(sched=sched_conf(window="fixed 1", more="request_sched_tunnels schedule\n"
                                                           "request_sched_queue_timeout 1 second"),
                   extra=bump_conf(cert, bump))
    org = tls_origin(SPLICE_BYTES, SPLICE_BPS)
    blocker = _block_window(sq, origin, 1, 4000)
    wait_until(lambda: sq.report().g("W") == 1, 5, what="the blocker to hold the one slot")
    s, head = connect_through(bump, org.port)
    assert head.startswith(b"HTTP/1.1 200"), head
    out = ssl.MemoryBIO()
    tls = _client_ctx().wrap_bio(ssl.MemoryBIO(), out, server_hostname="rstest")
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    t0 = time.monotonic()
    s.sendall(out.read())                            # the ClientHello
    wait_until(lambda: sq.report().g("queued") == 1, 5, what="the spliced tunnel to wait in the queue")
    waited = assert_closed_at_queue_timeout(sq, s, t0, lambda: org.accepted, blocker)
    print(f"queued splice: closed after {waited:.2f}s, 0 bytes after the 200")


def test_splice_after_a_step2_peek_is_counted_never_queued(tls_squid, tls_origin, origin, cert):
    """`ssl_bump peek step2` as well: Squid connects to the origin to peek
    at its certificate (FwdState::fwdStart(), outside the scheduler) and
    the splice at step 3 turns that connection into a tunnel
    (switchToTunnel(), as for a 101 upgrade): charged to the class, never
    queued, holding no slot. With `schedule` and `fixed 1` held by a 4 s
    blocker, the client gets all 200,000 bytes (0.8 s at 2 Mbit/s) while
    the blocker still holds the only slot."""
    nbytes = 200_000
    bump = free_port()
    sq = tls_squid(sched=sched_conf(window="fixed 1", more="request_sched_tunnels schedule"),
                   extra=bump_conf(cert, bump, peek_step2=True))
    org = tls_origin(nbytes, SPLICE_BPS)
    blocker = _block_window(sq, origin, 1, 4000)
    wait_until(lambda: sq.report().g("W") == 1, 5, what="the blocker to hold the one slot")
    t0 = time.monotonic()
    s, head = connect_through(bump, org.port)
    assert head.startswith(b"HTTP/1.1 200"), head
    got = 0
    with _client_ctx().wrap_socket(s, server_hostname="rstest") as t:
        t.settimeout(20)
        while c := t.recv(65536):
            got += len(c)
    took = time.monotonic() - t0
    rp1 = sq.report()
    assert got == nbytes and org.handshakes == 1
    assert took < 3.0, f"the splice took {took:.2f}s: it waited for the blocker's slot"
    assert rp1.g("W") == 1 and rp1.g("queued") == 0 and rp1.g("released") == 1, rp1.text
    assert blocker.join(10)[0].ok
    rp = idle(sq)
    assert_balanced(rp)
    assert rp.g("released") == 1, rp.text
    assert nbytes < rp.c("a", "foreign_bytes") < nbytes + 16384, rp.text
    print(f"step-3 splice: {got} bytes in {took:.2f}s beside the blocker, foreign_bytes "
          f"{rp.c('a', 'foreign_bytes'):.0f}, released {rp.g('released'):.0f}")


# --------------------------------------------------------------------------
# SslBump bump: the requests inside the decrypted stream
# --------------------------------------------------------------------------
class TlsHttpOrigin(TlsStreamer):
    """An HTTPS origin on 127.0.0.1: after the handshake it reads one request
    head and answers 200 with `nbytes` of body at `rate_bps`, then closes.
    `requests` counts the requests it answered."""
    requests = 0

    def _answer(self, t: ssl.SSLSocket) -> None:
        if recv_head(t) is None:
            return
        self.requests += 1
        t.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {self.nbytes}\r\n"
                  "Content-Type: application/octet-stream\r\nConnection: close\r\n\r\n".encode())
        super()._answer(t)


def bumped_get(port: int, target_port: int) -> Tuple[bytes, int]:
    """CONNECT on the ssl-bump port, TLS with Squid (its static certificate),
    then one GET to the origin inside the decrypted stream; returns the
    answer's status line and the bytes of its body."""
    s, head = connect_through(port, target_port)
    assert head.startswith(b"HTTP/1.1 200"), head
    with _client_ctx().wrap_socket(s, server_hostname="127.0.0.1") as t:
        t.settimeout(20)
        t.sendall(f"GET /bumped HTTP/1.1\r\nHost: 127.0.0.1:{target_port}\r\n"
                  "Connection: close\r\n\r\n".encode())
        answer = b""
        while c := t.recv(65536):
            answer += c
    head, _, body = answer.partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0], len(body)


def bump_all_conf(cert: Path, port: int) -> str:
    """Bump every CONNECT at step 1 with the port's own certificate (no
    certificate generation, so no helper); the origin's self-signed
    certificate is not verified."""
    return (f"http_port 127.0.0.1:{port} ssl-bump tls-cert={cert} "
            "generate-host-certificates=off\n"
            "tls_outgoing_options flags=DONT_VERIFY_PEER\n"
            "ssl_bump bump all\n")


BUMPED_BYTES = 300_000


@pytest.fixture
def bumped(tls_squid, cert: Path) -> Iterator[Callable[[str], Tuple[h.Squid, int, TlsHttpOrigin]]]:
    """bumped(more): a Squid with `fixed 1` and `more`, bumping every CONNECT
    on a port of its own, and an HTTPS origin of BUMPED_BYTES; (squid, the
    ssl-bump port, the origin), the origin stopped after the test."""
    made: List[TlsHttpOrigin] = []

    def make(more: str) -> Tuple[h.Squid, int, TlsHttpOrigin]:
        port = free_port()
        sq = tls_squid(sched=sched_conf(window="fixed 1", more=more), extra=bump_all_conf(cert, port))
        made.append(TlsHttpOrigin(cert, BUMPED_BYTES, 0))
        return sq, port, made[-1]
    yield make
    for org in made:
        org.stop()


def test_bumped_request_is_scheduled_like_plain_http(bumped, origin):
    """`ssl_bump bump all`: Squid answers the CONNECT itself and decrypts the
    stream; the GET inside it is forwarded over a new TLS connection to the
    origin, through the scheduler like any plain request. With `fixed 1`
    held by a 2 s blocker the bumped GET waits in the queue (the origin
    sees nothing yet), is released when the blocker ends, and its body is
    charged to its class; the CONNECT is not scheduled (2 released: the
    blocker and the GET)."""
    sq, bump, org = bumped("request_sched_tunnels schedule")
    blocker = _block_window(sq, origin, 1, 2000)
    wait_until(lambda: sq.report().g("W") == 1, 5, what="the blocker to hold the one slot")
    get = Background([lambda: bumped_get(bump, org.port)])
    wait_until(lambda: sq.report().g("queued") == 1, 5, what="the bumped GET to wait in the queue")
    assert org.accepted == 0, "the bumped GET reached the origin while queued"
    (status, got), = get.join(30)
    assert blocker.join(10)[0].ok
    assert status.startswith(b"HTTP/1.1 200") and got == BUMPED_BYTES, (status, got)
    assert org.requests == 1
    rp = idle(sq)
    assert_balanced(rp)
    assert rp.g("released") == 2, rp.text
    charged = rp.c("a", "bytes")
    assert BUMPED_BYTES < charged < BUMPED_BYTES + 2000, f"charged {charged:.0f}:\n{rp.text}"
    print(f"bumped GET: queued behind the blocker, then {got} bytes; released "
          f"{rp.g('released'):.0f}, charged {charged:.0f} bytes")


def test_queued_bumped_request_gets_an_http_error_inside_tls(bumped, origin):
    """The same with a 1 s queue timeout and a 4 s blocker: the bumped GET
    times out in the queue and gets Squid's HTTP 503 inside the decrypted
    stream (which, unlike a spliced or forced tunnel, carries HTTP); the
    origin never sees a connection."""
    sq, bump, org = bumped("request_sched_queue_timeout 1 second")
    blocker = _block_window(sq, origin, 1, 4000)
    wait_until(lambda: sq.report().g("W") == 1, 5, what="the blocker to hold the one slot")
    t0 = time.monotonic()
    status, _ = bumped_get(bump, org.port)
    waited = time.monotonic() - t0
    assert blocker.join(10)[0].ok
    assert status.startswith(b"HTTP/1.1 503"), status
    assert 0.9 < waited < 3.5, f"answered after {waited:.2f}s"
    assert org.accepted == 0
    rp = idle(sq)
    assert_balanced(rp)
    assert rp.g("timeouts") == 1 and rp.g("released") == 1, rp.text
    print(f"queued bumped GET: {status.decode()} after {waited:.2f}s")


# --------------------------------------------------------------------------
# ICAP RESPMOD
# --------------------------------------------------------------------------
class IcapServer(LoopbackServer):
    """A minimal ICAP/1.0 RESPMOD service that echoes the response. `hold`:
    seconds it waits after the encapsulated headers before reading the
    body (its receive buffer is 64 KB, so Squid's writes stop soon), or,
    with `answer_late`, after reading the whole body before answering.
    `got_headers` is set when a RESPMOD's headers arrived, `got_body` when
    its whole body did."""

    def __init__(self, hold: float, answer_late: bool):
        self.hold, self.answer_late = hold, answer_late
        self.got_headers, self.got_body = threading.Event(), threading.Event()
        self.respmods = 0
        super().__init__()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)

    def url(self) -> str:
        return f"icap://127.0.0.1:{self.port}/respmod"

    def _accepted(self, c: socket.socket) -> None:
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c: socket.socket) -> None:
        f = c.makefile("rb")
        try:
            c.settimeout(60)
            while not self._stop:
                head = self._head(f)
                if not head:
                    return
                method = head[0].split(" ", 1)[0]
                fields = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in head[1:])}
                if method == "OPTIONS":
                    c.sendall(b"ICAP/1.0 200 OK\r\nMethods: RESPMOD\r\nService: rstest\r\n"
                              b"ISTag: \"rs1\"\r\nOptions-TTL: 3600\r\nMax-Connections: 100\r\n"
                              b"Encapsulated: null-body=0\r\n\r\n")
                    continue
                self._respmod(c, f, fields["encapsulated"])
        except (OSError, ValueError, KeyError):
            return
        finally:
            c.close()

    @staticmethod
    def _head(f) -> List[str]:
        lines: List[str] = []
        while True:
            ln = f.readline()
            if not ln:
                return []
            ln = ln.decode("latin-1").rstrip("\r\n")
            if not ln:
                return lines
            lines.append(ln)

    def _respmod(self, c: socket.socket, f, encapsulated: str) -> None:
        parts: Dict[str, int] = {k.strip(): int(v) for k, _, v in (p.partition("=") for p in encapsulated.split(","))}
        body_at = parts.get("res-body", parts.get("null-body", 0))
        hdrs = f.read(body_at)
        res_hdr = hdrs[parts["res-hdr"]:]
        self.respmods += 1
        self.got_headers.set()
        if not self.answer_late:
            time.sleep(self.hold)
        chunks: List[bytes] = []
        if "res-body" in parts:
            while True:
                size = int(f.readline().split(b";")[0], 16)
                chunks.append(f.read(size))
                f.readline()
                if size == 0:
                    break
        body = b"".join(chunks)
        self.got_body.set()
        if self.answer_late:
            time.sleep(self.hold)
        enc = f"res-hdr=0, res-body={len(res_hdr)}" if "res-body" in parts else f"res-hdr=0, null-body={len(res_hdr)}"
        c.sendall(f"ICAP/1.0 200 OK\r\nISTag: \"rs1\"\r\nEncapsulated: {enc}\r\n\r\n".encode() + res_hdr
                  + (f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n" if body else b"0\r\n\r\n"))


def icap_conf(svc: IcapServer) -> str:
    return ("icap_enable on\n"
            "icap_preview_enable off\n"
            f"icap_service rsicap respmod_precache {svc.url()} bypass=off\n"
            "adaptation_access rsicap allow all\n")


# the responses the ICAP service and the eCAP adapter hold, and for how long (s)
ADAPT_HOLD = 4.0
ADAPT_BIG = 8_000_000               # far more than the socket buffers and Squid's body pipe
ADAPT_SMALL = 50_000


@pytest.fixture
def icap_server() -> Iterator[Callable[[float, bool], IcapServer]]:
    made: List[IcapServer] = []

    def make(hold: float, answer_late: bool) -> IcapServer:
        s = IcapServer(hold, answer_late)
        made.append(s)
        return s
    yield make
    for s in made:
        s.stop()


def _unchanged(origin, path: str, quiet: float) -> bool:
    """The origin wrote nothing more for path in `quiet` seconds."""
    before = origin.sent[path]
    time.sleep(quiet)
    return origin.sent[path] == before


def _held_fetch(tls_squid, scripted_origin, path: str, size: int,
                adaptation: str) -> Tuple[h.Squid, Background]:
    """A Squid (fixed 1) whose responses go through the adaptation service
    configured by `adaptation`, and one client fetching `size` no-store
    bytes of path in the background."""
    sq = tls_squid(sched=sched_conf(window="fixed 1"), extra=adaptation)
    url = scripted_origin.add(path, "HTTP/1.1 200 OK\nContent-Length: %d\nCache-Control: no-store\n"
                              "Connection: close\n" % size, body=size)
    return sq, Background([lambda: http_get(sq.port, url, timeout=30)])


def _icap_fetch(icap_server, tls_squid, scripted_origin, path: str, size: int,
                answer_late: bool) -> Tuple[IcapServer, h.Squid, Background]:
    """_held_fetch through an ICAP service holding the response ADAPT_HOLD s."""
    svc = icap_server(ADAPT_HOLD, answer_late)
    return (svc,) + _held_fetch(tls_squid, scripted_origin, path, size, icap_conf(svc))


def test_icap_service_holding_a_large_body_keeps_its_ticket(tls_squid, scripted_origin, icap_server):
    """The service reads the encapsulated headers and then nothing for 4 s
    (8,000,000-byte response): Squid's writes to it stop, its body pipe
    fills, and Squid stops reading the origin with the link idle (once the
    origin's writes stalled for 0.3 s, at most 512 KB more in the next
    1.5 s: socket buffers growing). Past request_sched_long_transfer (64 KB) the response has left
    the window (W = 0, long_transfers 1) but stays outstanding, not ended:
    its ticket, its flow and its user stay while the service holds it."""
    svc, sq, bg = _icap_fetch(icap_server, tls_squid, scripted_origin, "/icap-big", ADAPT_BIG, False)
    assert svc.got_headers.wait(10), "no RESPMOD reached the service"
    wait_until(lambda: _unchanged(scripted_origin, "/icap-big", 0.3), 2.5, step=0,
               what="the origin's writes to stall")
    sent1, rp1 = scripted_origin.sent["/icap-big"], sq.report()
    time.sleep(1.5)
    sent2, rp2 = scripted_origin.sent["/icap-big"], sq.report()
    assert not svc.got_body.is_set()
    r = bg.join(30)[0]
    assert r.ok and r.body_len == ADAPT_BIG, r
    # socket buffers may still grow by a few steps (0-128 KB measured):
    # under 3 Mbit/s, after about 6 MB in the first fraction of a second
    assert sent1 < ADAPT_BIG and sent2 - sent1 <= 524288, f"origin bytes moved during the hold: {sent1} -> {sent2}"
    for rp in (rp1, rp2):
        assert rp.g("W") == 0 and rp.g("long_transfers") == 1, rp.text
        assert rp.c("a", "outstanding") == 1 and rp.g("ended") == 0, rp.text
    rp = idle(sq)
    assert_balanced(rp)
    assert rp.g("released") == 1 and svc.respmods == 1, rp.text
    print(f"ICAP holding the body: W {rp1.g('W'):.0f}/{rp2.g('W'):.0f}, outstanding "
          f"{rp1.c('a', 'outstanding'):.0f}/{rp2.c('a', 'outstanding'):.0f}, class bytes "
          f"{rp1.c('a', 'bytes'):.0f}/{rp2.c('a', 'bytes'):.0f}, origin stalled at {sent1} -> {sent2} of {ADAPT_BIG} bytes")


def _late_answer_hands_the_slot_on(sq: h.Squid, scripted_origin, bg: Background, name: str) -> str:
    """The adaptation service holds the 50,000-byte response of `bg` and
    the origin's end was just seen (t0). A request for /NAME-next arriving
    now reaches the origin within 2 s under `fixed 1`; at 0.5 s (or then)
    W = 0, nothing ended, both responses long transfers and outstanding,
    the first client still waiting; its body arrives ADAPT_HOLD s after t0;
    both are charged. Returns what it measured."""
    t0 = time.monotonic()
    url2 = scripted_origin.add(f"/{name}-next", "HTTP/1.1 200 OK\nContent-Length: 1000\nCache-Control: no-store\n"
                               "Connection: close\n", body=1000)
    bg2 = Background([lambda: http_get(sq.port, url2, timeout=30)])
    assert scripted_origin.done[f"/{name}-next"].wait(2), "the next request waited for the adaptation"
    t_next = time.monotonic() - t0
    time.sleep(max(0.0, 0.5 - (time.monotonic() - t0)))
    rp1 = sq.report()
    assert bg.threads[0].is_alive(), "the client got its response before the adaptation answered"
    r, r2 = bg.join(30)[0], bg2.join(30)[0]
    t_body = r.t_end - t0
    assert r.ok and r.body_len == ADAPT_SMALL, r
    assert r2.ok and r2.body_len == 1000, r2
    # the hold started when Squid had the origin's end: a few ms before t0
    assert ADAPT_HOLD - 0.2 < t_body < ADAPT_HOLD + 2, f"the body came {t_body:.2f}s after the origin's end"
    assert rp1.g("W") == 0 and rp1.g("ended") == 0, rp1.text
    assert rp1.g("long_transfers") == rp1.c("a", "outstanding") == 2, rp1.text
    wait_until(lambda: sq.report().g("ended") == 2, 5, what="both tickets to end")
    rp = idle(sq)
    assert_balanced(rp)
    charged = rp.c("a", "bytes")
    assert rp.g("released") == 2 and ADAPT_SMALL + 1000 <= charged < ADAPT_SMALL + 1000 + 2000, rp.text
    return (f"the next request at the origin {t_next:.2f}s after the first's origin end, "
            f"W {rp1.g('W'):.0f} at {max(0.5, t_next):.1f}s, first body at the client after {t_body:.2f}s, "
            f"class bytes {charged:.0f}")


def test_icap_late_answer_hands_the_slot_on(tls_squid, scripted_origin, icap_server):
    """The service reads the whole 50,000-byte virgin body at once and
    answers 4 s later. Squid completes the forwarding only once the
    adaptation is done (Client::serverComplete2() waits for
    doneWithAdaptation()), but the link is done with the response when the
    origin's is over (patch 40, Ticket::linkDone()): the slot goes on (W 0,
    the response a long transfer) while the request stays outstanding until
    the service answers, and a request that arrives during the hold reaches
    the origin at once under `fixed 1` (before patch 40 it waited the 4 s)."""
    svc, sq, bg = _icap_fetch(icap_server, tls_squid, scripted_origin, "/icap-small", ADAPT_SMALL, True)
    assert svc.got_body.wait(10), "the service did not get the whole body"
    assert scripted_origin.done["/icap-small"].wait(5)
    print("ICAP answering late: " + _late_answer_hands_the_slot_on(sq, scripted_origin, bg, "icap"))


# --------------------------------------------------------------------------
# eCAP RESPMOD
# --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ecap_hold(session_dir: Path) -> Path:
    """The adapter module ecap_hold.cc, built with g++ against libecap into
    the (world-readable) session directory; skips without libecap3-dev."""
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libecap"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True) if shutil.which("pkg-config") else None
    if flags is None or flags.returncode != 0 or not shutil.which("g++"):
        pytest.skip("no libecap (libecap3-dev) or g++: cannot build the eCAP adapter")
    out = session_dir / "ecap_hold.so"
    subprocess.run(["g++", "-shared", "-fPIC", "-O1", "-o", str(out), str(HERE / "ecap_hold.cc"),
                    *flags.stdout.split()], check=True, timeout=300)
    return out


def ecap_conf(module: Path, hold_from: str) -> str:
    """The adapter holds each response ADAPT_HOLD s after the end of its
    virgin body (`body`, taken as it arrives) or after its headers
    (`headers`, taking nothing of the body until then)."""
    return (f"loadable_modules {module}\n"
            "ecap_enable on\n"
            "ecap_service rsecap respmod_precache uri=ecap://reqsched.test/hold bypass=off "
            f"hold={ADAPT_HOLD:g} from={hold_from}\n"
            "adaptation_access rsecap allow all\n")


def test_ecap_late_answer_hands_the_slot_on(tls_squid, scripted_origin, ecap_hold):
    """As test_icap_late_answer_hands_the_slot_on, through the eCAP adapter:
    it takes the whole 50,000-byte virgin body as it arrives and answers 4 s
    after its end (eCAP goes through the same Client and Initiator path)."""
    sq, bg = _held_fetch(tls_squid, scripted_origin, "/ecap-small", ADAPT_SMALL, ecap_conf(ecap_hold, "body"))
    assert scripted_origin.done["/ecap-small"].wait(10), "the origin did not finish its response"
    print("eCAP answering late: " + _late_answer_hands_the_slot_on(sq, scripted_origin, bg, "ecap"))


def test_ecap_adapter_holding_a_large_body_keeps_its_ticket(tls_squid, scripted_origin, ecap_hold):
    """The adapter takes nothing of the 8,000,000-byte virgin body for 4 s
    after the headers: Squid reads the head and its 64 KB virgin body pipe
    and stops reading the origin with the link idle. That is just past
    request_sched_long_transfer (64 KB, by the head's bytes): the response
    has left the window (W = 0, long_transfers 1) but stays outstanding,
    not ended, for the hold (with a higher threshold it would hold its
    slot: doc/squid.md); the client's first byte comes after the hold."""
    sq, bg = _held_fetch(tls_squid, scripted_origin, "/ecap-big", ADAPT_BIG, ecap_conf(ecap_hold, "headers"))
    wait_until(lambda: scripted_origin.sent["/ecap-big"] > 0, 10, what="the origin to answer")
    wait_until(lambda: _unchanged(scripted_origin, "/ecap-big", 0.3), 2.5, step=0,
               what="the origin's writes to stall")
    sent1, rp1 = scripted_origin.sent["/ecap-big"], sq.report()
    time.sleep(1.5)
    sent2, rp2 = scripted_origin.sent["/ecap-big"], sq.report()
    r = bg.join(30)[0]
    assert r.ok and r.body_len == ADAPT_BIG, r
    assert r.t_first - r.t_start > ADAPT_HOLD, f"first byte after {r.t_first - r.t_start:.2f}s"
    assert sent1 < ADAPT_BIG and sent2 - sent1 <= 524288, f"origin bytes moved during the hold: {sent1} -> {sent2}"
    for rp in (rp1, rp2):
        assert rp.g("W") == 0 and rp.g("long_transfers") == 1, rp.text
        assert rp.c("a", "outstanding") == 1 and rp.g("ended") == 0, rp.text
        assert 65536 < rp.c("a", "bytes") < 65536 + 1000, f"Squid read more than its body pipe:\n{rp.text}"
    rp = idle(sq)
    assert_balanced(rp)
    assert rp.g("released") == 1, rp.text
    print(f"eCAP holding the body: W {rp1.g('W'):.0f}/{rp2.g('W'):.0f}, outstanding "
          f"{rp1.c('a', 'outstanding'):.0f}/{rp2.c('a', 'outstanding'):.0f}, class bytes "
          f"{rp1.c('a', 'bytes'):.0f}/{rp2.c('a', 'bytes'):.0f}, origin stalled at {sent1} -> {sent2} of "
          f"{ADAPT_BIG} bytes; client's first byte after {r.t_first - r.t_start:.2f}s")
