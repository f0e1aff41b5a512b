# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-from-delay-pools output is accepted by the patched Squid's
`squid -k parse` (issue 12, item 10): the delay-pools configuration parses as
it is, its conversion parses without an ERROR or FATAL line, and the
converted file has no delay_* directive left. The mapping itself:
test/tools/test_delaypools.py and doc/delay-pools.md."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import rsharness as h
from reqsched_tools import delaypools

ACLS = ("acl lan_mgmt src 10.10.1.0/24\nacl lan_staff src 10.10.2.0/24\n"
        "acl guests src 10.10.9.0/24\nacl night time 00:00-06:00\n")
POOLS = {
    # squid-conf/compare-delay-pools.conf: three class 1 pools
    "class1": ("delay_pools 3\n"
               "delay_class 1 1\ndelay_parameters 1 714285/714285\n"
               "delay_access 1 allow lan_mgmt\ndelay_access 1 deny all\n"
               "delay_class 2 1\ndelay_parameters 2 357142/357142\n"
               "delay_access 2 allow lan_staff\ndelay_access 2 deny all\n"
               "delay_class 3 1\ndelay_parameters 3 178571/178571\n"
               "delay_access 3 allow all\n"),
    "class2": ("delay_pools 1\ndelay_class 1 2\ndelay_parameters 1 -1/-1 8000/16000\n"
               "delay_access 1 deny guests\ndelay_access 1 allow all\n"),
    "class3-mixed": ("delay_pools 2\n"
                     "delay_initial_bucket_level 50\n"
                     "delay_class 1 3\ndelay_parameters 1 64000/64000 -1/-1 4000/8000\n"
                     "delay_access 1 allow guests !night\n"
                     "delay_class 2 2\ndelay_parameters 2 500000/500000 50000/50000\n"
                     "delay_access 2 allow lan_staff\n"),
}


def parse(conf: Path) -> str:
    p = h.Squid.run_parse(conf)
    assert p.returncode == 0, f"squid -k parse rejected {conf}:\n{p.stdout[-2000:]}"
    assert not re.search(r"\bERROR\b|FATAL|unrecognized", p.stdout), p.stdout[-2000:]
    return p.stdout


@pytest.mark.parametrize("case", sorted(POOLS))
def test_converted_delay_pools_parse(case: str, workdir: Path, need_squid: None) -> None:
    sq = h.Squid(workdir / case, extra=POOLS[case], acls=ACLS)
    parse(sq.conf)      # the delay pools as they are
    converted = delaypools.convert(sq.conf.read_text(), delaypools.link_bps("10 Mbit"))
    assert not re.search(r"^\s*delay_", converted, re.MULTILINE)
    sq.conf.write_text(converted)
    parse(sq.conf)
