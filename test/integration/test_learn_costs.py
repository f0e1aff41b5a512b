# SPDX-License-Identifier: GPL-2.0-or-later
"""Learned request costs (patch 37, request_sched_learn_costs): Squid in
accelerator mode with no page table at all learns what each URL costs the
origin server from the Server-Timing header of its responses (a metric per
request_sched_resource whose dur is the % of the resource held), and then
schedules by it as by a table's line.

The origin is test_website_gateway.py's (/heavy served in 0.1 s, others in
0.01 s unless a test sets its delay, concurrency per path recorded), answering with the Server-Timing
values each test sets."""
from __future__ import annotations

import collections
import re
from pathlib import Path
from typing import Callable

import rsharness as h
import test_website_gateway
from test_website_gateway import SITE, Origin, gateway, load

site = test_website_gateway.site  # the origin fixture, shared

LEARN = ("request_sched_learn_costs on\n"
         "reply_header_access Server-Timing deny all\n")
HEAVY_60 = "cpu;dur=60, bw;dur=1"
HEAVY_30 = "cpu;dur=30;desc=\"half\", bw;dur=1"


def test_learned_heavy_page_one_at_a_time(squid_factory: Callable[..., h.Squid], site: Origin) -> None:
    """No table, default cost 1 %: the first /heavy requests go four at a
    time; from the third report on (the URL is trusted) one at a time,
    like with the table's 60 % line, while /cheap/a (1 % CPU, 5 % bw)
    keeps flowing. Clients never see Server-Timing (reply_header_access
    applies after Squid read it); malformed values are counted."""
    site.timing = {"/heavy": HEAVY_60, "/cheap/a": "cpu;dur=1, bw;dur=5, db;dur=4.2",
                   "/bad": "cpu;dur=abc, bw;dur=2"}
    sq, port = gateway(squid_factory, site, None, more=LEARN)
    # warm-up: 4 clients on /heavy; at 1 % they all go at once
    warm = load(port, [("127.0.0.1", "/heavy", 4)], 1.0)
    assert site.peak["/heavy"] == 4, site.peak
    site.reset()
    done = load(port, [("127.0.0.1", "/heavy", 4), ("127.0.0.1", "/cheap/a", 2)], 3.0)
    assert all(st == 200 for _, _, st, _ in warm + done)
    n = collections.Counter(p for _, p, _, _ in done)
    assert site.peak["/heavy"] == 1, site.peak
    assert n["/heavy"] >= 10 and n["/cheap/a"] >= 100, n

    r = h.http_get(port, f"http://{SITE}/bad")
    assert r.status == 200 and "server-timing" not in r.headers, r.headers
    rep = sq.report()
    print(f"warm-up {len(warm)}, then {dict(n)}; " + ", ".join(
        f"{k} {rep.glob[k]}" for k in ("cost_default", "cost_learned_url", "cost_learned_pattern", "cost_reports",
                                       "cost_reports_malformed", "learned_entries", "learned_trusted")))
    assert rep.glob["page_table"] == "none" and rep.glob["learn_costs"] == "on"
    # every response reported (the /bad one too: its bw was valid)
    assert rep.g("cost_reports") == len(warm) + len(done) + 1, rep.text
    assert rep.g("cost_reports_malformed") == 1
    # /heavy, /cheap/a, /bad and the patterns "/*", "/cheap/*"
    assert rep.g("learned_entries") == 5 and rep.g("learned_capacity") == 4096
    assert rep.g("learned_trusted") == 4 and rep.g("learned_evictions") == 0
    assert rep.g("cost_exact") == rep.g("cost_pattern") == 0
    # the default until a URL had three reports: the first 6 /heavy (4 sent
    # at once, 2 after the first two reports), the first 4 /cheap/a (2 + 2);
    # then the URL's learned cost; /bad, reported once, its pattern "/*"
    assert rep.g("cost_default") <= 10, rep.text
    assert rep.g("cost_learned_url") >= n["/heavy"] + n["/cheap/a"] - 4, rep.text
    assert rep.g("cost_learned_pattern") == 1, rep.text
    assert rep.g("cost_learned_url") + rep.g("cost_learned_pattern") + rep.g("cost_default") \
        == len(warm) + len(done) + 1
    for rec in rep.resources.values():
        assert (rec["in_use"], rec["available"]) == (0, 10000), rec


def test_changed_cost_is_relearned(squid_factory: Callable[..., h.Squid], site: Origin) -> None:
    """/heavy reports 60 %, then 30 %: with each report weighing 25 %, about
    nine reports bring the average under 33.3 %, and three /heavy go at
    once, as a table line of 30 % gives; back at 60 %, one again."""
    site.timing = {"/heavy": HEAVY_60}
    sq, port = gateway(squid_factory, site, None, more=LEARN)
    load(port, [("127.0.0.1", "/heavy", 5)], 1.5)
    site.reset()
    load(port, [("127.0.0.1", "/heavy", 5)], 1.0)
    assert site.peak["/heavy"] == 1, site.peak

    site.timing["/heavy"] = HEAVY_30
    load(port, [("127.0.0.1", "/heavy", 5)], 2.0)
    site.reset()
    load(port, [("127.0.0.1", "/heavy", 5)], 1.5)
    assert site.peak["/heavy"] == 3, site.peak

    site.timing["/heavy"] = HEAVY_60
    load(port, [("127.0.0.1", "/heavy", 5)], 2.0)
    site.reset()
    load(port, [("127.0.0.1", "/heavy", 5)], 1.5)
    assert site.peak["/heavy"] == 1, site.peak
    assert sq.report().g("cost_reports_malformed") == 0


def test_table_line_before_learned_url(squid_factory: Callable[..., h.Squid], site: Origin,
                                       workdir: Path) -> None:
    """A table's exact line wins over what the server reports (/heavy at
    30 % in the table, 60 % reported: three at once); a learned URL wins
    over the table's pattern (/cheap/a reported at 60 % CPU, the pattern
    says 1 %: four at once until learned, then one at a time)."""
    table = workdir / "pages.table"
    table.write_text("resources cpu bw\n/heavy 30 1\n/cheap* 1 5\n")
    site.timing = {"/heavy": HEAVY_60, "/cheap/a": HEAVY_60}
    # served in 50 ms, not 10: the four first requests overlap at the origin
    # even when Squid dispatches them slowly (the sanitizers' build)
    site.delay["/cheap/a"] = 0.05
    sq, port = gateway(squid_factory, site, table, more=LEARN)
    load(port, [("127.0.0.1", "/heavy", 5)], 1.5)
    assert site.peak["/heavy"] == 3, site.peak
    load(port, [("127.0.0.1", "/cheap/a", 4)], 1.0)
    assert site.peak["/cheap/a"] == 4, site.peak
    site.reset()
    load(port, [("127.0.0.1", "/cheap/a", 4)], 1.5)
    assert site.peak["/cheap/a"] == 1, site.peak
    rep = sq.report()
    # /cheap/a at the pattern's 1 % until the URL's third report: the 4
    # sent at once, and the ones sent after the first and second reports
    assert 4 <= rep.g("cost_pattern") <= 6 and rep.g("cost_learned_url") >= 10, rep.text
    assert rep.g("cost_exact") >= 15 and rep.g("cost_default") == 0, rep.text


def test_parse_learn_costs(squid_factory: Callable[..., h.Squid], site: Origin) -> None:
    """request_sched_learn_costs needs resources; the table size is bounded."""
    sq, _ = gateway(squid_factory, site, None, more=LEARN + "request_sched_learn_entries 65536\n", start=False)
    p = h.Squid.run_parse(sq.conf)
    assert p.returncode == 0 and "ERROR" not in p.stdout, p.stdout[-2000:]
    conf = sq.conf.read_text()
    sq.conf.write_text(conf.replace("request_sched_learn_entries 65536", "request_sched_learn_entries 0"))
    p = h.Squid.run_parse(sq.conf)
    assert p.returncode != 0 and "request_sched_learn_entries 0 is not between 1 and 16777216" in p.stdout
    sq.conf.write_text(re.sub(r"request_sched_resource \w+\n", "", conf).replace("policy mqos", "policy msf"))
    p = h.Squid.run_parse(sq.conf)
    assert p.returncode != 0 and "request_sched_learn_costs on learns what requests cost" in p.stdout, \
        p.stdout[-2000:]
