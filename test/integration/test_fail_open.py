# SPDX-License-Identifier: GPL-2.0-or-later
"""Fail-open (issue 12, item 10): when a libreqsched call fails, Squid logs
it once per kind (cache.log, level 1), counts every failure on the report
page (lib_errors, lib_error_CALL) and goes on without the scheduler for
what the call was about, instead of stalling or dropping the request.

The failures are injected with fault_shim.c, an LD_PRELOAD library built
here that makes the named rs_* calls return RS_ENOMEM while a fault file
names them: no fault hook is compiled into libreqsched or Squid."""
from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Iterator, List

import pytest

import rsharness as h
from rsharness import http_get, sched_conf, wait_until
from test_sched import max_overlap

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def fault_lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler for the fault shim")
    out = tmp_path_factory.mktemp("fault") / "libfault.so"
    include = h.TOP / "build/include"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", f"-I{include}", "-o", str(out),
                    str(HERE / "fault_shim.c"), "-ldl"], check=True)
    return out


@pytest.fixture
def faults(fault_lib: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The fault file: Squids started in this test fail the calls it names."""
    path = workdir / "faults"
    monkeypatch.setenv("LD_PRELOAD", str(fault_lib))
    monkeypatch.setenv("RS_FAULT_FILE", str(path))
    yield path


def _error_lines(sq: h.Squid, call: str) -> List[str]:
    return [ln for ln in sq.cache_log().splitlines() if f"{call}() failed" in ln]


@pytest.mark.parametrize("call", ["rs_enqueue_cost", "rs_flow_open", "rs_flow_allowance", "rs_flow_read",
                                  "rs_on_first_byte"])
def test_library_error_logged_once_counted_and_served(call, faults, squid_factory, origin):
    """Every request still completes; the error is logged once and counted
    for each failure. A failed rs_enqueue_cost forwards the request at once,
    unscheduled: 3 responses that the origin starts after 0.5 s and sends
    for 1 s overlap although the window is 1."""
    faults.write_text(call + "\n")
    sq = squid_factory(sched=sched_conf(window="fixed 1"))
    n = 3
    res = h.Background([lambda i=i: http_get(sq.port, origin.url(f"/fo/{call}/{i}", size=10000, delay_ms=500,
                                                                 rate_bps=80000), timeout=30)
                        for i in range(n)]).join(40)
    assert all(r.ok for r in res), res
    rp = sq.report()
    assert rp.g(f"lib_error_{call}") >= n, rp.text
    assert rp.g("lib_errors") >= rp.g(f"lib_error_{call}"), rp.text
    assert len(_error_lines(sq, call)) == 1, sq.cache_log()[-3000:]
    if call == "rs_enqueue_cost":
        assert rp.g("released") == 0, rp.text
        assert max_overlap(res) == n, "requests whose rs_enqueue_cost failed must go on at once"
    else:
        assert max_overlap(res) == 1, "the window of 1 still holds (only the byte layer failed)"
        assert rp.g("released") == n and rp.g("ended") == n, rp.text


def test_reconfigure_error_forwards_queued_requests(faults, squid_factory, origin):
    """rs_reconfigure fails on `squid -k reconfigure`: Squid stays up, turns
    the scheduler off, forwards the queued requests at once (unscheduled)
    and serves new ones unscheduled; the next reconfigure that succeeds
    turns it on again."""
    sq = squid_factory(sched=sched_conf(window="fixed 1"))
    blocker = h.Background([lambda: http_get(sq.port, origin.url("/fo/block", size=100, delay_ms=8000), timeout=30)])
    wait_until(lambda: sq.report().g("W") == 1, 5, what="the blocker to hold the window")
    queued = h.Background([lambda i=i: http_get(sq.port, origin.url(f"/fo/q{i}", size=100), timeout=30)
                           for i in range(5)])
    wait_until(lambda: sq.report().g("queued") == 5, 5, what="5 queued requests")
    faults.write_text("rs_reconfigure\n")
    sq.sched = sched_conf(window="fixed 2")
    sq.write_config()
    t0 = time.monotonic()
    assert sq.reconfigure().returncode == 0
    res = queued.join(20)
    assert all(r.ok for r in res), res
    assert max(r.t_end for r in res) - t0 < 6, "queued requests must not wait for the blocker"
    assert sq.alive(), sq.tail_logs()
    rp = sq.report()
    assert rp.glob["reqsched"] == "off", rp.text
    assert rp.g("lib_error_rs_reconfigure") >= 1, rp.text
    assert len(_error_lines(sq, "rs_reconfigure")) == 1, sq.cache_log()[-3000:]
    assert "request scheduler is off" in sq.cache_log()
    # unscheduled now: not queued behind the blocker
    r = http_get(sq.port, origin.url("/fo/after", size=100), timeout=5)
    assert r.ok and r.t_end - r.t_start < 2, r
    assert blocker.join(20)[0].ok
    faults.unlink()
    assert sq.reconfigure().returncode == 0
    wait_until(lambda: sq.report().glob["reqsched"] == "on", 10, what="the scheduler on again")
    r = http_get(sq.port, origin.url("/fo/again", size=100), timeout=10)
    assert r.ok, r
    rp = sq.report()
    assert rp.g("W_max") == 2 and rp.g("released") >= 2, rp.text
