# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-from-delay-pools (tools/reqsched_tools/delaypools.py): the mapping
of doc/delay-pools.md, and lines it cannot map rejected naming the line. That
Squid accepts its output: test/integration/test_delay_pools_convert.py."""
from pathlib import Path

import pytest

from reqsched_tools import delaypools as dp

TOP = Path(__file__).resolve().parents[2]


def sched(text: str, link: str = "10 Mbit") -> list[str]:
    out = dp.convert(text, dp.link_bps(link))
    return [ln for ln in out.splitlines() if ln.startswith("request_sched")]


def test_compare_config_class1_pools_become_weighted_classes() -> None:
    lines = sched((TOP / "squid-conf/compare-delay-pools.conf").read_text())
    assert lines == [
        "request_scheduler on",
        "request_sched_link 10000000 bit",
        "request_sched_policy rfq",          # one bucket per pool: class-based fairness
        "request_sched_user src",
        "request_sched_class pool1 4",       # 714285:357142:178571 B/s
        "request_sched_class pool2 2",
        "request_sched_class pool3 1",
        "request_sched_class unpooled 7",    # unlimited: the whole link (1,250,000 B/s)
        "request_sched_access pool1 allow lan_mgmt",   # closing "deny all" dropped
        "request_sched_access pool2 allow lan_staff",
        "request_sched_access pool3 allow all",
        "request_sched_access unpooled allow all",
    ]


def test_delay_lines_kept_as_comments_and_block_after_the_last() -> None:
    text = "acl a src 10.0.0.0/8\ndelay_pools 1\ndelay_class 1 1\ndelay_parameters 1 1000/1000\n" \
           "delay_access 1 allow a\nhttp_access allow a\n"
    out = dp.convert(text, 8000).splitlines()
    assert out[:5] == ["acl a src 10.0.0.0/8", "# delay_pools 1", "# delay_class 1 1",
                       "# delay_parameters 1 1000/1000", "# delay_access 1 allow a"]
    assert out[5].startswith("# converted from delay pools")
    assert out[-1] == "http_access allow a"


def test_class2_and_3_per_host_buckets_make_msf_per_address() -> None:
    text = ("delay_pools 2\n"
            "delay_class 1 2\ndelay_parameters 1 -1/-1 8000/16000\n"
            "delay_access 1 deny guests\ndelay_access 1 allow all\n"
            "delay_class 2 3\ndelay_parameters 2 64000/64000 -1/-1 4000/8000\n"
            "delay_access 2 allow guests !night\n")
    lines = sched(text, "1 Gbit")
    assert "request_sched_policy msf" in lines and "request_sched_user src" in lines
    # no aggregate limit weighs the whole link (125,000,000 B/s) against 64,000 B/s
    assert "request_sched_class pool1 1953" in lines
    assert "request_sched_class pool2 1" in lines
    assert lines[-4:] == ["request_sched_access pool1 deny guests",
                          "request_sched_access pool1 allow all",
                          "request_sched_access pool2 allow guests !night",
                          "request_sched_access unpooled allow all"]


def test_weights_have_no_exponent_and_stay_within_the_directive_limit() -> None:
    lines = sched("delay_pools 1\ndelay_class 1 1\ndelay_parameters 1 1/1\n", "10 Gbit")
    assert "request_sched_class pool1 1" in lines
    assert "request_sched_class unpooled 1000000" in lines


@pytest.mark.parametrize("text, message", [
    ("delay_pools 1\ndelay_class 1 4\n", "line 2: delay_class 4 has no reqsched mapping"),
    ("delay_pools 1\ndelay_class 1 5\n", "line 2: delay_class 5 has no reqsched mapping"),
    ("delay_pools 1\ndelay_class 2 1\n", "line 2: pool '2' is not within delay_pools"),
    ("delay_pools 0\n", "line 1: delay_pools needs a number of pools >= 1"),
    ("delay_pools 1\ndelay_class 1 2\ndelay_parameters 1 100/100\n", "line 3: a class 2 pool takes 2 buckets"),
    ("delay_pools 1\ndelay_class 1 1\ndelay_parameters 1 fast\n", "line 3: bad bucket 'fast'"),
    ("delay_pools 1\ndelay_class 1 1\ndelay_parameters 1 0/100\n", "restore must be > 0"),
    ("delay_pools 1\ndelay_parameters 1 10/10\n", "line 2: delay_parameters before delay_class"),
    ("delay_pools 1\ndelay_class 1 1\ndelay_access 1 permit all\n", "line 3: delay_access needs"),
    ("delay_pools 2\ndelay_class 1 1\n", "pool 2 has no delay_class"),
    ("delay_pools 1\ndelay_class 1 1\ndelay_body_max_size 1\n", "line 3: delay_body_max_size has no"),
    ("http_port 3128\n", "no delay_pools line"),
])
def test_unmappable_lines_are_rejected_naming_the_line(text: str, message: str) -> None:
    with pytest.raises(dp.ConvertError, match=message):
        dp.convert(text, 10_000_000)


@pytest.mark.parametrize("link, bps", [("10 Mbit", 10_000_000), ("1.5 Gbit/s", 1_500_000_000),
                                       ("512 kbit", 512_000), ("100 bit", 100)])
def test_link(link: str, bps: int) -> None:
    assert dp.link_bps(link) == bps


@pytest.mark.parametrize("link", ["10", "0 Mbit", "ten Mbit", "10 furlongs", "-1 Mbit"])
def test_bad_link(link: str) -> None:
    with pytest.raises(dp.ConvertError):
        dp.link_bps(link)


def test_main_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conf = tmp_path / "squid.conf"
    conf.write_text("delay_pools 1\ndelay_class 1 4\n")
    assert dp.main(["--link", "10 Mbit", str(conf)]) == 2
    assert "line 2: delay_class 4" in capsys.readouterr().err
    conf.write_text("delay_pools 1\ndelay_class 1 1\ndelay_parameters 1 1000/1000\n")
    out = tmp_path / "new.conf"
    assert dp.main(["--link", "10 Mbit", str(conf), "-o", str(out)]) == 0
    assert "request_sched_class pool1 1" in out.read_text()
