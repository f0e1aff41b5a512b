# SPDX-License-Identifier: GPL-2.0-or-later
"""request_sched_window_file (patch 52): with pacing and an adaptive window,
Squid writes its W+ when it shuts down, and the next Squid starts its window
there instead of at one slot. A file that is stale, of another link rate,
malformed or missing is ignored (the window starts at 1) and the report
page's window_file line says why.

The window is read back from the page (W_max) and, behaviourally, from how
many slow requests a fresh Squid releases at once: W_max of them, the rest
wait (`queued`)."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

import rsharness as h
from rsharness import sched_conf, wait_until

LINK = "10 Mbit"
LINK_BPS = 10_000_000


def conf(path: Path, window: str = "wrc-mult", more: str = "") -> str:
    return sched_conf(window=window, link=LINK,
                      more=f"request_sched_pacing on\nrequest_sched_window_file {path}\n{more}")


def write_window(path: Path, window: float, link_bps: int = LINK_BPS, age_s: int = 0) -> None:
    h.write_window_file(path, window, link_bps, age_s)


def window_file_line(sq: h.Squid) -> str:
    return str(sq.report().glob["window_file"])


def test_window_is_restored_and_saved_at_shutdown(squid_factory, workdir, origin):
    f = workdir / "reqsched.window"
    write_window(f, 4, age_s=2)
    sq = squid_factory(sched=conf(f))
    r = sq.report()
    assert r.g("W_max") == pytest.approx(4)
    assert "restored W+ 4.0 saved" in str(r.glob["window_file"])
    assert "Request scheduler: window file " in sq.cache_log()

    # the window is in force: four slow requests go at once, two more wait
    slow = h.Background([lambda i=i: h.http_get(sq.port, origin.url(f"/wf/{i}", size=100, delay_ms=1500))
                         for i in range(6)])
    wait_until(lambda: sq.report().g("queued") == 2, 5, what="two requests queued")
    r = sq.report()
    assert r.g("W") == 4
    assert all(x.ok for x in slow.join(15))

    running = sq.report().g("W_max")
    f.unlink()
    sq.stop()
    window, link, written = h.read_window_file(f)
    assert window == pytest.approx(running, abs=0.001)
    assert link == LINK_BPS
    assert abs(written - time.time()) < 30
    assert not (workdir / "reqsched.window.tmp").exists()

    again = squid_factory(name="again", sched=conf(f))
    assert again.report().g("W_max") == pytest.approx(running, abs=0.001)


@pytest.mark.parametrize("content,why", [
    (None, "no saved window"),
    ("stale", "ignored: saved 40"),  # 400 s ago, or 401-409 if a second ticks before the start
    ("other-link", "ignored: saved for request_sched_link 2000000 bit/s"),
    ("reqsched-window 1 many 10000000 0\n", "ignored: not a 'reqsched-window 1 W_MAX LINK_BPS WRITTEN' line"),
    ("", "ignored: not a"),
], ids=["missing", "stale", "other-link", "garbage", "empty"])
def test_unusable_file_starts_at_one_slot(squid_factory, workdir, content, why):
    f = workdir / "reqsched.window"
    if content == "stale":
        write_window(f, 9, age_s=400)
    elif content == "other-link":
        write_window(f, 9, link_bps=2_000_000)
    elif content is not None:
        f.write_text(content)
        os.chmod(f, 0o666)
    sq = squid_factory(sched=conf(f))
    assert sq.report().g("W_max") == 1
    line = window_file_line(sq)
    assert line.startswith(f"{f}: {why}"), line
    assert "FATAL" not in sq.cache_log()


def test_fixed_window_ignores_and_keeps_the_file(squid_factory, workdir):
    """A fixed window has nothing to remember: the file is neither read nor
    written, and the page says why."""
    f = workdir / "reqsched.window"
    write_window(f, 9)
    before = f.read_text()
    sq = squid_factory(sched=conf(f, window="fixed 3"))
    assert sq.report().g("W_max") == 3
    assert window_file_line(sq).startswith("not used: needs request_sched_pacing on")
    sq.stop()
    assert f.read_text() == before


def test_unwritable_file_is_a_warning(squid_factory, workdir):
    missing = workdir / "no-such-dir" / "reqsched.window"
    sq = squid_factory(sched=conf(missing))
    assert window_file_line(sq) == f"{missing}: no saved window"
    sq.stop()
    assert f"WARNING: request scheduler: request_sched_window_file: cannot write {missing}.tmp" in sq.cache_log()


def test_window_is_saved_while_working_and_survives_a_kill(squid_factory, workdir, origin):
    """While requests are outstanding Squid rewrites the file every minute
    (WindowFile::SaveInterval, the first time a minute after the start), so
    a worker killed without a shutdown restarts from a window at most that
    old."""
    f = workdir / "reqsched.window"
    write_window(f, 5, age_s=2)
    started = time.time()
    sq = squid_factory(sched=conf(f))
    assert sq.report().g("W_max") == pytest.approx(5)
    # one response outstanding for longer than the interval keeps housekeeping on
    slow = h.Background([lambda: h.http_get(sq.port, origin.url("/wf/long", size=100, delay_ms=72_000),
                                            timeout=90)])
    wait_until(lambda: h.read_window_file(f)[2] >= started + 55, 75, step=1, what="the window saved while working")
    window, link, written = h.read_window_file(f)
    assert written <= time.time() + 1
    assert link == LINK_BPS
    assert window >= 1
    assert sq.alive()

    os.killpg(sq.proc.pid, signal.SIGKILL)
    sq.proc.wait(timeout=5)
    slow.join(30)
    again = squid_factory(name="again", sched=conf(f))
    assert again.report().g("W_max") == pytest.approx(window, abs=0.001)
    assert f"restored W+ {window:.1f} saved" in window_file_line(again)
