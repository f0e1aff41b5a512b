# SPDX-License-Identifier: GPL-2.0-or-later
"""The seeded synthetic access log (reqsched-load genlog) and the sample log
shipped in the repo."""
import io
import ipaddress
import os

import pytest

from reqsched_tools import genlog, load, logparse, logreplay
from reqsched_tools.scenario import SCENARIO_DIR


def gen(**kw):
    f = io.StringIO()
    n = genlog.generate(f, **kw)
    return f.getvalue(), n


def test_same_seed_same_log_and_every_line_parses():
    a, n = gen(seed=7, clients=120, pages=500, span_s=1000)
    assert a == gen(seed=7, clients=120, pages=500, span_s=1000)[0]
    assert a != gen(seed=8, clients=120, pages=500, span_s=1000)[0]
    st = logparse.ParseStats()
    es = logparse.parse_access_log(io.StringIO(a), st, "native")
    assert st.skipped == 0 and len(es) == n > 500
    assert [e.time for e in es] == sorted(e.time for e in es)
    s = logreplay.summary(es, st)
    nets = [ipaddress.ip_network(x) for x in ("10.1.1.0/24", "10.1.2.0/24", "10.2.1.0/24",
                                               "10.3.1.0/24")]
    assert all(any(ipaddress.ip_address(e.client) in n for n in nets) for e in es)
    assert 60 <= s["clients"] <= 120
    assert {"GET", "POST", "CONNECT"} <= set(s["methods"])
    assert s["methods"]["CONNECT"] > 0.05 * 500
    assert s["repeated_requests"] > 0.3 * len(es)          # Zipf-popular URLs repeat
    assert "3xx" in s["statuses"] and "4xx" in s["statuses"]
    sizes = sorted(e.bytes for e in es if e.method == "GET" and e.status == 200)
    assert sizes[-1] > 20 * sizes[len(sizes) // 2]          # heavy tail
    # the day: density 1 - 0.8 cos(2 pi x) puts 0.22, 0.55, 0.22 of the pages in
    # the span's thirds
    t0 = 1767258000.0                                       # generate()'s start_epoch
    thirds = [0, 0, 0]
    for e in es:
        thirds[min(2, int((e.start - t0) / 1000 * 3))] += 1
    assert thirds[1] > 1.8 * thirds[0] and thirds[1] > 1.8 * thirds[2]


def test_embedded_objects_follow_their_main_object():
    text, _ = gen(seed=3, clients=20, pages=50, span_s=100, connect=0, post=0, head=0)
    es = logparse.parse_access_log(io.StringIO(text), logparse.ParseStats())
    for e in es:
        if "/static/" in e.url:
            mains = [m for m in es if m.client == e.client and m.url.endswith(".html")
                     and m.time <= e.start]
            assert mains, e


def test_bad_options_are_refused(tmp_path):
    with pytest.raises(ValueError):
        gen(clients=0)
    with pytest.raises(ValueError):
        gen(post=0.6, connect=0.6)
    with pytest.raises(ValueError, match="do not fit"):
        gen(clients=2000, subnets=("10.0.0.0/24",))
    with pytest.raises(SystemExit):
        load.main(["genlog", str(tmp_path / "x"), "--clients", "-1"])


def test_the_sample_log_is_the_generators_output():
    """scenarios/sample-access.log is what its header's command writes."""
    path = os.path.join(SCENARIO_DIR, "sample-access.log")
    with open(path, encoding="utf-8") as f:
        header = f.readline()
        body = f.read()
    assert header.startswith("# reqsched-load genlog")
    opts = header.split("genlog OUT", 1)[1].split()
    kw = {}
    for k, v in zip(opts[::2], opts[1::2]):
        key = k[2:].replace("-", "_")
        kw[key] = tuple(v.split(",")) if key == "subnets" else float(v) if "." in v else int(v)
    assert body == gen(**kw)[0]
