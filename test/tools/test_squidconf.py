# SPDX-License-Identifier: GPL-2.0-or-later
"""squid.conf of the modes: the byte layer on, off (/nopacing) and on a Squid
without its directives; the CONNECT ACL; the tbf buffer limit."""
from reqsched_tools import netns, scenario, squidconf

SC = scenario.build({"classes": [{"name": "a", "weight": 2, "users": 1},
                                 {"name": "b", "weight": 1, "users": 1}]})
ALL = frozenset(squidconf.BYTE_LAYER_DIRECTIVES)


def mode(text):
    return scenario.parse_mode(text, "wrc-mult", 0.98)


def test_pacing_mode_has_byte_layer_and_wan_counter():
    lines = squidconf.reqsched_conf(SC, mode("msf"), ALL)
    assert "request_sched_pacing on" in lines
    assert "request_sched_link_counter iface wan0 rx" in lines
    # even a Squid without the directives gets them: -k parse must then fail
    assert "request_sched_pacing on" in squidconf.reqsched_conf(SC, mode("msf"), frozenset())


def test_link_is_the_tbf_line_rate():
    """request_sched_link is the rate the ISP's tbf shapes (Squid takes its
    payload, patch 49), not the payload the testbed once computed itself."""
    assert f"request_sched_link {int(SC.downlink_bps)} bit" in squidconf.reqsched_conf(SC, mode("msf"), ALL)


def test_keep_mode_keeps_idle_shares():
    lines = squidconf.reqsched_conf(SC, mode("msf/keep"), ALL)
    assert "request_sched_pacing on" in lines
    assert "request_sched_pacing_idle_share keep" in lines
    assert not [x for x in squidconf.reqsched_conf(SC, mode("msf"), ALL) if "idle_share" in x]


def test_nopacing_is_admission_only():
    lines = squidconf.reqsched_conf(SC, mode("msf/nopacing"), ALL)
    assert "request_sched_pacing off" in lines
    assert "request_sched_link_counter none" in lines
    old = squidconf.reqsched_conf(SC, mode("msf/nopacing"), frozenset())
    assert not [x for x in old if "pacing" in x or "link_counter" in x]
    half = squidconf.reqsched_conf(SC, mode("msf/nopacing"),
                                   frozenset({"request_sched_pacing"}))
    assert "request_sched_pacing off" in half and not [x for x in half if "counter" in x]


def test_connect_acl_allows_the_tunnel_port(tmp_path):
    path = squidconf.write(SC, mode("stock"), str(tmp_path), "nobody", True)
    text = open(path).read()
    assert f"acl SSL_ports port {squidconf.TUNNEL_PORT}" in text
    assert text.index("http_access deny CONNECT !SSL_ports") < text.index("http_access allow lan")
    assert "request_scheduler off" in text


def test_smp_workers_listen_with_worker_queues():
    """With SMP workers every worker listens on a socket of its own
    (worker-queues), which the patched Squid steers by client address; one
    process keeps the plain port."""
    smp = scenario.build({"classes": [{"name": "a", "weight": 1, "users": 1}], "proxy": {"workers": 2}})
    lines = squidconf.base_conf(smp, "/run", "nobody", True)
    assert "http_port 3128 worker-queues" in lines and "workers 2" in lines
    assert "http_port 3128" in squidconf.base_conf(SC, "/run", "nobody", True)
    assert not [x for x in squidconf.base_conf(SC, "/run", "nobody", True) if "worker" in x]


def test_buffer_limit_bytes():
    assert netns.buffer_limit_bytes(2_000_000, 250) == 62_500
    assert netns.buffer_limit_bytes(2_000_000, 1000) == 250_000
    assert netns.buffer_limit_bytes(2_000_000, 1) == 4 * netns.MTU_FRAME


def test_parse_output_rejects_only_errors():
    from reqsched_tools.testbed import rejects
    ok = ("2026/11/23 12:42:54| Processing: request_scheduler off\n"
          "2026/11/23 12:42:54| Processing: request_sched_pacing off\n")
    assert not rejects(ok, "request_sched_pacing") and not rejects(ok, "request_scheduler")
    bad = ok + "2026/11/23 12:42:51| q.conf(3): unrecognized: 'request_sched_pacing'\n"
    assert rejects(bad, "request_sched_pacing") and not rejects(bad, "request_scheduler")
    assert rejects("FATAL: Bungled squid.conf line 3: request_sched_link_counter iface x",
                   "request_sched_link_counter")


def test_pacing_modes_keep_their_window_where_the_squid_can(tmp_path):
    """request_sched_window_file in the mode's directory: for the pacing modes
    of a Squid that knows it, not for /nopacing, stock or an older Squid."""
    known = ALL | {squidconf.WINDOW_FILE_DIRECTIVE}
    line = f"request_sched_window_file {tmp_path}/reqsched.window"
    assert line in open(squidconf.write(SC, mode("msf"), str(tmp_path), "nobody", True, known)).read()
    for m, k in (("msf/nopacing", known), ("stock", known), ("msf", ALL)):
        text = open(squidconf.write(SC, mode(m), str(tmp_path), "nobody", True, k)).read()
        assert "request_sched_window_file" not in text, m
