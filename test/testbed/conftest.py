# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared runner of the testbed checks: reqsched-testbed on a spec, in a temporary
run directory, returning the report per mode and the modes that did not run."""
import json
import os
import shutil
import subprocess
import tempfile

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TESTBED = os.path.join(TOP, "build", "bin", "reqsched-testbed")
SQUID = os.path.join(TOP, "build", "squid", "sbin", "squid")
HERE = os.path.dirname(os.path.abspath(__file__))


class TestbedRun:
    def __init__(self, out: str, reports: dict, skipped: list, rc: int):
        self.out, self.reports, self.skipped, self.rc = out, reports, skipped, rc

    def mode(self, name: str) -> dict:
        """The report of a mode; a mode that did not run fails the test with the
        testbed's reason (e.g. "this Squid has no request_sched_pacing")."""
        if name not in self.reports:
            why = [s["reason"] for s in self.skipped if s["mode"] == name]
            pytest.fail(f"mode {name} did not run: {why[0] if why else 'see ' + self.out}",
                        pytrace=False)
        return self.reports[name]


@pytest.fixture(scope="module")
def testbed_run():
    made = []

    def run(spec: str, modes: str, duration: float, warmup: float,
            *extra: str) -> TestbedRun:
        assert os.geteuid() == 0, "the testbed needs root (network namespaces, tc)"
        assert os.access(SQUID, os.X_OK), f"{SQUID} missing: run `make squid`"
        out = tempfile.mkdtemp(prefix="rs-check-testbed-")
        os.chmod(out, 0o755)
        made.append(out)
        p = subprocess.run([TESTBED, "run", "--spec", os.path.join(HERE, spec), "--modes", modes,
                            "--duration", str(duration), "--warmup", str(warmup), "--out", out,
                            "--no-plots", *extra], timeout=duration * 3 + 300)
        reports = {}
        if os.path.exists(os.path.join(out, "report.json")):
            with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
                reports = {r["mode"]: r for r in json.load(f)}
        skipped = []
        if os.path.exists(os.path.join(out, "skipped.json")):
            with open(os.path.join(out, "skipped.json"), encoding="utf-8") as f:
                skipped = json.load(f)
        return TestbedRun(out, reports, skipped, p.returncode)

    yield run
    for out in made:
        if os.environ.get("RS_KEEP_TMP"):
            print(f"kept {out}")
        else:
            shutil.rmtree(out, ignore_errors=True)
