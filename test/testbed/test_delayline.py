# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-delayline: the testbed's propagation delay ([link]
propagation_rtt_ms). A refused connect from the gateway to a server address
takes one round trip through the ISP namespace: about 0 without the delay
line, the configured round trip with it, and about 0 again once it is gone
(the NFQUEUE rule passes packets on while no program listens)."""
import os
import subprocess
import time

import pytest

from reqsched_tools import netns, paths, testbed

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces)")

PROBE = ("import socket, time\n"
         "best = 1e9\n"
         "for _ in range(5):\n"
         "    s = socket.socket(); t = time.monotonic()\n"
         "    try:\n"
         "        s.connect(('%s', 9))\n"
         "    except OSError:\n"
         "        pass\n"
         "    best = min(best, time.monotonic() - t); s.close()\n"
         "print(best * 1000)\n")


def connect_ms(topo: netns.Topology) -> float:
    out = subprocess.run(topo.exec_argv("gw", ["python3", "-c", PROBE % netns.server_addr(0)]),
                         check=True, capture_output=True, text=True, timeout=30).stdout
    return float(out)


def test_delay_line_adds_the_round_trip():
    assert os.access(paths.DELAYLINE, os.X_OK), "make loadgen builds reqsched-delayline"
    topo = netns.Topology(testbed.new_run_id())
    try:
        topo.setup([1], 1, 10_000_000, 10_000_000, 100)
        assert connect_ms(topo) < 5
        topo.queue_forwarded("isp", 0)
        p = subprocess.Popen(topo.exec_argv("isp", [str(paths.DELAYLINE), "--queue", "0",
                                                    "--delay-ms", "20"]),
                             stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(0.3)
            assert 40 <= connect_ms(topo) < 55
        finally:
            p.terminate()
            _, err = p.communicate(timeout=5)
        assert p.returncode == 0
        # the five probes' SYN and RST at least, each counted once it passed
        passed = int(err.split(" packets passed")[0].rsplit(None, 1)[-1])
        assert passed >= 10
        assert connect_ms(topo) < 5
    finally:
        topo.teardown(quiet=True)


def test_delay_line_rejects_bad_arguments():
    for argv in (["--queue", "0"], ["--delay-ms", "5"], ["--queue", "x", "--delay-ms", "5"],
                 ["--queue", "0", "--delay-ms", "-1"], ["--queue", "0", "--delay-ms", "5", "extra"]):
        r = subprocess.run([str(paths.DELAYLINE), *argv], capture_output=True, text=True)
        assert r.returncode == 2 and "usage:" in r.stderr
