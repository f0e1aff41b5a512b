# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-origin on loopback: sizes, chunked, keep-alive, delay, pacing, reset, hang."""
import socket
import time

import pytest

from reqsched_tools.localnet import recv_head


@pytest.fixture(scope="module")
def port(start_origin, tmp_path_factory):
    sm = tmp_path_factory.mktemp("origin") / "sizes"
    sm.write_text("http://logged.example/a.html 4321\n/b 77\nbroken line here\n")
    p, port = start_origin("--size-map", str(sm))
    yield port
    p.terminate()
    err = p.communicate(timeout=5)[1]
    assert "skipped 1 malformed" in err


def request(port, path, host="t", sock=None):
    s = sock or socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    return s


def read_response(s):
    """(status, headers, body, closed_by_reset)."""
    buf = recv_head(s)
    if buf is None:
        raise EOFError
    head, body = buf.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    hdr = {k.lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    reset = False
    try:
        if "content-length" in hdr:
            n = int(hdr["content-length"])
            while len(body) < n:
                d = s.recv(65536)
                if not d:
                    break
                body += d
        else:
            while not body.endswith(b"0\r\n\r\n"):
                d = s.recv(65536)
                if not d:
                    break
                body += d
    except ConnectionResetError:
        reset = True
    return int(lines[0].split()[1]), hdr, body, reset


def dechunk(b):
    out = b""
    while True:
        line, _, b = b.partition(b"\r\n")
        n = int(line, 16)
        if n == 0:
            return out
        out, b = out + b[:n], b[n + 2:]


def test_size_and_keepalive(port):
    s = request(port, "/x?size=30k")
    st, hdr, body, _ = read_response(s)
    assert st == 200 and len(body) == 30000 and hdr["connection"] == "keep-alive"
    request(port, "/y?size=5&status=404", sock=s)
    st, _, body, _ = read_response(s)
    assert st == 404 and len(body) == 5
    s.close()


def test_size_map_and_deterministic_default(port):
    _, _, body, _ = read_response(request(port, "/a.html", host="logged.example"))
    assert len(body) == 4321
    _, _, body, _ = read_response(request(port, "/b", host="any"))
    assert len(body) == 77
    sizes = {len(read_response(request(port, "/some/url"))[2]) for _ in range(3)}
    assert len(sizes) == 1                       # same URL, same lognormal size


def test_chunked(port):
    st, hdr, body, _ = read_response(request(port, "/c?size=100000&chunked=1"))
    assert hdr["transfer-encoding"] == "chunked" and len(dechunk(body)) == 100000


def test_delay_and_pacing(port):
    t = time.monotonic()
    st, _, body, _ = read_response(request(port, "/d?size=50000&delay_ms=300&rate_bps=800000"))
    dt = time.monotonic() - t
    # 0.3 s first-byte delay + 50,000 B at 100,000 B/s = 0.8 s
    assert len(body) == 50000 and 0.7 <= dt <= 1.5, dt


def test_reset_after(port):
    st, _, body, reset = read_response(request(port, "/r?size=1000000&reset_after=20000"))
    assert st == 200 and reset and len(body) == 20000


def test_hang_never_answers(port):
    s = request(port, "/h?hang=1")
    s.settimeout(0.5)
    with pytest.raises(socket.timeout):
        s.recv(1)
    s.close()


def test_bad_parameter_is_400(port):
    st, _, body, _ = read_response(request(port, "/x?size=abc"))
    assert st == 400 and b"abc" in body
