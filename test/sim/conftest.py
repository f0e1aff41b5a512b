# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared fixtures for the simulator tests: paths and a cached scenario run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

TOP = Path(__file__).resolve().parents[2]
ENGINE = Path(os.environ.get("RS_SIM_ENGINE", TOP / "build" / "bin" / "rs-sim"))
SEED = os.environ.get("RS_SIM_SEED", "1")     # the scenario tests' seed

_cache: dict[str, dict[str, Any]] = {}


def run_scenario(name: str, tmp: Path) -> dict[str, Any]:
    """Run reqsched-sim --scenario NAME --json and return the document."""
    if name not in _cache:
        out = tmp / f"{name}.json"
        p = subprocess.run([sys.executable, "-m", "reqsched_tools.sim", "--scenario", name, "--json",
                            str(out), "--quiet", "--engine", str(ENGINE), "--seed", SEED],
                           capture_output=True, text=True, check=False, timeout=300)
        assert p.returncode == 0, f"reqsched-sim {name} failed:\n{p.stdout}\n{p.stderr}"
        _cache[name] = json.loads(out.read_text())
    return _cache[name]


@pytest.fixture(scope="session")
def scenario(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("sim")
    return lambda name: run_scenario(name, tmp)


@pytest.fixture(scope="session")
def engine() -> Path:
    assert os.access(ENGINE, os.X_OK), f"{ENGINE} missing: run 'make sim'"
    return ENGINE
