# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-origin on a free loopback port, for the tests that need a server."""
import os
import subprocess
import sys
import tempfile
import time

import pytest


@pytest.fixture(scope="module")
def start_origin():
    """start(*args) -> (process, port): reqsched-origin listening, with its
    stderr piped; every process started is stopped after the module."""
    procs = []

    def start(*args: str):
        pf = os.path.join(tempfile.mkdtemp(prefix="rs-origin-test-"), "port")
        p = subprocess.Popen([sys.executable, "-m", "reqsched_tools.origin", "--port", "0",
                              "--port-file", pf, "--max-runtime", "60", "--quiet", *args],
                             stderr=subprocess.PIPE, text=True)
        procs.append(p)
        for _ in range(200):
            if os.path.exists(pf) and os.path.getsize(pf):
                break
            time.sleep(0.02)
        return p, int(open(pf).read().split()[0].rsplit(":", 1)[1])

    yield start
    for p in procs:
        if p.poll() is None:
            p.terminate()
            p.communicate(timeout=5)
