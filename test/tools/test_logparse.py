# SPDX-License-Identifier: GPL-2.0-or-later
"""Log parsers: valid lines parse, malformed lines are skipped and counted."""
import io

from reqsched_tools import logparse
from reqsched_tools.replay import parse_addr_range, rewrite_entries

NATIVE = """\
1700000000.123    250 10.0.0.5 TCP_MISS/200 27656 GET http://example.com/a.html - HIER_DIRECT/93.184.216.34 text/html
1700000001.000     12 10.0.0.6 TCP_HIT/200 512 GET http://example.com/logo.png - HIER_NONE/- image/png
garbage line
1700000002.000 abc 10.0.0.6 TCP_MISS/200 5 GET http://x/ - HIER_DIRECT/1.2.3.4 -
1700000003.000 10 10.0.0.7 TCP_TUNNEL/200 4000 CONNECT example.com:443 - HIER_DIRECT/1.2.3.4 -
# a comment

1700000004.000 10 10.0.0.8 TCP_MISS/200 -5 GET http://x/neg - HIER_DIRECT/1.2.3.4 -
1700000005.000 33 10.0.0.9 TCP_MISS/404 300 GET https://b.example/x?y=1 - HIER_DIRECT/1.2.3.4 text/html
\x00\xff binary junk \x01
"""


def test_native_access_log_skips_and_counts_malformed():
    st = logparse.ParseStats()
    out = logparse.parse_native_access_log(io.StringIO(NATIVE), st)
    assert [e.url for e in out] == ["http://example.com/a.html", "http://example.com/logo.png",
                                    "example.com:443", "https://b.example/x?y=1"]
    assert out[0].bytes == 27656 and out[0].status == 200 and out[0].elapsed_ms == 250
    assert out[0].start == 1700000000.123 - 0.25
    assert out[2].method == "CONNECT" and out[2].bytes == 4000
    assert out[3].status == 404
    assert st.parsed == 4
    assert st.skipped == 4          # garbage, abc, negative size, binary junk
    assert st.lines == 8            # comments and blank lines are not counted
    assert st.first_errors and "line 3" in st.first_errors[0]


def test_testbed_access_log_notes():
    text = ("1795246005.066    208 10.10.2.3 TCP_MISS/200 16729 GET http://10.20.0.11/obj/1? "
            "silver-3.13 silver 512\n"
            "1795246005.166    308 10.10.3.4 TCP_MISS/200 3446 GET http://10.20.0.12/o? "
            "bronze-4.23 - -\n"
            "1795246005.166    308 10.10.3.4 TCP_MISS/200 3446 GET http://10.20.0.12/o?\n"
            "1795246005.166    308 10.10.3.4 TCP_MISS/200 xx GET http://10.20.0.12/o? a b c\n")
    st = logparse.ParseStats()
    out = logparse.parse_testbed_access_log(io.StringIO(text), st)
    assert len(out) == 2 and st.skipped == 2
    assert out[0].replay_id == "silver-3.13" and out[0].cls == "silver" and out[0].wait_ms == 512
    assert out[1].wait_ms is None and out[1].cls == "-"


def test_url_list():
    text = "http://a/x 100\nhttp://b/y\nftp://c/z\nhttp://d/w notanumber\nhttp://e/v 1 2\n"
    st = logparse.ParseStats()
    out = logparse.parse_url_list(io.StringIO(text), st)
    assert out == [("http://a/x", 100), ("http://b/y", None)]
    assert st.skipped == 3


def test_rewrite_keeps_path_and_maps_hosts_stably():
    servers = parse_addr_range("10.20.0.1-3")
    assert servers == ["10.20.0.1", "10.20.0.2", "10.20.0.3"]
    out = rewrite_entries([("http://example.com/a?b=1", 10), ("https://example.com/c", None),
                           ("http://other.org/", 5)], servers)
    host_a = out[0][0].split("/")[2]
    assert out[0] == (f"http://{host_a}/a?b=1", 10)
    assert out[1] == (f"http://{host_a}/c", 27656)        # same host -> same server
    assert out[2][0].endswith("/") and out[2][1] == 5


# Squid's "common" logformat appends " code:hierarchy"; Apache's combined adds
# referer and user agent (with an escaped quote here); bytes "-" is 0.
COMMON = """\
10.1.0.7 - - [14/Nov/2023:22:13:20 +0000] "GET http://example.com/a.html HTTP/1.1" 200 27656 TCP_MISS:HIER_DIRECT
10.1.0.8 - alice [14/Nov/2023:23:13:21 +0100] "HEAD http://example.com/b HTTP/1.1" 304 - TCP_REFRESH_UNMODIFIED:HIER_DIRECT
10.1.0.9 - - [14/Nov/2023:22:13:22 +0000] "POST http://api.example/x?q=1 HTTP/1.1" 201 512 "http://ref/" "Mozilla/5.0 (X11) \\"quoted\\""
10.1.0.9 - - [14/Nov/2023:22:13:23 +0000] "CONNECT mail.example:993 HTTP/1.1" 200 88000 "-" "-"
10.1.0.9 - - [31/Feb/2023:22:13:23 +0000] "GET http://x/ HTTP/1.1" 200 1
10.1.0.9 - - [14/Nov/2023:22:13:23 +0000] "GET /relative HTTP/1.1" 200 1
10.1.0.9 - - [14/Nov/2023:22:13:23 +0000] "\\x16\\x03\\x01" 400 0
"""


def test_common_and_combined_lines():
    st = logparse.ParseStats()
    out = logparse.parse_access_log(io.StringIO(COMMON), st, "common")
    assert [(e.method, e.status, e.bytes) for e in out] == [
        ("GET", 200, 27656), ("HEAD", 304, 0), ("POST", 201, 512), ("CONNECT", 200, 88000)]
    assert out[0].time == 1700000000.0 and out[0].start == out[0].time
    assert out[1].time == 1700000001.0 and out[1].login == "alice"     # +0100
    assert out[0].code == "TCP_MISS" and out[2].code == "-"
    assert out[2].url == "http://api.example/x?q=1" and out[3].url == "mail.example:993"
    assert st.skipped == 3          # 31 Feb, a relative URL, a TLS handshake as request
    assert any("line 5: bad value" in e for e in st.first_errors)


def test_auto_format_mixes_lines_and_never_raises():
    text = NATIVE + COMMON + "\n".join(["", "x" * 5000, "1 2 3 4 5 6 7 8", "[ \"", "\t\t",
                                       "1.0 5 c TCP_MISS/200 nan GET http://h/ - - -",
                                       "inf 5 c TCP_MISS/200 1 GET http://h/ - - -"])
    st = logparse.ParseStats()
    out = logparse.parse_access_log(io.StringIO(text), st)
    assert len(out) == 8 and st.parsed == 8
    assert st.lines == st.parsed + st.skipped
    assert {e.client for e in out} >= {"10.0.0.5", "10.1.0.7"}


def test_testbed_log_fields_land_in_their_names() -> None:
    """The testbed's log line: replay id, class and wait by name (a merge once
    passed them by position and shifted them into login and cls)."""
    st = logparse.ParseStats()
    [e] = logparse.parse_testbed_access_log(
        ["1700000000.000 12 10.0.0.1 TCP_MISS/200 500 GET http://a/b r1 gold 7"], st)
    assert (e.replay_id, e.cls, e.wait_ms, e.login) == ("r1", "gold", 7, "-")
