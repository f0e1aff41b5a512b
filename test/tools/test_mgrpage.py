# SPDX-License-Identifier: GPL-2.0-or-later
"""The request_sched cache manager page: numbers as floats, words and class
names as strings, unknown keys kept, lines without a colon ignored."""
from reqsched_tools.mgrpage import parse_mgr_page


def test_mgr_page():
    page = """reqsched: on
policy: msf
W: 3
W_max: 4.50
U: 0.975
class: name=gold weight=4 users=2 queued=5 outstanding=2 service=1.5 bytes=100 throughput_bps=800
class: name=bronze weight=1 users=0 queued=0 outstanding=0 service=0.000 bytes=0 throughput_bps=0
garbage without colon
"""
    d = parse_mgr_page(page)
    assert d["global"]["W"] == 3 and d["global"]["W_max"] == 4.5 and d["global"]["U"] == 0.975
    assert d["global"]["policy"] == "msf"
    assert [c["name"] for c in d["classes"]] == ["gold", "bronze"]
    assert d["classes"][0]["queued"] == 5


def test_mgr_page_class_names_stay_strings():
    d = parse_mgr_page("W: 0\nclass: name=2024 weight=1 queued=0\n")
    assert d["classes"] == [{"name": "2024", "weight": 1.0, "queued": 0.0}]


def test_mgr_page_byte_layer_keys_parse_tolerantly():
    page = """reqsched: on
W: 2
W_max: 3.00
U: 0.981
link_counter: iface wan0 rx
link_source: counter
link_counter_state: ok
link_bytes: 500000
proxied_bytes: 400000
exceptive_bytes: 100000
interval_s: 2.000
pace_bps: 1550000
flows: 7
flows_waiting: 2
window_bytes: 48000
long_transfers: 3
some_future_key: 17
class: name=gold weight=4 users=2 queued=0 outstanding=1 bytes=9 flows=4 share_bps=1200000.5
"""
    d = parse_mgr_page(page)
    g = d["global"]
    assert g["link_counter"] == "iface wan0 rx" and g["link_counter_state"] == "ok"
    assert (g["link_bytes"], g["exceptive_bytes"], g["interval_s"]) == (500000, 100000, 2.0)
    assert (g["pace_bps"], g["flows"], g["window_bytes"], g["long_transfers"]) == \
        (1550000, 7, 48000, 3)
    assert g["some_future_key"] == 17
    assert d["classes"][0]["flows"] == 4 and d["classes"][0]["share_bps"] == 1200000.5


def test_mgr_page_resources():
    """The website gateway's resource lines are records; the class lines
    carry in_use_NAME and consumed_NAME."""
    page = """W: 1
page_table: /etc/squid/pages.table
cost_exact: 12
resource: name=cpu capacity=10000 in_use=6000 available=4000 consumed=72000
resource: name=bw capacity=9000 in_use=100 available=8900 consumed=1200
class: name=gold weight=6 queued=2 in_use_cpu=6000 consumed_cpu=60000 in_use_bw=100 consumed_bw=1000
"""
    d = parse_mgr_page(page)
    assert d["global"]["page_table"] == "/etc/squid/pages.table" and d["global"]["cost_exact"] == 12
    assert "resource" not in d["global"]
    assert [r["name"] for r in d["resources"]] == ["cpu", "bw"]
    assert d["resources"][0]["available"] == 4000 and d["resources"][1]["capacity"] == 9000
    assert d["classes"][0]["consumed_cpu"] == 60000


def test_mgr_page_smp_kids_workers_and_proxy():
    """An SMP Squid's answer: each worker's page between "by kidN {" and
    "} by kidN"; each page has its "worker:" lines and a "proxy:" line."""
    from reqsched_tools.mgrpage import parse_mgr_kids

    def page(kid: int, share: float) -> str:
        return (f"by kid{kid} {{\nreqsched: on\nW: {kid}\nlink_share: {share}\nsmp_workers: 2\n"
                "worker: kid=1 live=yes share=0.800 used=0.790 limited=yes W=3 W_max=3.00 queued=4 users=2\n"
                "worker: kid=2 live=no share=0.200 used=0.000 limited=no W=0 W_max=1.00 queued=0 users=0\n"
                "proxy: W=3 W_max=3.00 queued=4 users=2\n"
                f"class: name=gold weight=4 users=2\n}} by kid{kid}\n\n")
    kids = parse_mgr_kids(page(1, 0.8) + page(2, 0.2))
    assert sorted(kids) == [1, 2]
    assert kids[2]["global"]["W"] == 2 and kids[2]["global"]["link_share"] == 0.2
    w = kids[1]["workers"]
    assert [x["kid"] for x in w] == [1, 2] and w[0]["live"] == "yes" and w[1]["share"] == 0.2
    assert kids[1]["proxy"] == {"W": 3, "W_max": 3, "queued": 4, "users": 2}
    assert kids[1]["classes"][0]["name"] == "gold"
    assert parse_mgr_kids("W: 1\n") == {}


def test_mgr_proxy_merges_smp_workers():
    """The testbed's view of an SMP Squid: counts summed over workers, U weighted
    by each worker's link share, per class bytes summed and weights kept; a
    one-process page comes through as parse_mgr_page() reads it."""
    from reqsched_tools.mgrpage import parse_mgr_page, parse_mgr_proxy

    def page(kid: int, w: int, u: float, share: float, gold_bytes: int) -> str:
        return (f"by kid{kid} {{\nreqsched: on\nW: {w}\nW_max: {w}.00\nU: {u}\nlink_share: {share}\n"
                f"policy: msf\nclass: name=gold weight=4 users=1 bytes={gold_bytes} service=2.5\n"
                f"}} by kid{kid}\n\n")
    d = parse_mgr_proxy(page(1, 3, 0.9, 0.75, 1000) + page(2, 1, 1.0, 0.25, 300))
    g = d["global"]
    assert (g["W"], g["W_max"], g["link_share"], g["policy"]) == (4, 4, 1.0, "msf")
    assert abs(g["U"] - (0.9 * 0.75 + 1.0 * 0.25)) < 1e-9
    assert d["classes"] == [{"name": "gold", "weight": 4.0, "users": 2.0, "bytes": 1300.0,
                             "service": 2.5}]
    assert d["smp_kids"] == 2
    assert d["kids"]["2"]["global"]["W"] == 1 and d["kids"]["1"]["classes"][0]["bytes"] == 1000
    one = "W: 2\nclass: name=gold weight=4 bytes=5\n"
    assert parse_mgr_proxy(one) == parse_mgr_page(one)
