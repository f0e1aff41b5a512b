# SPDX-License-Identifier: GPL-2.0-or-later
"""9. `squid -k parse` accepts the contract grammar and rejects each bad
configuration naming the offending line.  Every bad case is paired with the
same file where only that line is correct, which must parse: so a rejection
can only come from the bad value (a Squid that does not know the directives
at all fails the good cases)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import List, Optional

import pytest

import rsharness as h

GOOD = [
    "request_scheduler on",
    "request_sched_link 10 Mbit",
    "request_sched_target_utilization 98%",
    "request_sched_policy msf",
    "request_sched_window wrc-mult",
    "request_sched_update_interval 5 seconds",
    "request_sched_user src",
    "request_sched_class gold 4",
    "request_sched_class silver 2",
    "request_sched_class bronze 1",
    "request_sched_access gold allow vip",
    "request_sched_access silver allow staff",
    "request_sched_access bronze allow all",
    "request_sched_queue_timeout 60 seconds",
    "request_sched_max_queued 10000",
    "request_sched_tunnels count",
]
ACLS = "acl vip src 127.0.0.2\nacl staff src 127.0.0.3\n"


def write_conf(d: Path, sched: List[str], name: str) -> tuple[Path, List[str]]:
    sq = h.Squid(d / name, sched="\n".join(sched), acls=ACLS)
    return sq.conf, sq.conf.read_text().splitlines()


def line_no(lines: List[str], text: str) -> int:
    hits = [i + 1 for i, ln in enumerate(lines) if ln.strip() == text]
    assert len(hits) >= 1, text
    return hits[-1]


def parse_ok(conf: Path) -> None:
    p = h.Squid.run_parse(conf)
    assert p.returncode == 0, f"squid -k parse rejected a good configuration:\n{p.stdout[-2000:]}"
    assert not re.search(r"\bERROR\b|FATAL|unrecognized", p.stdout), p.stdout[-2000:]


GOOD_VARIANTS = {
    "contract": {},
    "off": {"request_scheduler on": "request_scheduler off"},
    "rfq": {"request_sched_policy msf": "request_sched_policy rfq"},
    "drr": {"request_sched_policy msf": "request_sched_policy drr"},
    "msf-sff": {"request_sched_policy msf": "request_sched_policy msf sff"},
    "wrc-aimd": {"request_sched_window wrc-mult": "request_sched_window wrc-aimd"},
    "rtc": {"request_sched_window wrc-mult": "request_sched_window rtc"},
    "fixed": {"request_sched_window wrc-mult": "request_sched_window fixed 8"},
    "gbit-100pct": {"request_sched_link 10 Mbit": "request_sched_link 1 Gbit",
                    "request_sched_target_utilization 98%": "request_sched_target_utilization 100%"},
    "user-login": {"request_sched_user src": "request_sched_user login"},
    "tunnels-schedule": {"request_sched_tunnels count": "request_sched_tunnels schedule"},
    "idle-share-keep": {"request_sched_tunnels count": "request_sched_tunnels count\n"
                                                      "request_sched_pacing_idle_share keep"},
    "idle-share-lend": {"request_sched_tunnels count": "request_sched_tunnels count\n"
                                                      "request_sched_pacing_idle_share lend"},
    "smp-affinity-none": {"request_sched_tunnels count": "request_sched_tunnels count\n"
                                                         "request_sched_smp_affinity none"},
    "server-pools-shared": {"request_sched_tunnels count": "request_sched_tunnels count\n"
                                                           "request_sched_server_pools shared"},
}
# the website gateway's policies with the server's resources (patch 35)
RESOURCES = ("request_sched_resource cpu\nrequest_sched_resource disk 80%\n"
             "request_sched_default_cost 2 cpu 5%\nrequest_sched_mqos_quantum 2.5")
for _policy in ("mqos", "sqos", "drf"):
    GOOD_VARIANTS[_policy] = {"request_sched_policy msf": f"request_sched_policy {_policy}\n{RESOURCES}",
                              "request_sched_window wrc-mult": "request_sched_window fixed 100"}
GOOD_VARIANTS["sqos-disk"] = {"request_sched_policy msf": f"request_sched_policy sqos\n{RESOURCES}\n"
                                                          "request_sched_sqos_resource disk"}


@pytest.mark.parametrize("variant", sorted(GOOD_VARIANTS))
def test_parse_accepts_good(variant: str, workdir: Path, need_squid: None) -> None:
    sched = [GOOD_VARIANTS[variant].get(ln, ln) for ln in GOOD]
    conf, _ = write_conf(workdir, sched, variant)
    parse_ok(conf)


# name -> (line of GOOD to replace or None to append, bad line, good counterpart)
BAD = {
    "unknown-class-in-access": ("request_sched_access silver allow staff",
                                "request_sched_access platinum allow staff",
                                "request_sched_access silver allow staff"),
    "zero-weight": ("request_sched_class silver 2", "request_sched_class silver 0",
                    "request_sched_class silver 2"),
    "negative-weight": ("request_sched_class silver 2", "request_sched_class silver -1",
                        "request_sched_class silver 2"),
    "duplicate-class": (None, "request_sched_class gold 3", "request_sched_class copper 3"),
    "utilization-zero": ("request_sched_target_utilization 98%", "request_sched_target_utilization 0%",
                         "request_sched_target_utilization 1%"),
    "utilization-over-100": ("request_sched_target_utilization 98%",
                             "request_sched_target_utilization 150%",
                             "request_sched_target_utilization 100%"),
    "utilization-garbage": ("request_sched_target_utilization 98%",
                            "request_sched_target_utilization lots",
                            "request_sched_target_utilization 50%"),
    "link-zero": ("request_sched_link 10 Mbit", "request_sched_link 0 Mbit", "request_sched_link 1 Mbit"),
    "policy-typo": ("request_sched_policy msf", "request_sched_policy msff", "request_sched_policy msf"),
    # the multi-resource policies need the server's resources (patch 35): the
    # error names the policy line and the missing request_sched_resource
    "policy-mqos": ("request_sched_policy msf", "request_sched_policy mqos", "request_sched_policy msf"),
    "policy-sqos": ("request_sched_policy msf", "request_sched_policy sqos", "request_sched_policy msf"),
    "policy-drf": ("request_sched_policy msf", "request_sched_policy drf", "request_sched_policy msf"),
    "policy-mqos-sff": ("request_sched_policy msf", "request_sched_policy mqos sff",
                        "request_sched_policy msf sff"),
    "resource-capacity": (None, "request_sched_resource cpu 0%", "request_sched_resource cpu 80%"),
    "resource-duplicate": (None, "request_sched_resource disk\nrequest_sched_resource disk",
                           "request_sched_resource disk\nrequest_sched_resource bw"),
    "default-cost": (None, "request_sched_default_cost cpu 150%", "request_sched_default_cost 50"),
    "idle-share-typo": (None, "request_sched_pacing_idle_share kept", "request_sched_pacing_idle_share keep"),
    "idle-share-missing": (None, "request_sched_pacing_idle_share", "request_sched_pacing_idle_share lend"),
    "idle-share-extra": (None, "request_sched_pacing_idle_share keep always",
                         "request_sched_pacing_idle_share keep"),
    "smp-affinity-typo": (None, "request_sched_smp_affinity client", "request_sched_smp_affinity src"),
    "server-pools-typo": (None, "request_sched_server_pools classes", "request_sched_server_pools class"),
    "server-pools-extra": (None, "request_sched_server_pools class shared", "request_sched_server_pools shared"),
    "window-file-relative": (None, "request_sched_window_file reqsched.window",
                             "request_sched_window_file /var/spool/squid/reqsched.window"),
    "window-file-extra": (None, "request_sched_window_file /run/a /run/b", "request_sched_window_file none"),
}
# what each multi-resource rejection must say besides the line number
BAD_MESSAGE = {
    "policy-mqos": "add request_sched_resource lines",
    "policy-sqos": "add request_sched_resource lines",
    "policy-drf": "add request_sched_resource lines",
    "policy-mqos-sff": "takes no sff",
    "resource-capacity": "capacity must be from 1% to 1000%",
    "resource-duplicate": "duplicate request_sched_resource 'disk'",
    "default-cost": "cost must be from 0% to 100%",
    "idle-share-typo": "unknown idle share 'kept' (use lend or keep)",
    "idle-share-missing": "missing idle share (lend or keep)",
    "idle-share-extra": "unexpected 'always'",
    "smp-affinity-typo": "unknown SMP affinity 'client' (use src or none)",
    "server-pools-typo": "unknown server pools 'classes' (use class or shared)",
    "server-pools-extra": "unexpected 'shared'",
    "window-file-relative": "request_sched_window_file must be an absolute path or none, got 'reqsched.window'",
    "window-file-extra": "unexpected '/run/b'",
}


def _with(line: Optional[str], new: str) -> List[str]:
    if line is None:
        # append before the access lines so class order stays meaningful
        i = GOOD.index("request_sched_access gold allow vip")
        return GOOD[:i] + [new] + GOOD[i:]
    return [new if ln == line else ln for ln in GOOD]


@pytest.mark.parametrize("case", sorted(BAD))
def test_parse_rejects_bad_with_line_number(case: str, workdir: Path, need_squid: None) -> None:
    where, bad, good = BAD[case]
    conf, _ = write_conf(workdir, _with(where, good), "good")
    parse_ok(conf)
    conf, lines = write_conf(workdir, _with(where, bad), "bad")
    n = line_no(lines, bad.split("\n")[-1])
    p = h.Squid.run_parse(conf)
    assert p.returncode != 0, f"squid -k parse accepted {bad!r}:\n{p.stdout[-1500:]}"
    # Squid names a line as "squid.conf(N)" or "... line N"
    assert re.search(rf"(\bline {n}\b|\({n}\))", p.stdout), \
        f"error for {bad!r} does not name line {n}:\n{p.stdout[-1500:]}"
    if case in BAD_MESSAGE:
        assert BAD_MESSAGE[case] in p.stdout, p.stdout[-1500:]
